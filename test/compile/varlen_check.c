//===- varlen_check.c - The C ABI of attn-compile's packed (varlen) kernels ===//
//
// Links the library attn-compile makes from Inputs/varlen.mlir and calls its
// functions with good and bad arguments:
//
//   varlen_check no-driver   CI: no CUDA driver
//   varlen_check fake        the fake driver: launches are recorded
//
// The offsets (cu_seqlens) are device arrays no function reads: the checks
// use the sizes alone, an empty batch launches nothing (without a driver
// too), and a packed Q's grid has floor(total_q * group / block_q) + batch
// Q tiles. One line per check, then "N passed, M failed". (Results on a
// GPU: test/gpu's vl_* cases.)
//
//===----------------------------------------------------------------------===//

#define _POSIX_C_SOURCE 200809L

#include "varlen.h"
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

  // @packed: q [total_q, 8, 64], K/V [total_k, 2, 64], group 4.
  const int64_t batch = 3, total_q = 100, total_k = 300;
  char *q = make(total_q * 8 * 64 * 2), *o = make(total_q * 8 * 64 * 2);
  char *lse = make(total_q * 8 * 4);
  char *k = make(total_k * 2 * 64 * 2), *v = make(total_k * 2 * 64 * 2);
  char *cq = make((batch + 1) * 4), *ck = make((batch + 1) * 4);

  expect("packed_can_implement(3, 100, 300, 0)",
         attn_packed_can_implement(batch, total_q, total_k, 0), ATTN_SUCCESS,
         NULL);
  expect("packed_can_implement(batch 0, no tokens)",
         attn_packed_can_implement(0, 0, 0, 0), ATTN_SUCCESS, NULL);
  expect("packed_can_implement(batch -1)",
         attn_packed_can_implement(-1, total_q, total_k, 0),
         ATTN_ERROR_UNSUPPORTED_SIZE,
         "cu_seqlens_q dimension 0 is 0; every size must be at least 1");
  expect("packed_can_implement(total_q -1)",
         attn_packed_can_implement(batch, -1, total_k, 0),
         ATTN_ERROR_UNSUPPORTED_SIZE, "q dimension 0 is -1");
  expect("packed_can_implement(max_q_len -1)",
         attn_packed_can_implement(batch, total_q, total_k, -1),
         ATTN_ERROR_UNSUPPORTED_SIZE, "max_q_len is -1");
  size_t ws = 1;
  expect("packed_workspace_bytes(max_q_len 0: prefill)",
         attn_packed_workspace_bytes(batch, total_q, total_k, 0, &ws),
         ATTN_SUCCESS, NULL);
  snprintf(line, sizeof line, "the prefill code needs no workspace (%zu)", ws);
  check(ws == 0, line);
  expect("packed_workspace_bytes(batch 0, max_q_len 3)",
         attn_packed_workspace_bytes(0, 0, 0, 3, &ws), ATTN_SUCCESS, NULL);
  snprintf(line, sizeof line, "an empty batch needs no workspace (%zu)", ws);
  check(ws == 0, line);
  expect("packed_run(cu_seqlens_k NULL)",
         attn_packed_run(q, NULL, k, NULL, v, NULL, cq, NULL, NULL, NULL, o,
                         NULL, lse, NULL, batch, total_q, total_k, 0, NULL, 0,
                         NULL),
         ATTN_ERROR_NULL_POINTER, "cu_seqlens_k is NULL");
  expect("packed_run(cu_seqlens_q + 2 bytes)",
         attn_packed_run(q, NULL, k, NULL, v, NULL, cq + 2, NULL, ck, NULL, o,
                         NULL, lse, NULL, batch, total_q, total_k, 0, NULL, 0,
                         NULL),
         ATTN_ERROR_MISALIGNED, "cu_seqlens_q (0x");
  const int64_t lse_strides[2] = {1, total_q};
  expect("packed_run(lse column-major)",
         attn_packed_run(q, NULL, k, NULL, v, NULL, cq, NULL, ck, NULL, o,
                         NULL, lse, lse_strides, batch, total_q, total_k, 0,
                         NULL, 0, NULL),
         ATTN_ERROR_UNSUPPORTED_STRIDE,
         "lse stride 0 is 1; the kernel's layout needs 8 (row-major)");
  int before = launches();
  expect("packed_run(batch 0, NULL buffers)",
         attn_packed_run(NULL, NULL, NULL, NULL, NULL, NULL, cq, NULL, ck,
                         NULL, NULL, NULL, NULL, NULL, 0, 0, 0, 0, NULL, 0,
                         NULL),
         ATTN_SUCCESS, NULL);
  expect("packed_run(batch 3, total_q 0)",
         attn_packed_run(NULL, NULL, k, NULL, v, NULL, cq, NULL, ck, NULL,
                         NULL, NULL, NULL, NULL, batch, 0, total_k, 0, NULL, 0,
                         NULL),
         ATTN_SUCCESS, NULL);
  if (fake_mode) {
    snprintf(line, sizeof line, "empty batches launched nothing (%d)",
             launches() - before);
    check(launches() == before, line);
  }
  // Prefill: 400 rows of 3 sequences; the 32-row 8-warp tile (the small
  // grid's last resort) has floor(400 / 32) + 3 = 15 tiles. 7 memrefs: q,
  // k, v, o of rank 3 (9 values), the offsets (5), lse (7).
  before = launches();
  expect("packed_run(valid, max_q_len 0)",
         attn_packed_run(q, NULL, k, NULL, v, NULL, cq, NULL, ck, NULL, o,
                         NULL, lse, NULL, batch, total_q, total_k, 0, NULL, 0,
                         NULL),
         valid, NULL);
  expect_launches("packed prefill", before, 1, 15, 2, 1, 53);
  before = launches();
  expect("packed_run(valid, max_q_len 17: prefill)",
         attn_packed_run(q, NULL, k, NULL, v, NULL, cq, NULL, ck, NULL, o,
                         NULL, lse, NULL, batch, total_q, total_k, 17, NULL, 0,
                         NULL),
         valid, NULL);
  expect_launches("packed prefill for max_q_len 17", before, 1, 15, 2, 1, 53);
  // Decode for a max_q_len of at most 16: a workspace of O's 800 rows.
  if (fake_mode) {
    expect("packed_workspace_bytes_splits(max_q_len 3, 2 splits)",
           attn_packed_workspace_bytes_splits(batch, total_q, total_k, 3, 2,
                                              &ws),
           ATTN_SUCCESS, NULL);
    snprintf(line, sizeof line,
             "decode workspace is 800 rows x 2 splits x 66 f32 (%zu bytes)",
             ws);
    check(ws == 800u * 2 * 66 * 4, line);
    expect("packed_run_splits(max_q_len 3, no workspace)",
           attn_packed_run_splits(q, NULL, k, NULL, v, NULL, cq, NULL, ck,
                                  NULL, o, NULL, lse, NULL, batch, total_q,
                                  total_k, 3, 2, NULL, 0, NULL),
           ATTN_ERROR_WORKSPACE_TOO_SMALL, "422400 are needed");
    char *workspace = make(ws);
    before = launches();
    expect("packed_run_splits(max_q_len 3, 2 splits)",
           attn_packed_run_splits(q, NULL, k, NULL, v, NULL, cq, NULL, ck,
                                  NULL, o, NULL, lse, NULL, batch, total_q,
                                  total_k, 3, 2, workspace, ws, NULL),
           ATTN_SUCCESS, NULL);
    // split [2, 2, 3 x 1], then combine [rows 800, 1, 1]: workspace, o,
    // lse.
    expect_launches("packed decode", before, 2, 800, 1, 1, 9 + 9 + 7);
  }

  // @chunked: at most 4 new tokens a sequence against a paged cache.
  const int64_t num_blocks = 20, max_blocks = 5, chunk_q = 10;
  char *pk = make(num_blocks * 2 * 16 * 64 * 2),
       *pv = make(num_blocks * 2 * 16 * 64 * 2);
  char *table = make(batch * max_blocks * 4), *lens = make(batch * 4);
  expect("chunked_can_implement(3, 20, 5, 10)",
         attn_chunked_can_implement(batch, num_blocks, max_blocks, chunk_q),
         ATTN_SUCCESS, NULL);
  expect("chunked_can_implement(num_blocks 0)",
         attn_chunked_can_implement(batch, 0, max_blocks, chunk_q),
         ATTN_ERROR_UNSUPPORTED_SIZE,
         "k dimension 0 is 0; every size must be at least 1");
  if (fake_mode) {
    // One split: the one-split kernel alone, on the packed grid
    // (floor(10 * 4 / 16) + 3 = 5 tiles of 16 rows), without a workspace.
    expect("chunked_workspace_bytes_splits(1 split)",
           attn_chunked_workspace_bytes_splits(batch, num_blocks, max_blocks,
                                               chunk_q, 1, &ws),
           ATTN_SUCCESS, NULL);
    check(ws == 0, "chunked decode at 1 split needs no workspace");
    before = launches();
    expect("chunked_run_splits(1 split)",
           attn_chunked_run_splits(q, NULL, pk, NULL, pv, NULL, cq, NULL, table,
                                   NULL, lens, NULL, o, NULL, batch, num_blocks,
                                   max_blocks, chunk_q, 1, NULL, 0, NULL),
           ATTN_SUCCESS, NULL);
    expect_launches("chunked decode, 1 split", before, 1, 5, 2, 1, -1);
    // Two: split then combine over O's rows (10 tokens x 8 heads).
    expect("chunked_workspace_bytes_splits(2 splits)",
           attn_chunked_workspace_bytes_splits(batch, num_blocks, max_blocks,
                                               chunk_q, 2, &ws),
           ATTN_SUCCESS, NULL);
    char *workspace = make(ws);
    before = launches();
    expect("chunked_run_splits(2 splits)",
           attn_chunked_run_splits(q, NULL, pk, NULL, pv, NULL, cq, NULL, table,
                                   NULL, lens, NULL, o, NULL, batch, num_blocks,
                                   max_blocks, chunk_q, 2, workspace, ws, NULL),
           ATTN_SUCCESS, NULL);
    expect_launches("chunked decode, 2 splits", before, 2, 80, 1, 1, -1);
  }

  // @kv_packed: a padded Q [batch, 4, q_len, 64] over packed K/V.
  const int64_t q_len = 40;
  char *pq = make(batch * 4 * q_len * 64 * 2), *po = make(batch * 4 * q_len * 64 * 2);
  expect("kv_packed_can_implement(batch 0)",
         attn_kv_packed_can_implement(0, q_len, total_k), ATTN_SUCCESS, NULL);
  expect("kv_packed_can_implement(q_len 0)",
         attn_kv_packed_can_implement(batch, 0, total_k),
         ATTN_ERROR_UNSUPPORTED_SIZE, "q dimension 2 is 0");
  before = launches();
  expect("kv_packed_run(batch 0)",
         attn_kv_packed_run(NULL, NULL, k, NULL, v, NULL, ck, NULL, NULL, NULL,
                            0, q_len, total_k, NULL, 0, NULL),
         ATTN_SUCCESS, NULL);
  if (fake_mode) {
    snprintf(line, sizeof line, "batch 0 launched nothing (%d)",
             launches() - before);
    check(launches() == before, line);
  }
  before = launches();
  expect("kv_packed_run(valid)",
         attn_kv_packed_run(pq, NULL, k, NULL, v, NULL, ck, NULL, po, NULL,
                            batch, q_len, total_k, NULL, 0, NULL),
         valid, NULL);
  // 80 group rows in 32-row tiles: (3, 2, 3).
  expect_launches("kv_packed prefill", before, 1, 3, 2, 3, -1);
  printf("%d passed, %d failed\n", passed, failed);
  return failed ? 1 : 0;
}
