// Online softmax on the emulator against a two-pass softmax in double.
#include "test_util.h"
#include ATTN_MSL_KERNEL_SOURCE

int main() {
  const unsigned rows = 11, cols = 200, simds = 4; // ragged rows and columns
  const float scale = 0.125f;
  std::vector<float> scores = test::random_floats(rows * cols, -8.0f, 8.0f);
  // Row 3 is causally masked past column 70; row 5 is fully masked.
  for (unsigned c = 71; c < cols; ++c)
    scores[3 * cols + c] = -INFINITY;
  for (unsigned c = 0; c < cols; ++c)
    scores[5 * cols + c] = -INFINITY;
  std::vector<float> probs = test::poisoned_floats(rows * cols);
  std::vector<float> lse = test::poisoned_floats(rows);
  SoftmaxParams params{rows, cols, scale * float(M_LOG2E)};
  test::expect_ok(
      attn_msl::launch(ATTN_MSL_KERNEL(online_softmax),
                       {(rows + simds - 1) / simds, 1, 1}, {32 * simds, 1, 1},
                       {attn_msl::bind_buffer(0, scores.data(), scores.size()),
                        attn_msl::bind_buffer(1, probs.data(), probs.size()),
                        attn_msl::bind_buffer(2, lse.data(), lse.size()),
                        attn_msl::bind_buffer(3, &params)}),
      "online_softmax");

  std::vector<double> ref_probs(rows * cols, 0.0);
  for (unsigned r = 0; r < rows; ++r) {
    double m = -INFINITY;
    for (unsigned c = 0; c < cols; ++c)
      m = std::max(m, double(scores[r * cols + c]) * scale);
    if (m == -INFINITY) {
      CHECK(lse[r] == -INFINITY, "fully masked row %u: lse %g", r, lse[r]);
      for (unsigned c = 0; c < cols; ++c)
        CHECK(probs[r * cols + c] == 0.0f, "fully masked row %u col %u: %g", r,
              c, probs[r * cols + c]);
      continue;
    }
    double l = 0;
    for (unsigned c = 0; c < cols; ++c)
      l += std::exp(double(scores[r * cols + c]) * scale - m);
    double ref_lse = m + std::log(l);
    CHECK(std::fabs(lse[r] - ref_lse) <=
              1e-5 * std::max(1.0, std::fabs(ref_lse)),
          "row %u lse %.8g vs %.8g", r, lse[r], ref_lse);
    for (unsigned c = 0; c < cols; ++c)
      ref_probs[r * cols + c] =
          std::exp(double(scores[r * cols + c]) * scale - m) / l;
  }
  double err = test::relative_error(probs, ref_probs);
  CHECK(err <= 1e-5, "softmax relative error %g", err);
  for (unsigned c = 71; c < cols; ++c)
    CHECK(probs[3 * cols + c] == 0.0f, "masked entry row 3 col %u", c);
  return test::finish("online-softmax");
}
