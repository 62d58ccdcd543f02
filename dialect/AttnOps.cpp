//===- AttnOps.cpp - attn operations --------------------------------------===//

#include "dialect/AttnDialect.h"
#include "dialect/AttnMods.h"
#include "dialect/AttnSemantics.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpImplementation.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::attn;

#define GET_OP_CLASSES
#include "dialect/AttnOps.cpp.inc"

//===----------------------------------------------------------------------===//
// AttentionOp
//===----------------------------------------------------------------------===//

static MemRefType memrefOf(Value v) { return cast<MemRefType>(v.getType()); }

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
  MemRefType v = memrefOf(getV());
  return v.getDimSize(v.getRank() - 1);
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

/// An L0 op's effects: it writes the operands in `written` and reads all
/// others.
static void addOperandEffects(
    Operation *op, ArrayRef<Value> written,
    SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>>
        &effects) {
  for (OpOperand &operand : op->getOpOperands()) {
    if (llvm::is_contained(written, operand.get()))
      effects.emplace_back(MemoryEffects::Write::get(), &operand,
                           SideEffects::DefaultResource::get());
    else
      effects.emplace_back(MemoryEffects::Read::get(), &operand,
                           SideEffects::DefaultResource::get());
  }
}

void AttentionOp::getEffects(
    SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>>
        &effects) {
  addOperandEffects(getOperation(), {getO(), getLse()}, effects);
}

namespace {
/// An operand and the name its diagnostics give it.
using NamedOperand = std::pair<StringRef, Value>;

/// Operand checks shared by the L0 ops' verifiers, each error naming the
/// operand and the rule.
template <typename OpT> class OperandChecks {
public:
  explicit OperandChecks(OpT op) : op(op) {}

  /// Largest static dim accepted: sizes and strides travel as int32 on GPUs.
  static constexpr int64_t kMaxDim = std::numeric_limits<int32_t>::max();
  static constexpr int64_t kMaxHeadDim = 1024;
  static constexpr int64_t kMaxStride = int64_t(1) << 40;
  static constexpr int64_t kMaxSpan = int64_t(1) << 48;
  static constexpr double kMaxScale = 18446744073709551616.0; // 2^64

  /// `unitInner`: the innermost dim must have stride 1 (rows read as
  /// vectors); per-row scalars (a merge's LSEs) may have any stride.
  LogicalResult checkRank(StringRef name, Value v, int64_t rank,
                          StringRef layout, bool unitInner = true) {
    MemRefType type = memrefOf(v);
    if (type.getRank() != rank)
      return op.emitOpError()
             << "operand '" << name << "' must have rank " << rank << " "
             << layout << ", got rank " << type.getRank();
    for (int64_t i = 0; i < rank; ++i) {
      int64_t d = type.getDimSize(i);
      if (!ShapedType::isDynamic(d) && d > kMaxDim)
        return op.emitOpError() << "operand '" << name << "' dim " << i
                                << " is " << d << ", larger than 2^31-1";
    }
    SmallVector<int64_t> strides;
    int64_t offset;
    if (failed(type.getStridesAndOffset(strides, offset)))
      return op.emitOpError()
             << "operand '" << name << "' must have a strided layout";
    if (unitInner && strides.back() != 1)
      return op.emitOpError() << "operand '" << name
                              << "' must have unit stride in its innermost dim";
    return checkStrideRange(name, type, strides);
  }

  /// Static strides are in [0, 2^40] elements, and the elements that static
  /// sizes and strides address span less than 2^48: with dims below 2^31,
  /// no offset any backend computes in 64 bits can overflow.
  LogicalResult checkStrideRange(StringRef name, MemRefType type,
                                 ArrayRef<int64_t> strides) {
    int64_t span = 0;
    for (auto [i, stride] : llvm::enumerate(strides)) {
      if (ShapedType::isDynamic(stride))
        continue;
      if (stride < 0 || stride > kMaxStride)
        return op.emitOpError()
               << "operand '" << name << "' stride " << i << " is " << stride
               << "; static strides must be in [0, 2^40]";
      int64_t size = type.getDimSize(i);
      if (!ShapedType::isDynamic(size) && size > 0)
        span += (size - 1) * stride; // < 2^31 * 2^40 per dim, 4 dims
    }
    if (span >= kMaxSpan)
      return op.emitOpError()
             << "operand '" << name << "' addresses " << span
             << " elements past its first through its static sizes and "
                "strides; the limit is 2^48";
    return success();
  }

  /// Written operands (o, lse) must give each element its own address. A
  /// layout does when, taking its dims of size > 1 by increasing stride,
  /// each stride exceeds the farthest offset of the dims before it. Dims
  /// whose size or stride is dynamic are checked by the runtime instead.
  LogicalResult checkNoAliasing(StringRef name, Value v) {
    MemRefType type = memrefOf(v);
    SmallVector<int64_t> strides;
    int64_t offset;
    if (failed(type.getStridesAndOffset(strides, offset)))
      return success(); // checkRank has refused it
    SmallVector<int64_t> dims;
    for (int64_t i = 0, e = type.getRank(); i < e; ++i)
      if (type.getDimSize(i) != 1)
        dims.push_back(i);
    llvm::sort(dims, [&](int64_t a, int64_t b) {
      return std::pair(staticOr(strides[a], kMaxSpan), a) <
             std::pair(staticOr(strides[b], kMaxSpan), b);
    });
    int64_t reach = 0; // the farthest offset of the dims taken so far
    for (int64_t i : dims) {
      int64_t stride = strides[i], size = type.getDimSize(i);
      if (ShapedType::isDynamic(stride))
        return success();
      if (stride <= reach)
        return op.emitOpError()
               << "operand '" << name << "' has aliasing elements: dim " << i
               << " has stride " << stride << " but the dims with smaller "
               << "strides reach offset " << reach
               << "; each element of an output needs its own address";
      if (ShapedType::isDynamic(size))
        return success();
      reach += (size - 1) * stride;
    }
    return success();
  }

  /// Operands the op writes are buffers of their own: none is the same
  /// value as another written one or as any operand it reads (a read-only
  /// buffer may be read twice, e.g. as K and V).
  LogicalResult checkWrittenDistinct(ArrayRef<NamedOperand> written,
                                     ArrayRef<NamedOperand> read) {
    for (auto [i, w] : llvm::enumerate(written)) {
      if (!w.second)
        continue;
      for (auto [name, val] : written.take_front(i))
        if (val == w.second)
          return op.emitOpError()
                 << "operands '" << name << "' and '" << w.first
                 << "' are the same buffer; each output needs its own";
      for (auto [name, val] : read)
        if (val && val == w.second)
          return op.emitOpError()
                 << "operand '" << name << "' is the same buffer as operand '"
                 << w.first << "', which the op writes";
    }
    return success();
  }

  static int64_t staticOr(int64_t x, int64_t fallback) {
    return ShapedType::isDynamic(x) ? fallback : x;
  }

  LogicalResult checkStatic(StringRef name, Value v, int64_t dim,
                            StringRef what) {
    int64_t d = memrefOf(v).getDimSize(dim);
    if (ShapedType::isDynamic(d))
      return op.emitOpError() << "operand '" << name << "' " << what << " (dim "
                              << dim << ") must be static";
    if (d < 1)
      return op.emitOpError() << "operand '" << name << "' " << what << " (dim "
                              << dim << ") must be >= 1, got " << d;
    return success();
  }

  /// Two dims that must agree where both are static.
  LogicalResult checkSame(StringRef aName, Value a, int64_t aDim,
                          StringRef bName, Value b, int64_t bDim,
                          StringRef what) {
    int64_t x = memrefOf(a).getDimSize(aDim);
    int64_t y = memrefOf(b).getDimSize(bDim);
    if (ShapedType::isDynamic(x) || ShapedType::isDynamic(y) || x == y)
      return success();
    return op.emitOpError()
           << what << " mismatch: operand '" << aName << "' dim " << aDim
           << " is " << x << " but operand '" << bName << "' dim " << bDim
           << " is " << y;
  }

  LogicalResult checkPositiveFinite(StringRef name,
                                    std::optional<APFloat> value) {
    if (!value)
      return success();
    const double x = value->convertToDouble();
    if (!std::isnan(x) && !std::isinf(x) && x > 0.0)
      return success();
    InFlightDiagnostic diag = op.emitOpError()
                              << "attribute '" << name
                              << "' must be positive and finite, got ";
    if (std::isnan(x))
      diag << "nan";
    else if (std::isinf(x))
      diag << (x > 0 ? "inf" : "-inf");
    else
      diag << x;
    return diag;
    return success();
  }

  /// A static 0 describes a kernel that can never do anything; an empty
  /// batch is a run-time size (a dynamic dim), which the C ABI accepts.
  LogicalResult checkNoZeroDim(StringRef name, Value v) {
    ArrayRef<int64_t> shape = memrefOf(v).getShape();
    for (auto [i, d] : llvm::enumerate(shape))
      if (d == 0)
        return op.emitOpError() << "operand '" << name << "' dim " << i
                                << " is 0; a static dim must be at least 1";
    return success();
  }

  /// checkNoZeroDim for each operand given (absent optional ones skipped).
  LogicalResult checkNoZeroDims(ArrayRef<NamedOperand> operands) {
    for (auto [name, value] : operands)
      if (value && failed(checkNoZeroDim(name, value)))
        return failure();
    return success();
  }

  /// The element types the kernels compute in.
  LogicalResult checkFloatElement(StringRef name, Value v) {
    Type t = memrefOf(v).getElementType();
    if (!t.isF16() && !t.isBF16() && !t.isF32())
      return op.emitOpError() << "operand '" << name << "' element type " << t
                              << " is not supported; expected f16, bf16 or "
                                 "f32";
    return success();
  }

  /// An optional operand's element type, which must be `want`.
  LogicalResult checkElementType(StringRef name, Value v, Type want) {
    if (!v || memrefOf(v).getElementType() == want)
      return success();
    return op.emitOpError()
           << "operand '" << name << "' element type "
           << memrefOf(v).getElementType() << " must be " << want;
  }

  /// Operands read or written with the element type of `refName`.
  LogicalResult checkSameElement(ArrayRef<NamedOperand> operands,
                                 StringRef refName, Value ref) {
    Type elt = memrefOf(ref).getElementType();
    for (auto [name, val] : operands) {
      Type other = memrefOf(val).getElementType();
      if (other != elt)
        return op.emitOpError()
               << "operand '" << name << "' element type " << other
               << " must match operand '" << refName << "' (" << elt << ")";
    }
    return success();
  }

  LogicalResult checkHeadDimLimit(int64_t d, int64_t dv) {
    if (d > kMaxHeadDim || dv > kMaxHeadDim)
      return op.emitOpError() << "head dims must be <= " << kMaxHeadDim
                              << ", got D = " << d << ", Dv = " << dv;
    return success();
  }

  /// A dequantization scale: f32, contiguous, for a quantized `data`,
  /// with one of the ranks of AttnOps.td's table (per tensor, per K/V
  /// head, per token and head).
  /// `tokenShape` names the per-token form's dims.
  LogicalResult checkScale(StringRef name, Value scale, StringRef dataName,
                           Value data, StringRef tokenShape) {
    if (!scale)
      return success();
    MemRefType type = memrefOf(scale), dataType = memrefOf(data);
    if (kvFormatOf(dataType.getElementType()) == KVFormat::None)
      return op.emitOpError()
             << "operand '" << name << "' dequantizes a quantized " << dataName
             << " (f8E4M3FN, f8E5M2 or i8); operand '" << dataName
             << "' has element type " << dataType.getElementType();
    if (failed(checkElementType(name, scale,
                                Builder(op.getContext()).getF32Type())))
      return failure();
    if (!type.getLayout().isIdentity())
      return op.emitOpError() << "operand '" << name
                              << "' must be contiguous (identity layout), got "
                              << type.getLayout();
    const int64_t tokenRank = dataType.getRank() - 1;
    if (type.getRank() != 0 && type.getRank() != 1 &&
        type.getRank() != tokenRank)
      return op.emitOpError()
             << "operand '" << name
             << "' must have rank 0 (per tensor), 1 ([Hkv], per K/V head) or "
             << tokenRank << " (" << tokenShape
             << ", per token and head), got rank " << type.getRank();
    if (failed(checkRank(name, scale, type.getRank(), "", false)))
      return failure();
    if (type.getRank() == 1)
      return failure(failed(checkStatic(name, scale, 0, "K/V head count")) ||
                     failed(checkSame(name, scale, 0, dataName, data, 1,
                                      "K/V head count")));
    for (int64_t i = 0; type.getRank() > 1 && i < tokenRank; ++i)
      if (failed(checkSame(name, scale, i, dataName, data, i,
                           ("per-token scale " + tokenShape).str())))
        return failure();
    return success();
  }

protected:
  OpT op;
};

/// Shape checks for AttentionOp.
class AttentionVerifier : public OperandChecks<AttentionOp> {
public:
  using OperandChecks::OperandChecks;

  LogicalResult verify() {
    Value q = op.getQ(), k = op.getK(), v = op.getV(), o = op.getO();
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
    int64_t d = memrefOf(q).getDimSize(qd), dv = memrefOf(v).getDimSize(kvd);
    if (failed(checkHeadDimLimit(d, dv)) ||
        failed(checkSame("k", k, kvd, "q", q, qd, "head dim (D)")) ||
        failed(checkSame("o", o, qd, "v", v, kvd, "value head dim (Dv)")) ||
        failed(checkSame("v", v, 1, "k", k, 1, "K/V head count")) ||
        failed(checkSame("o", o, 1, "q", q, 1, "query head count")))
      return failure();
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
    if (failed(checkWrittenDistinct({{"o", o}, {"lse", lse}},
                                    {{"q", q},
                                     {"k", k},
                                     {"v", v},
                                     {"block_table", table},
                                     {"kv_lens", lens},
                                     {"cu_seqlens_q", cuQ},
                                     {"cu_seqlens_k", cuK},
                                     {"sinks", sinks},
                                     {"k_scale", kScale},
                                     {"v_scale", vScale},
                                     {"q_scale", op.getQScale()}})) ||
        failed(checkNoAliasing("o", o)) ||
        (lse && failed(checkNoAliasing("lse", lse))))
      return failure();
    // Last, so the rules above name head dims and counts of 0 themselves.
    return checkNoZeroDims({{"q", q},
                            {"k", k},
                            {"v", v},
                            {"o", o},
                            {"lse", lse},
                            {"block_table", table},
                            {"kv_lens", lens},
                            {"cu_seqlens_q", cuQ},
                            {"cu_seqlens_k", cuK},
                            {"sinks", sinks},
                            {"k_scale", kScale},
                            {"v_scale", vScale},
                            {"q_scale", op.getQScale()}});
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
    if (failed(checkElementType("q_scale", scale,
                                Builder(op.getContext()).getF32Type())))
      return failure();
    if (!type.getLayout().isIdentity())
      return op.emitOpError()
             << "operand 'q_scale' must be contiguous (identity layout), got "
             << type.getLayout();
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

//===----------------------------------------------------------------------===//
// CacheAppendOp
//===----------------------------------------------------------------------===//

int64_t CacheAppendOp::getNumKVHeads() {
  return memrefOf(getKNew()).getDimSize(1);
}
// The head dim is the last dim: [B, Hkv, S_new, D] or packed [T, Hkv, D].
int64_t CacheAppendOp::getHeadDim() {
  MemRefType type = memrefOf(getKNew());
  return type.getDimSize(type.getRank() - 1);
}
int64_t CacheAppendOp::getValueHeadDim() {
  MemRefType type = memrefOf(getVNew());
  return type.getDimSize(type.getRank() - 1);
}
int64_t CacheAppendOp::getBlockSize() {
  return isPaged() || isSlotMapped() ? memrefOf(getKCache()).getDimSize(2) : 0;
}

bool CacheAppendOp::isQuantized() {
  return kvFormatOf(memrefOf(getKCache()).getElementType()) != KVFormat::None;
}

bool CacheAppendOp::writesScale(Value scale) {
  return scale && memrefOf(scale).getRank() > 1;
}

void CacheAppendOp::getEffects(
    SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>>
        &effects) {
  SmallVector<Value> written{getKCache(), getVCache()};
  for (Value scale : {getKScale(), getVScale()})
    if (writesScale(scale))
      written.push_back(scale);
  addOperandEffects(getOperation(), written, effects);
}

namespace {
/// Shape checks for CacheAppendOp.
class CacheAppendVerifier : public OperandChecks<CacheAppendOp> {
public:
  using OperandChecks::OperandChecks;

  LogicalResult verify() {
    if (op.getSlotMapping())
      return verifySlotMapped();
    Value kn = op.getKNew(), vn = op.getVNew(), kc = op.getKCache(),
          vc = op.getVCache(), table = op.getBlockTable(),
          lens = op.getKvLens(), newLens = op.getNewLens();
    if (!lens)
      return op.emitOpError()
             << "requires operand 'kv_lens' (each sequence's length before "
                "the append), or the packed form's 'slot_mapping'";
    bool paged = table != nullptr;
    StringRef kLayout =
        paged ? "[num_blocks, Hkv, block_size, D]" : "[B, Hkv, capacity, D]";
    StringRef vLayout =
        paged ? "[num_blocks, Hkv, block_size, Dv]" : "[B, Hkv, capacity, Dv]";
    if (failed(checkRank("k_new", kn, 4, "[B, Hkv, S_new, D]")) ||
        failed(checkRank("v_new", vn, 4, "[B, Hkv, S_new, Dv]")) ||
        failed(checkRank("k_cache", kc, 4, kLayout)) ||
        failed(checkRank("v_cache", vc, 4, vLayout)) ||
        failed(checkRank("kv_lens", lens, 1, "[B]")) ||
        (newLens && failed(checkRank("new_lens", newLens, 1, "[B]"))) ||
        (table &&
         failed(checkRank("block_table", table, 2, "[B, max_blocks]"))))
      return failure();

    Builder b(op.getContext());
    if (failed(checkCopyElements()) ||
        failed(checkElementType("kv_lens", lens, b.getI32Type())) ||
        failed(checkElementType("new_lens", newLens, b.getI32Type())) ||
        failed(checkElementType("block_table", table, b.getI32Type())))
      return failure();

    // Heads, head dims (and the block size) fix the kernel's shape.
    if (failed(checkHeads(/*newHeadDimPos=*/3)))
      return failure();

    // Batch and lengths.
    if (failed(checkSame("v_new", vn, 0, "k_new", kn, 0, "batch")) ||
        failed(checkSame("v_new", vn, 2, "k_new", kn, 2,
                         "new token count (S_new)")) ||
        failed(checkSame("kv_lens", lens, 0, "k_new", kn, 0, "batch")) ||
        (newLens &&
         failed(checkSame("new_lens", newLens, 0, "k_new", kn, 0, "batch"))))
      return failure();
    if (!paged) {
      if (failed(checkSame("k_cache", kc, 0, "k_new", kn, 0, "batch")) ||
          failed(checkSame("v_cache", vc, 0, "k_new", kn, 0, "batch")) ||
          failed(
              checkSame("v_cache", vc, 2, "k_cache", kc, 2, "cache capacity")))
        return failure();
    } else {
      if (failed(checkStatic("k_cache", kc, 2, "block size")) ||
          failed(checkSame("v_cache", vc, 0, "k_cache", kc, 0,
                           "paged cache block count")) ||
          failed(checkSame("v_cache", vc, 2, "k_cache", kc, 2,
                           "paged cache block size")) ||
          failed(checkSame("block_table", table, 0, "k_new", kn, 0, "batch")))
        return failure();
    }

    if (failed(checkCachesWritten({{"k_new", kn},
                                   {"v_new", vn},
                                   {"block_table", table},
                                   {"kv_lens", lens},
                                   {"new_lens", newLens},
                                   {"k_scale", op.getKScale()},
                                   {"v_scale", op.getVScale()}})) ||
        failed(checkScales(paged ? "[num_blocks, Hkv, block_size]"
                                 : "[B, Hkv, capacity]")))
      return failure();
    return checkNoZeroDims({{"k_new", kn},
                            {"v_new", vn},
                            {"block_table", table},
                            {"kv_lens", lens},
                            {"new_lens", newLens},
                            {"k_cache", kc},
                            {"v_cache", vc}});
  }

  /// The slot-mapping form: k_new [T, Hkv, D], v_new [T, Hkv, Dv],
  /// slot_mapping [T], caches [N, Hkv, R, D(v)].
  LogicalResult verifySlotMapped() {
    Value kn = op.getKNew(), vn = op.getVNew(), kc = op.getKCache(),
          vc = op.getVCache(), slots = op.getSlotMapping();
    for (auto [name, val] :
         {std::pair<StringRef, Value>{"block_table", op.getBlockTable()},
          {"kv_lens", op.getKvLens()},
          {"new_lens", op.getNewLens()}})
      if (val)
        return op.emitOpError()
               << "operand 'slot_mapping' names each token's slot; operand '"
               << name
               << "' belongs to the batched form and cannot be given "
                  "with it";
    if (failed(checkRank("k_new", kn, 3, "[T, Hkv, D] (packed tokens)")) ||
        failed(checkRank("v_new", vn, 3, "[T, Hkv, Dv] (packed tokens)")) ||
        failed(checkRank("slot_mapping", slots, 1, "[T]")) ||
        failed(checkRank("k_cache", kc, 4, "[N, Hkv, R, D]")) ||
        failed(checkRank("v_cache", vc, 4, "[N, Hkv, R, Dv]")))
      return failure();
    Builder b(op.getContext());
    if (failed(checkCopyElements()) ||
        failed(checkElementType("slot_mapping", slots, b.getI32Type())) ||
        failed(checkHeads(/*newHeadDimPos=*/2)) ||
        failed(checkSame("v_new", vn, 0, "k_new", kn, 0, "token count (T)")) ||
        failed(checkSame("slot_mapping", slots, 0, "k_new", kn, 0,
                         "token count (T)")) ||
        failed(checkSame("v_cache", vc, 0, "k_cache", kc, 0,
                         "cache block count")) ||
        failed(checkSame("v_cache", vc, 2, "k_cache", kc, 2,
                         "cache rows per block")))
      return failure();
    if (failed(checkCachesWritten({{"k_new", kn},
                                   {"v_new", vn},
                                   {"slot_mapping", slots},
                                   {"k_scale", op.getKScale()},
                                   {"v_scale", op.getVScale()}})) ||
        failed(checkScales("[N, Hkv, R]")))
      return failure();
    return checkNoZeroDims({{"k_new", kn},
                            {"v_new", vn},
                            {"slot_mapping", slots},
                            {"k_cache", kc},
                            {"v_cache", vc}});
  }

private:
  /// A copy: every K/V operand has k_new's element type. A quantizing
  /// append: the caches share one quantized format, the new tokens one
  /// float type.
  LogicalResult checkCopyElements() {
    Value kn = op.getKNew(), kc = op.getKCache();
    if (failed(checkFloatElement("k_new", kn)))
      return failure();
    if (!op.isQuantized())
      return checkSameElement({{"v_new", op.getVNew()},
                               {"k_cache", kc},
                               {"v_cache", op.getVCache()}},
                              "k_new", kn);
    if (failed(checkSameElement({{"v_new", op.getVNew()}}, "k_new", kn)))
      return failure();
    Type kElt = memrefOf(kc).getElementType(),
         vElt = memrefOf(op.getVCache()).getElementType();
    if (kElt != vElt)
      return op.emitOpError()
             << "operand 'v_cache' element type " << vElt
             << " must match operand 'k_cache' (" << kElt
             << "): a quantized K/V cache stores both in one format";
    return success();
  }

  /// The scales of a quantizing append (AttnOps.td): read per tensor or
  /// head, written per token; a written one is a buffer of its own.
  LogicalResult checkScales(StringRef tokenShape) {
    Value ks = op.getKScale(), vs = op.getVScale();
    if (failed(
            checkScale("k_scale", ks, "k_cache", op.getKCache(), tokenShape)) ||
        failed(
            checkScale("v_scale", vs, "v_cache", op.getVCache(), tokenShape)))
      return failure();
    NamedOperand others[] = {{"k_new", op.getKNew()},
                             {"v_new", op.getVNew()},
                             {"block_table", op.getBlockTable()},
                             {"kv_lens", op.getKvLens()},
                             {"new_lens", op.getNewLens()},
                             {"slot_mapping", op.getSlotMapping()},
                             {"k_cache", op.getKCache()},
                             {"v_cache", op.getVCache()}};
    for (auto [name, scale] :
         {NamedOperand{"k_scale", ks}, NamedOperand{"v_scale", vs}}) {
      if (!scale || !op.writesScale(scale))
        continue;
      for (auto [other, value] : others)
        if (value == scale)
          return op.emitOpError()
                 << "operand '" << other << "' is the same buffer as operand '"
                 << name << "', which the op writes (per-token scales)";
    }
    if (ks && ks == vs && op.writesScale(ks))
      return op.emitOpError() << "operands 'k_scale' and 'v_scale' are the "
                                 "same buffer; each per-token scale the op "
                                 "writes needs its own";
    return success();
  }

  /// Head counts and head dims are static and agree; the new tokens' head
  /// dim is their dim `newHeadDimPos` (3 batched, 2 packed), the caches' dim 3.
  LogicalResult checkHeads(int64_t newHeadDimPos) {
    Value kn = op.getKNew(), vn = op.getVNew(), kc = op.getKCache(),
          vc = op.getVCache();
    if (failed(checkStatic("k_new", kn, 1, "head count")) ||
        failed(checkStatic("k_new", kn, newHeadDimPos, "head dim")) ||
        failed(checkStatic("v_new", vn, newHeadDimPos, "head dim")) ||
        failed(checkStatic("k_cache", kc, 1, "head count")) ||
        failed(checkStatic("k_cache", kc, 3, "head dim")) ||
        failed(checkStatic("v_cache", vc, 3, "head dim")))
      return failure();
    if (failed(checkHeadDimLimit(memrefOf(kn).getDimSize(newHeadDimPos),
                                 memrefOf(vn).getDimSize(newHeadDimPos))))
      return failure();
    if (failed(checkSame("k_cache", kc, 3, "k_new", kn, newHeadDimPos,
                         "head dim (D)")) ||
        failed(checkSame("v_cache", vc, 3, "v_new", vn, newHeadDimPos,
                         "value head dim (Dv)")) ||
        failed(checkSame("v_new", vn, 1, "k_new", kn, 1, "K/V head count")) ||
        failed(checkSame("k_cache", kc, 1, "k_new", kn, 1, "K/V head count")) ||
        failed(checkSame("v_cache", vc, 1, "k_new", kn, 1, "K/V head count")))
      return failure();
    return success();
  }

  /// The caches are written: one address per element, and none of the
  /// operands read may be the same buffer.
  LogicalResult checkCachesWritten(ArrayRef<NamedOperand> read) {
    Value kc = op.getKCache(), vc = op.getVCache();
    if (kc == vc)
      return op.emitOpError() << "operands 'k_cache' and 'v_cache' are the "
                                 "same buffer; K and V need their own caches";
    if (failed(checkWrittenDistinct({{"k_cache", kc}, {"v_cache", vc}}, read)))
      return failure();
    if (failed(checkNoAliasing("k_cache", kc)) ||
        failed(checkNoAliasing("v_cache", vc)))
      return failure();
    return success();
  }
};
} // namespace

LogicalResult CacheAppendOp::verify() {
  return CacheAppendVerifier(*this).verify();
}

//===----------------------------------------------------------------------===//
// MergeStatesOp
//===----------------------------------------------------------------------===//

int64_t MergeStatesOp::getNumHeads() {
  return memrefOf(getOParts()).getDimSize(2);
}
int64_t MergeStatesOp::getValueHeadDim() {
  return memrefOf(getOParts()).getDimSize(3);
}

void MergeStatesOp::getEffects(
    SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>>
        &effects) {
  addOperandEffects(getOperation(), {getO(), getLse()}, effects);
}

namespace {
/// Shape checks for MergeStatesOp.
class MergeStatesVerifier : public OperandChecks<MergeStatesOp> {
public:
  using OperandChecks::OperandChecks;

  LogicalResult verify() {
    Value oParts = op.getOParts(), lseParts = op.getLseParts(), o = op.getO(),
          lse = op.getLse();
    if (failed(checkRank("o_parts", oParts, 4, "[N, T, H, Dv]")) ||
        failed(checkRank("lse_parts", lseParts, 3, "[N, T, H]",
                         /*unitInner=*/false)) ||
        failed(checkRank("o", o, 3, "[T, H, Dv]")) ||
        (lse &&
         failed(checkRank("lse", lse, 2, "[T, H]", /*unitInner=*/false))))
      return failure();
    Builder b(op.getContext());
    if (failed(checkFloatElement("o_parts", oParts)) ||
        failed(checkFloatElement("o", o)) ||
        failed(checkElementType("lse_parts", lseParts, b.getF32Type())) ||
        failed(checkElementType("lse", lse, b.getF32Type())))
      return failure();
    // Heads and the head dim fix the kernel's shape.
    if (failed(checkStatic("o_parts", oParts, 2, "head count (H)")) ||
        failed(checkStatic("o_parts", oParts, 3, "value head dim (Dv)")))
      return failure();
    if (int64_t dv = op.getValueHeadDim(); dv > kMaxHeadDim)
      return op.emitOpError() << "operand 'o_parts' value head dim (dim 3) "
                                 "must be <= "
                              << kMaxHeadDim << ", got " << dv;
    if (failed(checkSame("lse_parts", lseParts, 0, "o_parts", oParts, 0,
                         "part count (N)")) ||
        failed(checkSame("lse_parts", lseParts, 1, "o_parts", oParts, 1,
                         "row count (T)")) ||
        failed(checkSame("lse_parts", lseParts, 2, "o_parts", oParts, 2,
                         "head count (H)")) ||
        failed(checkSame("o", o, 0, "o_parts", oParts, 1, "row count (T)")) ||
        failed(checkSame("o", o, 1, "o_parts", oParts, 2, "head count (H)")) ||
        failed(checkSame("o", o, 2, "o_parts", oParts, 3,
                         "value head dim (Dv)")) ||
        (lse && (failed(checkSame("lse", lse, 0, "o_parts", oParts, 1,
                                  "row count (T)")) ||
                 failed(checkSame("lse", lse, 1, "o_parts", oParts, 2,
                                  "head count (H)")))))
      return failure();
    // o and lse cannot be the parts (their ranks differ); that they share
    // no memory with them is the runtime's check.
    if (failed(checkNoAliasing("o", o)) ||
        (lse && failed(checkNoAliasing("lse", lse))))
      return failure();
    return checkNoZeroDims(
        {{"o_parts", oParts}, {"lse_parts", lseParts}, {"o", o}, {"lse", lse}});
  }
};
} // namespace

LogicalResult MergeStatesOp::verify() {
  return MergeStatesVerifier(*this).verify();
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
