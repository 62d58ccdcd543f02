//===- AttnToDecode.cpp - attn-to-decode: the split-K SIMT decode tier ----===//
//
// Flash-decoding for few query rows (decode, speculative decode): the K/V
// range of each (batch, K/V head, Q tile) is cut into N splits, one thread
// block each; a second kernel merges the splits' partial states.
//
//   split kernel, grid (N, Hkv, B * Q tiles), 128 threads:
//     the rows of a Q tile (all query heads of a GQA group, query-major)
//     are held in registers; groups of D / 8 lanes take one key at a time
//     (16-byte slices of K and V, so K/V are read once for the whole
//     group), reduce the dot products with shuffles and keep an online
//     softmax state per row; the block merges its key groups in shared
//     memory and writes the split's (acc, m, l) to the workspace.
//     On sm_80+ each lane copies its own slices with cp.async into a ring
//     of `stages` trips in shared memory, private to the lane (no barrier:
//     cp.async.wait_group makes a lane's copies visible to that lane), so
//     several trips of loads are in flight without holding registers.
//     A quantized K/V cache (one byte an element) is read in 16-byte
//     slices the same way, 16 elements a lane, and decoded on the way to
//     the f32 dot products (cvt.f16x2.e4m3x2 / e5m2x2 from sm_89, bit
//     operations below; i8 converts directly); its scales multiply the
//     key's dot product and its weight in P V, not the elements.
//   combine kernel, one warp per (batch, head, query) row:
//     o = sum_s acc_s 2^(m_s - m) / sum_s l_s 2^(m_s - m), and the LSE.
//
// The workspace is a memref [B * Hq * Sq, N, Dv + 2] of f32 (one row per
// row of O: [total_q * Hq, N, Dv + 2] for a packed Q) appended to the host
// function's arguments: its dim 1 is the split count, chosen by the
// caller at run time (from the K/V length and the SM count).
//
//===----------------------------------------------------------------------===//

#include "codegen/nvptx/Passes.h"

#include "codegen/nvptx/KernelCommon.h"
#include "codegen/nvptx/LaunchContract.h"
#include "codegen/nvptx/PrefillKernel.h"
#include "codegen/nvptx/SplitCombine.h"
#include "dialect/AttnSemantics.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Transforms/RegionUtils.h"

#include <cmath>

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNTODECODE
#include "codegen/nvptx/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::nvptx;

namespace {

/// The head dims both split kernels take: K/V rows of whole 16-byte
/// slices (`vec` elements), at most 32 of them.
LogicalResult checkDecodeHeadDims(Operation *op, int64_t d, int64_t dv,
                                  int64_t vec) {
  if (d % vec || dv % vec)
    return op->emitError()
           << "the split-K decode tier reads K and V in 16-byte slices: D "
              "and Dv must be multiples of "
           << vec << "; got D = " << d << ", Dv = " << dv;
  if (std::max(d, dv) > kWarp * vec)
    return op->emitError()
           << "the split-K decode tier reads a key with at most 32 lanes "
              "of 16 bytes: D and Dv must be at most "
           << kWarp * vec << "; got D = " << d << ", Dv = " << dv;
  return success();
}

class DecodeKernels : public KernelEmitter {
public:
  /// `threads` per block; `unroll` keys per key group per trip; `stages`
  /// trips of cp.async copies in flight (1: plain loads, below sm_80 too);
  /// for `sm`.
  DecodeKernels(L1Nest nest, int64_t threads, int64_t unroll, int64_t stages,
                int sm)
      : KernelEmitter(nest), kThreads(threads), kUnroll(unroll),
        kStages(stages), sm(sm) {}

  LogicalResult plan() {
    auto qTile = cast<RankedTensorType>(n.loadQ.getTile().getType());
    auto vTile = cast<RankedTensorType>(n.loadV.getTile().getType());
    rows = qTile.getDimSize(0);
    d = qTile.getDimSize(1);
    dv = vTile.getDimSize(1);
    group = n.loadQ.getGroup();
    elt = qTile.getElementType();
    kvElt = cast<MemRefType>(n.loadK.getSrc().getType()).getElementType();
    outElt = cast<MemRefType>(n.storeO.getO().getType()).getElementType();
    // A lane reads 16 bytes of a K/V row: vec elements of K/V's type.
    vec = 16 / (kvElt.getIntOrFloatBitWidth() / 8);
    Operation *op = n.forall;
    if (failed(checkDecodeHeadDims(op, d, dv, vec)))
      return failure();
    // A key's K and V rows are read in 16-byte slices by a power of two of
    // lanes: D = 40 takes 8 lanes, 5 of them reading K.
    lanesPerKey = llvm::PowerOf2Ceil(std::max(d, dv) / vec);
    width = lanesPerKey * vec;
    if (rows > 16)
      return op->emitError() << "the split-K decode tier keeps at most 16 "
                                "query rows per block in registers; got "
                                "block_q = "
                             << rows;
    if (kThreads < kWarp || kThreads > 16 * kWarp ||
        !llvm::isPowerOf2_64(kThreads))
      return op->emitError() << "the split-K decode tier's SIMT kernel "
                                "runs 32 to 512 threads: schedule 'warps' "
                                "must be a power of two in [1, 16]; got "
                             << kThreads / kWarp;
    if (kStages < 1 || kStages > 8)
      return op->emitError() << "the split-K decode tier's SIMT kernel "
                                "keeps 1 to 8 trips in flight: schedule "
                                "'stages' must be in [1, 8]; got "
                             << kStages;
    if (kUnroll < 1 || kUnroll > 8)
      return op->emitError() << "the split-K decode tier's SIMT kernel "
                                "takes 1 to 8 keys per trip: schedule "
                                "'unroll' must be in [1, 8]; got "
                             << kUnroll;
    keyGroups = kThreads / lanesPerKey;
    // The merge's states reuse the ring's bytes after a barrier.
    ringBytes = kStages > 1 ? kStages * kUnroll * 2 * kThreads * 16 : 0;
    smemBytes = std::max(keyGroups * rows * (width + 2) * 4, ringBytes);
    return success();
  }

  LogicalResult build(gpu::GPUModuleOp module, func::FuncOp func,
                      StringRef name);

private:
  LogicalResult buildSplit(gpu::GPUFuncOp kernel, ArrayRef<Value> operands);
  /// The split kernel's frame: the host operands mapped to `kernel`'s
  /// arguments, the block's split, batch and K/V head, the nest's index
  /// arithmetic, this split's keys [splitLo, splitHi), and this thread's
  /// key group, lane and first column.
  LogicalResult mapSplitFrame(gpu::GPUFuncOp kernel, ArrayRef<Value> operands);
  /// The Q tile's rows (qSlices: this lane's slice of each, zeros past
  /// the tile), their queries and flat rows.
  void loadQueryRows();
  /// Q's indices of query `query` of head `head`.
  SmallVector<Value> qIndices(Value head, Value query) {
    if (seqStart)
      return {add(seqStart, query), head};
    return {batch, head, query};
  }
  /// Row r's online-softmax state (m, l, acc) after key `key` (its K and
  /// V slices, and whether it is in the split); a quantized cache's
  /// dequantization scales of the key (null: 1) scale its dot product and
  /// its weight in P V.
  SmallVector<Value> attendKey(ValueRange state, int64_t r, Value key,
                               Value inSplit, Value kSlice, Value vSlice,
                               Value kScale, Value vScale);
  /// The scale operand `scale` (null: none) of the key whose K/V row sits
  /// at `rowIndices`: the uniform one found in the frame, else the key's.
  Value scaleOf(Value scale, Value uniform, ArrayRef<Value> rowIndices) {
    if (!scale || uniform)
      return uniform;
    return memref::LoadOp::create(*b, map.lookup(scale), rowIndices);
  }
  /// A slice `x` (vector<vec x T>) in f32: T extended, or a quantized
  /// cache's bytes decoded (not scaled).
  Value toF32(Value x);
  /// Merges the block's key groups' states (the loop's results) through
  /// shared memory `smem` (over the cp.async ring's bytes, once every
  /// lane is done with its `ring`) and writes the split's (acc, m, l) to
  /// the workspace.
  void mergeKeyGroups(scf::ForOp loop, Value smem, bool ring);
  /// Copies this lane's 16-byte slice of a row `rowWidth` elements wide at
  /// `indices` (all but the column) into `dst` at `dstIndices` with
  /// cp.async; a lane past the row copies 0 bytes (zero-fill).
  void copySlice(Value dst, ValueRange dstIndices, Value src,
                 SmallVector<Value> indices, int64_t rowWidth) {
    Value srcElements, at = col;
    if (rowWidth < width) {
      Value inRow = lt(col, idx(rowWidth));
      at = arith::SelectOp::create(*b, inRow, col, idx(0));
      Value whole = idx(vec);
      Value none = idx(0);
      srcElements = arith::SelectOp::create(*b, inRow, whole, none);
    }
    indices.push_back(at);
    nvgpu::DeviceAsyncCopyOp::create(*b, dst, dstIndices, src, indices,
                                     b->getIndexAttr(vec), srcElements,
                                     b->getUnitAttr());
  }
  /// This lane's 16-byte slice of a row `rowWidth` elements wide at
  /// `indices` (all but the column), in f32; zeros for a lane past the row
  /// (it reads the row's first slice, which its neighbours read anyway).
  Value loadSlice(Value src, SmallVector<Value> indices, int64_t rowWidth) {
    Value inRow, at = col;
    if (rowWidth < width) {
      inRow = lt(col, idx(rowWidth));
      at = arith::SelectOp::create(*b, inRow, col, idx(0));
    }
    indices.push_back(at);
    auto type = VectorType::get(
        {vec}, cast<MemRefType>(src.getType()).getElementType());
    Value x =
        toF32(vector::LoadOp::create(*b, type, src, indices,
                                     /*nontemporal=*/false, llvm::Align(16)));
    auto f32Type = VectorType::get({vec}, b->getF32Type());
    if (!inRow)
      return x;
    Value zero = arith::ConstantOp::create(
        *b, f32Type, DenseElementsAttr::get(f32Type, b->getF32FloatAttr(0)));
    return arith::SelectOp::create(*b, inRow, x, zero);
  }
  Value subf(Value x, Value y) { return arith::SubFOp::create(*b, x, y); }
  Value mulf(Value x, Value y) { return arith::MulFOp::create(*b, x, y); }
  Value addf(Value x, Value y) { return arith::AddFOp::create(*b, x, y); }

  const int64_t kThreads, kUnroll, kStages;
  const int sm;
  /// `width`: the lanes' slices of a key, lanesPerKey * vec >= D, Dv.
  int64_t rows = 0, d = 0, dv = 0, group = 1, vec = 8, lanesPerKey = 1,
          width = 0, keyGroups = 1, ringBytes = 0, smemBytes = 0;
  /// Q's element type, K/V's, and O's.
  Type elt, kvElt, outElt;
  /// This lane's first column.
  Value col;
  // The split kernel's frame (mapSplitFrame) and Q rows (loadQueryRows).
  Value wsArg, split, tid, row0, qLen, kvLen, batch, kvHead, totalRows,
      seqStart, splitLo, splitHi, keyGroup, lane, zeroVec;
  /// A per-tensor or per-head scale, loaded once (null: none or per token).
  Value kScaleUniform, vScaleUniform;
  SmallVector<Value> qSlices, queries, flatRows;
};

LogicalResult DecodeKernels::mapSplitFrame(gpu::GPUFuncOp kernel,
                                           ArrayRef<Value> operands) {
  ImplicitLocOpBuilder &kb = *b;
  for (auto [host, arg] : llvm::zip(operands, kernel.getArguments()))
    map.map(host, arg);
  wsArg = kernel.getArgument(operands.size());

  FailureOr<Value> mapped = mapSplitBlock();
  if (failed(mapped))
    return failure();
  split = *mapped;
  tid = gpu::ThreadIdOp::create(kb, gpu::Dimension::x);

  FailureOr<Value> firstRow = materialize(n.loadQ.getRow());
  FailureOr<Value> queryLen = materialize(n.mask.getQLen());
  FailureOr<Value> keyLen = materialize(n.mask.getKvLen());
  FailureOr<Value> lo = materialize(n.kvLoop.getLowerBound());
  FailureOr<Value> hi = materialize(n.kvLoop.getUpperBound());
  if (failed(firstRow) || failed(queryLen) || failed(keyLen) || failed(lo) ||
      failed(hi) || failed(materialize(n.loadK.getBatch())))
    return failure();
  row0 = *firstRow;
  qLen = *queryLen;
  kvLen = *keyLen;
  batch = map.lookup(n.loadQ.getBatch());
  kvHead = map.lookup(n.loadQ.getKvHead());
  totalRows = mul(qLen, idx(group));
  // Packed forms: the sequence's first row of Q (and of K/V); else null.
  FailureOr<Value> qStart = materializeOptional(n.loadQ.getSeqStart());
  FailureOr<Value> kStart = materializeOptional(n.loadK.getSeqStart());
  if (failed(qStart) || failed(kStart))
    return failure();
  seqStart = *qStart;

  // This split's keys, key by key.
  Value splits = memref::DimOp::create(kb, wsArg, 1);
  std::tie(splitLo, splitHi) = splitRange(split, splits, *lo, *hi, 1);

  keyGroup = arith::DivUIOp::create(kb, tid, idx(lanesPerKey));
  lane = arith::RemUIOp::create(kb, tid, idx(lanesPerKey));
  col = mul(lane, idx(vec));
  auto f32Vec = VectorType::get({vec}, kb.getF32Type());
  zeroVec = arith::ConstantOp::create(
      kb, f32Vec, DenseElementsAttr::get(f32Vec, kb.getF32FloatAttr(0)));
  // A scale per tensor or per K/V head is one value for the whole block.
  kScaleUniform = uniformScale(n.loadK.getScale(), kvHead);
  vScaleUniform = uniformScale(n.loadV.getScale(), kvHead);
  return success();
}

Value DecodeKernels::toF32(Value x) {
  ImplicitLocOpBuilder &kb = *b;
  auto type = cast<VectorType>(x.getType());
  Type from = type.getElementType();
  auto f32Vec = VectorType::get(type.getShape(), kb.getF32Type());
  if (from.isF32())
    return x;
  KVFormat xFormat = kvFormatOf(from);
  if (xFormat == KVFormat::None)
    return arith::ExtFOp::create(kb, f32Vec, x);
  if (xFormat == KVFormat::Int8)
    return arith::SIToFPOp::create(kb, f32Vec, x);
  Value f = arith::ExtFOp::create(kb, f32Vec, fp8ToF16(kb, x, sm));
  if (!fp8TimesUnit(from, sm))
    return f;
  Value unit = arith::ConstantOp::create(
      kb, f32Vec, DenseElementsAttr::get(f32Vec, kb.getF32FloatAttr(256)));
  return arith::MulFOp::create(kb, f, unit);
}

void DecodeKernels::loadQueryRows() {
  ImplicitLocOpBuilder &kb = *b;
  Value q = map.lookup(n.loadQ.getQ());
  for (int64_t r = 0; r < rows; ++r) {
    Value f = add(row0, idx(r));
    flatRows.push_back(f);
    Value valid = lt(f, totalRows);
    Value fc = arith::SelectOp::create(kb, valid, f, idx(0));
    Value firstHead = mul(kvHead, idx(group));
    Value head = add(firstHead, arith::RemUIOp::create(kb, fc, idx(group)));
    Value query = arith::DivUIOp::create(kb, fc, idx(group));
    Value slice = loadSlice(q, qIndices(head, query), d);
    qSlices.push_back(arith::SelectOp::create(kb, valid, slice, zeroVec));
    queries.push_back(query);
  }
}

SmallVector<Value> DecodeKernels::attendKey(ValueRange state, int64_t r,
                                            Value key, Value inSplit,
                                            Value kSlice, Value vSlice,
                                            Value kScale, Value vScale) {
  ImplicitLocOpBuilder &kb = *b;
  auto f32Vec = VectorType::get({vec}, kb.getF32Type());
  Value m = state[0], l = state[1], acc = state[2];
  Value dot = vector::ReductionOp::create(kb, vector::CombiningKind::ADD,
                                          mulf(qSlices[r], kSlice));
  for (int64_t off = lanesPerKey / 2; off >= 1; off /= 2)
    dot = addf(
        dot, gpu::ShuffleOp::create(kb, dot, off, kWarp, gpu::ShuffleMode::XOR)
                 .getShuffleResult());
  if (kScale)
    dot = mulf(dot, kScale);
  Value s = hasScoreMod()
                ? modScore(dot, batch, kvHead, flatRows[r], key, qLen, kvLen)
                : scoreFromDot(dot);
  Value seen =
      arith::AndIOp::create(kb, inSplit, visible(key, queries[r], qLen, kvLen));
  if (hasMaskMod())
    seen = arith::AndIOp::create(
        kb, seen, modVisible(batch, kvHead, flatRows[r], key, qLen, kvLen));
  s = arith::SelectOp::create(kb, seen, s, f32(-INFINITY));
  // Lazy rescale: m is only a reference point, moved (and acc, l
  // rescaled) when a score exceeds it by more than kRescaleSlack, so
  // p <= 2^kRescaleSlack and most keys skip the rescale's multiplies.
  // Any reference gives the same (m, l, acc) state up to scale.
  KernelF32Exprs exprs{{kb}};
  KernelSoftmaxRules rules(exprs);
  Value moves = referenceMoves(s, m);
  auto rescale = scf::IfOp::create(
      kb, TypeRange{kb.getF32Type(), kb.getF32Type(), f32Vec}, moves,
      /*withElseRegion=*/true);
  {
    OpBuilder::InsertionGuard g(kb);
    kb.setInsertionPointToStart(rescale.thenBlock());
    Value alpha = rules.weight(m, s); // 0 when m is still -inf
    scf::YieldOp::create(
        kb,
        ValueRange{s, mulf(l, alpha),
                   mulf(acc, vector::BroadcastOp::create(kb, f32Vec, alpha))});
    kb.setInsertionPointToStart(rescale.elseBlock());
    scf::YieldOp::create(kb, ValueRange{m, l, acc});
  }
  Value ref = rescale.getResult(0);
  Value p = rules.weight(s, rules.shift(ref));
  Value pVec =
      vector::BroadcastOp::create(kb, f32Vec, vScale ? mulf(p, vScale) : p);
  Value sum = addf(rescale.getResult(1), p);
  Value out = vector::FMAOp::create(kb, pVec, vSlice, rescale.getResult(2));
  return {ref, sum, out};
}

void DecodeKernels::mergeKeyGroups(scf::ForOp loop, Value smem, bool ring) {
  ImplicitLocOpBuilder &kb = *b;
  auto wg =
      gpu::AddressSpaceAttr::get(kb.getContext(), gpu::AddressSpace::Workgroup);
  // Over the ring's bytes once every lane is done with its ring.
  if (ring) {
    NVVM::CpAsyncWaitGroupOp::create(kb, 0);
    gpu::BarrierOp::create(kb);
  }
  // [key group][row][width | m | l]
  auto stateType =
      MemRefType::get({keyGroups, rows, width + 2}, kb.getF32Type(),
                      MemRefLayoutAttrInterface{}, wg);
  Value states =
      memref::ViewOp::create(kb, stateType, smem, idx(0), ValueRange{});
  for (int64_t r = 0; r < rows; ++r) {
    vector::StoreOp::create(kb, loop.getResult(3 * r + 2), states,
                            ValueRange{keyGroup, idx(r), col});
    auto first = scf::IfOp::create(
        kb, arith::CmpIOp::create(kb, arith::CmpIPredicate::eq, lane, idx(0)));
    OpBuilder::InsertionGuard g(kb);
    kb.setInsertionPointToStart(first.thenBlock());
    memref::StoreOp::create(kb, loop.getResult(3 * r), states,
                            ValueRange{keyGroup, idx(r), idx(width)});
    memref::StoreOp::create(kb, loop.getResult(3 * r + 1), states,
                            ValueRange{keyGroup, idx(r), idx(width + 1)});
  }
  gpu::BarrierOp::create(kb);

  // Thread t merges elements t, t + 128, ... of the [rows, Dv] partial.
  Value q = map.lookup(n.loadQ.getQ());
  Value hq = idx(cast<MemRefType>(q.getType()).getDimSize(1));
  for (int64_t e = 0; e * kThreads < rows * dv; ++e) {
    Value flat = add(tid, idx(e * kThreads));
    auto inRange = scf::IfOp::create(kb, lt(flat, idx(rows * dv)));
    OpBuilder::InsertionGuard g(kb);
    kb.setInsertionPointToStart(inRange.thenBlock());
    Value r = arith::DivUIOp::create(kb, flat, idx(dv));
    Value c = arith::RemUIOp::create(kb, flat, idx(dv));
    Value from = idx(0), to = idx(keyGroups), by = idx(1);
    Value noMax = f32(-INFINITY);
    auto maxLoop = scf::ForOp::create(kb, from, to, by, ValueRange{noMax});
    {
      OpBuilder::InsertionGuard g2(kb);
      kb.setInsertionPointToStart(maxLoop.getBody());
      Value mg = memref::LoadOp::create(
          kb, states, ValueRange{maxLoop.getInductionVar(), r, idx(width)});
      scf::YieldOp::create(kb, ValueRange{arith::MaxNumFOp::create(
                                   kb, maxLoop.getRegionIterArg(0), mg)});
    }
    Value m = maxLoop.getResult(0);
    KernelF32Exprs exprs{{kb}};
    KernelSoftmaxRules rules(exprs);
    Value shift = rules.shift(m);
    Value sumFrom = idx(0), sumTo = idx(keyGroups), sumBy = idx(1);
    auto sumLoop = scf::ForOp::create(kb, sumFrom, sumTo, sumBy,
                                      ValueRange{f32(0), f32(0)});
    {
      OpBuilder::InsertionGuard g2(kb);
      kb.setInsertionPointToStart(sumLoop.getBody());
      Value kg = sumLoop.getInductionVar();
      Value mg =
          memref::LoadOp::create(kb, states, ValueRange{kg, r, idx(width)});
      Value w = rules.weight(mg, shift);
      Value lg =
          memref::LoadOp::create(kb, states, ValueRange{kg, r, idx(width + 1)});
      Value ag = memref::LoadOp::create(kb, states, ValueRange{kg, r, c});
      scf::YieldOp::create(
          kb, ValueRange{addf(sumLoop.getRegionIterArg(0), mulf(lg, w)),
                         addf(sumLoop.getRegionIterArg(1), mulf(ag, w))});
    }
    // Rows past the Q tile's end write nothing.
    Value f = add(row0, r);
    auto inside = scf::IfOp::create(kb, lt(f, totalRows));
    kb.setInsertionPointToStart(inside.thenBlock());
    Value firstHead = mul(kvHead, idx(group));
    Value head = add(firstHead, arith::RemUIOp::create(kb, f, idx(group)));
    Value query = arith::DivUIOp::create(kb, f, idx(group));
    // O's rows flattened: (batch * Hq + head) * Sq + query, packed
    // token * Hq + head.
    SmallVector<Value> at = qIndices(head, query);
    Value headRow = add(mul(at[0], hq), at[1]);
    Value wsRow = seqStart ? headRow : add(mul(headRow, qLen), at[2]);
    memref::StoreOp::create(kb, sumLoop.getResult(1), wsArg,
                            ValueRange{wsRow, split, c});
    auto first = scf::IfOp::create(
        kb, arith::CmpIOp::create(kb, arith::CmpIPredicate::eq, c, idx(0)));
    kb.setInsertionPointToStart(first.thenBlock());
    memref::StoreOp::create(kb, m, wsArg, ValueRange{wsRow, split, idx(dv)});
    memref::StoreOp::create(kb, sumLoop.getResult(0), wsArg,
                            ValueRange{wsRow, split, idx(dv + 1)});
  }
}

LogicalResult DecodeKernels::buildSplit(gpu::GPUFuncOp kernel,
                                        ArrayRef<Value> operands) {
  ImplicitLocOpBuilder &kb = *b;
  MLIRContext *ctx = kb.getContext();
  if (failed(mapSplitFrame(kernel, operands)))
    return failure();
  // The Q tile's rows, this lane's slice of each, and their queries.
  loadQueryRows();

  // Each key group walks its keys with an online softmax per row. The loop
  // runs the same trips in every lane (the shuffles need the whole warp):
  // slot `base + group` past the split's end reads a clamped key and
  // counts as masked.
  SmallVector<Value> inits;
  for (int64_t r = 0; r < rows; ++r)
    inits.append({f32(-INFINITY), f32(0), zeroVec});
  // Slot u of the trip at key `base`: this key group's key there, clamped
  // into the split (the clamped key counts as masked).
  Value lastKey = arith::SubIOp::create(kb, splitHi, idx(1));
  auto slotOf = [&](Value base, int64_t u) {
    return add(base, add(idx(u * keyGroups), keyGroup));
  };
  auto keyOf = [&](Value slot) {
    return arith::MinSIOp::create(kb, slot, lastKey).getResult();
  };
  const int64_t tripKeys = keyGroups * kUnroll;

  auto wg = gpu::AddressSpaceAttr::get(ctx, gpu::AddressSpace::Workgroup);
  Value smem = gpu::DynamicSharedMemoryOp::create(
      kb, MemRefType::get({ShapedType::kDynamic}, kb.getI8Type(),
                          MemRefLayoutAttrInterface{}, wg));
  // The cp.async ring: [stage][slot][K | V][thread][vec], each lane's
  // slices 16 bytes apart from its neighbours' (no bank conflicts).
  Value ring;
  auto copyTrip = [&](Value base, Value stage) {
    auto any = scf::IfOp::create(kb, lt(base, splitHi));
    OpBuilder::InsertionGuard g(kb);
    kb.setInsertionPointToStart(any.thenBlock());
    // K and V rows share their addressing (one block table, one set of
    // offsets): a key's indices (and its table entry) are found once.
    for (int64_t u = 0; u < kUnroll; ++u) {
      SmallVector<Value> at = kvRowIndices(n.loadK, keyOf(slotOf(base, u)));
      copySlice(ring, {stage, idx(u), idx(0), tid, idx(0)},
                map.lookup(n.loadK.getSrc()), at, d);
      copySlice(ring, {stage, idx(u), idx(1), tid, idx(0)},
                map.lookup(n.loadV.getSrc()), at, dv);
    }
  };
  if (kStages > 1) {
    auto ringType = MemRefType::get({kStages, kUnroll, 2, kThreads, vec}, kvElt,
                                    MemRefLayoutAttrInterface{}, wg);
    ring = memref::ViewOp::create(kb, ringType, smem, idx(0), ValueRange{});
    // The first stages - 1 trips, one group each (empty past the split).
    for (int64_t s = 0; s + 1 < kStages; ++s) {
      Value first = add(splitLo, idx(s * tripKeys));
      copyTrip(first, idx(s));
      NVVM::CpAsyncCommitGroupOp::create(kb);
    }
  }
  // Each trip takes kUnroll keys per group, their loads issued before any
  // use so several 16-byte loads are in flight per lane.
  auto loop = scf::ForOp::create(kb, splitLo, splitHi, idx(tripKeys), inits);
  {
    OpBuilder::InsertionGuard g(kb);
    kb.setInsertionPointToStart(loop.getBody());
    Value j = loop.getInductionVar();
    Value stage;
    if (kStages > 1) {
      // Copy trip iter + stages - 1 into the stage this lane read last
      // trip, then wait for this trip's group.
      Value done = arith::SubIOp::create(kb, j, splitLo);
      Value iter = arith::DivUIOp::create(kb, done, idx(tripKeys));
      stage = arith::RemUIOp::create(kb, iter, idx(kStages));
      Value aheadIter = add(iter, idx(kStages - 1));
      Value ahead = arith::RemUIOp::create(kb, aheadIter, idx(kStages));
      copyTrip(add(j, idx((kStages - 1) * tripKeys)), ahead);
      NVVM::CpAsyncCommitGroupOp::create(kb);
      NVVM::CpAsyncWaitGroupOp::create(kb, kStages - 1);
    }
    auto fromRing = [&](int64_t u, int64_t kind) -> Value {
      return toF32(vector::LoadOp::create(
          kb, VectorType::get({vec}, kvElt), ring,
          ValueRange{stage, idx(u), idx(kind), tid, idx(0)},
          /*nontemporal=*/false, llvm::Align(16)));
    };
    // Per-token scales are read beside the key's slices (cached: a key's
    // lanes read the same one).
    bool tokenScales = (n.loadK.getScale() && !kScaleUniform) ||
                       (n.loadV.getScale() && !vScaleUniform);
    SmallVector<Value> keys, inSplit, kSlices, vSlices, kScales, vScales;
    for (int64_t u = 0; u < kUnroll; ++u) {
      Value slot = slotOf(j, u);
      inSplit.push_back(lt(slot, splitHi));
      keys.push_back(keyOf(slot));
      SmallVector<Value> at;
      if (!ring || tokenScales)
        at = kvRowIndices(n.loadK, keys.back());
      kScales.push_back(scaleOf(n.loadK.getScale(), kScaleUniform, at));
      vScales.push_back(scaleOf(n.loadV.getScale(), vScaleUniform, at));
      if (ring) {
        kSlices.push_back(fromRing(u, 0));
        vSlices.push_back(fromRing(u, 1));
        continue;
      }
      kSlices.push_back(loadSlice(map.lookup(n.loadK.getSrc()), at, d));
      vSlices.push_back(loadSlice(map.lookup(n.loadV.getSrc()), at, dv));
    }
    SmallVector<Value> results(loop.getRegionIterArgs());
    for (int64_t u = 0; u < kUnroll; ++u)
      for (int64_t r = 0; r < rows; ++r) {
        SmallVector<Value> next = attendKey(ValueRange(results).slice(3 * r, 3),
                                            r, keys[u], inSplit[u], kSlices[u],
                                            vSlices[u], kScales[u], vScales[u]);
        std::copy(next.begin(), next.end(), results.begin() + 3 * r);
      }
    scf::YieldOp::create(kb, results);
  }

  // Merge the block's key groups through shared memory.
  mergeKeyGroups(loop, smem, /*ring=*/bool(ring));
  kb.setInsertionPointToEnd(&kernel.front());
  gpu::ReturnOp::create(kb);
  return success();
}

LogicalResult DecodeKernels::build(gpu::GPUModuleOp module, func::FuncOp func,
                                   StringRef name) {
  MLIRContext *ctx = module.getContext();
  Location loc = n.forall.getLoc();
  FailureOr<Value> ws = appendWorkspace(func, dv);
  if (failed(ws))
    return failure();
  auto wsType = cast<MemRefType>(ws->getType());

  SmallVector<Value> splitOperands = inputOperands(n);
  SmallVector<Value> splitArgs(splitOperands);
  splitArgs.push_back(*ws);
  auto splitKernel = createKernel(module, loc, (name + "_split").str(),
                                  ValueRange(splitArgs).getTypes(), kThreads);

  ImplicitLocOpBuilder kb(loc, ctx);
  b = &kb; // KernelEmitter's helpers build here
  kb.setInsertionPointToStart(&splitKernel.front());
  // The combine may start as soon as every split block has.
  if (combineOverlapsSplit(sm))
    letCombineStart(kb);
  if (failed(buildSplit(splitKernel, splitOperands)))
    return failure();

  // Host: the split launch, then the combine launch.
  ImplicitLocOpBuilder hb(loc, n.forall);
  SmallVector<OpFoldResult> ubs = n.forall.getMixedUpperBound();
  auto asIndex = [&](OpFoldResult ofr) {
    return getValueOrCreateConstantIndexOp(hb, loc, ofr);
  };
  auto cst = [&](int64_t v) { return arith::ConstantIndexOp::create(hb, v); };
  Value splits = memref::DimOp::create(hb, *ws, 1);
  Value qTiles = asIndex(ubs[0]);
  Value batches = asIndex(ubs[2]);
  Value zTiles = arith::MulIOp::create(hb, qTiles, batches);
  gpu::KernelDim3 block{cst(kThreads), cst(1), cst(1)};
  gpu::KernelDim3 splitGrid{splits, asIndex(ubs[1]), zTiles};
  Value splitSmem =
      arith::ConstantOp::create(hb, hb.getI32IntegerAttr(smemBytes));
  auto split = gpu::LaunchFuncOp::create(hb, splitKernel, splitGrid, block,
                                         splitSmem, splitArgs);
  if (failed(
          setLaunchContract(split,
                            decodeSplitLaunch(n, Tier::Decode, kThreads,
                                              smemBytes, rows, group, wsType),
                            n, *ws)) ||
      failed(nvptx::buildCombine(n, module, name, *ws, sm)))
    return failure();
  n.forall.erase();
  return success();
}

/// The tensor-core split kernel: a prefill tier's parts in split-K form,
/// the wgmma tier's on sm_90a where the Q tile is whole warpgroups and the
/// head dims are 64-column blocks (MQA's 64 rows a K/V head), else the mma
/// tier's. Beside it, its one-split form: the same tile writing O itself
/// (over a packed Q, on the prefill tier's packed grid), which libattnrt
/// launches instead of the split and combine kernels when a call has one
/// split (large batches), saving the workspace's round trip and the
/// combine's launch.
LogicalResult buildTensorCoreSplit(L1Nest nest, func::FuncOp func,
                                   gpu::GPUModuleOp kernels, StringRef name,
                                   StringRef chip, int sm, StringRef pass) {
  PrefillParts parts{Tier::MMA, MmaProvider::MmaSync, SharedLayout::Swizzled,
                     CopyPipeline::CpAsyncRing, ScoreStage::Registers};
  auto qTile = cast<RankedTensorType>(nest.loadQ.getTile().getType());
  auto vTile = cast<RankedTensorType>(nest.loadV.getTile().getType());
  // Head dims of whole 16-byte rows (the mma tier pads them to 16
  // columns in shared memory), up to MLA's 576.
  const int64_t d = qTile.getDimSize(1), dv = vTile.getDimSize(1);
  if (d % 8 || dv % 8 || std::max(d, dv) > kDecodeTensorCoreMaxHeadDim)
    return nest.forall.emitError()
           << "the split-K decode tier's tensor-core kernel takes head dims "
              "that are multiples of 8 up to "
           << kDecodeTensorCoreMaxHeadDim << "; got D = " << d
           << ", Dv = " << dv;
  Type kvElt = cast<MemRefType>(nest.loadK.getSrc().getType()).getElementType();
  if (decodeOnWgmma(chip, qTile.getDimSize(0), qTile.getDimSize(1),
                    vTile.getDimSize(1), kvElt))
    parts = {Tier::WGMMA, MmaProvider::Wgmma, SharedLayout::SwizzledBlocks,
             CopyPipeline::CpAsyncRing, ScoreStage::Registers};
  FailureOr<PrefillPlan> plan = planPrefill(nest, parts, sm);
  if (failed(plan))
    return failure();
  // The split kernel is bound by memory: stages past two buy bytes in
  // flight, not Q K^T a tile ahead (which a prefill schedule asks for with
  // them).
  plan->qkAhead = false;
  // The one-split form reads the nest too: a copy of it, built after.
  OpBuilder b(nest.forall);
  b.setInsertionPointAfter(nest.forall);
  auto twin = cast<scf::ForallOp>(b.clone(*nest.forall.getOperation()));
  PrefillPlan whole = *plan;
  whole.decodeUnsplit = true;
  plan->splitKV = true;
  plan->interleavedSplits = !nest.loadK.getBlockTable();
  FailureOr<Value> ws = appendWorkspace(func, plan->valueHeadDim);
  if (failed(ws) ||
      failed(createRegisterScoreKernel(nest, *plan)->build(kernels, name, *ws)))
    return failure();
  FailureOr<L1Nest> twinNest = matchNest(twin, pass);
  if (failed(twinNest))
    return failure();
  return createRegisterScoreKernel(*twinNest, whole)
      ->build(kernels, (name + "_unsplit").str(), Value());
}

struct AttnToDecodePass : mlir::attn::impl::AttnToDecodeBase<AttnToDecodePass> {
  using AttnToDecodeBase::AttnToDecodeBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto nests = findNests(module);
    SmallVector<std::pair<func::FuncOp, scf::ForallOp>> decode;
    for (auto nest : nests)
      if (auto tier = nest.second->getAttrOfType<TierAttr>(kTierAttrName))
        if (tier.getValue() == Tier::Decode)
          decode.push_back(nest);
    if (decode.empty())
      return;
    FailureOr<int> sm = parseChip(chip);
    if (failed(sm)) {
      module.emitError() << "option 'chip' must be sm_XY with XY in "
                            "[70, 120] (e.g. sm_80, sm_90a), got '"
                         << chip << "'";
      return signalPassFailure();
    }
    gpu::GPUModuleOp kernels = getKernelModule(module);
    for (auto [func, forall] : decode) {
      FailureOr<L1Nest> nest = matchNest(forall, getArgument());
      if (failed(nest))
        return signalPassFailure();
      std::string name = (func.getSymName() + "_decode").str();
      auto qTile = cast<RankedTensorType>(nest->loadQ.getTile().getType());
      Type kvElt =
          cast<MemRefType>(nest->loadK.getSrc().getType()).getElementType();
      auto vTile = cast<RankedTensorType>(nest->loadV.getTile().getType());
      bool dequantizes =
          whyNoTensorCoreDequant(qTile.getDimSize(1), vTile.getDimSize(1),
                                 nest->vFromK())
              .empty();
      if (decodeOnTensorCores(qTile.getDimSize(0), qTile.getElementType(),
                              kvElt, *sm, dequantizes)) {
        if (failed(buildTensorCoreSplit(*nest, func, kernels, name, chip, *sm,
                                        getArgument())))
          return signalPassFailure();
        continue;
      }
      // The SIMT kernel's shape: the nest's schedule (attn-select-tier's
      // defaults where it leaves a field at 0).
      auto s = forall->getAttrOfType<ScheduleAttr>(kScheduleAttrName);
      if (!s)
        s = ScheduleAttr::get(forall.getContext(), 0, 0, 0, 0);
      auto pick = [](int64_t asked, int64_t fallback) {
        return asked ? asked : fallback;
      };
      int64_t threads = pick(s.getWarps(), kDecodeSimtThreads / kWarp) * kWarp;
      int64_t unroll = pick(s.getUnroll(), kDecodeSimtUnroll);
      int64_t stages = pick(s.getStages(), defaultStages(*sm));
      // cp.async is sm_80+; older chips load K/V slices directly.
      if (stages > 1 && *sm < 80) {
        forall.emitRemark()
            << "the split-K decode tier's SIMT kernel "
               "loads K/V directly on sm_"
            << *sm << " (no cp.async): schedule 'stages' = " << stages
            << " runs as 1";
        stages = 1;
      }
      DecodeKernels k(*nest, threads, unroll, stages, *sm);
      if (failed(k.plan()) || failed(k.build(kernels, func, name)))
        return signalPassFailure();
    }
    tidyKernels(kernels);
  }
};

} // namespace
