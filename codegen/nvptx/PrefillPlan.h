//===- PrefillPlan.h - the parts and the tile plan of a prefill tier -*- C++ -*-===//
//
// A prefill tier is the shared kernel skeleton (PrefillKernel.h) with parts
// picked by the tier's pass:
//
//   MMA provider    WMMA m16n16k16 | mma.sync m16n8k16 + ldmatrix (TileMMA.h)
//                   | wgmma m64nNk16 from shared memory (WarpgroupMMA.h)
//   shared layout   Q/K/V rows padded | XOR-swizzled | 64-column swizzled
//                   blocks (wgmma's 128-byte swizzle)
//   copy pipeline   synchronous loads | a ring of cp.async stages | K in
//                   a ring, V in one buffer loaded under Q K^T (staggered)
//   score stage     scores and softmax through shared memory | in registers
//   warp roles      every warp copies and computes | a producer warpgroup
//                   issues the TMA copies and consumer warpgroups compute
//
// From the parts and the L1 nest, planPrefill computes the tile plan once:
// a value that says how the block's warps split the rows and keys, how many
// K/V stages are in flight, and where each tile sits in shared memory.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_CODEGEN_NVPTX_PREFILLPLAN_H
#define ATTN_CODEGEN_NVPTX_PREFILLPLAN_H

#include "dialect/AttnDialect.h"
#include "lib/Transforms/L1Nest.h"

namespace mlir::attn::nvptx {

enum class MmaProvider { WMMA, MmaSync, Wgmma };
/// `SwizzledBlocks`: a tile of width w (a multiple of 64) is w / 64 blocks
/// of 64 columns, one after another, each [rows][64] with Swizzled's chunk
/// permutation; element (r, c) at block c / 64, row r, column
/// (c % 64) ^ 8 (r % 8). It is the layout wgmma reads through 128-byte
/// swizzle descriptors (WarpgroupMMA.h).
enum class SharedLayout { Padded, Swizzled, SwizzledBlocks };
/// `Staggered`: with two stages, K tiles in a ring of two and V in one
/// buffer. Step j waits for K_j, then issues V_j and K_{j+1}; V_j is waited
/// for just before P V (PrefillKernel::awaitValues), so its copy runs
/// under Q K^T and the softmax. A third less shared memory than the ring
/// lets one block more share an SM. With another stage count, the ring.
/// Its K/V tiles come by the tensor memory accelerator
/// (cp.async.bulk.tensor, from a tensor map the host encodes and passes by
/// value, waited for on mbarriers, one thread issuing), or from a
/// producer warpgroup, where the nest's schedule says so and the nest
/// allows it (the wgmma pipeline, resolveWgmmaPipeline in Passes.h); else
/// by cp.async.
enum class CopyPipeline { Sync, CpAsyncRing, Staggered };
enum class ScoreStage { Shared, Registers };

/// What warps do. By default one role, `Compute`: each warp copies its
/// share of every tile and computes on its rows. The wgmma tier may split
/// them (the schedule's `producer`): a `Producer` warpgroup whose one thread
/// issues every K/V copy by TMA, then `Consumer` warpgroups that only
/// compute (PrefillKernel::buildProducer).
enum class WarpRole { Compute, Producer, Consumer };
struct WarpGroup {
  WarpRole role;
  int64_t warps;
};

/// The parts a prefill tier is made of.
struct PrefillParts {
  Tier tier;
  /// f16 tiles; bf16 always takes mma.sync (WMMA has no bf16).
  MmaProvider mma;
  /// Rows of a multiple of 64 elements; narrower rows are padded anyway.
  SharedLayout layout;
  /// Below sm_80 (no cp.async) the copies are synchronous whatever this
  /// says.
  CopyPipeline copies;
  ScoreStage scores;
};

/// Row padding of shared tiles, in elements: 16 bytes for f16 rows and for
/// f32 rows, which breaks the power-of-two row stride behind bank conflicts
/// and keeps 16-byte copies and 32-byte WMMA pointers aligned.
constexpr int64_t kPadHalf = 8, kPadFloat = 4;

/// Shared tiles start at 128-byte boundaries.
inline int64_t roundedTo128(int64_t bytes) { return (bytes + 127) / 128 * 128; }

/// The shared row length, in elements, of a Q/K/V tile `width` elements
/// wide under `layout`: swizzled rows (a multiple of 64 elements) are
/// unpadded; padding leaves ldmatrix conflict-free but not the cp.async
/// writes (ncu: 2.6x the ideal shared wavefronts at D128), the swizzle
/// both.
int64_t inputRowOf(int64_t width, SharedLayout layout);

/// The tile plan of one nest.
struct PrefillPlan {
  PrefillParts parts;
  int sm = 0;
  /// Tile sizes, head dims, GQA group, element types. `d` and `dv` are
  /// the head dims the MMAs see: the operands' (`headDim`, `valueHeadDim`,
  /// multiples of 8) rounded up to 16. The copies zero-fill the padding
  /// columns of Q/K/V in shared memory and the epilogue never writes them.
  int64_t br = 0, bc = 0, d = 0, dv = 0, headDim = 0, valueHeadDim = 0,
          group = 1;
  Type elt, outElt;
  /// Warps split the rows first (rowWarps, mTiles 16-row m-tiles each),
  /// then the keys of each K/V tile (kvGroups groups of bcw keys).
  /// `warps` and `threads` count the compute (or consumer) warps: the
  /// rows and copies are dealt among them. `blockThreads` adds the
  /// producer warpgroup's.
  int64_t warps = 0, threads = 0, rowWarps = 0, mTiles = 1, kvGroups = 1,
          bcw = 0, blockThreads = 0;
  /// Wide value heads (past 256: MLA's 512) on mma.sync: the warps past
  /// the rows' split Dv instead of the keys, dvGroups groups of dvw
  /// columns. Each warp computes every key's scores of its rows (the
  /// groups' softmax states are equal) and its own columns of P V, so its
  /// accumulators are 16 x dvw, not 16 x Dv; it writes its columns of O.
  /// Else dvGroups 1 and dvw = dv.
  int64_t dvGroups = 1, dvw = 0;
  /// V is K's leading columns (attn.attention's v_from_k, MLA) and the
  /// copies land whole tiles a stage: V is read from K's tile in shared
  /// memory (its rows, K's row length), copied once for both products.
  /// mma.sync's register score stage with a cp.async ring or synchronous
  /// copies only.
  bool vInK = false;
  /// The shared row length of the V tile P V reads, in elements.
  int64_t vRowLength() const { return inputRow(vInK ? d : dv); }
  /// A quantized K/V cache (one-byte elements of `kvElt`: fp8 or i8) on
  /// mma.sync's register score stage: its K/V tiles hold the bytes as
  /// stored, unpadded, each row's 16-byte chunks permuted
  /// (nv::TileLayout::Bytes), and the products decode them into f16/bf16
  /// fragments in registers (ByteFragments.h), with the scales on the
  /// scores and on O (per token: on each key's p). Else kvElt is elt.
  bool kvBytes = false;
  Type kvElt;
  /// A K or V tile row in shared memory, in bytes.
  int64_t kvRowBytes(int64_t width) const {
    return kvBytes ? width : inputRow(width) * 2;
  }
  int64_t kRowBytes() const { return kvRowBytes(d); }
  /// The rows P V reads V from: K's under vInK.
  int64_t vRowBytes() const { return kvRowBytes(vInK ? d : dv); }
  /// The shared view shape of a K or V tile of `rows` rows, `width` wide.
  SmallVector<int64_t, 2> kvTileShape(int64_t rows, int64_t width) const {
    if (kvBytes)
      return {rows, width};
    return tileShape(rows, width);
  }
  SmallVector<WarpGroup, 2> roles;
  /// A producer warpgroup (roles Producer, Consumer): warpgroup 0 issues
  /// the copies, K and V each in a ring of `stages` (no staggering), the
  /// consumers from thread 128 on. Each stage has a "full" mbarrier (the
  /// producer's expect_tx, then TMA's bytes) and an "empty" one (one
  /// arrival per consumer warp once its products have read the tile);
  /// setmaxnreg moves registers from the producer to the consumers.
  bool specialized = false;
  int64_t producerRegisters = 0, consumerRegisters = 0;
  /// Ping-pong (FlashAttention-3's inter-warpgroup overlap): the two
  /// consumer warpgroups take turns through named barriers 2 and 3, each
  /// turn from just before a step's P V to just after the next step's
  /// Q K^T issue, so one warpgroup's softmax runs under the other's
  /// products.
  bool pingPong = false;
  /// K/V tiles in flight.
  int64_t stages = 0;
  /// The staggered copy pipeline (two K stages, one V buffer) is in use.
  bool staggered = false;
  /// Its K/V tiles come by TMA: the kernel's first parameters are the
  /// tensor maps of K and V (tensor_map(k), tensor_map(v) in the launch
  /// contract, after Q's where qTma), and mbarriers at `barOff` say when a
  /// tile has landed: three (K stages 0 and 1, V), or with a producer
  /// warpgroup 4 x stages (full K, full V, empty K, empty V;
  /// mbarrier(...) numbers them), then Q's.
  bool tma = false;
  /// Q comes by TMA too (the schedule's q_load, where it can): the kernel's first parameter is then
  /// Q's tensor map (tensor_map(q), its rows in the block's GQA order),
  /// and the last mbarrier says Q has landed.
  bool qTma = false;
  /// O leaves by TMA stores (the schedule's o_store, where it can): its tensor map (tensor_map(o),
  /// Q's view of O) follows V's, and the epilogue stages O in Q's blocked
  /// layout, then one thread stores block_q rows per 64-column block.
  bool oTma = false;
  int64_t barOff = 0;
  int64_t mbarriers() const {
    return (specialized ? 4 * stages : 3) + (qTma ? 1 : 0);
  }
  /// How many of the kernel's first parameters are tensor maps.
  int64_t tensorMaps() const {
    return tma ? 2 + (qTma ? 1 : 0) + (oTma ? 1 : 0) : 0;
  }
  /// The schedule's qk_ahead: under a producer warpgroup up to D128;
  /// without one, with three or more stages (a schedule's choice: it
  /// measured slower than two, bench/RESULTS.md). Q K^T runs one tile
  /// ahead: S of tile 0 before the loop, and in the step of tile j the
  /// products of tile j + 1 are issued before tile j's softmax and run
  /// under it (FlashAttention-3's intra-warpgroup overlap). The loop
  /// carries S; its top waits for tile j + 1's copy, not tile j's.
  bool qkAhead = false;
  /// The split-K form (the decode tier's tensor-core split kernel): block
  /// (x, y, z) = (split, K/V head, batch x Q tile), each block over its
  /// split's K/V tiles, its rows' partial states written to the workspace
  /// (SplitCombine.h) instead of O and the LSE. Register score stage only.
  bool splitKV = false;
  /// With splitKV: split s of S takes every S-th K/V tile from tile s, not
  /// one run of tiles, so a head's splits read neighbouring tiles at the
  /// same time. On an H100 that took GQA-4 B1 Sk128k from 190.0 to 188.0
  /// us and left the shorter rows as they were; over a block table it cost
  /// 3.6% (B8 Sk32k), so paged K/V keep the runs (bench/RESULTS.md).
  bool interleavedSplits = false;
  /// The split kernel's one-split form (the decode tier's, without
  /// splitKV): a plain kernel whose launch has the decode_unsplit role.
  bool decodeUnsplit = false;
  /// The K/V loop walks the blocks a block mask lists (BlockMask.h), which
  /// a kernel of its own writes first, and skips the mask on full ones.
  bool blockMask = false;
  bool cpAsync = false;
  /// Byte offsets in shared memory: Q, K and V stages (kStage, vStage
  /// bytes each), the score-stage tiles (S, P, rescale), O's staging tile,
  /// rows' m and l, and the key groups' exchange.
  int64_t qOff = 0, kOff = 0, vOff = 0, sOff = 0, pOff = 0, aOff = 0,
          oOff = 0, mlOff = 0, xOff = 0, kStage = 0, vStage = 0,
          smemBytes = 0;
  /// Register score stage: O staged over the warp's own Q rows (no block
  /// barrier), and the staging tile's row in output elements.
  bool overQ = false;
  int64_t oRow = 0;

  bool registers() const { return parts.scores == ScoreStage::Registers; }
  /// Whether Q/K/V rows of `width` elements are swizzled, not padded.
  bool swizzles(int64_t width) const;
  /// The shared row length of a Q/K/V tile `width` elements wide.
  int64_t inputRow(int64_t width) const {
    return inputRowOf(width, parts.layout);
  }
  /// 16-byte chunks of a thread's softmax state and accumulators.
  int64_t exchangeChunks() const { return mTiles + mTiles * (dvw / 16) * 2; }
  /// The [rows, cols] of the shared view of a Q/K/V tile `width`
  /// elements wide: [rows, inputRow(width)], or for SwizzledBlocks
  /// [width / 64 * rows, 64] (blockedPlace maps into it).
  SmallVector<int64_t, 2> tileShape(int64_t rows, int64_t width) const;
  bool blocked() const {
    return parts.layout == SharedLayout::SwizzledBlocks;
  }
  bool warpgroups() const { return parts.mma == MmaProvider::Wgmma; }
  /// Whether each warp holds Q's A operands in registers for the whole
  /// K/V loop (one m-tile a warp on mma.sync). Past D256 (MLA's 576: 144
  /// registers) the register score stage loads them at each Q K^T.
  bool qInRegisters() const {
    return mTiles == 1 && !warpgroups() && (d <= 256 || !registers());
  }
  /// The tier's name, for diagnostics.
  StringRef tierName() const { return stringifyTier(parts.tier); }
};

/// Checks what the tier made of `parts` can do for `nest` on `sm` (each
/// refusal a diagnostic that names the rule) and computes its plan.
FailureOr<PrefillPlan> planPrefill(L1Nest nest,
                                   const PrefillParts &parts, int sm);

} // namespace mlir::attn::nvptx

#endif // ATTN_CODEGEN_NVPTX_PREFILLPLAN_H
