//===- HostFloat.h - f16 and bf16 bits on the host --------------*- C++ -*-===//
//
// Conversions between the 16-bit storage formats of kernel buffers and
// float, for test hosts that fill inputs and read outputs. Both round to
// nearest even; NaN stays NaN. No MLIR here.
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

} // namespace attn::host

#endif // ATTN_LIB_REFERENCE_HOSTFLOAT_H
