// Types and math of the emulator against std:: and exact bit patterns.
#include <cstring>

#include "test_util.h"
#include ATTN_MSL_KERNEL_SOURCE

namespace {

float from_bits(uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}
uint64_t double_bits(double d) {
  uint64_t bits;
  std::memcpy(&bits, &d, 8);
  return bits;
}

void test_bfloat_rounding() {
  // Each case: a float input, its bfloat bits under round-to-nearest-even.
  struct Case {
    float value;
    uint16_t bits;
  };
  const float ulp = 1.0f / 128; // bfloat's spacing in [1, 2)
  std::vector<Case> cases = {
      {1.0f, 0x3f80},
      {1.0f + ulp / 2, 0x3f80},       // tie, to even (down)
      {1.0f + ulp + ulp / 2, 0x3f82}, // tie, to even (up)
      {1.0f + ulp / 2 + ulp / 4096,
       0x3f81}, // above the tie: truncation would give 0x3f80
      {1.0f + ulp / 2 - ulp / 4096, 0x3f80}, // below the tie
      {-(1.0f + ulp / 2 + ulp / 4096), 0xbf81},
      {from_bits(0x7f7fffff), 0x7f80}, // FLT_MAX rounds to infinity
      {INFINITY, 0x7f80},
      {-INFINITY, 0xff80},
      {0.0f, 0x0000},
      {-0.0f, 0x8000},
      {from_bits(0x00010000), 0x0001}, // smallest bfloat subnormal
      {3.0f, 0x4040},
  };
  const size_t n = cases.size();
  std::vector<float> from_float(32, 1.0f);
  std::vector<uint64_t> from_double(32, double_bits(1.0));
  for (size_t i = 0; i < n; ++i)
    from_float[i] = cases[i].value;
  // Doubles just above a tie: converting through float first would round
  // twice and land on the even neighbour below.
  from_double[0] = double_bits(1.0 + 1.0 / 256 + 1.0 / (1ull << 40));
  from_double[1] = double_bits(-(1.0 + 3.0 / 256 + 1.0 / (1ull << 40)));
  from_double[2] = double_bits(1.0 + 1.0 / 256);
  from_double[3] = double_bits(std::nan(""));
  const uint16_t double_expected[4] = {0x3f81, 0xbf82, 0x3f80, 0};
  std::vector<ushort> bits(64, 0xdead);
  std::vector<float> arithmetic = test::poisoned_floats(32);
  test::expect_ok(
      attn_msl::launch(ATTN_MSL_KERNEL(bfloat_rounding), {1, 1, 1}, {32, 1, 1},
                       {attn_msl::bind_buffer(0, from_float.data(), 32),
                        attn_msl::bind_buffer(1, from_double.data(), 32),
                        attn_msl::bind_buffer(2, bits.data(), 64),
                        attn_msl::bind_buffer(3, arithmetic.data(), 32)}),
      "bfloat_rounding");
  for (size_t i = 0; i < n; ++i)
    CHECK(bits[i] == cases[i].bits, "bfloat(%a) = 0x%04x, expected 0x%04x",
          cases[i].value, bits[i], cases[i].bits);
  for (int i = 0; i < 3; ++i)
    CHECK(bits[32 + i] == double_expected[i],
          "bfloat(double case %d) = 0x%04x, expected 0x%04x", i, bits[32 + i],
          double_expected[i]);
  CHECK((bits[35] & 0x7f80) == 0x7f80 && (bits[35] & 0x7f) != 0,
        "bfloat(NaN) = 0x%04x", bits[35]);
  // a * 0.375 + a with a = 3: 1.125 then 4.125, which bfloat rounds to 4.125
  // exactly; a = 1 + ulp: the product rounds before the sum.
  auto round_bf = [](double v) {
    // Reference rounding on the host, independent of __bf16: RNE on bits.
    float f = float(v);
    uint32_t b;
    std::memcpy(&b, &f, 4);
    b = (b + 0x7fff + ((b >> 16) & 1)) & 0xffff0000u;
    return from_bits(b);
  };
  for (size_t i = 0; i < n; ++i) {
    float a = round_bf(cases[i].value);
    if (!std::isfinite(a) || std::fabs(a) > 1e30f)
      continue;
    float expected = round_bf(double(round_bf(double(a) * 0.375)) + a);
    CHECK(arithmetic[i] == expected, "bfloat arithmetic case %zu: %g vs %g", i,
          arithmetic[i], expected);
  }
}

void test_scalar_and_vector_ops() {
  std::vector<float> in = {test::random_floats(1, 0.5f, 2.0f)[0],
                           test::random_floats(1, -2.0f, -0.5f)[0]};
  const double x = in[0], y = in[1];
  std::vector<float> out = test::poisoned_floats(64);
  test::expect_ok(attn_msl::launch(ATTN_MSL_KERNEL(scalar_and_vector_ops),
                                   {1, 1, 1}, {32, 1, 1},
                                   {attn_msl::bind_buffer(0, in.data(), 2),
                                    attn_msl::bind_buffer(1, out.data(), 64)}),
                  "scalar_and_vector_ops");
  const double hx = double(half(float(x))), hy = double(half(float(y)));
  const std::vector<std::pair<const char *, double>> expected = {
      {"exp", std::exp(x)},
      {"exp2", std::exp2(y)},
      {"log", std::log(x)},
      {"log2", std::log2(x)},
      {"max", x},
      {"min", y},
      {"fmax", x},
      {"fabs", -y},
      {"tanh", std::tanh(y)},
      {"sqrt", std::sqrt(x)},
      {"rsqrt", 1 / std::sqrt(x)},
      {"select", y},
      {"clamp", std::max(y, -1.0)},
      {"fast::exp", std::exp(x)},
      {"precise::exp", std::exp(x)},
      {"exp2(-inf)", 0.0},
      {"max(-inf, y)", y},
      {"abs", -y + 3},
      {"fma", x * y + 1},
      {"half 1000 + 0.01 - 1000", 0.0},
      {"0.5h + 2h", 2.5},
      {"exp(half)", double(half(std::exp(float(hx))))},
      {"max(half, half)", hx > hy ? hx : hy},
      {"swizzle assignment", 10 + 2000 + 30000 + 4000000},
      {"splat", x},
      {"concatenation", 3 + 40 + 500 + y},
      {"float3(float2, z) and sizeof(float3)", 7 + 1 + 16},
      {"half4(float4)", 2 + 0.5},
      {"uint2", 6},
      {"v.yx", 2},
      {"dot", 32},
      {"vector max", x + x + 1 - y},
      {"vector exp2", 2 + 4 + 8 + 0.5},
      {"vector select", 2121},
      {"all/any", 1},
      {"as_type", 1},
      {"exp10", std::pow(10.0, y)},
      {"log10", std::log10(x)},
      {"sin", std::sin(y)},
      {"cos", std::cos(y)},
      {"floor, ceil", std::floor(float(y * 3)) + std::ceil(float(x * 3)) * 100},
      {"trunc, round, rint",
       std::trunc(float(y * 3)) + std::round(float(x * 3)) * 100 + 2 * 10000},
      {"saturate", std::min(x, 1.0)},
      {"fmin", y},
      {"pow, powr", std::pow(x, 3.5) + std::sqrt(x)},
      {"fmod", std::fmod(float(x * 7), 1.5)},
      {"divide", x / y},
      {"mix", x + (y - x) * 0.25},
      {"isnan, isinf, isfinite", 111},
      {"exp(bfloat)", std::exp(x)},
      {"half2 sqrt", std::sqrt(hx) + 20},
      {"integer clamp, min", 35},
      {"count", 52},
  };
  for (size_t i = 0; i < expected.size(); ++i) {
    double want = expected[i].second;
    double tolerance = 1e-6 * std::max(1.0, std::fabs(want));
    if (std::string(expected[i].first).find("half") != std::string::npos)
      tolerance = 1e-3 * std::max(1.0, std::fabs(want));
    if (std::string(expected[i].first).find("bfloat") != std::string::npos)
      tolerance = 1e-2 * std::max(1.0, std::fabs(want));
    CHECK(std::fabs(out[i] - want) <= tolerance, "%s: %.9g vs %.9g",
          expected[i].first, out[i], want);
  }
}

} // namespace

int main() {
  test_bfloat_rounding();
  test_scalar_and_vector_ops();
  return test::finish("types");
}
