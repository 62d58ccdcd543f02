// simdgroup_matrix operations against host references computed in double.
#include "test_util.h"
#include ATTN_MSL_KERNEL_SOURCE

namespace {

// The documented lane layout, written out independently of the emulator.
void lane_coords(unsigned lane, unsigned e, unsigned &row, unsigned &col) {
  unsigned q = lane / 4;
  row = (q & 4) + (lane / 2) % 4;
  col = (q & 2) * 2 + (lane % 2) * 2 + e;
}

void test_layout() {
  std::vector<float> stored = test::poisoned_floats(416);
  std::vector<float> source = test::random_floats(12 * 12);
  std::vector<float> loaded = test::poisoned_floats(128);
  test::expect_ok(attn_msl::launch(
                      ATTN_MSL_KERNEL(layout), {1, 1, 1}, {32, 1, 1},
                      {attn_msl::bind_buffer(0, stored.data(), stored.size()),
                       attn_msl::bind_buffer(1, source.data(), source.size()),
                       attn_msl::bind_buffer(2, loaded.data(), loaded.size())}),
                  "layout");
  // Every lane covers a distinct element: the stores hit all 64 places.
  for (unsigned r = 0; r < 8; ++r)
    for (unsigned c = 0; c < 8; ++c) {
      CHECK(stored[r * 8 + c] == r * 8 + c, "store (%u,%u) = %g", r, c,
            stored[r * 8 + c]);
      CHECK(stored[64 + c * 8 + r] == r * 8 + c, "transposed store (%u,%u)", r,
            c);
      CHECK(stored[288 + r * 8 + c] == (r == c ? 3.0f : 0.0f),
            "diagonal (%u,%u)", r, c);
      CHECK(stored[352 + r * 8 + c] == -2.0f, "filled (%u,%u)", r, c);
    }
  for (unsigned r = 0; r < 10; ++r)
    for (unsigned c = 0; c < 16; ++c) {
      float v = stored[128 + r * 16 + c];
      if (r >= 2 && c >= 8)
        CHECK(v == (r - 2) * 8 + (c - 8), "origin store (%u,%u) = %g", r, c, v);
      else
        CHECK(std::isnan(v), "origin store wrote outside its block at (%u,%u)",
              r, c);
    }
  for (unsigned lane = 0; lane < 32; ++lane)
    for (unsigned e = 0; e < 2; ++e) {
      unsigned r, c;
      lane_coords(lane, e, r, c);
      CHECK(loaded[lane * 2 + e] == source[(1 + r) * 12 + 3 + c],
            "load lane %u.%u", lane, e);
      CHECK(loaded[64 + lane * 2 + e] == source[(1 + c) * 12 + 3 + r],
            "transposed load lane %u.%u", lane, e);
    }
}

template <class In>
std::vector<double> reference_gemm(const std::vector<In> &a,
                                   const std::vector<In> &b, bool b_transposed,
                                   const std::vector<float> &c, unsigned m,
                                   unsigned n, unsigned k) {
  std::vector<double> out(m * n);
  for (unsigned i = 0; i < m; ++i)
    for (unsigned j = 0; j < n; ++j) {
      double sum = c.empty() ? 0.0 : c[i * n + j];
      for (unsigned p = 0; p < k; ++p)
        sum += double(a[i * k + p]) *
               double(b_transposed ? b[j * k + p] : b[p * n + j]);
      out[i * n + j] = sum;
    }
  return out;
}

template <class T> std::vector<T> random_matrix(unsigned count) {
  std::vector<float> f = test::random_floats(count);
  return std::vector<T>(f.begin(), f.end());
}

void test_gemms() {
  GemmShape shape{16, 24, 32};
  unsigned m = shape.m, n = shape.n, k = shape.k;
  {
    std::vector<float> a = random_matrix<float>(m * k),
                       b = random_matrix<float>(k * n);
    std::vector<float> c = test::random_floats(m * n), c0 = c;
    test::expect_ok(
        attn_msl::launch(ATTN_MSL_KERNEL(gemm_float), {1, 1, 1}, {32, 1, 1},
                         {attn_msl::bind_buffer(0, a.data(), a.size()),
                          attn_msl::bind_buffer(1, b.data(), b.size()),
                          attn_msl::bind_buffer(2, c.data(), c.size()),
                          attn_msl::bind_buffer(3, &shape)}),
        "gemm_float");
    double err =
        test::relative_error(c, reference_gemm(a, b, false, c0, m, n, k));
    CHECK(err <= 1e-6, "gemm_float relative error %g", err);
  }
  {
    std::vector<half> a = random_matrix<half>(m * k),
                      bt = random_matrix<half>(n * k);
    std::vector<float> c = test::poisoned_floats(m * n);
    test::expect_ok(
        attn_msl::launch(ATTN_MSL_KERNEL(gemm_half_float_acc), {1, 1, 1},
                         {32, 1, 1},
                         {attn_msl::bind_buffer(0, a.data(), a.size()),
                          attn_msl::bind_buffer(1, bt.data(), bt.size()),
                          attn_msl::bind_buffer(2, c.data(), c.size()),
                          attn_msl::bind_buffer(3, &shape)}),
        "gemm_half_float_acc");
    // half products are exact in float; only the float sums round.
    double err =
        test::relative_error(c, reference_gemm(a, bt, true, {}, m, n, k));
    CHECK(err <= 1e-6, "gemm_half_float_acc relative error %g", err);
  }
  {
    std::vector<bfloat> a = random_matrix<bfloat>(m * k),
                        b = random_matrix<bfloat>(k * n);
    std::vector<float> c = test::poisoned_floats(m * n);
    test::expect_ok(
        attn_msl::launch(ATTN_MSL_KERNEL(gemm_bfloat_float_acc), {1, 1, 1},
                         {32, 1, 1},
                         {attn_msl::bind_buffer(0, a.data(), a.size()),
                          attn_msl::bind_buffer(1, b.data(), b.size()),
                          attn_msl::bind_buffer(2, c.data(), c.size()),
                          attn_msl::bind_buffer(3, &shape)}),
        "gemm_bfloat_float_acc");
    double err =
        test::relative_error(c, reference_gemm(a, b, false, {}, m, n, k));
    CHECK(err <= 1e-6, "gemm_bfloat_float_acc relative error %g", err);
  }
  {
    std::vector<half> a = random_matrix<half>(64), b = random_matrix<half>(64);
    std::vector<half> product(64, half(NAN)), doubled(64, half(NAN));
    test::expect_ok(
        attn_msl::launch(ATTN_MSL_KERNEL(multiply_half), {1, 1, 1}, {32, 1, 1},
                         {attn_msl::bind_buffer(0, a.data(), 64),
                          attn_msl::bind_buffer(1, b.data(), 64),
                          attn_msl::bind_buffer(2, product.data(), 64),
                          attn_msl::bind_buffer(3, doubled.data(), 64)}),
        "multiply_half");
    double err =
        test::relative_error(product, reference_gemm(a, b, false, {}, 8, 8, 8));
    CHECK(err <= 1e-2, "half simdgroup_multiply relative error %g", err);
    for (unsigned i = 0; i < 64; ++i)
      CHECK(float(doubled[i]) == 2.0f * float(a[i]),
            "diagonal multiply element %u", i);
  }
}

} // namespace

int main() {
  test_layout();
  test_gemms();
  return test::finish("simdgroup-matrix");
}
