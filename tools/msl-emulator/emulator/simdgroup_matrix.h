//===- emulator/simdgroup_matrix.h - simdgroup_matrix -----------*- C++ -*-===//
//
// A part of metal_emulator.h, which includes the parts in order: each
// builds on those before it and is not included on its own.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_TOOLS_MSL_EMULATOR_EMULATOR_SIMDGROUP_MATRIX_H
#define ATTN_TOOLS_MSL_EMULATOR_EMULATOR_SIMDGROUP_MATRIX_H

#pragma clang system_header

//===----------------------------------------------------------------------===//
// simdgroup_matrix: 8x8 matrices spread over the 32 lanes of a simdgroup,
// two elements a lane (see lane_element_coord). Load, store and multiply are
// collectives that need the full simdgroup, as on the hardware.
//===----------------------------------------------------------------------===//

template <class T, int Cols, int Rows> struct simdgroup_matrix {
  static_assert(Cols == 8 && Rows == 8,
                "the emulator supports 8x8 simdgroup matrices only");
  static_assert(::attn_msl::detail::is_float_scalar<T>,
                "simdgroup_matrix holds float, half or bfloat");

  // Uninitialized in Metal; NaN here so that reading it shows.
  simdgroup_matrix() : lane_elements{T(NAN), T(NAN)} {}

  // Metal's scalar constructor makes a diagonal matrix.
  explicit simdgroup_matrix(T diagonal) {
    uint lane = ::attn_msl::detail::current_lane();
    for (uint e = 0; e < 2; ++e) {
      ::attn_msl::detail::MatrixCoord at =
          ::attn_msl::detail::lane_element_coord(lane, e);
      lane_elements[e] = at.row == at.col ? diagonal : T(0);
    }
  }

  vec<T, 2> &thread_elements() { return lane_elements; }
  const vec<T, 2> &thread_elements() const { return lane_elements; }

  // This lane's two elements.
  vec<T, 2> lane_elements;
};

typedef simdgroup_matrix<float, 8, 8> simdgroup_float8x8;
typedef simdgroup_matrix<half, 8, 8> simdgroup_half8x8;
typedef simdgroup_matrix<bfloat, 8, 8> simdgroup_bfloat8x8;

template <class T, int Cols, int Rows>
inline simdgroup_matrix<T, Cols, Rows> make_filled_simdgroup_matrix(T value) {
  simdgroup_matrix<T, Cols, Rows> m;
  m.lane_elements = vec<T, 2>{value, value};
  return m;
}

} // namespace metal

namespace attn_msl {
namespace detail {

inline std::string require_full_simdgroup(const char *construct,
                                          unsigned width) {
  if (width == kSimdWidth)
    return {};
  return std::string(construct) +
         " needs all 32 lanes, but this simdgroup "
         "has " +
         std::to_string(width) + " threads";
}

template <class T> struct MatrixTransferPayload {
  metal::simdgroup_matrix<T, 8, 8> *matrix;
  T *memory;
  ulong elements_per_row;
  ulong2 origin;
  bool transpose;
};

// Element (row, col) lives at memory[(origin.y + row) * elements_per_row +
// origin.x + col]; transposed, at the same place with row and col swapped.
// The origin is (column, row) in the memory's own coordinates.
template <class T>
size_t matrix_memory_offset(const MatrixTransferPayload<T> &p, MatrixCoord at) {
  ulong memory_row = p.transpose ? at.col : at.row;
  ulong memory_col = p.transpose ? at.row : at.col;
  return (p.origin.y + memory_row) * p.elements_per_row + p.origin.x +
         memory_col;
}

template <class T>
std::string check_uniform_transfer(const char *construct,
                                   SimdArrival *const *lanes) {
  const auto &first = payload_of<MatrixTransferPayload<T>>(lanes[0]);
  for (unsigned i = 1; i < kSimdWidth; ++i) {
    const auto &p = payload_of<MatrixTransferPayload<T>>(lanes[i]);
    if (p.memory != first.memory ||
        p.elements_per_row != first.elements_per_row ||
        p.origin.x != first.origin.x || p.origin.y != first.origin.y ||
        p.transpose != first.transpose)
      return std::string(construct) +
             " needs the same pointer, elements_per_row, origin and "
             "transpose in every lane, but lane " +
             std::to_string(i) + " differs from lane 0";
  }
  return {};
}

template <class T, bool Store>
std::string combine_matrix_transfer(SimdArrival *const *lanes, unsigned width) {
  const char *construct = Store ? "simdgroup_store" : "simdgroup_load";
  std::string error = require_full_simdgroup(construct, width);
  if (error.empty())
    error = check_uniform_transfer<T>(construct, lanes);
  if (!error.empty())
    return error;
  for (uint lane = 0; lane < kSimdWidth; ++lane) {
    auto &p = payload_of<MatrixTransferPayload<T>>(lanes[lane]);
    for (uint e = 0; e < 2; ++e) {
      size_t offset = matrix_memory_offset(p, lane_element_coord(lane, e));
      std::string fault_text =
          access_error(*lanes[lane]->thread, p.memory + offset, sizeof(T), Store);
      if (!fault_text.empty())
        return describe_thread(*lanes[lane]->thread) + ": " + fault_text;
      if (Store)
        p.memory[offset] = p.matrix->lane_elements[e];
      else
        p.matrix->lane_elements[e] = p.memory[offset];
    }
  }
  return {};
}

template <class TD, class TA, class TB, class TC> struct MultiplyPayload {
  metal::simdgroup_matrix<TD, 8, 8> *d;
  const metal::simdgroup_matrix<TA, 8, 8> *a;
  const metal::simdgroup_matrix<TB, 8, 8> *b;
  const metal::simdgroup_matrix<TC, 8, 8> *c; // nullptr: no accumulator
};

template <class M>
void gather_matrix(SimdArrival *const *lanes, float out[8][8], M getter) {
  for (uint lane = 0; lane < kSimdWidth; ++lane)
    for (uint e = 0; e < 2; ++e) {
      MatrixCoord at = lane_element_coord(lane, e);
      out[at.row][at.col] = float(getter(lanes[lane])->lane_elements[e]);
    }
}

// d = a * b + c with float products and a float running sum over k, then
// rounded to d's type. Everything is read before d is written, so d may be
// the same matrix as c (or a, b).
template <class TD, class TA, class TB, class TC>
std::string combine_multiply(SimdArrival *const *lanes, unsigned width) {
  using Payload = MultiplyPayload<TD, TA, TB, TC>;
  const char *construct = lanes[0]->construct;
  std::string error = require_full_simdgroup(construct, width);
  if (!error.empty())
    return error;
  float a[8][8], b[8][8], c[8][8] = {};
  gather_matrix(lanes, a,
                [](SimdArrival *s) { return payload_of<Payload>(s).a; });
  gather_matrix(lanes, b,
                [](SimdArrival *s) { return payload_of<Payload>(s).b; });
  if (payload_of<Payload>(lanes[0]).c)
    gather_matrix(lanes, c,
                  [](SimdArrival *s) { return payload_of<Payload>(s).c; });
  for (uint lane = 0; lane < kSimdWidth; ++lane)
    for (uint e = 0; e < 2; ++e) {
      MatrixCoord at = lane_element_coord(lane, e);
      float sum = c[at.row][at.col];
      for (int k = 0; k < 8; ++k)
        sum = std::fma(a[at.row][k], b[k][at.col], sum);
      payload_of<Payload>(lanes[lane]).d->lane_elements[e] = TD(sum);
    }
  return {};
}

} // namespace detail
} // namespace attn_msl

namespace metal {

// Metal loads and stores matrices from device or threadgroup memory only;
// one overload per address space, and a thread (or constant) pointer
// matches none but the refusing one below.
#define ATTN_MSL_MATRIX_TRANSFER(AS)                                           \
  template <class T, int Cols, int Rows>                                       \
  inline void simdgroup_load(                                                  \
      simdgroup_matrix<T, Cols, Rows> &d, const AS T *src,                     \
      ulong elements_per_row = Cols, ulong2 matrix_origin = ulong2{0, 0},      \
      bool transpose_matrix = false,                                           \
      ::attn_msl::detail::Site site = ATTN_MSL_CALL_SITE) {                    \
    ::attn_msl::detail::MatrixTransferPayload<T> payload{                      \
        &d, (T *)src, elements_per_row, matrix_origin, transpose_matrix};      \
    ::attn_msl::detail::simd_collective(                                       \
        "simdgroup_load", site,                                                \
        &::attn_msl::detail::combine_matrix_transfer<T, false>, &payload);     \
  }                                                                            \
  template <class T, int Cols, int Rows>                                       \
  inline void simdgroup_store(                                                 \
      const simdgroup_matrix<T, Cols, Rows> &d, AS T *dst,                     \
      ulong elements_per_row = Cols, ulong2 matrix_origin = ulong2{0, 0},      \
      bool transpose_matrix = false,                                           \
      ::attn_msl::detail::Site site = ATTN_MSL_CALL_SITE) {                    \
    ::attn_msl::detail::MatrixTransferPayload<T> payload{                      \
        const_cast<simdgroup_matrix<T, Cols, Rows> *>(&d), (T *)dst,           \
        elements_per_row, matrix_origin, transpose_matrix};                    \
    ::attn_msl::detail::simd_collective(                                       \
        "simdgroup_store", site,                                               \
        &::attn_msl::detail::combine_matrix_transfer<T, true>, &payload);      \
  }
#ifndef ATTN_MSL_ERASE_ADDRESS_SPACES
ATTN_MSL_MATRIX_TRANSFER(ATTN_MSL_AS_DEVICE)
ATTN_MSL_MATRIX_TRANSFER(ATTN_MSL_AS_THREADGROUP)
#else
ATTN_MSL_MATRIX_TRANSFER()
#endif
#undef ATTN_MSL_MATRIX_TRANSFER

#ifndef ATTN_MSL_ERASE_ADDRESS_SPACES
template <class T, int Cols, int Rows, class U,
          std::enable_if_t<::attn_msl::detail::address_space_of<U> == 0, int> =
              0>
inline void simdgroup_load(simdgroup_matrix<T, Cols, Rows> &, const U *,
                           ulong = Cols, ulong2 = ulong2{0, 0}, bool = false,
                           ::attn_msl::detail::Site = ATTN_MSL_CALL_SITE) {
  static_assert(::attn_msl::detail::dependent_false<U>,
                "simdgroup_load from thread memory: Metal loads a "
                "simdgroup_matrix from device or threadgroup memory only");
}
template <class T, int Cols, int Rows, class U,
          std::enable_if_t<::attn_msl::detail::address_space_of<U> == 0, int> =
              0>
inline void simdgroup_store(const simdgroup_matrix<T, Cols, Rows> &, U *,
                            ulong = Cols, ulong2 = ulong2{0, 0}, bool = false,
                            ::attn_msl::detail::Site = ATTN_MSL_CALL_SITE) {
  static_assert(::attn_msl::detail::dependent_false<U>,
                "simdgroup_store to thread memory: Metal stores a "
                "simdgroup_matrix to device or threadgroup memory only");
}
#endif

// Element types may differ (half or bfloat inputs, float accumulator).
template <class TD, class TA, class TB, class TC>
inline void simdgroup_multiply_accumulate(
    simdgroup_matrix<TD, 8, 8> &d, const simdgroup_matrix<TA, 8, 8> &a,
    const simdgroup_matrix<TB, 8, 8> &b, const simdgroup_matrix<TC, 8, 8> &c,
    ::attn_msl::detail::Site site = ATTN_MSL_CALL_SITE) {
  ::attn_msl::detail::MultiplyPayload<TD, TA, TB, TC> payload{&d, &a, &b, &c};
  ::attn_msl::detail::simd_collective(
      "simdgroup_multiply_accumulate", site,
      &::attn_msl::detail::combine_multiply<TD, TA, TB, TC>, &payload);
}

template <class TD, class TA, class TB>
inline void
simdgroup_multiply(simdgroup_matrix<TD, 8, 8> &d,
                   const simdgroup_matrix<TA, 8, 8> &a,
                   const simdgroup_matrix<TB, 8, 8> &b,
                   ::attn_msl::detail::Site site = ATTN_MSL_CALL_SITE) {
  ::attn_msl::detail::MultiplyPayload<TD, TA, TB, TD> payload{&d, &a, &b,
                                                              nullptr};
  ::attn_msl::detail::simd_collective(
      "simdgroup_multiply", site,
      &::attn_msl::detail::combine_multiply<TD, TA, TB, TD>, &payload);
}

} // namespace metal

#endif // ATTN_TOOLS_MSL_EMULATOR_EMULATOR_SIMDGROUP_MATRIX_H
