//===- MSLTypes.h - element types as the msl tier writes them ---*- C++ -*-===//

#ifndef ATTN_CODEGEN_MSL_MSLTYPES_H
#define ATTN_CODEGEN_MSL_MSLTYPES_H

#include "mlir/IR/Types.h"

#include <string>

namespace mlir::attn::msl {

/// MSL's name of an element type: half, bfloat or float.
inline std::string mslType(Type t) {
  if (t.isF16())
    return "half";
  if (t.isBF16())
    return "bfloat";
  return "float";
}

/// The launch facts' name of an element type: f16, bf16 or f32.
inline StringRef dtypeName(Type t) {
  return t.isF16() ? "f16" : t.isBF16() ? "bf16" : "f32";
}

} // namespace mlir::attn::msl

#endif // ATTN_CODEGEN_MSL_MSLTYPES_H
