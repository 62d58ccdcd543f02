//===- CheckKernels.h - the rules of a kernel function ----------*- C++ -*-===//
//
// A spec's kernel is a func.func holding attn ops: every target names its
// entry points after it and calls it with no result. These rules are
// checked once here, by every path (attn-to-cpu, attn-to-ptx, the MSL
// translation, attn-run, attn-compile), each error naming the rule:
//   - the function's name is a C identifier ([A-Za-z_][A-Za-z0-9_]*): it
//     becomes PTX, MSL and C symbol names;
//   - it returns nothing (the kernels write their outputs);
//   - it holds at most one attn.attention and at most one
//     attn.cache_append (an append may feed the attention after it).
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_LIB_TRANSFORMS_CHECKKERNELS_H
#define ATTN_LIB_TRANSFORMS_CHECKKERNELS_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"

namespace mlir::attn {

/// Whether `name` is a C identifier.
bool isCIdentifier(StringRef name);

/// Checks one function holding attn ops against the rules above.
LogicalResult checkKernelFunction(func::FuncOp func);

/// checkKernelFunction on each function of `module` that holds an attn op.
LogicalResult checkKernelFunctions(ModuleOp module);

} // namespace mlir::attn

#endif // ATTN_LIB_TRANSFORMS_CHECKKERNELS_H
