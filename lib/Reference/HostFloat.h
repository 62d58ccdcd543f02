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
/// the format's largest finite value; NaN gives NaN. Positive codes grow
/// with their values, so the nearest is a neighbour in that order.
inline uint8_t toFP8(double x, bool e4m3) {
  if (std::isnan(x))
    return 0x7f;
  // The positive finite codes: 0 .. 0x7e (e4m3) or 0 .. 0x7b (e5m2).
  const int last = e4m3 ? 0x7e : 0x7b;
  const double a = std::abs(x);
  int lo = 0, hi = last; // largest code whose value is <= a
  if (a >= fromFP8(static_cast<uint8_t>(last), e4m3)) {
    lo = last;
  } else {
    while (lo < hi) {
      int mid = (lo + hi + 1) / 2;
      if (fromFP8(static_cast<uint8_t>(mid), e4m3) <= a)
        lo = mid;
      else
        hi = mid - 1;
    }
  }
  int code = lo;
  if (lo < last) {
    double below = a - fromFP8(static_cast<uint8_t>(lo), e4m3);
    double above = fromFP8(static_cast<uint8_t>(lo + 1), e4m3) - a;
    if (above < below || (above == below && (lo & 1)))
      code = lo + 1;
  }
  return static_cast<uint8_t>(code | (std::signbit(x) ? 0x80 : 0));
}

} // namespace attn::host

#endif // ATTN_LIB_REFERENCE_HOSTFLOAT_H
