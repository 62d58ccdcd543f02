// SIMD-group functions against a per-simdgroup reference on the host.
#include "test_util.h"
#include ATTN_MSL_KERNEL_SOURCE

namespace {

constexpr unsigned kOut = 12;

void test_scalar_functions() {
  const unsigned groups = 3, size = 64, n = groups * size;
  std::vector<float> in = test::random_floats(n);
  std::vector<float> out = test::poisoned_floats(n * kOut);
  test::expect_ok(
      attn_msl::launch(ATTN_MSL_KERNEL(simd_functions), {groups, 1, 1},
                       {size, 1, 1},
                       {attn_msl::bind_buffer(0, in.data(), n),
                        attn_msl::bind_buffer(1, out.data(), out.size())}),
      "simd_functions");
  for (unsigned base = 0; base < n; base += 32) {
    const float *x = &in[base];
    double sum = 0;
    float mx = -INFINITY, mn = INFINITY;
    bool any = false;
    for (unsigned l = 0; l < 32; ++l) {
      sum += x[l];
      mx = std::max(mx, x[l]);
      mn = std::min(mn, x[l]);
      any |= x[l] > 0.9f;
    }
    double prefix = 0;
    for (unsigned l = 0; l < 32; ++l) {
      const float *o = &out[(base + l) * kOut];
      CHECK(std::fabs(o[0] - sum) < 1e-5, "simd_sum lane %u: %g vs %g", l, o[0],
            sum);
      CHECK(o[1] == mx, "simd_max lane %u", l);
      CHECK(o[2] == mn, "simd_min lane %u", l);
      CHECK(o[3] == x[(l * 7 + 3) % 32], "simd_shuffle lane %u", l);
      CHECK(o[4] == x[l ^ 5], "simd_shuffle_xor lane %u", l);
      CHECK(o[5] == (l + 3 < 32 ? x[l + 3] : x[l]), "simd_shuffle_down lane %u",
            l);
      CHECK(o[6] == (l >= 2 ? x[l - 2] : x[l]), "simd_shuffle_up lane %u", l);
      CHECK(o[7] == x[17], "simd_broadcast lane %u", l);
      CHECK(std::fabs(o[8] - prefix) < 1e-5, "exclusive prefix lane %u", l);
      prefix += x[l];
      CHECK(std::fabs(o[9] - prefix) < 1e-5, "inclusive prefix lane %u", l);
      CHECK(o[10] == mx, "butterfly max lane %u", l);
      CHECK(o[11] == 496 + (any ? 1000 : 0) + 10000,
            "int sum/any/all lane %u: %g", l, o[11]);
    }
  }
}

void test_vectors_and_partial_simdgroup() {
  const unsigned size = 48, n = 2 * size;
  std::vector<float> in = test::random_floats(n);
  std::vector<float4> sums(n, float4{NAN, NAN, NAN, NAN});
  std::vector<half> maxima(n, half(NAN));
  test::expect_ok(
      attn_msl::launch(ATTN_MSL_KERNEL(simd_vectors), {2, 1, 1}, {size, 1, 1},
                       {attn_msl::bind_buffer(0, in.data(), n),
                        attn_msl::bind_buffer(1, sums.data(), n),
                        attn_msl::bind_buffer(2, maxima.data(), n)}),
      "simd_vectors");
  for (unsigned g = 0; g < 2; ++g)
    for (unsigned first : {0u, 32u}) {
      unsigned width = first == 0 ? 32 : 16; // 48 = 32 + 16
      double s[4] = {0, 0, 0, 0};
      float mx = -INFINITY;
      for (unsigned l = 0; l < width; ++l) {
        float v = in[g * size + first + l];
        s[0] += v, s[1] += 2 * v, s[2] += 1, s[3] += v * v;
        mx = std::max(mx, float(half(v)));
      }
      for (unsigned l = 0; l < width; ++l) {
        unsigned i = g * size + first + l;
        for (int c = 0; c < 4; ++c)
          CHECK(std::fabs(sums[i][c] - s[c]) < 1e-4,
                "float4 simd_sum thread %u.%d", i, c);
        CHECK(float(maxima[i]) == mx, "half simd_max thread %u", i);
      }
    }
}

} // namespace

int main() {
  test_scalar_functions();
  test_vectors_and_partial_simdgroup();
  return test::finish("simd-functions");
}
