//===- PrefillKernel.h - the prefill tiers' kernel skeleton -----*- C++ -*-===//
//
// Every prefill tier builds the same kernel from an L1 nest:
//
//   block-to-tile mapping   block (x, y, z) = (Q tile, K/V head, batch);
//                           warps split the tile's rows, then its keys
//   staging and K/V loop    Q and the first K/V tiles copied to shared
//                           memory, then the loop over K/V tiles with its
//                           ring of stages (the copy pipeline part)
//   score stage             per K/V tile: S = Q K^T, mask, online softmax,
//                           acc += P V (the score stage part, below)
//   key-group merge and     the states of warps that split the keys merged,
//   epilogue                O normalized and stored, and the LSE
//
// The parts a tier picks (PrefillPlan.h) plug in: the MMA provider makes
// the tile products (TileMMA.h), the shared layout and the copy pipeline
// steer the staging, and the score stage is a subclass that says where
// the scores live and how the epilogue reads the loop's state:
//
//   SharedScoreStage    (ScoresInShared.cpp)    the wmma tier's
//   RegisterScoreStage  (ScoresInRegisters.cpp) the mma tier's
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_CODEGEN_NVPTX_PREFILLKERNEL_H
#define ATTN_CODEGEN_NVPTX_PREFILLKERNEL_H

#include "codegen/nvptx/ByteFragments.h"
#include "codegen/nvptx/KernelCommon.h"
#include "codegen/nvptx/PrefillPlan.h"
#include "codegen/nvptx/TileMMA.h"

#include <memory>

namespace mlir::attn::nvptx {

/// The skeleton. A score stage subclasses it and fills in the hooks.
class PrefillKernel : public KernelEmitter {
public:
  PrefillKernel(L1Nest nest, const PrefillPlan &plan)
      : KernelEmitter(nest), p(plan) {}
  virtual ~PrefillKernel() = default;

  /// Emits the kernel into `module` and replaces the nest by a launch; in
  /// the split-K form (p.splitKV), by the split launch writing `workspace`
  /// (a host function argument) and the combine launch.
  LogicalResult build(gpu::GPUModuleOp module, StringRef name,
                      Value workspace = {});

protected:
  /// What one K/V tile's step of the loop works on.
  struct Step {
    ArrayRef<Value> qFrags; // Q's A operands, one per 16 of D
    Value qs, ks, vs;       // Q, and this tile's K and V, in shared memory
    Value j;                // its first key
    Value qLen, row0, warpRow;
    ValueRange state;       // the loop's: softmax state, then acc tiles
    Value batch, kvHead;    // the mod regions' b and K/V head
    /// With a block mask: whether the tile's block is full (every
    /// position exists and is visible: no mask needed); else null.
    Value full;
    /// Byte offsets of this tile's K and V in shared memory (wgmma's
    /// descriptors), and of the next stage's K (Q K^T one tile ahead;
    /// else null).
    Value kOffset, vOffset, nextKOffset;
  };
  /// What the epilogue writes to: rows of the block from row0, of `rows`
  /// (group * Sq, Sq = `queries`), in batch `batch` and K/V head `kvHead`;
  /// for a packed Q, the sequence's rows from `seqStart` (else null).
  struct Output {
    Value batch, kvHead, row0, rows, queries, seqStart;
  };
  /// Where this thread's warp works: its rows and its keys.
  struct WarpPlace {
    Value rowWarp, kvGroup, warpRow;
  };

  // The score stage's hooks, in the order the skeleton calls them.

  /// Views of the score stage's own shared tiles, made before the loop.
  virtual void makeScoreViews() {}
  /// The loop's initial softmax state (before the accumulators).
  virtual SmallVector<Value> initialState() = 0;
  /// What else the loop carries, after the accumulators: the scores of
  /// the loop's first tile, computed before it, where Q K^T runs a tile
  /// ahead.
  virtual SmallVector<Value> carriedScores() { return {}; }
  /// The loop body's results for one K/V tile: the next softmax state and
  /// accumulators.
  virtual SmallVector<Value> step(TileMMA &tiles, const Step &step) = 0;
  /// Merges the key groups' states (where warps split the keys) and
  /// writes O and the LSE from the loop's results.
  virtual void epilogue(TileMMA &tiles, scf::ForOp loop,
                        const WarpPlace &place, const Output &out) = 0;

  // Shared helpers on the kernel builder `b`.

  /// Called by a score stage before P V reads the step's V: the copy
  /// pipeline's wait for V's copy where it came apart from K's (and with
  /// ping-pong, this warpgroup's turn); otherwise nothing.
  void awaitValues();
  /// A barrier of the compute warps: the whole block's, or with a producer
  /// warpgroup (which runs its own loop) a named barrier of the consumers.
  void computeBarrier();
  /// Ping-pong (p.pingPong): ends this consumer warpgroup's turn (the
  /// other's named barrier), or waits for its own.
  void endTurn();
  void awaitTurn();
  /// Before the K/V loop: warpgroup 0 takes the first turn; after it:
  /// the turns wind down so every barrier phase completes.
  void openTurns();
  void closeTurns();

  Value view(Value byteOffset, ArrayRef<int64_t> shape, Type type);
  /// Byte offset `base + stage * stride` of a ring stage.
  Value stageOffset(int64_t base, Value stage, int64_t stride) {
    Value first = idx(base);
    Value offset = mul(stage, idx(stride));
    return add(first, offset);
  }
  /// The first and last query of `rows` rows from `firstRow`: the warp's
  /// or the block's.
  std::pair<Value, Value> queryRange(Value firstRow, int64_t rows);
  /// The (batch, head, query) indices of Q, O and LSE for flat row `flat`
  /// of the K/V head's group * Sq rows; (seqStart + query, head) packed.
  SmallVector<Value> rowIndices(const Output &out, Value flat);
  /// The split-K workspace row of the O row at `at` (rowIndices' result):
  /// O's rows flattened, (batch * Hq + head) * Sq + query, or packed
  /// token * Hq + head.
  Value workspaceRow(const Output &out, ArrayRef<Value> at);
  /// The same for the block's row `row`.
  SmallVector<Value> outputIndices(const Output &out, Value row) {
    return rowIndices(out, add(out.row0, row));
  }
  /// O's staging tile in shared memory, in the output type: with p.oTma
  /// Q's blocked layout ([dv / 64 * br, 64], each 64-column block's rows
  /// swizzled as TMA reads them), else [br, p.oRow].
  Value oStagingView();
  /// O by TMA (p.oTma), once every compute thread has staged its rows:
  /// each fences its writes for the async proxy and meets the others;
  /// one thread stores the block's rows (a box per 64 columns) and waits
  /// until TMA has read them, before the block's shared memory goes.
  void storeOTma(const Output &out);
  /// 1 / l, or 0 for a row that saw no key (l = 0).
  Value inverseOrZero(Value l);
  /// A row's normalization: the factor O = acc * factor, and the (m, l)
  /// its LSE comes from. Without sinks 1 / l (inverseOrZero) and (m, l);
  /// with them head `head`'s sink folded in (KernelEmitter::foldSink), r /
  /// l' and (m', l'). `head` is only called with sinks.
  struct RowNormal {
    Value factor, max, sum;
  };
  RowNormal normalizeRow(Value m, Value l, function_ref<Value()> head);
  /// The LSE of a row, in natural-log units, from its m and l.
  Value logSumExp(Value m, Value l);
  /// Calls `body(row, col)` inside a guard for each chunk of `perChunk`
  /// output columns of the block's `rows` rows from `firstRow` that exist
  /// in the sequence, the chunks dealt to `count` threads (this one
  /// `thread`), consecutive threads taking consecutive chunks.
  void forEachOutputChunk(Value thread, int64_t count, Value firstRow,
                          int64_t rows, int64_t perChunk, const Output &out,
                          function_ref<void(Value row, Value col)> body);

  const PrefillPlan &p;
  Value smem, tid, kvLen;
  /// This warp's first column of P V and O where warps split Dv
  /// (p.dvGroups > 1), else 0.
  Value dvColumn;
  /// The split-K form's split index and workspace (kernel argument).
  Value split, workspace;
  /// A quantized cache (p.kvBytes): its fragments' decoder, and the
  /// scales of the block's K/V head (null: none), which multiply the
  /// scores and O.
  std::unique_ptr<ByteFragments> byteFragments;
  Value kScale, vScale;
  /// A per-token scale operand of `load` (K's or V's) for the 16 keys
  /// from `first`, as this lane's accumulator-layout tile: keys
  /// `laneColumn` + {0, 1} in elements 0-3 and + {8, 9} in 4-7 (mma.sync's
  /// C layout); a key past the sequence reads its last key's.
  Value tokenScaleTile(LoadKVOp load, Value first, Value laneColumn);

private:
  // The tile walk: which keys the K/V loop's positions stand for.

  /// Positions walk whole K/V tiles: dense (a position is the tile's first
  /// key, bc apart), every S-th tile of an interleaved split (splitBase,
  /// splits: positions 0, 1, ...), or a block mask's list entries
  /// (maskList, maskRow, qBlock: kMaskBlock / bc tiles an entry). `first`
  /// is the loop's first position.
  struct TileWalk {
    Value splitBase, splits, maskList, maskRow, qBlock, first;
  };
  TileWalk walk;
  /// A split's walk, where the loop bounds [lo, hi) become the split's:
  /// one run of whole tiles (splitRange), or with interleaved splits the
  /// positions 0, 1, ... of every S-th tile from tile `split`; returns
  /// that walk's first key and the split count S (else null).
  std::pair<Value, Value> splitWalk(Value &lo, Value &hi);
  /// A producer warpgroup: thread 0 makes the mbarriers [and sends Q],
  /// the block meets, warpgroup 0 runs the producer (buildProducer) and
  /// the rest of the kernel is the consumers', their threads renumbered
  /// from 0 with their registers raised.
  void splitRoles(Value lo, Value hi, int64_t posStep, Value row0,
                  Value kvHead, Value batch);
  /// A block mask's walk: the list workspace `maskList`, the row of lists
  /// of this block's (batch, K/V head), its Q block, and the entries in
  /// its list (at most the list's length).
  std::tuple<Value, Value, Value, Value>
  blockMaskWalk(Value maskList, Value batch, Value kvHead, Value row0);
  /// The first key of the tile at position `x`, and whether a block mask
  /// says its block is full (else null).
  std::pair<Value, Value> tileAt(Value x);
  /// The tile's index from the loop's first: its ring stage and use.
  Value iteration(Value pos);

  // The kernel's frame: its parameters, their mapping, its launch.

  /// The kernel's arguments in their fixed order: the attention
  /// operands, then the outputs or the split-K workspace; the TMA maps
  /// (their operands listed in `mapped`) come first, as host placeholders.
  SmallVector<Value> kernelOperands(Value hostWorkspace,
                                    SmallVector<LaunchOperand> &mapped);
  /// Maps the host operands to `kernel`'s arguments and the nest's
  /// forall indices to the block's ids (split, packed or plain grid);
  /// makes tid and the dynamic shared memory.
  LogicalResult mapKernelArguments(gpu::GPUFuncOp kernel,
                                   ValueRange operands);
  /// Replaces the nest with `kernel`'s launch (and, split, the combine's)
  /// under its #attn.launch contract.
  LogicalResult launchFromHost(gpu::GPUModuleOp module, StringRef name,
                               gpu::GPUFuncOp kernel, ValueRange operands,
                               ArrayRef<LaunchOperand> mapped,
                               Value hostWorkspace);

  // The copy pipeline: Q and K/V tiles into shared memory.

  /// Where the K/V loop's step is: its position, the tile's index from
  /// the loop's first, its ring stage and its first key.
  struct StepPosition {
    Value pos, iter, stage, j;
  };
  /// Which tiles a K/V copy writes: the staggered pipelines copy K and V
  /// at different points of a step.
  enum class KVTiles { Both, K, V };
  /// How K/V tiles reach shared memory and when a step may read them
  /// (CopyPipelines.cpp has one class a kind); made once from the plan.
  class CopyPipeline {
  public:
    CopyPipeline(PrefillKernel &k, Value lo, Value hi, int64_t posStep)
        : k(k), lo(lo), hi(hi), posStep(posStep) {}
    virtual ~CopyPipeline() = default;
    /// Before the K/V loop over positions [lo, hi), with Q's cp.async
    /// copies issued (not committed): the first tiles' copies, and Q
    /// waited for unless it comes by TMA.
    virtual void prime(Value row0, Value kvHead, Value batch) = 0;
    /// Around tile 0's scores, computed before the loop where Q K^T runs
    /// a tile ahead: its K waited for, then given back.
    virtual void awaitFirstK() {}
    virtual void releaseFirstK() {}
    /// The top of a step: its tiles have landed, the copies ahead of it
    /// are issued.
    virtual void await(const StepPosition &at) = 0;
    /// Before P V reads the step's V.
    virtual void awaitValues() {}
    /// After the step: its stages given back.
    virtual void release(const StepPosition &at) {}

  protected:
    /// `body(first key, ring stage)` of the tile after `at`'s, where
    /// there is one.
    void ifNextTile(const StepPosition &at,
                    function_ref<void(Value, Value)> body);
    /// How often tile `iter`'s ring stage was used before: iter / stages.
    Value usesOf(Value iter);
    /// Tiles in flight ahead of a step, and one more where Q K^T runs a
    /// tile ahead.
    int64_t ahead() const { return k.p.stages - 1; }
    int64_t early() const { return k.p.qkAhead ? 1 : 0; }
    /// Waits until at most `pending` cp.async groups are in flight and
    /// makes the landed tiles visible to every warp (and to wgmma).
    void landGroups(int64_t pending);
    /// The cp.async pipelines' prologue: Q's group, then the first
    /// `ahead` tiles (`first` of each), one group each; waits for Q.
    void primeGroups(KVTiles first);

    PrefillKernel &k;
    Value lo, hi;
    int64_t posStep;
  };
  class SynchronousCopies;
  class CpAsyncRing;
  class StaggeredCopies;
  class LeaderTma;
  class ProducerTma;
  /// The plan's pipeline over loop positions [lo, hi), `posStep` apart.
  std::unique_ptr<CopyPipeline> makePipeline(Value lo, Value hi,
                                             int64_t posStep);
  std::unique_ptr<CopyPipeline> copies;

  /// The shared tiles step `iter` reads from ring stage `stage`: this
  /// warp's keys from `firstKey` (the tile's `j`, or its key group's
  /// part), their K and V views and byte offsets, Q's view (`qs`, or
  /// through an opaque offset where two m-tiles re-read it), and with Q
  /// K^T a tile ahead the next stage's K offset.
  struct StageViews {
    Value firstKey, qs, ks, vs, kBase, vBase, nextKBase;
  };
  StageViews stageViews(Value j, Value stage, Value iter, Value kvGroup,
                        Value qs);
  /// Copies a [rows, width] tile from global memory to `dst`; `source`
  /// gives, for tile row r, whether it exists and the global indices of
  /// its first element (the innermost index is the column).
  void copyTile(Value dst, int64_t rows, int64_t width, int64_t srcWidth,
                Value src,
                function_ref<std::pair<Value, SmallVector<Value>>(Value)>
                    source);
  void copyKV(Value start, Value stage, bool commit = true,
              KVTiles tiles = KVTiles::Both);
  void copyKVRows(Value start, Value stage, bool inside, KVTiles tiles);
  Value kvIndices(LoadKVOp load, Value row, SmallVector<Value> &indices,
                  Value start, bool inside = false);
  // TMA (p.tma): thread 0 issues each K/V tile as 64x64 boxes from the
  // tensor maps (the kernel's first parameters); every thread waits on
  // the tile's mbarrier. With p.qTma, Q's tile too, once.

  /// A pointer into shared memory (address space 3) at `byteOffset`.
  Value sharedPointer(Value byteOffset);
  /// Issues K's (stage `stage`) or V's tile of the keys from `start`,
  /// with its bytes expected on its mbarrier; the caller runs it on one
  /// thread.
  void copyKVTma(Value start, Value stage, KVTiles tiles);
  /// Expects `bytes` of TMA copies on mbarrier `bar` (the calling
  /// thread's arrival).
  void expectBytes(Value bar, int64_t bytes);
  /// Shared memory at `byteOffset` as TMA's destination (shared::cluster).
  Value clusterPointer(Value byteOffset);
  /// One TMA box of `tensorMap` at `coords` (innermost first) into `dst`
  /// (clusterPointer), completing on `bar`.
  void copyBox(Value dst, Value tensorMap, ValueRange coords, Value bar);
  /// An index as the i32 TMA coordinates are.
  Value i32Of(Value index);
  /// Issues the Q tile whose first row (of the block's K/V head's query
  /// rows) is `row0`, with its bytes expected on qBarrier(); one thread.
  void copyQTma(Value row0, Value kvHead, Value batch);
  /// For each 64-column box of a `width`-column tile in Q's TMA view (Q
  /// and O: the block's rows from K/V-head row `row0`, the tile staged
  /// blocked at byte `base`): issue(pointer(its shared byte offset), its
  /// coordinates, innermost first: column, head in group, query, K/V
  /// head, batch), each built in a statement of its own.
  void forEachQViewBox(Value row0, Value kvHead, Value batch, int64_t base,
                       int64_t width, function_ref<Value(Value)> pointer,
                       function_ref<void(Value, ValueRange)> issue);
  /// Q's mbarrier: the plan's last.
  Value qBarrier();
  /// Waits for the phase of parity `parity` (0 or 1) of mbarrier `bar`.
  void waitTma(Value bar, Value parity);
  /// mbarrier `i` (PrefillPlan::mbarriers); the "full" one of K's or V's
  /// stage `stage` (one role: K stages 0 and 1, then V's one buffer), and
  /// with a producer warpgroup the "empty" one.
  Value mbarrier(Value i);
  /// Makes every mbarrier of the plan (on the thread that calls it).
  void initMbarriers();
  Value fullBarrier(KVTiles tiles, Value stage);
  Value emptyBarrier(KVTiles tiles, Value stage);
  /// The producer warpgroup's side: it gives up registers, and its thread
  /// 0 walks the K/V loop positions [lo, hi), `posStep` apart, sending K
  /// and V of the tile whose first key is `firstKey(position)` into ring
  /// stage `iteration % stages` once the consumers have emptied it.
  void buildProducer(Value lo, Value hi, int64_t posStep,
                     function_ref<Value(Value)> iteration,
                     function_ref<Value(Value)> firstKey);
  /// The parity bit (i32) of use `uses` of a ring stage's mbarrier.
  Value parityOf(Value uses);
  /// Gives K's or V's ring stage `stage` back to the producer: lane 0 of
  /// each consumer warp arrives on its empty mbarrier.
  void releaseStage(KVTiles tiles, Value stage);
  /// Emits `body` under `if (cond)`.
  void ifThen(Value cond, function_ref<void()> body);
  /// Runs `body` on thread 0 alone.
  void onLeader(function_ref<void()> body);
  Value tensorMapQ, tensorMapK, tensorMapV, tensorMapO;
  /// The MMA provider the parts name (mma.sync for bf16 whatever they say).
  std::unique_ptr<TileMMA> makeTiles(ImplicitLocOpBuilder &kb);
  /// fence.proxy.async after cp.async's last writes, before the barrier,
  /// where wgmma reads the tiles.
  void asyncProxyFence();
};

/// The score stages: where S, P and the online softmax state live.
std::unique_ptr<PrefillKernel> createSharedScoreKernel(L1Nest nest,
                                                       const PrefillPlan &p);
std::unique_ptr<PrefillKernel>
createRegisterScoreKernel(L1Nest nest, const PrefillPlan &p);

/// Lowers every L1 nest of `module` marked with `parts.tier` (or unmarked)
/// with the skeleton and `parts` for `chip`, which must be one the tier
/// runs on; `pass` names the caller in diagnostics.
LogicalResult lowerPrefillNests(ModuleOp module, const PrefillParts &parts,
                                StringRef chip, StringRef pass);

} // namespace mlir::attn::nvptx

#endif // ATTN_CODEGEN_NVPTX_PREFILLKERNEL_H
