//===- mla_check.c - The C ABI of multi-head latent attention -------------===//
//
// Links the library attn-compile makes from Inputs/mla.mlir and calls its
// functions with good and bad arguments:
//
//   mla_check no-driver   CI: no CUDA driver
//   mla_check fake        the fake driver: launches are recorded
//   mla_check gpu         a real GPU: both kernels against float64
//
// V is the first 512 columns of the one latent cache k (`v_from_k`): the C
// functions have no v argument, and the kernel's V parameter is k. One
// line per check, then "N passed, M failed".
//
//===----------------------------------------------------------------------===//

#define _POSIX_C_SOURCE 200809L

#include "mla.h"

// After the library's header, whose functions they call.
#include "attnrt.h"
#include "check_common.h"

#include <math.h>

enum { HQ = 16, D = 576, DV = 512, PAGE = 64 };
static const double kScale = 0.1352;

static double uniform(void) { return (double)rand() / RAND_MAX * 2 - 1; }

// One kernel on the GPU: `sq` queries a sequence (causal bottom-right when
// sq > 1, as @mla_mtp is), sequences of `lens` keys in 64-row pages that
// the block table scatters over a pool holding other pages of garbage; O
// and the LSE poisoned first; _run (the runtime's split count) and
// _run_splits (3) against float64.
static void gpu_case(const char *name, int sq, int batch, const int *lens) {
  int max_blocks = 0, used = 0;
  for (int b = 0; b < batch; ++b) {
    int blocks = (lens[b] + PAGE - 1) / PAGE;
    max_blocks = blocks > max_blocks ? blocks : max_blocks;
    used += blocks;
  }
  const int num_blocks = used + 3; // three pages no sequence owns
  size_t q_n = (size_t)batch * HQ * sq * D, o_n = (size_t)batch * HQ * sq * DV;
  size_t kv_n = (size_t)num_blocks * PAGE * D, lse_n = (size_t)batch * HQ * sq;
  uint16_t *q = malloc(q_n * 2), *kv = malloc(kv_n * 2), *o = malloc(o_n * 2);
  float *lse = malloc(lse_n * 4);
  int32_t *table = malloc((size_t)batch * max_blocks * 4),
          *dlens = malloc(batch * 4);
  double *ref = malloc(o_n * 8), *ref_lse = malloc(lse_n * 8);
  for (size_t i = 0; i < q_n; ++i)
    q[i] = to_bf16(uniform());
  for (size_t i = 0; i < kv_n; ++i)
    kv[i] = to_bf16(uniform());
  // Page p of sequence b is pool page (7 * (next++) + 3) % num_blocks: a
  // permutation when num_blocks is not a multiple of 7; unused table
  // entries point past the pool (never read).
  int next = 0;
  for (int b = 0; b < batch; ++b) {
    dlens[b] = lens[b];
    for (int p = 0; p < max_blocks; ++p)
      table[b * max_blocks + p] =
          p * PAGE < lens[b] ? (7 * next++ + 3) % num_blocks : num_blocks + 100;
  }
  // float64: s_j = scale <q, kv_j>, O = softmax(s) kv_j[0:512].
  double *s = malloc(sizeof(double) * (lens[0] + 1));
  for (int b = 0; b < batch; ++b) {
    s = realloc(s, sizeof(double) * (lens[b] + 1));
    for (int h = 0; h < HQ; ++h)
      for (int i = 0; i < sq; ++i) {
        size_t row = ((size_t)b * HQ + h) * sq + i;
        int last = i + lens[b] - sq; // bottom-right diagonal
        int visible =
            sq > 1 ? (last + 1 < lens[b] ? last + 1 : lens[b]) : lens[b];
        double m = -INFINITY, l = 0;
        for (int j = 0; j < visible; ++j) {
          const uint16_t *kj =
              kv +
              ((size_t)table[b * max_blocks + j / PAGE] * PAGE + j % PAGE) * D;
          double dot = 0;
          for (int d = 0; d < D; ++d)
            dot += from_bf16(q[row * D + d]) * from_bf16(kj[d]);
          s[j] = kScale * dot;
          m = fmax(m, s[j]);
        }
        for (int j = 0; j < visible; ++j)
          l += exp(s[j] - m);
        for (int d = 0; d < DV; ++d) {
          double acc = 0;
          for (int j = 0; j < visible; ++j)
            acc +=
                exp(s[j] - m) *
                from_bf16(kv[((size_t)table[b * max_blocks + j / PAGE] * PAGE +
                              j % PAGE) *
                                 D +
                             d]);
          ref[row * DV + d] = visible ? acc / l : 0;
        }
        ref_lse[row] = visible ? m + log(l) : -INFINITY;
      }
  }
  free(s);
  attnrt_deviceptr dq, dkv, dtable, dlen, dout, dlse, dws = 0;
  size_t ws = 0;
  if (attnrt_malloc(&dq, q_n * 2) || attnrt_malloc(&dkv, kv_n * 2) ||
      attnrt_malloc(&dtable, (size_t)batch * max_blocks * 4) ||
      attnrt_malloc(&dlen, batch * 4) || attnrt_malloc(&dout, o_n * 2) ||
      attnrt_malloc(&dlse, lse_n * 4) || attnrt_memcpy_htod(dq, q, q_n * 2) ||
      attnrt_memcpy_htod(dkv, kv, kv_n * 2) ||
      attnrt_memcpy_htod(dtable, table, (size_t)batch * max_blocks * 4) ||
      attnrt_memcpy_htod(dlen, dlens, batch * 4)) {
    check(0, "gpu setup");
    return;
  }
  for (int splits = 0; splits <= 3; splits += 3) {
    attnrt_memset_d8(dout, 0xff, o_n * 2);
    attnrt_memset_d8(dlse, 0xff, lse_n * 4);
    int status;
#define DEV(x) ((void *)(uintptr_t)(x))
#define ARGS(fn)                                                               \
  DEV(dq), NULL, DEV(dkv), NULL, DEV(dtable), NULL, DEV(dlen), NULL,           \
      DEV(dout), NULL, DEV(dlse), NULL, batch, num_blocks, max_blocks
    size_t want = 0;
    if (sq == 1) {
      status = splits ? attn_mla_decode_workspace_bytes_splits(
                            batch, num_blocks, max_blocks, splits, &want)
                      : attn_mla_decode_workspace_bytes(batch, num_blocks,
                                                        max_blocks, &want);
    } else {
      status = splits ? attn_mla_mtp_workspace_bytes_splits(
                            batch, num_blocks, max_blocks, splits, &want)
                      : attn_mla_mtp_workspace_bytes(batch, num_blocks,
                                                     max_blocks, &want);
    }
    if (!status && want > ws) {
      ws = want;
      status = attnrt_malloc(&dws, ws);
    }
    if (!status)
      status = sq == 1
                   ? (splits ? attn_mla_decode_run_splits(ARGS(), splits,
                                                          DEV(dws), ws, NULL)
                             : attn_mla_decode_run(ARGS(), DEV(dws), ws, NULL))
                   : (splits ? attn_mla_mtp_run_splits(ARGS(), splits, DEV(dws),
                                                       ws, NULL)
                             : attn_mla_mtp_run(ARGS(), DEV(dws), ws, NULL));
#undef ARGS
#undef DEV
    char what[128];
    snprintf(what, sizeof what, "%s on the GPU (%d splits)", name, splits);
    expect(what, status, ATTN_SUCCESS, NULL);
    if (attnrt_synchronize() || attnrt_memcpy_dtoh(o, dout, o_n * 2) ||
        attnrt_memcpy_dtoh(lse, dlse, lse_n * 4)) {
      check(0, "gpu results");
      return;
    }
    struct output_errors e = compare_outputs(o, ref, o_n, lse, ref_lse, lse_n);
    char line[256];
    snprintf(line, sizeof line,
             "%s (%d splits): rel err %.2e, lse err %.2e, %d unwritten, %d "
             "empty rows wrong",
             name, splits, e.rel, e.lse, e.unwritten, e.empty_wrong);
    check(e.rel < 1e-2 && e.lse < 1e-3 && e.unwritten == 0 &&
              e.empty_wrong == 0,
          line);
  }
  free(q), free(kv), free(o), free(lse), free(table), free(dlens), free(ref),
      free(ref_lse);
}

int main(int argc, char **argv) {
  const int mode = check_mode(argc, argv);
  if (mode < 0)
    return 2;
  if (mode == CHECK_GPU) {
    srand(42);
    const int decode_lens[] = {300, 1, 130, 64};
    gpu_case("mla_decode", 1, 4, decode_lens);
    const int mtp_lens[] = {200, 2, 1, 65};
    gpu_case("mla_mtp", 2, 4, mtp_lens);
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
  }
  const int valid = fake_mode ? ATTN_SUCCESS : ATTN_ERROR_NO_DRIVER;

  // @mla_decode: q [3, 16, 1, 576] bf16 over a latent cache [10, 1, 64,
  // 576] bf16 of 4 pages a sequence.
  const int64_t batch = 3, num_blocks = 10, max_blocks = 4;
  char *q = make(batch * HQ * D * 2), *o = make(batch * HQ * DV * 2);
  char *kv = make(num_blocks * PAGE * D * 2), *lse = make(batch * HQ * 4);
  char *table = make(batch * max_blocks * 4), *lens = make(batch * 4);
  expect("mla_decode_can_implement(3, 10, 4)",
         attn_mla_decode_can_implement(batch, num_blocks, max_blocks),
         ATTN_SUCCESS, NULL);
  expect("mla_decode_run(k NULL)",
         attn_mla_decode_run(q, NULL, NULL, NULL, table, NULL, lens, NULL, o,
                             NULL, lse, NULL, batch, num_blocks, max_blocks,
                             NULL, 0, NULL),
         ATTN_ERROR_NULL_POINTER, "k is NULL");
  // k's pages 576 x 64 elements apart but its rows 600 apart: not the
  // layout the kernel reads.
  const int64_t kv_strides[4] = {64 * 600, 64 * 600, 600, 1};
  expect("mla_decode_run(k rows 600 apart)",
         attn_mla_decode_run(q, NULL, kv, kv_strides, table, NULL, lens, NULL,
                             o, NULL, lse, NULL, batch, num_blocks, max_blocks,
                             NULL, 0, NULL),
         ATTN_ERROR_UNSUPPORTED_STRIDE, "k stride");
  int before = launches();
  expect("mla_decode_run(valid)",
         attn_mla_decode_run(q, NULL, kv, NULL, table, NULL, lens, NULL, o,
                             NULL, lse, NULL, batch, num_blocks, max_blocks,
                             NULL, 0, NULL),
         valid, NULL);
  // One split (the fake device's few SMs): the one-split kernel alone, a
  // block per (16-row Q tile, K/V head, sequence): q, k, k again as V,
  // block_table, kv_lens (rank 4, 4, 4, 2, 1: 11 + 11 + 11 + 7 + 5
  // values), o and lse (11 + 9).
  expect_launches("mla_decode (one split)", before, 1, 1, 1, 3,
                  11 * 3 + 7 + 5 + 11 + 9);
  // Three splits: 48 rows x 3 splits x (512 + 2) f32 of workspace, the
  // split launch, then the combine over the 48 rows, which reads the
  // workspace (rank 3: 9 values) and writes o and lse (11 + 9).
  size_t ws = 48u * 3 * 514 * 4;
  if (fake_mode) { // the query needs the driver
    size_t asked = 0;
    expect("mla_decode_workspace_bytes_splits(3 splits)",
           attn_mla_decode_workspace_bytes_splits(batch, num_blocks, max_blocks,
                                                  3, &asked),
           ATTN_SUCCESS, NULL);
    char line[128];
    snprintf(line, sizeof line,
             "the workspace is 48 rows x 3 splits x 514 f32 (%zu bytes)",
             asked);
    check(asked == ws, line);
  }
  char *workspace = make(ws);
  before = launches();
  expect("mla_decode_run_splits(valid, 3 splits)",
         attn_mla_decode_run_splits(q, NULL, kv, NULL, table, NULL, lens, NULL,
                                    o, NULL, lse, NULL, batch, num_blocks,
                                    max_blocks, 3, workspace, ws, NULL),
         valid, NULL);
  expect_launches("mla_decode's combine", before, 2, 48, 1, 1, 9 + 11 + 9);
  printf("%d passed, %d failed\n", passed, failed);
  return failed ? 1 : 0;
}
