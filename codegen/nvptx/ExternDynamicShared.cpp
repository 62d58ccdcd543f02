//===- ExternDynamicShared.cpp - attn-extern-dynamic-shared ---------------===//

#include "codegen/nvptx/Passes.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

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
    getOperation().walk([](LLVM::GlobalOp global) {
      auto array = dyn_cast<LLVM::LLVMArrayType>(global.getGlobalType());
      if (global.getAddrSpace() == kSharedAddressSpace && array &&
          array.getNumElements() == 0)
        global.setLinkage(LLVM::Linkage::External);
    });
  }
};
} // namespace
