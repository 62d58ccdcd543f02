//===- quantized_check.c - The C ABI of quantized K/V cache kernels -------===//
//
// Links the library attn-compile makes from Inputs/quantized-decode.mlir
// and calls its functions with good and bad arguments:
//
//   quantized_check no-driver   CI: no CUDA driver
//   quantized_check fake        the fake driver: launches are recorded
//   quantized_check gpu         a real GPU: @i8_decode through the C ABI
//                               against a float64 reference
//
// The scales are operands like any other: a NULL one is refused by name,
// a per-tensor scale (a rank-0 memref) is passed (the runtime told
// absent operands from rank-0 ones by element size, not rank), and the
// split launch takes them after V. One line per check, then "N passed, M
// failed". (Results on a GPU: test/gpu's q8_* cases.)
//
//===----------------------------------------------------------------------===//

#define _POSIX_C_SOURCE 200809L

#include "quantized_decode.h"

// After the library's header, whose functions they call.
#include "attnrt.h"
#include "check_common.h"

#include <math.h>

// @i8_decode on a GPU: q [2, 4, 1, 64] bf16, K/V [2, 4, 300, 64] i8
// (fresh bytes, never all zero), a per-tensor K scale and per-head V
// scales, through _run (the runtime's split count) and _run_splits (3);
// O and the LSE poisoned first, then compared with float64.
static void gpu_check(void) {
  enum { B = 2, H = 4, S = 300, D = 64 };
  static uint16_t q[B * H * D], o[B * H * D];
  static int8_t k[B * H * S * D], v[B * H * S * D];
  static float lse[B * H];
  float ks = 0.0173f, vs[H] = {0.011f, 0.02f, 0.007f, 0.031f};
  srand(41);
  for (int i = 0; i < B * H * D; ++i)
    q[i] = to_bf16((float)((double)rand() / RAND_MAX * 2 - 1));
  for (int i = 0; i < B * H * S * D; ++i) {
    k[i] = (int8_t)(rand() % 255 - 127);
    v[i] = (int8_t)(rand() % 255 - 127);
  }
  attnrt_deviceptr dq, dk, dv, dks, dvs, dout, dlse, dws;
  size_t ws = 0;
  if (attnrt_malloc(&dq, sizeof q) || attnrt_malloc(&dk, sizeof k) ||
      attnrt_malloc(&dv, sizeof v) || attnrt_malloc(&dks, 4) ||
      attnrt_malloc(&dvs, sizeof vs) || attnrt_malloc(&dout, sizeof o) ||
      attnrt_malloc(&dlse, sizeof lse) ||
      attn_i8_decode_workspace_bytes_splits(B, S, 3, &ws) ||
      attnrt_malloc(&dws, ws) || attnrt_memcpy_htod(dq, q, sizeof q) ||
      attnrt_memcpy_htod(dk, k, sizeof k) ||
      attnrt_memcpy_htod(dv, v, sizeof v) || attnrt_memcpy_htod(dks, &ks, 4) ||
      attnrt_memcpy_htod(dvs, vs, sizeof vs)) {
    check(0, "gpu setup");
    return;
  }
  // float64 reference: scale 1/8, O = softmax(q k^T / 8) v.
  static double ref[B * H * D], refLse[B * H];
  for (int b = 0; b < B; ++b)
    for (int h = 0; h < H; ++h) {
      double s[S], m = -INFINITY, l = 0;
      const int8_t *kh = k + (b * H + h) * S * D, *vh = v + (b * H + h) * S * D;
      for (int j = 0; j < S; ++j) {
        double dot = 0;
        for (int d = 0; d < D; ++d)
          dot += from_bf16(q[(b * H + h) * D + d]) * kh[j * D + d] * ks;
        s[j] = dot / 8;
        m = fmax(m, s[j]);
      }
      for (int j = 0; j < S; ++j)
        l += exp(s[j] - m);
      for (int d = 0; d < D; ++d) {
        double acc = 0;
        for (int j = 0; j < S; ++j)
          acc += exp(s[j] - m) * vh[j * D + d] * vs[h];
        ref[(b * H + h) * D + d] = acc / l;
      }
      refLse[b * H + h] = m + log(l);
    }
  for (int splits = 0; splits <= 3; splits += 3) {
    attnrt_memset_d8(dout, 0xff, sizeof o);
    attnrt_memset_d8(dlse, 0xff, sizeof lse);
#define DEV(x) ((void *)(uintptr_t)(x))
    int status = splits
                     ? attn_i8_decode_run_splits(
                           DEV(dq), NULL, DEV(dk), NULL, DEV(dv), NULL,
                           DEV(dks), NULL, DEV(dvs), NULL, DEV(dout), NULL,
                           DEV(dlse), NULL, B, S, splits, DEV(dws), ws, NULL)
                     : attn_i8_decode_run(DEV(dq), NULL, DEV(dk), NULL, DEV(dv),
                                          NULL, DEV(dks), NULL, DEV(dvs), NULL,
                                          DEV(dout), NULL, DEV(dlse), NULL, B,
                                          S, DEV(dws), ws, NULL);
#undef DEV
    expect(splits ? "i8_decode_run_splits(gpu, 3 splits)"
                  : "i8_decode_run(gpu)",
           status, ATTN_SUCCESS, NULL);
    if (attnrt_synchronize() || attnrt_memcpy_dtoh(o, dout, sizeof o) ||
        attnrt_memcpy_dtoh(lse, dlse, sizeof lse)) {
      check(0, "gpu results");
      return;
    }
    struct output_errors e =
        compare_outputs(o, ref, B * H * D, lse, refLse, B * H);
    char line[256];
    snprintf(line, sizeof line,
             "i8 decode on the GPU (%d splits): rel err %.2e, lse err %.2e, "
             "%d unwritten",
             splits, e.rel, e.lse, e.unwritten);
    // Every row sees keys: an empty one would be wrong too.
    check(e.rel < 1e-2 && e.lse < 1e-3 && e.unwritten == 0 &&
              e.empty_wrong == 0,
          line);
  }
}

int main(int argc, char **argv) {
  const int mode = check_mode(argc, argv);
  if (mode < 0)
    return 2;
  if (mode == CHECK_GPU) {
    gpu_check();
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
  }
  const int valid = fake_mode ? ATTN_SUCCESS : ATTN_ERROR_NO_DRIVER;
  char line[256];

  // @fp8_paged_decode: q [3, 8, 1, 128] f16 over a paged fp8 cache
  // [20, 2, 16, 128] with per-token scales [20, 2, 16].
  const int64_t batch = 3, num_blocks = 20, max_blocks = 5;
  char *q = make(batch * 8 * 128 * 2), *o = make(batch * 8 * 128 * 2);
  char *k = make(num_blocks * 2 * 16 * 128),
       *v = make(num_blocks * 2 * 16 * 128);
  char *ks = make(num_blocks * 2 * 16 * 4), *vs = make(num_blocks * 2 * 16 * 4);
  char *table = make(batch * max_blocks * 4), *lens = make(batch * 4);
  expect("fp8_paged_decode_can_implement(3, 20, 5)",
         attn_fp8_paged_decode_can_implement(batch, num_blocks, max_blocks),
         ATTN_SUCCESS, NULL);
  // The workspace: 24 rows x 2 splits x 130 f32 (the driver's SM count
  // enters the chosen split count, not a fixed one's bytes).
  size_t ws = 24u * 2 * 130 * 4;
  if (fake_mode) {
    size_t asked = 0;
    expect("fp8_paged_decode_workspace_bytes_splits(2 splits)",
           attn_fp8_paged_decode_workspace_bytes_splits(batch, num_blocks,
                                                        max_blocks, 2, &asked),
           ATTN_SUCCESS, NULL);
    snprintf(line, sizeof line,
             "decode workspace is 24 rows x 2 splits x 130 f32 (%zu bytes)",
             asked);
    check(asked == ws, line);
  }
  char *workspace = make(ws);
  expect("fp8_paged_decode_run_splits(k_scale NULL)",
         attn_fp8_paged_decode_run_splits(q, NULL, k, NULL, v, NULL, table,
                                          NULL, lens, NULL, NULL, NULL, vs,
                                          NULL, o, NULL, batch, num_blocks,
                                          max_blocks, 2, workspace, ws, NULL),
         ATTN_ERROR_NULL_POINTER, "k_scale is NULL");
  expect("fp8_paged_decode_run_splits(v_scale + 2 bytes)",
         attn_fp8_paged_decode_run_splits(q, NULL, k, NULL, v, NULL, table,
                                          NULL, lens, NULL, ks, NULL, vs + 2,
                                          NULL, o, NULL, batch, num_blocks,
                                          max_blocks, 2, workspace, ws, NULL),
         ATTN_ERROR_MISALIGNED, "v_scale (0x");
  const int64_t scale_strides[3] = {64, 16, 1};
  expect("fp8_paged_decode_run_splits(k_scale's blocks 64 apart)",
         attn_fp8_paged_decode_run_splits(q, NULL, k, NULL, v, NULL, table,
                                          NULL, lens, NULL, ks, scale_strides,
                                          vs, NULL, o, NULL, batch, num_blocks,
                                          max_blocks, 2, workspace, ws, NULL),
         ATTN_ERROR_UNSUPPORTED_STRIDE,
         "k_scale stride 0 is 64; the kernel's layout needs 32 (row-major)");
  int before = launches();
  expect("fp8_paged_decode_run_splits(valid, 2 splits)",
         attn_fp8_paged_decode_run_splits(q, NULL, k, NULL, v, NULL, table,
                                          NULL, lens, NULL, ks, NULL, vs, NULL,
                                          o, NULL, batch, num_blocks,
                                          max_blocks, 2, workspace, ws, NULL),
         valid, NULL);
  // The split launch, then the combine over 24 rows, which reads the
  // workspace (rank 3: 9 values) and o (rank 4: 11).
  expect_launches("fp8 paged decode's combine", before, 2, 24, 1, 1, 9 + 11);

  // @i8_decode: q [2, 4, 1, 64] bf16, K/V [2, 4, 300, 64] i8, a per-tensor
  // K scale (rank 0) and per-head V scales [4].
  const int64_t b2 = 2, kv_len = 300;
  char *q2 = make(b2 * 4 * 64 * 2), *o2 = make(b2 * 4 * 64 * 2);
  char *lse = make(b2 * 4 * 4);
  char *k2 = make(b2 * 4 * kv_len * 64), *v2 = make(b2 * 4 * kv_len * 64);
  char *ks2 = make(4), *vs2 = make(4 * 4);
  expect("i8_decode_run_splits(k_scale NULL)",
         attn_i8_decode_run_splits(q2, NULL, k2, NULL, v2, NULL, NULL, NULL,
                                   vs2, NULL, o2, NULL, lse, NULL, b2, kv_len,
                                   1, NULL, 0, NULL),
         ATTN_ERROR_NULL_POINTER, "k_scale is NULL");
  before = launches();
  // 8 rows x 3 splits x 66 f32.
  ws = 8u * 3 * 66 * 4;
  char *workspace2 = make(ws);
  expect("i8_decode_run_splits(valid, 3 splits)",
         attn_i8_decode_run_splits(q2, NULL, k2, NULL, v2, NULL, ks2, NULL, vs2,
                                   NULL, o2, NULL, lse, NULL, b2, kv_len, 3,
                                   workspace2, ws, NULL),
         valid, NULL);
  // The combine: workspace (9), o (11), lse (9).
  expect_launches("i8 decode's combine", before, 2, 8, 1, 1, 9 + 11 + 9);
  printf("%d passed, %d failed\n", passed, failed);
  return failed ? 1 : 0;
}
