//===- SelectTier.cpp - attn-select-tier ----------------------------------===//
//
// Few query rows per K/V head (decode) go to the split-K SIMT tier, where
// K/V bandwidth is what counts; everything else to the tensor-core tier.
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

/// The decode tier's limits (DecodeTier.cpp): at most 16 rows per block,
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

/// Sets the tile sizes the op's schedule leaves unset (0), keeping the rest
/// of it.
void fillTiles(AttentionOp op, int64_t blockQ, int64_t blockKv) {
  ScheduleAttr s = op.getScheduleAttr();
  if (!s)
    s = ScheduleAttr::get(op.getContext(), 0, 0, 0, 0);
  op.setScheduleAttr(ScheduleAttr::get(
      op.getContext(), s.getBlockQ() ? s.getBlockQ() : blockQ,
      s.getBlockKv() ? s.getBlockKv() : blockKv, s.getWarps(), s.getStages()));
}

struct AttnSelectTierPass
    : mlir::attn::impl::AttnSelectTierBase<AttnSelectTierPass> {
  using AttnSelectTierBase::AttnSelectTierBase;

  void runOnOperation() override {
    getOperation().walk([&](AttentionOp op) {
      if (op->hasAttr("attn.tier"))
        return;
      int64_t sq = cast<MemRefType>(op.getQ().getType()).getDimSize(2);
      int64_t rows = ShapedType::isDynamic(sq) ? 0 : sq * op.getGroupSize();
      Builder b(op.getContext());
      if (rows == 0 || !fitsDecode(op, rows)) {
        op->setAttr("attn.tier", b.getStringAttr("wmma"));
        // The mma tier's tiles, measured on an H100 (bench/RESULTS.md):
        // 128-row tiles (two 16-row m-tiles per warp) beat 64 rows by
        // 8-15% at B4 S4096 and B32 S512; 64-row tiles stay ahead on grids
        // too small to fill the GPU (B1 S512), which attn-compile covers
        // with a second kernel. 64 keys per tile beat 32 by 2-7% at D128
        // too (S1k-16k, causal and not), but two such blocks (99 KiB each)
        // fit an SM only from sm_90 (228 KiB); below, 128 x 32 keeps two.
        // Past D128, two m-tiles exceed the registers.
        int64_t dims = std::max(op.getHeadDim(), op.getValueHeadDim());
        if (mmaTiles && dims <= 128)
          fillTiles(op, 128, dims <= 64 || sm >= 90 ? 64 : 32);
        return;
      }
      op->setAttr("attn.tier", b.getStringAttr("decode"));
      fillTiles(op, static_cast<int64_t>(llvm::PowerOf2Ceil(rows)), 0);
    });
  }
};

} // namespace
