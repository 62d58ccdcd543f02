//===- emulator/types.h - scalar and vector types ---------------*- C++ -*-===//
//
// A part of metal_emulator.h, which includes the parts in order: each
// builds on those before it and is not included on its own.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_TOOLS_MSL_EMULATOR_EMULATOR_TYPES_H
#define ATTN_TOOLS_MSL_EMULATOR_EMULATOR_TYPES_H

#pragma clang system_header

//===----------------------------------------------------------------------===//
// Scalar and vector types. MSL declares them outside namespace metal.
//===----------------------------------------------------------------------===//

typedef _Float16 half;
// clang's __bf16 converts from float with round-to-nearest-even (tested in
// types.cpp) and does arithmetic like MSL's bfloat.
typedef __bf16 bfloat;

// Narrowing to __bf16 calls these compiler-runtime functions, which libgcc
// before GCC 13 lacks. `used` makes every translation unit emit them (the
// libcalls are no odr-use), weak lets the linker keep one; either way the
// rounding is to nearest, ties to even, and NaN stays a (quiet) NaN.
extern "C" __attribute__((weak, used)) inline __bf16 __truncsfbf2(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  uint16_t out;
  if ((bits & 0x7fffffffu) > 0x7f800000u)
    out = uint16_t((bits >> 16) | 0x40u);
  else
    out = uint16_t((bits + 0x7fffu + ((bits >> 16) & 1u)) >> 16);
  return __builtin_bit_cast(__bf16, out);
}

namespace attn_msl {
namespace detail {
// Wider floats go to float rounding to odd (truncate, then set the last bit
// when inexact), so that rounding that float to bfloat gives the correctly
// rounded result, not a double rounding.
template <class Wide> float narrow_to_float_round_to_odd(Wide value) {
  float narrow = static_cast<float>(value);
  if (std::isnan(value) || static_cast<Wide>(narrow) == value)
    return narrow;
  uint32_t bits;
  std::memcpy(&bits, &narrow, sizeof bits);
  if (std::fabs(static_cast<Wide>(narrow)) > std::fabs(value))
    bits -= 1; // rounded away from zero: step back toward zero
  bits |= 1u;
  std::memcpy(&narrow, &bits, sizeof bits);
  return narrow;
}
} // namespace detail
} // namespace attn_msl

extern "C" __attribute__((weak, used)) inline __bf16
__truncdfbf2(double value) {
  return __truncsfbf2(attn_msl::detail::narrow_to_float_round_to_odd(value));
}
extern "C" __attribute__((weak, used)) inline __bf16
__truncxfbf2(long double value) {
  return __truncsfbf2(attn_msl::detail::narrow_to_float_round_to_odd(value));
}

// Same types as glibc's <sys/types.h> typedefs, so both may be visible.
typedef unsigned int uint;
typedef unsigned short ushort;
typedef unsigned char uchar;
typedef unsigned long ulong;

// Address spaces are clang address spaces, so that they are distinct types:
// a device pointer does not convert to a threadgroup one, and simdgroup_load
// takes device or threadgroup memory only. `thread` is the default address
// space, the one of local variables.
//
// ATTN_MSL_ERASE_ADDRESS_SPACES erases them instead (all memory in the
// default address space): clang's ThreadSanitizer instrumentation, which
// the checked accesses rely on, skips accesses in other address spaces, so
// msl-emu-cc.sh type-checks the kernel with address spaces first
// (-fsyntax-only) and then builds it with them erased.
#ifndef ATTN_MSL_ERASE_ADDRESS_SPACES
#define ATTN_MSL_AS_DEVICE __attribute__((address_space(1)))
#define ATTN_MSL_AS_CONSTANT __attribute__((address_space(2)))
#define ATTN_MSL_AS_THREADGROUP __attribute__((address_space(3)))
#else
#define ATTN_MSL_AS_DEVICE
#define ATTN_MSL_AS_CONSTANT
#define ATTN_MSL_AS_THREADGROUP
#endif

namespace attn_msl {
namespace detail {
// The address space of T (0 thread, 1 device, 2 constant, 3 threadgroup) and
// T without it.
template <class T> struct AddressSpace {
  static constexpr int value = 0;
  using type = T;
};
#ifndef ATTN_MSL_ERASE_ADDRESS_SPACES
template <class T> struct AddressSpace<ATTN_MSL_AS_DEVICE T> {
  static constexpr int value = 1;
  using type = T;
};
template <class T> struct AddressSpace<ATTN_MSL_AS_CONSTANT T> {
  static constexpr int value = 2;
  using type = T;
};
template <class T> struct AddressSpace<ATTN_MSL_AS_THREADGROUP T> {
  static constexpr int value = 3;
  using type = T;
};
constexpr bool kTypedAddressSpaces = true;
#else
constexpr bool kTypedAddressSpaces = false;
#endif
template <class T> constexpr int address_space_of = AddressSpace<T>::value;
template <class T>
using plain_t = std::remove_cv_t<typename AddressSpace<T>::type>;
template <class T> constexpr bool dependent_false = false;
} // namespace detail
} // namespace attn_msl

namespace metal {
// MSL vectors: 2-4 components, swizzles (.x .xy .zw ...), component-wise
// arithmetic, 3-component vectors padded to 4 like Metal's.
template <class T, int N> using vec = T __attribute__((ext_vector_type(N)));
} // namespace metal

#define ATTN_MSL_VECTOR_TYPES(T, NAME)                                         \
  typedef metal::vec<T, 2> NAME##2;                                            \
  typedef metal::vec<T, 3> NAME##3;                                            \
  typedef metal::vec<T, 4> NAME##4;
ATTN_MSL_VECTOR_TYPES(float, float)
ATTN_MSL_VECTOR_TYPES(half, half)
ATTN_MSL_VECTOR_TYPES(bfloat, bfloat)
ATTN_MSL_VECTOR_TYPES(int, int)
ATTN_MSL_VECTOR_TYPES(uint, uint)
ATTN_MSL_VECTOR_TYPES(short, short)
ATTN_MSL_VECTOR_TYPES(ushort, ushort)
ATTN_MSL_VECTOR_TYPES(char, char)
ATTN_MSL_VECTOR_TYPES(uchar, uchar)
ATTN_MSL_VECTOR_TYPES(long, long)
ATTN_MSL_VECTOR_TYPES(ulong, ulong)
#undef ATTN_MSL_VECTOR_TYPES

// MSL's half literal suffix: 0.5h, 2h.
constexpr half operator""h(long double value) { return (half)value; }
constexpr half operator""h(unsigned long long value) { return (half)value; }

#ifndef INFINITY
#define INFINITY __builtin_huge_valf()
#endif
#ifndef NAN
#define NAN __builtin_nanf("")
#endif
#ifndef MAXFLOAT
#define MAXFLOAT FLT_MAX
#endif
#define HUGE_VALH ((half)__builtin_huge_valf())
#define HALF_MAX ((half)65504.0f)
#define MAXHALF HALF_MAX
#define M_E_F 2.71828182845904523536f
#define M_LOG2E_F 1.44269504088896340736f
#define M_LOG10E_F 0.434294481903251827651f
#define M_LN2_F 0.693147180559945309417f
#define M_LN10_F 2.30258509299404568402f
#define M_PI_F 3.14159265358979323846f
#define M_SQRT2_F 1.41421356237309504880f
#define M_LOG2E_H ((half)M_LOG2E_F)
#define M_LN2_H ((half)M_LN2_F)

#endif // ATTN_TOOLS_MSL_EMULATOR_EMULATOR_TYPES_H
