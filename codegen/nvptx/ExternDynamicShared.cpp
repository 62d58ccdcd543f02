//===- ExternDynamicShared.cpp - attn-extern-dynamic-shared ---------------===//

#include "codegen/nvptx/Passes.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNEXTERNDYNAMICSHARED
#include "codegen/nvptx/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;

namespace {
struct AttnExternDynamicSharedPass
    : mlir::attn::impl::AttnExternDynamicSharedBase<
          AttnExternDynamicSharedPass> {
  void runOnOperation() override {
    constexpr unsigned kSharedAddressSpace = 3;
    // wgmma reads tiles through 128-byte-swizzle descriptors, whose
    // 1024-byte atoms the kernels place at multiples of 1024 from the
    // start of dynamic shared memory: that start must be 1024-aligned.
    bool wgmma = false;
    getOperation().walk([&](NVVM::WgmmaFenceAlignedOp) { wgmma = true; });
    getOperation().walk([&](LLVM::GlobalOp global) {
      auto array = dyn_cast<LLVM::LLVMArrayType>(global.getGlobalType());
      if (global.getAddrSpace() == kSharedAddressSpace && array &&
          array.getNumElements() == 0) {
        global.setLinkage(LLVM::Linkage::External);
        if (wgmma)
          global.setAlignment(1024);
      }
    });
  }
};
} // namespace
