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
//   K/V:     a quantized cache's byte decoded (fp8 e4m3fn, e5m2, int8)
//            times its scale (QuantRules)
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_DIALECT_ATTNSEMANTICS_H
#define ATTN_DIALECT_ATTNSEMANTICS_H

#include "dialect/AttnDialect.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"

#include <limits>
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

/// The stored formats of a quantized K/V cache (attn.attention's K and V).
enum class KVFormat { None, E4M3, E5M2, Int8 };

/// The format of K/V elements of type `elt`; None for a float read as is.
inline KVFormat kvFormatOf(Type elt) {
  if (isa<Float8E4M3FNType>(elt))
    return KVFormat::E4M3;
  if (isa<Float8E5M2Type>(elt))
    return KVFormat::E5M2;
  if (elt.isSignlessInteger(8))
    return KVFormat::Int8;
  return KVFormat::None;
}

/// The largest finite magnitude of a quantized format (not None): 448
/// (e4m3fn), 57344 (e5m2), 127 (i8, kept symmetric). encode saturates
/// there; a per-token scale maps a row's absmax onto it.
inline double largestFinite(KVFormat format) {
  switch (format) {
  case KVFormat::E4M3:
    return 448.0;
  case KVFormat::E5M2:
    return 57344.0;
  default:
    return 127.0;
  }
}

/// What a dequantization scale's rank says: one for the tensor (rank 0),
/// one a K/V head (rank 1, [Hkv]), or one a token and head (K/V's rank - 1,
/// K/V's shape without D).
enum class ScaleGranularity { Tensor, Head, Token };

inline ScaleGranularity scaleGranularityOf(MemRefType scale) {
  switch (scale.getRank()) {
  case 0:
    return ScaleGranularity::Tensor;
  case 1:
    return ScaleGranularity::Head;
  default:
    return ScaleGranularity::Token;
  }
}

/// Whether `scale` (a k_scale or v_scale operand, or null) is per token.
inline bool isTokenScale(Value scale) {
  return scale && scaleGranularityOf(cast<MemRefType>(scale.getType())) ==
                      ScaleGranularity::Token;
}

/// The value of a stored K/V byte (decode) and the byte of a value
/// (encode), over a builder `E` of i32 and f32 expressions in some medium. `E`
/// provides a type `Value` and
///
///   Value field(Value x, int shift, int width); // (x >> shift) & (2^w - 1)
///   Value icst(int64_t c);                      // i32 constant
///   Value iadd(Value x, Value y);               // x + y (i32)
///   Value imax(Value x, Value y);               // max(x, y) (signed i32)
///   Value isZero(Value x);                      // x == 0 (i32)
///   Value iequal(Value x, int64_t c);           // x == c (i32)
///   Value select(Value c, Value x, Value y);    // c ? x : y
///   Value toF32(Value x);                       // float(x), x >= 0 (i32)
///   Value signedByte(Value x);                  // float(int8_t(x))
///   Value pow2(Value k);                        // 2^k, f32, k integral
///   Value fmul(Value x, Value y);               // x * y (f32)
///   Value fneg(Value x);                        // -x (f32)
///   Value fcst(double c);                       // f32 constant
///
/// and, for encode,
///
///   Value fabs(Value x);                        // |x| (f32)
///   Value fmin(Value x, Value y);               // min(x, y), NaN-free y
///   Value isNaN(Value x);                       // x != x
///   Value isNegative(Value x);                  // x's sign bit
///   Value f32Exponent(Value x);                 // x's biased exponent field
///   Value roundEven(Value x);                   // to integral, ties even
///   Value toI32(Value x);                       // int32(x), x integral
///   Value ishl(Value x, int64_t c);             // x << c (i32)
///   Value ior(Value x, Value y);                // x | y (i32)
///   Value iand(Value x, Value y);               // x & y (i32)
///   Value clampI8(Value x);                     // clamp to [-127, 127]
///   Value fdivExact(Value x, Value y);          // x / y, y a power of 2
///
/// The byte is an i32 in [0, 255]. An fp8 byte S.E.M is read from the OCP
/// definition with no subnormal f32 on the way (some targets flush them):
/// (M + (E ? 2^mb : 0)) * 2^(max(E, 1) - bias - mb), negated for S, with
/// e4m3fn's S.1111.111 NaN and e5m2's E = 31 infinities and NaNs.
template <typename E> class QuantRules {
public:
  using Value = typename E::Value;

  explicit QuantRules(E &e) : e(e) {}

  /// The f32 value of `byte` stored as `format` (not None).
  Value decode(KVFormat format, Value byte) {
    if (format == KVFormat::Int8)
      return e.signedByte(byte);
    const bool e4m3 = format == KVFormat::E4M3;
    const int mb = e4m3 ? 3 : 2, eb = e4m3 ? 4 : 5, bias = e4m3 ? 7 : 15;
    Value exponent = e.field(byte, mb, eb);
    Value mantissa = e.field(byte, 0, mb);
    // Each expression in a statement of its own: C++ leaves the order of
    // a call's arguments unspecified.
    Value subnormal = e.isZero(exponent);
    Value noLead = e.icst(0);
    Value lead = e.icst(int64_t(1) << mb);
    Value implicit = e.select(subnormal, noLead, lead);
    Value significand = e.iadd(mantissa, implicit);
    Value one = e.icst(1);
    Value biased = e.imax(exponent, one);
    Value unbias = e.icst(-(bias + mb));
    Value power = e.iadd(biased, unbias);
    Value sig = e.toF32(significand);
    Value unit = e.pow2(power);
    Value magnitude = e.fmul(sig, unit);
    if (e4m3) {
      Value nan = e.fcst(std::numeric_limits<double>::quiet_NaN());
      Value low = e.field(byte, 0, 7);
      Value isNaN = e.iequal(low, 0x7f);
      magnitude = e.select(isNaN, nan, magnitude);
    } else {
      Value inf = e.fcst(std::numeric_limits<double>::infinity());
      Value nan = e.fcst(std::numeric_limits<double>::quiet_NaN());
      Value noMantissa = e.isZero(mantissa);
      Value special = e.select(noMantissa, inf, nan);
      Value isSpecial = e.iequal(exponent, 31);
      magnitude = e.select(isSpecial, special, magnitude);
    }
    Value sign = e.field(byte, 7, 1);
    Value positive = e.isZero(sign);
    Value negated = e.fneg(magnitude);
    return e.select(positive, magnitude, negated);
  }

  /// The byte of `format` (not None) nearest the f32 `x`, ties to even:
  /// fp8 saturates at the largest finite value (448 e4m3, 57344 e5m2) and
  /// keeps NaN a NaN (0x7f); i8 rounds and clamps to [-127, 127] (NaN:
  /// -127).
  /// With a the clamped magnitude and e its binade (at least the smallest
  /// normal one), q = round(a / 2^(e - mb)) is exact and the byte is
  /// (e + bias - 1) * 2^mb + q: q = 2^mb .. 2^(mb+1) in a normal binade
  /// (a carry into the next one included), 0 .. 2^mb below.
  Value encode(KVFormat format, Value x) {
    if (format == KVFormat::Int8) {
      Value rounded = e.roundEven(x);
      Value clamped = e.clampI8(rounded);
      Value integer = e.toI32(clamped);
      Value mask = e.icst(0xff);
      return e.iand(integer, mask);
    }
    const bool e4m3 = format == KVFormat::E4M3;
    const int mb = e4m3 ? 3 : 2, bias = e4m3 ? 7 : 15;
    Value largest = e.fcst(largestFinite(format));
    Value absolute = e.fabs(x);
    Value a = e.fmin(absolute, largest);
    Value field = e.f32Exponent(a);
    Value unbiasF32 = e.icst(-127);
    Value unbiased = e.iadd(field, unbiasF32);
    Value smallest = e.icst(1 - bias);
    Value binade = e.imax(unbiased, smallest);
    Value toStep = e.icst(-mb);
    Value stepPower = e.iadd(binade, toStep);
    Value step = e.pow2(stepPower);
    Value ratio = e.fdivExact(a, step);
    Value rounded = e.roundEven(ratio);
    Value q = e.toI32(rounded);
    Value rebias = e.icst(bias - 1);
    Value biased = e.iadd(binade, rebias);
    Value high = e.ishl(biased, mb);
    Value magnitude = e.iadd(high, q);
    Value nan = e.icst(0x7f);
    Value isNaN = e.isNaN(x);
    Value finite = e.select(isNaN, nan, magnitude);
    Value negative = e.isNegative(x);
    Value signBit = e.icst(0x80);
    Value noSign = e.icst(0);
    Value sign = e.select(negative, signBit, noSign);
    return e.ior(finite, sign);
  }

private:
  E &e;
};

/// QuantRules' builder for IR: i32 and f32 values and arith ops at `b`.
struct ByteExprs {
  using Value = mlir::Value;
  ImplicitLocOpBuilder &b;

  Value icst(int64_t c) {
    return arith::ConstantOp::create(b, b.getI32IntegerAttr(c));
  }
  Value field(Value x, int shift, int width) {
    Value shifted = x;
    if (shift) {
      Value amount = icst(shift);
      shifted = arith::ShRUIOp::create(b, x, amount);
    }
    Value mask = icst((int64_t(1) << width) - 1);
    return arith::AndIOp::create(b, shifted, mask);
  }
  Value iadd(Value x, Value y) { return arith::AddIOp::create(b, x, y); }
  Value imax(Value x, Value y) { return arith::MaxSIOp::create(b, x, y); }
  Value iequal(Value x, int64_t c) {
    Value k = icst(c);
    return arith::CmpIOp::create(b, arith::CmpIPredicate::eq, x, k);
  }
  Value isZero(Value x) { return iequal(x, 0); }
  Value select(Value c, Value x, Value y) {
    return arith::SelectOp::create(b, c, x, y);
  }
  Value toF32(Value x) { return arith::UIToFPOp::create(b, b.getF32Type(), x); }
  Value signedByte(Value x) {
    Value byte = arith::TruncIOp::create(b, b.getI8Type(), x);
    return arith::SIToFPOp::create(b, b.getF32Type(), byte);
  }
  /// 2^k as the f32 with biased exponent k + 127 (k in [-126, 127]).
  Value pow2(Value k) {
    Value bias = icst(127);
    Value biased = iadd(k, bias);
    Value amount = icst(23);
    Value bits = arith::ShLIOp::create(b, biased, amount);
    return arith::BitcastOp::create(b, b.getF32Type(), bits);
  }
  Value fmul(Value x, Value y) { return arith::MulFOp::create(b, x, y); }
  Value fneg(Value x) { return arith::NegFOp::create(b, x); }
  Value fcst(double c) {
    return arith::ConstantOp::create(b, b.getF32FloatAttr(c));
  }
  Value fabs(Value x) { return math::AbsFOp::create(b, x); }
  /// minnumf: a NaN `x` gives `y`, so later integer steps see no NaN
  /// (encode selects NaN's byte on its own).
  Value fmin(Value x, Value y) { return arith::MinNumFOp::create(b, x, y); }
  Value isNaN(Value x) {
    return arith::CmpFOp::create(b, arith::CmpFPredicate::UNO, x, x);
  }
  Value isNegative(Value x) {
    Value bits = arith::BitcastOp::create(b, b.getI32Type(), x);
    Value zero = icst(0);
    return arith::CmpIOp::create(b, arith::CmpIPredicate::slt, bits, zero);
  }
  Value f32Exponent(Value x) {
    Value bits = arith::BitcastOp::create(b, b.getI32Type(), x);
    return field(bits, 23, 8);
  }
  Value roundEven(Value x) { return math::RoundEvenOp::create(b, x); }
  Value toI32(Value x) { return arith::FPToSIOp::create(b, b.getI32Type(), x); }
  Value ishl(Value x, int64_t c) {
    Value amount = icst(c);
    return arith::ShLIOp::create(b, x, amount);
  }
  Value ior(Value x, Value y) { return arith::OrIOp::create(b, x, y); }
  Value iand(Value x, Value y) { return arith::AndIOp::create(b, x, y); }
  /// max then min with NaN-free bounds: a NaN gives -127, never poison.
  Value clampI8(Value x) {
    Value lo = fcst(-127.0);
    Value hi = fcst(127.0);
    Value floor = arith::MaxNumFOp::create(b, x, lo);
    return arith::MinNumFOp::create(b, floor, hi);
  }
  Value fdivExact(Value x, Value y) { return arith::DivFOp::create(b, x, y); }
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
