//===- ScoresInRegisters.cpp - the mma tier's score stage -----------------===//
//
// mma.sync's accumulator layout is known (TileMMA.h), so S, P and the
// online softmax stay in registers: each thread scales, masks and
// exponentiates its own elements, row maxima and sums take quad shuffles,
// P is repacked into A operands of P V without touching shared memory, and
// the rescale multiplies the accumulators in place. Warps that split a
// tile's keys (schedule `warps`) merge their states through shared memory
// at the end; the epilogue normalizes O in registers and stages it, warp
// by warp, for 16-byte stores.
//
// The two products, S = Q K^T and acc + P V, come from one provider that
// the stage never asks about: mma.sync on each warp's 16-row tiles, or
// wgmma on its warpgroup's 64 rows (whose accumulators are mma.sync's C
// fragments warp by warp, WarpgroupMMA.h), which may also run Q K^T a
// tile ahead.
//
//===----------------------------------------------------------------------===//

#include "codegen/nvptx/AttnNVDialect.h"
#include "codegen/nvptx/PrefillKernel.h"
#include "codegen/nvptx/WarpgroupMMA.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include <cmath>

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::nvptx;

namespace {

class RegisterScoreKernel : public PrefillKernel {
public:
  using PrefillKernel::PrefillKernel;

private:
  /// m, m, l, l of the thread's two rows, per m-tile.
  SmallVector<Value> initialState() override {
    SmallVector<Value> state;
    for (int64_t mt = 0; mt < p.mTiles; ++mt)
      state.append({f32(-INFINITY), f32(-INFINITY), f32(0), f32(0)});
    return state;
  }
  void makeScoreViews() override;
  /// Q K^T a tile ahead: tile 0's scores (stage 0) before the loop.
  SmallVector<Value> carriedScores() override;
  /// The first row of this thread's warpgroup.
  Value groupRow(Value thread) {
    Value group = arith::DivUIOp::create(*b, thread, idx(kWarpgroup));
    return mul(group, idx(64));
  }
  SmallVector<Value> step(TileMMA &tiles, const Step &step) override;
  void epilogue(TileMMA &tiles, scf::ForOp loop, const WarpPlace &place,
                const Output &out) override;

  std::pair<Value, Value> warpQueries(const Step &step) {
    return queryRange(add(step.row0, step.warpRow), 16 * p.mTiles);
  }
  std::pair<Value, Value> blockQueries(const Step &step) {
    return queryRange(step.row0, p.br);
  }
  /// Whether a warp skips K/V tiles its rows cannot see (masks).
  /// Measured on an H100: 5-7% faster for causal D64 at S1k-4k, 9-13% for
  /// causal D128 on one m-tile per warp (B1 H8 S1024, 64x64 and 8-warp
  /// tiles); at D128 with two m-tiles, which fill the registers, the state
  /// kept live across the branch raised spills from 12 to 96 bytes and
  /// cost 1-3%.
  bool warpSkips();
  SmallVector<Value> softmaxStep(MmaSyncTileMMA &tiles, const Step &step);
  /// The scores of the dots, one tile per m-tile and 16 keys: a
  /// score_mod's attn_nv.score_tile per m-tile, the raw dots where `c`
  /// folds into the exponent, else the scale (and soft-cap) per element.
  SmallVector<Value> scoresFromDots(MmaSyncTileMMA &tiles, const Step &step,
                                    ArrayRef<SmallVector<Value>> raw,
                                    std::optional<double> c);
  /// The scores with attn.mask applied where the tile needs it.
  SmallVector<Value> maskScores(MmaSyncTileMMA &tiles, const Step &step,
                                ArrayRef<Value> flat);
  /// The exchange tile and the indices of 16-byte chunk `chunk` of this
  /// thread's slot (row warp and lane) in K/V group `kvGroup`'s part.
  std::pair<Value, SmallVector<Value>> exchangeSlot(Value kvGroup,
                                                    Value rowWarp,
                                                    int64_t chunk);
  /// Writes this thread's `state` (softmax state, then accumulators) to
  /// its slot of K/V group `kvGroup` (not the first).
  void shareState(ValueRange state, Value kvGroup, Value rowWarp);
  /// The state group `kvGroup`'s thread in this thread's place wrote.
  SmallVector<Value> sharedState(int64_t kvGroup, Value rowWarp);
  /// The state of the union of two groups' keys.
  SmallVector<Value> mergeState(MmaSyncTileMMA &tiles, ValueRange mine,
                                ValueRange theirs);
  void storeFromRegisters(MmaSyncTileMMA &tiles, ValueRange state,
                          Value warpRow, const Output &out, bool kvDone);
  void storeSplitState(MmaSyncTileMMA &tiles, ValueRange state,
                       Value warpRow, const Output &out);
  /// Where warps split Dv: O written from registers at the warp's
  /// columns.
  void storeColumns(MmaSyncTileMMA &tiles, ValueRange state, Value warpRow,
                    const Output &out);
  /// The epilogue's store: O and the LSE, or the split-K form's state.
  void store(MmaSyncTileMMA &tiles, ValueRange state, Value warpRow,
             const Output &out, bool kvDone) {
    if (p.splitKV)
      storeSplitState(tiles, state, warpRow, out);
    else if (p.dvGroups > 1)
      storeColumns(tiles, state, warpRow, out);
    else
      storeFromRegisters(tiles, state, warpRow, out, kvDone);
  }
  /// The accumulator tiles' elements, per m-tile: acc[nb][e] of 16-column
  /// block nb (mma.sync's C layout: e 2h, 2h + 1 of row half h in column
  /// half 0, e 4 + 2h, 5 + 2h in column half 1).
  SmallVector<SmallVector<Value>> accElements(ValueRange state, int64_t mt);

  /// The products' provider (below), made with the score views.
  class Products;
  class WarpTileProducts;
  class WarpgroupProducts;
  std::unique_ptr<Products> products;
};

/// S = Q K^T of a step's tile and acc + P V, on mma.sync's C fragments
/// (`tiles` gives their layout) whatever computes them.
class RegisterScoreKernel::Products {
public:
  explicit Products(RegisterScoreKernel &k) : k(k) {}
  virtual ~Products() = default;
  /// What the loop carries in after the accumulators: where Q K^T runs a
  /// tile ahead, tile 0's scores.
  virtual SmallVector<Value> carriedScores() { return {}; }
  /// The step's scores, raw[m-tile][16 keys] accumulators.
  virtual SmallVector<SmallVector<Value>>
  scores(MmaSyncTileMMA &tiles, const Step &step) = 0;
  /// `acc` + P V for P as A fragments pFrags[m-tile][16 keys], then what
  /// the loop carries on (carriedScores' next values).
  virtual SmallVector<Value> accumulate(MmaSyncTileMMA &tiles,
                                        const Step &step,
                                        ArrayRef<SmallVector<Value>> pFrags,
                                        SmallVector<Value> acc) = 0;
  /// Whether one warp may skip a tile while the others run it.
  virtual bool warpsAlone() const { return true; }

protected:
  RegisterScoreKernel &k;
};

/// mma.sync: each warp's m-tiles (16 rows each) against the tile's keys,
/// 16x16x16 at a time. Q's fragments stay in registers for one m-tile and
/// are re-read from shared memory per tile for more (registers go to the
/// accumulators), so each K/V fragment feeds every m-tile.
class RegisterScoreKernel::WarpTileProducts : public Products {
public:
  using Products::Products;
  SmallVector<SmallVector<Value>> scores(MmaSyncTileMMA &tiles,
                                         const Step &step) override;
  SmallVector<Value> accumulate(MmaSyncTileMMA &tiles, const Step &step,
                                ArrayRef<SmallVector<Value>> pFrags,
                                SmallVector<Value> acc) override;
};

/// wgmma: the warpgroup's 64 rows against the tile's keys in one chain,
/// A (Q) and B (K) from shared memory; P V with P in registers. A tile
/// ahead (p.qkAhead), a step's scores come from the last step (or from
/// before the loop) and the next tile's chain runs under this tile's
/// softmax: its K is in the next stage; past the last tile it reads a
/// stale stage and its scores are dropped.
class RegisterScoreKernel::WarpgroupProducts : public Products {
public:
  WarpgroupProducts(RegisterScoreKernel &k)
      : Products(k), mma(*k.b, k.smem, k.p.elt) {}
  SmallVector<Value> carriedScores() override;
  SmallVector<SmallVector<Value>> scores(MmaSyncTileMMA &tiles,
                                         const Step &step) override;
  SmallVector<Value> accumulate(MmaSyncTileMMA &tiles, const Step &step,
                                ArrayRef<SmallVector<Value>> pFrags,
                                SmallVector<Value> acc) override;
  /// A warpgroup's collective: its warps run every product.
  bool warpsAlone() const override { return false; }

private:
  WarpgroupMMA mma;
  /// Issued by scores a tile ahead, settled by accumulate.
  SmallVector<Value> nextScores;
};

} // namespace

SmallVector<Value> RegisterScoreKernel::step(TileMMA &tiles,
                                             const Step &step) {
  // The pass pairs this score stage with the mma.sync provider.
  auto &mma = static_cast<MmaSyncTileMMA &>(tiles);
  if (!warpSkips())
    return softmaxStep(mma, step);
  // A warp whose rows see no key of the tile (past the causal diagonal,
  // before a window) keeps its state: the step would add nothing. The
  // warps of the block's last rows still run it.
  auto [firstQuery, lastQuery] = warpQueries(step);
  Value some = anyVisible(step.j, add(step.j, idx(p.bcw - 1)), firstQuery,
                          lastQuery, step.qLen, kvLen);
  auto run = scf::IfOp::create(*b, step.state.getTypes(), some,
                               /*withElseRegion=*/true);
  {
    OpBuilder::InsertionGuard g(*b);
    b->setInsertionPointToStart(run.thenBlock());
    scf::YieldOp::create(*b, softmaxStep(mma, step));
    b->setInsertionPointToStart(run.elseBlock());
    scf::YieldOp::create(*b, step.state);
  }
  return run.getResults();
}

void RegisterScoreKernel::epilogue(TileMMA &tiles, scf::ForOp loop,
                                   const WarpPlace &place,
                                   const Output &out) {
  auto &mma = static_cast<MmaSyncTileMMA &>(tiles);
  if (p.kvGroups == 1)
    return store(mma, loop.getResults(), place.warpRow, out,
                 /*kvDone=*/false);
  // The first group merges the others' states into its own and stores.
  computeBarrier(); // every warp is done with K/V and Q
  Value kvGroup = place.kvGroup;
  auto give = scf::IfOp::create(
      *b,
      arith::CmpIOp::create(*b, arith::CmpIPredicate::ne, kvGroup, idx(0)),
      /*withElseRegion=*/false);
  {
    OpBuilder::InsertionGuard g(*b);
    b->setInsertionPointToStart(give.thenBlock());
    shareState(loop.getResults(), kvGroup, place.rowWarp);
  }
  computeBarrier();
  auto first = scf::IfOp::create(
      *b,
      arith::CmpIOp::create(*b, arith::CmpIPredicate::eq, kvGroup, idx(0)),
      /*withElseRegion=*/false);
  OpBuilder::InsertionGuard g(*b);
  b->setInsertionPointToStart(first.thenBlock());
  SmallVector<Value> state(loop.getResults());
  for (int64_t from = 1; from < p.kvGroups; ++from)
    state = mergeState(mma, state, sharedState(from, place.rowWarp));
  store(mma, state, place.warpRow, out, /*kvDone=*/true);
}

/// One K/V tile of the mma tier: S = Q K^T stays in mma.sync accumulators;
/// each thread scales, masks and exponentiates its own elements (rows g and
/// g + 8 of its warp's 16, two columns per 8 keys), the row maxima take two
/// quad shuffles, and P goes straight into the A operands of P V. l stays a
/// per-thread partial sum over the thread's columns until the loop ends.
SmallVector<Value> RegisterScoreKernel::softmaxStep(MmaSyncTileMMA &tiles,
                                                    const Step &step) {
  const int64_t nb16 = p.bcw / 16, dv16 = p.dvw / 16;
  SmallVector<Value> accs(step.state.slice(4 * p.mTiles, p.mTiles * dv16));
  // A quantized cache's V scale per token weighs each key's p in P V.
  SmallVector<Value> weights;
  for (int64_t nb = 0;
       p.kvBytes && isTokenScale(n.loadV.getScale()) && nb < nb16; ++nb) {
    Value first = add(step.j, idx(16 * nb));
    weights.push_back(tokenScaleTile(n.loadV, first, tiles.laneColumn()));
  }
  SmallVector<SmallVector<Value>> raw = products->scores(tiles, step);
  // Without a soft-cap the score is c * dot with c > 0 (the verifier's
  // scale > 0), so the mask and the row max work on raw dots and c folds
  // into p = 2^(c * dot - m), one FMA before the ex2.
  std::optional<double> c = linearScoreScale();
  SmallVector<Value> masked =
      maskScores(tiles, step, scoresFromDots(tiles, step, raw, c));
  // The online softmax, one attn_nv.online_softmax per m-tile: a lazy
  // rescale, a row's reference m moving (and its l and acc rescaled) only
  // when the tile's maximum passes it by more than kRescaleSlack. Past
  // the first tiles most skip the rescale's Dv/2 multiplies per row.
  SmallVector<Value> results, alphas;
  SmallVector<SmallVector<Value>> pFrags(p.mTiles);
  Value anyMoves;
  FloatAttr scale = c ? b->getF64FloatAttr(*c) : FloatAttr();
  for (int64_t mt = 0; mt < p.mTiles; ++mt) {
    ValueRange state = step.state.slice(4 * mt, 4);
    auto softmax = nv::OnlineSoftmaxOp::create(
        *b, ValueRange(masked).slice(mt * nb16, nb16), state[0], state[1],
        state[2], state[3], anyMoves, weights, scale,
        TypeAttr::get(tiles.inputType()));
    pFrags[mt] = llvm::to_vector_of<Value>(softmax.getP());
    results.append({softmax.getNewMTop(), softmax.getNewMBottom(),
                    softmax.getNewLTop(), softmax.getNewLBottom()});
    alphas.push_back(softmax.getAlpha());
    anyMoves = softmax.getMoved();
  }
  // attn.pv: acc = acc * rescale + P V, the rescale per row in registers
  // and only in threads whose rows moved.
  auto rescaling = scf::IfOp::create(*b, ValueRange(accs).getTypes(),
                                     anyMoves, /*withElseRegion=*/true);
  {
    OpBuilder::InsertionGuard g(*b);
    b->setInsertionPointToStart(rescaling.thenBlock());
    SmallVector<Value> scaled;
    for (auto [i, acc] : llvm::enumerate(accs))
      scaled.push_back(tiles.mulC(acc, alphas[i / dv16]));
    scf::YieldOp::create(*b, scaled);
    b->setInsertionPointToStart(rescaling.elseBlock());
    scf::YieldOp::create(*b, accs);
  }
  SmallVector<Value> out(rescaling.getResults());
  awaitValues();
  results.append(products->accumulate(tiles, step, pFrags, out));
  return results;
}

SmallVector<Value> RegisterScoreKernel::carriedScores() {
  return products->carriedScores();
}

bool RegisterScoreKernel::warpSkips() {
  return !n.mask.getMask().isNone() && products->warpsAlone() &&
         (p.mTiles == 1 || std::max(p.d, p.dv) <= 64);
}

void RegisterScoreKernel::makeScoreViews() {
  if (p.warpgroups())
    products = std::make_unique<WarpgroupProducts>(*this);
  else
    products = std::make_unique<WarpTileProducts>(*this);
}

SmallVector<SmallVector<Value>>
RegisterScoreKernel::WarpTileProducts::scores(MmaSyncTileMMA &tiles,
                                              const Step &step) {
  const PrefillPlan &p = k.p;
  const int64_t nb16 = p.bcw / 16;
  SmallVector<SmallVector<Value>> raw(p.mTiles, SmallVector<Value>(nb16));
  for (int64_t mt = 0; mt < p.mTiles; ++mt)
    for (int64_t nb = 0; nb < nb16; ++nb)
      raw[mt][nb] = tiles.zeroC();
  if (p.kvBytes) {
    // A quantized cache: each 16 keys' K decoded into fragments (D's
    // columns in loadQ's order), one m-tile; the dots times k_scale.
    // A scale per token: its keys' scales loaded before the products.
    Value kScale = k.kScale ? Value(vector::BroadcastOp::create(
                                  *k.b, raw[0][0].getType(), k.kScale))
                            : Value();
    const bool perToken = isTokenScale(k.n.loadK.getScale());
    SmallVector<Value> tokenScales;
    for (int64_t nb = 0; perToken && nb < nb16; ++nb) {
      Value first = k.add(step.j, k.idx(16 * nb));
      tokenScales.push_back(
          k.tokenScaleTile(k.n.loadK, first, tiles.laneColumn()));
    }
    for (int64_t nb = 0; nb < nb16; ++nb) {
      SmallVector<Value> kf =
          k.byteFragments->loadK(step.ks, k.idx(16 * nb), p.d);
      for (int64_t kk = 0; kk < p.d / 16; ++kk)
        raw[0][nb] = tiles.mma(step.qFrags[kk], kf[kk], raw[0][nb]);
      Value scale = perToken ? tokenScales[nb] : kScale;
      if (scale)
        raw[0][nb] = arith::MulFOp::create(*k.b, raw[0][nb], scale);
    }
    return raw;
  }
  // The fragments of 16 columns of D, Q per m-tile then K per 16 keys, all
  // loaded before their mma.sync (measured: loading the next columns'
  // before this column's products as well was no faster, 337 against 346
  // TFLOP/s at D128 S4096).
  for (int64_t kk = 0; kk < p.d / 16; ++kk) {
    SmallVector<Value> f;
    for (int64_t mt = 0; mt < p.mTiles; ++mt) {
      if (p.qInRegisters()) {
        f.push_back(step.qFrags[kk]);
        continue;
      }
      Value qRow = k.add(step.warpRow, k.idx(16 * mt));
      Value qCol = k.idx(16 * kk);
      f.push_back(tiles.loadA(step.qs, qRow, qCol, p.inputRow(p.d)));
    }
    for (int64_t nb = 0; nb < nb16; ++nb) {
      Value kRow = k.idx(16 * nb), kCol = k.idx(16 * kk);
      f.push_back(
          tiles.loadB(step.ks, kRow, kCol, p.inputRow(p.d), /*transpose=*/true));
    }
    for (int64_t nb = 0; nb < nb16; ++nb)
      for (int64_t mt = 0; mt < p.mTiles; ++mt)
        raw[mt][nb] = tiles.mma(f[mt], f[p.mTiles + nb], raw[mt][nb]);
  }
  return raw;
}

SmallVector<Value> RegisterScoreKernel::WarpTileProducts::accumulate(
    MmaSyncTileMMA &tiles, const Step &step,
    ArrayRef<SmallVector<Value>> pFrags, SmallVector<Value> acc) {
  const PrefillPlan &p = k.p;
  const int64_t nb16 = p.bcw / 16, dv16 = p.dvw / 16;
  if (p.kvBytes) {
    // A quantized cache: each 16 keys' V decoded into fragments, O's
    // columns in ByteFragments::valueColumn's order.
    for (int64_t kk = 0; kk < nb16; ++kk) {
      SmallVector<Value> vf =
          k.byteFragments->loadV(step.vs, k.idx(16 * kk), p.dv);
      for (int64_t nb = 0; nb < dv16; ++nb)
        acc[nb] = tiles.mma(pFrags[0][kk], vf[nb], acc[nb]);
    }
    return acc;
  }
  for (int64_t nb = 0; nb < dv16; ++nb)
    for (int64_t kk = 0; kk < nb16; ++kk) {
      // The warp's own columns where warps split Dv.
      Value vRow = k.idx(16 * kk),
            vCol = p.dvGroups > 1 ? k.add(k.dvColumn, k.idx(16 * nb))
                                  : k.idx(16 * nb);
      Value vf = tiles.loadB(step.vs, vRow, vCol, p.vRowLength(),
                             /*transpose=*/false);
      for (int64_t mt = 0; mt < p.mTiles; ++mt)
        acc[mt * dv16 + nb] = tiles.mma(pFrags[mt][kk], vf, acc[mt * dv16 + nb]);
    }
  return acc;
}

SmallVector<Value> RegisterScoreKernel::WarpgroupProducts::carriedScores() {
  const PrefillPlan &p = k.p;
  if (!p.qkAhead)
    return {};
  Value qBase = k.idx(p.qOff);
  Value rowBase = k.groupRow(k.tid);
  Value kBase = k.idx(p.kOff);
  return mma.productKMajor(qBase, p.br, rowBase, kBase, p.bc, p.d);
}

SmallVector<SmallVector<Value>>
RegisterScoreKernel::WarpgroupProducts::scores(MmaSyncTileMMA &,
                                               const Step &step) {
  const PrefillPlan &p = k.p;
  const int64_t dv16 = p.dvw / 16;
  Value qBase = k.idx(p.qOff);
  if (!p.qkAhead)
    return {mma.productKMajor(qBase, p.br, k.groupRow(k.tid), step.kOffset,
                              p.bc, p.d)};
  SmallVector<Value> carried(
      step.state.drop_front(4 * p.mTiles + p.mTiles * dv16));
  nextScores = mma.issueKMajor(qBase, p.br, k.groupRow(k.tid),
                               step.nextKOffset, p.bc, p.d);
  // Ping-pong: the turn that P V opened in the last step ends once the
  // next tile's Q K^T is issued.
  if (p.pingPong)
    k.endTurn();
  return {carried};
}

SmallVector<Value> RegisterScoreKernel::WarpgroupProducts::accumulate(
    MmaSyncTileMMA &, const Step &step, ArrayRef<SmallVector<Value>> pFrags,
    SmallVector<Value> acc) {
  const PrefillPlan &p = k.p;
  if (!p.qkAhead)
    return mma.productRegisters(pFrags[0], step.vOffset, p.dv, p.bc, acc);
  // One wait for both chains: P V and the next tile's Q K^T.
  SmallVector<Value> running = mma.productRegisters(
      pFrags[0], step.vOffset, p.dv, p.bc, acc, /*wait=*/false);
  running.append(nextScores);
  return mma.settle(running);
}

SmallVector<Value>
RegisterScoreKernel::scoresFromDots(MmaSyncTileMMA &tiles, const Step &step,
                                    ArrayRef<SmallVector<Value>> raw,
                                    std::optional<double> c) {
  const int64_t nb16 = p.bcw / 16;
  SmallVector<Value> flat;
  if (hasScoreMod()) {
    // One attn_nv.score_tile per m-tile, the region cloned into it with
    // the captures.
    ScoreTransform transform = scoreTransform();
    FloatAttr softcap =
        transform.softcap ? b->getF64FloatAttr(*transform.softcap)
                          : FloatAttr();
    for (int64_t mt = 0; mt < p.mTiles; ++mt) {
      auto scores = nv::ScoreTileOp::create(
          *b, raw[mt], step.row0, step.warpRow, tiles.laneRow(), step.j,
          tiles.laneColumn(), step.qLen, kvLen, step.batch, step.kvHead,
          mappedCaptures(), b->getF64FloatAttr(transform.scale), softcap,
          b->getI64IntegerAttr(p.group), b->getI64IntegerAttr(16 * mt));
      IRMapping none;
      n.qk.getScoreMod().cloneInto(&scores.getScoreMod(), none);
      llvm::append_range(flat, scores.getScores());
    }
    return flat;
  }
  for (int64_t mt = 0; mt < p.mTiles; ++mt)
    for (int64_t nb = 0; nb < nb16; ++nb) {
      SmallVector<Value> e;
      for (int64_t i = 0; i < 8; ++i) {
        Value dot = vector::ExtractOp::create(*b, raw[mt][nb],
                                              ArrayRef<int64_t>{i});
        e.push_back(c ? dot : scoreFromDot(dot));
      }
      flat.push_back(
          vector::FromElementsOp::create(*b, raw[mt][nb].getType(), e));
    }
  return flat;
}

SmallVector<Value> RegisterScoreKernel::maskScores(MmaSyncTileMMA &tiles,
                                                   const Step &step,
                                                   ArrayRef<Value> flat) {
  const int64_t nb16 = p.bcw / 16;
  // attn.mask only where the tile crosses a mask edge or the end of K/V
  // for the rows of the warp (where warps skip tiles, below) or block:
  // decided once (the branch is uniform), interior tiles skip it.
  auto [firstQuery, lastQuery] = warpSkips() ? warpQueries(step)
                                             : blockQueries(step);
  // A mask_mod can hide any key: every tile takes the masked path, but
  // for the tiles of blocks a block mask says are full.
  Value interior =
      step.full ? step.full
      : hasMaskMod()
          ? Value(arith::ConstantIntOp::create(*b, 0, 1))
          : allVisible(step.j, add(step.j, idx(p.bcw - 1)), firstQuery,
                       lastQuery, step.qLen, kvLen);
  auto masked = scf::IfOp::create(*b, ValueRange(flat).getTypes(), interior,
                                  /*withElseRegion=*/true);
  {
    OpBuilder::InsertionGuard g(*b);
    b->setInsertionPointToStart(masked.thenBlock());
    scf::YieldOp::create(*b, flat);
    b->setInsertionPointToStart(masked.elseBlock());
    SmallVector<Value> maskedTiles;
    for (int64_t mt = 0; mt < p.mTiles; ++mt) {
      Value rowTop = add(step.row0, add(step.warpRow,
                                        add(tiles.laneRow(), idx(16 * mt))));
      // One attn_nv.mask_tile per m-tile: the built-in mask, and a
      // mask_mod's region (cloned into the op with its captures).
      ValueRange scores = ValueRange(flat).slice(mt * nb16, nb16);
      Value batch, kvHead;
      SmallVector<Value> captures;
      if (hasMaskMod()) {
        batch = step.batch;
        kvHead = step.kvHead;
        captures = mappedCaptures();
      }
      auto mask = nv::MaskTileOp::create(
          *b, scores, rowTop, step.j, tiles.laneColumn(), step.qLen, kvLen,
          batch, kvHead, captures, n.mask.getMask(),
          b->getI64IntegerAttr(p.group));
      if (hasMaskMod()) {
        IRMapping none;
        n.mask.getMaskMod().cloneInto(&mask.getMaskMod(), none);
      }
      llvm::append_range(maskedTiles, mask.getMasked());
    }
    scf::YieldOp::create(*b, maskedTiles);
  }
  return llvm::to_vector_of<Value>(masked.getResults());
}
std::pair<Value, SmallVector<Value>>
RegisterScoreKernel::exchangeSlot(Value kvGroup, Value rowWarp, int64_t chunk) {
  // [group - 1][row warp][chunk][lane][4]: a warp's 16-byte chunks are 512
  // consecutive bytes (no bank conflicts).
  Value xs = view(idx(p.xOff),
                  {p.kvGroups - 1, p.rowWarps, p.exchangeChunks(), kWarp, 4},
                  b->getF32Type());
  SmallVector<Value> at{arith::SubIOp::create(*b, kvGroup, idx(1)), rowWarp,
                        idx(chunk),
                        arith::RemUIOp::create(*b, tid, idx(kWarp)), idx(0)};
  return {xs, at};
}
// A state's chunks: m, m, l, l of each m-tile, then each accumulator in two.
void RegisterScoreKernel::shareState(ValueRange state, Value kvGroup, Value rowWarp) {
  auto f32x4 = VectorType::get({4}, b->getF32Type());
  auto put = [&](int64_t chunk, ValueRange four) {
    auto [xs, at] = exchangeSlot(kvGroup, rowWarp, chunk);
    vector::StoreOp::create(*b, vector::FromElementsOp::create(*b, f32x4, four),
                            xs, at, /*nontemporal=*/false, llvm::Align(16));
  };
  for (int64_t mt = 0; mt < p.mTiles; ++mt)
    put(mt, state.slice(4 * mt, 4));
  for (int64_t a = 0; a < p.mTiles * (p.dvw / 16); ++a)
    for (int64_t half = 0; half < 2; ++half) {
      SmallVector<Value> four;
      for (int64_t e = 0; e < 4; ++e)
        four.push_back(vector::ExtractOp::create(
            *b, state[4 * p.mTiles + a], ArrayRef<int64_t>{4 * half + e}));
      put(p.mTiles + 2 * a + half, four);
    }
}
SmallVector<Value> RegisterScoreKernel::sharedState(int64_t kvGroup, Value rowWarp) {
  auto load = [&](int64_t c) {
    auto [xs, at] = exchangeSlot(idx(kvGroup), rowWarp, c);
    Value v = vector::LoadOp::create(*b, VectorType::get({4}, b->getF32Type()),
                                     xs, at, /*nontemporal=*/false,
                                     llvm::Align(16));
    SmallVector<Value> e;
    for (int64_t i = 0; i < 4; ++i)
      e.push_back(vector::ExtractOp::create(*b, v, ArrayRef<int64_t>{i}));
    return e;
  };
  SmallVector<Value> state;
  for (int64_t mt = 0; mt < p.mTiles; ++mt)
    state.append(load(mt));
  for (int64_t a = 0; a < p.mTiles * (p.dvw / 16); ++a) {
    SmallVector<Value> e = load(p.mTiles + 2 * a);
    e.append(load(p.mTiles + 2 * a + 1));
    state.push_back(vector::FromElementsOp::create(
        *b, VectorType::get({8}, b->getF32Type()), e));
  }
  return state;
}
SmallVector<Value> RegisterScoreKernel::mergeState(MmaSyncTileMMA &tiles,
                                          ValueRange mine,
                                          ValueRange theirs) {
  // Per row: m = max of both (the shift of an empty pair is 0, and its
  // factors 0), l and acc rescaled to it and summed. A thread's l is a
  // partial sum over its own columns either way.
  SmallVector<Value> merged(mine.size());
  const int64_t dv16 = p.dvw / 16;
  KernelF32Exprs exprs{{*b}};
  KernelSoftmaxRules rules(exprs);
  for (int64_t mt = 0; mt < p.mTiles; ++mt) {
    Value mineScale[2], theirScale[2];
    for (int64_t h = 0; h < 2; ++h) {
      Value m0 = mine[4 * mt + h], m1 = theirs[4 * mt + h];
      Value m = arith::MaxNumFOp::create(*b, m0, m1);
      Value shift = rules.shift(m);
      mineScale[h] = rules.weight(m0, shift);
      theirScale[h] = rules.weight(m1, shift);
      merged[4 * mt + h] = m;
      Value lMine =
          arith::MulFOp::create(*b, mine[4 * mt + 2 + h], mineScale[h]);
      Value lTheirs =
          arith::MulFOp::create(*b, theirs[4 * mt + 2 + h], theirScale[h]);
      merged[4 * mt + 2 + h] = arith::AddFOp::create(*b, lMine, lTheirs);
    }
    Value a = tiles.rowBroadcast(mineScale[0], mineScale[1]);
    Value t = tiles.rowBroadcast(theirScale[0], theirScale[1]);
    for (int64_t nb = 0; nb < dv16; ++nb) {
      int64_t i = 4 * p.mTiles + mt * dv16 + nb;
      Value accMine = tiles.mulC(mine[i], a);
      Value accTheirs = tiles.mulC(theirs[i], t);
      merged[i] = arith::AddFOp::create(*b, accMine, accTheirs);
    }
  }
  return merged;
}
/// The mma tier's epilogue, warp by warp with no block barrier when O fits
/// over the warp's Q rows: each thread normalizes its two rows per m-tile
/// in registers and writes them, rounded to the output type, into the
/// staging tile (swizzled like Q, no bank conflicts); the warp then copies
/// its rows out in 16-byte chunks, consecutive lanes taking consecutive
/// chunks (coalesced stores). The lane of a row's first column writes its
/// LSE.
void RegisterScoreKernel::storeFromRegisters(MmaSyncTileMMA &tiles, ValueRange state,
                                    Value warpRow, const Output &out,
                                    bool kvDone) {
  const int64_t nState = 4 * p.mTiles, dv16 = p.dvw / 16;
  Value lse = n.storeLse ? map.lookup(n.storeLse.getLse()) : Value();
  // O = acc * inverse (1 / l of the thread's rows, 0 for empty; with
  // sinks r / l' of foldSink).
  SmallVector<Value> inverse;
  for (int64_t mt = 0; mt < p.mTiles; ++mt)
    for (int64_t h = 0; h < 2; ++h) {
      // l summed over the quad that holds the row's columns.
      Value l = xorReduce(state[4 * mt + 2 + h], {1, 2},
                          /*isMax=*/false);
      RowNormal normal = normalizeRow(state[4 * mt + h], l, [&] {
        Value rowInTile = add(tiles.laneRow(), idx(16 * mt + 8 * h));
        Value row = add(warpRow, rowInTile);
        return outputIndices(out, row)[1];
      });
      // A quantized cache's v_scale multiplies O (not the LSE).
      inverse.push_back(vScale
                            ? arith::MulFOp::create(*b, normal.factor, vScale)
                            : normal.factor);
      if (!lse)
        continue;
      Value row = add(warpRow, add(tiles.laneRow(), idx(16 * mt + 8 * h)));
      Value firstColumn = arith::CmpIOp::create(
          *b, arith::CmpIPredicate::eq, tiles.laneColumn(), idx(0));
      Value inside = lt(add(out.row0, row), out.rows);
      Value writes = arith::AndIOp::create(*b, firstColumn, inside);
      auto writer = scf::IfOp::create(*b, writes, /*withElseRegion=*/false);
      OpBuilder::InsertionGuard g(*b);
      b->setInsertionPointToStart(writer.thenBlock());
      Value value = logSumExp(normal.max, normal.sum);
      SmallVector<Value> at = outputIndices(out, row);
      memref::StoreOp::create(*b, value, lse, at);
    }

  // Stage: the warp's last reads of Q (and, without overQ, every warp's of
  // K/V, unless a barrier said so already) come before the first write.
  if (p.overQ || kvDone)
    syncWarp();
  else
    computeBarrier();
  const bool swizzled = p.oTma || (p.outElt.getIntOrFloatBitWidth() == 16 &&
                                   isSwizzledWidth(p.oRow));
  Value os = oStagingView();
  for (int64_t mt = 0; p.kvBytes && mt < p.mTiles; ++mt) {
    // O's columns in ByteFragments' order: pairs of neighbours from the
    // two halves of each accumulator block.
    SmallVector<SmallVector<Value>> acc = accElements(state, mt);
    auto outPair = VectorType::get({2}, p.outElt);
    for (int64_t h = 0; h < 2; ++h) {
      Value row = add(warpRow, add(tiles.laneRow(), idx(16 * mt + 8 * h)));
      for (int64_t nb = 0; nb < dv16; ++nb)
        for (int64_t j = 0; j < 2; ++j) {
          SmallVector<Value> two;
          for (int64_t half = 0; half < 2; ++half) {
            Value x = arith::MulFOp::create(*b, acc[nb][4 * half + 2 * h + j],
                                            inverse[2 * mt + h]);
            two.push_back(arith::TruncFOp::create(*b, p.outElt, x));
          }
          Value pair = vector::FromElementsOp::create(*b, outPair, two);
          Value col = byteFragments->valueColumn(nb, j);
          if (swizzled)
            col = swizzleColumn(*b, row, col);
          vector::StoreOp::create(
              *b, pair, os, ValueRange{row, col},
              /*nontemporal=*/false,
              llvm::Align(p.outElt.getIntOrFloatBitWidth() / 4));
        }
    }
  }
  for (int64_t mt = 0; !p.kvBytes && mt < p.mTiles; ++mt) {
    Value scale = tiles.rowBroadcast(inverse[2 * mt], inverse[2 * mt + 1]);
    for (int64_t nb = 0; nb < dv16; ++nb) {
      Value normalized = tiles.mulC(state[nState + mt * dv16 + nb], scale);
      Value row = add(warpRow, idx(16 * mt));
      Value col = idx(16 * nb);
      if (p.oTma) {
        // Block col / 64 of Q's blocked layout (blocks of br rows, a
        // multiple of 8, so the swizzle's row % 8 is the row's).
        row = add(row, idx(16 * nb / 64 * p.br));
        col = idx(16 * nb % 64);
      }
      tiles.storeRounded(normalized, os, row, col, swizzled);
    }
  }
  if (p.oTma)
    return storeOTma(out);
  syncWarp();

  // Copy out: the warp's 16 mTiles rows of chunks of 16 bytes.
  Value o = map.lookup(n.storeO.getO());
  Value lane = arith::RemUIOp::create(*b, tid, idx(kWarp));
  const int64_t perChunk = 128 / p.outElt.getIntOrFloatBitWidth();
  auto chunkType = VectorType::get({perChunk}, p.outElt);
  forEachOutputChunk(lane, kWarp, warpRow, 16 * p.mTiles, perChunk, out,
                     [&](Value row, Value col) {
    Value x = vector::LoadOp::create(
        *b, chunkType, os,
        ValueRange{row, swizzled ? swizzleColumn(*b, row, col) : col},
        /*nontemporal=*/false, llvm::Align(16));
    SmallVector<Value> at = outputIndices(out, row);
    at.push_back(col);
    // O rows are 16-byte aligned (the runtime checks it).
    vector::StoreOp::create(*b, x, o, at, /*nontemporal=*/false,
                            llvm::Align(16));
  });
}

/// Where warps split Dv (p.dvGroups): no staging, since several warps
/// hold one row. Each thread normalizes its rows' accumulator pairs in
/// registers and writes them, rounded to the output type, to O at the
/// warp's columns (a decode's O is small beside its K/V reads); the first
/// group's lane of a row's first column writes its LSE.
void RegisterScoreKernel::storeColumns(MmaSyncTileMMA &tiles, ValueRange state,
                                       Value warpRow, const Output &out) {
  const int64_t dv16 = p.dvw / 16;
  Value o = map.lookup(n.storeO.getO());
  Value lse = n.storeLse ? map.lookup(n.storeLse.getLse()) : Value();
  auto pairType = VectorType::get({2}, b->getF32Type());
  auto outType = VectorType::get({2}, p.outElt);
  const llvm::Align align(2 * p.outElt.getIntOrFloatBitWidth() / 8);
  // Built in statements of their own: C++ leaves argument order
  // unspecified.
  Value firstColumn = arith::CmpIOp::create(*b, arith::CmpIPredicate::eq,
                                            tiles.laneColumn(), idx(0));
  Value firstGroup =
      arith::CmpIOp::create(*b, arith::CmpIPredicate::eq, dvColumn, idx(0));
  Value lseWriter = arith::AndIOp::create(*b, firstColumn, firstGroup);
  for (int64_t mt = 0; mt < p.mTiles; ++mt) {
    SmallVector<SmallVector<Value>> acc = accElements(state, mt);
    for (int64_t h = 0; h < 2; ++h) {
      // l summed over the quad that holds the row's columns.
      Value l = xorReduce(state[4 * mt + 2 + h], {1, 2}, /*isMax=*/false);
      Value row = add(warpRow, add(tiles.laneRow(), idx(16 * mt + 8 * h)));
      RowNormal normal = normalizeRow(
          state[4 * mt + h], l, [&] { return outputIndices(out, row)[1]; });
      auto inside = scf::IfOp::create(*b, lt(add(out.row0, row), out.rows),
                                      /*withElseRegion=*/false);
      OpBuilder::InsertionGuard g(*b);
      b->setInsertionPointToStart(inside.thenBlock());
      SmallVector<Value> at = outputIndices(out, row);
      Value factor = vector::BroadcastOp::create(*b, pairType, normal.factor);
      for (int64_t nb = 0; nb < dv16; ++nb)
        for (int64_t half = 0; half < 2; ++half) {
          int64_t e = 4 * half + 2 * h;
          Value pair = vector::FromElementsOp::create(
              *b, pairType, ValueRange{acc[nb][e], acc[nb][e + 1]});
          Value value = arith::MulFOp::create(*b, pair, factor);
          if (!p.outElt.isF32())
            value = arith::TruncFOp::create(*b, outType, value);
          SmallVector<Value> to = at;
          Value lane = tiles.laneColumn();
          Value col = add(lane, idx(16 * nb + 8 * half));
          to.push_back(add(dvColumn, col));
          vector::StoreOp::create(*b, value, o, to, /*nontemporal=*/false,
                                  align);
        }
      if (!lse)
        continue;
      auto writer = scf::IfOp::create(*b, lseWriter, /*withElseRegion=*/false);
      b->setInsertionPointToStart(writer.thenBlock());
      memref::StoreOp::create(*b, logSumExp(normal.max, normal.sum), lse, at);
    }
  }
}

/// The split-K form's epilogue: no normalization and no staging. Each
/// thread writes its rows' accumulator pairs (f32, at their mma.sync
/// positions) and the lane of a row's first column its m and l into the
/// workspace at [row, split] (SplitCombine.h). Padding columns past Dv
/// are not written.
SmallVector<SmallVector<Value>>
RegisterScoreKernel::accElements(ValueRange state, int64_t mt) {
  const int64_t nState = 4 * p.mTiles, dv16 = p.dvw / 16;
  SmallVector<SmallVector<Value>> acc;
  for (int64_t nb = 0; nb < dv16; ++nb) {
    acc.emplace_back();
    for (int64_t e = 0; e < 8; ++e)
      acc.back().push_back(vector::ExtractOp::create(
          *b, state[nState + mt * dv16 + nb], ArrayRef<int64_t>{e}));
  }
  return acc;
}

void RegisterScoreKernel::storeSplitState(MmaSyncTileMMA &tiles,
                                          ValueRange state, Value warpRow,
                                          const Output &out) {
  const int64_t dv16 = p.dvw / 16;
  auto pairType = VectorType::get({2}, b->getF32Type());
  // A row's m and l: its first column's lane, in the first Dv group.
  Value firstColumn = arith::CmpIOp::create(
      *b, arith::CmpIPredicate::eq, tiles.laneColumn(), idx(0));
  if (p.dvGroups > 1)
    firstColumn = arith::AndIOp::create(
        *b, firstColumn,
        arith::CmpIOp::create(*b, arith::CmpIPredicate::eq, dvColumn, idx(0)));
  for (int64_t mt = 0; mt < p.mTiles; ++mt) {
    SmallVector<SmallVector<Value>> acc = accElements(state, mt);
    for (int64_t h = 0; h < 2; ++h) {
      // l summed over the quad that holds the row's columns (every lane).
      Value l = xorReduce(state[4 * mt + 2 + h], {1, 2}, /*isMax=*/false);
      Value row = add(warpRow, add(tiles.laneRow(), idx(16 * mt + 8 * h)));
      auto inside =
          scf::IfOp::create(*b, lt(add(out.row0, row), out.rows),
                            /*withElseRegion=*/false);
      OpBuilder::InsertionGuard g(*b);
      b->setInsertionPointToStart(inside.thenBlock());
      Value wsRow = workspaceRow(out, outputIndices(out, row));
      for (int64_t nb = 0; p.kvBytes && nb < dv16; ++nb)
        for (int64_t j = 0; j < 2; ++j) {
          // O's columns in ByteFragments' order (Dv a multiple of 32, no
          // padding): elements j of the block's halves are neighbours.
          Value pair = vector::FromElementsOp::create(
              *b, pairType,
              ValueRange{acc[nb][2 * h + j], acc[nb][4 + 2 * h + j]});
          if (vScale)
            pair = arith::MulFOp::create(
                *b, pair, vector::BroadcastOp::create(*b, pairType, vScale));
          vector::StoreOp::create(
              *b, pair, workspace,
              ValueRange{wsRow, split, byteFragments->valueColumn(nb, j)},
              /*nontemporal=*/false, llvm::Align(8));
        }
      for (int64_t nb = 0; !p.kvBytes && nb < dv16; ++nb)
        for (int64_t half = 0; half < 2; ++half) {
          if (16 * nb + 8 * half >= p.valueHeadDim)
            continue;
          int64_t e = 4 * half + 2 * h;
          Value pair = vector::FromElementsOp::create(
              *b, pairType, ValueRange{acc[nb][e], acc[nb][e + 1]});
          Value col = add(tiles.laneColumn(), idx(16 * nb + 8 * half));
          if (p.dvGroups > 1)
            col = add(dvColumn, col);
          vector::StoreOp::create(*b, pair, workspace,
                                  ValueRange{wsRow, split, col},
                                  /*nontemporal=*/false, llvm::Align(8));
        }
      auto writer = scf::IfOp::create(*b, firstColumn, /*withElseRegion=*/false);
      b->setInsertionPointToStart(writer.thenBlock());
      memref::StoreOp::create(*b, state[4 * mt + h], workspace,
                              ValueRange{wsRow, split, idx(p.valueHeadDim)});
      memref::StoreOp::create(
          *b, l, workspace, ValueRange{wsRow, split, idx(p.valueHeadDim + 1)});
    }
  }
}

std::unique_ptr<PrefillKernel>
nvptx::createRegisterScoreKernel(L1Nest nest, const PrefillPlan &p) {
  return std::make_unique<RegisterScoreKernel>(nest, p);
}
