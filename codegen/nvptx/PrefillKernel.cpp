//===- PrefillKernel.cpp - the prefill tiers' kernel skeleton -------------===//
//
// The skeleton of PrefillKernel.h: block mapping, the copy pipeline, the
// K/V loop, and the helpers the score stages share. The index arithmetic
// of the nest (row offsets, K/V range, lengths) is cloned from L1 into the
// kernel, so masks and paging mean the same thing here as on the CPU.
//
//===----------------------------------------------------------------------===//

#include "codegen/nvptx/PrefillKernel.h"

#include "codegen/nvptx/AttnNVDialect.h"

#include "codegen/nvptx/BlockMask.h"

#include "codegen/nvptx/LaunchContract.h"
#include "codegen/nvptx/SplitCombine.h"
#include "codegen/nvptx/Target.h"
#include "codegen/nvptx/WarpgroupMMA.h"
#include "dialect/AttnDialect.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/SymbolTable.h"

#include <cmath>

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::nvptx;

namespace {
/// NVPTX address spaces: shared::cta, and shared::cluster (TMA's
/// destination operand).
constexpr unsigned kSharedSpace = 3, kSharedClusterSpace = 7;
} // namespace

Value PrefillKernel::view(Value byteOffset, ArrayRef<int64_t> shape,
                          Type type) {
  auto memrefType =
      MemRefType::get(shape, type, MemRefLayoutAttrInterface{},
                      gpu::AddressSpaceAttr::get(b->getContext(),
                                                 gpu::AddressSpace::Workgroup));
  return memref::ViewOp::create(*b, memrefType, smem, byteOffset, ValueRange{});
}

void PrefillKernel::copyTile(
    Value dst, int64_t rows, int64_t width, int64_t srcWidth, Value src,
    function_ref<std::pair<Value, SmallVector<Value>>(Value)> source) {
  const bool bytes =
      cast<MemRefType>(dst.getType()).getElementTypeBitWidth() == 8;
  nv::TileLayout layout = bytes               ? nv::TileLayout::Bytes
                          : p.blocked()       ? nv::TileLayout::Blocked
                          : p.swizzles(width) ? nv::TileLayout::Swizzled
                                              : nv::TileLayout::Plain;
  auto copy = nv::CopyTileOp::create(*b, src, dst, tid, p.threads, rows, width,
                                     srcWidth, layout, p.cpAsync);
  OpBuilder::InsertionGuard g(*b);
  b->setInsertionPointToStart(&copy.getSource().front());
  auto [valid, indices] = source(copy.getSource().getArgument(0));
  SmallVector<Value> values{valid};
  values.append(indices);
  nv::YieldOp::create(*b, values);
}
/// Global indices (all but the column) of K/V row `start + row`, clamped
/// into the sequence; returns whether the row exists. `inside` says the
/// caller knows it does (a tile wholly inside K/V): no test, no clamp.
Value PrefillKernel::kvIndices(LoadKVOp load, Value row,
                               SmallVector<Value> &indices, Value start,
                               bool inside) {
  Value j = add(start, row);
  Value valid =
      inside ? Value(arith::ConstantIntOp::create(*b, 1, 1)) : lt(j, kvLen);
  // Inside the K/V loop kvLen >= 1, so the clamped row exists.
  Value jc = inside ? j
                    : Value(arith::MinSIOp::create(
                          *b, j, arith::SubIOp::create(*b, kvLen, idx(1))));
  indices = kvRowIndices(load, jc);
  return valid;
}
Value PrefillKernel::tokenScaleTile(LoadKVOp load, Value first,
                                    Value laneColumn) {
  Value scale = map.lookup(load.getScale());
  Value base = add(first, laneColumn);
  Value at[4];
  for (auto [i, offset] : llvm::enumerate(ArrayRef<int64_t>{0, 1, 8, 9})) {
    SmallVector<Value> indices;
    kvIndices(load, idx(offset), indices, base);
    at[i] = memref::LoadOp::create(*b, scale, indices);
  }
  SmallVector<Value> e;
  for (int64_t i = 0; i < 8; ++i)
    e.push_back(at[2 * (i / 4) + i % 2]);
  return vector::FromElementsOp::create(
      *b, VectorType::get({8}, b->getF32Type()), e);
}
std::pair<Value, Value> PrefillKernel::queryRange(Value firstRow,
                                                  int64_t rows) {
  Value first = arith::DivUIOp::create(*b, firstRow, idx(p.group));
  Value lastRow = add(firstRow, idx(rows - 1));
  Value last = arith::DivUIOp::create(*b, lastRow, idx(p.group));
  return {first, last};
}

// The ring commits and waits with nvvm.cp.async.commit.group / wait.group
// rather than nvgpu's async tokens: a stage's copies sit under scf.if
// (tiles past the end are not copied) and the pipeline commits empty
// groups on purpose, neither of which nvgpu.device_async_create_group's
// token operands can say without yielding tokens out of every branch.
void PrefillKernel::copyKV(Value start, Value stage, bool commit,
                           KVTiles tiles) {
  // A tile wholly inside K/V (all but the last) skips the per-row bounds
  // test and clamp: the branch is uniform, and the plain rows' addresses
  // are one tile base plus per-thread constants.
  if (!n.loadK.getBlockTable()) {
    Value inside = arith::CmpIOp::create(*b, arith::CmpIPredicate::sle,
                                         add(start, idx(p.bc)), kvLen);
    auto split = scf::IfOp::create(*b, inside, /*withElseRegion=*/true);
    OpBuilder::InsertionGuard g(*b);
    b->setInsertionPointToStart(split.thenBlock());
    copyKVRows(start, stage, /*inside=*/true, tiles);
    b->setInsertionPointToStart(split.elseBlock());
    copyKVRows(start, stage, /*inside=*/false, tiles);
  } else {
    copyKVRows(start, stage, /*inside=*/false, tiles);
  }
  if (p.cpAsync && commit)
    NVVM::CpAsyncCommitGroupOp::create(*b);
}
void PrefillKernel::copyKVRows(Value start, Value stage, bool inside,
                               KVTiles tiles) {
  // The staggered pipeline's V has one buffer.
  Value vStage = p.staggered ? idx(0) : stage;
  Value kDst = view(stageOffset(p.kOff, stage, p.kStage),
                    p.kvTileShape(p.bc, p.d), p.kvElt);
  Value vDst = view(stageOffset(p.vOff, vStage, p.vStage),
                    p.kvTileShape(p.bc, p.dv), p.kvElt);
  for (auto [load, dst, width, srcWidth] :
       {std::tuple<LoadKVOp, Value, int64_t, int64_t>{n.loadK, kDst, p.d,
                                                      p.headDim},
        {n.loadV, vDst, p.dv, p.valueHeadDim}}) {
    LoadKVOp l = load;
    if ((tiles == KVTiles::K && l == n.loadV) ||
        (tiles == KVTiles::V && l == n.loadK) || (p.vInK && l == n.loadV))
      continue;
    copyTile(dst, p.bc, width, srcWidth, map.lookup(l.getSrc()),
             [&](Value row) {
               SmallVector<Value> indices;
               Value valid = kvIndices(l, row, indices, start, inside);
               return std::make_pair(valid, indices);
             });
  }
}
Value PrefillKernel::sharedPointer(Value byteOffset) {
  Value base = memref::ExtractAlignedPointerAsIndexOp::create(*b, smem);
  Value at =
      arith::IndexCastUIOp::create(*b, b->getI64Type(), add(base, byteOffset));
  return LLVM::IntToPtrOp::create(
      *b, LLVM::LLVMPointerType::get(b->getContext(), kSharedSpace), at);
}
Value PrefillKernel::mbarrier(Value i) {
  Value first = idx(p.barOff);
  return sharedPointer(add(first, mul(i, idx(8))));
}
void PrefillKernel::initMbarriers() {
  // Full ones (and Q's) wait for one arrival (the copying thread's, with
  // the tile's bytes); a producer's empty ones for every consumer warp.
  for (int64_t i = 0; i < p.mbarriers(); ++i) {
    int64_t arrivals =
        p.specialized && i >= 2 * p.stages && i < 4 * p.stages ? p.warps : 1;
    Value barrier = mbarrier(idx(i));
    NVVM::MBarrierInitOp::create(*b, barrier, i32(arrivals), Value());
  }
  NVVM::FenceMbarrierInitOp::create(*b);
}
Value PrefillKernel::fullBarrier(KVTiles tiles, Value stage) {
  bool isK = tiles == KVTiles::K;
  if (!p.specialized)
    return mbarrier(isK ? stage : idx(2));
  return mbarrier(isK ? stage : add(stage, idx(p.stages)));
}
Value PrefillKernel::emptyBarrier(KVTiles tiles, Value stage) {
  int64_t first = (tiles == KVTiles::K ? 2 : 3) * p.stages;
  return mbarrier(add(stage, idx(first)));
}
void PrefillKernel::releaseStage(KVTiles tiles, Value stage) {
  Value lane = arith::RemUIOp::create(*b, tid, idx(kWarp));
  ifThen(lt(lane, idx(1)), [&] {
    NVVM::MBarrierArriveOp::create(*b, Type(), emptyBarrier(tiles, stage),
                                   Value());
  });
}
void PrefillKernel::ifThen(Value cond, function_ref<void()> body) {
  auto guard = scf::IfOp::create(*b, cond);
  OpBuilder::InsertionGuard g(*b);
  b->setInsertionPointToStart(guard.thenBlock());
  body();
}
Value PrefillKernel::parityOf(Value uses) {
  Value bit = arith::AndIOp::create(*b, uses, idx(1));
  return arith::IndexCastOp::create(*b, b->getI32Type(), bit);
}
void PrefillKernel::buildProducer(Value lo, Value hi, int64_t posStep,
                                  function_ref<Value(Value)> iteration,
                                  function_ref<Value(Value)> firstKey) {
  // Its warps keep a loop counter and a few addresses: the registers go
  // to the consumers. setmaxnreg is warpgroup-wide, before the leader's
  // branch.
  NVVM::SetMaxRegisterOp::create(*b, p.producerRegisters,
                                 NVVM::SetMaxRegisterAction::decrease);
  onLeader([&] {
    auto loop = scf::ForOp::create(*b, lo, hi, idx(posStep));
    OpBuilder::InsertionGuard g(*b);
    b->setInsertionPointToStart(loop.getBody());
    Value pos = loop.getInductionVar();
    Value iter = iteration(pos);
    Value stage = arith::RemUIOp::create(*b, iter, idx(p.stages));
    Value uses = arith::DivUIOp::create(*b, iter, idx(p.stages));
    // Use u of a stage waits for the consumers' u-th release, the phase
    // of parity (u - 1) & 1; a fresh mbarrier counts the phase before
    // its first as complete, so the first use goes at once.
    Value parity = parityOf(uses);
    Value released = arith::XOrIOp::create(*b, parity, i32(1));
    Value j = firstKey(pos);
    for (KVTiles tiles : {KVTiles::K, KVTiles::V}) {
      waitTma(emptyBarrier(tiles, stage), released);
      copyKVTma(j, stage, tiles);
    }
  });
}
void PrefillKernel::onLeader(function_ref<void()> body) {
  ifThen(arith::CmpIOp::create(*b, arith::CmpIPredicate::eq, tid, idx(0)),
         body);
}
void PrefillKernel::expectBytes(Value bar, int64_t bytes) {
  NVVM::MBarrierArriveExpectTxOp::create(*b, Type(), bar, i32(bytes),
                                         NVVM::MemScopeKind::CTA,
                                         /*relaxed=*/false, Value());
}
Value PrefillKernel::clusterPointer(Value byteOffset) {
  // TMA's destination operand is in shared::cluster.
  auto cluster =
      LLVM::LLVMPointerType::get(b->getContext(), kSharedClusterSpace);
  return LLVM::AddrSpaceCastOp::create(*b, cluster, sharedPointer(byteOffset));
}
void PrefillKernel::copyBox(Value dst, Value tensorMap, ValueRange coords,
                            Value bar) {
  NVVM::CpAsyncBulkTensorGlobalToSharedClusterOp::create(
      *b, dst, tensorMap, coords, bar, ValueRange{}, Value(), Value(),
      NVVM::TMALoadMode::TILE, /*isCTAOnly=*/false, NVVM::CTAGroupKindAttr(),
      Value());
}
Value PrefillKernel::i32Of(Value index) {
  return arith::IndexCastOp::create(*b, b->getI32Type(), index);
}
void PrefillKernel::copyKVTma(Value start, Value stage, KVTiles tiles) {
  // Boxes of 64 columns (128 bytes, the swizzle span) by 64 rows: block
  // c / 64 of the tile's 64-column blocks (SwizzledBlocks), rows r..r+63
  // of it. TMA writes the 128-byte swizzle wgmma reads, and zeros for
  // rows past Sk.
  constexpr int64_t kBox = 64;
  bool isK = tiles == KVTiles::K;
  LoadKVOp load = isK ? n.loadK : n.loadV;
  int64_t width = isK ? p.d : p.dv;
  Value base = isK             ? stageOffset(p.kOff, stage, p.kStage)
               : p.specialized ? stageOffset(p.vOff, stage, p.vStage)
                               : idx(p.vOff);
  Value bar = fullBarrier(tiles, stage);
  Value tensorMap = isK ? tensorMapK : tensorMapV;
  Value batch = i32Of(map.lookup(load.getBatch()));
  Value head = i32Of(map.lookup(load.getKvHead()));
  expectBytes(bar, width * p.bc * 2);
  // Values built in statements of their own (C++ leaves argument order
  // unspecified); a braced list's run left to right.
  for (int64_t c = 0; c < width; c += kBox)
    for (int64_t r = 0; r < p.bc; r += kBox) {
      Value dst =
          clusterPointer(add(base, idx((c / kBox) * p.bc * 128 + r * 128)));
      Value row = i32Of(add(start, idx(r)));
      copyBox(dst, tensorMap, {i32(c), row, head, batch}, bar);
    }
}
void PrefillKernel::copyQTma(Value row0, Value kvHead, Value batch) {
  // Q's map is [B, Hkv, Sq, group, D] (dims innermost first: D, head in
  // group, query, K/V head, batch) with boxes of 64 columns by
  // min(group, br) heads by br / min(group, br) queries: br rows in the
  // block's order (query-major), one 64-column block of the tile each.
  // Row r of the K/V head's rows is query r / group, head r % group;
  // whyNoQTma makes sure a box starting there stays in its group. TMA
  // writes zeros for queries past Sq.
  Value bar = qBarrier();
  expectBytes(bar, p.d * p.br * 2);
  forEachQViewBox(
      row0, kvHead, batch, p.qOff, p.d,
      [&](Value offset) { return clusterPointer(offset); },
      [&](Value dst, ValueRange coords) {
        copyBox(dst, tensorMapQ, coords, bar);
      });
}
void PrefillKernel::forEachQViewBox(
    Value row0, Value kvHead, Value batch, int64_t base, int64_t width,
    function_ref<Value(Value)> pointer,
    function_ref<void(Value, ValueRange)> issue) {
  constexpr int64_t kBox = 64;
  Value query = i32Of(arith::DivUIOp::create(*b, row0, idx(p.group)));
  Value head = i32Of(arith::RemUIOp::create(*b, row0, idx(p.group)));
  for (int64_t c = 0; c < width; c += kBox) {
    Value at = pointer(idx(base + (c / kBox) * p.br * 128));
    // A braced list's elements are built left to right.
    SmallVector<Value, 5> coords{i32(c), head, query, i32Of(kvHead),
                                 i32Of(batch)};
    issue(at, coords);
  }
}
Value PrefillKernel::qBarrier() { return mbarrier(idx(p.mbarriers() - 1)); }
Value PrefillKernel::oStagingView() {
  if (p.oTma)
    return view(idx(p.oOff), p.tileShape(p.br, p.dv), p.outElt);
  return view(idx(p.oOff), {p.br, p.oRow}, p.outElt);
}
void PrefillKernel::storeOTma(const Output &out) {
  // O's map is Q's view of O (copyQTma): a box of 64 columns by br rows
  // reads one 64-column block of the staging tile, whose swizzle is the
  // one TMA undoes. TMA writes nothing for queries past Sq.
  asyncProxyFence(); // this thread's staging writes, for TMA's reads
  computeBarrier();
  onLeader([&] {
    forEachQViewBox(
        out.row0, out.kvHead, out.batch, p.oOff, p.dv,
        [&](Value offset) { return sharedPointer(offset); },
        [&](Value src, ValueRange coords) {
          NVVM::CpAsyncBulkTensorSharedCTAToGlobalOp::create(
              *b, tensorMapO, src, coords, Value(), NVVM::TMAStoreMode::TILE,
              Value());
        });
    NVVM::CpAsyncBulkCommitGroupOp::create(*b);
    // Shared memory must outlive the reads: wait for them, not the writes.
    NVVM::CpAsyncBulkWaitGroupOp::create(*b, b->getI32IntegerAttr(0),
                                         b->getUnitAttr());
  });
}
void PrefillKernel::waitTma(Value bar, Value parity) {
  // try_wait.parity with the default time hint; the op loops until the
  // phase completes.
  NVVM::MBarrierTryWaitParityOp::create(*b, bar, parity, i32(0x989680));
}

SmallVector<Value> PrefillKernel::rowIndices(const Output &out, Value flat) {
  Value firstHead = mul(out.kvHead, idx(p.group));
  Value headInGroup = arith::RemUIOp::create(*b, flat, idx(p.group));
  Value head = add(firstHead, headInGroup);
  Value query = arith::DivUIOp::create(*b, flat, idx(p.group));
  if (out.seqStart)
    return {add(out.seqStart, query), head};
  return {out.batch, head, query};
}
Value PrefillKernel::workspaceRow(const Output &out, ArrayRef<Value> at) {
  Value hq = idx(cast<MemRefType>(n.loadQ.getQ().getType()).getDimSize(1));
  Value first = add(mul(at[0], hq), at[1]);
  return out.seqStart ? first : add(mul(first, out.queries), at[2]);
}
Value PrefillKernel::inverseOrZero(Value l) {
  Value seen = arith::CmpFOp::create(*b, arith::CmpFPredicate::OGT, l, f32(0));
  Value inverse = arith::DivFOp::create(*b, f32(1), l);
  Value zero = f32(0);
  return arith::SelectOp::create(*b, seen, inverse, zero);
}
PrefillKernel::RowNormal
PrefillKernel::normalizeRow(Value m, Value l, function_ref<Value()> head) {
  if (!n.loadSink)
    return {inverseOrZero(l), m, l};
  Value sink = loadSink(map.lookup(n.loadSink.getSinks()), head());
  SinkFold folded = foldSink(m, l, sink);
  Value inverse = inverseOrZero(folded.sum);
  Value factor = arith::MulFOp::create(*b, inverse, folded.accScale);
  return {factor, folded.max, folded.sum};
}
Value PrefillKernel::logSumExp(Value m, Value l) {
  F32Exprs e{*b};
  SoftmaxRules<F32Exprs> rules(e);
  Value seen = rules.seen(l);
  return rules.logSumExp(m, l, seen);
}
void PrefillKernel::forEachOutputChunk(
    Value thread, int64_t count, Value firstRow, int64_t rows, int64_t perChunk,
    const Output &out, function_ref<void(Value row, Value col)> body) {
  // Only O's own columns: the padding past Dv is never written.
  auto chunks =
      nv::ForEachChunkOp::create(*b, thread, count, firstRow, rows,
                                 p.valueHeadDim, perChunk, out.row0, out.rows);
  Block *block = new Block;
  chunks.getBody().push_back(block);
  Value row = block->addArgument(b->getIndexType(), b->getLoc());
  Value col = block->addArgument(b->getIndexType(), b->getLoc());
  OpBuilder::InsertionGuard g(*b);
  b->setInsertionPointToStart(block);
  body(row, col);
  // The body may leave the builder inside a branch of its own.
  b->setInsertionPointToEnd(block);
  nv::YieldOp::create(*b, ValueRange{});
}
LogicalResult PrefillKernel::build(gpu::GPUModuleOp module, StringRef name,
                                   Value hostWorkspace) {
  MLIRContext *ctx = module.getContext();
  Location loc = n.forall.getLoc();

  // The split-K form's last argument is its workspace, which a block mask
  // would take too: the decode tier never builds both.
  assert(!(p.splitKV && p.blockMask) && "a split kernel has no block mask");
  SmallVector<LaunchOperand> mapped;
  SmallVector<Value> operands = kernelOperands(hostWorkspace, mapped);

  OpBuilder moduleBuilder = OpBuilder::atBlockEnd(module.getBody());
  auto funcType =
      FunctionType::get(ctx, ValueRange(operands).getTypes(), TypeRange{});
  std::string symbol = (name + (p.splitKV ? "_split" : "")).str();
  auto kernel = gpu::GPUFuncOp::create(moduleBuilder, loc, symbol, funcType);
  kernel->setAttr(gpu::GPUDialect::getKernelFuncAttrName(), UnitAttr::get(ctx));
  kernel.setKnownBlockSizeAttr(
      DenseI32ArrayAttr::get(ctx, {int32_t(p.blockThreads), 1, 1}));
  // setmaxnreg needs a register cap at entry: .maxntid with one block an
  // SM gives 64K / blockThreads.
  if (p.specialized)
    kernel->setAttr(NVVM::NVVMDialect::getMinctasmAttrName(),
                    IntegerAttr::get(IntegerType::get(ctx, 32), 1));
  ImplicitLocOpBuilder kb(loc, ctx);
  b = &kb; // KernelEmitter's helpers build here
  kb.setInsertionPointToStart(&kernel.front());
  // The combine may start as soon as every split block has.
  if (p.splitKV && combineOverlapsSplit(p.sm))
    letCombineStart(kb);
  if (failed(mapKernelArguments(kernel, operands)))
    return failure();

  // The nest's index arithmetic, cloned from L1.
  FailureOr<Value> row0 = materialize(n.loadQ.getRow());
  FailureOr<Value> qLen = materialize(n.mask.getQLen());
  FailureOr<Value> len = materialize(n.mask.getKvLen());
  FailureOr<Value> lo = materialize(n.kvLoop.getLowerBound());
  FailureOr<Value> hi = materialize(n.kvLoop.getUpperBound());
  if (failed(row0) || failed(qLen) || failed(len) || failed(lo) || failed(hi) ||
      failed(materialize(n.loadK.getBatch())) ||
      failed(materialize(n.loadK.getKvHead())))
    return failure();
  if (failed(materializeOptional(n.loadK.getSeqStart())))
    return failure();
  kvLen = *len;
  // This split's keys, whole K/V tiles: one run of them, or every S-th
  // tile from tile s (interleaved), whose loop walks positions 0, 1, ...
  // that tileAt maps to keys.
  Value splitBase, splits;
  if (p.splitKV) {
    Value first = *lo, last = *hi;
    std::tie(splitBase, splits) = splitWalk(first, last);
    lo = first;
    hi = last;
  }
  Value batch = map.lookup(n.loadQ.getBatch());
  Value kvHead = map.lookup(n.loadQ.getKvHead());
  Value rows = mul(*qLen, idx(p.group));
  FailureOr<Value> seqStart = materializeOptional(n.loadQ.getSeqStart());
  if (failed(seqStart))
    return failure();
  Output out{batch, kvHead, *row0, rows, *qLen, *seqStart};

  // With a block mask the loop walks list entries, not keys: entry x / r
  // of the Q block's list holds the x-th tile's block of 128 keys, whose
  // r = 128 / bc tiles follow one another.
  Value maskList, maskRow, qBlock;
  if (p.blockMask) {
    Value maskCount;
    std::tie(maskList, maskRow, qBlock, maskCount) = blockMaskWalk(
        kernel.getArgument(operands.size() - 1), batch, kvHead, *row0);
    lo = idx(0);
    hi = mul(maskCount, idx(kMaskBlock / p.bc));
  }
  // Loop positions advance by one tile: bc keys, or one position (a list
  // entry's tile, an interleaved split's next tile).
  int64_t posStep = p.blockMask || splitBase ? 1 : p.bc;
  walk = TileWalk{splitBase, splits, maskList, maskRow, qBlock, *lo};
  copies = makePipeline(*lo, *hi, posStep);

  // A producer warpgroup: thread 0 makes the mbarriers (a full one waits
  // for the producer's arrival with the tile's bytes, an empty one for
  // every consumer warp) before the roles part. Warpgroup 0 produces; the
  // rest of the kernel is the consumers', their threads numbered from 0.
  if (p.specialized)
    splitRoles(*lo, *hi, posStep, *row0, kvHead, batch);

  // Warp w takes rows of m-tiles (w % rowWarps) and keys (w / rowWarps)
  // of each K/V tile, or its columns of Dv (p.dvGroups).
  Value warp = arith::DivUIOp::create(kb, tid, idx(kWarp));
  Value rowWarp = warp, kvGroup = idx(0);
  dvColumn = idx(0);
  if (p.kvGroups > 1 || p.dvGroups > 1) {
    rowWarp = arith::RemUIOp::create(kb, warp, idx(p.rowWarps));
    Value group = arith::DivUIOp::create(kb, warp, idx(p.rowWarps));
    if (p.kvGroups > 1)
      kvGroup = group;
    else
      dvColumn = mul(group, idx(p.dvw));
  }
  Value warpRow = mul(rowWarp, idx(16 * p.mTiles));
  Value qs = view(idx(p.qOff), p.tileShape(p.br, p.d), p.elt);
  makeScoreViews();

  // Prologue: Q tile, first K/V tile; Q fragments once. A Q by TMA is
  // sent with the mbarriers (its wait follows the barrier below).
  Value q = map.lookup(n.loadQ.getQ());
  if (!p.qTma)
    copyTile(qs, p.br, p.d, p.headDim, q, [&](Value r) {
      Value f = add(*row0, r);
      Value valid = lt(f, rows);
      Value fc = arith::SelectOp::create(kb, valid, f, idx(0));
      return std::make_pair(valid, rowIndices(out, fc));
    });
  // Then the copy pipeline's first K/V tiles (and its mbarriers).
  copies->prime(*row0, kvHead, batch);
  asyncProxyFence();
  computeBarrier();
  if (p.qTma) {
    Value barrier = qBarrier();
    waitTma(barrier, i32(0));
  }
  std::unique_ptr<TileMMA> tiles = makeTiles(kb);
  SmallVector<Value> qFrags;
  if (p.kvBytes) {
    // Q's columns in the order K's decoded fragments hold them.
    byteFragments = std::make_unique<ByteFragments>(
        kb, p.elt, p.kvElt, p.sm, static_cast<MmaSyncTileMMA &>(*tiles));
    qFrags = byteFragments->loadQ(qs, warpRow, p.d);
    kScale = uniformScale(n.loadK.getScale(), kvHead);
    vScale = uniformScale(n.loadV.getScale(), kvHead);
  }
  // wgmma reads Q from shared memory itself.
  for (int64_t k = 0; !p.kvBytes && p.qInRegisters() && k < p.d / 16; ++k)
    qFrags.push_back(tiles->loadA(qs, warpRow, idx(16 * k), p.inputRow(p.d)));

  // The K/V loop carries the score stage's softmax state and the acc
  // tiles.
  Value zeroC = tiles->zeroC();
  SmallVector<Value> inits = initialState();
  for (int64_t i = 0; i < p.dvw / 16 * p.mTiles; ++i)
    inits.push_back(zeroC);
  copies->awaitFirstK();
  if (p.pingPong)
    openTurns();
  inits.append(carriedScores());
  copies->releaseFirstK();
  auto loop = scf::ForOp::create(kb, *lo, *hi, idx(posStep), inits);
  {
    OpBuilder::InsertionGuard g(kb);
    kb.setInsertionPointToStart(loop.getBody());
    Value pos = loop.getInductionVar();
    auto [j, full] = tileAt(pos);
    Value iter = iteration(pos);
    Value stage = arith::RemUIOp::create(kb, iter, idx(p.stages));
    StepPosition position{pos, iter, stage, j};
    copies->await(position);
    kb.setInsertionPointToEnd(loop.getBody());
    StageViews at = stageViews(j, stage, iter, kvGroup, qs);
    Step step{qFrags,    at.qs,       at.ks,
              at.vs,     at.firstKey, *qLen,
              *row0,     warpRow,     loop.getRegionIterArgs(),
              out.batch, out.kvHead,  full,
              at.kBase,  at.vBase,    at.nextKBase};
    SmallVector<Value> next = this->step(*tiles, step);
    copies->release(position);
    scf::YieldOp::create(kb, next);
  }

  if (p.pingPong)
    closeTurns();
  epilogue(*tiles, loop, WarpPlace{rowWarp, kvGroup, warpRow}, out);
  kb.setInsertionPointToEnd(&kernel.front());
  gpu::ReturnOp::create(kb);

  if (failed(launchFromHost(module, name, kernel, operands, mapped,
                            hostWorkspace)))
    return failure();
  n.forall.erase();
  return success();
}

SmallVector<Value>
PrefillKernel::kernelOperands(Value hostWorkspace,
                              SmallVector<LaunchOperand> &mapped) {
  MLIRContext *ctx = n.forall.getContext();
  Location loc = n.forall.getLoc();
  // Kernel arguments: the attention operands, in a fixed order; the
  // split-K form writes the workspace instead of O and the LSE (its
  // combine reads the sinks).
  SmallVector<Value> operands = inputOperands(n);
  if (p.splitKV) {
    operands.push_back(hostWorkspace);
  } else {
    if (n.loadSink)
      operands.push_back(n.loadSink.getSinks());
    operands.push_back(n.storeO.getO());
    if (n.storeLse)
      operands.push_back(n.storeLse.getLse());
    if (p.blockMask)
      operands.push_back(hostWorkspace);
  }

  // TMA: the tensor maps of [Q,] K, V [and O] come first. On the host
  // they are placeholders cast from the operands; libattnrt encodes the
  // maps the launch contract describes, and attn-tensor-map-params passes
  // them by value.
  if (p.qTma)
    mapped.push_back(LaunchOperand::Q);
  if (p.tma)
    mapped.append({LaunchOperand::K, LaunchOperand::V});
  if (p.oTma)
    mapped.push_back(LaunchOperand::O);
  {
    ImplicitLocOpBuilder hb(loc, n.forall);
    auto ptr = LLVM::LLVMPointerType::get(ctx);
    SmallVector<Value> maps;
    for (LaunchOperand o : mapped) {
      // inputOperands' first three are q, k, v.
      Value of = o == LaunchOperand::O   ? n.storeO.getO()
                 : o == LaunchOperand::Q ? operands[0]
                 : o == LaunchOperand::K ? operands[1]
                                         : operands[2];
      maps.push_back(
          UnrealizedConversionCastOp::create(hb, ptr, of).getResult(0));
    }
    operands.insert(operands.begin(), maps.begin(), maps.end());
  }
  return operands;
}

LogicalResult PrefillKernel::mapKernelArguments(gpu::GPUFuncOp kernel,
                                                ValueRange operands) {
  MLIRContext *ctx = kernel.getContext();
  for (auto [host, arg] : llvm::zip(operands, kernel.getArguments()))
    map.map(host, arg);
  if (p.tma) {
    kernel->setAttr(kTensorMapParamsAttrName,
                    b->getI64IntegerAttr(p.tensorMaps()));
    if (p.qTma)
      tensorMapQ = kernel.getArgument(0);
    tensorMapK = kernel.getArgument(p.qTma ? 1 : 0);
    tensorMapV = kernel.getArgument(p.qTma ? 2 : 1);
    if (p.oTma)
      tensorMapO = kernel.getArgument(p.qTma ? 3 : 2);
  }

  if (p.splitKV) {
    // Block (x, y, z) = (split, K/V head, batch * Q tiles + Q tile).
    workspace = kernel.getArgument(operands.size() - 1);
    FailureOr<Value> mapped = mapSplitBlock();
    if (failed(mapped))
      return failure();
    split = *mapped;
  } else if (n.loadQ.isPacked()) {
    // Block (x, y) = (packed Q tile, K/V head).
    mapPackedBlock(p.br);
  } else {
    // Block (x, y, z) = (Q tile, K/V head, batch): the forall's (t, h, b).
    map.map(n.forall.getInductionVar(0),
            gpu::BlockIdOp::create(*b, gpu::Dimension::z));
    map.map(n.forall.getInductionVar(1),
            gpu::BlockIdOp::create(*b, gpu::Dimension::y));
    map.map(n.forall.getInductionVar(2),
            gpu::BlockIdOp::create(*b, gpu::Dimension::x));
  }
  tid = gpu::ThreadIdOp::create(*b, gpu::Dimension::x);
  smem = gpu::DynamicSharedMemoryOp::create(
      *b,
      MemRefType::get(
          {ShapedType::kDynamic}, b->getI8Type(), MemRefLayoutAttrInterface{},
          gpu::AddressSpaceAttr::get(ctx, gpu::AddressSpace::Workgroup)));
  return success();
}

std::pair<Value, Value> PrefillKernel::splitWalk(Value &lo, Value &hi) {
  Value splitBase, splits;
  if (p.splitKV)
    splits = memref::DimOp::create(*b, workspace, 1);
  if (p.splitKV && p.interleavedSplits) {
    Value span = arith::SubIOp::create(*b, hi, lo);
    Value length = arith::MaxSIOp::create(*b, span, idx(0));
    Value tiles = arith::CeilDivSIOp::create(*b, length, idx(p.bc));
    Value pastSplit = arith::SubIOp::create(*b, tiles, split);
    Value left = arith::MaxSIOp::create(*b, pastSplit, idx(0));
    splitBase = lo;
    lo = idx(0);
    hi = arith::CeilDivSIOp::create(*b, left, splits);
  } else if (p.splitKV) {
    auto [first, last] = splitRange(split, splits, lo, hi, p.bc);
    lo = first;
    hi = last;
  }
  return {splitBase, splits};
}

void PrefillKernel::splitRoles(Value lo, Value hi, int64_t posStep, Value row0,
                               Value kvHead, Value batch) {
  onLeader([&] {
    initMbarriers();
    if (p.qTma)
      copyQTma(row0, kvHead, batch);
  });
  gpu::BarrierOp::create(*b);
  auto roles = scf::IfOp::create(*b, lt(tid, idx(kWarpgroup)),
                                 /*withElseRegion=*/true);
  b->setInsertionPointToStart(roles.thenBlock());
  buildProducer(
      lo, hi, posStep, [&](Value pos) { return iteration(pos); },
      [&](Value pos) { return tileAt(pos).first; });
  b->setInsertionPointToStart(roles.elseBlock());
  NVVM::SetMaxRegisterOp::create(*b, p.consumerRegisters,
                                 NVVM::SetMaxRegisterAction::increase);
  tid = arith::SubIOp::create(*b, tid, idx(kWarpgroup));
}

std::tuple<Value, Value, Value, Value>
PrefillKernel::blockMaskWalk(Value maskList, Value batch, Value kvHead,
                             Value row0) {
  Value kvHeads = memref::DimOp::create(*b, map.lookup(n.loadK.getSrc()), 1);
  Value maskRow = blockMaskRow(n, *b, batch, kvHead, kvHeads);
  Value firstQuery = arith::DivUIOp::create(*b, row0, idx(p.group));
  Value qBlock = arith::DivUIOp::create(*b, firstQuery, idx(kMaskBlock));
  Value maskCount = memref::LoadOp::create(
      *b, maskList, ValueRange{maskRow, qBlock, idx(1), idx(0)});
  // At most the list's length, whatever the workspace holds (a block
  // mask made for other sizes): the loop stays bounded, and a stray
  // entry's keys are past kv_len, which the copies and the mask check.
  maskCount = arith::IndexCastUIOp::create(*b, b->getIndexType(), maskCount);
  maskCount = arith::MinUIOp::create(*b, maskCount,
                                     memref::DimOp::create(*b, maskList, 3));
  return {maskList, maskRow, qBlock, maskCount};
}

std::pair<Value, Value> PrefillKernel::tileAt(Value x) {
  if (walk.splitBase) {
    Value tile = add(split, mul(x, walk.splits));
    Value offset = mul(tile, idx(p.bc));
    return {add(walk.splitBase, offset), Value()};
  }
  if (!p.blockMask)
    return {x, Value()};
  const int64_t tilesPerBlock = kMaskBlock / p.bc;
  Value entry = memref::LoadOp::create(
      *b, walk.maskList,
      ValueRange{walk.maskRow, walk.qBlock, idx(0),
                 arith::DivUIOp::create(*b, x, idx(tilesPerBlock))});
  entry = arith::IndexCastUIOp::create(*b, b->getIndexType(), entry);
  Value block = arith::ShRUIOp::create(*b, entry, idx(1));
  Value blockKey = mul(block, idx(kMaskBlock));
  Value tileInBlock = arith::RemUIOp::create(*b, x, idx(tilesPerBlock));
  Value j = add(blockKey, mul(tileInBlock, idx(p.bc)));
  Value fullBit = arith::AndIOp::create(*b, entry, idx(1));
  Value full =
      arith::CmpIOp::create(*b, arith::CmpIPredicate::ne, fullBit, idx(0));
  return {j, full};
}

Value PrefillKernel::iteration(Value pos) {
  if (p.blockMask || walk.splitBase)
    return pos;
  Value done = arith::SubIOp::create(*b, pos, walk.first);
  return arith::DivUIOp::create(*b, done, idx(p.bc));
}

PrefillKernel::StageViews PrefillKernel::stageViews(Value j, Value stage,
                                                    Value iter, Value kvGroup,
                                                    Value qs) {
  // This warp's keys of the tile: all of them, or its group's bcw.
  Value jw = j;
  Value kBase = stageOffset(p.kOff, stage, p.kStage);
  Value vBase =
      p.staggered ? idx(p.vOff) : stageOffset(p.vOff, stage, p.vStage);
  if (p.kvGroups > 1) {
    Value firstKey = mul(kvGroup, idx(p.bcw));
    jw = add(j, firstKey);
    kBase = add(kBase, mul(firstKey, idx(p.kRowBytes())));
    vBase = add(vBase, mul(firstKey, idx(p.vRowBytes())));
  }
  Value ks = view(kBase, p.kvTileShape(p.bcw, p.d), p.kvElt);
  // V read from K's tile: its rows, K's row length.
  Value vs = p.vInK ? ks : view(vBase, p.kvTileShape(p.bcw, p.dv), p.kvElt);

  // With two m-tiles Q is re-read every tile; a view through an opaque
  // offset keeps its 2 d/16 addresses from becoming as many registers
  // held across the loop (four plus immediates instead).
  Value qsStep = p.mTiles > 1 ? view(opaqueIndex(idx(p.qOff)),
                                     p.tileShape(p.br, p.d), p.elt)
                              : qs;
  // Q K^T a tile ahead reads the next stage's K.
  Value nextKBase;
  if (p.qkAhead) {
    Value nextIter = add(iter, idx(1));
    Value nextStage = arith::RemUIOp::create(*b, nextIter, idx(p.stages));
    nextKBase = stageOffset(p.kOff, nextStage, p.kStage);
  }
  return {jw, qsStep, ks, vs, kBase, vBase, nextKBase};
}

LogicalResult PrefillKernel::launchFromHost(
    gpu::GPUModuleOp module, StringRef name, gpu::GPUFuncOp kernel,
    ValueRange operands, ArrayRef<LaunchOperand> mapped, Value hostWorkspace) {
  Location loc = n.forall.getLoc();
  // Host: launch one block per (Q tile, K/V head, batch), or per (split,
  // K/V head, batch x Q tile) and then the combine kernel.
  ImplicitLocOpBuilder hb(loc, n.forall);
  SmallVector<OpFoldResult> ubs = n.forall.getMixedUpperBound();
  auto asIndex = [&](OpFoldResult ofr) -> Value {
    if (auto v = dyn_cast<Value>(ofr))
      return v;
    return arith::ConstantIndexOp::create(
        hb, cast<IntegerAttr>(cast<Attribute>(ofr)).getInt());
  };
  gpu::KernelDim3 grid{asIndex(ubs[2]), asIndex(ubs[1]), asIndex(ubs[0])};
  if (n.loadQ.isPacked() && !p.splitKV)
    grid = {packedTileCount(hb, p.br), grid.y,
            arith::ConstantIndexOp::create(hb, 1)};
  if (p.splitKV) {
    Value zTiles = arith::MulIOp::create(hb, grid.x, grid.z);
    grid = {memref::DimOp::create(hb, hostWorkspace, 1), grid.y, zTiles};
  }
  Value one = arith::ConstantIndexOp::create(hb, 1);
  gpu::KernelDim3 block{arith::ConstantIndexOp::create(hb, p.blockThreads), one,
                        one};
  Value smemSize = arith::ConstantOp::create(
      hb, hb.getI32IntegerAttr(static_cast<int32_t>(p.smemBytes)));
  auto launch =
      gpu::LaunchFuncOp::create(hb, kernel, grid, block, smemSize, operands);
  if (p.splitKV) {
    if (failed(setLaunchContract(
            launch,
            decodeSplitLaunch(n, p.parts.tier, p.blockThreads, p.smemBytes,
                              p.br, p.group,
                              cast<MemRefType>(hostWorkspace.getType())),
            n, hostWorkspace)))
      return failure();
    return buildCombine(n, module, name, hostWorkspace, p.sm);
  }
  if (p.decodeUnsplit)
    return setLaunchContract(launch,
                             decodeUnsplitLaunch(n, p.parts.tier,
                                                 p.blockThreads, p.smemBytes,
                                                 p.br, p.group),
                             n);
  // The launch contract: grid = (ceil(group * Sq / block_q), Hkv, B).
  std::optional<std::pair<bool, bool>> reads;
  if (p.blockMask)
    reads = blockMaskRows(n);
  return setLaunchContract(launch,
                           prefillLaunch(n, p.parts.tier, p.blockThreads,
                                         p.smemBytes, p.br, p.group, reads,
                                         mapped),
                           n, p.blockMask ? hostWorkspace : Value());
}

void PrefillKernel::awaitValues() {
  copies->awaitValues();
  // P V opens this warpgroup's turn.
  if (p.pingPong)
    awaitTurn();
}

void PrefillKernel::computeBarrier() {
  if (!p.specialized) {
    gpu::BarrierOp::create(*b);
    return;
  }
  // Barrier 0 is the whole block's (bar.sync 0, __syncthreads).
  Value id = i32(1);
  NVVM::BarrierOp::create(*b, Type(), id, i32(p.threads),
                          NVVM::BarrierReductionAttr(), Value());
}

// Named barriers 2 and 3 belong to consumer warpgroups 0 and 1: a turn
// is awaited with bar.sync on one's own (128 threads) and ended with
// bar.arrive on the other's (its 128), 256 in all.
void PrefillKernel::awaitTurn() {
  Value group = arith::DivUIOp::create(*b, tid, idx(kWarpgroup));
  Value own =
      arith::IndexCastOp::create(*b, b->getI32Type(), add(group, idx(2)));
  NVVM::BarrierOp::create(*b, Type(), own, i32(2 * kWarpgroup),
                          NVVM::BarrierReductionAttr(), Value());
}
void PrefillKernel::openTurns() {
  // Consumer warpgroup 0 takes the first turn (1 ends a turn it never
  // had), which tile 0's Q K^T opens.
  Value second = arith::CmpIOp::create(*b, arith::CmpIPredicate::uge, tid,
                                       idx(kWarpgroup));
  ifThen(second, [&] { endTurn(); });
  awaitTurn();
}

void PrefillKernel::closeTurns() {
  // The last turn ends; warpgroup 0 takes the turn 1 then ends, so that
  // every barrier phase completes.
  endTurn();
  Value first = lt(tid, idx(kWarpgroup));
  ifThen(first, [&] { awaitTurn(); });
}

void PrefillKernel::endTurn() {
  Value group = arith::DivUIOp::create(*b, tid, idx(kWarpgroup));
  Value other = arith::IndexCastOp::create(
      *b, b->getI32Type(), arith::SubIOp::create(*b, idx(3), group));
  NVVM::BarrierArriveOp::create(*b, other, i32(2 * kWarpgroup));
}

void PrefillKernel::asyncProxyFence() {
  // Tiles cp.async wrote (the generic proxy) that wgmma reads next (the
  // async proxy): each writing thread fences before the barrier.
  if (p.warpgroups())
    NVVM::FenceProxyOp::create(
        *b,
        NVVM::ProxyKindAttr::get(b->getContext(),
                                 NVVM::ProxyKind::async_shared),
        NVVM::SharedSpaceAttr::get(b->getContext(),
                                   NVVM::SharedSpace::shared_cta));
}

std::unique_ptr<TileMMA> PrefillKernel::makeTiles(ImplicitLocOpBuilder &kb) {
  // bf16 always on mma.sync, which WMMA lacks. (f16 on mma.sync with the
  // scores through shared memory measured 145.8 against WMMA's 170.1
  // TFLOP/s at D128 S4096, H100.)
  // The wgmma tier keeps mma.sync's fragments for its register work (the
  // accumulator layouts agree, WarpgroupMMA.h) but never loads one.
  if (p.parts.mma != MmaProvider::WMMA || p.elt.isBF16())
    return std::make_unique<MmaSyncTileMMA>(
        kb, p.elt, arith::RemUIOp::create(kb, tid, idx(kWarp)),
        /*swizzled=*/p.parts.layout == SharedLayout::Swizzled);
  return createWMMATileMMA(kb, p.elt);
}

LogicalResult nvptx::lowerPrefillNests(ModuleOp module,
                                       const PrefillParts &parts,
                                       StringRef chip, StringRef pass) {
  FailureOr<int> sm = parseChip(chip);
  if (failed(sm))
    return module.emitError() << "option 'chip' must be sm_XY with XY in "
                                 "[70, 120] (e.g. sm_80, sm_90a), got '"
                              << chip << "'";
  SmallVector<std::pair<func::FuncOp, scf::ForallOp>> nests;
  for (auto nest : findNests(module)) {
    auto tier = nest.second->getAttrOfType<TierAttr>(kTierAttrName);
    if (!tier || tier.getValue() == parts.tier)
      nests.push_back(nest);
  }
  if (nests.empty())
    return success();
  // Checked where there is a nest to lower: attn-to-ptx runs every tier's
  // pass, and a chip too old for one must still run the others.
  if (*sm < minimumSm(parts.tier))
    return nests.front().second.emitError()
           << "the " << stringifyTier(parts.tier) << " tier needs sm_"
           << minimumSm(parts.tier) << " or newer ("
           << minimumSmReason(parts.tier) << "); got " << chip;
  gpu::GPUModuleOp kernels = getKernelModule(module);
  SymbolTable symbols(kernels);
  for (auto [func, forall] : nests) {
    FailureOr<L1Nest> nest = matchNest(forall, pass);
    if (failed(nest))
      return failure();
    if (parts.mma == MmaProvider::Wgmma && !hasWgmma(chip))
      return forall.emitError()
             << "the " << stringifyTier(parts.tier)
             << " tier needs an arch-specific chip (sm_90a: wgmma is not "
                "in sm_90); got "
             << chip;
    FailureOr<PrefillPlan> plan = planPrefill(*nest, parts, *sm);
    if (failed(plan))
      return failure();
    // Kernel symbols say their tier: @<function>_<tier>.
    std::string name = (func.getSymName() + "_" + plan->tierName()).str();
    if (symbols.lookup(name))
      name += "_" + std::to_string(std::distance(kernels.getBody()->begin(),
                                                 kernels.getBody()->end()));
    // A mask_mod's tiles come from a block mask, which its own kernel
    // writes into a workspace argument first (attn-compile's tier note
    // says why a kernel has none).
    Value mask;
    if (whyNoBlockMask(*nest, *plan).empty()) {
      FailureOr<Value> appended = appendBlockMask(func);
      if (failed(appended) ||
          failed(buildBlockMask(*nest, kernels, name, *appended)))
        return failure();
      mask = *appended;
      plan->blockMask = true;
    }
    std::unique_ptr<PrefillKernel> kernel =
        plan->registers() ? createRegisterScoreKernel(*nest, *plan)
                          : createSharedScoreKernel(*nest, *plan);
    if (failed(kernel->build(kernels, name, mask)))
      return failure();
  }
  tidyKernels(kernels);
  return success();
}
