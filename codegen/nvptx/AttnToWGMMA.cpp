//===- AttnToWGMMA.cpp - attn-to-wgmma: the wgmma tier --------------------===//
//
// The Hopper tier (sm_90a): the prefill skeleton with warpgroup MMA
// products read from 64-column swizzled blocks in shared memory and the
// scores and online softmax in registers (PrefillKernel.h names the parts).
//
//===----------------------------------------------------------------------===//

#include "codegen/nvptx/Passes.h"

#include "codegen/nvptx/PrefillKernel.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNTOWGMMA
#include "codegen/nvptx/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::nvptx;

namespace {

struct AttnToWGMMAPass : attn::impl::AttnToWGMMABase<AttnToWGMMAPass> {
  using AttnToWGMMABase::AttnToWGMMABase;

  void runOnOperation() override {
    // The copies, warp roles and Q K^T ahead: the nest's schedule
    // (resolveWgmmaPipeline, Passes.h).
    PrefillParts parts{Tier::WGMMA, MmaProvider::Wgmma,
                       SharedLayout::SwizzledBlocks, CopyPipeline::Staggered,
                       ScoreStage::Registers};
    if (failed(lowerPrefillNests(getOperation(), parts, chip, getArgument())))
      return signalPassFailure();
  }
};

} // namespace
