//===- ModsToEmitC.h - score_mod / mask_mod regions as MSL functions -----===//
//
// The msl tier prints a spec's mod regions through upstream EmitC rather
// than a private printer: the region becomes a func.func, upstream's
// arith-to-emitc and func-to-emitc patterns (with attn's patterns for
// capture loads and Metal's math functions) convert it, and EmitC's C++
// emitter prints it as an inline function the kernels call per score:
//
//   inline float NAME(float score, int32_t b, int32_t h, int32_t q_idx,
//                     int32_t kv_idx, attn_capture_f32 capture0, ...)
//   inline bool NAME(int32_t b, int32_t h, int32_t q_idx, int32_t kv_idx,
//                    ...)
//
// Each capture is a `device const T *` (the typedef attn_capture_<T>: an
// opaque type, since EmitC has no address spaces) followed by one int32_t
// per dynamic dim (`captureN_sizeD`). Positions and `index` values are
// 32-bit, as the kernels' own positions.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_CODEGEN_MSL_MODSTOEMITC_H
#define ATTN_CODEGEN_MSL_MODSTOEMITC_H

#include "dialect/AttnMods.h"
#include "mlir/IR/BuiltinTypes.h"

#include <string>

namespace mlir::attn {

/// The MSL type name of a capture's elements, or "" for a type the msl
/// tier cannot load (f16, bf16, f64 and integers wider than 64 bits).
std::string mslCaptureElementType(Type elt);

/// The typedef the printed functions use for a capture of element type
/// `elt`: `typedef device const T *attn_capture_<T>;`.
std::string mslCaptureTypedef(Type elt);

/// The (capture, dim) of each dynamic dim of `captureTypes`, in the one
/// order the printed functions take them and a kernel's capture_sizes
/// buffer holds them.
SmallVector<std::pair<unsigned, unsigned>>
captureDynamicDims(ArrayRef<MemRefType> captureTypes);

/// Prints `region` (a verified score_mod or mask_mod of `anchor`, whose
/// trailing arguments are captures of `captureTypes`) as the inline MSL
/// function `name`. Fails with a diagnostic on `anchor` naming what the
/// msl tier cannot print (an f16/bf16/f64 value, a math op Metal has no
/// function for).
FailureOr<std::string> printModAsMSL(Operation *anchor, Region &region,
                                     ModKind kind, StringRef name,
                                     ArrayRef<MemRefType> captureTypes);

} // namespace mlir::attn

#endif // ATTN_CODEGEN_MSL_MODSTOEMITC_H
