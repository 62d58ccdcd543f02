//===- AttnSemantics.h - what masks and scores mean, once -------*- C++ -*-===//
//
// One definition of the score and mask semantics of attn.attention, used by
// every backend: the CPU decomposition and attn-tile build IR with it, the
// NVIDIA tiers build kernel IR with it, and the MSL emitter builds text
// with it. Each backend supplies an "expression builder" for its medium;
// the rules below are written once.
//
//   score:   s = c * dot, c = scale * log2(e)             (no soft-cap)
//            s = cap * log2(e) * tanh(dot * scale / cap)  (soft-cap)
//            in base-2 logit units, so every backend exponentiates with 2^x
//   softmax: a row's state (m, l) in base-2 units, its LSE ln 2 (m + log2 l),
//            a part's weight 2^(m - safe max) when states merge, and a
//            merge of LSEs max + ln 2 log2 sum (SoftmaxRules)
//   mask:    query i sees key j when j < kv_len and
//            -left <= j - (i + shift) <= right,
//            shift = kv_len - q_len for bottom-right masks, else 0; an
//            unbounded side (left or right = inf) has no test.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_DIALECT_ATTNSEMANTICS_H
#define ATTN_DIALECT_ATTNSEMANTICS_H

#include "dialect/AttnDialect.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"

#include <optional>

namespace mlir::attn {

constexpr double kLog2E = 1.4426950408889634; // log2(e)
constexpr double kLn2 = 0.6931471805599453;   // ln(2) = 1 / log2(e)

/// attn.qk's transform of a raw dot product into base-2 logit units.
struct ScoreTransform {
  double scale;
  std::optional<double> softcap;

  /// The transform `qk` applies (its scale and optional soft-cap).
  static ScoreTransform of(QKOp qk) {
    std::optional<APFloat> softcap = qk.getSoftcap();
    return {qk.getScale().convertToDouble(),
            softcap ? std::optional<double>(softcap->convertToDouble())
                    : std::nullopt};
  }
  /// c of s = c * dot (c > 0: the verifier's scale > 0), or none with a
  /// soft-cap.
  std::optional<double> linearFactor() const {
    if (softcap)
      return std::nullopt;
    return scale * kLog2E;
  }
  /// With a soft-cap, s = tanhOutputFactor() * tanh(dot * tanhInputFactor()).
  double tanhInputFactor() const { return scale / *softcap; }
  double tanhOutputFactor() const { return *softcap * kLog2E; }
};

/// The mask's rules over a builder `E` of signed integer expressions in
/// some medium (IR values, or text). `E` provides a type `Value` and
///
///   Value less(Value x, Value y);            // x < y
///   Value sub(Value x, Value y);             // x - y
///   Value add(Value x, Value y);             // x + y
///   Value zero();                            // 0
///   Value atLeast(Value x, int64_t bound);   // x >= bound
///   Value atMost(Value x, int64_t bound);    // x <= bound
///   Value both(Value x, Value y);            // x && y
///
/// and each rule builds its expression in the order written.
template <typename E> class MaskRules {
public:
  using Value = typename E::Value;

  MaskRules(E &e, MaskAttr mask) : e(e), mask(mask) {}

  /// Where query i's diagonal key is, minus i: kv_len - q_len for
  /// bottom-right masks, 0 otherwise.
  Value shift(Value qLen, Value kvLen) {
    return mask.isBottomRight() ? e.sub(kvLen, qLen) : e.zero();
  }

  /// Whether `query` sees `key` (the mask, plus key < kv_len).
  Value visible(Value key, Value query, Value qLen, Value kvLen) {
    Value result = e.less(key, kvLen);
    if (mask.isNone())
      return result;
    Value diagonal = e.add(query, shift(qLen, kvLen));
    return bounded(result, e.sub(key, diagonal));
  }

  /// The same for a query whose diagonal key (query + shift) is known.
  Value visibleFromDiagonal(Value key, Value diagonal, Value kvLen) {
    Value result = e.less(key, kvLen);
    if (mask.isNone())
      return result;
    return bounded(result, e.sub(key, diagonal));
  }

  /// Whether every key in [keyFirst, keyLast] is visible to every query in
  /// [queryFirst, queryLast] (`every`: such a tile needs no mask), or
  /// whether some key may be visible to some query (false: the tile adds
  /// nothing).
  Value band(Value keyFirst, Value keyLast, Value queryFirst, Value queryLast,
             Value qLen, Value kvLen, bool every) {
    Value result = e.less(every ? keyLast : keyFirst, kvLen);
    if (mask.isNone())
      return result;
    Value diagonalShift = shift(qLen, kvLen);
    // Over the rectangle, a key's offset from its query's diagonal
    // position spans [least, most]. Every pair is visible when that span
    // lies inside [-left, right]; some pair may be (keys past kv_len
    // included, which only errs towards "some") when the two overlap.
    auto least = [&] {
      return e.sub(keyFirst, e.add(queryLast, diagonalShift));
    };
    auto most = [&] {
      return e.sub(keyLast, e.add(queryFirst, diagonalShift));
    };
    if (mask.hasLeftBound()) {
      Value offset = every ? least() : most();
      result = e.both(result, e.atLeast(offset, -mask.getLeft()));
    }
    if (mask.hasRightBound()) {
      Value offset = every ? most() : least();
      result = e.both(result, e.atMost(offset, mask.getRight()));
    }
    return result;
  }

private:
  /// `result` and the window's bounds on `rel`, a key's offset from its
  /// query's diagonal key.
  Value bounded(Value result, Value rel) {
    if (mask.hasLeftBound())
      result = e.both(result, e.atLeast(rel, -mask.getLeft()));
    if (mask.hasRightBound())
      result = e.both(result, e.atMost(rel, mask.getRight()));
    return result;
  }

  E &e;
  MaskAttr mask;
};

/// The softmax state's rules over a builder `E` of f32 expressions in some
/// medium. A row's state is (m, l): m its largest score in base-2 logit
/// units, l the sum of 2^(s - m) over its keys. `E` provides a type
/// `Value` and
///
///   Value positive(Value x);                  // x > 0
///   Value add(Value x, Value y);              // x + y
///   Value sub(Value x, Value y);              // x - y
///   Value scaled(Value x, double c);          // x * c
///   Value log2(Value x);                      // log2(x)
///   Value exp2(Value x);                      // 2^x
///   Value safeMax(Value m);                   // m == -inf ? 0 : m
///   Value select(Value c, Value x, Value y);  // c ? x : y
///   Value negInf();                           // -inf
///
/// and each rule builds its expression in the order written.
template <typename E> class SoftmaxRules {
public:
  using Value = typename E::Value;

  explicit SoftmaxRules(E &e) : e(e) {}

  /// Whether a row saw a key: l > 0 (an empty row's l is 0).
  Value seen(Value l) { return e.positive(l); }

  /// attn.finalize's LSE, ln(sum of e^scores) = ln 2 (m + log2 l); -inf
  /// for a row that saw no key (`seen`: l > 0).
  Value logSumExp(Value m, Value l, Value seen) {
    Value log2Sum = e.add(m, e.log2(l));
    // Each expression in a statement of its own: C++ leaves the order of
    // a call's arguments unspecified.
    Value natural = e.scaled(log2Sum, kLn2);
    Value empty = e.negInf();
    return e.select(seen, natural, empty);
  }

  /// The shift every part's running maximum is taken against when
  /// states merge or a reference moves: the new maximum, or 0 where it is
  /// -inf (every part empty), so that no weight is NaN.
  Value shift(Value max) { return e.safeMax(max); }
  /// A part's weight against `shift`: 2^(m - shift), 0 for an empty part
  /// (m = -inf). Merged l and acc are the parts' sums under these weights;
  /// p = weight(score, shift) is a probability of the online softmax.
  Value weight(Value m, Value shift) { return e.exp2(e.sub(m, shift)); }

  /// attn.merge_states' LSE from the parts' largest LSE `max` (natural
  /// units) and the sum of their weights e^(L_n - max): max + ln 2 log2
  /// sum; -inf where no part saw a key (`seen`: sum > 0).
  Value mergedLogSumExp(Value max, Value sum, Value seen) {
    Value lnSum = e.scaled(e.log2(sum), kLn2);
    Value total = e.add(max, lnSum);
    Value empty = e.negInf();
    return e.select(seen, total, empty);
  }

private:
  E &e;
};

/// SoftmaxRules' builder for IR: f32 values and arith/math ops at `b`.
struct F32Exprs {
  using Value = mlir::Value;
  ImplicitLocOpBuilder &b;

  Value positive(Value x) {
    Value zero = arith::ConstantOp::create(b, b.getF32FloatAttr(0));
    return arith::CmpFOp::create(b, arith::CmpFPredicate::OGT, x, zero);
  }
  Value add(Value x, Value y) { return arith::AddFOp::create(b, x, y); }
  Value sub(Value x, Value y) { return arith::SubFOp::create(b, x, y); }
  Value exp2(Value x) { return math::Exp2Op::create(b, x); }
  /// `m == -inf ? 0 : m`.
  Value safeMax(Value m) {
    Value minusInf = negInf();
    Value isEmpty =
        arith::CmpFOp::create(b, arith::CmpFPredicate::OEQ, m, minusInf);
    Value zero = arith::ConstantOp::create(b, b.getF32FloatAttr(0));
    return arith::SelectOp::create(b, isEmpty, zero, m);
  }
  Value scaled(Value x, double c) {
    Value k = arith::ConstantOp::create(b, b.getF32FloatAttr(c));
    return arith::MulFOp::create(b, x, k);
  }
  Value log2(Value x) { return math::Log2Op::create(b, x); }
  Value select(Value c, Value x, Value y) {
    return arith::SelectOp::create(b, c, x, y);
  }
  Value negInf() {
    return arith::ConstantOp::create(b, b.getF32FloatAttr(-INFINITY));
  }
};

/// MaskRules' builder for IR: index values and arith ops at `b`.
struct IndexExprs {
  using Value = mlir::Value;
  ImplicitLocOpBuilder &b;

  Value less(Value x, Value y) {
    return arith::CmpIOp::create(b, arith::CmpIPredicate::slt, x, y);
  }
  Value sub(Value x, Value y) { return arith::SubIOp::create(b, x, y); }
  Value add(Value x, Value y) { return arith::AddIOp::create(b, x, y); }
  Value zero() { return arith::ConstantIndexOp::create(b, 0); }
  Value atLeast(Value x, int64_t bound) {
    Value c = arith::ConstantIndexOp::create(b, bound);
    return arith::CmpIOp::create(b, arith::CmpIPredicate::sge, x, c);
  }
  Value atMost(Value x, int64_t bound) {
    Value c = arith::ConstantIndexOp::create(b, bound);
    return arith::CmpIOp::create(b, arith::CmpIPredicate::sle, x, c);
  }
  Value both(Value x, Value y) { return arith::AndIOp::create(b, x, y); }
};

} // namespace mlir::attn

#endif // ATTN_DIALECT_ATTNSEMANTICS_H
