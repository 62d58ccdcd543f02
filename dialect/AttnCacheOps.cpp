//===- AttnCacheOps.cpp - attn.cache_append and attn.merge_states ---------===//
//
// The L0 ops beside attn.attention: their accessors, memory effects and
// verifiers (the shared rules in OperandChecks.h).
//
//===----------------------------------------------------------------------===//

#include "dialect/OperandChecks.h"

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::detail;

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
