//===- abi_check.c - The generated C ABI's checks and error codes ---------===//
//
// Links the library attn-compile makes from Inputs/abi.mlir and calls its
// functions with good and bad arguments:
//
//   abi_check no-driver           CI: no CUDA driver
//   abi_check no-device           a fake driver with no device
//   abi_check fake                the fake driver: launches are recorded
//   abi_check unsupported-device  the fake driver, a library without code
//                                 for its GPU
//   abi_check gpu                 a real GPU; four host threads also
//                                 make the first calls at once, each on
//                                 its own stream
//
// Every rejected call must return its code before touching memory: on a
// GPU the outputs are poisoned first and checked untouched after each.
// One line per check ("PASS:"/"FAIL:"), then "N passed, M failed".
//
//===----------------------------------------------------------------------===//

#define _POSIX_C_SOURCE 200809L

#include "abi.h"
#include "attnrt.h"
#include "../runtime/fake_cuda_driver.h"

#include <dlfcn.h>
#include <pthread.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum mode { NO_DRIVER, NO_DEVICE, FAKE, UNSUPPORTED_DEVICE, GPU };
static enum mode mode;

// Whether the fake GPU allows the 8-warp small-grid prefill kernel its
// shared memory (68 KiB for abi.mlir's D64 prefill: Q, two stages of 128
// K/V rows, the key groups' exchange beside them); abi.test also runs it
// with less (FAKE_CUDA_OPTIN_SMEM).
static int tiny_fits(void) {
  attnrt_device_info info;
  return attnrt_get_device_info(&info, 0) == ATTNRT_SUCCESS &&
         info.max_shared_memory_per_block_optin >= 68 * 1024;
}
static int passed, failed;

static const char *code_name(int code) {
  static const char *const names[] = {
      "ATTN_SUCCESS",
      "ATTN_ERROR_NULL_POINTER",
      "ATTN_ERROR_MISALIGNED",
      "ATTN_ERROR_UNSUPPORTED_SIZE",
      "ATTN_ERROR_UNSUPPORTED_STRIDE",
      "ATTN_ERROR_WORKSPACE_TOO_SMALL",
      "ATTN_ERROR_NO_DRIVER",
      "ATTN_ERROR_NO_DEVICE",
      "ATTN_ERROR_UNSUPPORTED_DEVICE",
      "ATTN_ERROR_LAUNCH_FAILED",
      "ATTN_ERROR_RUNTIME"};
  return code >= 0 && code < (int)(sizeof names / sizeof *names) ? names[code]
                                                                  : "?";
}

static void check(int ok, const char *what, const char *detail) {
  if (ok)
    ++passed;
  else
    ++failed;
  printf("%s: %s%s%s\n", ok ? "PASS" : "FAIL", what, detail ? ": " : "",
         detail ? detail : "");
}

// The call's code against the expected one; the message must name the
// problem (`needle`) when there is one.
static void expect(const char *what, int got, int want, const char *needle) {
  char line[1024];
  const char *message = attn_last_error();
  snprintf(line, sizeof line, "%s -> %s (%s)", what, code_name(got), message);
  int ok = got == want && (!needle || strstr(message, needle));
  if (got != want)
    snprintf(line + strlen(line), sizeof line - strlen(line),
             ", expected %s", code_name(want));
  check(ok, line, NULL);
}

// The code a valid call gets in this mode.
static int valid_code(void) {
  switch (mode) {
  case NO_DRIVER:
    return ATTN_ERROR_NO_DRIVER;
  case NO_DEVICE:
    return ATTN_ERROR_NO_DEVICE;
  case UNSUPPORTED_DEVICE:
    return ATTN_ERROR_UNSUPPORTED_DEVICE;
  default:
    return ATTN_SUCCESS;
  }
}

//===----------------------------------------------------------------------===//
// Buffers: device memory where there is a driver, else host memory that no
// call may touch.
//===----------------------------------------------------------------------===//

struct buffer {
  char *ptr;
  size_t bytes;
};

// Every buffer made, released at exit (LeakSanitizer checks sanitizer builds).
static struct buffer made[128];
static int num_made;

static struct buffer make(size_t bytes, unsigned char fill) {
  struct buffer b = {NULL, bytes};
  if (num_made == (int)(sizeof made / sizeof *made)) {
    printf("FAIL: more than %d buffers\n", num_made);
    exit(1);
  }
  if (mode == FAKE || mode == GPU) {
    attnrt_deviceptr p = 0;
    if (attnrt_malloc(&p, bytes) != ATTNRT_SUCCESS ||
        attnrt_memset_d8(p, fill, bytes) != ATTNRT_SUCCESS) {
      printf("FAIL: device allocation: %s\n", attnrt_last_error());
      exit(1);
    }
    b.ptr = (char *)(uintptr_t)p;
  } else {
    b.ptr = aligned_alloc(256, (bytes + 255) / 256 * 256);
    memset(b.ptr, fill, bytes);
  }
  made[num_made++] = b;
  return b;
}

static void release_all(void) {
  for (int i = 0; i < num_made; ++i) {
    if (mode == FAKE || mode == GPU)
      attnrt_free((attnrt_deviceptr)(uintptr_t)made[i].ptr);
    else
      free(made[i].ptr);
  }
  num_made = 0;
}

static void fill_random(struct buffer b, int halves) {
  unsigned char *host = malloc(b.bytes);
  for (size_t i = 0; i < b.bytes; ++i)
    host[i] = (unsigned char)rand();
  if (halves) // f16 in [-1, 1): clear the exponent's top bits
    for (size_t i = 1; i < b.bytes; i += 2)
      host[i] &= 0xBB;
  if (mode == FAKE || mode == GPU)
    attnrt_memcpy_htod((attnrt_deviceptr)(uintptr_t)b.ptr, host, b.bytes);
  else
    memcpy(b.ptr, host, b.bytes);
  free(host);
}

// How many bytes of `b` still hold `fill` (all of them after a rejected
// call; none of them after a good one).
static size_t count_fill(struct buffer b, unsigned char fill) {
  unsigned char *host = malloc(b.bytes);
  if (mode == FAKE || mode == GPU)
    attnrt_memcpy_dtoh(host, (attnrt_deviceptr)(uintptr_t)b.ptr, b.bytes);
  else
    memcpy(host, b.ptr, b.bytes);
  size_t n = 0;
  for (size_t i = 0; i < b.bytes; ++i)
    n += host[i] == fill;
  free(host);
  return n;
}

static void expect_untouched(const char *what, struct buffer b) {
  if (mode != GPU)
    return;
  char line[256];
  snprintf(line, sizeof line, "%s: output untouched", what);
  check(attnrt_synchronize() == ATTNRT_SUCCESS && count_fill(b, 0xFF) == b.bytes,
        line, NULL);
}

static void expect_written(const char *what, struct buffer b) {
  if (mode != GPU)
    return;
  char line[256];
  attnrt_status sync = attnrt_synchronize();
  // 0xFFFF halves are NaNs: none may be left.
  size_t left = 0;
  unsigned short *host = malloc(b.bytes);
  attnrt_memcpy_dtoh(host, (attnrt_deviceptr)(uintptr_t)b.ptr, b.bytes);
  for (size_t i = 0; i < b.bytes / 2; ++i)
    left += host[i] == 0xFFFF;
  free(host);
  snprintf(line, sizeof line, "%s: every output element written (%zu left)",
           what, left);
  check(sync == ATTNRT_SUCCESS && left == 0, line, NULL);
}

//===----------------------------------------------------------------------===//
// The fake driver's record of launches
//===----------------------------------------------------------------------===//

static const struct fake_cuda_state *fake(void) {
  static const struct fake_cuda_state *state;
  if (!state) {
    void *driver = dlopen(getenv("ATTNRT_CUDA_DRIVER"), RTLD_NOW);
    state = driver ? dlsym(driver, "fake_cuda_state") : NULL;
    if (!state) {
      printf("FAIL: no fake_cuda_state in $ATTNRT_CUDA_DRIVER\n");
      exit(1);
    }
  }
  return state;
}

// Whether the last launch's parameters from `first` are the memref
// descriptor of `data` with `rank` sizes and strides: allocated and aligned
// pointer, offset 0, sizes, strides.
static int is_memref(const struct fake_cuda_state *s, int first,
                     const void *data, int rank, const long long *sizes,
                     const long long *strides) {
  const unsigned long long *v = s->last_params + first;
  if (first + 3 + 2 * rank > s->last_param_count ||
      v[0] != (unsigned long long)(uintptr_t)data || v[1] != v[0] || v[2])
    return 0;
  for (int d = 0; d < rank; ++d)
    if (v[3 + d] != (unsigned long long)sizes[d] ||
        v[3 + rank + d] != (unsigned long long)strides[d])
      return 0;
  return 1;
}

//===----------------------------------------------------------------------===//
// The checks
//===----------------------------------------------------------------------===//

static void check_status_strings(void) {
  check(strstr(attn_status_string(ATTN_ERROR_MISALIGNED), "aligned") != NULL,
        "attn_status_string(ATTN_ERROR_MISALIGNED) says 'aligned'", NULL);
  check(strcmp(attn_status_string(99), "unknown attn status") == 0,
        "attn_status_string(99) is 'unknown attn status'", NULL);
}

// prefill: q [B, 4, Sq, 64], k/v [B, 2, Sk, 64], lse [B, 4, Sq]; causal.
static void check_prefill(void) {
  const int64_t B = 2, Sq = 100, Sk = 130;
  struct buffer q = make(B * 4 * Sq * 64 * 2, 0), k = make(B * 2 * Sk * 64 * 2, 0),
                v = make(B * 2 * Sk * 64 * 2, 0), o = make(B * 4 * Sq * 64 * 2, 0xFF),
                lse = make(B * 4 * Sq * 4, 0xFF);
  fill_random(q, 1);
  fill_random(k, 1);
  fill_random(v, 1);

  expect("prefill_can_implement(2, 100, 130)",
         attn_prefill_can_implement(B, Sq, Sk), ATTN_SUCCESS, NULL);
  expect("prefill_can_implement(batch 0)", attn_prefill_can_implement(0, Sq, Sk),
         ATTN_ERROR_UNSUPPORTED_SIZE, "q dimension 0 is 0");
  expect("prefill_can_implement(q_len -5)",
         attn_prefill_can_implement(B, -5, Sk), ATTN_ERROR_UNSUPPORTED_SIZE,
         "q dimension 2 is -5");
  expect("prefill_can_implement(batch 70000: grid z > 65535)",
         attn_prefill_can_implement(70000, Sq, Sk),
         ATTN_ERROR_UNSUPPORTED_SIZE, "grid");
  size_t bytes = 1;
  expect("prefill_workspace_bytes (no workspace, no driver needed)",
         attn_prefill_workspace_bytes(B, Sq, Sk, &bytes), ATTN_SUCCESS, NULL);
  check(bytes == 0, "prefill needs 0 workspace bytes", NULL);

  expect("prefill_run(q NULL)",
         attn_prefill_run(NULL, NULL, k.ptr, NULL, v.ptr, NULL, o.ptr, NULL,
                          lse.ptr, NULL, B, Sq, Sk, NULL, 0, NULL),
         ATTN_ERROR_NULL_POINTER, "q is NULL");
  expect_untouched("prefill_run(q NULL)", o);
  expect("prefill_run(lse NULL)",
         attn_prefill_run(q.ptr, NULL, k.ptr, NULL, v.ptr, NULL, o.ptr, NULL,
                          NULL, NULL, B, Sq, Sk, NULL, 0, NULL),
         ATTN_ERROR_NULL_POINTER, "lse is NULL");
  expect("prefill_run(q + 2 bytes)",
         attn_prefill_run(q.ptr + 2, NULL, k.ptr, NULL, v.ptr, NULL, o.ptr,
                          NULL, lse.ptr, NULL, B, Sq, Sk, NULL, 0, NULL),
         ATTN_ERROR_MISALIGNED, "q (");
  expect_untouched("prefill_run(q + 2 bytes)", o);
  const int64_t k_not_row_major[4] = {2 * Sk * 64, Sk * 64, 64, 2};
  expect("prefill_run(k strides not row-major)",
         attn_prefill_run(q.ptr, NULL, k.ptr, k_not_row_major, v.ptr, NULL,
                          o.ptr, NULL, lse.ptr, NULL, B, Sq, Sk, NULL, 0, NULL),
         ATTN_ERROR_UNSUPPORTED_STRIDE, "k stride 3 is 2");
  expect_untouched("prefill_run(k strides not row-major)", o);
  expect("prefill_run(batch 0)",
         attn_prefill_run(q.ptr, NULL, k.ptr, NULL, v.ptr, NULL, o.ptr, NULL,
                          lse.ptr, NULL, 0, Sq, Sk, NULL, 0, NULL),
         ATTN_ERROR_UNSUPPORTED_SIZE, NULL);
  expect_untouched("prefill_run(batch 0)", o);

  int launches = mode == FAKE ? fake()->launches : 0;
  const int64_t q_row_major[4] = {4 * Sq * 64, Sq * 64, 64, 1};
  expect("prefill_run(valid, q strides given)",
         attn_prefill_run(q.ptr, q_row_major, k.ptr, NULL, v.ptr, NULL, o.ptr,
                          NULL, lse.ptr, NULL, B, Sq, Sk, NULL, 0, NULL),
         valid_code(), NULL);
  if (mode == FAKE) {
    const struct fake_cuda_state *s = fake();
    char line[256];
    // 2 query heads per K/V head: 200 rows per K/V head. The 128-row
    // grid (8 blocks) and the 64-row one (16) leave most of the fake GPU's
    // 108 SMs idle, so the 32-row kernel runs: 7 blocks per K/V head, 8
    // warps. Where the GPU allows it too little shared memory, the 64-row
    // one: 4 blocks, 4 warps.
    int tiny = tiny_fits();
    snprintf(line, sizeof line,
             "prefill launched once on grid (%u, %u, %u) x %u threads", s->last_grid[0],
             s->last_grid[1], s->last_grid[2], s->last_block[0]);
    check(s->launches == launches + 1 && s->last_grid[0] == (tiny ? 7 : 4) &&
              s->last_grid[1] == 2 && s->last_grid[2] == 2 &&
              s->last_block[0] == (tiny ? 256 : 128),
          line, NULL);
    // The contract's params: q, k, v, o, lse, each a memref descriptor.
    const long long q_sizes[4] = {B, 4, Sq, 64}, kv_sizes[4] = {B, 2, Sk, 64},
                    kv_strides[4] = {2 * Sk * 64, Sk * 64, 64, 1},
                    lse_sizes[3] = {B, 4, Sq}, lse_strides[3] = {4 * Sq, Sq, 1};
    const long long q_strides[4] = {4 * Sq * 64, Sq * 64, 64, 1};
    snprintf(line, sizeof line,
             "prefill passed q, k, v, o, lse in order (%d parameters)",
             s->last_param_count);
    check(s->last_param_count == 4 * 11 + 9 &&
              is_memref(s, 0, q.ptr, 4, q_sizes, q_strides) &&
              is_memref(s, 11, k.ptr, 4, kv_sizes, kv_strides) &&
              is_memref(s, 22, v.ptr, 4, kv_sizes, kv_strides) &&
              is_memref(s, 33, o.ptr, 4, q_sizes, q_strides) &&
              is_memref(s, 44, lse.ptr, 3, lse_sizes, lse_strides),
          line, NULL);
  }
  expect_written("prefill_run(valid)", o);
}

// A dynamic q_len of 1 to 16 runs the kernel's split-K decode code: it
// asks for a workspace, refuses a call without one (writing nothing), and
// launches the split and combine kernels; q_len 17 runs the prefill code.
static void check_short_queries(void) {
  if (mode != FAKE && mode != GPU)
    return;
  const int64_t B = 2, Sq = 3, Sk = 500;
  struct buffer q = make(B * 4 * Sq * 64 * 2, 0),
                k = make(B * 2 * Sk * 64 * 2, 0),
                v = make(B * 2 * Sk * 64 * 2, 0),
                o = make(B * 4 * Sq * 64 * 2, 0xFF),
                lse = make(B * 4 * Sq * 4, 0xFF);
  fill_random(q, 1);
  fill_random(k, 1);
  fill_random(v, 1);
  size_t bytes = 0, long_bytes = 1;
  expect("prefill_workspace_bytes_splits(q_len 3, 4 splits)",
         attn_prefill_workspace_bytes_splits(B, Sq, Sk, 4, &bytes),
         ATTN_SUCCESS, NULL);
  // [B * Hq * Sq rows, 4 splits, 64 + 2] f32.
  char line[160];
  snprintf(line, sizeof line,
           "q_len 3 needs a decode workspace (%zu bytes for 4 splits)", bytes);
  check(bytes == (size_t)(B * 4 * Sq) * 4 * 66 * 4, line, NULL);
  expect("prefill_workspace_bytes(q_len 17)",
         attn_prefill_workspace_bytes(B, 17, Sk, &long_bytes), ATTN_SUCCESS,
         NULL);
  check(long_bytes == 0, "q_len 17 needs no workspace (prefill code)", NULL);
  expect("prefill_run(q_len 3, no workspace)",
         attn_prefill_run(q.ptr, NULL, k.ptr, NULL, v.ptr, NULL, o.ptr, NULL,
                          lse.ptr, NULL, B, Sq, Sk, NULL, 0, NULL),
         ATTN_ERROR_WORKSPACE_TOO_SMALL, "workspace");
  expect_untouched("prefill_run(q_len 3, no workspace)", o);
  struct buffer ws = make(bytes, 0);
  int launches = mode == FAKE ? fake()->launches : 0;
  expect("prefill_run_splits(q_len 3, 4 splits)",
         attn_prefill_run_splits(q.ptr, NULL, k.ptr, NULL, v.ptr, NULL, o.ptr,
                                 NULL, lse.ptr, NULL, B, Sq, Sk, 4, ws.ptr,
                                 ws.bytes, NULL),
         ATTN_SUCCESS, NULL);
  if (mode == FAKE) {
    const struct fake_cuda_state *s = fake();
    // The combine kernel last: one block per row, workspace, o, lse.
    snprintf(line, sizeof line,
             "q_len 3 launched split + combine (%d launches), combine grid "
             "(%u, %u, %u)",
             s->launches - launches, s->last_grid[0], s->last_grid[1],
             s->last_grid[2]);
    check(s->launches == launches + 2 && s->last_grid[0] == B * 4 * Sq &&
              s->last_grid[1] == 1 && s->last_param_count == 9 + 11 + 9,
          line, NULL);
  }
  expect_written("prefill_run_splits(q_len 3)", o);
}

// The prefill tile the runtime picks from the grid: 128 rows once that grid
// has a block for each of the fake GPU's 108 SMs, else 64 rows if that
// grid does, else 32.
static void check_prefill_tiles(void) {
  const struct {
    int64_t q_len;
    unsigned grid_x; // 2 q_len rows per K/V head
    const char *what;
  } cases[] = {{3456, 54, "108 blocks of 128 rows fill 108 SMs: 128-row tiles"},
               {3392, 106, "106 blocks of 128 rows do not: 64-row tiles"},
               {1697, 54, "108 blocks of 64 rows fill 108 SMs: 64-row tiles"},
               {1696, 106, "106 blocks of 64 rows do not: 32-row tiles"},
               {1696, 53, "106 blocks of 64 rows, the 32-row kernel's shared "
                          "memory too large: 64-row tiles"}};
  const int tiny = tiny_fits();
  for (size_t i = 0; i < sizeof cases / sizeof *cases; ++i) {
    // The last case is for a GPU without room for the 8-warp kernel, the
    // one before it for the others.
    if (i + 2 == sizeof cases / sizeof *cases && !tiny)
      continue;
    if (i + 1 == sizeof cases / sizeof *cases && tiny)
      continue;
    int64_t sq = cases[i].q_len;
    struct buffer q = make(4 * sq * 64 * 2, 0), k = make(2 * sq * 64 * 2, 0),
                  v = make(2 * sq * 64 * 2, 0), o = make(4 * sq * 64 * 2, 0),
                  lse = make(4 * sq * 4, 0);
    int launches = fake()->launches;
    expect(cases[i].what,
           attn_prefill_run(q.ptr, NULL, k.ptr, NULL, v.ptr, NULL, o.ptr, NULL,
                            lse.ptr, NULL, 1, sq, sq, NULL, 0, NULL),
           ATTN_SUCCESS, NULL);
    const struct fake_cuda_state *s = fake();
    char line[128];
    snprintf(line, sizeof line, "one launch on grid (%u, %u, %u)",
             s->last_grid[0], s->last_grid[1], s->last_grid[2]);
    check(s->launches == launches + 1 && s->last_grid[0] == cases[i].grid_x &&
              s->last_grid[1] == 2 && s->last_grid[2] == 1,
          line, NULL);
  }
}

// decode: paged K/V, 16 rows per block; q [B, 8, 1, 64], k/v [N, 2, 16, 64].
static void check_decode(void) {
  const int64_t B = 3, max_blocks = 40, num_blocks = B * max_blocks + 3;
  struct buffer q = make(B * 8 * 64 * 2, 0),
                k = make(num_blocks * 2 * 16 * 64 * 2, 0),
                v = make(num_blocks * 2 * 16 * 64 * 2, 0),
                table = make(B * max_blocks * 4, 0), lens = make(B * 4, 0),
                o = make(B * 8 * 64 * 2, 0xFF);
  fill_random(q, 1);
  fill_random(k, 1);
  fill_random(v, 1);
  int32_t host_table[3 * 40], host_lens[3] = {640, 17, 1};
  for (int i = 0; i < B * max_blocks; ++i)
    host_table[i] = (i * 7 + 1) % (int)num_blocks;
  if (mode == FAKE || mode == GPU) {
    attnrt_memcpy_htod((attnrt_deviceptr)(uintptr_t)table.ptr, host_table,
                       sizeof host_table);
    attnrt_memcpy_htod((attnrt_deviceptr)(uintptr_t)lens.ptr, host_lens,
                       sizeof host_lens);
  }

  expect("decode_can_implement(num_blocks 0)",
         attn_decode_can_implement(B, 0, max_blocks),
         ATTN_ERROR_UNSUPPORTED_SIZE, "k dimension 0 is 0");
  size_t bytes = 0;
  expect("decode_workspace_bytes",
         attn_decode_workspace_bytes(B, num_blocks, max_blocks, &bytes),
         valid_code(), NULL);
  if (mode == FAKE) {
    // 24 rows x splits x (64 + 2) floats; 640 keys allow 5 splits of 128.
    attnrt_device_info info;
    attnrt_get_device_info(&info, 0);
    long long splits =
        attnrt_decode_splits(info.multiprocessor_count, B * 2, max_blocks * 16);
    char line[256];
    snprintf(line, sizeof line, "decode workspace is %zu bytes for %lld splits",
             bytes, splits);
    check(splits == 5 && bytes == (size_t)(24 * splits * 66 * 4), line, NULL);
  }
  struct buffer workspace = make(bytes ? bytes : 16, 0);

  expect("decode_run(block_table + 2 bytes)",
         attn_decode_run(q.ptr, NULL, k.ptr, NULL, v.ptr, NULL, table.ptr + 2,
                         NULL, lens.ptr, NULL, o.ptr, NULL, B, num_blocks,
                         max_blocks, workspace.ptr, bytes, NULL),
         ATTN_ERROR_MISALIGNED, "block_table (");
  expect("decode_run(kv_lens NULL)",
         attn_decode_run(q.ptr, NULL, k.ptr, NULL, v.ptr, NULL, table.ptr, NULL,
                         NULL, NULL, o.ptr, NULL, B, num_blocks, max_blocks,
                         workspace.ptr, bytes, NULL),
         ATTN_ERROR_NULL_POINTER, "kv_lens is NULL");
  if (mode == FAKE || mode == GPU) {
    int launches = mode == FAKE ? fake()->launches : 0;
    expect("decode_run(workspace one byte short)",
           attn_decode_run(q.ptr, NULL, k.ptr, NULL, v.ptr, NULL, table.ptr,
                           NULL, lens.ptr, NULL, o.ptr, NULL, B, num_blocks,
                           max_blocks, workspace.ptr, bytes - 1, NULL),
           ATTN_ERROR_WORKSPACE_TOO_SMALL, "are needed");
    expect("decode_run(workspace NULL)",
           attn_decode_run(q.ptr, NULL, k.ptr, NULL, v.ptr, NULL, table.ptr,
                           NULL, lens.ptr, NULL, o.ptr, NULL, B, num_blocks,
                           max_blocks, NULL, bytes, NULL),
           ATTN_ERROR_NULL_POINTER, "workspace is NULL");
    if (mode == FAKE)
      check(fake()->launches == launches, "rejected decode calls launched nothing",
            NULL);
    expect_untouched("decode_run(rejected)", o);
  }
  int launches = mode == FAKE ? fake()->launches : 0;
  expect("decode_run(valid)",
         attn_decode_run(q.ptr, NULL, k.ptr, NULL, v.ptr, NULL, table.ptr, NULL,
                         lens.ptr, NULL, o.ptr, NULL, B, num_blocks, max_blocks,
                         workspace.ptr, bytes, NULL),
         valid_code(), NULL);
  if (mode == FAKE) {
    const struct fake_cuda_state *s = fake();
    char line[256];
    snprintf(line, sizeof line, "decode launched split + combine (%d launches)",
             s->launches - launches);
    check(s->launches == launches + 2, line, NULL);
    // The combine, launched last, takes the workspace [rows, splits, Dv + 2]
    // then o: one block per row.
    attnrt_device_info info;
    attnrt_get_device_info(&info, 0);
    long long splits =
        attnrt_decode_splits(info.multiprocessor_count, B * 2, max_blocks * 16);
    const long long ws_sizes[3] = {24, splits, 66},
                    ws_strides[3] = {splits * 66, 66, 1},
                    o_sizes[4] = {B, 8, 1, 64}, o_strides[4] = {512, 64, 64, 1};
    snprintf(line, sizeof line,
             "decode combine passed workspace [24, %lld, 66], o on grid (%u, "
             "%u, %u) (%d parameters)",
             splits, s->last_grid[0], s->last_grid[1], s->last_grid[2],
             s->last_param_count);
    check(s->last_param_count == 9 + 11 && s->last_grid[0] == 24 &&
              s->last_grid[1] == 1 && s->last_grid[2] == 1 &&
              is_memref(s, 0, workspace.ptr, 3, ws_sizes, ws_strides) &&
              is_memref(s, 9, o.ptr, 4, o_sizes, o_strides),
          line, NULL);
  }
  expect_written("decode_run(valid)", o);
}

// The paged decode with attention sinks: a bad sinks argument is refused
// like any operand, and the combine (the launch that normalizes O) gets
// the sinks' descriptor between the workspace and o.
static void check_sinks(void) {
  const int64_t B = 2, max_blocks = 8, num_blocks = B * max_blocks + 1;
  struct buffer q = make(B * 8 * 64 * 2, 0),
                k = make(num_blocks * 2 * 16 * 64 * 2, 0),
                v = make(num_blocks * 2 * 16 * 64 * 2, 0),
                table = make(B * max_blocks * 4, 0), lens = make(B * 4, 0),
                sinks = make(8 * 4, 0), o = make(B * 8 * 64 * 2, 0xFF);
  fill_random(q, 1);
  fill_random(k, 1);
  fill_random(v, 1);
  int32_t host_table[2 * 8], host_lens[2] = {100, 3};
  for (int i = 0; i < B * max_blocks; ++i)
    host_table[i] = i;
  float host_sinks[8] = {-2, -1, 0, 0.5f, 1, 2, 3, 4};
  if (mode == FAKE || mode == GPU) {
    attnrt_memcpy_htod((attnrt_deviceptr)(uintptr_t)table.ptr, host_table,
                       sizeof host_table);
    attnrt_memcpy_htod((attnrt_deviceptr)(uintptr_t)lens.ptr, host_lens,
                       sizeof host_lens);
    attnrt_memcpy_htod((attnrt_deviceptr)(uintptr_t)sinks.ptr, host_sinks,
                       sizeof host_sinks);
  }
  size_t bytes = 0;
  expect("sinks_decode_workspace_bytes",
         attn_sinks_decode_workspace_bytes(B, num_blocks, max_blocks, &bytes),
         valid_code(), NULL);
  struct buffer workspace = make(bytes ? bytes : 16, 0);
  expect("sinks_decode_run(sinks NULL)",
         attn_sinks_decode_run(q.ptr, NULL, k.ptr, NULL, v.ptr, NULL,
                               table.ptr, NULL, lens.ptr, NULL, NULL, NULL,
                               o.ptr, NULL, B, num_blocks, max_blocks,
                               workspace.ptr, bytes, NULL),
         ATTN_ERROR_NULL_POINTER, "sinks is NULL");
  expect("sinks_decode_run(sinks + 2 bytes)",
         attn_sinks_decode_run(q.ptr, NULL, k.ptr, NULL, v.ptr, NULL,
                               table.ptr, NULL, lens.ptr, NULL, sinks.ptr + 2,
                               NULL, o.ptr, NULL, B, num_blocks, max_blocks,
                               workspace.ptr, bytes, NULL),
         ATTN_ERROR_MISALIGNED, "sinks (");
  const int64_t every_other[1] = {2};
  expect("sinks_decode_run(sinks stride 2)",
         attn_sinks_decode_run(q.ptr, NULL, k.ptr, NULL, v.ptr, NULL,
                               table.ptr, NULL, lens.ptr, NULL, sinks.ptr,
                               every_other, o.ptr, NULL, B, num_blocks,
                               max_blocks, workspace.ptr, bytes, NULL),
         ATTN_ERROR_UNSUPPORTED_STRIDE, "sinks stride 0 is 2");
  expect_untouched("sinks_decode_run(bad sinks)", o);
  int launches = mode == FAKE ? fake()->launches : 0;
  expect("sinks_decode_run(valid)",
         attn_sinks_decode_run(q.ptr, NULL, k.ptr, NULL, v.ptr, NULL,
                               table.ptr, NULL, lens.ptr, NULL, sinks.ptr,
                               NULL, o.ptr, NULL, B, num_blocks, max_blocks,
                               workspace.ptr, bytes, NULL),
         valid_code(), NULL);
  if (mode == FAKE) {
    const struct fake_cuda_state *s = fake();
    attnrt_device_info info;
    attnrt_get_device_info(&info, 0);
    long long splits =
        attnrt_decode_splits(info.multiprocessor_count, B * 2, max_blocks * 16);
    const long long ws_sizes[3] = {16, splits, 66},
                    ws_strides[3] = {splits * 66, 66, 1},
                    sink_sizes[1] = {8}, sink_strides[1] = {1},
                    o_sizes[4] = {B, 8, 1, 64}, o_strides[4] = {512, 64, 64, 1};
    char line[256];
    snprintf(line, sizeof line,
             "sinks_decode launched split + combine (%d), the combine with "
             "workspace, sinks, o (%d parameters)",
             s->launches - launches, s->last_param_count);
    check(s->launches == launches + 2 && s->last_param_count == 9 + 5 + 11 &&
              is_memref(s, 0, workspace.ptr, 3, ws_sizes, ws_strides) &&
              is_memref(s, 9, sinks.ptr, 1, sink_sizes, sink_strides) &&
              is_memref(s, 14, o.ptr, 4, o_sizes, o_strides),
          line, NULL);
  }
  expect_written("sinks_decode_run(valid)", o);
}

// Whether bytes [offset, offset + n) of `a` equal the first n of `b`.
static int same_range(struct buffer a, size_t offset, struct buffer b,
                      size_t n) {
  unsigned char *x = malloc(a.bytes), *y = malloc(b.bytes);
  attnrt_memcpy_dtoh(x, (attnrt_deviceptr)(uintptr_t)a.ptr, a.bytes);
  attnrt_memcpy_dtoh(y, (attnrt_deviceptr)(uintptr_t)b.ptr, b.bytes);
  int same = offset + n <= a.bytes && n <= b.bytes && !memcmp(x + offset, y, n);
  free(x);
  free(y);
  return same;
}

// _run_splits and _workspace_bytes_splits: a count of K/V splits the caller
// fixes. On a GPU, a sequence decoded alone and inside a batch of four must
// give the same bits with a fixed count.
static void check_fixed_splits(void) {
  const int64_t B = 4, max_blocks = 40, num_blocks = B * max_blocks + 3;
  const size_t q_row = 8 * 64 * 2, o_row = 8 * 64 * 2;
  struct buffer q = make(B * q_row, 0), k = make(num_blocks * 2 * 16 * 64 * 2, 0),
                v = make(num_blocks * 2 * 16 * 64 * 2, 0),
                table = make(B * max_blocks * 4, 0), lens = make(B * 4, 0),
                o = make(B * o_row, 0xFF), o1 = make(o_row, 0xFF);
  fill_random(q, 1);
  fill_random(k, 1);
  fill_random(v, 1);
  int32_t host_table[4 * 40], host_lens[4] = {300, 640, 517, 2};
  for (int i = 0; i < B * max_blocks; ++i)
    host_table[i] = (i * 11 + 5) % (int)num_blocks;
  if (mode == FAKE || mode == GPU) {
    attnrt_memcpy_htod((attnrt_deviceptr)(uintptr_t)table.ptr, host_table,
                       sizeof host_table);
    attnrt_memcpy_htod((attnrt_deviceptr)(uintptr_t)lens.ptr, host_lens,
                       sizeof host_lens);
  }
  size_t bytes = 0;
  expect("decode_workspace_bytes_splits(-1)",
         attn_decode_workspace_bytes_splits(B, num_blocks, max_blocks, -1,
                                            &bytes),
         ATTN_ERROR_UNSUPPORTED_SIZE, "num_splits is -1");
  // q_len 17: the prefill code (1 to 16 run the split-K decode code).
  struct buffer pq = make(4 * 17 * 64 * 2, 0), pk = make(2 * 10 * 64 * 2, 0),
                po = make(4 * 17 * 64 * 2, 0xFF), plse = make(4 * 17 * 4, 0xFF);
  expect("prefill_run_splits(2): no split-K launch",
         attn_prefill_run_splits(pq.ptr, NULL, pk.ptr, NULL, pk.ptr, NULL,
                                 po.ptr, NULL, plse.ptr, NULL, 1, 17, 10, 2,
                                 NULL, 0, NULL),
         ATTN_ERROR_UNSUPPORTED_SIZE, "has no split-K launch");
  expect_untouched("prefill_run_splits(2)", po);
  expect("decode_workspace_bytes_splits(7)",
         attn_decode_workspace_bytes_splits(B, num_blocks, max_blocks, 7,
                                            &bytes),
         valid_code(), NULL);
  if (mode != FAKE && mode != GPU)
    return;
  char line[256];
  // 32 rows (4 sequences x 8 heads) x 7 splits x (64 + 2) floats.
  snprintf(line, sizeof line, "decode workspace for 7 splits is %zu bytes",
           bytes);
  check(bytes == (size_t)(32 * 7 * 66 * 4), line, NULL);
  struct buffer workspace = make(bytes, 0);
  expect("decode_run_splits(7)",
         attn_decode_run_splits(q.ptr, NULL, k.ptr, NULL, v.ptr, NULL,
                                table.ptr, NULL, lens.ptr, NULL, o.ptr, NULL, B,
                                num_blocks, max_blocks, 7, workspace.ptr,
                                bytes, NULL),
         ATTN_SUCCESS, NULL);
  if (mode == FAKE) {
    const struct fake_cuda_state *s = fake();
    const long long ws_sizes[3] = {32, 7, 66}, ws_strides[3] = {7 * 66, 66, 1};
    check(is_memref(s, 0, workspace.ptr, 3, ws_sizes, ws_strides),
          "decode combine got the caller's 7 splits", NULL);
    return;
  }
  expect_written("decode_run_splits(7)", o);
  // Sequence 2 alone: its rows of q, block_table and kv_lens.
  expect("decode_run_splits(7), sequence 2 alone",
         attn_decode_run_splits(q.ptr + 2 * q_row, NULL, k.ptr, NULL, v.ptr,
                                NULL, table.ptr + 2 * max_blocks * 4, NULL,
                                lens.ptr + 2 * 4, NULL, o1.ptr, NULL, 1,
                                num_blocks, max_blocks, 7, workspace.ptr, bytes,
                                NULL),
         ATTN_SUCCESS, NULL);
  attnrt_synchronize();
  check(same_range(o, 2 * o_row, o1, o_row),
        "7 splits: sequence 2 alone is bit-identical to sequence 2 in the "
        "batch of 4",
        NULL);
  // The runtime's own choice depends on the batch; say whether it changed
  // the bits here (information, not a check).
  size_t chosen_bytes = 0;
  attn_decode_workspace_bytes(1, num_blocks, max_blocks, &chosen_bytes);
  struct buffer chosen = make(chosen_bytes ? chosen_bytes : 16, 0);
  attn_decode_run(q.ptr + 2 * q_row, NULL, k.ptr, NULL, v.ptr, NULL,
                  table.ptr + 2 * max_blocks * 4, NULL, lens.ptr + 2 * 4, NULL,
                  o1.ptr, NULL, 1, num_blocks, max_blocks, chosen.ptr,
                  chosen_bytes, NULL);
  attnrt_synchronize();
  printf("INFO: with the runtime's split count, sequence 2 alone is %s "
         "sequence 2 in the batch\n",
         same_range(o, 2 * o_row, o1, o_row) ? "bit-identical to"
                                             : "not bit-identical to");
}

// strided: [B, S, H, D] memory seen as [B, H, S, D]; layout strides
// [?, 64, 256, 1].
static void check_strided(void) {
  const int64_t B = 2, S = 50;
  const size_t bytes = B * S * 4 * 64 * 2;
  struct buffer q = make(bytes, 0), k = make(bytes, 0), v = make(bytes, 0),
                o = make(bytes, 0xFF);
  fill_random(q, 1);
  fill_random(k, 1);
  fill_random(v, 1);
  const int64_t strides[4] = {S * 256, 64, 256, 1};
  const int64_t odd[4] = {S * 256 + 4, 64, 256, 1};
  expect("strided_run(strides NULL: row-major does not fit the layout)",
         attn_strided_run(o.ptr, NULL, q.ptr, strides, k.ptr, strides, v.ptr,
                          strides, B, S, S, NULL, 0, NULL),
         ATTN_ERROR_UNSUPPORTED_STRIDE, "o stride 1");
  expect("strided_run(batch stride of 8 bytes past alignment)",
         attn_strided_run(o.ptr, strides, q.ptr, odd, k.ptr, strides, v.ptr,
                          strides, B, S, S, NULL, 0, NULL),
         ATTN_ERROR_MISALIGNED, "q stride 0");
  // O's batches overlap: batch 1 starts at batch 0's row 25.
  const int64_t overlapping[4] = {S * 128, 64, 256, 1};
  expect("strided_run(o batches overlap)",
         attn_strided_run(o.ptr, overlapping, q.ptr, strides, k.ptr, strides,
                          v.ptr, strides, B, S, S, NULL, 0, NULL),
         ATTN_ERROR_UNSUPPORTED_STRIDE,
         "o's elements alias: stride 0 is 6400 but the dims with smaller "
         "strides reach offset 12799");
  // Q may overlap itself (it is only read), but not reach past 2^62 bytes.
  const int64_t far[4] = {(int64_t)1 << 61, 64, 256, 1};
  expect("strided_run(q batch stride 2^61)",
         attn_strided_run(o.ptr, strides, q.ptr, far, k.ptr, strides, v.ptr,
                          strides, B, S, S, NULL, 0, NULL),
         ATTN_ERROR_UNSUPPORTED_STRIDE, "too far to address");
  expect_untouched("strided_run(rejected)", o);
  expect("strided_run(valid)",
         attn_strided_run(o.ptr, strides, q.ptr, strides, k.ptr, strides, v.ptr,
                          strides, B, S, S, NULL, 0, NULL),
         valid_code(), NULL);
  expect_written("strided_run(valid)", o);
}

// Fake driver with two devices: eight threads race to the first call of a
// kernel and one module gets loaded; a call from device 1 loads it there.
struct race {
  struct buffer q, k, v, o;
  int64_t batch, len;
  int status;
};

static void *call_strided(void *argument) {
  struct race *r = argument;
  const int64_t strides[4] = {r->len * 256, 64, 256, 1};
  r->status = attn_strided_run(r->o.ptr, strides, r->q.ptr, strides, r->k.ptr,
                               strides, r->v.ptr, strides, r->batch, r->len,
                               r->len, NULL, 0, NULL);
  return NULL;
}

static void check_devices_and_threads(void) {
  const int64_t B = 1, S = 64;
  const size_t bytes = B * S * 4 * 64 * 2;
  struct race races[8];
  pthread_t threads[8];
  struct buffer q = make(bytes, 0), k = make(bytes, 0), v = make(bytes, 0),
                o = make(bytes, 0xFF);
  int modules = fake()->live_modules;
  for (int i = 0; i < 8; ++i) {
    races[i] = (struct race){q, k, v, o, B, S, -1};
    pthread_create(&threads[i], NULL, call_strided, &races[i]);
  }
  int ok = 1;
  for (int i = 0; i < 8; ++i) {
    pthread_join(threads[i], NULL);
    ok &= races[i].status == ATTN_SUCCESS;
  }
  char line[256];
  snprintf(line, sizeof line,
           "8 threads' first calls all succeed and load 1 module (%d)",
           fake()->live_modules - modules);
  check(ok && fake()->live_modules == modules + 1, line, NULL);
  if (attnrt_set_device(1) != ATTNRT_SUCCESS) {
    check(0, "attnrt_set_device(1)", attnrt_last_error());
    return;
  }
  struct buffer q1 = make(bytes, 0), k1 = make(bytes, 0), v1 = make(bytes, 0),
                o1 = make(bytes, 0xFF);
  struct race on_one = {q1, k1, v1, o1, B, S, -1};
  call_strided(&on_one);
  snprintf(line, sizeof line,
           "a call on device 1 succeeds and loads the code there (%d modules)",
           fake()->live_modules - modules);
  check(on_one.status == ATTN_SUCCESS && fake()->live_modules == modules + 2,
        line, NULL);
  attnrt_set_device(0);
}

// A real GPU: four host threads make the process's first calls of the
// prefill kernel at once, each on a stream of its own, so the lazy, locked
// module loading races for real. Each thread's O and LSE must equal, bit
// for bit, those of a call made alone afterwards, and be fully written.
struct gpu_thread {
  struct buffer q, k, v, o, lse;
  int64_t batch, q_len, kv_len;
  int status;
  const char *failure;
};

static void *call_prefill_on_own_stream(void *argument) {
  struct gpu_thread *t = argument;
  attnrt_stream *stream = NULL;
  if (attnrt_set_device(0) != ATTNRT_SUCCESS ||
      attnrt_stream_create(&stream) != ATTNRT_SUCCESS) {
    t->failure = "attnrt_stream_create";
    return NULL;
  }
  t->status = attn_prefill_run(t->q.ptr, NULL, t->k.ptr, NULL, t->v.ptr, NULL,
                               t->o.ptr, NULL, t->lse.ptr, NULL, t->batch,
                               t->q_len, t->kv_len, NULL, 0, stream);
  if (attnrt_stream_synchronize(stream) != ATTNRT_SUCCESS)
    t->failure = "attnrt_stream_synchronize";
  attnrt_stream_destroy(stream);
  return NULL;
}

static int same_bytes(struct buffer a, struct buffer b) {
  return a.bytes == b.bytes && same_range(a, 0, b, b.bytes);
}

static void check_gpu_threads(void) {
  enum { N = 4 };
  const int64_t B = 2, Sq = 300, Sk = 333;
  struct buffer q = make(B * 4 * Sq * 64 * 2, 0), k = make(B * 2 * Sk * 64 * 2, 0),
                v = make(B * 2 * Sk * 64 * 2, 0);
  fill_random(q, 1);
  fill_random(k, 1);
  fill_random(v, 1);
  struct gpu_thread threads[N];
  pthread_t ids[N];
  for (int i = 0; i < N; ++i) {
    threads[i] = (struct gpu_thread){q, k, v, make(B * 4 * Sq * 64 * 2, 0xFF),
                                     make(B * 4 * Sq * 4, 0xFF), B, Sq, Sk, -1,
                                     NULL};
    pthread_create(&ids[i], NULL, call_prefill_on_own_stream, &threads[i]);
  }
  for (int i = 0; i < N; ++i)
    pthread_join(ids[i], NULL);
  struct gpu_thread alone = {q, k, v, make(B * 4 * Sq * 64 * 2, 0xFF),
                             make(B * 4 * Sq * 4, 0xFF), B, Sq, Sk, -1, NULL};
  call_prefill_on_own_stream(&alone);
  check(alone.status == ATTN_SUCCESS && !alone.failure,
        "prefill_run alone on its own stream", attn_last_error());
  for (int i = 0; i < N; ++i) {
    char line[256];
    snprintf(line, sizeof line,
             "thread %d of %d: first call on its own stream -> %s%s%s", i, N,
             code_name(threads[i].status), threads[i].failure ? ", " : "",
             threads[i].failure ? threads[i].failure : "");
    check(threads[i].status == ATTN_SUCCESS && !threads[i].failure, line,
          NULL);
    snprintf(line, sizeof line,
             "thread %d of %d: O and LSE identical to the call made alone", i,
             N);
    check(same_bytes(threads[i].o, alone.o) &&
              same_bytes(threads[i].lse, alone.lse),
          line, NULL);
    snprintf(line, sizeof line, "thread %d of %d", i, N);
    expect_written(line, threads[i].o);
  }
}

// Captures (attn.attention's memrefs the mod regions read): capture0 is
// the document ids [batch, S] with dynamic dims (sizes of their own),
// capture1 the slopes [4]; each checked like an operand and passed as a
// memref descriptor after the inputs.
static void check_captures(void) {
  const int64_t B = 2, S = 70;
  struct buffer q = make(B * 4 * S * 64 * 2, 0), k = make(B * 2 * S * 64 * 2, 0),
                v = make(B * 2 * S * 64 * 2, 0), o = make(B * 4 * S * 64 * 2, 0xFF),
                ids = make(B * S * 4, 0), slopes = make(4 * 4, 0);
  fill_random(q, 1);
  fill_random(k, 1);
  fill_random(v, 1);
  expect("documents_can_implement(capture0 dim 0 is 0)",
         attn_documents_can_implement(B, S, S, 0, S),
         ATTN_ERROR_UNSUPPORTED_SIZE, "capture0 dimension 0 is 0");
  expect("documents_run(capture0 NULL)",
         attn_documents_run(q.ptr, NULL, k.ptr, NULL, v.ptr, NULL, NULL, NULL,
                            slopes.ptr, NULL, o.ptr, NULL, B, S, S, B, S,
                            NULL, 0, NULL),
         ATTN_ERROR_NULL_POINTER, "capture0 is NULL");
  expect_untouched("documents_run(capture0 NULL)", o);
  expect("documents_run(capture1 + 2 bytes)",
         attn_documents_run(q.ptr, NULL, k.ptr, NULL, v.ptr, NULL, ids.ptr,
                            NULL, slopes.ptr + 2, NULL, o.ptr, NULL, B, S, S,
                            B, S, NULL, 0, NULL),
         ATTN_ERROR_MISALIGNED, "capture1 (");
  const int64_t column_major[2] = {1, B};
  expect("documents_run(capture0 column-major)",
         attn_documents_run(q.ptr, NULL, k.ptr, NULL, v.ptr, NULL, ids.ptr,
                            column_major, slopes.ptr, NULL, o.ptr, NULL, B, S,
                            S, B, S, NULL, 0, NULL),
         ATTN_ERROR_UNSUPPORTED_STRIDE, "capture0 stride 0 is 1");
  expect_untouched("documents_run(bad captures)", o);
  // The mask_mod's block mask lives in the workspace: [B, 1, 2, 1] i32.
  // (The size needs the GPU's code, so a driver.)
  size_t bytes = (size_t)B * 2 * 4;
  if (valid_code() == ATTN_SUCCESS) {
    expect("documents_workspace_bytes",
           attn_documents_workspace_bytes(B, S, S, B, S, &bytes), ATTN_SUCCESS,
           NULL);
    check(bytes == (size_t)B * 2 * 4,
          "documents needs B * 2 * 4 bytes of block mask", NULL);
  }
  struct buffer ws = make(bytes, 0);
  expect("documents_run(no workspace)",
         attn_documents_run(q.ptr, NULL, k.ptr, NULL, v.ptr, NULL, ids.ptr,
                            NULL, slopes.ptr, NULL, o.ptr, NULL, B, S, S, B, S,
                            NULL, 0, NULL),
         valid_code() == ATTN_SUCCESS ? ATTN_ERROR_WORKSPACE_TOO_SMALL
                                      : valid_code(),
         valid_code() == ATTN_SUCCESS ? "the workspace has 0 bytes" : NULL);
  int launches = mode == FAKE ? fake()->launches : 0;
  expect("documents_run(valid)",
         attn_documents_run(q.ptr, NULL, k.ptr, NULL, v.ptr, NULL, ids.ptr,
                            NULL, slopes.ptr, NULL, o.ptr, NULL, B, S, S, B, S,
                            ws.ptr, bytes, NULL),
         valid_code(), NULL);
  if (mode == FAKE) {
    const struct fake_cuda_state *s = fake();
    check(s->launches == launches + 2,
          "documents_run launched the block mask, then the attention", NULL);
    const long long id_sizes[2] = {B, S}, id_strides[2] = {S, 1},
                    slope_sizes[1] = {4}, slope_strides[1] = {1},
                    o_sizes[4] = {B, 4, S, 64},
                    o_strides[4] = {4 * S * 64, S * 64, 64, 1};
    char line[256];
    snprintf(line, sizeof line,
             "documents passed q, k, v, capture0, capture1, o, block mask in order (%d "
             "parameters)",
             s->last_param_count);
    const long long ws_sizes[4] = {B, 1, 2, 1}, ws_strides[4] = {2, 2, 1, 1};
    check(s->last_param_count == 3 * 11 + 7 + 5 + 11 + 11 &&
              is_memref(s, 33, ids.ptr, 2, id_sizes, id_strides) &&
              is_memref(s, 40, slopes.ptr, 1, slope_sizes, slope_strides) &&
              is_memref(s, 45, o.ptr, 4, o_sizes, o_strides) &&
              is_memref(s, 56, ws.ptr, 4, ws_sizes, ws_strides),
          line, NULL);
    launches = s->launches;
    expect("documents_block_mask(valid)",
           attn_documents_block_mask(q.ptr, NULL, k.ptr, NULL, v.ptr, NULL,
                                     ids.ptr, NULL, slopes.ptr, NULL, o.ptr,
                                     NULL, B, S, S, B, S, ws.ptr, bytes, NULL),
           ATTN_SUCCESS, NULL);
    snprintf(line, sizeof line,
             "documents_block_mask launched once on grid (%u, %u, %u) x %u "
             "threads",
             s->last_grid[0], s->last_grid[1], s->last_grid[2],
             s->last_block[0]);
    check(s->launches == launches + 1 && s->last_grid[0] == 1 &&
              s->last_grid[1] == 1 && s->last_grid[2] == B &&
              s->last_block[0] == 256,
          line, NULL);
    expect("documents_run_block_masked(valid)",
           attn_documents_run_block_masked(
               q.ptr, NULL, k.ptr, NULL, v.ptr, NULL, ids.ptr, NULL,
               slopes.ptr, NULL, o.ptr, NULL, B, S, S, B, S, ws.ptr, bytes,
               NULL),
           ATTN_SUCCESS, NULL);
    check(s->launches == launches + 2 && s->last_grid[1] == 2,
          "documents_run_block_masked launched the attention alone", NULL);
  }
}

int main(int argc, char **argv) {
  const char *modes[] = {"no-driver", "no-device", "fake", "unsupported-device",
                         "gpu"};
  int m = -1;
  for (int i = 0; argc == 2 && i < 5; ++i)
    if (!strcmp(argv[1], modes[i]))
      m = i;
  if (m < 0) {
    fprintf(stderr,
            "usage: %s no-driver|no-device|fake|unsupported-device|gpu\n",
            argv[0]);
    return 2;
  }
  mode = (enum mode)m;
  setvbuf(stdout, NULL, _IOLBF, 0);
  srand(2026);
  check_status_strings();
  if (mode == GPU) // first: the threads must make the first calls
    check_gpu_threads();
  if (mode == FAKE)
    check_devices_and_threads();
  check_prefill();
  if (mode == FAKE)
    check_prefill_tiles();
  check_short_queries();
  check_decode();
  check_fixed_splits();
  check_strided();
  check_captures();
  check_sinks();
  printf("%d passed, %d failed\n", passed, failed);
  release_all();
  return failed ? 1 : 0;
}
