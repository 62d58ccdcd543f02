//===- append_check.c - The C ABI of attn-compile's cache-append kernels --===//
//
// Links the library attn-compile makes from Inputs/append.mlir and calls its
// functions with good and bad arguments:
//
//   append_check no-driver   CI: no CUDA driver
//   append_check fake        the fake driver: launches are recorded
//
// Every rejected call returns its code and a message naming the problem;
// a valid call launches one kernel whose grid and parameters follow the
// append's launch contract. One line per check, then "N passed, M failed".
// (Results on a GPU: test/gpu's append cases.)
//
//===----------------------------------------------------------------------===//

#define _POSIX_C_SOURCE 200809L

#include "append.h"
#include "attnrt.h"
#include "check_common.h"

int main(int argc, char **argv) {
  if (argc != 2 || (strcmp(argv[1], "no-driver") && strcmp(argv[1], "fake"))) {
    fprintf(stderr, "usage: %s no-driver|fake\n", argv[0]);
    return 2;
  }
  fake_mode = !strcmp(argv[1], "fake");
  const int valid = fake_mode ? ATTN_SUCCESS : ATTN_ERROR_NO_DRIVER;
  char line[256];

  // decode_append: [batch, 8, 1, 128] into [batch, 8, capacity, 128].
  const int64_t batch = 3, capacity = 100;
  const size_t new_bytes = batch * 8 * 1 * 128 * 2;
  const size_t cache_bytes = batch * 8 * capacity * 128 * 2;
  char *kn = make(new_bytes), *vn = make(new_bytes);
  char *lens = make(batch * 4);
  char *kc = make(cache_bytes), *vc = make(cache_bytes);

  expect("decode_append_can_implement(3, 100)",
         attn_decode_append_can_implement(batch, capacity), ATTN_SUCCESS, NULL);
  expect("decode_append_can_implement(batch 0)",
         attn_decode_append_can_implement(0, capacity),
         ATTN_ERROR_UNSUPPORTED_SIZE, "dimension 0 is 0");
  expect("decode_append_can_implement(capacity 0)",
         attn_decode_append_can_implement(batch, 0),
         ATTN_ERROR_UNSUPPORTED_SIZE, "k_cache dimension 2 is 0");
  size_t ws = 1;
  expect("decode_append_workspace_bytes",
         attn_decode_append_workspace_bytes(batch, capacity, &ws),
         ATTN_SUCCESS, NULL);
  snprintf(line, sizeof line, "an append needs no workspace (%zu bytes)", ws);
  check(ws == 0, line);
  expect("decode_append_run(v_cache NULL)",
         attn_decode_append_run(kn, NULL, vn, NULL, lens, NULL, kc, NULL, NULL,
                                NULL, batch, capacity, NULL, 0, NULL),
         ATTN_ERROR_NULL_POINTER, "v_cache is NULL");
  expect("decode_append_run(k_new + 2 bytes)",
         attn_decode_append_run(kn + 2, NULL, vn, NULL, lens, NULL, kc, NULL,
                                vc, NULL, batch, capacity, NULL, 0, NULL),
         ATTN_ERROR_MISALIGNED, "k_new");
  const int64_t bad_strides[4] = {8 * capacity * 128, capacity * 128, 64, 1};
  expect("decode_append_run(k_cache rows overlap)",
         attn_decode_append_run(kn, NULL, vn, NULL, lens, NULL, kc,
                                bad_strides, vc, NULL, batch, capacity, NULL,
                                0, NULL),
         ATTN_ERROR_UNSUPPORTED_STRIDE, "k_cache stride 2 is 64");
  expect("decode_append_run_splits(2)",
         attn_decode_append_run_splits(kn, NULL, vn, NULL, lens, NULL, kc,
                                       NULL, vc, NULL, batch, capacity, 2,
                                       NULL, 0, NULL),
         ATTN_ERROR_UNSUPPORTED_SIZE, "no split-K launch");
  int before = fake_mode ? fake()->launches : 0;
  expect("decode_append_run(valid)",
         attn_decode_append_run(kn, NULL, vn, NULL, lens, NULL, kc, NULL, vc,
                                NULL, batch, capacity, NULL, 0, NULL),
         valid, NULL);
  if (fake_mode) {
    const struct fake_cuda_state *s = fake();
    snprintf(line, sizeof line,
             "decode_append launched %d kernel on grid (%u, %u, %u) x %u "
             "threads (%d parameters)",
             s->launches - before, s->last_grid[0], s->last_grid[1],
             s->last_grid[2], s->last_block[0], s->last_param_count);
    check(s->launches - before == 1 && s->last_grid[0] == 1 &&
              s->last_grid[1] == 8 && s->last_grid[2] == batch &&
              s->last_param_count == 49 &&
              s->last_params[0] == (unsigned long long)(uintptr_t)kn &&
              s->last_params[38] == (unsigned long long)(uintptr_t)vc,
          line);
  }

  // paged_append: [batch, 2, new_len, 64] through a block table.
  const int64_t pb = 3, num_blocks = 20, max_blocks = 5, new_len = 40;
  char *pkn = make(pb * 2 * new_len * 64 * 2), *pvn = make(pb * 2 * new_len * 64 * 2);
  char *bt = make(pb * max_blocks * 4), *plens = make(pb * 4),
       *pn = make(pb * 4);
  char *pkc = make(num_blocks * 2 * 16 * 64 * 2),
       *pvc = make(num_blocks * 2 * 16 * 64 * 2);
  expect("paged_append_can_implement(new_len 0)",
         attn_paged_append_can_implement(pb, num_blocks, max_blocks, 0),
         ATTN_ERROR_UNSUPPORTED_SIZE, "k_new dimension 2 is 0");
  expect("paged_append_run(new_lens NULL)",
         attn_paged_append_run(pkn, NULL, pvn, NULL, bt, NULL, plens, NULL,
                               NULL, NULL, pkc, NULL, pvc, NULL, pb,
                               num_blocks, max_blocks, new_len, NULL, 0, NULL),
         ATTN_ERROR_NULL_POINTER, "new_lens is NULL");
  before = fake_mode ? fake()->launches : 0;
  expect("paged_append_run(valid)",
         attn_paged_append_run(pkn, NULL, pvn, NULL, bt, NULL, plens, NULL, pn,
                               NULL, pkc, NULL, pvc, NULL, pb, num_blocks,
                               max_blocks, new_len, NULL, 0, NULL),
         valid, NULL);
  if (fake_mode) {
    const struct fake_cuda_state *s = fake();
    snprintf(line, sizeof line,
             "paged_append launched %d kernel on grid (%u, %u, %u) x %u "
             "threads (%d parameters)",
             s->launches - before, s->last_grid[0], s->last_grid[1],
             s->last_grid[2], s->last_block[0], s->last_param_count);
    check(s->launches - before == 1 && s->last_grid[0] == 2 &&
              s->last_grid[1] == 2 && s->last_grid[2] == pb &&
              s->last_block[0] == 128 && s->last_param_count == 61,
          line);
  }
  // slots_append: [T, 4, 64] packed tokens to slot_mapping's slots.
  const int64_t tokens = 70, blocks = 10;
  char *skn = make(tokens * 4 * 64 * 2), *svn = make(tokens * 4 * 64 * 2);
  char *slots = make(tokens * 4);
  char *skc = make(blocks * 4 * 16 * 64 * 2), *svc = make(blocks * 4 * 16 * 64 * 2);
  expect("slots_append_can_implement(num_tokens 0)",
         attn_slots_append_can_implement(blocks, 0),
         ATTN_ERROR_UNSUPPORTED_SIZE, "k_new dimension 0 is 0");
  before = fake_mode ? fake()->launches : 0;
  expect("slots_append_run(valid)",
         attn_slots_append_run(skn, NULL, svn, NULL, slots, NULL, skc, NULL,
                               svc, NULL, blocks, tokens, NULL, 0, NULL),
         valid, NULL);
  if (fake_mode) {
    const struct fake_cuda_state *s = fake();
    snprintf(line, sizeof line,
             "slots_append launched %d kernel on grid (%u, %u, %u) x %u "
             "threads (%d parameters)",
             s->launches - before, s->last_grid[0], s->last_grid[1],
             s->last_grid[2], s->last_block[0], s->last_param_count);
    check(s->launches - before == 1 && s->last_grid[0] == 3 &&
              s->last_grid[1] == 4 && s->last_grid[2] == 1 &&
              s->last_block[0] == 128 && s->last_param_count == 45,
          line);
  }
  printf("%d passed, %d failed\n", passed, failed);
  return failed ? 1 : 0;
}
