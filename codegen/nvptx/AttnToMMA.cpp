//===- AttnToMMA.cpp - attn-to-mma: the mma tier --------------------------===//
//
// The Ampere tier (sm_80+): the prefill skeleton with mma.sync + ldmatrix
// tile products on swizzled tiles and the scores and online softmax in
// registers (PrefillKernel.h names the parts).
//
//===----------------------------------------------------------------------===//

#include "codegen/nvptx/Passes.h"

#include "codegen/nvptx/PrefillKernel.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNTOMMA
#include "codegen/nvptx/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::nvptx;

namespace {

struct AttnToMMAPass : attn::impl::AttnToMMABase<AttnToMMAPass> {
  using AttnToMMABase::AttnToMMABase;

  void runOnOperation() override {
    PrefillParts parts{Tier::MMA, MmaProvider::MmaSync, SharedLayout::Swizzled,
                       CopyPipeline::CpAsyncRing, ScoreStage::Registers};
    if (failed(lowerPrefillNests(getOperation(), parts, chip, getArgument())))
      return signalPassFailure();
  }
};

} // namespace
