//===- check_common.h - What the C ABI check programs share ---------------===//
//
// The checks that drive an attn-compile library without a driver or with
// the fake one (varlen_check.c, append_check.c, quantized_check.c,
// mla_check.c): one
// "PASS:"/"FAIL:" line per check and the counts, the fake driver's record
// of launches, and buffers no call may touch without a driver. Include it
// after the library's header and attnrt.h.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_TEST_COMPILE_CHECK_COMMON_H
#define ATTN_TEST_COMPILE_CHECK_COMMON_H

#include "../runtime/fake_cuda_driver.h"

#include <dlfcn.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int fake_mode, passed, failed;

static inline void check(int ok, const char *line) {
  ok ? ++passed : ++failed;
  printf("%s: %s\n", ok ? "PASS" : "FAIL", line);
}

// A call's status is `want` and its message (attn_last_error) holds
// `needle` (NULL: any).
static inline void expect(const char *what, int got, int want,
                          const char *needle) {
  char line[1024];
  const char *message = attn_last_error();
  snprintf(line, sizeof line, "%s -> %s (%s)", what, attn_status_string(got),
           message);
  check(got == want && (!needle || strstr(message, needle)), line);
}

static inline const struct fake_cuda_state *fake(void) {
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

static inline int launches(void) { return fake_mode ? fake()->launches : 0; }

// With the fake driver: `count` launches since `before`, the last on grid
// (gx, gy, gz) with `params` parameters (-1: any).
static inline void expect_launches(const char *what, int before, int count,
                                   unsigned gx, unsigned gy, unsigned gz,
                                   int params) {
  if (!fake_mode)
    return;
  const struct fake_cuda_state *s = fake();
  char line[512];
  snprintf(line, sizeof line,
           "%s: %d launch(es), the last on grid (%u, %u, %u) (%d "
           "parameters)",
           what, s->launches - before, s->last_grid[0], s->last_grid[1],
           s->last_grid[2], s->last_param_count);
  check(s->launches - before == count && s->last_grid[0] == gx &&
            s->last_grid[1] == gy && s->last_grid[2] == gz &&
            (params < 0 || s->last_param_count == params),
        line);
}

// The mode a check program runs in, from its one argument: "no-driver"
// (CHECK_NO_DRIVER), "fake" (CHECK_FAKE: sets fake_mode) or "gpu"
// (CHECK_GPU); otherwise it prints the usage and returns -1.
enum { CHECK_NO_DRIVER, CHECK_FAKE, CHECK_GPU };
static inline int check_mode(int argc, char **argv) {
  static const char *const names[] = {"no-driver", "fake", "gpu"};
  for (int mode = 0; argc == 2 && mode < 3; ++mode)
    if (!strcmp(argv[1], names[mode])) {
      fake_mode = mode == CHECK_FAKE;
      return mode;
    }
  fprintf(stderr, "usage: %s no-driver|fake|gpu\n", argv[0]);
  return -1;
}

// bf16 as its bits (round to nearest even) and back, for the GPU checks'
// inputs and outputs.
static inline uint16_t to_bf16(double x) {
  float f = (float)x;
  uint32_t u;
  memcpy(&u, &f, 4);
  return (uint16_t)((u + 0x7fffu + ((u >> 16) & 1)) >> 16);
}
static inline double from_bf16(uint16_t h) {
  uint32_t u = (uint32_t)h << 16;
  float x;
  memcpy(&x, &u, 4);
  return x;
}

// A GPU check's bf16 O (`n` elements) and f32 LSE (`rows`) against float64,
// both poisoned (NaN) before the call: O's relative error (Frobenius),
// the largest LSE error where the reference is finite, the elements left
// NaN, and the rows the reference leaves empty (LSE -inf) whose LSE is
// not -inf.
struct output_errors {
  double rel, lse;
  int unwritten, empty_wrong;
};
static inline struct output_errors
compare_outputs(const uint16_t *o, const double *ref, size_t n,
                const float *lse, const double *ref_lse, size_t rows) {
  struct output_errors e = {0, 0, 0, 0};
  double num = 0, den = 0;
  for (size_t i = 0; i < n; ++i) {
    double x = from_bf16(o[i]);
    if (isnan(x)) {
      ++e.unwritten;
      continue;
    }
    num += (x - ref[i]) * (x - ref[i]);
    den += ref[i] * ref[i];
  }
  e.rel = sqrt(num / den);
  for (size_t i = 0; i < rows; ++i) {
    if (isnan(lse[i]))
      ++e.unwritten;
    else if (isinf(ref_lse[i]))
      e.empty_wrong += !(isinf(lse[i]) && lse[i] < 0);
    else
      e.lse = fmax(e.lse, fabs(lse[i] - ref_lse[i]));
  }
  return e;
}

// Device memory with the fake driver, else host memory no call may touch.
static inline char *make(size_t bytes) {
  if (fake_mode) {
    attnrt_deviceptr p = 0;
    if (attnrt_malloc(&p, bytes) != ATTNRT_SUCCESS) {
      printf("FAIL: device allocation: %s\n", attnrt_last_error());
      exit(1);
    }
    return (char *)(uintptr_t)p;
  }
  return aligned_alloc(256, (bytes + 255) / 256 * 256);
}

#endif // ATTN_TEST_COMPILE_CHECK_COMMON_H
