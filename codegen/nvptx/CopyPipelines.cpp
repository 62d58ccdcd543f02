//===- CopyPipelines.cpp - how K/V tiles reach the prefill kernel ---------===//
//
// The skeleton's copy pipeline part (PrefillKernel.h), one class a kind:
//
//   SynchronousCopies  one stage, loaded between two barriers (cp.async
//                      or plain loads)
//   CpAsyncRing        a ring of `stages`, stages - 1 tiles in flight
//   StaggeredCopies    two K stages and one V buffer, K_{j+1} and V_j
//                      copied as separate cp.async groups (wgmma tier)
//   LeaderTma          the same staggering by TMA, thread 0 issuing and
//                      every thread waiting on the tiles' mbarriers
//   ProducerTma        a producer warpgroup's TMA ring with full and empty
//                      mbarriers per stage
//
// Each owns what its steps wait on: the cp.async group counts, or the
// mbarriers and the phase parity of each use of a ring stage.
//
//===----------------------------------------------------------------------===//

#include "codegen/nvptx/PrefillKernel.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::nvptx;

void PrefillKernel::CopyPipeline::ifNextTile(
    const StepPosition &at, function_ref<void(Value, Value)> body) {
  Value next = k.add(at.pos, k.idx(posStep));
  auto more = scf::IfOp::create(*k.b, k.lt(next, hi));
  OpBuilder::InsertionGuard g(*k.b);
  k.b->setInsertionPointToStart(more.thenBlock());
  Value nextIter = k.add(at.iter, k.idx(1));
  Value nextStage = arith::RemUIOp::create(*k.b, nextIter, k.idx(k.p.stages));
  body(k.tileAt(next).first, nextStage);
}

Value PrefillKernel::CopyPipeline::usesOf(Value iter) {
  return arith::DivUIOp::create(*k.b, iter, k.idx(k.p.stages));
}

void PrefillKernel::CopyPipeline::landGroups(int64_t pending) {
  NVVM::CpAsyncWaitGroupOp::create(*k.b, pending);
  k.asyncProxyFence();
  gpu::BarrierOp::create(*k.b);
}

void PrefillKernel::CopyPipeline::primeGroups(KVTiles first) {
  // Q's copies close the first group; the first `ahead` = stages - 1 K/V
  // tiles follow, one group each, committed even when there is no tile
  // (an empty group): waiting for all but `ahead` groups then always
  // covers Q, and in the loop all but ahead - 1 the current tile. Q K^T a
  // tile ahead needs one tile more each time.
  NVVM::CpAsyncCommitGroupOp::create(*k.b);
  for (int64_t s = 0; s < ahead(); ++s) {
    Value start = k.add(lo, k.idx(s * posStep));
    auto any = scf::IfOp::create(*k.b, k.lt(start, hi));
    {
      OpBuilder::InsertionGuard g(*k.b);
      k.b->setInsertionPointToStart(any.thenBlock());
      Value key = k.tileAt(start).first;
      k.copyKV(key, k.idx(s), /*commit=*/false, first);
    }
    NVVM::CpAsyncCommitGroupOp::create(*k.b);
  }
  NVVM::CpAsyncWaitGroupOp::create(*k.b, ahead() - early());
}

/// One stage: each tile loaded between two barriers (synchronously
/// without cp.async).
class PrefillKernel::SynchronousCopies : public CopyPipeline {
public:
  using CopyPipeline::CopyPipeline;
  void prime(Value, Value, Value) override {
    if (k.p.cpAsync)
      primeGroups(KVTiles::Both);
  }
  void await(const StepPosition &at) override {
    gpu::BarrierOp::create(*k.b);
    k.copyKV(at.j, at.stage);
    if (k.p.cpAsync)
      NVVM::CpAsyncWaitGroupOp::create(*k.b, 0);
    k.asyncProxyFence();
    gpu::BarrierOp::create(*k.b);
  }
};

/// A cp.async ring: `ahead` tiles in flight, the step's waited for.
class PrefillKernel::CpAsyncRing : public CopyPipeline {
public:
  using CopyPipeline::CopyPipeline;
  void prime(Value, Value, Value) override { primeGroups(KVTiles::Both); }
  void await(const StepPosition &at) override {
    landGroups(ahead() - 1 - early());
    // Prefetch tile iter + ahead into the stage the last iteration read
    // (the barrier above says every warp is done with it; computing Q
    // K^T ahead, the next tile's K is in another).
    Value next = k.add(at.pos, k.idx(ahead() * posStep));
    auto more = scf::IfOp::create(*k.b, k.lt(next, hi));
    {
      OpBuilder::InsertionGuard g(*k.b);
      k.b->setInsertionPointToStart(more.thenBlock());
      Value aheadIter = k.add(at.iter, k.idx(ahead()));
      Value nextStage =
          arith::RemUIOp::create(*k.b, aheadIter, k.idx(k.p.stages));
      k.copyKV(k.tileAt(next).first, nextStage, /*commit=*/false);
    }
    NVVM::CpAsyncCommitGroupOp::create(*k.b);
  }
};

/// Two K stages and one V buffer: V_j is copied at the top of step j and
/// waited for before P V, K_{j+1} copied with it and left running.
class PrefillKernel::StaggeredCopies : public CopyPipeline {
public:
  using CopyPipeline::CopyPipeline;
  void prime(Value, Value, Value) override { primeGroups(KVTiles::K); }
  void await(const StepPosition &at) override {
    // K_j is the one group in flight (V_{j-1} was waited for before
    // P V): wait, and after the barrier every warp is done with V_{j-1}
    // and K_{j-1}. Then V_j into the one V buffer, K_{j+1} into the
    // other K stage, each its own group.
    landGroups(0);
    k.copyKV(at.j, at.stage, /*commit=*/true, KVTiles::V);
    ifNextTile(at, [&](Value start, Value nextStage) {
      k.copyKV(start, nextStage, /*commit=*/false, KVTiles::K);
    });
    NVVM::CpAsyncCommitGroupOp::create(*k.b);
  }
  void awaitValues() override {
    // In flight: V_j, then K_{j+1} (the newest group, left running).
    landGroups(1);
  }
};

/// The staggered pipeline by TMA: thread 0 makes the mbarriers (one
/// arrival each: its own, with the tile's bytes) and issues the copies;
/// every thread waits for a tile's phase.
class PrefillKernel::LeaderTma : public CopyPipeline {
public:
  using CopyPipeline::CopyPipeline;
  void prime(Value row0, Value kvHead, Value batch) override {
    // Thread 0 sends [Q and] K_0; Q's cp.async group is waited for, and
    // the barrier after priming hands both the mbarriers and Q to every
    // thread.
    if (!k.p.qTma)
      NVVM::CpAsyncCommitGroupOp::create(*k.b);
    k.onLeader([&] {
      k.initMbarriers();
      if (k.p.qTma)
        k.copyQTma(row0, kvHead, batch);
      auto any = scf::IfOp::create(*k.b, k.lt(lo, hi));
      OpBuilder::InsertionGuard g(*k.b);
      k.b->setInsertionPointToStart(any.thenBlock());
      Value loKey = k.tileAt(lo).first;
      k.copyKVTma(loKey, k.idx(0), KVTiles::K);
    });
    if (!k.p.qTma)
      NVVM::CpAsyncWaitGroupOp::create(*k.b, 0);
  }
  void await(const StepPosition &at) override {
    // K_j has landed when its stage's mbarrier completes its use
    // iter / 2; after the barrier every warp is done with V_{j-1} and
    // K_{j-1}, so thread 0 sends V_j into the one V buffer and K_{j+1}
    // into the other K stage. V's one buffer is used once a step: its
    // parity is iter & 1.
    Value kUses = usesOf(at.iter);
    Value kBarrier = k.fullBarrier(KVTiles::K, at.stage);
    k.waitTma(kBarrier, k.parityOf(kUses));
    gpu::BarrierOp::create(*k.b);
    vParity = k.parityOf(at.iter);
    vBarrier = k.fullBarrier(KVTiles::V, at.stage);
    k.onLeader([&] {
      k.copyKVTma(at.j, at.stage, KVTiles::V);
      ifNextTile(at, [&](Value start, Value nextStage) {
        k.copyKVTma(start, nextStage, KVTiles::K);
      });
    });
  }
  // V_j's bytes are visible to every thread its mbarrier releases.
  void awaitValues() override { k.waitTma(vBarrier, vParity); }

private:
  /// This step's V mbarrier and the parity of its phase.
  Value vBarrier, vParity;
};

/// A producer warpgroup's ring (PrefillKernel::buildProducer sends the
/// tiles): use u = iter / stages of a stage is the producer's u-th copy
/// into it, phase parity u & 1 of its full mbarriers; the consumers give
/// the stage back on its empty ones.
class PrefillKernel::ProducerTma : public CopyPipeline {
public:
  using CopyPipeline::CopyPipeline;
  void prime(Value, Value, Value) override {
    // The producer sends every K/V tile: Q alone here, unless by TMA.
    if (!k.p.qTma) {
      NVVM::CpAsyncCommitGroupOp::create(*k.b);
      NVVM::CpAsyncWaitGroupOp::create(*k.b, 0);
    }
  }
  // Q K^T a tile ahead: tile 0's scores come from K stage 0 once it has
  // landed, which then goes back (with no tile, neither: the scores are
  // never read).
  void awaitFirstK() override {
    if (!k.p.qkAhead)
      return;
    anyTile = k.lt(lo, hi);
    k.ifThen(anyTile, [&] {
      Value barrier = k.fullBarrier(KVTiles::K, k.idx(0));
      k.waitTma(barrier, k.i32(0));
    });
  }
  void releaseFirstK() override {
    if (k.p.qkAhead)
      k.ifThen(anyTile, [&] { k.releaseStage(KVTiles::K, k.idx(0)); });
  }
  void await(const StepPosition &at) override {
    // Q K^T a tile ahead reads K_{j+1} in this step (K_j was read in the
    // last).
    vParity = k.parityOf(usesOf(at.iter));
    vBarrier = k.fullBarrier(KVTiles::V, at.stage);
    if (!k.p.qkAhead)
      k.waitTma(k.fullBarrier(KVTiles::K, at.stage), vParity);
    else
      ifNextTile(at, [&](Value, Value nextStage) {
        Value nextIter = k.add(at.iter, k.idx(1));
        Value nextUses = usesOf(nextIter);
        Value barrier = k.fullBarrier(KVTiles::K, nextStage);
        k.waitTma(barrier, k.parityOf(nextUses));
      });
  }
  void awaitValues() override { k.waitTma(vBarrier, vParity); }
  void release(const StepPosition &at) override {
    // The stages go back to the producer once this warp's products have
    // read them (their waits came first): V_j's, and K_j's or, a tile
    // ahead, K_{j+1}'s. A step that skipped P V still waits for V's
    // bytes: a copy in flight must land before the stage is refilled.
    k.waitTma(vBarrier, vParity);
    k.releaseStage(KVTiles::V, at.stage);
    if (!k.p.qkAhead)
      k.releaseStage(KVTiles::K, at.stage);
    else
      ifNextTile(at, [&](Value, Value nextStage) {
        k.releaseStage(KVTiles::K, nextStage);
      });
  }

private:
  Value vBarrier, vParity;
  Value anyTile;
};

std::unique_ptr<PrefillKernel::CopyPipeline>
PrefillKernel::makePipeline(Value lo, Value hi, int64_t posStep) {
  if (p.specialized)
    return std::make_unique<ProducerTma>(*this, lo, hi, posStep);
  if (p.tma)
    return std::make_unique<LeaderTma>(*this, lo, hi, posStep);
  if (p.staggered)
    return std::make_unique<StaggeredCopies>(*this, lo, hi, posStep);
  if (p.stages > 1)
    return std::make_unique<CpAsyncRing>(*this, lo, hi, posStep);
  return std::make_unique<SynchronousCopies>(*this, lo, hi, posStep);
}
