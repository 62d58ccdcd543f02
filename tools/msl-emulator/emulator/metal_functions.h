//===- emulator/metal_functions.h - namespace metal ------------*- C++ -*-===//
//
// A part of metal_emulator.h, which includes the parts in order: each
// builds on those before it and is not included on its own.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_TOOLS_MSL_EMULATOR_EMULATOR_METAL_FUNCTIONS_H
#define ATTN_TOOLS_MSL_EMULATOR_EMULATOR_METAL_FUNCTIONS_H

#pragma clang system_header

//===----------------------------------------------------------------------===//
// namespace metal: math, SIMD-group functions, barriers, simdgroup_matrix.
//===----------------------------------------------------------------------===//

namespace metal {

// Scalar math computes in float and rounds to the argument type; vectors
// apply it per component. Templates, so a float argument prefers the C
// library's exact-match overloads where a host header declared them (same
// result) and a mixed call like max(half, float) is rejected as in MSL.
#define ATTN_MSL_FLOAT_UNARY(NAME, EXPR)                                       \
  template <class T,                                                           \
            std::enable_if_t<::attn_msl::detail::is_float_like<T>, int> = 0>   \
  inline T NAME(T x) {                                                         \
    return ::attn_msl::detail::map_components(x,                               \
                                              [](float v) { return EXPR; });   \
  }
ATTN_MSL_FLOAT_UNARY(exp, std::exp(v))
ATTN_MSL_FLOAT_UNARY(exp2, std::exp2(v))
ATTN_MSL_FLOAT_UNARY(exp10, std::pow(10.0f, v))
ATTN_MSL_FLOAT_UNARY(log, std::log(v))
ATTN_MSL_FLOAT_UNARY(log2, std::log2(v))
ATTN_MSL_FLOAT_UNARY(log10, std::log10(v))
ATTN_MSL_FLOAT_UNARY(sqrt, std::sqrt(v))
ATTN_MSL_FLOAT_UNARY(rsqrt, 1.0f / std::sqrt(v))
// tanh: precise::tanh is the C library's. fast::tanh is modelled as Metal's
// fast one, (e^2x - 1) / (e^2x + 1) in float: NaN past |x| ~ 44.4, where
// e^2x overflows (TVM PR #16438, candle PR #2475). Plain tanh is the fast one
// when the kernel is compiled for fast math (ATTN_MSL_FAST_MATH, set by
// msl-emu-cc.sh with ATTN_MSL_MATH=fast), as in Metal, else the precise one.
ATTN_MSL_FLOAT_UNARY(attn_msl_precise_tanh, std::tanh(v))
ATTN_MSL_FLOAT_UNARY(attn_msl_fast_tanh, ::attn_msl::detail::fast_tanh(v))
template <class T,
          std::enable_if_t<::attn_msl::detail::is_float_like<T>, int> = 0>
inline T tanh(T x) {
#ifdef ATTN_MSL_FAST_MATH
  return attn_msl_fast_tanh(x);
#else
  return attn_msl_precise_tanh(x);
#endif
}
ATTN_MSL_FLOAT_UNARY(sin, std::sin(v))
ATTN_MSL_FLOAT_UNARY(cos, std::cos(v))
ATTN_MSL_FLOAT_UNARY(fabs, std::fabs(v))
ATTN_MSL_FLOAT_UNARY(floor, std::floor(v))
ATTN_MSL_FLOAT_UNARY(ceil, std::ceil(v))
ATTN_MSL_FLOAT_UNARY(trunc, std::trunc(v))
ATTN_MSL_FLOAT_UNARY(round, std::round(v))
ATTN_MSL_FLOAT_UNARY(rint, std::rint(v))
ATTN_MSL_FLOAT_UNARY(saturate, std::fmin(std::fmax(v, 0.0f), 1.0f))
#undef ATTN_MSL_FLOAT_UNARY

#define ATTN_MSL_FLOAT_BINARY(NAME, EXPR)                                      \
  template <class T,                                                           \
            std::enable_if_t<::attn_msl::detail::is_float_like<T>, int> = 0>   \
  inline T NAME(T x, T y) {                                                    \
    return ::attn_msl::detail::map_components(                                 \
        x, y, [](float a, float b) { return EXPR; });                          \
  }
ATTN_MSL_FLOAT_BINARY(fmax, std::fmax(a, b))
ATTN_MSL_FLOAT_BINARY(fmin, std::fmin(a, b))
ATTN_MSL_FLOAT_BINARY(pow, std::pow(a, b))
ATTN_MSL_FLOAT_BINARY(powr, std::pow(a, b))
ATTN_MSL_FLOAT_BINARY(fmod, std::fmod(a, b))
ATTN_MSL_FLOAT_BINARY(divide, a / b)
#undef ATTN_MSL_FLOAT_BINARY

template <class T,
          std::enable_if_t<::attn_msl::detail::is_float_like<T>, int> = 0>
inline T fma(T a, T b, T c) {
  return ::attn_msl::detail::map_components(
      a, b, c, [](float x, float y, float z) { return std::fma(x, y, z); });
}

template <class T,
          std::enable_if_t<::attn_msl::detail::is_float_like<T>, int> = 0>
inline T mix(T x, T y, T a) {
  return x + (y - x) * a;
}

// max/min take floats (NaN-ignoring, like fmax) and integers.
template <class T,
          std::enable_if_t<::attn_msl::detail::is_arithmetic_like<T>, int> = 0>
inline T max(T x, T y) {
  return ::attn_msl::detail::map_components(x, y, [](auto a, auto b) {
    if constexpr (::attn_msl::detail::is_float_scalar<decltype(a)>)
      return static_cast<decltype(a)>(std::fmax(float(a), float(b)));
    else
      return a > b ? a : b;
  });
}
template <class T,
          std::enable_if_t<::attn_msl::detail::is_arithmetic_like<T>, int> = 0>
inline T min(T x, T y) {
  return ::attn_msl::detail::map_components(x, y, [](auto a, auto b) {
    if constexpr (::attn_msl::detail::is_float_scalar<decltype(a)>)
      return static_cast<decltype(a)>(std::fmin(float(a), float(b)));
    else
      return a < b ? a : b;
  });
}
template <class T,
          std::enable_if_t<::attn_msl::detail::is_arithmetic_like<T>, int> = 0>
inline T clamp(T x, T lo, T hi) {
  return min(max(x, lo), hi);
}
template <class T,
          std::enable_if_t<::attn_msl::detail::is_arithmetic_like<T>, int> = 0>
inline T abs(T x) {
  return ::attn_msl::detail::map_components(x, [](auto a) {
    if constexpr (::attn_msl::detail::is_float_scalar<decltype(a)>)
      return static_cast<decltype(a)>(std::fabs(float(a)));
    else if constexpr (std::is_signed_v<decltype(a)>)
      return static_cast<decltype(a)>(a < 0 ? -a : a);
    else
      return a;
  });
}

// select(a, b, c) is c ? b : a; vectors take a per-component mask (a
// comparison of vectors gives one: -1 where true, 0 where false).
template <class T,
          std::enable_if_t<::attn_msl::detail::is_arithmetic_like<T>, int> = 0>
inline T select(T a, T b, bool c) {
  return c ? b : a;
}
template <class T, class Mask,
          std::enable_if_t<
              ::attn_msl::detail::is_vector<T> && ::attn_msl::detail::is_vector<
                  Mask> && ::attn_msl::detail::VectorInfo<T>::size ==
                  ::attn_msl::detail::VectorInfo<Mask>::size,
              int> = 0>
inline T select(T a, T b, Mask c) {
  T out;
  for (int i = 0; i < ::attn_msl::detail::VectorInfo<T>::size; ++i)
    out[i] = c[i] ? b[i] : a[i];
  return out;
}

template <class T,
          std::enable_if_t<::attn_msl::detail::is_float_scalar<T>, int> = 0>
inline bool isnan(T x) {
  return std::isnan(float(x));
}
template <class T,
          std::enable_if_t<::attn_msl::detail::is_float_scalar<T>, int> = 0>
inline bool isinf(T x) {
  return std::isinf(float(x));
}
template <class T,
          std::enable_if_t<::attn_msl::detail::is_float_scalar<T>, int> = 0>
inline bool isfinite(T x) {
  return std::isfinite(float(x));
}

template <class T, std::enable_if_t<::attn_msl::detail::is_vector<T>
                                        && ::attn_msl::detail::is_float_like<T>,
                                    int> = 0>
inline ::attn_msl::detail::element_t<T> dot(T x, T y) {
  float sum = 0.0f;
  for (int i = 0; i < ::attn_msl::detail::VectorInfo<T>::size; ++i)
    sum += float(x[i]) * float(y[i]);
  return static_cast<::attn_msl::detail::element_t<T>>(sum);
}

template <class Mask,
          std::enable_if_t<::attn_msl::detail::is_vector<Mask>, int> = 0>
inline bool all(Mask m) {
  for (int i = 0; i < ::attn_msl::detail::VectorInfo<Mask>::size; ++i)
    if (!m[i])
      return false;
  return true;
}
template <class Mask,
          std::enable_if_t<::attn_msl::detail::is_vector<Mask>, int> = 0>
inline bool any(Mask m) {
  for (int i = 0; i < ::attn_msl::detail::VectorInfo<Mask>::size; ++i)
    if (m[i])
      return true;
  return false;
}

// Reinterprets the bits of a value of the same size (float3 is 16 bytes, as
// in Metal).
template <class To, class From> inline To as_type(const From &from) {
  static_assert(sizeof(To) == sizeof(From), "as_type needs types of one size");
  To to;
  std::memcpy(&to, &from, sizeof(To));
  return to;
}

// fast:: and precise:: variants compute the same thing here, except tanh
// (above).
#define ATTN_MSL_MATH_NAMES                                                    \
  using metal::exp;                                                            \
  using metal::exp2;                                                           \
  using metal::exp10;                                                          \
  using metal::log;                                                            \
  using metal::log2;                                                           \
  using metal::log10;                                                          \
  using metal::sqrt;                                                           \
  using metal::rsqrt;                                                          \
  using metal::sin;                                                            \
  using metal::cos;                                                            \
  using metal::fabs;                                                           \
  using metal::floor;                                                          \
  using metal::ceil;                                                           \
  using metal::trunc;                                                          \
  using metal::round;                                                          \
  using metal::rint;                                                           \
  using metal::saturate;                                                       \
  using metal::fmax;                                                           \
  using metal::fmin;                                                           \
  using metal::pow;                                                            \
  using metal::powr;                                                           \
  using metal::fmod;                                                           \
  using metal::divide;                                                         \
  using metal::fma;                                                            \
  using metal::max;                                                            \
  using metal::min;                                                            \
  using metal::clamp;
namespace fast {
ATTN_MSL_MATH_NAMES
template <class T,
          std::enable_if_t<::attn_msl::detail::is_float_like<T>, int> = 0>
inline T tanh(T x) {
  return metal::attn_msl_fast_tanh(x);
}
} // namespace fast
namespace precise {
ATTN_MSL_MATH_NAMES
template <class T,
          std::enable_if_t<::attn_msl::detail::is_float_like<T>, int> = 0>
inline T tanh(T x) {
  return metal::attn_msl_precise_tanh(x);
}
} // namespace precise
#undef ATTN_MSL_MATH_NAMES

#endif // ATTN_TOOLS_MSL_EMULATOR_EMULATOR_METAL_FUNCTIONS_H
