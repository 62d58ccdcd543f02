//===- emulator/barriers.h - barriers ---------------------------*- C++ -*-===//
//
// A part of metal_emulator.h, which includes the parts in order: each
// builds on those before it and is not included on its own.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_TOOLS_MSL_EMULATOR_EMULATOR_BARRIERS_H
#define ATTN_TOOLS_MSL_EMULATOR_EMULATOR_BARRIERS_H

#pragma clang system_header

//===----------------------------------------------------------------------===//
// Barriers. Memory is coherent between fibers, so the flags only document.
//===----------------------------------------------------------------------===//

enum class mem_flags : unsigned {
  mem_none = 0,
  mem_device = 1,
  mem_threadgroup = 2,
  mem_texture = 4,
  mem_threadgroup_imageblock = 8,
  mem_object_data = 16,
};
constexpr mem_flags operator|(mem_flags a, mem_flags b) {
  return mem_flags(unsigned(a) | unsigned(b));
}

// Every thread of the threadgroup must reach the same barrier call.
inline void
threadgroup_barrier(mem_flags flags,
                    ::attn_msl::detail::Site site = ATTN_MSL_CALL_SITE) {
  using namespace ::attn_msl::detail;
  ThreadState &self = current_thread();
  self.barrier_site = site;
  self.barrier_flags = unsigned(flags);
  self.status = ThreadStatus::kAtBarrier;
  yield_to_scheduler();
}

} // namespace metal

namespace attn_msl {
namespace detail {

// A simdgroup_barrier with mem_threadgroup orders the simdgroup's
// threadgroup memory accesses (the race detector's simd epoch).
inline std::string combine_simdgroup_barrier(SimdArrival *const *lanes,
                                             unsigned) {
  const unsigned flags = *static_cast<const unsigned *>(lanes[0]->payload);
  if (t_checks && (flags & kMemThreadgroupFlag))
    ++t_checks->simd_epoch[lanes[0]->thread->simdgroup];
  return {};
}

template <class T> struct ValuePayload {
  T value;
  T result;
};

// A value plus a lane argument: source lane, xor mask or delta.
template <class T> struct ShufflePayload {
  T value;
  uint lane_arg;
  T result;
};

struct SumOp {
  template <class T> static T apply(T a, T b) { return a + b; }
};
struct ProductOp {
  template <class T> static T apply(T a, T b) { return a * b; }
};
struct MaxOp {
  template <class T> static T apply(T a, T b) { return metal::max(a, b); }
};
struct MinOp {
  template <class T> static T apply(T a, T b) { return metal::min(a, b); }
};
struct AndOp {
  template <class T> static T apply(T a, T b) { return a && b; }
};
struct OrOp {
  template <class T> static T apply(T a, T b) { return a || b; }
};

// Pairwise tree over the lanes, like a hardware reduction.
template <class T, class Op>
std::string combine_reduce(SimdArrival *const *lanes, unsigned width) {
  T partial[kSimdWidth];
  for (unsigned i = 0; i < width; ++i)
    partial[i] = payload_of<ValuePayload<T>>(lanes[i]).value;
  for (unsigned step = 1; step < width; step *= 2)
    for (unsigned i = 0; i + step < width; i += 2 * step)
      partial[i] = Op::apply(partial[i], partial[i + step]);
  for (unsigned i = 0; i < width; ++i)
    payload_of<ValuePayload<T>>(lanes[i]).result = partial[0];
  return {};
}

template <class T, bool Inclusive>
std::string combine_prefix_sum(SimdArrival *const *lanes, unsigned width) {
  T running = T(0);
  for (unsigned i = 0; i < width; ++i) {
    ValuePayload<T> &p = payload_of<ValuePayload<T>>(lanes[i]);
    T value = p.value;
    if (Inclusive)
      running = running + value;
    p.result = running;
    if (!Inclusive)
      running = running + value;
  }
  return {};
}

enum class ShuffleKind { kIndex, kXor, kDown, kUp, kBroadcast };

inline const char *shuffle_name(ShuffleKind kind) {
  switch (kind) {
  case ShuffleKind::kIndex:
    return "simd_shuffle";
  case ShuffleKind::kXor:
    return "simd_shuffle_xor";
  case ShuffleKind::kDown:
    return "simd_shuffle_down";
  case ShuffleKind::kUp:
    return "simd_shuffle_up";
  case ShuffleKind::kBroadcast:
    return "simd_broadcast";
  }
  return "simd_shuffle";
}

template <class T, ShuffleKind Kind>
std::string combine_shuffle(SimdArrival *const *lanes, unsigned width) {
  auto payload = [&](unsigned i) -> ShufflePayload<T> & {
    return payload_of<ShufflePayload<T>>(lanes[i]);
  };
  // Only simd_shuffle takes a per-lane source; Metal wants the broadcast
  // lane, xor mask and delta the same in every lane.
  if (Kind != ShuffleKind::kIndex)
    for (unsigned i = 1; i < width; ++i)
      if (payload(i).lane_arg != payload(0).lane_arg)
        return std::string(shuffle_name(Kind)) +
               " needs one lane argument for the whole simdgroup, but lane 0 "
               "passes " +
               std::to_string(payload(0).lane_arg) + " and lane " +
               std::to_string(i) + " passes " +
               std::to_string(payload(i).lane_arg);
  for (unsigned i = 0; i < width; ++i) {
    uint arg = payload(i).lane_arg;
    long source = 0;
    switch (Kind) {
    case ShuffleKind::kIndex:
    case ShuffleKind::kBroadcast:
      source = arg;
      break;
    case ShuffleKind::kXor:
      source = long(i ^ arg);
      break;
    case ShuffleKind::kDown:
      source = long(i) + arg;
      break;
    case ShuffleKind::kUp:
      source = long(i) - long(arg);
      break;
    }
    // Metal leaves the upper (down) or lower (up) delta lanes unchanged.
    if ((Kind == ShuffleKind::kDown && source >= long(kSimdWidth)) ||
        (Kind == ShuffleKind::kUp && source < 0)) {
      payload(i).result = payload(i).value;
      continue;
    }
    if (source < 0 || source >= long(width))
      return std::string(shuffle_name(Kind)) + ": lane " + std::to_string(i) +
             " reads lane " + std::to_string(source) +
             ", which does not exist in this simdgroup of " +
             std::to_string(width) + " threads";
    payload(i).result = payload(unsigned(source)).value;
  }
  return {};
}

template <class T, ShuffleKind Kind>
T simd_shuffle_collective(T value, uint lane_arg, Site site) {
  static_assert(is_arithmetic_like<T>,
                "SIMD functions take scalars or vectors of numbers");
  ShufflePayload<T> payload{value, lane_arg, value};
  simd_collective(shuffle_name(Kind), site, &combine_shuffle<T, Kind>,
                  &payload);
  return payload.result;
}

template <class T, class Op>
T simd_reduce_collective(const char *name, T value, Site site) {
  ValuePayload<T> payload{value, value};
  simd_collective(name, site, &combine_reduce<T, Op>, &payload);
  return payload.result;
}

} // namespace detail
} // namespace attn_msl

namespace metal {

// All lanes of the simdgroup must call the same SIMD function at the same
// place; the trailing `site` parameter is the emulator's, not MSL's.
#define ATTN_MSL_SIMD_REDUCTION(NAME, OP)                                      \
  template <class T>                                                           \
  inline T NAME(T data, ::attn_msl::detail::Site site = ATTN_MSL_CALL_SITE) {  \
    static_assert(::attn_msl::detail::is_arithmetic_like<T>,                   \
                  #NAME " takes a scalar or vector of numbers");               \
    return ::attn_msl::detail::simd_reduce_collective<T,                       \
                                                      ::attn_msl::detail::OP>( \
        #NAME, data, site);                                                    \
  }
ATTN_MSL_SIMD_REDUCTION(simd_sum, SumOp)
ATTN_MSL_SIMD_REDUCTION(simd_product, ProductOp)
ATTN_MSL_SIMD_REDUCTION(simd_max, MaxOp)
ATTN_MSL_SIMD_REDUCTION(simd_min, MinOp)
#undef ATTN_MSL_SIMD_REDUCTION

inline bool simd_all(bool value,
                     ::attn_msl::detail::Site site = ATTN_MSL_CALL_SITE) {
  return ::attn_msl::detail::simd_reduce_collective<bool,
                                                    ::attn_msl::detail::AndOp>(
      "simd_all", value, site);
}
inline bool simd_any(bool value,
                     ::attn_msl::detail::Site site = ATTN_MSL_CALL_SITE) {
  return ::attn_msl::detail::simd_reduce_collective<bool,
                                                    ::attn_msl::detail::OrOp>(
      "simd_any", value, site);
}

template <class T>
inline T
simd_prefix_exclusive_sum(T data,
                          ::attn_msl::detail::Site site = ATTN_MSL_CALL_SITE) {
  static_assert(::attn_msl::detail::is_arithmetic_like<T>,
                "simd_prefix_exclusive_sum takes numbers");
  ::attn_msl::detail::ValuePayload<T> payload{data, data};
  ::attn_msl::detail::simd_collective(
      "simd_prefix_exclusive_sum", site,
      &::attn_msl::detail::combine_prefix_sum<T, false>, &payload);
  return payload.result;
}
template <class T>
inline T
simd_prefix_inclusive_sum(T data,
                          ::attn_msl::detail::Site site = ATTN_MSL_CALL_SITE) {
  static_assert(::attn_msl::detail::is_arithmetic_like<T>,
                "simd_prefix_inclusive_sum takes numbers");
  ::attn_msl::detail::ValuePayload<T> payload{data, data};
  ::attn_msl::detail::simd_collective(
      "simd_prefix_inclusive_sum", site,
      &::attn_msl::detail::combine_prefix_sum<T, true>, &payload);
  return payload.result;
}

#define ATTN_MSL_SIMD_SHUFFLE(NAME, KIND, ARG)                                 \
  template <class T>                                                           \
  inline T NAME(T data, ushort ARG,                                            \
                ::attn_msl::detail::Site site = ATTN_MSL_CALL_SITE) {          \
    return ::attn_msl::detail::simd_shuffle_collective<                        \
        T, ::attn_msl::detail::ShuffleKind::KIND>(data, ARG, site);            \
  }
ATTN_MSL_SIMD_SHUFFLE(simd_shuffle, kIndex, simd_lane_id)
ATTN_MSL_SIMD_SHUFFLE(simd_shuffle_xor, kXor, mask)
ATTN_MSL_SIMD_SHUFFLE(simd_shuffle_down, kDown, delta)
ATTN_MSL_SIMD_SHUFFLE(simd_shuffle_up, kUp, delta)
ATTN_MSL_SIMD_SHUFFLE(simd_broadcast, kBroadcast, broadcast_lane_id)
#undef ATTN_MSL_SIMD_SHUFFLE

template <class T>
inline T
simd_broadcast_first(T data,
                     ::attn_msl::detail::Site site = ATTN_MSL_CALL_SITE) {
  return ::attn_msl::detail::simd_shuffle_collective<
      T, ::attn_msl::detail::ShuffleKind::kBroadcast>(data, 0, site);
}

// Every lane of the simdgroup must reach the same simdgroup_barrier call.
inline void
simdgroup_barrier(mem_flags flags,
                  ::attn_msl::detail::Site site = ATTN_MSL_CALL_SITE) {
  unsigned bits = unsigned(flags);
  ::attn_msl::detail::simd_collective(
      "simdgroup_barrier", site, &::attn_msl::detail::combine_simdgroup_barrier,
      &bits);
}

#endif // ATTN_TOOLS_MSL_EMULATOR_EMULATOR_BARRIERS_H
