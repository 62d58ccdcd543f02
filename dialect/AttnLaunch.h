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
/// a capture's (the index-th memref the mod regions read), or a TMA
/// tensor map of an operand (AttnAttrs.td says which map).
struct LaunchParam {
  LaunchParamKind kind = LaunchParamKind::Memref;
  LaunchOperand operand = LaunchOperand::Q; // memref and tensor_map only
  unsigned index = 0;                       // capture only

  static LaunchParam memref(LaunchOperand operand) {
    return {LaunchParamKind::Memref, operand};
  }
  static LaunchParam workspace() {
    return {LaunchParamKind::Workspace, LaunchOperand::Q};
  }
  static LaunchParam tensorMap(LaunchOperand operand) {
    return {LaunchParamKind::TensorMap, operand};
  }
  static LaunchParam capture(unsigned index) {
    return {LaunchParamKind::Capture, LaunchOperand::Q, index};
  }
  bool operator==(const LaunchParam &other) const {
    return kind == other.kind && key() == other.key();
  }
  /// What tells two parameters of one kind apart.
  int64_t key() const {
    switch (kind) {
    case LaunchParamKind::Workspace:
      return 0;
    case LaunchParamKind::Capture:
      return index;
    default:
      return static_cast<int64_t>(operand);
    }
  }
  friend llvm::hash_code hash_value(const LaunchParam &param) {
    return llvm::hash_combine(static_cast<int32_t>(param.kind), param.key());
  }
};

} // namespace mlir::attn

#endif // ATTN_DIALECT_ATTNLAUNCH_H
