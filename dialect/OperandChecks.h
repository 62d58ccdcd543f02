//===- OperandChecks.h - checks the L0 ops' verifiers share ----*- C++ -*-===//
//
// The operand rules of attn.attention, attn.cache_append and
// attn.merge_states (ranks, element types, static and matching dims,
// limits, aliasing, dequantization scales), each error naming the operand
// and the rule; and their memory effects. For the dialect's .cpp files
// only.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_DIALECT_OPERANDCHECKS_H
#define ATTN_DIALECT_OPERANDCHECKS_H

#include "dialect/AttnDialect.h"
#include "dialect/AttnSemantics.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"

#include <cmath>
#include <limits>
#include <string>

namespace mlir::attn::detail {

inline MemRefType memrefOf(Value v) { return cast<MemRefType>(v.getType()); }

/// An L0 op's effects: it writes the operands in `written` and reads all
/// others.
inline void addOperandEffects(
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

  /// What every dequantization scale is: f32 and contiguous.
  LogicalResult checkScaleBuffer(StringRef name, Value scale) {
    if (failed(checkElementType(name, scale,
                                Builder(op.getContext()).getF32Type())))
      return failure();
    MemRefType type = memrefOf(scale);
    if (!type.getLayout().isIdentity())
      return op.emitOpError() << "operand '" << name
                              << "' must be contiguous (identity layout), got "
                              << type.getLayout();
    return success();
  }

  /// A dequantization scale: f32, contiguous, for a quantized `data`,
  /// with one of the ranks of AttnOps.td's table (per tensor, per K/V
  /// head, per token and head). `tokenShape` names the per-token form's
  /// dims.
  LogicalResult checkScale(StringRef name, Value scale, StringRef dataName,
                           Value data, StringRef tokenShape) {
    if (!scale)
      return success();
    MemRefType type = memrefOf(scale), dataType = memrefOf(data);
    if (kvFormatOf(dataType.getElementType()) == KVFormat::None)
      return op.emitOpError()
             << "operand '" << name << "' is the scale of a quantized "
             << dataName
             << " (f8E4M3FN, f8E5M2 or i8); operand '" << dataName
             << "' has element type " << dataType.getElementType();
    if (failed(checkScaleBuffer(name, scale)))
      return failure();
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

} // namespace mlir::attn::detail

#endif // ATTN_DIALECT_OPERANDCHECKS_H
