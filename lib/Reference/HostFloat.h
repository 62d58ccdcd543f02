//===- HostFloat.h - f16, bf16 and fp8 bits on the host ---------*- C++ -*-===//
//
// Conversions between the 16- and 8-bit storage formats of kernel buffers
// and float, for test hosts that fill inputs and read outputs. They round
// to nearest even; NaN stays NaN. No MLIR here.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_LIB_REFERENCE_HOSTFLOAT_H
#define ATTN_LIB_REFERENCE_HOSTFLOAT_H

#include <cmath>
#include <cstdint>
#include <cstring>

namespace attn::host {

inline uint16_t toHalf(float f) {
  _Float16 h = static_cast<_Float16>(f);
  uint16_t bits;
  std::memcpy(&bits, &h, 2);
  return bits;
}

inline float fromHalf(uint16_t bits) {
  _Float16 h;
  std::memcpy(&h, &bits, 2);
  return static_cast<float>(h);
}

inline uint16_t toBF16(float f) {
  if (std::isnan(f))
    return 0x7FC0;
  uint32_t u;
  std::memcpy(&u, &f, 4);
  u += 0x7FFF + ((u >> 16) & 1); // round to nearest even
  return static_cast<uint16_t>(u >> 16);
}

inline float fromBF16(uint16_t bits) {
  uint32_t u = static_cast<uint32_t>(bits) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

/// The OCP 8-bit float formats of quantized K/V caches, read from their
/// definition: e4m3fn (bias 7, no infinities, S.1111.111 NaN) and e5m2
/// (bias 15, IEEE infinities and NaNs).
inline double fromFP8(uint8_t bits, bool e4m3) {
  const int mb = e4m3 ? 3 : 2, bias = e4m3 ? 7 : 15;
  const int exponent = (bits & 0x7f) >> mb, mantissa = bits & ((1 << mb) - 1);
  const double sign = bits & 0x80 ? -1.0 : 1.0;
  if (e4m3 && (bits & 0x7f) == 0x7f)
    return NAN;
  if (!e4m3 && exponent == 31)
    return mantissa ? NAN : sign * INFINITY;
  if (exponent == 0)
    return sign * std::ldexp(mantissa, 1 - bias - mb);
  return sign * std::ldexp((1 << mb) + mantissa, exponent - bias - mb);
}

/// The finite fp8 value nearest `x` (ties to the even code), saturating at
/// the format's largest finite value; NaN gives NaN.
inline uint8_t toFP8(double x, bool e4m3) {
  if (std::isnan(x))
    return 0x7f;
  uint8_t best = 0;
  double bestDistance = INFINITY;
  for (int code = 0; code < 256; ++code) {
    double value = fromFP8(static_cast<uint8_t>(code), e4m3);
    if (!std::isfinite(value))
      continue;
    double distance = std::abs(value - x);
    if (distance < bestDistance ||
        (distance == bestDistance && !(code & 1) && (best & 1))) {
      best = static_cast<uint8_t>(code);
      bestDistance = distance;
    }
  }
  return best;
}

} // namespace attn::host

#endif // ATTN_LIB_REFERENCE_HOSTFLOAT_H
