//===- ScoresInShared.cpp - the wmma tier's score stage -------------------===//
//
// WMMA fragments are opaque, so the scores go through shared memory:
//
//   attn.qk                warp w computes rows 16w..16w+15 of S, with its
//                          Q fragments loaded once; S goes to shared
//   attn.mask +            two threads per row read S, scale, mask, reduce
//   online_softmax         with a shuffle, write P (f16) and the rescale
//                          factor broadcast to a 16x16 tile per warp
//   attn.pv                acc *= rescale (elementwise on fragments), then
//                          acc += P.V; acc lives in registers
//   attn.finalize +        acc -> shared -> divide by l, cast, store; LSE
//   store_o / store_lse
//
//===----------------------------------------------------------------------===//

#include "codegen/nvptx/PrefillKernel.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include <cmath>

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::nvptx;

namespace {

class SharedScoreKernel : public PrefillKernel {
public:
  using PrefillKernel::PrefillKernel;

private:
  void makeScoreViews() override {
    ss = view(idx(p.sOff), {p.br, p.bc + kPadFloat}, b->getF32Type());
    ps = view(idx(p.pOff), {p.br, p.bc + kPadHalf}, p.elt);
    as = view(idx(p.aOff), {p.warps * 16, 16}, b->getF32Type());
  }
  /// m and l of the thread's row.
  SmallVector<Value> initialState() override {
    return {f32(-INFINITY), f32(0)};
  }
  SmallVector<Value> step(TileMMA &tiles, const Step &step) override;
  void epilogue(TileMMA &tiles, scf::ForOp loop, const WarpPlace &place,
                const Output &out) override;

  Value ss, ps, as; // score, probability and rescale tiles
};

} // namespace

/// One K/V tile of the wmma tier: S goes through shared memory, where two
/// threads per row apply the mask and the online softmax; P and the
/// rescale factors come back as fragments. Returns the next loop state.
SmallVector<Value> SharedScoreKernel::step(TileMMA &tiles, const Step &step) {
  // attn.qk: S[16w.., :] = Q K^T on WMMA, stored to shared memory.
  for (int64_t nb = 0; nb < p.bc / 16; ++nb) {
    Value c = tiles.zeroC();
    for (int64_t k = 0; k < p.d / 16; ++k) {
      Value kRow = idx(16 * nb), kCol = idx(16 * k);
      Value kf = tiles.loadB(step.ks, kRow, kCol, p.inputRow(p.d),
                             /*transpose=*/true);
      c = tiles.mma(step.qFrags[k], kf, c);
    }
    tiles.storeC(c, ss, step.warpRow, idx(16 * nb), p.bc + kPadFloat);
  }
  syncWarp();

  // attn.mask + attn.online_softmax: two threads per row, taking
  // alternate columns (fewer shared-memory bank conflicts than halves).
  Value r = arith::DivUIOp::create(*b, tid, idx(2));
  Value half = arith::RemUIOp::create(*b, tid, idx(2));
  auto column = [&](Value t) { return add(mul(t, idx(2)), half); };
  Value rowInTile = add(step.row0, r);
  Value query = arith::DivUIOp::create(*b, rowInTile, idx(p.group));
  // The row's scores stay in registers between the two passes (the
  // loops are unrolled here, so each value has its own register).
  SmallVector<Value> scores;
  Value rowMax = f32(-INFINITY);
  for (int64_t t = 0; t < p.bc / 2; ++t) {
    Value c = column(idx(t));
    Value key = add(step.j, c);
    Value dot = memref::LoadOp::create(*b, ss, ValueRange{r, c});
    Value s = hasScoreMod() ? modScore(dot, step.batch, step.kvHead,
                                       rowInTile, key, step.qLen, kvLen)
                            : scoreFromDot(dot);
    Value visible = this->visible(key, query, step.qLen, kvLen);
    if (hasMaskMod())
      visible = arith::AndIOp::create(
          *b, visible,
          modVisible(step.batch, step.kvHead, rowInTile, key, step.qLen,
                     kvLen));
    scores.push_back(arith::SelectOp::create(*b, visible, s, f32(-INFINITY)));
    rowMax = arith::MaxNumFOp::create(*b, rowMax, scores.back());
  }
  auto shuffle = [&](Value x) -> Value {
    return gpu::ShuffleOp::create(*b, x, 1, kWarp, gpu::ShuffleMode::XOR)
        .getShuffleResult();
  };
  rowMax = arith::MaxNumFOp::create(*b, rowMax, shuffle(rowMax));
  Value m = step.state[0], l = step.state[1];
  Value newMax = arith::MaxNumFOp::create(*b, m, rowMax);
  Value shift = safeMax(newMax);
  Value rescale =
      exp2(arith::SubFOp::create(*b, m, shift));
  Value rowSum = f32(0);
  for (int64_t t = 0; t < p.bc / 2; ++t) {
    Value prob = exp2(arith::SubFOp::create(*b, scores[t], shift));
    Value rounded = arith::TruncFOp::create(*b, p.elt, prob);
    Value col = column(idx(t));
    memref::StoreOp::create(*b, rounded, ps, ValueRange{r, col});
    rowSum = arith::AddFOp::create(*b, rowSum, prob);
  }
  rowSum = arith::AddFOp::create(*b, rowSum, shuffle(rowSum));
  Value newSum = arith::AddFOp::create(
      *b, arith::MulFOp::create(*b, l, rescale), rowSum);
  // The rescale factor, broadcast along its row of the warp's 16x16 tile.
  Value aRow = add(step.warpRow, arith::RemUIOp::create(*b, r, idx(16)));
  for (int64_t e = 0; e < 8; ++e) {
    Value halfCol = mul(half, idx(8));
    memref::StoreOp::create(*b, rescale, as,
                            ValueRange{aRow, add(halfCol, idx(e))});
  }
  syncWarp();

  // attn.pv: acc = acc * rescale + P V.
  Value alpha = tiles.loadC(as, step.warpRow, idx(0), 16);
  SmallVector<Value> pFrags;
  for (int64_t k = 0; k < p.bc / 16; ++k)
    pFrags.push_back(tiles.loadA(ps, step.warpRow, idx(16 * k), p.bc + kPadHalf));
  SmallVector<Value> results{newMax, newSum};
  for (int64_t nb = 0; nb < p.dv / 16; ++nb) {
    Value acc = tiles.mulC(step.state[2 + nb], alpha);
    for (int64_t k = 0; k < p.bc / 16; ++k) {
      Value vRow = idx(16 * k), vCol = idx(16 * nb);
      Value vf = tiles.loadB(step.vs, vRow, vCol, p.inputRow(p.dv),
                             /*transpose=*/false);
      acc = tiles.mma(pFrags[k], vf, acc);
    }
    results.push_back(acc);
  }
  return results;
}

/// The wmma tier's epilogue: every row's m and l and the accumulators go
/// to shared memory; then each thread normalizes 16-byte chunks of rows,
/// consecutive threads taking consecutive chunks (coalesced stores), and
/// the thread of a row's first chunk writes its LSE.
void SharedScoreKernel::epilogue(TileMMA &tiles, scf::ForOp loop,
                                 const WarpPlace &place, const Output &out) {
  Value warpRow = place.warpRow;
  Value ml = view(idx(p.mlOff), {p.br, 2}, b->getF32Type());
  {
    // Threads 2r and 2r + 1 share row r's m and l.
    Value lane2 = arith::RemUIOp::create(*b, tid, idx(2));
    Value even = arith::CmpIOp::create(*b, arith::CmpIPredicate::eq, lane2,
                                       idx(0));
    auto writer = scf::IfOp::create(*b, even, /*withElseRegion=*/false);
    OpBuilder::InsertionGuard g(*b);
    b->setInsertionPointToStart(writer.thenBlock());
    Value row = arith::DivUIOp::create(*b, tid, idx(2));
    memref::StoreOp::create(*b, loop.getResult(0), ml, ValueRange{row, idx(0)});
    memref::StoreOp::create(*b, loop.getResult(1), ml, ValueRange{row, idx(1)});
  }
  gpu::BarrierOp::create(*b); // the staging tile reuses every shared tile
  Value os = view(idx(p.oOff), {p.br, p.dv + kPadFloat}, b->getF32Type());
  for (int64_t nb = 0; nb < p.dv / 16; ++nb)
    tiles.storeC(loop.getResult(2 + nb), os, warpRow, idx(16 * nb),
                 p.dv + kPadFloat);
  gpu::BarrierOp::create(*b); // a row's chunks span warps
  Value o = map.lookup(n.storeO.getO());
  auto f32x8 = VectorType::get({8}, b->getF32Type());
  forEachOutputChunk(tid, p.threads, idx(0), p.br, 8, out, [&](Value r, Value col) {
    SmallVector<Value> at = outputIndices(out, r);
    Value m = memref::LoadOp::create(*b, ml, ValueRange{r, idx(0)});
    Value l = memref::LoadOp::create(*b, ml, ValueRange{r, idx(1)});
    RowNormal normal = normalizeRow(m, l, [&] { return at[1]; });
    Value inv = normal.factor;
    Value x = vector::LoadOp::create(*b, f32x8, os, ValueRange{r, col});
    x = arith::MulFOp::create(*b, x,
                              vector::BroadcastOp::create(*b, f32x8, inv));
    if (!p.outElt.isF32())
      x = arith::TruncFOp::create(*b, VectorType::get({8}, p.outElt), x);
    at.push_back(col);
    // O rows are 16-byte aligned (the runtime checks it).
    vector::StoreOp::create(*b, x, o, at, /*nontemporal=*/false,
                            llvm::Align(16));
    if (n.storeLse) {
      auto first = scf::IfOp::create(
          *b, arith::CmpIOp::create(*b, arith::CmpIPredicate::eq, col, idx(0)),
          /*withElseRegion=*/false);
      b->setInsertionPointToStart(first.thenBlock());
      at.pop_back();
      memref::StoreOp::create(*b, logSumExp(normal.max, normal.sum),
                              map.lookup(n.storeLse.getLse()), at);
    }
  });
}

std::unique_ptr<PrefillKernel>
nvptx::createSharedScoreKernel(L1Nest nest, const PrefillPlan &p) {
  return std::make_unique<SharedScoreKernel>(nest, p);
}
