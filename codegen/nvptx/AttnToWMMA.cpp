//===- AttnToWMMA.cpp - attn-to-wmma: the wmma tier -----------------------===//
//
// The first NVIDIA tier (sm_75+): the prefill skeleton with WMMA tile
// products and the scores in shared memory (PrefillKernel.h names the
// parts).
//
//===----------------------------------------------------------------------===//

#include "codegen/nvptx/Passes.h"

#include "codegen/nvptx/PrefillKernel.h"
#include "codegen/nvptx/Target.h"

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
    ModuleOp module = getOperation();
    FailureOr<int> sm = parseChip(chip);
    if (failed(sm)) {
      module.emitError() << "option 'chip' must be sm_XY with XY in "
                            "[70, 120] (e.g. sm_80, sm_90a), got '"
                         << chip << "'";
      return signalPassFailure();
    }
    if (*sm < minimumSm(Tier::WMMA)) {
      module.emitError() << "the wmma tier needs sm_75 or newer (f16 WMMA "
                            "with f32 accumulation); got "
                         << chip;
      return signalPassFailure();
    }
    // Padded tiles: the swizzle serves ldmatrix, which WMMA loads do not
    // use.
    PrefillParts parts{Tier::WMMA, MmaProvider::WMMA, SharedLayout::Padded,
                       CopyPipeline::CpAsyncRing, ScoreStage::Shared};
    if (failed(lowerPrefillNests(module, parts, *sm, getArgument())))
      return signalPassFailure();
  }
};

} // namespace
