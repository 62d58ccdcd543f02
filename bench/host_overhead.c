/* Host time of one attn call (bench/kernels.mlir's library): what a
 * caller's thread spends in the C ABI per call (checks, split policy,
 * tensor maps, the launches), apart from the GPU. It queues batches of
 * calls on a small problem, timing only the calls (the GPU runs behind;
 * each batch is synchronized after its clock stops), and times
 * attnrt_encode_attention_tensor_map alone.
 *
 *   cc -O2 -std=c11 bench/host_overhead.c -I LIB -I runtime/include \
 *      LIB/libkernels.a -ldl -lpthread -o host_overhead
 *   ./host_overhead
 */
#define _POSIX_C_SOURCE 199309L
#include "attnrt.h"
#include "kernels.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now_us(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e6 + t.tv_nsec * 1e-3;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

#define CHECK(call)                                                          \
  do {                                                                       \
    int status_ = (call);                                                    \
    if (status_ != 0) {                                                      \
      fprintf(stderr, "%s:%d: %s -> %d (%s)\n", __FILE__, __LINE__, #call,   \
              status_, attn_last_error());                                   \
      exit(1);                                                               \
    }                                                                        \
  } while (0)

enum { kBatches = 21, kCalls = 200 };

/* Median over batches of the host microseconds per call of `call`. */
#define TIME_CALLS(label, call)                                              \
  do {                                                                       \
    double per_call[kBatches];                                               \
    for (int w = 0; w < 50; ++w)                                             \
      CHECK(call);                                                           \
    CHECK(attnrt_synchronize());                                             \
    for (int r = 0; r < kBatches; ++r) {                                     \
      double t0 = now_us();                                                  \
      for (int i = 0; i < kCalls; ++i)                                       \
        CHECK(call);                                                         \
      per_call[r] = (now_us() - t0) / kCalls;                                \
      CHECK(attnrt_synchronize());                                           \
    }                                                                        \
    qsort(per_call, kBatches, sizeof per_call[0], cmp_double);               \
    printf("| %s | %.2f us | %.2f-%.2f |\n", label, per_call[kBatches / 2],  \
           per_call[0], per_call[kBatches - 1]);                             \
  } while (0)

int main(void) {
  CHECK(attnrt_init());
  /* Prefill B1 H16 S128 D128 (tensor maps on sm_90a), decode B1 Hq32
     Hkv8 Sk1024 (split and combine launches). Inputs are 0x3c3c (1.06
     in f16), not zeros; only the host side is timed. */
  const size_t bytes = (size_t)32 << 20;
  attnrt_deviceptr q, k, v, o, ws;
  CHECK(attnrt_malloc(&q, bytes));
  CHECK(attnrt_malloc(&k, bytes));
  CHECK(attnrt_malloc(&v, bytes));
  CHECK(attnrt_malloc(&o, bytes));
  CHECK(attnrt_malloc(&ws, bytes));
  CHECK(attnrt_memset_d8(q, 0x3c, bytes));
  CHECK(attnrt_memset_d8(k, 0x3c, bytes));
  CHECK(attnrt_memset_d8(v, 0x3c, bytes));
  void *Q = (void *)q, *K = (void *)k, *V = (void *)v, *O = (void *)o,
       *W = (void *)ws;
  printf("| call | host time a call (median of %d x %d) | range |\n",
         kBatches, kCalls);
  printf("|---|---|---|\n");
  TIME_CALLS("prefill B1 H16 S128 D128",
             attn_prefill_h16_d128_run(Q, NULL, K, NULL, V, NULL, O, NULL, 1,
                                       128, 128, NULL, 0, NULL));
  TIME_CALLS("decode B1 Hq32 Hkv8 Sk1024",
             attn_decode_h32_kv8_d128_run(Q, NULL, K, NULL, V, NULL, O, NULL,
                                          1, 1024, W, bytes, NULL));
  TIME_CALLS("decode MQA Hq64 B1 Sk1024",
             attn_decode_h64_kv1_d128_run(Q, NULL, K, NULL, V, NULL, O, NULL,
                                          1, 1024, W, bytes, NULL));
  const long long sizes[4] = {1, 16, 128, 128},
                  strides[4] = {16 * 128 * 128, 128 * 128, 128, 1};
  attnrt_tensor_map map;
  TIME_CALLS("attnrt_encode_attention_tensor_map (K/V view)",
             attnrt_encode_attention_tensor_map(&map, k, 2, sizes, strides, 0,
                                                0, 0));
  TIME_CALLS("attnrt_encode_attention_tensor_map (Q view)",
             attnrt_encode_attention_tensor_map(&map, q, 2, sizes, strides, 1,
                                                128, 1));
  return 0;
}
