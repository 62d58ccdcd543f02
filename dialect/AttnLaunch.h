//===- AttnLaunch.h - the parts of #attn.launch -----------------*- C++ -*-===//
//
// The element types of #attn.launch's array parameters (AttnAttrs.td):
// one factor of a grid or workspace dimension, and one kernel parameter.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_DIALECT_ATTNLAUNCH_H
#define ATTN_DIALECT_ATTNLAUNCH_H

#include "llvm/ADT/Hashing.h"

#include <cstdint>

namespace mlir::attn {

/// One factor of a dimension: ceildiv(size, value), or the constant `value`
/// when `size` is LaunchSize::Constant. A dimension is the product of the
/// terms with its `dim`; terms are kept sorted by `dim`.
struct LaunchTerm {
  unsigned dim = 0;
  LaunchSize size = LaunchSize::Constant;
  int64_t value = 1;

  static LaunchTerm of(unsigned dim, LaunchSize size, int64_t divisor = 1) {
    return {dim, size, divisor};
  }
  static LaunchTerm constant(unsigned dim, int64_t value) {
    return {dim, LaunchSize::Constant, value};
  }
  bool isConstant() const { return size == LaunchSize::Constant; }
  bool operator==(const LaunchTerm &other) const {
    return dim == other.dim && size == other.size && value == other.value;
  }
};

inline llvm::hash_code hash_value(const LaunchTerm &term) {
  return llvm::hash_combine(term.dim, static_cast<int32_t>(term.size),
                            term.value);
}

/// One kernel parameter: an operand's memref descriptor, the workspace's,
/// or (reserved) a TMA tensor map of an operand.
struct LaunchParam {
  LaunchParamKind kind = LaunchParamKind::Memref;
  LaunchOperand operand = LaunchOperand::Q; // unused for the workspace

  static LaunchParam memref(LaunchOperand operand) {
    return {LaunchParamKind::Memref, operand};
  }
  static LaunchParam workspace() {
    return {LaunchParamKind::Workspace, LaunchOperand::Q};
  }
  bool operator==(const LaunchParam &other) const {
    return kind == other.kind &&
           (kind == LaunchParamKind::Workspace || operand == other.operand);
  }
};

inline llvm::hash_code hash_value(const LaunchParam &param) {
  return llvm::hash_combine(
      static_cast<int32_t>(param.kind),
      param.kind == LaunchParamKind::Workspace
          ? 0
          : static_cast<int32_t>(param.operand));
}

} // namespace mlir::attn

#endif // ATTN_DIALECT_ATTNLAUNCH_H
