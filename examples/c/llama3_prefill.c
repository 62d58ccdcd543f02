//===- llama3_prefill.c - Use an attn-compile library from C --------------===//
//
// Links libllama3_8b_prefill.a (made by attn-compile from
// examples/llama3_8b_prefill.mlir), runs the kernel on random f16 inputs on
// the GPU and checks O and LSE against a float64 reference on the CPU:
//
//   attn-compile examples/llama3_8b_prefill.mlir -o out/lib
//   cc -std=c11 -O2 examples/c/llama3_prefill.c -Iout/lib \
//      out/lib/libllama3_8b_prefill.a -ldl -lpthread -lm -o llama3_prefill
//   ./llama3_prefill [batch q_len kv_len]
//
// Exit status 0 when the output matches (relative error <= 1e-2).
//
//===----------------------------------------------------------------------===//

#define _POSIX_C_SOURCE 200809L

#include "attnrt.h"
#include "llama3_8b_prefill.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { HQ = 32, HKV = 8, D = 128 };

// IEEE half <-> float, round to nearest even (normal and subnormal).
static float from_half(uint16_t h) {
  int sign = h >> 15, exponent = (h >> 10) & 31, mantissa = h & 1023;
  float value = exponent == 0    ? ldexpf((float)mantissa, -24)
                : exponent == 31 ? (mantissa ? NAN : INFINITY)
                                 : ldexpf((float)(mantissa | 1024), exponent - 25);
  return sign ? -value : value;
}

static uint16_t to_half(float f) {
  uint16_t sign = signbit(f) ? 0x8000 : 0;
  f = fabsf(f);
  if (f == 0.0f)
    return sign;
  if (isnan(f))
    return 0x7E00;
  if (f >= 65520.0f)
    return sign | 0x7C00;
  int exponent;
  frexpf(f, &exponent); // f = m * 2^exponent, m in [0.5, 1)
  int unbiased = exponent - 1;
  if (unbiased < -14)
    return sign | (uint16_t)nearbyintf(ldexpf(f, 24));
  uint32_t bits = (uint32_t)nearbyintf(ldexpf(f, 10 - unbiased)); // 1024..2048
  if (bits == 2048) {
    bits = 1024;
    ++unbiased;
  }
  return sign | (uint16_t)((unbiased + 15) << 10) | (uint16_t)(bits - 1024);
}

static int fail_with(const char *what, int status) {
  fprintf(stderr, "%s: %s: %s\n", what, attn_status_string(status),
          attn_last_error());
  return 1;
}

int main(int argc, char **argv) {
  int64_t batch = 1, q_len = 200, kv_len = 256;
  if (argc == 4) {
    batch = atoll(argv[1]);
    q_len = atoll(argv[2]);
    kv_len = atoll(argv[3]);
  }
  // Sizes first: no GPU needed to ask.
  int status = attn_llama3_8b_prefill_can_implement(batch, q_len, kv_len);
  if (status != ATTN_SUCCESS)
    return fail_with("can_implement", status);

  size_t nq = (size_t)batch * HQ * q_len * D, nkv = (size_t)batch * HKV * kv_len * D,
         nlse = (size_t)batch * HQ * q_len;
  uint16_t *q = malloc(nq * 2), *k = malloc(nkv * 2), *v = malloc(nkv * 2),
           *o = malloc(nq * 2);
  float *lse = malloc(nlse * 4);
  srand(12345);
  for (size_t i = 0; i < nq; ++i)
    q[i] = to_half((float)(2.0 * rand() / RAND_MAX - 1.0));
  for (size_t i = 0; i < nkv; ++i) {
    k[i] = to_half((float)(2.0 * rand() / RAND_MAX - 1.0));
    v[i] = to_half((float)(2.0 * rand() / RAND_MAX - 1.0));
  }

  // The workspace these sizes need: none for the prefill code, some for
  // the split-K decode code that runs q_len 1 to 16 (sized for this GPU).
  size_t workspace_bytes = 0;
  status = attn_llama3_8b_prefill_workspace_bytes(batch, q_len, kv_len,
                                                  &workspace_bytes);
  if (status != ATTN_SUCCESS)
    return fail_with("workspace_bytes", status);

  attnrt_deviceptr dq, dk, dv, dO, dlse, dws = 0;
  attnrt_stream *stream;
  if ((workspace_bytes && attnrt_malloc(&dws, workspace_bytes)) ||
      attnrt_malloc(&dq, nq * 2) || attnrt_malloc(&dk, nkv * 2) ||
      attnrt_malloc(&dv, nkv * 2) || attnrt_malloc(&dO, nq * 2) ||
      attnrt_malloc(&dlse, nlse * 4) || attnrt_stream_create(&stream) ||
      attnrt_memcpy_htod(dq, q, nq * 2) || attnrt_memcpy_htod(dk, k, nkv * 2) ||
      attnrt_memcpy_htod(dv, v, nkv * 2) ||
      // NaN everywhere, so an element the kernel misses shows.
      attnrt_memset_d8(dO, 0xFF, nq * 2) || attnrt_memset_d8(dlse, 0xFF, nlse * 4)) {
    fprintf(stderr, "GPU setup: %s\n", attnrt_last_error());
    return 1;
  }

  // A bad call first: it returns a code and a message, and writes nothing.
  status = attn_llama3_8b_prefill_run(
      (void *)(uintptr_t)dq, NULL, NULL, NULL, (void *)(uintptr_t)dv, NULL,
      (void *)(uintptr_t)dO, NULL, (void *)(uintptr_t)dlse, NULL, batch, q_len,
      kv_len, (void *)(uintptr_t)dws, workspace_bytes, stream);
  printf("k = NULL: %s (%s)\n", attn_status_string(status), attn_last_error());
  if (status != ATTN_ERROR_NULL_POINTER)
    return 1;

  status = attn_llama3_8b_prefill_run(
      (void *)(uintptr_t)dq, NULL, (void *)(uintptr_t)dk, NULL,
      (void *)(uintptr_t)dv, NULL, (void *)(uintptr_t)dO, NULL,
      (void *)(uintptr_t)dlse, NULL, batch, q_len, kv_len,
      (void *)(uintptr_t)dws, workspace_bytes, stream);
  if (status != ATTN_SUCCESS)
    return fail_with("run", status);
  if (attnrt_stream_synchronize(stream) ||
      attnrt_memcpy_dtoh(o, dO, nq * 2) || attnrt_memcpy_dtoh(lse, dlse, nlse * 4)) {
    fprintf(stderr, "after the run: %s\n", attnrt_last_error());
    return 1;
  }

  // float64 reference: causal, bottom-right aligned (query i sees keys
  // j <= i + kv_len - q_len), scale 1/sqrt(D), 4 query heads per K/V head.
  double num = 0, den = 0, lse_err = 0, scale = 1.0 / sqrt((double)D);
  size_t unwritten = 0;
  double *scores = malloc(kv_len * sizeof(double));
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t h = 0; h < HQ; ++h)
      for (int64_t i = 0; i < q_len; ++i) {
        const uint16_t *qi = q + ((b * HQ + h) * q_len + i) * D;
        int64_t kvh = h / (HQ / HKV), last = i + kv_len - q_len;
        double max = -INFINITY, sum = 0;
        for (int64_t j = 0; j <= last && j < kv_len; ++j) {
          const uint16_t *kj = k + ((b * HKV + kvh) * kv_len + j) * D;
          double dot = 0;
          for (int d = 0; d < D; ++d)
            dot += (double)from_half(qi[d]) * from_half(kj[d]);
          scores[j] = dot * scale;
          max = fmax(max, scores[j]);
        }
        for (int64_t j = 0; j <= last && j < kv_len; ++j)
          sum += exp(scores[j] - max);
        const uint16_t *oi = o + ((b * HQ + h) * q_len + i) * D;
        for (int d = 0; d < D; ++d) {
          double ref = 0;
          for (int64_t j = 0; j <= last && j < kv_len; ++j)
            ref += exp(scores[j] - max) / sum *
                   from_half(v[((b * HKV + kvh) * kv_len + j) * D + d]);
          double got = from_half(oi[d]);
          if (isnan(got)) {
            ++unwritten;
            continue;
          }
          num += (got - ref) * (got - ref);
          den += ref * ref;
        }
        double ref_lse = last < 0 ? -INFINITY : max + log(sum);
        float got_lse = lse[(b * HQ + h) * q_len + i];
        if (isnan(got_lse))
          ++unwritten;
        else if (isinf(ref_lse))
          lse_err = fmax(lse_err, isinf(got_lse) && got_lse < 0 ? 0 : INFINITY);
        else
          lse_err = fmax(lse_err, fabs(got_lse - ref_lse));
      }
  double rel = sqrt(num) / (den > 0 ? sqrt(den) : 1);
  int pass = rel <= 1e-2 && lse_err <= 1e-3 && unwritten == 0;
  printf("llama3_8b_prefill B=%lld Sq=%lld Sk=%lld: rel_err=%.2e lse_err=%.2e "
         "unwritten=%zu %s\n",
         (long long)batch, (long long)q_len, (long long)kv_len, rel, lse_err,
         unwritten, pass ? "PASS" : "FAIL");
  return pass ? 0 : 1;
}
