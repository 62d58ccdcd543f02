//===- Tile.cpp - attn-tile: attn.attention -> online-softmax loop
//---------===//
//
// L0 -> L1. One attn.attention becomes
//
//   scf.forall (b, h, t) in (B, Hkv, ceil(G * Sq / Br)) {
//     q tile; state = init
//     scf.for j in [lo, hi) step Bc iter_args(state) {   // attn.kv_loop
//       k, v tiles; s = qk; s = mask(s); p, state' = online_softmax; pv
//     }
//     o tile, lse tile = finalize(state[, load_sink]); store
//   }
//
// [lo, hi) is the key range the tile's queries can see under the mask,
// rounded out to whole K/V tiles, so tiles that are wholly masked are never
// visited.
//
//===----------------------------------------------------------------------===//

#include "lib/Transforms/Passes.h"

#include "dialect/AttnDialect.h"
#include "dialect/AttnSemantics.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNTILE
#include "lib/Transforms/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;

namespace {

/// The largest tile side: bounds the per-tile state held on chip.
constexpr int64_t kMaxTile = 256;

/// Checks a tile size from `origin` ("option 'block-q'", ...).
LogicalResult checkTileSize(Operation *op, StringRef origin, int64_t size) {
  if (size >= 1 && size <= kMaxTile && llvm::isPowerOf2_64(size))
    return success();
  return op->emitError() << origin << " must be a power of two in [1, "
                         << kMaxTile << "], got " << size;
}

Value dimOf(ImplicitLocOpBuilder &b, Value memref, int64_t dim) {
  return memref::DimOp::create(b, memref, dim);
}

Value cst(ImplicitLocOpBuilder &b, int64_t v) {
  return arith::ConstantIndexOp::create(b, v);
}

/// Sequence `seq`'s first row and length in a packed form:
/// offsets[seq] and max(offsets[seq + 1] - offsets[seq], 0).
std::pair<Value, Value> sequenceRange(ImplicitLocOpBuilder &b, Value offsets,
                                      Value seq) {
  Value next = arith::AddIOp::create(b, seq, cst(b, 1));
  Value first = memref::LoadOp::create(b, offsets, ValueRange{seq});
  Value end = memref::LoadOp::create(b, offsets, ValueRange{next});
  first = arith::IndexCastOp::create(b, b.getIndexType(), first);
  end = arith::IndexCastOp::create(b, b.getIndexType(), end);
  Value len = arith::SubIOp::create(b, end, first);
  return {first, arith::MaxSIOp::create(b, len, cst(b, 0))};
}

/// The visible key range [lo, hi) of flat Q rows [row, row + br), with lo
/// rounded down to a multiple of bc.
std::pair<Value, Value> visibleKeyRange(ImplicitLocOpBuilder &b, MaskAttr mask,
                                        int64_t group, int64_t br, int64_t bc,
                                        Value row, Value rows, Value qLen,
                                        Value kvLen) {
  Value zero = cst(b, 0);
  Value lo = zero, hi = kvLen;
  if (mask.isNone())
    return {lo, hi};
  Value g = cst(b, group);
  Value lastRow = arith::MinSIOp::create(
      b, arith::AddIOp::create(b, row, cst(b, br)), rows);
  Value firstQuery = arith::DivSIOp::create(b, row, g);
  Value lastQuery = arith::DivSIOp::create(
      b, arith::SubIOp::create(b, lastRow, cst(b, 1)), g);
  // The diagonal's shift as the mask defines it (AttnSemantics.h); the
  // window [diagonal - left, diagonal + right] of the block's first and
  // last query bounds the keys.
  IndexExprs exprs{b};
  Value shift = MaskRules<IndexExprs>(exprs, mask).shift(qLen, kvLen);
  if (mask.hasLeftBound()) {
    Value diagonal = arith::AddIOp::create(b, firstQuery, shift);
    Value first = arith::SubIOp::create(b, diagonal, cst(b, mask.getLeft()));
    first = arith::MaxSIOp::create(b, first, zero);
    Value tile = arith::DivSIOp::create(b, first, cst(b, bc));
    lo = arith::MulIOp::create(b, tile, cst(b, bc));
  }
  if (mask.hasRightBound()) {
    Value diagonal = arith::AddIOp::create(b, lastQuery, shift);
    Value last =
        arith::AddIOp::create(b, diagonal, cst(b, mask.getRight() + 1));
    hi = arith::MinSIOp::create(b, last, kvLen);
  }
  return {lo, hi};
}

LogicalResult tileAttention(AttentionOp op, int64_t br, int64_t bc) {
  if (ScheduleAttr schedule = op.getScheduleAttr()) {
    if (schedule.getBlockQ() != 0) {
      br = schedule.getBlockQ();
      if (failed(checkTileSize(op, "schedule 'block_q'", br)))
        return failure();
    }
    if (schedule.getBlockKv() != 0) {
      bc = schedule.getBlockKv();
      if (failed(checkTileSize(op, "schedule 'block_kv'", bc)))
        return failure();
    }
    // The tiers check what they can run; these hold for any of them.
    int64_t warps = schedule.getWarps(), stages = schedule.getStages();
    if (warps != 0 && (warps < 1 || warps > 16 || !llvm::isPowerOf2_64(warps)))
      return op.emitError() << "schedule 'warps' must be a power of two in "
                               "[1, 16], got "
                            << warps;
    if (stages < 0 || stages > 4)
      return op.emitError() << "schedule 'stages' must be in [1, 4] (0: the "
                               "tier's default), got "
                            << stages;
  }

  ImplicitLocOpBuilder b(op.getLoc(), op);
  MLIRContext *ctx = op.getContext();
  auto qType = cast<MemRefType>(op.getQ().getType());
  auto oType = cast<MemRefType>(op.getO().getType());
  const int64_t group = op.getGroupSize();
  const int64_t hkv = op.getNumKVHeads();
  const int64_t d = op.getHeadDim(), dv = op.getValueHeadDim();
  Type inElt = qType.getElementType();
  // An fp8 Q (fp8 attention) is dequantized into an f32 tile too.
  auto qTileType = RankedTensorType::get(
      {br, d}, op.isQuantizedQ() ? b.getF32Type() : inElt);
  // A quantized K/V cache is dequantized into f32 tiles.
  Type kvElt = op.isQuantizedKV() ? b.getF32Type() : inElt;
  auto kTileType = RankedTensorType::get({bc, d}, kvElt);
  auto vTileType = RankedTensorType::get({bc, dv}, kvElt);
  auto scoreType = RankedTensorType::get({br, bc}, b.getF32Type());
  auto rowType = RankedTensorType::get({br}, b.getF32Type());
  auto oTileType = RankedTensorType::get({br, dv}, oType.getElementType());
  MaskAttr mask = op.getMaskOrNone();
  FloatAttr scale = b.getF32FloatAttr(op.getScaleOrDefault());
  FloatAttr softcap = op.getSoftcapAttr();
  IntegerAttr groupAttr = b.getI64IntegerAttr(group);

  // Padded Q: B and Sq are Q's dims. Packed Q: B is cu_seqlens_q's
  // length - 1, and the tiles cover the longest sequence the spec allows
  // (max_q_len, else every packed row); each sequence's own length is
  // read inside the forall.
  const bool packedQ = op.isPackedQ();
  Value batch, qLen;
  if (packedQ) {
    Value offsets = dimOf(b, op.getCuSeqlensQ(), 0);
    batch = arith::SubIOp::create(b, offsets, cst(b, 1));
    std::optional<int64_t> maxQLen = op.getMaxQLen();
    qLen = maxQLen ? cst(b, *maxQLen) : dimOf(b, op.getQ(), 0);
  } else {
    batch = dimOf(b, op.getQ(), 0);
    qLen = dimOf(b, op.getQ(), 2);
  }
  Value rows = arith::MulIOp::create(b, qLen, cst(b, group));
  OpFoldResult qTiles =
      arith::CeilDivSIOp::create(b, rows, cst(b, br)).getResult();
  // A packed Q's static max_q_len gives a static tile count, which the
  // decode tier's launch contract states.
  if (std::optional<int64_t> maxQLen = op.getMaxQLen(); packedQ && maxQLen)
    qTiles = b.getIndexAttr(llvm::divideCeil(*maxQLen * group, br));
  // Contiguous K/V: Sk bounds every sequence (kv_lens may only shorten it).
  Value maxKV =
      op.isPaged() || op.isPackedKV() ? Value() : dimOf(b, op.getK(), 2);

  auto forall = scf::ForallOp::create(
      b, ArrayRef<OpFoldResult>{batch, b.getIndexAttr(hkv), qTiles},
      ValueRange{}, std::nullopt);
  // A tier chosen for the op (attn-select-tier) follows it to its nest.
  if (Attribute tier = op->getAttr(kTierAttrName))
    forall->setAttr(kTierAttrName, tier);
  // So do the schedule's warps and stages, which the tiers read there.
  if (ScheduleAttr schedule = op.getScheduleAttr())
    forall->setAttr(kScheduleAttrName, schedule);
  b.setInsertionPointToStart(forall.getBody());
  Value bIdx = forall.getInductionVar(0);
  Value head = forall.getInductionVar(1);
  Value row = arith::MulIOp::create(b, forall.getInductionVar(2), cst(b, br));

  Value qStart, kvStart;
  if (packedQ) {
    auto [start, len] = sequenceRange(b, op.getCuSeqlensQ(), bIdx);
    qStart = start;
    qLen = len;
    rows = arith::MulIOp::create(b, qLen, cst(b, group));
  }
  Value kvLen = maxKV;
  if (op.isPackedKV()) {
    auto [start, len] = sequenceRange(b, op.getCuSeqlensK(), bIdx);
    kvStart = start;
    kvLen = len;
  }
  if (Value lens = op.getKvLens()) {
    Value len = memref::LoadOp::create(b, lens, ValueRange{bIdx});
    len = arith::IndexCastOp::create(b, b.getIndexType(), len);
    // A negative length reads nothing.
    kvLen = arith::MaxSIOp::create(b, len, cst(b, 0));
    if (maxKV)
      kvLen = arith::MinSIOp::create(b, kvLen, maxKV);
  }
  auto [lo, hi] =
      visibleKeyRange(b, mask, group, br, bc, row, rows, qLen, kvLen);
  // A packed sequence shorter than the longest has tiles with no rows:
  // their K/V loop is empty.
  if (packedQ)
    hi = arith::SelectOp::create(
        b, arith::CmpIOp::create(b, arith::CmpIPredicate::slt, row, rows), hi,
        lo);

  // The packed form's row range, for the ops that address Q, O and LSE.
  Value seqStart = packedQ ? qStart : Value();
  Value seqLen = packedQ ? qLen : Value();
  Value qTile = LoadQOp::create(b, qTileType, op.getQ(), bIdx, head, row,
                                groupAttr, seqStart, seqLen, op.getQScale());
  auto init = InitStateOp::create(b, br, dv);
  IRMapping mapping; // the regions are isolated: nothing to map
  auto loop = scf::ForOp::create(
      b, lo, hi, cst(b, bc),
      ValueRange{init.getMax(), init.getSum(), init.getAcc()});
  loop->setAttr(kKVLoopAttrName, UnitAttr::get(ctx));
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    Value col = loop.getInductionVar();
    Value m = loop.getRegionIterArg(0), l = loop.getRegionIterArg(1),
          acc = loop.getRegionIterArg(2);
    Value kTile =
        LoadKVOp::create(b, kTileType, op.getK(), bIdx, head, col, kvLen,
                         op.getBlockTable(), kvStart, op.getKScale());
    // Under v_from_k (MLA) the V tile is the K rows' first Dv columns,
    // dequantized with k_scale.
    Value vTile =
        LoadKVOp::create(b, vTileType, op.getValueBuffer(), bIdx, head, col,
                         kvLen, op.getBlockTable(), kvStart,
                         op.getVFromK() ? op.getKScale() : op.getVScale());
    // The regions travel to the score and mask ops, cloned with the
    // positions they need and the captures as operands (their trailing
    // block arguments stay as they are).
    const bool scoreMod = op.hasScoreMod(), maskMod = op.hasMaskMod();
    ValueRange none;
    auto qk = QKOp::create(
        b, scoreType, qTile, kTile, scale, softcap, scoreMod ? bIdx : Value(),
        scoreMod ? head : Value(), scoreMod ? row : Value(),
        scoreMod ? col : Value(), scoreMod ? qLen : Value(),
        scoreMod ? kvLen : Value(), scoreMod ? groupAttr : IntegerAttr(),
        scoreMod ? op.getCaptures() : none);
    if (scoreMod)
      op.getScoreMod().cloneInto(&qk.getScoreMod(), mapping);
    auto maskOp = MaskOp::create(
        b, scoreType, qk.getScores(), row, col, qLen, kvLen, mask, groupAttr,
        maskMod ? bIdx : Value(), maskMod ? head : Value(),
        maskMod ? op.getCaptures() : none);
    if (maskMod)
      op.getMaskMod().cloneInto(&maskOp.getMaskMod(), mapping);
    Value s = maskOp.getResult();
    auto sm = OnlineSoftmaxOp::create(b, scoreType, rowType, rowType, rowType,
                                      s, m, l);
    Value newAcc = PVOp::create(b, acc.getType(), sm.getProbs(), vTile, acc,
                                sm.getRescale());
    scf::YieldOp::create(b, ValueRange{sm.getNewMax(), sm.getNewSum(), newAcc});
  }
  // The sinks join the denominator once, at finalize (after any split-K
  // merge).
  Value sink;
  if (Value sinks = op.getSinks())
    sink = LoadSinkOp::create(b, rowType, sinks, head, row, groupAttr);
  auto fin = FinalizeOp::create(b, oTileType, rowType, loop.getResult(0),
                                loop.getResult(1), loop.getResult(2), sink);
  StoreOOp::create(b, fin.getOut(), op.getO(), bIdx, head, row, groupAttr,
                   seqStart, seqLen);
  if (Value lse = op.getLse())
    StoreLseOp::create(b, fin.getLse(), lse, bIdx, head, row, groupAttr,
                       seqStart, seqLen);
  op.erase();
  return success();
}

struct AttnTilePass : mlir::attn::impl::AttnTileBase<AttnTilePass> {
  using AttnTileBase::AttnTileBase;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    SmallVector<AttentionOp> ops;
    func.walk([&](AttentionOp op) { ops.push_back(op); });
    if (ops.empty())
      return;
    if (failed(checkTileSize(func, "option 'block-q'", blockQ)) ||
        failed(checkTileSize(func, "option 'block-kv'", blockKV)))
      return signalPassFailure();
    for (AttentionOp op : ops)
      if (failed(tileAttention(op, blockQ, blockKV)))
        return signalPassFailure();
  }
};

} // namespace
