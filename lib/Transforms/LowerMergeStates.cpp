//===- LowerMergeStates.cpp - attn-lower-merge-states: merge -> loops -----===//
//
// attn.merge_states as plain loops over memrefs, for the CPU pipeline:
//
//   for t in [0, T), h in [0, H):
//     M = max_n lse_parts[n, t, h]              (-inf when every part is)
//     w_n = L_n == -inf ? 0 : exp(L_n - M)       (so an empty part's O is
//     S = sum_n w_n                               never read into the sum)
//     for x: o[t, h, x] = M == -inf ? 0 : sum_n w_n * o_parts[n, t, h, x] / S
//     lse[t, h] = S > 0 ? M + ln 2 log2(S) : -inf  (SoftmaxRules)
//
// in f32, whatever the element types.
//
//===----------------------------------------------------------------------===//

#include "lib/Transforms/Passes.h"

#include "dialect/AttnDialect.h"
#include "dialect/AttnSemantics.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"

#include <limits>

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNLOWERMERGESTATES
#include "lib/Transforms/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;

namespace {

/// `x` converted from (`from`) or to (`to`) f32.
Value toF32(ImplicitLocOpBuilder &b, Value x) {
  if (x.getType().isF32())
    return x;
  return arith::ExtFOp::create(b, b.getF32Type(), x);
}
Value fromF32(ImplicitLocOpBuilder &b, Value x, Type to) {
  if (to.isF32())
    return x;
  return arith::TruncFOp::create(b, to, x);
}

/// Emits `for i in [0, n)` carrying `init`, with `body(i, carried)`
/// yielding the next value; returns the loop's result.
Value reduce(ImplicitLocOpBuilder &b, Value n, Value init,
             function_ref<Value(ImplicitLocOpBuilder &, Value, Value)> body) {
  Value zero = arith::ConstantIndexOp::create(b, 0);
  Value one = arith::ConstantIndexOp::create(b, 1);
  auto loop = scf::ForOp::create(b, zero, n, one, ValueRange{init});
  OpBuilder::InsertionGuard g(b);
  b.setInsertionPointToStart(loop.getBody());
  Value next = body(b, loop.getInductionVar(), loop.getRegionIterArg(0));
  scf::YieldOp::create(b, next);
  return loop.getResult(0);
}

void lowerMergeStates(MergeStatesOp op) {
  ImplicitLocOpBuilder b(op.getLoc(), op);
  Value oParts = op.getOParts(), lseParts = op.getLseParts(), o = op.getO();
  Value lse = op.getLse();
  Type oElt = cast<MemRefType>(o.getType()).getElementType();
  Value zero = arith::ConstantIndexOp::create(b, 0);
  Value one = arith::ConstantIndexOp::create(b, 1);
  Value parts = memref::DimOp::create(b, oParts, 0);
  Value rows = memref::DimOp::create(b, oParts, 1);
  Value heads = arith::ConstantIndexOp::create(b, op.getNumHeads());
  Value width = arith::ConstantIndexOp::create(b, op.getValueHeadDim());
  auto f32 = [&](double v) -> Value {
    return arith::ConstantOp::create(b, b.getF32FloatAttr(v));
  };
  Value negInf = f32(-std::numeric_limits<double>::infinity());
  Value fzero = f32(0.0);

  auto tLoop = scf::ForOp::create(b, zero, rows, one);
  b.setInsertionPointToStart(tLoop.getBody());
  Value t = tLoop.getInductionVar();
  auto hLoop = scf::ForOp::create(b, zero, heads, one);
  b.setInsertionPointToStart(hLoop.getBody());
  Value h = hLoop.getInductionVar();

  auto lseOf = [&](ImplicitLocOpBuilder &ib, Value n) -> Value {
    return memref::LoadOp::create(ib, lseParts, ValueRange{n, t, h});
  };
  // The weight of part n: exp(L_n - M), 0 for an empty part (L_n = -inf;
  // then exp(-inf - M) is 0 too, unless M is -inf, which the row's guard
  // handles, but the select keeps NaNs of an empty part's O out).
  Value m = reduce(b, parts, negInf,
                   [&](ImplicitLocOpBuilder &ib, Value n, Value acc) -> Value {
                     return arith::MaximumFOp::create(ib, acc, lseOf(ib, n));
                   });
  Value empty =
      arith::CmpFOp::create(b, arith::CmpFPredicate::OEQ, m, negInf);
  auto weight = [&](ImplicitLocOpBuilder &ib, Value n) -> Value {
    Value l = lseOf(ib, n);
    Value e = math::ExpOp::create(ib, arith::SubFOp::create(ib, l, m));
    Value none =
        arith::CmpFOp::create(ib, arith::CmpFPredicate::OEQ, l, negInf);
    return arith::SelectOp::create(ib, none, fzero, e);
  };
  Value sum = reduce(b, parts, fzero,
                     [&](ImplicitLocOpBuilder &ib, Value n, Value acc) {
                       return Value(arith::AddFOp::create(ib, acc,
                                                          weight(ib, n)));
                     });
  // 1 / S, and 0 for an empty row (S = 0 there).
  Value inv = arith::DivFOp::create(b, f32(1.0), sum);
  inv = arith::SelectOp::create(b, empty, fzero, inv);

  auto xLoop = scf::ForOp::create(b, zero, width, one);
  {
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(xLoop.getBody());
    Value x = xLoop.getInductionVar();
    Value acc = reduce(
        b, parts, fzero, [&](ImplicitLocOpBuilder &ib, Value n, Value acc) {
          Value w = weight(ib, n);
          Value v = toF32(
              ib, memref::LoadOp::create(ib, oParts, ValueRange{n, t, h, x}));
          // w * v where w > 0 only: an empty part's NaN adds nothing.
          Value used =
              arith::CmpFOp::create(ib, arith::CmpFPredicate::OGT, w, fzero);
          Value term = arith::SelectOp::create(
              ib, used, arith::MulFOp::create(ib, w, v), fzero);
          return Value(arith::AddFOp::create(ib, acc, term));
        });
    Value out = arith::MulFOp::create(b, acc, inv);
    memref::StoreOp::create(b, fromF32(b, out, oElt), o,
                            ValueRange{t, h, x});
  }
  if (lse) {
    // The rule every backend's merge uses; S > 0 exactly where M is
    // finite (the largest part's weight is 1).
    F32Exprs e{b};
    SoftmaxRules<F32Exprs> rules(e);
    Value seen = rules.seen(sum);
    memref::StoreOp::create(b, rules.mergedLogSumExp(m, sum, seen), lse,
                            ValueRange{t, h});
  }
  op.erase();
}

struct AttnLowerMergeStatesPass
    : mlir::attn::impl::AttnLowerMergeStatesBase<AttnLowerMergeStatesPass> {
  void runOnOperation() override {
    SmallVector<MergeStatesOp> ops;
    getOperation().walk([&](MergeStatesOp op) { ops.push_back(op); });
    for (MergeStatesOp op : ops)
      lowerMergeStates(op);
  }
};

} // namespace
