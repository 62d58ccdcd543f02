//===- FoldMods.cpp - attn-fold-mods --------------------------------------===//

#include "lib/Transforms/FoldMods.h"

#include "lib/Transforms/Passes.h"
#include "mlir/IR/Matchers.h"

#include <cmath>
#include <cstdlib>

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNFOLDMODS
#include "lib/Transforms/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;

namespace {

std::optional<double> constantFloat(Value v) {
  FloatAttr attr;
  if (matchPattern(v, m_Constant(&attr)))
    return attr.getValueAsDouble();
  return std::nullopt;
}

/// The soft-cap c of a score_mod yielding c * tanh(s / c) (either operand
/// order of the product; s * (1 / c) for the division).
std::optional<double> softcapOf(Region &region) {
  Block &block = region.front();
  Value score = block.getArgument(0);
  Value yielded = block.getTerminator()->getOperand(0);
  auto outer = yielded.getDefiningOp<arith::MulFOp>();
  if (!outer)
    return std::nullopt;
  for (auto [t, c] : {std::pair(outer.getLhs(), outer.getRhs()),
                      std::pair(outer.getRhs(), outer.getLhs())}) {
    std::optional<double> cap = constantFloat(c);
    auto tanh = t.getDefiningOp<math::TanhOp>();
    if (!cap || !tanh || !(*cap > 0) || !std::isfinite(*cap))
      continue;
    Value x = tanh.getOperand();
    if (auto div = x.getDefiningOp<arith::DivFOp>()) {
      if (div.getLhs() == score && constantFloat(div.getRhs()) == *cap)
        return cap;
    } else if (auto mul = x.getDefiningOp<arith::MulFOp>()) {
      Value other = mul.getLhs() == score ? mul.getRhs() : mul.getLhs();
      std::optional<double> inv = constantFloat(other);
      if ((mul.getLhs() == score || mul.getRhs() == score) && inv &&
          std::fabs(*inv * *cap - 1.0) < 1e-6)
        return cap;
    }
  }
  return std::nullopt;
}

/// a * q_idx + b * kv_idx + c.
struct Affine {
  int64_t a = 0, b = 0, c = 0;
};

std::optional<Affine> affineOf(Value v, Value query, Value key, int depth = 0) {
  if (depth > 8)
    return std::nullopt;
  if (v == query)
    return Affine{1, 0, 0};
  if (v == key)
    return Affine{0, 1, 0};
  // Constants past 2^40 (far beyond any sequence) are not folded: the
  // sums and negations below stay far from overflow.
  const int64_t kLargest = int64_t(1) << 40;
  IntegerAttr attr;
  if (matchPattern(v, m_Constant(&attr)) && v.getType().isIndex()) {
    int64_t c = attr.getInt();
    if (c > kLargest || c < -kLargest)
      return std::nullopt;
    return Affine{0, 0, c};
  }
  Operation *def = v.getDefiningOp();
  if (!isa_and_nonnull<arith::AddIOp, arith::SubIOp>(def))
    return std::nullopt;
  auto x = affineOf(def->getOperand(0), query, key, depth + 1);
  auto y = affineOf(def->getOperand(1), query, key, depth + 1);
  if (!x || !y)
    return std::nullopt;
  int64_t s = isa<arith::AddIOp>(def) ? 1 : -1;
  Affine sum{x->a + s * y->a, x->b + s * y->b, x->c + s * y->c};
  if (sum.c > kLargest || sum.c < -kLargest || std::abs(sum.a) > 64 ||
      std::abs(sum.b) > 64)
    return std::nullopt;
  return sum;
}

/// Bounds lo <= q_idx - kv_idx <= hi.
struct Band {
  std::optional<int64_t> lo, hi;
  void atLeast(int64_t v) { lo = lo ? std::max(*lo, v) : v; }
  void atMost(int64_t v) { hi = hi ? std::min(*hi, v) : v; }
};

/// Adds the band one comparison says to `band`; false if it says
/// something else.
bool addComparison(arith::CmpIOp cmp, Value query, Value key, Band &band) {
  auto lhs = affineOf(cmp.getLhs(), query, key);
  auto rhs = affineOf(cmp.getRhs(), query, key);
  if (!lhs || !rhs)
    return false;
  // e = lhs - rhs = k * d + c with d = q_idx - kv_idx, k = +-1.
  int64_t a = lhs->a - rhs->a, b = lhs->b - rhs->b, c = lhs->c - rhs->c;
  if (a + b != 0 || (a != 1 && a != -1))
    return false;
  // k * d + c pred 0, into bounds on d.
  int64_t k = a;
  auto bound = [&](bool lessThan, bool strict) {
    // k d + c < 0 (or <=): d < -c / k ... for k = -1 the sense flips.
    int64_t edge = -c * k;
    bool upper = (k == 1) == lessThan;
    int64_t tight = strict ? (upper ? edge - 1 : edge + 1) : edge;
    if (upper)
      band.atMost(tight);
    else
      band.atLeast(tight);
  };
  switch (cmp.getPredicate()) {
  case arith::CmpIPredicate::slt: bound(true, true); return true;
  case arith::CmpIPredicate::sle: bound(true, false); return true;
  case arith::CmpIPredicate::sgt: bound(false, true); return true;
  case arith::CmpIPredicate::sge: bound(false, false); return true;
  case arith::CmpIPredicate::eq:
    bound(true, false);
    bound(false, false);
    return true;
  default:
    return false;
  }
}

/// Walks the conjunction yielding `v`; returns whether every leaf was an
/// affine comparison (or `true`).
bool collectBand(Value v, Value query, Value key, Band &band, int depth = 0) {
  if (depth > 16)
    return false;
  if (auto andOp = v.getDefiningOp<arith::AndIOp>()) {
    bool lhs = collectBand(andOp.getLhs(), query, key, band, depth + 1);
    bool rhs = collectBand(andOp.getRhs(), query, key, band, depth + 1);
    return lhs && rhs;
  }
  if (auto cmp = v.getDefiningOp<arith::CmpIOp>())
    return addComparison(cmp, query, key, band);
  return matchPattern(v, m_One());
}

/// The top-left mask showing lo <= i - j <= hi (visible: i - left <= j <=
/// i + right), intersected with `mask`; none if it cannot be said.
std::optional<MaskAttr> narrow(MaskAttr mask, const Band &band) {
  if (mask.isBottomRight())
    return std::nullopt;
  // left bounds d from above, right bounds -d from above.
  std::optional<int64_t> left, right;
  if (mask.hasLeftBound())
    left = mask.getLeft();
  if (mask.hasRightBound())
    right = mask.getRight();
  if (band.hi)
    left = left ? std::min(*left, *band.hi) : *band.hi;
  if (band.lo)
    right = right ? std::min(*right, -*band.lo) : -*band.lo;
  // A band the built-in masks cannot hold (one that excludes the diagonal
  // from both sides, or a negative extent) stays in the region.
  if ((left && *left < 0) || (right && *right < 0))
    return std::nullopt;
  MLIRContext *ctx = mask.getContext();
  if (!left && !right)
    return MaskAttr::getNone(ctx);
  if (!left && *right == 0)
    return MaskAttr::get(ctx, MaskKind::Causal, MaskAlign::TopLeft,
                         MaskAttr::kUnbounded, 0);
  const int64_t widest = 2147483647; // kMaxWindow: sees every key
  return MaskAttr::get(ctx, MaskKind::Window, MaskAlign::TopLeft,
                       left ? std::min(*left, widest) : widest,
                       right ? std::min(*right, widest) : widest);
}

struct AttnFoldModsPass : mlir::attn::impl::AttnFoldModsBase<AttnFoldModsPass> {
  void runOnOperation() override {
    getOperation().walk([](AttentionOp op) {
      ModFolds folds = analyzeMods(op);
      if (folds.any())
        applyModFolds(op, folds);
    });
  }
};

} // namespace

ModFolds mlir::attn::analyzeMods(AttentionOp op) {
  ModFolds folds;
  if (op.hasScoreMod() && !op.getSoftcap())
    folds.softcap = softcapOf(op.getScoreMod());
  if (op.hasMaskMod()) {
    Block &block = op.getMaskMod().front();
    Band band;
    bool whole = collectBand(block.getTerminator()->getOperand(0),
                             block.getArgument(2), block.getArgument(3), band);
    MaskAttr mask = op.getMaskAttr() ? op.getMaskAttr()
                                     : MaskAttr::getNone(op.getContext());
    std::optional<MaskAttr> narrowed = narrow(mask, band);
    if (narrowed && (whole || *narrowed != mask)) {
      folds.mask = narrowed;
      folds.maskModFolded = whole;
    }
  }
  return folds;
}

void mlir::attn::applyModFolds(AttentionOp op, const ModFolds &folds) {
  Builder b(op.getContext());
  if (folds.softcap) {
    op.setSoftcapAttr(b.getF32FloatAttr(*folds.softcap));
    op.getScoreMod().getBlocks().clear();
  }
  if (folds.mask) {
    if (folds.mask->isNone())
      op.removeMaskAttr();
    else
      op.setMaskAttr(*folds.mask);
    if (folds.maskModFolded)
      op.getMaskMod().getBlocks().clear();
  }
}
