//===- check_common.h - What the C ABI check programs share ---------------===//
//
// The checks that drive an attn-compile library without a driver or with
// the fake one (varlen_check.c, append_check.c, quantized_check.c): one
// "PASS:"/"FAIL:" line per check and the counts, the fake driver's record
// of launches, and buffers no call may touch without a driver. Include it
// after the library's header and attnrt.h.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_TEST_COMPILE_CHECK_COMMON_H
#define ATTN_TEST_COMPILE_CHECK_COMMON_H

#include "../runtime/fake_cuda_driver.h"

#include <dlfcn.h>
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
