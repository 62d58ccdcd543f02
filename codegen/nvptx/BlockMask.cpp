//===- BlockMask.cpp - tile skipping for a mask_mod -----------------------===//
//
// The block-mask kernel: one block of threads per (Q block, K/V head',
// batch'), walking the K/V blocks in order. Its threads evaluate the
// block's positions (every query head of the K/V head where the region
// reads h), and two reducing barriers say whether any and whether all of
// them are visible: uniform answers, so thread 0 appends the block to the
// list without further synchronization.
//
//===----------------------------------------------------------------------===//

#include "codegen/nvptx/BlockMask.h"

#include "codegen/nvptx/LaunchContract.h"
#include "mlir/IR/SymbolTable.h"

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::nvptx;

std::pair<bool, bool> nvptx::blockMaskRows(const L1Nest &nest) {
  L1Nest n = nest; // the op accessors are not const
  Block &body = n.mask.getMaskMod().front();
  // Lengths that vary per sequence (kv_lens, a packed batch's offsets)
  // make every sequence's blocks its own.
  bool perSequence = n.kvLens || n.loadQ.isPacked() || n.loadK.isPacked();
  return {!body.getArgument(0).use_empty() || perSequence,
          !body.getArgument(1).use_empty()};
}

std::string nvptx::whyNoBlockMask(const L1Nest &nest, const PrefillPlan &p) {
  L1Nest n = nest;
  if (!n.mask.hasMaskMod())
    return "no mask_mod";
  if (p.splitKV)
    return "split-K code";
  if (p.br % p.group || kMaskBlock % (p.br / p.group) || kMaskBlock % p.bc)
    return "the tile straddles blocks of 128 queries or keys";
  return "";
}

MemRefType nvptx::blockMaskType(MLIRContext *ctx) {
  int64_t dyn = ShapedType::kDynamic;
  return MemRefType::get({dyn, dyn, 2, dyn}, IntegerType::get(ctx, 32));
}

FailureOr<Value> nvptx::appendBlockMask(func::FuncOp func) {
  if (failed(func.insertArgument(func.getNumArguments(),
                                 blockMaskType(func.getContext()), {},
                                 func.getLoc())))
    return func.emitError("cannot append the block mask argument");
  return func.getArgument(func.getNumArguments() - 1);
}

// The block-mask kernel's grid (y = H', z = B') gives the same row.
Value nvptx::blockMaskRow(const L1Nest &nest, ImplicitLocOpBuilder &b,
                          Value batch, Value kvHead, Value kvHeads) {
  auto [perBatch, perHead] = blockMaskRows(nest);
  Value zero = arith::ConstantIndexOp::create(b, 0);
  Value batchPart = perBatch ? batch : zero;
  if (!perHead)
    return batchPart;
  return arith::AddIOp::create(b, arith::MulIOp::create(b, batchPart, kvHeads),
                               kvHead);
}

namespace {

class BlockMaskKernel : public KernelEmitter {
public:
  using KernelEmitter::KernelEmitter;
  LogicalResult build(gpu::GPUFuncOp kernel, ArrayRef<Value> operands);

private:
  Value eq(Value x, Value y) {
    return arith::CmpIOp::create(*b, arith::CmpIPredicate::eq, x, y);
  }
  Value oneIf(Value i1) {
    Value one = idx(1);
    Value zero = idx(0);
    return arith::SelectOp::create(*b, i1, one, zero);
  }
  Value toI32(Value i1) {
    return arith::ExtUIOp::create(*b, b->getI32Type(), i1);
  }
  /// Whether some (`op` = or) or every (and) thread's `pred` holds: a
  /// barrier that reduces (bar.red), so the answer is the block's.
  Value blockVote(Value pred, NVVM::BarrierReduction op) {
    auto bar = NVVM::BarrierOp::create(
        *b, b->getI32Type(), Value(), Value(),
        NVVM::BarrierReductionAttr::get(b->getContext(), op), toI32(pred));
    return arith::CmpIOp::create(*b, arith::CmpIPredicate::ne, bar.getRes(),
                                 i32(0));
  }
};

} // namespace

LogicalResult BlockMaskKernel::build(gpu::GPUFuncOp kernel,
                                     ArrayRef<Value> operands) {
  ImplicitLocOpBuilder kb(kernel.getLoc(), kernel.getContext());
  b = &kb;
  kb.setInsertionPointToStart(&kernel.front());
  for (auto [host, arg] : llvm::zip(operands, kernel.getArguments()))
    map.map(host, arg);
  Value mask = kernel.getArguments().back();
  auto [perBatch, perHead] = blockMaskRows(n);
  Value qBlock = gpu::BlockIdOp::create(kb, gpu::Dimension::x);
  Value head = gpu::BlockIdOp::create(kb, gpu::Dimension::y);
  Value batch = gpu::BlockIdOp::create(kb, gpu::Dimension::z);
  Value heads = gpu::GridDimOp::create(kb, gpu::Dimension::y);
  Value tid = gpu::ThreadIdOp::create(kb, gpu::Dimension::x);
  // The nest's length arithmetic reads its (batch, K/V head, Q tile):
  // kv_lens[batch] where the lengths vary per sequence.
  map.map(n.forall.getInductionVar(0), batch);
  map.map(n.forall.getInductionVar(1), head);
  map.map(n.forall.getInductionVar(2), idx(0));
  FailureOr<Value> qLen = materialize(n.mask.getQLen());
  FailureOr<Value> kvLen = materialize(n.mask.getKvLen());
  if (failed(qLen) || failed(kvLen))
    return failure();
  // The grid's y and z are 1 where the region reads no h or b (and the
  // K/V lengths are the same for every sequence): then the positions are
  // those of head 0 / batch 0, which nothing it evaluates looks at.
  Value row = add(mul(batch, heads), head);
  int64_t group = n.loadQ.getGroup();
  int64_t heads1 = perHead ? group : 1; // query heads evaluated per position
  int64_t perThread = kMaskBlock * kMaskBlock * heads1 / kBlockMaskThreads;
  // At most the list's length: a kv_lens entry past the cache (a caller's
  // broken promise) must not make this kernel write past its row.
  Value kvLenBlocks = arith::CeilDivUIOp::create(kb, *kvLen, idx(kMaskBlock));
  Value listLength = memref::DimOp::create(kb, mask, 3);
  Value kvBlocks = arith::MinUIOp::create(kb, kvLenBlocks, listLength);
  Value firstQuery = mul(qBlock, idx(kMaskBlock));
  Value isFirst = eq(tid, idx(0));
  Value none = arith::ConstantIntOp::create(kb, 0, 1);
  Value all = arith::ConstantIntOp::create(kb, 1, 1);

  Value zero = idx(0);
  Value one = idx(1);
  Value noEntries = idx(0);
  auto blocks =
      scf::ForOp::create(kb, zero, kvBlocks, one, ValueRange{noEntries});
  {
    OpBuilder::InsertionGuard g(kb);
    kb.setInsertionPointToStart(blocks.getBody());
    Value kvBlock = blocks.getInductionVar();
    Value count = blocks.getRegionIterArg(0);
    Value firstKey = mul(kvBlock, idx(kMaskBlock));
    // Keys fastest, so that neighbouring threads read neighbouring
    // entries of a capture indexed by kv_idx.
    Value firstPosition = idx(0);
    Value numPositions = idx(perThread);
    Value positionStep = idx(1);
    auto positions = scf::ForOp::create(kb, firstPosition, numPositions,
                                        positionStep, ValueRange{none, all});
    {
      OpBuilder::InsertionGuard g2(kb);
      kb.setInsertionPointToStart(positions.getBody());
      Value e =
          add(mul(positions.getInductionVar(), idx(kBlockMaskThreads)), tid);
      Value key = add(firstKey, arith::RemUIOp::create(kb, e, idx(kMaskBlock)));
      Value rest = arith::DivUIOp::create(kb, e, idx(kMaskBlock));
      Value query =
          add(firstQuery, arith::RemUIOp::create(kb, rest, idx(kMaskBlock)));
      Value queryHead = arith::DivUIOp::create(kb, rest, idx(kMaskBlock));
      // visible() holds only for keys that exist; the query is tested
      // here. modPositions keeps the region's capture loads inside the
      // sequence for positions past it, as in the attention kernels.
      Value flatRow = add(mul(query, idx(group)), queryHead);
      Value queryExists = lt(query, *qLen);
      Value seen = visible(key, query, *qLen, *kvLen);
      Value modSeen = modVisible(batch, head, flatRow, key, *qLen, *kvLen);
      Value v = arith::AndIOp::create(kb, queryExists,
                                      arith::AndIOp::create(kb, seen, modSeen));
      Value anySoFar =
          arith::OrIOp::create(kb, positions.getRegionIterArg(0), v);
      Value allSoFar =
          arith::AndIOp::create(kb, positions.getRegionIterArg(1), v);
      scf::YieldOp::create(kb, ValueRange{anySoFar, allSoFar});
    }
    Value any = blockVote(positions.getResult(0), NVVM::BarrierReduction::OR);
    Value full = blockVote(positions.getResult(1), NVVM::BarrierReduction::AND);
    auto append =
        scf::IfOp::create(kb, arith::AndIOp::create(kb, any, isFirst));
    {
      OpBuilder::InsertionGuard g2(kb);
      kb.setInsertionPointToStart(append.thenBlock());
      Value twice = mul(kvBlock, idx(2));
      Value entry = add(twice, oneIf(full));
      Value entry32 = arith::IndexCastOp::create(kb, kb.getI32Type(), entry);
      memref::StoreOp::create(kb, entry32, mask,
                              ValueRange{row, qBlock, idx(0), count});
    }
    scf::YieldOp::create(kb, add(count, oneIf(any)));
  }
  auto last = scf::IfOp::create(kb, isFirst);
  {
    OpBuilder::InsertionGuard g(kb);
    kb.setInsertionPointToStart(last.thenBlock());
    Value length =
        arith::IndexCastOp::create(kb, kb.getI32Type(), blocks.getResult(0));
    Value one = idx(1);
    Value zero = idx(0);
    memref::StoreOp::create(kb, length, mask,
                            ValueRange{row, qBlock, one, zero});
  }
  gpu::ReturnOp::create(kb);
  return success();
}

LogicalResult nvptx::buildBlockMask(const L1Nest &nest, gpu::GPUModuleOp module,
                                    StringRef name, Value mask) {
  L1Nest n = nest;
  Location loc = n.forall.getLoc();
  SmallVector<Value> operands = inputOperands(n);
  operands.push_back(mask);
  auto kernel =
      createKernel(module, loc, (name + "_block_mask").str(),
                   ValueRange(operands).getTypes(), kBlockMaskThreads);
  if (failed(BlockMaskKernel(n).build(kernel, operands)))
    return failure();
  // attn-compile's small-grid alternatives are copies of one spec with
  // other tiles: their block masks do not depend on the tile, so the
  // kernel an earlier copy built serves them all (one in the PTX).
  for (auto other : module.getOps<gpu::GPUFuncOp>()) {
    if (other == kernel || !other.getName().ends_with("_block_mask") ||
        other.getFunctionType() != kernel.getFunctionType() ||
        !OperationEquivalence::isRegionEquivalentTo(
            &other.getBody(), &kernel.getBody(),
            OperationEquivalence::IgnoreLocations))
      continue;
    kernel.erase();
    kernel = other;
    break;
  }

  // Host: one block per (Q block, K/V head', batch').
  ImplicitLocOpBuilder hb(loc, n.forall);
  auto [perBatch, perHead] = blockMaskRows(n);
  Value one = arith::ConstantIndexOp::create(hb, 1);
  Value q = n.loadQ.getQ(), k = n.loadK.getSrc();
  // A packed Q's blocks: those of the longest sequence, which the
  // workspace's dim 1 counts (Q's dims count every packed row).
  Value qBlocks;
  if (n.loadQ.isPacked()) {
    qBlocks = memref::DimOp::create(hb, mask, 1);
  } else {
    Value qLen = memref::DimOp::create(hb, q, 2);
    Value perBlock = arith::ConstantIndexOp::create(hb, kMaskBlock);
    qBlocks = arith::CeilDivUIOp::create(hb, qLen, perBlock);
  }
  // The batch: the nest's own bound (Q's dim 0, or cu_seqlens' length - 1).
  Value batches = getValueOrCreateConstantIndexOp(
      hb, loc, n.forall.getMixedUpperBound()[0]);
  gpu::KernelDim3 grid{qBlocks,
                       perHead ? Value(memref::DimOp::create(hb, k, 1)) : one,
                       perBatch ? batches : one};
  gpu::KernelDim3 block{arith::ConstantIndexOp::create(hb, kBlockMaskThreads),
                        one, one};
  Value smem = arith::ConstantOp::create(hb, hb.getI32IntegerAttr(0));
  auto launch =
      gpu::LaunchFuncOp::create(hb, kernel, grid, block, smem, operands);
  return setLaunchContract(
      launch,
      blockMaskLaunch(n, kBlockMaskThreads, perBatch, perHead, kMaskBlock), n,
      mask);
}
