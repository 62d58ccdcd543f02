//===- AttnOps.cpp - attn operations --------------------------------------===//
//
// The ops' generated definitions, attn.attention's accessors, effects and
// verifier (the shared rules in OperandChecks.h), and attn.yield's.
// attn.cache_append and attn.merge_states are in AttnCacheOps.cpp, the L1
// ops in AttnTileOps.cpp.
//
//===----------------------------------------------------------------------===//

#include "dialect/AttnDialect.h"
#include "dialect/AttnMods.h"
#include "dialect/AttnSemantics.h"
#include "dialect/OperandChecks.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpImplementation.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::detail;

#define GET_OP_CLASSES
#include "dialect/AttnOps.cpp.inc"

//===----------------------------------------------------------------------===//
// AttentionOp
//===----------------------------------------------------------------------===//

int64_t AttentionOp::getNumQueryHeads() {
  return memrefOf(getQ()).getDimSize(1);
}
int64_t AttentionOp::getNumKVHeads() { return memrefOf(getK()).getDimSize(1); }
// The head dim is the last dim in the padded and the packed forms.
int64_t AttentionOp::getHeadDim() {
  MemRefType q = memrefOf(getQ());
  return q.getDimSize(q.getRank() - 1);
}
int64_t AttentionOp::getValueHeadDim() {
  MemRefType o = memrefOf(getO());
  return o.getDimSize(o.getRank() - 1);
}
int64_t AttentionOp::getBlockSize() {
  return isPaged() ? memrefOf(getK()).getDimSize(2) : 0;
}

std::optional<int64_t> AttentionOp::getStaticQueryLength() {
  if (isPackedQ())
    return getMaxQLen();
  int64_t sq = memrefOf(getQ()).getDimSize(2);
  if (ShapedType::isDynamic(sq))
    return std::nullopt;
  return sq;
}

float AttentionOp::getScaleOrDefault() {
  if (std::optional<APFloat> scale = getScale())
    return scale->convertToFloat();
  return 1.0f / std::sqrt(static_cast<float>(getHeadDim()));
}

bool AttentionOp::isQuantizedQ() {
  return kvFormatOf(memrefOf(getQ()).getElementType()) != KVFormat::None;
}

bool AttentionOp::isQuantizedKV() {
  return kvFormatOf(memrefOf(getK()).getElementType()) != KVFormat::None;
}

MaskAttr AttentionOp::getMaskOrNone() {
  if (MaskAttr mask = getMaskAttr())
    return mask;
  return MaskAttr::getNone(getContext());
}

void AttentionOp::getEffects(
    SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>>
        &effects) {
  addOperandEffects(getOperation(), {getO(), getLse()}, effects);
}

namespace {

/// Shape checks for AttentionOp.
class AttentionVerifier : public OperandChecks<AttentionOp> {
public:
  using OperandChecks::OperandChecks;

  LogicalResult verify() {
    if (failed(checkValueSource()))
      return failure();
    // Under v_from_k V is k's leading columns: the rules that relate V to
    // K hold by construction, so they run on k itself.
    Value q = op.getQ(), k = op.getK(), v = op.getValueBuffer(), o = op.getO();
    Value lse = op.getLse(), table = op.getBlockTable(), lens = op.getKvLens(),
          cuQ = op.getCuSeqlensQ(), cuK = op.getCuSeqlensK(),
          sinks = op.getSinks(), kScale = op.getKScale(),
          vScale = op.getVScale();
    const bool paged = table != nullptr, packedQ = cuQ != nullptr,
               packedKV = cuK != nullptr;
    if (packedKV && (table || lens))
      return op.emitOpError()
             << "operand 'cu_seqlens_k' packs K/V and gives their lengths; "
                "operand '"
             << (table ? "block_table" : "kv_lens")
             << "' cannot be given with it";
    StringRef kvLayout = paged      ? "[num_blocks, Hkv, block_size, D]"
                         : packedKV ? "[total_k, Hkv, D] (packed by "
                                      "cu_seqlens_k)"
                                    : "[B, Hkv, Sk, D]";
    StringRef vLayout = paged      ? "[num_blocks, Hkv, block_size, Dv]"
                        : packedKV ? "[total_k, Hkv, Dv] (packed by "
                                     "cu_seqlens_k)"
                                   : "[B, Hkv, Sk, Dv]";
    const int64_t qRank = packedQ ? 3 : 4, kvRank = packedKV ? 3 : 4;
    if (failed(checkRank("q", q, qRank,
                         packedQ ? "[total_q, Hq, D] (packed by cu_seqlens_q)"
                                 : "[B, Hq, Sq, D]")) ||
        failed(checkRank("k", k, kvRank, kvLayout)) ||
        failed(checkRank("v", v, kvRank, vLayout)) ||
        failed(checkRank("o", o, qRank,
                         packedQ ? "[total_q, Hq, Dv] (packed by "
                                   "cu_seqlens_q)"
                                 : "[B, Hq, Sq, Dv]")) ||
        (lse && failed(checkRank("lse", lse, qRank - 1,
                                 packedQ ? "[total_q, Hq] (packed by "
                                           "cu_seqlens_q)"
                                         : "[B, Hq, Sq]"))))
      return failure();
    if (table && failed(checkRank("block_table", table, 2, "[B, max_blocks]")))
      return failure();
    if (lens && failed(checkRank("kv_lens", lens, 1, "[B]")))
      return failure();
    if (cuQ && failed(checkRank("cu_seqlens_q", cuQ, 1, "[B + 1]")))
      return failure();
    if (cuK && failed(checkRank("cu_seqlens_k", cuK, 1, "[B + 1]")))
      return failure();
    if (sinks && failed(checkRank("sinks", sinks, 1, "[Hq]")))
      return failure();

    // Element types: K and V are read with Q's type; accumulation is f32.
    Builder b(op.getContext());
    if (failed(checkQueryElement(q, k)) || failed(checkFloatElement("o", o)) ||
        failed(checkElementType("lse", lse, b.getF32Type())) ||
        failed(checkElementType("block_table", table, b.getI32Type())) ||
        failed(checkElementType("kv_lens", lens, b.getI32Type())) ||
        failed(checkElementType("cu_seqlens_q", cuQ, b.getI32Type())) ||
        failed(checkElementType("cu_seqlens_k", cuK, b.getI32Type())) ||
        (sinks && failed(checkFloatElement("sinks", sinks))) ||
        failed(checkKVElements(q, k, v)))
      return failure();

    // Heads (dim 1 in every form) and head dims (the last dim) are
    // static: they fix the kernel's shape.
    const int64_t qd = qRank - 1, kvd = kvRank - 1;
    if (failed(checkStatic("q", q, 1, "head count")) ||
        failed(checkStatic("k", k, 1, "head count")) ||
        failed(checkStatic("q", q, qd, "head dim")) ||
        failed(checkStatic("k", k, kvd, "head dim")) ||
        failed(checkStatic("v", v, kvd, "head dim")) ||
        failed(checkStatic("o", o, qd, "head dim")))
      return failure();
    int64_t hq = memrefOf(q).getDimSize(1), hkv = memrefOf(k).getDimSize(1);
    int64_t d = memrefOf(q).getDimSize(qd), dv = op.getValueHeadDim();
    if (failed(checkHeadDimLimit(d, dv)) ||
        failed(checkSame("k", k, kvd, "q", q, qd, "head dim (D)")) ||
        (!op.getVFromK() &&
         failed(checkSame("o", o, qd, "v", v, kvd, "value head dim (Dv)"))) ||
        failed(checkSame("v", v, 1, "k", k, 1, "K/V head count")) ||
        failed(checkSame("o", o, 1, "q", q, 1, "query head count")))
      return failure();
    if (op.getVFromK() && dv > d)
      return op.emitOpError()
             << "attribute 'v_from_k' reads V as the first Dv columns of "
                "operand 'k': operand 'o''s head dim (Dv = "
             << dv << ") must be at most k's (D = " << d << ")";
    if (hq % hkv != 0)
      return op.emitOpError()
             << "query heads (" << hq << ") must be a multiple of K/V heads ("
             << hkv << ") for grouped-query attention";
    // One sink a query head, read by head index: a static Hq keeps every
    // read in bounds.
    if (sinks &&
        (failed(checkStatic("sinks", sinks, 0, "query head count")) ||
         failed(checkSame("sinks", sinks, 0, "q", q, 1, "query head count"))))
      return failure();

    StringRef tokenShape = paged      ? "[num_blocks, Hkv, block_size]"
                           : packedKV ? "[total_k, Hkv]"
                                      : "[B, Hkv, Sk]";
    if (failed(checkScale("k_scale", kScale, "k", k, tokenShape)) ||
        failed(checkScale("v_scale", vScale, "v", v, tokenShape)) ||
        failed(checkQueryScale(op.getQScale(), q)))
      return failure();

    // Query tokens: O and LSE have Q's.
    if (packedQ) {
      if (failed(checkSame("o", o, 0, "q", q, 0,
                           "packed query tokens (total_q)")) ||
          (lse &&
           (failed(checkSame("lse", lse, 0, "q", q, 0,
                             "packed query tokens (total_q)")) ||
            failed(checkSame("lse", lse, 1, "q", q, 1, "query head count")))))
        return failure();
    } else {
      if (failed(checkSame("o", o, 2, "q", q, 2, "query length (Sq)")))
        return failure();
      if (lse &&
          (failed(checkSame("lse", lse, 1, "q", q, 1, "query head count")) ||
           failed(checkSame("lse", lse, 2, "q", q, 2, "query length (Sq)"))))
        return failure();
    }
    if (std::optional<int64_t> maxQLen = op.getMaxQLen()) {
      if (!packedQ)
        return op.emitOpError()
               << "attribute 'max_q_len' bounds the query lengths of a "
                  "packed batch; it needs operand 'cu_seqlens_q' (a padded "
                  "Q's length is its dim 2)";
      if (*maxQLen < 1 || *maxQLen > kMaxDim)
        return op.emitOpError()
               << "attribute 'max_q_len' must be in [1, 2^31-1], got "
               << *maxQLen;
    }

    // The batch: Q's dim 0, or cu_seqlens_q's length minus 1.
    Batch batch = packedQ ? Batch{"cu_seqlens_q", cuQ, 1} : Batch{"q", q, 0};
    if (failed(checkBatch(batch, {"cu_seqlens_k", cuK, 1})) ||
        failed(checkBatch(batch, {"kv_lens", lens, 0})) ||
        (!packedQ && (failed(checkBatch(batch, {"o", o, 0})) ||
                      failed(checkBatch(batch, {"lse", lse, 0})))))
      return failure();

    if (packedKV) {
      if (failed(
              checkSame("v", v, 0, "k", k, 0, "packed key tokens (total_k)")))
        return failure();
    } else if (!paged) {
      if (failed(checkBatch(batch, {"k", k, 0})) ||
          failed(checkBatch(batch, {"v", v, 0})) ||
          failed(checkSame("v", v, 2, "k", k, 2, "key length (Sk)")))
        return failure();
    } else {
      if (!lens)
        return op.emitOpError()
               << "a paged K/V cache (operand 'block_table') requires operand "
                  "'kv_lens' with each sequence's length";
      if (failed(checkStatic("k", k, 2, "block size")) ||
          failed(checkSame("v", v, 0, "k", k, 0, "paged cache block count")) ||
          failed(checkSame("v", v, 2, "k", k, 2, "paged cache block size")) ||
          failed(checkBatch(batch, {"block_table", table, 0})))
        return failure();
    }

    if (failed(checkPositiveFinite("scale", op.getScale())) ||
        failed(checkPositiveFinite("softcap", op.getSoftcap())) ||
        failed(checkScoreFactors()))
      return failure();
    // The operands the op reads, then those it writes.
    const NamedOperand operands[] = {{"q", q},
                                     {"k", k},
                                     {"v", v},
                                     {"block_table", table},
                                     {"kv_lens", lens},
                                     {"cu_seqlens_q", cuQ},
                                     {"cu_seqlens_k", cuK},
                                     {"sinks", sinks},
                                     {"k_scale", kScale},
                                     {"v_scale", vScale},
                                     {"q_scale", op.getQScale()},
                                     {"o", o},
                                     {"lse", lse}};
    ArrayRef<NamedOperand> all(operands);
    if (failed(checkWrittenDistinct(all.take_back(2), all.drop_back(2))) ||
        failed(checkNoAliasing("o", o)) ||
        (lse && failed(checkNoAliasing("lse", lse))))
      return failure();
    // Last, so the rules above name head dims and counts of 0 themselves.
    return checkNoZeroDims(all);
  }

  /// V is operand `v`, or k's leading columns under `v_from_k` (MLA),
  /// which a quantized k's `k_scale` dequantizes.
  LogicalResult checkValueSource() {
    if (!op.getVFromK()) {
      if (!op.getV())
        return op.emitOpError()
               << "needs operand 'v', or attribute 'v_from_k' to read V as "
                  "the first Dv columns of operand 'k' (MLA's latent cache)";
      return success();
    }
    if (op.getV())
      return op.emitOpError()
             << "attribute 'v_from_k' reads V from operand 'k'; operand 'v' "
                "cannot be given with it";
    if (op.getVScale())
      return op.emitOpError()
             << "attribute 'v_from_k' reads V from operand 'k', which "
                "'k_scale' dequantizes; operand 'v_scale' cannot be given "
                "with it";
    return success();
  }

  /// Q is f16, bf16 or f32, or fp8 over a quantized K/V cache (fp8
  /// attention).
  LogicalResult checkQueryElement(Value q, Value k) {
    Type elt = memrefOf(q).getElementType();
    KVFormat format = kvFormatOf(elt);
    if (format == KVFormat::None || format == KVFormat::Int8)
      return checkFloatElement("q", q);
    if (kvFormatOf(memrefOf(k).getElementType()) == KVFormat::None)
      return op.emitOpError()
             << "operand 'q' element type " << elt
             << " makes an fp8 attention, which needs a quantized K/V cache "
                "(f8E4M3FN, f8E5M2 or i8 K and V); operand 'k' has element "
                "type "
             << memrefOf(k).getElementType();
    return success();
  }

  /// Q's dequantization scale: f32, contiguous, for an fp8 Q, per tensor
  /// (rank 0) or per query head ([Hq]).
  LogicalResult checkQueryScale(Value scale, Value q) {
    if (!scale)
      return success();
    MemRefType type = memrefOf(scale);
    if (!op.isQuantizedQ())
      return op.emitOpError()
             << "operand 'q_scale' dequantizes an fp8 q (f8E4M3FN or "
                "f8E5M2); operand 'q' has element type "
             << memrefOf(q).getElementType();
    if (failed(checkScaleBuffer("q_scale", scale)))
      return failure();
    if (type.getRank() > 1)
      return op.emitOpError() << "operand 'q_scale' must have rank 0 (per "
                                 "tensor) or 1 ([Hq], per query head), got "
                                 "rank "
                              << type.getRank();
    if (type.getRank() == 1 &&
        (failed(checkStatic("q_scale", scale, 0, "query head count")) ||
         failed(checkSame("q_scale", scale, 0, "q", q, 1, "query head count"))))
      return failure();
    return success();
  }

  /// K and V hold Q's float type, or are both one quantized format.
  LogicalResult checkKVElements(Value q, Value k, Value v) {
    Type kElt = memrefOf(k).getElementType(),
         vElt = memrefOf(v).getElementType();
    if (kvFormatOf(kElt) == KVFormat::None &&
        kvFormatOf(vElt) == KVFormat::None)
      return checkSameElement({{"k", k}, {"v", v}}, "q", q);
    if (kElt != vElt)
      return op.emitOpError()
             << "operand 'v' element type " << vElt
             << " must match operand 'k' (" << kElt
             << "): a quantized K/V cache stores both in one format";
    return success();
  }

  /// An operand whose dim 0 is the batch B, or B + 1 (`extra`) for the
  /// offsets of a packed form.
  struct Batch {
    StringRef name;
    Value value;
    int64_t extra;
  };

  /// `other` (if given) has `ref`'s batch where both are static.
  LogicalResult checkBatch(const Batch &ref, const Batch &other) {
    if (!other.value)
      return success();
    int64_t x = memrefOf(other.value).getDimSize(0);
    int64_t y = memrefOf(ref.value).getDimSize(0);
    if (ShapedType::isDynamic(x) || ShapedType::isDynamic(y) ||
        x - other.extra == y - ref.extra)
      return success();
    // Name the roles where an offsets array (B + 1) is one side.
    const bool offsets = ref.extra || other.extra;
    auto role = [&](int64_t extra) {
      return !offsets ? "" : extra ? " (B + 1)" : " (B)";
    };
    return op.emitOpError()
           << "batch mismatch: operand '" << other.name << "' dim 0 is " << x
           << role(other.extra) << " but operand '" << ref.name << "' dim 0 is "
           << y << role(ref.extra);
  }

  /// The kernels fold scale and soft-cap into f32 constants with log2(e)
  /// (AttnSemantics.h's ScoreTransform); each must be finite.
  LogicalResult checkScoreFactors() {
    double scale = op.getScaleOrDefault();
    std::optional<APFloat> cap = op.getSoftcap();
    auto finite = [](double x) { return std::isfinite(static_cast<float>(x)); };
    // The scores scale * log2(e) * <q, k> are f32: up to 2^64 they stay
    // finite for any f16 inputs (|<q, k>| <= 1024 * 65504^2) and for
    // bf16/f32 ones while |<q, k>| < 1.2e19 (AttnOps.td).
    if (scale > kMaxScale)
      return op.emitOpError()
             << "attribute 'scale' (" << scale << ") must be at most 2^64 ("
             << kMaxScale
             << "), so that the f32 scores scale * <q, k> stay finite";
    if (!cap)
      return success();
    double softcap = cap->convertToDouble();
    if (!finite(softcap * kLog2E))
      return op.emitOpError()
             << "attribute 'softcap' (" << softcap
             << ") times log2(e) overflows f32; softcap must be below "
             << std::numeric_limits<float>::max() / kLog2E;
    if (!finite(scale / softcap))
      return op.emitOpError()
             << "attribute 'scale' (" << scale << ") divided by 'softcap' ("
             << softcap << ") overflows f32";
    return success();
  }
};
} // namespace

LogicalResult AttentionOp::verify() {
  return AttentionVerifier(*this).verify();
}

LogicalResult AttentionOp::verifyRegions() {
  ValueRange captures = getCaptures();
  if (failed(verifyCaptureTypes(*this, captures)))
    return failure();
  for (auto [i, capture] : llvm::enumerate(captures)) {
    StringRef written = capture == getO()                 ? "o"
                        : getLse() && capture == getLse() ? "lse"
                                                          : "";
    if (!written.empty())
      return emitOpError() << "capture #" << i << " is operand '" << written
                           << "', which the op writes; captures are "
                              "read-only";
  }
  if (!captures.empty() && !hasMods())
    return emitOpError() << "has captures but no score_mod or mask_mod "
                            "region to read them";
  if (hasScoreMod() &&
      failed(verifyModRegion(*this, getScoreMod(), ModKind::Score, captures)))
    return failure();
  if (hasMaskMod() &&
      failed(verifyModRegion(*this, getMaskMod(), ModKind::Mask, captures)))
    return failure();
  return success();
}

LogicalResult YieldOp::verify() {
  Operation *parent = (*this)->getParentOp();
  if (!parent || !parent->hasTrait<OpTrait::attn::HoldsModRegion>())
    return emitOpError("ends a score_mod or mask_mod region: its parent must "
                       "be attn.attention, attn.qk, attn.mask or another op "
                       "that holds one (HoldsModRegion), got '")
           << (parent ? parent->getName().getStringRef() : "nothing") << "'";
  return success();
}
