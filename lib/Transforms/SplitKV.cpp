//===- SplitKV.cpp - attn-split-kv: flash-decoding split of K/V loops -----===//
//
// Rewrites each K/V loop of attn-tile,
//
//   %r:3 = scf.for %j = %lo to %hi step Bc iter_args(init) { body }
//
// into partial states over disjoint K/V ranges and their merge:
//
//   %parts:3 = scf.forall (%s) in (N) shared_outs(m[N,Br], l[N,Br], acc[N,Br,Dv]) {
//     %p:3 = scf.for %j = lo + s*span to min(hi, lo + (s+1)*span) step Bc
//              iter_args(attn.init_state) { body }
//     insert %p into slot s
//   }
//   %r:3 = scf.for %s = 0 to N iter_args(attn.init_state) {
//     attn.merge (state), (slot s)
//   }
//
// The partials are independent (a GPU runs them as separate blocks writing a
// workspace); the merge runs in split order, so a fixed split count gives
// results that do not depend on scheduling.
//
//===----------------------------------------------------------------------===//

#include "lib/Transforms/Passes.h"

#include "dialect/AttnDialect.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"
#include "mlir/IR/Matchers.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNSPLITKV
#include "lib/Transforms/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;

namespace {

Value cst(ImplicitLocOpBuilder &b, int64_t v) {
  return arith::ConstantIndexOp::create(b, v);
}

/// Slot `s` of a [N, ...] partial-state tensor, as a tensor of `type`.
Value extractSlot(ImplicitLocOpBuilder &b, Value parts, Value s,
                  RankedTensorType type) {
  SmallVector<OpFoldResult> offsets{s}, sizes{b.getIndexAttr(1)},
      strides(type.getRank() + 1, b.getIndexAttr(1));
  for (int64_t d : type.getShape()) {
    offsets.push_back(b.getIndexAttr(0));
    sizes.push_back(b.getIndexAttr(d));
  }
  return tensor::ExtractSliceOp::create(b, type, parts, offsets, sizes,
                                        strides);
}

void insertSlot(ImplicitLocOpBuilder &b, Value value, Value parts, Value s) {
  auto type = cast<RankedTensorType>(value.getType());
  SmallVector<OpFoldResult> offsets{s}, sizes{b.getIndexAttr(1)},
      strides(type.getRank() + 1, b.getIndexAttr(1));
  for (int64_t d : type.getShape()) {
    offsets.push_back(b.getIndexAttr(0));
    sizes.push_back(b.getIndexAttr(d));
  }
  tensor::ParallelInsertSliceOp::create(b, value, parts, offsets, sizes,
                                        strides);
}

struct AttnSplitKVPass : mlir::attn::impl::AttnSplitKVBase<AttnSplitKVPass> {
  using AttnSplitKVBase::AttnSplitKVBase;

  // 0 means "not given": options built from an AttnSplitKVOptions struct
  // mark every field as given, so presence cannot be read from hasValue().
  bool hasSplits() const { return numSplits != 0; }
  bool hasChunk() const { return kvChunk != 0; }

  LogicalResult checkOptions(Operation *anchor) {
    if (numSplits < 0)
      return anchor->emitError()
             << "option 'num-splits' must be >= 1, got " << int64_t(numSplits);
    if (kvChunk < 0)
      return anchor->emitError()
             << "option 'kv-chunk' must be >= 1, got " << int64_t(kvChunk);
    if (hasSplits() == hasChunk())
      return anchor->emitError()
             << "attn-split-kv needs exactly one of option 'num-splits' or "
                "option 'kv-chunk' (>= 1)";
    return success();
  }

  LogicalResult split(scf::ForOp loop) {
    std::optional<int64_t> step = getConstantIntValue(loop.getStep());
    if (!step)
      return loop.emitError("K/V loop has a non-constant step");
    const int64_t bc = *step;
    if (hasChunk() && kvChunk % bc != 0)
      return loop.emitError()
             << "option 'kv-chunk' (" << int64_t(kvChunk)
             << ") must be a multiple of the K/V tile size (" << bc << ")";

    ImplicitLocOpBuilder b(loop.getLoc(), loop);
    auto rowType = cast<RankedTensorType>(loop.getResult(0).getType());
    auto accType = cast<RankedTensorType>(loop.getResult(2).getType());
    const int64_t br = accType.getDimSize(0), dv = accType.getDimSize(1);
    Value lo = loop.getLowerBound(), hi = loop.getUpperBound();

    Value range = arith::SubIOp::create(b, hi, lo);
    Value length = arith::MaxSIOp::create(b, range, cst(b, 0));
    Value tiles = arith::CeilDivSIOp::create(b, length, cst(b, bc));
    Value splits, tilesPerSplit;
    if (hasSplits()) {
      splits = cst(b, numSplits);
      tilesPerSplit = arith::CeilDivSIOp::create(b, tiles, splits);
    } else {
      tilesPerSplit = cst(b, kvChunk / bc);
      splits = arith::CeilDivSIOp::create(b, tiles, tilesPerSplit);
    }
    Value span = arith::MulIOp::create(b, tilesPerSplit, cst(b, bc));

    Type f32 = b.getF32Type();
    auto rowParts = tensor::EmptyOp::create(
        b, ArrayRef<int64_t>{ShapedType::kDynamic, br}, f32, ValueRange{splits});
    auto accParts = tensor::EmptyOp::create(
        b, ArrayRef<int64_t>{ShapedType::kDynamic, br, dv}, f32,
        ValueRange{splits});
    auto forall = scf::ForallOp::create(
        b, ArrayRef<OpFoldResult>{splits},
        ValueRange{rowParts, rowParts, accParts}, std::nullopt);
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(forall.getBody());
      Value s = forall.getInductionVar(0);
      Value splitLo =
          arith::AddIOp::create(b, lo, arith::MulIOp::create(b, s, span));
      Value splitHi = arith::MinSIOp::create(
          b, arith::AddIOp::create(b, splitLo, span), hi);
      auto init = InitStateOp::create(b, br, dv);
      auto part = cast<scf::ForOp>(b.clone(*loop));
      part->removeAttr(kKVLoopAttrName);
      part.setLowerBound(splitLo);
      part.setUpperBound(splitHi);
      part.getInitArgsMutable().assign(
          ValueRange{init.getMax(), init.getSum(), init.getAcc()});
      b.setInsertionPointToStart(forall.getTerminator().getBody());
      for (unsigned i = 0; i < 3; ++i)
        insertSlot(b, part.getResult(i), forall.getRegionIterArgs()[i], s);
    }

    auto init = InitStateOp::create(b, br, dv);
    Value firstSplit = cst(b, 0), oneSplit = cst(b, 1);
    auto merge = scf::ForOp::create(
        b, firstSplit, splits, oneSplit,
        ValueRange{init.getMax(), init.getSum(), init.getAcc()});
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(merge.getBody());
      Value s = merge.getInductionVar();
      Value m = extractSlot(b, forall.getResult(0), s, rowType);
      Value l = extractSlot(b, forall.getResult(1), s, rowType);
      Value acc = extractSlot(b, forall.getResult(2), s, accType);
      auto merged = MergeOp::create(
          b, rowType, rowType, accType, merge.getRegionIterArg(0),
          merge.getRegionIterArg(1), merge.getRegionIterArg(2), m, l, acc);
      scf::YieldOp::create(b, merged.getResults());
    }
    loop.replaceAllUsesWith(merge.getResults());
    loop.erase();
    return success();
  }

  void runOnOperation() override {
    SmallVector<scf::ForOp> loops;
    getOperation().walk([&](scf::ForOp loop) {
      if (loop->hasAttr(kKVLoopAttrName))
        loops.push_back(loop);
    });
    if (failed(checkOptions(getOperation())))
      return signalPassFailure();
    for (scf::ForOp loop : loops)
      if (failed(split(loop)))
        return signalPassFailure();
  }
};

} // namespace
