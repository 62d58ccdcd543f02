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

// The attn ops anywhere in `func`.
static std::pair<int64_t, int64_t> countAttnOps(func::FuncOp func) {
  int64_t attentions = 0, appends = 0;
  func.walk([&](Operation *op) {
    attentions += isa<AttentionOp>(op);
    appends += isa<CacheAppendOp>(op);
  });
  return {attentions, appends};
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
  auto [attentions, appends] = countAttnOps(func);
  if (attentions > 1 || appends > 1)
    return func.emitError() << "kernel function '" << func.getSymName()
                            << "' holds " << attentions
                            << " attn.attention and " << appends
                            << " attn.cache_append; a kernel function holds "
                               "at most one of each";
  return success();
}

LogicalResult mlir::attn::checkKernelFunctions(ModuleOp module) {
  for (auto func : module.getOps<func::FuncOp>())
    if (countAttnOps(func) != std::pair<int64_t, int64_t>(0, 0) &&
        failed(checkKernelFunction(func)))
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
