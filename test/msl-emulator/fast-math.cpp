// Checks fast-math.metal's tanh forms in the math mode it was compiled in.
#include "test_util.h"
#include ATTN_MSL_KERNEL_SOURCE

int main() {
  std::vector<float> in = {50.0f, 0.5f, -FLT_MAX / 2.0f};
  std::vector<float> out = test::poisoned_floats(8);
  test::expect_ok(attn_msl::launch(ATTN_MSL_KERNEL(tanh_variants), {1, 1, 1},
                                   {32, 1, 1},
                                   {attn_msl::bind_buffer(0, in.data(), 3),
                                    attn_msl::bind_buffer(1, out.data(), 8)}),
                  "tanh_variants");
#ifdef ATTN_MSL_FAST_MATH
  CHECK(std::isnan(out[0]), "fast math: tanh(50) = %g, not NaN", out[0]);
#else
  CHECK(out[0] == 1.0f, "IEEE: tanh(50) = %g, not 1", out[0]);
#endif
  CHECK(std::isnan(out[1]), "fast::tanh(50) = %g, not NaN", out[1]);
  CHECK(out[2] == 1.0f, "precise::tanh(50) = %g, not 1", out[2]);
  CHECK(std::fabs(out[3] - std::tanh(0.5)) <= 1e-6, "fast::tanh(0.5) = %.9g",
        out[3]);
  CHECK(std::fabs(out[4] - std::tanh(0.5)) <= 1e-7, "precise::tanh(0.5) = %.9g",
        out[4]);
  CHECK(out[5] == 1.0f, "precise::tanh(half 50) = %g", out[5]);
  CHECK(out[6] == -1.0f, "fast::tanh(-50) = %g", out[6]);
  CHECK(out[7] == 0.0f, "an empty state's weight = %g, not 0", out[7]);
  return test::finish("fast-math");
}
