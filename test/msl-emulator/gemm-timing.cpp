// Timing sanity: a 64x64x64 GEMM on 4 simdgroups must finish well under a
// second; a 256x256x256 one is timed for information. Both are checked.
#include "test_util.h"
#include ATTN_MSL_KERNEL_SOURCE

namespace {

double run_gemm(unsigned m, unsigned n, unsigned k) {
  std::vector<float> af = test::random_floats(m * k),
                     bf = test::random_floats(k * n);
  std::vector<half> a(af.begin(), af.end()), b(bf.begin(), bf.end());
  std::vector<float> c = test::poisoned_floats(m * n);
  Shape shape{m, n, k};
  auto start = std::chrono::steady_clock::now();
  test::expect_ok(
      attn_msl::launch(ATTN_MSL_KERNEL(gemm_64x64), {n / 64, m / 64, 1},
                       {128, 1, 1},
                       {attn_msl::bind_buffer(0, a.data(), a.size()),
                        attn_msl::bind_buffer(1, b.data(), b.size()),
                        attn_msl::bind_buffer(2, c.data(), c.size()),
                        attn_msl::bind_buffer(3, &shape)},
                       {64 * 16 * sizeof(half), 16 * 64 * sizeof(half)}),
      "gemm_64x64");
  double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  std::vector<double> ref(m * n, 0.0);
  for (unsigned i = 0; i < m; ++i)
    for (unsigned p = 0; p < k; ++p)
      for (unsigned j = 0; j < n; ++j)
        ref[i * n + j] += double(a[i * k + p]) * double(b[p * n + j]);
  double err = test::relative_error(c, ref);
  CHECK(err <= 1e-6, "%ux%ux%u GEMM relative error %g", m, n, k, err);
  std::printf("%ux%ux%u GEMM: %.3f s, %u simdgroup MMAs\n", m, n, k, seconds,
              (m / 8) * (n / 8) * (k / 8));
  return seconds;
}

} // namespace

int main() {
  double seconds = run_gemm(64, 64, 64);
  CHECK(seconds < 0.5, "64x64x64 GEMM took %.3f s", seconds);
  run_gemm(256, 256, 256);
  return test::finish("gemm-timing");
}
