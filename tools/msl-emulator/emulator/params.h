//===- emulator/params.h - kernel parameters --------------------*- C++ -*-===//
//
// A part of metal_emulator.h, which includes the parts in order: each
// builds on those before it and is not included on its own.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_TOOLS_MSL_EMULATOR_EMULATOR_PARAMS_H
#define ATTN_TOOLS_MSL_EMULATOR_EMULATOR_PARAMS_H

#pragma clang system_header

//===----------------------------------------------------------------------===//
// Kernel parameters. The attribute macros at the end of this file turn
// `T name [[buffer(3)]]` into `T name [[]] = buffer_param(3)[...]`: every
// kernel parameter is a default argument that reads the running thread's
// launch, so the launcher calls `kernel()` with no arguments and parameter
// order does not matter.
//===----------------------------------------------------------------------===//

// The attribute macros end in `[kAttributeEnd[0`, which the attribute's own
// `]]` closes.
inline constexpr int kAttributeEnd[1] = {0};

inline const BoundBuffer &bound_buffer(uint index) {
  for (const BoundBuffer &buffer : t_group->launch->buffers)
    if (buffer.index == index)
      return buffer;
  fault("kernel parameter [[buffer(" + std::to_string(index) +
        ")]] has no buffer bound at index " + std::to_string(index));
}

template <class T> void check_buffer_type(const BoundBuffer &buffer) {
  static_assert(!kTypedAddressSpaces || address_space_of<T> == 1 ||
                    address_space_of<T> == 2,
                "a [[buffer(n)]] kernel parameter points to device or "
                "constant memory");
  using Element = plain_t<T>;
  // Byte views of any buffer are fine, as in Metal.
  if constexpr (std::is_same_v<Element, uchar> ||
                std::is_same_v<Element, char> || std::is_void_v<Element>)
    return;
  if (buffer.element && buffer.element != type_tag<Element>())
    fault("kernel parameter [[buffer(" + std::to_string(buffer.index) +
          ")]] points to " + type_tag<Element>()->name +
          " but the buffer bound there holds " + buffer.element->name);
  if constexpr (!std::is_void_v<Element>)
    if (buffer.bytes < sizeof(Element))
      fault("kernel parameter [[buffer(" + std::to_string(buffer.index) +
            ")]] needs " + std::to_string(sizeof(Element)) +
            " bytes but the buffer bound there has " +
            std::to_string(buffer.bytes));
}

struct BufferParam {
  uint index;
  // device float *p [[buffer(0)]]
  template <class T> operator T *() const {
    const BoundBuffer &buffer = bound_buffer(index);
    check_buffer_type<T>(buffer);
    return (T *)buffer.data; // into T's address space
  }
  // constant Params &p [[buffer(1)]]
  template <class T> operator T &() const {
    const BoundBuffer &buffer = bound_buffer(index);
    check_buffer_type<T>(buffer);
    return *(T *)buffer.data;
  }
};
struct BufferParamSelector {
  uint index;
  BufferParam operator[](int) const { return {index}; }
};
inline BufferParamSelector buffer_param(uint index) { return {index}; }

struct ThreadgroupParam {
  uint index;
  // threadgroup float *p [[threadgroup(0)]]
  template <class T> operator T *() const {
    static_assert(!kTypedAddressSpaces || address_space_of<T> == 3,
                  "a [[threadgroup(n)]] kernel parameter points to "
                  "threadgroup memory");
    const std::vector<size_t> &sizes =
        t_group->launch->threadgroup_memory_bytes;
    if (index >= sizes.size())
      fault("kernel parameter [[threadgroup(" + std::to_string(index) +
            ")]] has no threadgroup memory length set at index " +
            std::to_string(index));
    if constexpr (!std::is_void_v<plain_t<T>>)
      if (sizes[index] % sizeof(T) != 0)
        fault("threadgroup memory " + std::to_string(index) + " holds " +
              std::to_string(sizes[index]) + " bytes, not a whole number of " +
              type_tag<plain_t<T>>()->name);
    return (T *)t_group->threadgroup_memory[index];
  }
};
struct ThreadgroupParamSelector {
  uint index;
  ThreadgroupParam operator[](int) const { return {index}; }
};
inline ThreadgroupParamSelector threadgroup_param(uint index) {
  return {index};
}

enum class Builtin {
  kThreadgroupPositionInGrid,
  kThreadPositionInThreadgroup,
  kThreadPositionInGrid,
  kThreadsPerThreadgroup,
  kThreadgroupsPerGrid,
  kThreadsPerGrid,
  kThreadIndexInThreadgroup,
  kThreadIndexInSimdgroup,
  kSimdgroupIndexInThreadgroup,
  kThreadsPerSimdgroup,
  kSimdgroupsPerThreadgroup,
};

// Grid-shaped built-ins may be uint, uint2 or uint3 (or ushort forms), the
// rest are scalars; anything else is a compile error, as in Metal.
template <Builtin B> constexpr bool is_grid_shaped() {
  return B == Builtin::kThreadgroupPositionInGrid ||
         B == Builtin::kThreadPositionInThreadgroup ||
         B == Builtin::kThreadPositionInGrid ||
         B == Builtin::kThreadsPerThreadgroup ||
         B == Builtin::kThreadgroupsPerGrid || B == Builtin::kThreadsPerGrid;
}

template <Builtin B> uint3 builtin_value() {
  const ThreadState &thread = current_thread();
  const LaunchState &launch = *t_group->launch;
  uint3 group = t_group->position;
  uint3 size = launch.threads_per_threadgroup;
  switch (B) {
  case Builtin::kThreadgroupPositionInGrid:
    return group;
  case Builtin::kThreadPositionInThreadgroup:
    return thread.position;
  case Builtin::kThreadPositionInGrid:
    return group * size + thread.position;
  case Builtin::kThreadsPerThreadgroup:
    return size;
  case Builtin::kThreadgroupsPerGrid:
    return launch.threadgroups_per_grid;
  case Builtin::kThreadsPerGrid:
    return launch.threadgroups_per_grid * size;
  case Builtin::kThreadIndexInThreadgroup:
    return uint3{thread.index, 0, 0};
  case Builtin::kThreadIndexInSimdgroup:
    return uint3{thread.lane, 0, 0};
  case Builtin::kSimdgroupIndexInThreadgroup:
    return uint3{thread.simdgroup, 0, 0};
  case Builtin::kThreadsPerSimdgroup:
    return uint3{kSimdWidth, 0, 0};
  case Builtin::kSimdgroupsPerThreadgroup:
    return uint3{t_group->simdgroup_count(), 0, 0};
  }
  return uint3{0, 0, 0};
}

template <Builtin B> struct BuiltinParam {
  template <class T> operator T() const {
    using E = element_t<T>;
    static_assert(std::is_same_v<E, uint> || std::is_same_v<E, ushort>,
                  "MSL built-in parameters are uint or ushort (or vectors "
                  "of them)");
    static_assert(!is_vector<T> ||
                      (is_grid_shaped<B>() && VectorInfo<T>::size <= 3),
                  "this MSL built-in is a scalar; only grid positions and "
                  "sizes may be 2- or 3-component vectors");
    uint3 value = builtin_value<B>();
    if constexpr (!is_vector<T>)
      return static_cast<T>(value.x);
    else if constexpr (VectorInfo<T>::size == 2)
      return T{E(value.x), E(value.y)};
    else
      return T{E(value.x), E(value.y), E(value.z)};
  }
};
template <Builtin B> struct BuiltinParamSelector {
  BuiltinParam<B> operator[](int) const { return {}; }
};
template <Builtin B> BuiltinParamSelector<B> builtin_param() { return {}; }

// Position of element `e` (0 or 1) of `lane` in an 8x8 simdgroup_matrix, the
// layout of thread_elements() that MLX and tinygrad rely on.
struct MatrixCoord {
  uint row;
  uint col;
};
inline MatrixCoord lane_element_coord(uint lane, uint e) {
  uint q = lane / 4;
  return {(q & 4) + (lane / 2) % 4, (q & 2) * 2 + (lane % 2) * 2 + e};
}

// Metal's fast tanh, as reported: the exp ratio in float, NaN once e^2x
// overflows (x > ~44.4).
inline float fast_tanh(float x) {
  const float e = std::exp(2.0f * x);
  return (e - 1.0f) / (e + 1.0f);
}

} // namespace detail
} // namespace attn_msl

#endif // ATTN_TOOLS_MSL_EMULATOR_EMULATOR_PARAMS_H
