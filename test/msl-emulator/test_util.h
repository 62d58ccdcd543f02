//===- test_util.h - Shared checks for the MSL emulator tests ---*- C++ -*-===//
//
// Included by each host program before the kernel source; after the kernel
// source the MSL keyword macros (device, thread, kernel, ...) are defined,
// so host code there avoids those names.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_TEST_MSL_EMULATOR_TEST_UTIL_H
#define ATTN_TEST_MSL_EMULATOR_TEST_UTIL_H

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "metal_emulator.h"

namespace test {

inline int g_failures = 0;

#define CHECK(cond, ...)                                                       \
  do {                                                                         \
    if (!(cond)) {                                                             \
      ++::test::g_failures;                                                    \
      std::fprintf(stderr, "%s:%d: check failed: %s: ", __FILE__, __LINE__,    \
                   #cond);                                                     \
      std::fprintf(stderr, __VA_ARGS__);                                       \
      std::fprintf(stderr, "\n");                                              \
    }                                                                          \
  } while (0)

// Fresh inputs every run; the seed is printed so a failure can be replayed
// with ATTN_MSL_TEST_SEED.
inline std::mt19937 &rng() {
  static std::mt19937 generator = [] {
    unsigned seed = std::random_device{}();
    if (const char *fixed = std::getenv("ATTN_MSL_TEST_SEED"))
      seed = unsigned(std::strtoul(fixed, nullptr, 10));
    std::printf("seed %u\n", seed);
    return std::mt19937(seed);
  }();
  return generator;
}

inline std::vector<float> random_floats(size_t n, float lo = -1.0f,
                                        float hi = 1.0f) {
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> out(n);
  for (float &v : out)
    v = dist(rng());
  return out;
}

// Outputs start as NaN so that an element the kernel never wrote fails.
inline std::vector<float> poisoned_floats(size_t n) {
  return std::vector<float>(n, NAN);
}

// ||out - ref|| / ||ref||; NaN anywhere makes it NaN (and fail a <= check).
template <class A, class B>
double relative_error(const std::vector<A> &out, const std::vector<B> &ref) {
  double diff = 0, norm = 0;
  for (size_t i = 0; i < ref.size(); ++i) {
    double d = double(out[i]) - double(ref[i]);
    diff += d * d;
    norm += double(ref[i]) * double(ref[i]);
  }
  return std::sqrt(diff) / std::sqrt(norm);
}

inline void expect_ok(const attn_msl::LaunchResult &result, const char *what) {
  CHECK(result.ok, "%s: launch failed: %s", what, result.error.c_str());
}

// A negative test: the launch must fail and its message must contain every
// given fragment.
inline void expect_error(const attn_msl::LaunchResult &result, const char *what,
                         std::initializer_list<const char *> fragments) {
  CHECK(!result.ok, "%s: launch succeeded but should have failed", what);
  for (const char *fragment : fragments)
    CHECK(result.error.find(fragment) != std::string::npos,
          "%s: error lacks \"%s\": %s", what, fragment, result.error.c_str());
  if (!result.ok)
    std::printf("%s: reported as expected: %s\n", what, result.error.c_str());
}

inline attn_msl::LaunchOptions quiet() {
  attn_msl::LaunchOptions options;
  options.print_errors = false;
  return options;
}

inline int finish(const char *name) {
  if (g_failures) {
    std::printf("FAIL %s: %d checks failed\n", name, g_failures);
    return 1;
  }
  std::printf("PASS %s\n", name);
  return 0;
}

} // namespace test

#endif // ATTN_TEST_MSL_EMULATOR_TEST_UTIL_H
