//===- AttnToWMMA.cpp - attn-to-wmma: the wmma tier -----------------------===//
//
// The first NVIDIA tier (sm_75+): the prefill skeleton with WMMA tile
// products and the scores in shared memory (PrefillKernel.h names the
// parts).
//
//===----------------------------------------------------------------------===//

#include "codegen/nvptx/Passes.h"

#include "codegen/nvptx/PrefillKernel.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNTOWMMA
#include "codegen/nvptx/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::nvptx;

namespace {

struct AttnToWMMAPass : attn::impl::AttnToWMMABase<AttnToWMMAPass> {
  using AttnToWMMABase::AttnToWMMABase;

  void runOnOperation() override {
    // Padded tiles: the swizzle serves ldmatrix, which WMMA loads do not
    // use.
    PrefillParts parts{Tier::WMMA, MmaProvider::WMMA, SharedLayout::Padded,
                       CopyPipeline::CpAsyncRing, ScoreStage::Shared};
    if (failed(lowerPrefillNests(getOperation(), parts, chip, getArgument())))
      return signalPassFailure();
  }
};

} // namespace
