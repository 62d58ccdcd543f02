// Runs the README's example kernel the way the README launches it.
#include "test_util.h"
#include ATTN_MSL_KERNEL_SOURCE

int main() {
  const unsigned groups = 5, threads = 128;
  const unsigned n = groups * threads - 50;
  std::vector<float> in = test::random_floats(n);
  std::vector<float> out = test::poisoned_floats(groups);
  Params params{n, 0.25f};
  test::expect_ok(
      attn_msl::launch(ATTN_MSL_KERNEL(scaled_sum), {groups, 1, 1},
                       {threads, 1, 1},
                       {attn_msl::bind_buffer(0, in.data(), n),
                        attn_msl::bind_buffer(1, out.data(), groups),
                        attn_msl::bind_buffer(2, &params)},
                       {32 * sizeof(float)}),
      "scaled_sum");
  for (unsigned g = 0; g < groups; ++g) {
    double ref = 0;
    for (unsigned i = g * threads; i < std::min(n, (g + 1) * threads); ++i)
      ref += 0.25 * in[i];
    CHECK(std::fabs(out[g] - ref) <= 1e-5, "group %u: %g vs %g", g, out[g],
          ref);
  }

  std::vector<uint> spelled(64, 0);
  test::expect_ok(
      attn_msl::launch(ATTN_MSL_KERNEL(attribute_spellings), {1, 1, 1},
                       {64, 1, 1},
                       {attn_msl::bind_buffer(0, spelled.data(), 64)}),
      "attribute_spellings");
  for (unsigned i = 0; i < 64; ++i) {
    unsigned first = i / 32 * 32, product = 1;
    for (unsigned lane = first; lane < first + 32; ++lane)
      product *= lane % 3 == 0 ? 2 : 1;
    CHECK(spelled[i] == product + first, "thread %u: %u vs %u", i, spelled[i],
          product + first);
  }
  return test::finish("readme-example");
}
