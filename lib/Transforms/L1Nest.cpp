//===- L1Nest.cpp - the loop nest attn-tile builds ------------------------===//

#include "lib/Transforms/L1Nest.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Transforms/RegionUtils.h"

using namespace mlir;
using namespace mlir::attn;

template <typename OpT> static OpT single(Block &block) {
  auto ops = block.getOps<OpT>();
  if (std::distance(ops.begin(), ops.end()) != 1)
    return nullptr;
  return *ops.begin();
}

FailureOr<L1Nest> mlir::attn::matchL1Nest(scf::ForallOp forall,
                                          StringRef pass) {
  L1Nest n;
  n.forall = forall;
  Block &body = *forall.getBody();
  n.loadQ = single<LoadQOp>(body);
  n.finalize = single<FinalizeOp>(body);
  n.storeO = single<StoreOOp>(body);
  auto lses = body.getOps<StoreLseOp>();
  n.storeLse = lses.empty() ? nullptr : *lses.begin();
  SmallVector<QKOp> qks;
  forall.walk([&](QKOp qk) { qks.push_back(qk); });
  if (!n.loadQ || !n.finalize || !n.storeO || qks.size() != 1)
    return forall.emitError()
               << pass
               << ": expected the loop nest of attn-tile (load_q, K/V loop, "
                  "finalize, store_o)",
           failure();
  n.qk = qks.front();
  if (Value sink = n.finalize.getSink()) {
    n.loadSink = sink.getDefiningOp<LoadSinkOp>();
    if (!n.loadSink || n.loadSink->getBlock() != &body)
      return forall.emitError() << pass
                                << ": finalize's sink must come from an "
                                   "attn.load_sink in the nest",
             failure();
  }
  n.kvLoop = dyn_cast<scf::ForOp>(n.qk->getParentOp());
  if (!n.kvLoop)
    return forall.emitError() << pass << ": attn.qk must sit in the K/V loop",
           failure();
  if (n.kvLoop->getParentOp() != forall) {
    n.splitForall = dyn_cast<scf::ForallOp>(n.kvLoop->getParentOp());
    forall.walk([&](MergeOp merge) { n.merge = merge; });
    if (!n.splitForall || n.splitForall->getParentOp() != forall || !n.merge)
      return forall.emitError()
                 << pass
                 << ": expected the K/V loop in the body, or in the split "
                    "forall of attn-split-kv",
             failure();
  }
  Block &loop = *n.kvLoop.getBody();
  n.mask = single<MaskOp>(loop);
  n.softmax = single<OnlineSoftmaxOp>(loop);
  n.pv = single<PVOp>(loop);
  if (!n.mask || !n.softmax || !n.pv)
    return forall.emitError()
               << pass
               << ": the K/V loop must hold one qk, mask, online_softmax and "
                  "pv",
           failure();
  n.loadK = n.qk.getK().getDefiningOp<LoadKVOp>();
  n.loadV = n.pv.getV().getDefiningOp<LoadKVOp>();
  if (!n.loadK || !n.loadV || n.qk.getQ() != n.loadQ.getTile() ||
      n.mask.getScores() != n.qk.getScores() ||
      n.softmax.getScores() != n.mask.getResult() ||
      n.pv.getProbs() != n.softmax.getProbs() ||
      n.pv.getRescale() != n.softmax.getRescale())
    return forall.emitError()
               << pass
               << ": the K/V loop's ops are not chained as attn-tile chains "
                  "them",
           failure();
  // A packed sequence's first row is read from its offsets.
  auto offsetsOf = [](Value seqStart) -> Value {
    auto cast = seqStart.getDefiningOp<arith::IndexCastOp>();
    auto load = cast ? cast.getIn().getDefiningOp<memref::LoadOp>() : nullptr;
    return load ? load.getMemref() : Value();
  };
  if (n.loadQ.isPacked() && !(n.cuSeqlensQ = offsetsOf(n.loadQ.getSeqStart())))
    return forall.emitError()
               << pass
               << ": a packed Q's first row must be loaded from its "
                  "offsets (cu_seqlens_q)",
           failure();
  if (n.loadK.isPacked() && !(n.cuSeqlensK = offsetsOf(n.loadK.getSeqStart())))
    return forall.emitError()
               << pass
               << ": a packed K/V's first row must be loaded from "
                  "its offsets (cu_seqlens_k)",
           failure();
  // The mod regions' captures: the same list on qk and mask (attn-tile
  // gives each the attention's captures when it has a region).
  n.captures = llvm::to_vector(n.qk.getCaptures());
  if (n.captures.empty())
    n.captures = llvm::to_vector(n.mask.getCaptures());
  else if (!n.mask.getCaptures().empty() &&
           !llvm::equal(n.captures, n.mask.getCaptures()))
    return forall.emitError()
               << pass << ": qk and mask must read the same captures",
           failure();
  // kv_lens is read by the nest's length computation, not by an L1 op: it
  // is the one memref left.
  SetVector<Value> captured;
  getUsedValuesDefinedAbove(forall.getRegion(), captured);
  Value known[] = {n.loadQ.getQ(),
                   n.loadK.getSrc(),
                   n.loadV.getSrc(),
                   n.loadK.getBlockTable(),
                   n.cuSeqlensQ,
                   n.cuSeqlensK,
                   n.loadK.getScale(),
                   n.loadV.getScale(),
                   n.storeO.getO(),
                   n.storeLse ? n.storeLse.getLse() : Value(),
                   n.loadSink ? n.loadSink.getSinks() : Value()};
  for (Value v : captured) {
    if (!isa<MemRefType>(v.getType()) || llvm::is_contained(known, v) ||
        llvm::is_contained(n.captures, v))
      continue;
    if (n.kvLens)
      return forall.emitError()
                 << pass
                 << ": the nest reads more memrefs than attn-tile's "
                    "operands",
             failure();
    n.kvLens = v;
  }
  return n;
}

bool L1Nest::vFromK() const {
  L1Nest n = *this; // the op accessors are not const
  return n.loadV.getSrc() == n.loadK.getSrc() &&
         n.loadV.getScale() == n.loadK.getScale();
}

SmallVector<Value> mlir::attn::inputOperands(const L1Nest &nest) {
  L1Nest n = nest; // the op accessors are not const
  SmallVector<Value> operands{n.loadQ.getQ(), n.loadK.getSrc(),
                              n.loadV.getSrc()};
  for (Value v :
       {Value(n.loadK.getScale()), Value(n.loadV.getScale()), n.cuSeqlensQ,
        n.cuSeqlensK, Value(n.loadK.getBlockTable()), n.kvLens})
    if (v)
      operands.push_back(v);
  operands.append(n.captures);
  return operands;
}
