//===- emulator/traits.h - type traits over the MSL types -------*- C++ -*-===//
//
// A part of metal_emulator.h, which includes the parts in order: each
// builds on those before it and is not included on its own.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_TOOLS_MSL_EMULATOR_EMULATOR_TRAITS_H
#define ATTN_TOOLS_MSL_EMULATOR_EMULATOR_TRAITS_H

#pragma clang system_header

//===----------------------------------------------------------------------===//
// Type traits over the MSL types.
//===----------------------------------------------------------------------===//

template <class T> struct VectorInfo {
  static constexpr int size = 0;
  using element = T;
};
template <class T, int N> struct VectorInfo<metal::vec<T, N>> {
  static constexpr int size = N;
  using element = T;
};
template <class T> constexpr bool is_vector = VectorInfo<T>::size > 0;
template <class T> using element_t = typename VectorInfo<T>::element;

template <class T>
constexpr bool is_float_scalar =
    std::is_same_v<T, float> || std::is_same_v<T, half> ||
    std::is_same_v<T, bfloat>;
template <class T>
constexpr bool is_int_scalar =
    std::is_integral_v<T> && !std::is_same_v<T, bool>;
// Scalar or vector of float/half/bfloat.
template <class T> constexpr bool is_float_like = is_float_scalar<element_t<T>>;
template <class T> constexpr bool is_int_like = is_int_scalar<element_t<T>>;
template <class T>
constexpr bool is_arithmetic_like = is_float_like<T> || is_int_like<T>;

template <class T> constexpr int component_count() {
  return is_vector<T> ? VectorInfo<T>::size : 1;
}

// Vector constructors: float4(x) splats, float4(half4) converts, and
// float4(a, float2, b) concatenates scalars and vectors in order.
template <class V, class Arg>
void append_components(V &out, int &next, const Arg &arg) {
  using E = element_t<V>;
  if constexpr (is_vector<Arg>) {
    for (int i = 0; i < VectorInfo<Arg>::size; ++i)
      out[next++] = static_cast<E>(arg[i]);
  } else {
    out[next++] = static_cast<E>(arg);
  }
}

template <class V, class... Args> V make_vector(const Args &...args) {
  static_assert(is_vector<V>, "make_vector builds MSL vector types only");
  constexpr int n = VectorInfo<V>::size;
  using E = element_t<V>;
  V out;
  if constexpr (sizeof...(Args) == 1 && (!is_vector<Args> && ...)) {
    E value = (static_cast<E>(args), ...);
    for (int i = 0; i < n; ++i)
      out[i] = value;
  } else {
    static_assert((component_count<Args>() + ...) == n,
                  "vector constructor: the components given do not add up "
                  "to the vector's size");
    int next = 0;
    (append_components(out, next, args), ...);
  }
  return out;
}

// Applies f to a scalar, or to each component of vectors, converting the
// result back to the element type.
template <class T, class F> T map_components(const T &x, F f) {
  if constexpr (is_vector<T>) {
    T out;
    for (int i = 0; i < VectorInfo<T>::size; ++i)
      out[i] = static_cast<element_t<T>>(f(x[i]));
    return out;
  } else {
    return static_cast<T>(f(x));
  }
}

template <class T, class F> T map_components(const T &x, const T &y, F f) {
  if constexpr (is_vector<T>) {
    T out;
    for (int i = 0; i < VectorInfo<T>::size; ++i)
      out[i] = static_cast<element_t<T>>(f(x[i], y[i]));
    return out;
  } else {
    return static_cast<T>(f(x, y));
  }
}

template <class T, class F>
T map_components(const T &x, const T &y, const T &z, F f) {
  if constexpr (is_vector<T>) {
    T out;
    for (int i = 0; i < VectorInfo<T>::size; ++i)
      out[i] = static_cast<element_t<T>>(f(x[i], y[i], z[i]));
    return out;
  } else {
    return static_cast<T>(f(x, y, z));
  }
}

// A type's identity and MSL-style name without RTTI (libstdc++ has no
// typeinfo for _Float16): a function template's static is one object per
// type in the whole program.
struct TypeTag {
  std::string name;
};

template <class T> std::string msl_type_name() {
  // "... msl_type_name() [T = float]"
  std::string pretty = __PRETTY_FUNCTION__;
  size_t begin = pretty.find("T = ") + 4;
  std::string name = pretty.substr(begin, pretty.rfind(']') - begin);
  const std::pair<const char *, const char *> spellings[] = {
      {"_Float16", "half"},       {"__bf16", "bfloat"},
      {"unsigned int", "uint"},   {"unsigned short", "ushort"},
      {"unsigned char", "uchar"}, {"unsigned long", "ulong"}};
  for (const auto &[from, to] : spellings)
    for (size_t at; (at = name.find(from)) != std::string::npos;)
      name.replace(at, std::strlen(from), to);
  return name;
}

template <class T> const TypeTag *type_tag() {
  static const TypeTag tag{msl_type_name<T>()};
  return &tag;
}

#endif // ATTN_TOOLS_MSL_EMULATOR_EMULATOR_TRAITS_H
