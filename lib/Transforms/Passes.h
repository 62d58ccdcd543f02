//===- Passes.h - attn target-independent passes ----------------*- C++ -*-===//

#ifndef ATTN_LIB_TRANSFORMS_PASSES_H
#define ATTN_LIB_TRANSFORMS_PASSES_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Pass/Pass.h"

namespace mlir::attn {

#define GEN_PASS_DECL
#include "lib/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "lib/Transforms/Passes.h.inc"

/// Marks the K/V loop built by attn-tile, which attn-split-kv rewrites.
inline constexpr llvm::StringLiteral kKVLoopAttrName = "attn.kv_loop";

} // namespace mlir::attn

#endif // ATTN_LIB_TRANSFORMS_PASSES_H
