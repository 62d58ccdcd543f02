//===- AttnTileOps.cpp - verifiers of the L1 (tiled algorithm) ops --------===//
//
// L1 tiles are static-shaped tensors. Every check names the operand or
// result and the rule it breaks.
//
//===----------------------------------------------------------------------===//

#include "dialect/AttnDialect.h"
#include "dialect/AttnMods.h"
#include "dialect/AttnSemantics.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"

#include <cmath>

using namespace mlir;
using namespace mlir::attn;

namespace {
/// Shape checks shared by the L1 verifiers.
class TileVerifier {
public:
  explicit TileVerifier(Operation *op) : op(op) {}

  /// `v` must be a static tensor of `rank` with f32 elements if `f32`.
  FailureOr<RankedTensorType> tile(StringRef name, Value v, int64_t rank,
                                   StringRef layout, bool f32) {
    auto type = dyn_cast<RankedTensorType>(v.getType());
    if (!type || type.getRank() != rank || !type.hasStaticShape())
      return op->emitOpError()
             << "'" << name << "' must be a static tensor "
             << "of rank " << rank << " " << layout << ", got " << v.getType();
    for (int64_t d : type.getShape())
      if (d < 1)
        return op->emitOpError() << "'" << name << "' must have no empty dim, "
                                 << "got " << type;
    Type elt = type.getElementType();
    if (f32 && !elt.isF32())
      return op->emitOpError() << "'" << name << "' must have f32 elements, "
                               << "got " << elt;
    if (!f32 && !elt.isF16() && !elt.isBF16() && !elt.isF32())
      return op->emitOpError() << "'" << name << "' element type " << elt
                               << " is not supported; expected f16, bf16 or "
                                  "f32";
    return type;
  }

  /// Dim `ad` of `a` must equal dim `bd` of `b`.
  LogicalResult same(StringRef aName, ShapedType a, int64_t ad, StringRef bName,
                     ShapedType b, int64_t bd, StringRef what) {
    int64_t x = a.getDimSize(ad), y = b.getDimSize(bd);
    if (ShapedType::isDynamic(x) || ShapedType::isDynamic(y) || x == y)
      return success();
    return op->emitOpError()
           << what << " mismatch: '" << aName << "' dim " << ad << " is " << x
           << " but '" << bName << "' dim " << bd << " is " << y;
  }

  LogicalResult memref(StringRef name, Value v, int64_t rank,
                       StringRef layout) {
    auto type = cast<MemRefType>(v.getType());
    if (type.getRank() != rank)
      return op->emitOpError() << "'" << name << "' must have rank " << rank
                               << " " << layout << ", got " << type;
    return success();
  }

  /// A packed row range names both its start and its length.
  LogicalResult sequence(Value start, Value len) {
    if (static_cast<bool>(start) == static_cast<bool>(len))
      return success();
    return op->emitOpError("'seq' needs both the sequence's first row and its "
                           "length");
  }

  LogicalResult positive(StringRef name, int64_t value) {
    if (value >= 1)
      return success();
    return op->emitOpError()
           << "attribute '" << name << "' must be >= 1, got " << value;
  }

  LogicalResult sameElement(StringRef aName, ShapedType a, StringRef bName,
                            ShapedType b) {
    if (a.getElementType() == b.getElementType())
      return success();
    return op->emitOpError()
           << "'" << aName << "' element type " << a.getElementType()
           << " must match '" << bName << "' (" << b.getElementType() << ")";
  }

private:
  Operation *op;
};
} // namespace

void InitStateOp::build(OpBuilder &b, OperationState &state, int64_t rows,
                        int64_t valueDim) {
  auto rowType = RankedTensorType::get({rows}, b.getF32Type());
  auto accType = RankedTensorType::get({rows, valueDim}, b.getF32Type());
  build(b, state, rowType, rowType, accType);
}

LogicalResult InitStateOp::verify() {
  TileVerifier check(*this);
  auto m = check.tile("max", getMax(), 1, "[rows]", true);
  auto l = check.tile("sum", getSum(), 1, "[rows]", true);
  auto acc = check.tile("acc", getAcc(), 2, "[rows, Dv]", true);
  if (failed(m) || failed(l) || failed(acc))
    return failure();
  return check.same("acc", *acc, 0, "max", *m, 0, "row count");
}

LogicalResult LoadQOp::verify() {
  TileVerifier check(*this);
  const bool packed = isPacked();
  if (failed(check.sequence(getSeqStart(), getSeqLen())) ||
      failed(check.memref("q", getQ(), packed ? 3 : 4,
                          packed ? "[total_q, Hq, D] (packed by 'seq')"
                                 : "[B, Hq, Sq, D]")) ||
      failed(check.positive("group", getGroup())))
    return failure();
  auto q = cast<MemRefType>(getQ().getType());
  auto tile = check.tile("tile", getTile(), 2, "[rows, D]", false);
  if (failed(tile) ||
      failed(check.same("tile", *tile, 1, "q", q, q.getRank() - 1, "head dim")))
    return failure();
  if (!isQuantized()) {
    if (getScale())
      return emitOpError() << "'scale' dequantizes an fp8 'q'; 'q' has "
                              "element type "
                           << q.getElementType();
    if (failed(check.sameElement("tile", *tile, "q", q)))
      return failure();
  } else {
    if (!tile->getElementType().isF32())
      return emitOpError() << "an fp8 'q' dequantizes into an f32 tile, got "
                           << tile->getElementType();
    if (Value scale = getScale()) {
      auto type = cast<MemRefType>(scale.getType());
      if (!type.getElementType().isF32() || type.getRank() > 1)
        return emitOpError() << "'scale' must be f32 of rank 0 (per tensor) "
                                "or 1 (per query head), got "
                             << type;
    }
  }
  int64_t hq = q.getDimSize(1);
  if (!ShapedType::isDynamic(hq) && hq % getGroup() != 0)
    return emitOpError() << "attribute 'group' (" << getGroup()
                         << ") must divide the query head count (" << hq << ")";
  return success();
}

LogicalResult LoadKVOp::verify() {
  TileVerifier check(*this);
  bool paged = getBlockTable() != nullptr;
  if (paged && isPacked())
    return emitOpError("a K/V tile comes from a paged cache ('block_table') "
                       "or from packed sequences ('seq'), not both");
  if (failed(check.memref("src", getSrc(), isPacked() ? 3 : 4,
                          paged        ? "[num_blocks, Hkv, block_size, D]"
                          : isPacked() ? "[total_k, Hkv, D] (packed by 'seq')"
                                       : "[B, Hkv, Sk, D]")))
    return failure();
  if (paged) {
    auto table = cast<MemRefType>(getBlockTable().getType());
    if (failed(
            check.memref("block_table", getBlockTable(), 2, "[B, max_blocks]")))
      return failure();
    if (!table.getElementType().isInteger(32))
      return emitOpError() << "'block_table' must have i32 elements, got "
                           << table.getElementType();
    if (ShapedType::isDynamic(
            cast<MemRefType>(getSrc().getType()).getDimSize(2)))
      return emitOpError("a paged 'src' must have a static block size (dim 2)");
  }
  auto src = cast<MemRefType>(getSrc().getType());
  auto tile = check.tile("tile", getTile(), 2, "[rows, D]", false);
  if (failed(tile))
    return failure();
  // A narrower tile holds the rows' leading columns (MLA's V in K).
  const int64_t cols = tile->getDimSize(1),
                srcCols = src.getDimSize(src.getRank() - 1);
  if (ShapedType::isDynamic(srcCols) || cols > srcCols)
    return emitOpError() << "'tile' holds a row's first columns: its head dim ("
                         << cols
                         << ") must be at most 'src''s static head dim ("
                         << (ShapedType::isDynamic(srcCols)
                                 ? std::string("?")
                                 : std::to_string(srcCols))
                         << ")";
  if (!isQuantized()) {
    if (getScale())
      return emitOpError() << "'scale' dequantizes a quantized 'src' "
                              "(f8E4M3FN, f8E5M2 or i8); 'src' has element "
                              "type "
                           << src.getElementType();
    return check.sameElement("tile", *tile, "src", src);
  }
  if (!tile->getElementType().isF32())
    return emitOpError() << "a quantized 'src' dequantizes into an f32 tile, "
                            "got "
                         << tile->getElementType();
  if (!getScale())
    return success();
  auto scale = cast<MemRefType>(getScale().getType());
  if (!scale.getElementType().isF32())
    return emitOpError() << "'scale' must have f32 elements, got "
                         << scale.getElementType();
  if (scale.getRank() > 1 && scale.getRank() != src.getRank() - 1)
    return emitOpError() << "'scale' must have rank 0 (per tensor), 1 (per "
                            "K/V head) or "
                         << src.getRank() - 1
                         << " (src's rank - 1, per token), got rank "
                         << scale.getRank();
  return success();
}

bool LoadQOp::isQuantized() {
  return kvFormatOf(cast<MemRefType>(getQ().getType()).getElementType()) !=
         KVFormat::None;
}

bool LoadKVOp::isQuantized() {
  return kvFormatOf(cast<MemRefType>(getSrc().getType()).getElementType()) !=
         KVFormat::None;
}

LogicalResult QKOp::verify() {
  TileVerifier check(*this);
  auto q = check.tile("q", getQ(), 2, "[rows, D]", false);
  auto k = check.tile("k", getK(), 2, "[cols, D]", false);
  auto s = check.tile("scores", getScores(), 2, "[rows, cols]", true);
  // A dequantized K tile is f32 under any Q.
  if (failed(q) || failed(k) || failed(s) ||
      (!k->getElementType().isF32() &&
       failed(check.sameElement("k", *k, "q", *q))) ||
      failed(check.same("k", *k, 1, "q", *q, 1, "head dim")) ||
      failed(check.same("scores", *s, 0, "q", *q, 0, "row count")) ||
      failed(check.same("scores", *s, 1, "k", *k, 0, "column count")))
    return failure();
  auto positiveFinite = [&](StringRef name, double x) -> LogicalResult {
    if (std::isfinite(x) && x > 0)
      return success();
    return emitOpError() << "attribute '" << name
                         << "' must be positive and finite, got " << x;
  };
  if (failed(positiveFinite("scale", getScale().convertToDouble())))
    return failure();
  if (std::optional<APFloat> cap = getSoftcap())
    return positiveFinite("softcap", cap->convertToDouble());
  return success();
}

LogicalResult MaskOp::verify() {
  TileVerifier check(*this);
  if (failed(check.tile("scores", getScores(), 2, "[rows, cols]", true)) ||
      failed(check.positive("group", getGroup())))
    return failure();
  return success();
}

/// An L1 op's mod region: present with its positions and group (`what`
/// names them), or absent with neither positions nor captures.
static LogicalResult verifyL1Mod(Operation *op, Region &region, ModKind kind,
                                 bool hasPositions, StringRef what,
                                 ValueRange captures) {
  StringRef name = modName(kind);
  if (region.empty()) {
    if (hasPositions || !captures.empty())
      return op->emitOpError()
             << "has positions or captures but no " << name << " region";
    return success();
  }
  if (!hasPositions)
    return op->emitOpError()
           << "region '" << name << "' needs the positions " << what;
  if (failed(verifyCaptureTypes(op, captures)))
    return failure();
  return verifyModRegion(op, region, kind, captures);
}

LogicalResult QKOp::verifyRegions() {
  bool positions = getBatch() && getKvHead() && getRow() && getCol() &&
                   getQLen() && getKvLen() && getGroup().has_value();
  if (getGroup() && *getGroup() < 1)
    return emitOpError() << "attribute 'group' must be positive, got "
                         << *getGroup();
  bool anyPosition = getBatch() || getKvHead() || getRow() || getCol() ||
                     getQLen() || getKvLen() || getGroup().has_value();
  return verifyL1Mod(
      *this, getScoreMod(), ModKind::Score,
      hasScoreMod() ? positions : anyPosition,
      "'at [batch, kv_head, row, col] q_len .. kv_len ..' and 'group'",
      getCaptures());
}

LogicalResult MaskOp::verifyRegions() {
  bool positions = getBatch() && getKvHead();
  bool anyPosition = getBatch() || getKvHead();
  return verifyL1Mod(*this, getMaskMod(), ModKind::Mask,
                     hasMaskMod() ? positions : anyPosition,
                     "'at [batch, kv_head]'", getCaptures());
}

LogicalResult OnlineSoftmaxOp::verify() {
  TileVerifier check(*this);
  auto s = check.tile("scores", getScores(), 2, "[rows, cols]", true);
  auto m = check.tile("max", getMax(), 1, "[rows]", true);
  if (failed(s) || failed(m))
    return failure();
  return check.same("max", *m, 0, "scores", *s, 0, "row count");
}

LogicalResult PVOp::verify() {
  TileVerifier check(*this);
  auto p = check.tile("probs", getProbs(), 2, "[rows, cols]", true);
  auto v = check.tile("v", getV(), 2, "[cols, Dv]", false);
  auto acc = check.tile("acc", getAcc(), 2, "[rows, Dv]", true);
  auto alpha = check.tile("rescale", getRescale(), 1, "[rows]", true);
  if (failed(p) || failed(v) || failed(acc) || failed(alpha))
    return failure();
  if (failed(check.same("v", *v, 0, "probs", *p, 1, "column count")) ||
      failed(check.same("acc", *acc, 0, "probs", *p, 0, "row count")) ||
      failed(check.same("acc", *acc, 1, "v", *v, 1, "value head dim")) ||
      failed(check.same("rescale", *alpha, 0, "acc", *acc, 0, "row count")))
    return failure();
  return success();
}

LogicalResult MergeOp::verify() {
  TileVerifier check(*this);
  auto m = check.tile("max0", getMax0(), 1, "[rows]", true);
  auto acc = check.tile("acc0", getAcc0(), 2, "[rows, Dv]", true);
  if (failed(m) || failed(acc))
    return failure();
  return check.same("acc0", *acc, 0, "max0", *m, 0, "row count");
}

LogicalResult FinalizeOp::verify() {
  TileVerifier check(*this);
  auto m = check.tile("max", getMax(), 1, "[rows]", true);
  auto acc = check.tile("acc", getAcc(), 2, "[rows, Dv]", true);
  auto out = check.tile("out", getOut(), 2, "[rows, Dv]", false);
  if (failed(m) || failed(acc) || failed(out))
    return failure();
  if (failed(check.same("acc", *acc, 0, "max", *m, 0, "row count")) ||
      failed(check.same("out", *out, 0, "acc", *acc, 0, "row count")) ||
      failed(check.same("out", *out, 1, "acc", *acc, 1, "value head dim")))
    return failure();
  if (Value sink = getSink()) {
    auto s = check.tile("sink", sink, 1, "[rows]", true);
    if (failed(s) ||
        failed(check.same("sink", *s, 0, "max", *m, 0, "row count")))
      return failure();
  }
  return success();
}

LogicalResult LoadSinkOp::verify() {
  TileVerifier check(*this);
  if (failed(check.memref("sinks", getSinks(), 1, "[Hq]")) ||
      failed(check.positive("group", getGroup())) ||
      failed(check.tile("tile", getTile(), 1, "[rows]", true)))
    return failure();
  Type elt = cast<MemRefType>(getSinks().getType()).getElementType();
  if (!elt.isF16() && !elt.isBF16() && !elt.isF32())
    return emitOpError() << "'sinks' element type " << elt
                         << " is not supported; expected f16, bf16 or f32";
  return success();
}

LogicalResult StoreOOp::verify() {
  TileVerifier check(*this);
  const bool packed = isPacked();
  if (failed(check.sequence(getSeqStart(), getSeqLen())) ||
      failed(check.memref("o", getO(), packed ? 3 : 4,
                          packed ? "[total_q, Hq, Dv] (packed by 'seq')"
                                 : "[B, Hq, Sq, Dv]")) ||
      failed(check.positive("group", getGroup())))
    return failure();
  auto o = cast<MemRefType>(getO().getType());
  auto tile = check.tile("tile", getTile(), 2, "[rows, Dv]", false);
  if (failed(tile) ||
      failed(check.same("tile", *tile, 1, "o", o, o.getRank() - 1,
                        "value head dim")) ||
      failed(check.sameElement("tile", *tile, "o", o)))
    return failure();
  return success();
}

LogicalResult StoreLseOp::verify() {
  TileVerifier check(*this);
  const bool packed = isPacked();
  if (failed(check.sequence(getSeqStart(), getSeqLen())) ||
      failed(check.memref("lse", getLse(), packed ? 2 : 3,
                          packed ? "[total_q, Hq] (packed by 'seq')"
                                 : "[B, Hq, Sq]")) ||
      failed(check.positive("group", getGroup())) ||
      failed(check.tile("tile", getTile(), 1, "[rows]", true)))
    return failure();
  if (!cast<MemRefType>(getLse().getType()).getElementType().isF32())
    return emitOpError("'lse' must have f32 elements");
  return success();
}
