//===- SelectTier.cpp - attn-select-tier ----------------------------------===//
//
// Few query rows per K/V head (decode) go to the split-K SIMT tier, where
// K/V bandwidth is what counts; everything else to the tensor-core tier
// the pipeline names. Every schedule default is chosen here.
//
//===----------------------------------------------------------------------===//

#include "codegen/nvptx/Passes.h"

#include "dialect/AttnDialect.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNSELECTTIER
#include "codegen/nvptx/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;

namespace {

/// The decode tier's limits (AttnToDecode.cpp): at most 16 rows per block,
/// D == Dv read by 1..32 lanes of 16 bytes each.
bool fitsDecode(AttentionOp op, int64_t rows) {
  if (rows > 16 || op.getHeadDim() != op.getValueHeadDim())
    return false;
  Type elt = cast<MemRefType>(op.getQ().getType()).getElementType();
  int64_t vec = 16 / (elt.getIntOrFloatBitWidth() / 8);
  int64_t lanes = op.getHeadDim() / vec;
  return op.getHeadDim() % vec == 0 && lanes >= 1 && lanes <= 32 &&
         32 % lanes == 0;
}

/// Fills the schedule fields the op leaves unset (0), keeping the rest.
void fillSchedule(AttentionOp op, int64_t blockQ, int64_t blockKv,
                  int64_t warps, int64_t stages) {
  ScheduleAttr s = op.getScheduleAttr();
  if (!s)
    s = ScheduleAttr::get(op.getContext(), 0, 0, 0, 0);
  auto pick = [](int64_t asked, int64_t fallback) {
    return asked ? asked : fallback;
  };
  op.setScheduleAttr(ScheduleAttr::get(
      op.getContext(), pick(s.getBlockQ(), blockQ),
      pick(s.getBlockKv(), blockKv), pick(s.getWarps(), warps),
      pick(s.getStages(), stages)));
}

/// The prefill tiles of `tier` for head dims up to `dims` on `sm`.
std::pair<int64_t, int64_t> prefillTiles(Tier tier, int64_t dims, int sm) {
  // The mma tier's tiles, measured on an H100 (bench/RESULTS.md): 128-row
  // tiles (two 16-row m-tiles per warp) beat 64 rows by 8-15% at B4 S4096
  // and B32 S512; 64-row tiles stay ahead on grids too small to fill the
  // GPU (B1 S512), which attn-compile covers with a second kernel. 64 keys
  // per tile beat 32 by 2-7% at D128 too (S1k-16k, causal and not), but
  // two such blocks (99 KiB each) fit an SM only from sm_90 (228 KiB);
  // below, 128 x 32 keeps two. Past D128, two m-tiles exceed the
  // registers.
  if (tier == Tier::MMA && dims <= 128)
    return {128, dims <= 64 || sm >= 90 ? 64 : 32};
  // The wmma tier's tile: 64 query rows (4 warps) x 32 keys. Measured on
  // an H100: 32 keys beat 64 (136 vs 114 TFLOP/s at D128, 107 vs 97 at
  // D64) because the smaller score tile and fewer registers let three
  // blocks share an SM instead of two; 128-row tiles were no faster. It
  // also keeps D = 128 inside Turing's 64 KiB.
  return {64, 32};
}

struct AttnSelectTierPass
    : mlir::attn::impl::AttnSelectTierBase<AttnSelectTierPass> {
  using AttnSelectTierBase::AttnSelectTierBase;

  void runOnOperation() override {
    std::optional<Tier> prefillTier = symbolizeTier(prefill);
    if (!prefillTier || *prefillTier == Tier::Decode) {
      getOperation().emitError()
          << "attn-select-tier: option 'prefill' must be mma or wmma, got '"
          << prefill << "'";
      return signalPassFailure();
    }
    getOperation().walk([&](AttentionOp op) {
      Tier tier;
      if (auto chosen = op->getAttrOfType<TierAttr>(kTierAttrName)) {
        tier = chosen.getValue();
      } else {
        int64_t sq = cast<MemRefType>(op.getQ().getType()).getDimSize(2);
        int64_t rows =
            ShapedType::isDynamic(sq) ? 0 : sq * op.getGroupSize();
        tier = rows != 0 && fitsDecode(op, rows) ? Tier::Decode
                                                 : *prefillTier;
        op->setAttr(kTierAttrName, TierAttr::get(op.getContext(), tier));
      }
      if (tier == Tier::Decode) {
        int64_t sq = cast<MemRefType>(op.getQ().getType()).getDimSize(2);
        int64_t rows = ShapedType::isDynamic(sq) ? 16 : sq * op.getGroupSize();
        // The decode tier reads keys one at a time; the nest's K/V tile
        // only bounds its loop.
        fillSchedule(op, static_cast<int64_t>(llvm::PowerOf2Ceil(rows)), 32,
                     0, 0);
        return;
      }
      int64_t dims = std::max(op.getHeadDim(), op.getValueHeadDim());
      auto [blockQ, blockKv] = prefillTiles(tier, dims, sm);
      ScheduleAttr asked = op.getScheduleAttr();
      int64_t rows = asked && asked.getBlockQ() ? asked.getBlockQ() : blockQ;
      fillSchedule(op, blockQ, blockKv, defaultWarps(tier, rows),
                   defaultStages(sm));
    });
  }
};

} // namespace

int64_t mlir::attn::defaultWarps(Tier tier, int64_t blockQ) {
  return tier == Tier::MMA ? std::min<int64_t>(4, blockQ / 16) : blockQ / 16;
}

int64_t mlir::attn::defaultStages(int sm) { return sm >= 80 ? 2 : 1; }
