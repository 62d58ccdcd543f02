//===- TensorMapParams.cpp - attn-tensor-map-params -----------------------===//
//
// TMA tensor maps reach a kernel by value: each is a 128-byte, 64-aligned
// `.param` the kernel takes the address of (CUDA's __grid_constant__), so
// the launch's copy is what cp.async.bulk.tensor reads. The tiers mark the
// leading parameters that are maps; this pass, after convert-gpu-to-nvvm
// (which drops argument attributes it does not know), gives them the LLVM
// attributes that say so.
//
//===----------------------------------------------------------------------===//

#include "codegen/nvptx/Passes.h"

#include "dialect/AttnDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNTENSORMAPPARAMS
#include "codegen/nvptx/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;

namespace {
/// A CUtensorMap: 128 bytes, aligned to 64.
constexpr int64_t kTensorMapBytes = 128, kTensorMapAlign = 64;

struct AttnTensorMapParamsPass
    : mlir::attn::impl::AttnTensorMapParamsBase<AttnTensorMapParamsPass> {
  void runOnOperation() override {
    WalkResult result = getOperation().walk([&](LLVM::LLVMFuncOp func) {
      auto count = func->getAttrOfType<IntegerAttr>(kTensorMapParamsAttrName);
      if (!count)
        return WalkResult::advance();
      if (!func->hasAttr(NVVM::NVVMDialect::getKernelFuncAttrName())) {
        func.emitError() << "'" << kTensorMapParamsAttrName
                         << "' on a function that is not a kernel";
        return WalkResult::interrupt();
      }
      MLIRContext *ctx = func.getContext();
      Builder b(ctx);
      auto map = LLVM::LLVMArrayType::get(IntegerType::get(ctx, 8),
                                          kTensorMapBytes);
      for (int64_t i = 0; i < count.getInt(); ++i) {
        func.setArgAttr(i, LLVM::LLVMDialect::getByValAttrName(),
                        TypeAttr::get(map));
        func.setArgAttr(i, LLVM::LLVMDialect::getAlignAttrName(),
                        b.getI64IntegerAttr(kTensorMapAlign));
        func.setArgAttr(i, NVVM::NVVMDialect::getGridConstantAttrName(),
                        UnitAttr::get(ctx));
      }
      func->removeAttr(kTensorMapParamsAttrName);
      return WalkResult::advance();
    });
    if (result.wasInterrupted())
      signalPassFailure();
  }
};
} // namespace
