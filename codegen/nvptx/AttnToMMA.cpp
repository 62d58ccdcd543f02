//===- AttnToMMA.cpp - attn-to-mma: the mma tier --------------------------===//
//
// The Ampere tier (sm_80+): the prefill skeleton with mma.sync + ldmatrix
// tile products on swizzled tiles and the scores and online softmax in
// registers (PrefillKernel.h names the parts).
//
//===----------------------------------------------------------------------===//

#include "codegen/nvptx/Passes.h"

#include "codegen/nvptx/PrefillKernel.h"
#include "codegen/nvptx/Target.h"

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
    ModuleOp module = getOperation();
    FailureOr<int> sm = parseChip(chip);
    if (failed(sm)) {
      module.emitError() << "option 'chip' must be sm_XY with XY in "
                            "[70, 120] (e.g. sm_80, sm_90a), got '"
                         << chip << "'";
      return signalPassFailure();
    }
    if (*sm < minimumSm(Tier::MMA)) {
      module.emitError() << "the mma tier needs sm_80 or newer (mma.sync, "
                            "ldmatrix, cp.async); got "
                         << chip;
      return signalPassFailure();
    }
    PrefillParts parts{Tier::MMA, MmaProvider::MmaSync, SharedLayout::Swizzled,
                       CopyPipeline::CpAsyncRing, ScoreStage::Registers};
    if (failed(lowerPrefillNests(module, parts, *sm, getArgument())))
      return signalPassFailure();
  }
};

} // namespace
