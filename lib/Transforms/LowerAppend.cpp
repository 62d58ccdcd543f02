//===- LowerAppend.cpp - attn-lower-append: cache_append -> loops ---------===//
//
// attn.cache_append as plain loops over memrefs, for the CPU pipeline:
//
//   for b in [0, B):
//     start = max(kv_lens[b], 0)
//     n     = new_lens ? clamp(new_lens[b], 0, S_new) : S_new
//     count = clamp(min(start + n, limit) - start, 0, n)
//             (limit: the capacity, or max_blocks * block_size)
//     for t in [0, count):
//       pos = start + t; (slot, row) = (b, pos) or through the block table
//       if slot is a block of the cache:
//         for h, x: k_cache[slot, h, row, x] = k_new[b, h, t, x]  (and V)
//
// and the slot-mapping form as
//
//   for t in [0, T): s = slot_mapping[t]
//     if 0 <= s < N * R: for h, x: k_cache[s / R, h, s % R, x] = k_new[t, h, x]
//
//===----------------------------------------------------------------------===//

#include "lib/Transforms/Passes.h"

#include "dialect/AttnDialect.h"
#include "dialect/AttnSemantics.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNLOWERAPPEND
#include "lib/Transforms/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;

namespace {

/// Emits `if (0 <= slot < bound)` and moves `b` into its then-block: a slot
/// outside the cache (vLLM's -1 padding, a bad table entry) writes nothing.
void guardSlot(ImplicitLocOpBuilder &b, Value slot, Value zero, Value bound) {
  Value notNegative =
      arith::CmpIOp::create(b, arith::CmpIPredicate::sge, slot, zero);
  Value inCache =
      arith::CmpIOp::create(b, arith::CmpIPredicate::slt, slot, bound);
  Value valid = arith::AndIOp::create(b, notNegative, inCache);
  auto guard = scf::IfOp::create(b, valid);
  b.setInsertionPointToStart(guard.thenBlock());
}

/// An element as f32 (f16 and bf16 widened).
Value toF32(ImplicitLocOpBuilder &b, Value v) {
  if (v.getType().isF32())
    return v;
  return arith::ExtFOp::create(b, b.getF32Type(), v);
}

/// The divisor of a quantized row of head `h` at cache row (block, row):
/// a read scale (per tensor or head), or the per-token one computed from
/// the row's absmax (`load(x)` reads element x of the new row) and
/// written; none for an absent scale.
Value rowDivisor(ImplicitLocOpBuilder &b, CacheAppendOp op, Value scale,
                 KVFormat format, Value zero, Value one, Value block, Value h,
                 Value row, int64_t width,
                 function_ref<Value(ImplicitLocOpBuilder &, Value)> load) {
  if (!scale)
    return Value();
  if (!op.writesScale(scale)) {
    SmallVector<Value> at;
    if (cast<MemRefType>(scale.getType()).getRank() == 1)
      at.push_back(h);
    return memref::LoadOp::create(b, scale, at);
  }
  Value end = arith::ConstantIndexOp::create(b, width);
  Value init = arith::ConstantOp::create(b, b.getF32FloatAttr(0));
  auto absMax = scf::ForOp::create(
      b, zero, end, one, ValueRange{init},
      [&](OpBuilder &nested, Location loc, Value x, ValueRange acc) {
        ImplicitLocOpBuilder nb(loc, nested);
        Value element = load(nb, x);
        Value value = toF32(nb, element);
        Value magnitude = math::AbsFOp::create(nb, value);
        Value larger = arith::MaximumFOp::create(nb, acc[0], magnitude);
        scf::YieldOp::create(nb, larger);
      });
  Value largest =
      arith::ConstantOp::create(b, b.getF32FloatAttr(largestFinite(format)));
  Value divisor = arith::DivFOp::create(b, absMax.getResult(0), largest);
  memref::StoreOp::create(b, divisor, scale, ValueRange{block, h, row});
  return divisor;
}

/// The byte of `value` in a quantized cache of element type `elt`:
/// value / divisor (0 where a per-token divisor is 0: a row of zeros)
/// encoded by QuantRules.
Value quantize(ImplicitLocOpBuilder &b, Value value, Value divisor,
               bool perToken, Type elt) {
  KVFormat format = kvFormatOf(elt);
  Value x = toF32(b, value);
  if (divisor) {
    Value ratio = arith::DivFOp::create(b, x, divisor);
    x = ratio;
    if (perToken) {
      Value zero = arith::ConstantOp::create(b, b.getF32FloatAttr(0));
      Value positive =
          arith::CmpFOp::create(b, arith::CmpFPredicate::OGT, divisor, zero);
      x = arith::SelectOp::create(b, positive, ratio, zero);
    }
  }
  ByteExprs exprs{b};
  Value code = QuantRules<ByteExprs>(exprs).encode(format, x);
  Value byte = arith::TruncIOp::create(b, b.getI8Type(), code);
  if (format == KVFormat::Int8)
    return byte;
  return arith::BitcastOp::create(b, elt, byte);
}

/// Emits, at `b`, the copy of one token into cache row (block, row): for h,
/// x: k_cache[block, h, row, x] = k_new[newIndices(h, x)] (and V), each
/// element quantized for a quantized cache.
void copyToken(ImplicitLocOpBuilder &b, CacheAppendOp op, Value zero, Value one,
               Value block, Value row,
               function_ref<SmallVector<Value>(Value, Value)> newIndices) {
  Value heads = arith::ConstantIndexOp::create(b, op.getNumKVHeads());
  auto headLoop = scf::ForOp::create(b, zero, heads, one);
  b.setInsertionPointToStart(headLoop.getBody());
  Value h = headLoop.getInductionVar();
  for (auto [src, dst, width, scale] :
       {std::tuple<Value, Value, int64_t, Value>{
            op.getKNew(), op.getKCache(), op.getHeadDim(), op.getKScale()},
        {op.getVNew(), op.getVCache(), op.getValueHeadDim(), op.getVScale()}}) {
    OpBuilder::InsertionGuard g(b);
    Type elt = cast<MemRefType>(dst.getType()).getElementType();
    const bool quantized = op.isQuantized();
    // A copy: C++17 lambdas cannot capture structured bindings.
    Value source = src;
    auto load = [&](ImplicitLocOpBuilder &at, Value x) -> Value {
      SmallVector<Value> indices = newIndices(h, x);
      return memref::LoadOp::create(at, source, indices);
    };
    Value divisor = quantized ? rowDivisor(b, op, scale, kvFormatOf(elt), zero,
                                           one, block, h, row, width, load)
                              : Value();
    Value end = arith::ConstantIndexOp::create(b, width);
    auto elementLoop = scf::ForOp::create(b, zero, end, one);
    b.setInsertionPointToStart(elementLoop.getBody());
    Value x = elementLoop.getInductionVar();
    Value value = load(b, x);
    if (quantized)
      value = quantize(b, value, divisor, op.writesScale(scale), elt);
    memref::StoreOp::create(b, value, dst, ValueRange{block, h, row, x});
  }
}

/// The slot-mapping form: for t in [0, T), s = slot_mapping[t]; when
/// 0 <= s < N * R: k_cache[s / R, h, s % R, :] = k_new[t, h, :] (and V).
void lowerSlotMapped(CacheAppendOp op) {
  ImplicitLocOpBuilder b(op.getLoc(), op);
  auto idx = [&](int64_t v) -> Value {
    return arith::ConstantIndexOp::create(b, v);
  };
  Value kn = op.getKNew(), kc = op.getKCache();
  Value zero = idx(0), one = idx(1);
  Value tokens = memref::DimOp::create(b, kn, 0);
  Value blocks = memref::DimOp::create(b, kc, 0);
  Value rows = memref::DimOp::create(b, kc, 2);
  Value slots = arith::MulIOp::create(b, blocks, rows);
  auto tokenLoop = scf::ForOp::create(b, zero, tokens, one);
  b.setInsertionPointToStart(tokenLoop.getBody());
  Value t = tokenLoop.getInductionVar();
  Value raw = memref::LoadOp::create(b, op.getSlotMapping(), t);
  Value slot = arith::IndexCastOp::create(b, b.getIndexType(), raw);
  guardSlot(b, slot, zero, slots);
  Value block = arith::DivUIOp::create(b, slot, rows);
  Value row = arith::RemUIOp::create(b, slot, rows);
  copyToken(b, op, zero, one, block, row, [&](Value h, Value x) {
    return SmallVector<Value>{t, h, x};
  });
  op.erase();
}

void lowerAppend(CacheAppendOp op) {
  if (op.isSlotMapped())
    return lowerSlotMapped(op);
  ImplicitLocOpBuilder b(op.getLoc(), op);
  auto idx = [&](int64_t v) -> Value {
    return arith::ConstantIndexOp::create(b, v);
  };
  auto dim = [&](Value memref, int64_t d) -> Value {
    return memref::DimOp::create(b, memref, d);
  };
  auto loadIndex = [&](Value memref, ValueRange indices) -> Value {
    Value x = memref::LoadOp::create(b, memref, indices);
    return arith::IndexCastOp::create(b, b.getIndexType(), x);
  };
  Value kn = op.getKNew(), kc = op.getKCache(), table = op.getBlockTable(),
        newLens = op.getNewLens();
  const int64_t bs = op.getBlockSize();
  Value zero = idx(0), one = idx(1);
  Value batch = dim(kn, 0);
  Value sNew = dim(kn, 2);
  // The last position a token may take, plus one.
  Value limit;
  if (table) {
    Value maxBlocks = dim(table, 1);
    Value blockSize = idx(bs);
    limit = arith::MulIOp::create(b, maxBlocks, blockSize);
  } else {
    limit = dim(kc, 2);
  }
  Value numBlocks = table ? dim(kc, 0) : Value();

  auto batchLoop = scf::ForOp::create(b, zero, batch, one);
  b.setInsertionPointToStart(batchLoop.getBody());
  Value bi = batchLoop.getInductionVar();
  Value len = loadIndex(op.getKvLens(), bi);
  Value start = arith::MaxSIOp::create(b, len, zero);
  Value n = sNew;
  if (newLens) {
    Value asked = loadIndex(newLens, bi);
    Value floor = arith::MaxSIOp::create(b, asked, zero);
    n = arith::MinSIOp::create(b, floor, sNew);
  }
  // Positions are below 2^31 + 2^31: no index overflow.
  Value end = arith::AddIOp::create(b, start, n);
  Value clipped = arith::MinSIOp::create(b, end, limit);
  Value room = arith::SubIOp::create(b, clipped, start);
  Value count = arith::MaxSIOp::create(b, room, zero);

  auto tokenLoop = scf::ForOp::create(b, zero, count, one);
  b.setInsertionPointToStart(tokenLoop.getBody());
  Value t = tokenLoop.getInductionVar();
  Value pos = arith::AddIOp::create(b, start, t);
  Value slot = bi, row = pos;
  if (table) {
    Value blockSize = idx(bs);
    Value page = arith::DivUIOp::create(b, pos, blockSize);
    slot = loadIndex(table, ValueRange{bi, page});
    row = arith::RemUIOp::create(b, pos, blockSize);
    guardSlot(b, slot, zero, numBlocks);
  }
  copyToken(b, op, zero, one, slot, row, [&](Value h, Value x) {
    return SmallVector<Value>{bi, h, t, x};
  });
  op.erase();
}

struct AttnLowerAppendPass
    : mlir::attn::impl::AttnLowerAppendBase<AttnLowerAppendPass> {
  void runOnOperation() override {
    SmallVector<CacheAppendOp> ops;
    getOperation().walk([&](CacheAppendOp op) { ops.push_back(op); });
    for (CacheAppendOp op : ops)
      lowerAppend(op);
  }
};

} // namespace
