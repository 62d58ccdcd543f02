//===- CheckKernels.cpp - attn-check-kernels ------------------------------===//

#include "lib/Transforms/CheckKernels.h"

#include "lib/Transforms/Passes.h"
#include "llvm/ADT/StringExtras.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNCHECKKERNELS
#include "lib/Transforms/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;

bool mlir::attn::isCIdentifier(StringRef name) {
  if (name.empty() || !(llvm::isAlpha(name[0]) || name[0] == '_'))
    return false;
  return llvm::all_of(name,
                      [](char c) { return llvm::isAlnum(c) || c == '_'; });
}

// The L0 attn ops anywhere in `func`, by kind.
namespace {
struct AttnOpCounts {
  int64_t attentions = 0, appends = 0, merges = 0;
  bool any() const { return attentions || appends || merges; }
};
} // namespace

static AttnOpCounts countAttnOps(func::FuncOp func) {
  AttnOpCounts counts;
  func.walk([&](Operation *op) {
    counts.attentions += isa<AttentionOp>(op);
    counts.appends += isa<CacheAppendOp>(op);
    counts.merges += isa<MergeStatesOp>(op);
  });
  return counts;
}

LogicalResult mlir::attn::checkKernelFunction(func::FuncOp func) {
  if (!isCIdentifier(func.getSymName()))
    return func.emitError() << "kernel function name '" << func.getSymName()
                            << "' must be a C identifier "
                               "([A-Za-z_][A-Za-z0-9_]*): the kernels and "
                               "their C functions are named after it";
  if (func.getNumResults() != 0)
    return func.emitError() << "kernel function '" << func.getSymName()
                            << "' must return nothing (it returns "
                            << func.getNumResults()
                            << " values); the kernels write their outputs";
  AttnOpCounts counts = countAttnOps(func);
  if (counts.attentions > 1 || counts.appends > 1 || counts.merges > 1)
    return func.emitError() << "kernel function '" << func.getSymName()
                            << "' holds " << counts.attentions
                            << " attn.attention, " << counts.appends
                            << " attn.cache_append and " << counts.merges
                            << " attn.merge_states; a kernel function holds "
                               "at most one of each";
  return success();
}

LogicalResult mlir::attn::checkKernelFunctions(ModuleOp module) {
  for (auto func : module.getOps<func::FuncOp>())
    if (countAttnOps(func).any() && failed(checkKernelFunction(func)))
      return failure();
  return success();
}

namespace {
struct AttnCheckKernelsPass
    : mlir::attn::impl::AttnCheckKernelsBase<AttnCheckKernelsPass> {
  void runOnOperation() override {
    if (failed(checkKernelFunctions(getOperation())))
      signalPassFailure();
  }
};
} // namespace
