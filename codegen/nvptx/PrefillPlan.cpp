//===- PrefillPlan.cpp - the tile plan of a prefill tier ------------------===//

#include "codegen/nvptx/PrefillPlan.h"

#include "codegen/nvptx/KernelCommon.h"
#include "codegen/nvptx/Passes.h"
#include "codegen/nvptx/Target.h"
#include "codegen/nvptx/TileMMA.h"
#include "codegen/nvptx/WarpgroupMMA.h"

#include "llvm/Support/MathExtras.h"

#include <algorithm>

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::nvptx;

int64_t nvptx::inputRowOf(int64_t width, SharedLayout layout) {
  return layout != SharedLayout::Padded && isSwizzledWidth(width)
             ? width
             : width + kPadHalf;
}

bool PrefillPlan::swizzles(int64_t width) const {
  return (parts.layout == SharedLayout::Swizzled ||
          parts.layout == SharedLayout::SwizzledBlocks) &&
         isSwizzledWidth(width);
}

SmallVector<int64_t, 2> PrefillPlan::tileShape(int64_t rows,
                                               int64_t width) const {
  if (blocked())
    return {width / 64 * rows, 64};
  return {rows, inputRow(width)};
}

/// Warps, m-tiles, K/V groups and stages from the schedule (or the
/// selection pass's defaults), checked against what the tier can run.
static LogicalResult planWarps(PrefillPlan &p, Operation *op) {
  auto schedule = op->getAttrOfType<ScheduleAttr>(kScheduleAttrName);
  int64_t asked = schedule ? schedule.getWarps() : 0;
  p.warps = asked ? asked : defaultWarps(p.parts.tier, p.br);
  p.rowWarps = std::min(p.warps, p.br / 16);
  p.kvGroups = p.warps / p.rowWarps;
  p.mTiles = p.br / 16 / p.rowWarps;
  // Past Dv 256 a key group's 16 x Dv f32 accumulators exceed a warp's
  // registers: on mma.sync's register score stage the groups split Dv.
  p.dvw = p.dv;
  if (p.registers() && !p.warpgroups() && p.valueHeadDim == p.dv &&
      splitsValueColumns(p.dv, p.kvGroups)) {
    p.dvGroups = p.kvGroups;
    p.kvGroups = 1;
    p.dvw = p.dv / p.dvGroups;
  }
  p.bcw = p.bc / p.kvGroups;
  p.threads = p.warps * kWarp;
  p.roles = {WarpGroup{WarpRole::Compute, p.warps}};
  // wgmma: each warpgroup (4 warps) computes 64 whole rows against every
  // key of the tile, warp w of it rows 16w..16w+15.
  if (p.warpgroups() && (p.br % 64 || p.warps != p.br / 16))
    return op->emitError()
           << "the " << p.tierName()
           << " tier runs one warpgroup (4 warps) per 64 query rows: "
              "block_q must be a multiple of 64 and schedule 'warps' "
              "block_q / 16; got block_q = "
           << p.br << ", warps = " << p.warps;
  if (!p.registers() && p.warps != p.br / 16)
    return op->emitError() << "the " << p.tierName()
                           << " tier runs one warp per 16 query rows: "
                              "schedule 'warps' must be block_q / 16 = "
                           << p.br / 16 << "; got " << p.warps;
  if (p.mTiles > 2)
    return op->emitError()
           << "the " << p.tierName()
           << " tier gives a warp at most two 16-row m-tiles: "
              "schedule 'warps' must be at least block_q / 32 = "
           << p.br / 32 << "; got " << p.warps;
  if (p.bcw % 16 || p.bcw == 0)
    return op->emitError()
           << "schedule 'warps' = " << p.warps << " splits each K/V tile's "
           << p.bc << " keys among " << p.kvGroups
           << " groups of warps, which need a multiple of 16 keys each";
  p.cpAsync = p.parts.copies != CopyPipeline::Sync && p.sm >= 80;
  p.stages = schedule && schedule.getStages() ? schedule.getStages()
                                              : defaultStages(p.sm);
  if (!p.cpAsync && p.stages > 1)
    return op->emitError() << "more than one K/V stage needs cp.async "
                              "(sm_80 or newer); got stages = "
                           << p.stages << " on sm_" << p.sm;
  p.qkAhead = p.warpgroups() && p.cpAsync && p.stages >= 3;
  p.staggered = p.parts.copies == CopyPipeline::Staggered &&
                p.cpAsync && p.stages == 2;
  p.blockThreads = p.threads;
  return success();
}

/// The wgmma tier's pipeline (Staggered copies): the nest's schedule
/// resolved by the tier's one statement of the rules
/// (resolveWgmmaPipeline, Passes.h). After attn-select-tier every field is
/// set and honourable; on a nest that left some to the tier, a choice it
/// cannot honour is a remark.
static WgmmaPipeline planPipeline(const PrefillPlan &p, L1Nest n) {
  Operation *op = n.forall;
  auto schedule = op->getAttrOfType<ScheduleAttr>(kScheduleAttrName);
  WgmmaKernelShape k;
  k.paged = n.loadK.getBlockTable() != nullptr;
  k.packedK = n.loadK.getSeqStart() != nullptr;
  k.kvLens = n.kvLens != nullptr;
  k.packedQ = n.loadQ.isPacked();
  k.headDim = p.headDim;
  k.valueHeadDim = p.valueHeadDim;
  k.vFromK = n.vFromK();
  k.group = p.group;
  k.outBits = p.outElt.getIntOrFloatBitWidth();
  k.blockQ = p.br;
  k.blockKv = p.bc;
  k.warps = p.warps;
  k.stages = p.stages;
  return resolveWgmmaPipeline(k, schedule, /*defaults=*/nullptr,
                              [&](StringRef field, StringRef why) {
                                op->emitRemark()
                                    << "the " << p.tierName()
                                    << " tier cannot honour the schedule's '"
                                    << field << "': " << why;
                              });
}

/// Registers a thread may hold after setmaxnreg: multiples of 8 in
/// [24, 256], the block's within 64K.
static constexpr int64_t kRegisterFile = 64 * 1024, kProducerRegisters = 24;

/// The producer warpgroup: warpgroup 0 producing, the compute warps
/// consuming, K and V in rings of `stages` without the staggering (the
/// consumers wait on the tiles' mbarriers, not on their own copies).
static void planProducer(PrefillPlan &p) {
  p.specialized = true;
  p.staggered = false;
  p.roles = {WarpGroup{WarpRole::Producer, 4},
             WarpGroup{WarpRole::Consumer, p.warps}};
  p.blockThreads = p.threads + kWarpgroup;
  p.producerRegisters = kProducerRegisters;
  // What the producer gives up, dealt to the consumers (one block an SM).
  p.consumerRegisters = std::min<int64_t>(
      256, (kRegisterFile - kWarpgroup * kProducerRegisters) / p.threads / 8 *
               8);
}

FailureOr<PrefillPlan> nvptx::planPrefill(L1Nest n,
                                          const PrefillParts &parts, int sm) {
  PrefillPlan p;
  p.parts = parts;
  p.sm = sm;
  auto qTile = cast<RankedTensorType>(n.loadQ.getTile().getType());
  auto kTile = cast<RankedTensorType>(n.loadK.getTile().getType());
  auto vTile = cast<RankedTensorType>(n.loadV.getTile().getType());
  p.br = qTile.getDimSize(0);
  p.headDim = qTile.getDimSize(1);
  p.valueHeadDim = vTile.getDimSize(1);
  p.d = llvm::alignTo(p.headDim, 16);
  p.dv = llvm::alignTo(p.valueHeadDim, 16);
  p.bc = kTile.getDimSize(0);
  p.group = n.loadQ.getGroup();
  p.elt = qTile.getElementType();
  p.outElt = cast<MemRefType>(n.storeO.getO().getType()).getElementType();
  Operation *op = n.forall;
  StringRef tier = p.tierName();
  if (!p.elt.isF16() && !p.elt.isBF16())
    return op->emitError() << "the " << tier
                           << " tier takes f16 or bf16 inputs; got " << p.elt;
  // gpu.subgroup_mma (WMMA) has no bf16: bf16 tiles use mma.sync, whose
  // bf16 form needs sm_80.
  if (p.elt.isBF16() && sm < 80)
    return op->emitError() << "bf16 inputs need sm_80 or newer (mma.sync "
                              "bf16); got sm_"
                           << sm;
  if (p.br % 16 || p.bc % 16 || p.br > 128 || p.bc > 128)
    return op->emitError() << "the " << tier
                           << " tier needs tile sizes that are "
                              "multiples of 16 up to 128; got block_q = "
                           << p.br << ", block_kv = " << p.bc;
  // Rows of 16-byte chunks: a multiple of 8 elements (f16 and bf16).
  if (p.headDim % 8 || p.valueHeadDim % 8)
    return op->emitError() << "the " << tier
                           << " tier needs head dims that are "
                              "multiples of 8; got D = "
                           << p.headDim << ", Dv = " << p.valueHeadDim;
  // wgmma reads Q, K and V in 64-column blocks of 128-byte rows.
  if (p.blocked() && (p.headDim % 64 || p.valueHeadDim % 64))
    return op->emitError() << "the " << tier
                           << " tier needs head dims that are multiples of "
                              "64 (its tiles are 64-column blocks); got D = "
                           << p.headDim << ", Dv = " << p.valueHeadDim;
  if (failed(planWarps(p, op)))
    return failure();
  p.kvElt = cast<MemRefType>(n.loadK.getSrc().getType()).getElementType();
  if (kvFormatOf(p.kvElt) != KVFormat::None) {
    p.kvBytes = true;
    // What ByteFragments.h decodes: mma.sync's B fragments, K in 16-byte
    // slices of 64 columns, V in groups of 32, on Q fragments held in
    // registers, the scales applied per block.
    std::string why =
        whyNoTensorCoreDequant(p.headDim, p.valueHeadDim, n.vFromK());
    if (why.empty() && (p.parts.mma != MmaProvider::MmaSync || !p.registers() ||
                        p.mTiles != 1 || p.dvGroups != 1 || p.blocked()))
      why = "its fragments are decoded for mma.sync's register score "
            "stage with one 16-row m-tile a warp (schedule 'warps' at "
            "least block_q / 16), got " +
            std::to_string(p.mTiles) + " m-tiles a warp";
    if (!why.empty())
      return op->emitError()
             << "the " << tier << " tier cannot decode the quantized K/V "
             << "cache (" << p.kvElt << "): " << why;
  }
  if (p.parts.copies == CopyPipeline::Staggered && p.cpAsync) {
    WgmmaPipeline pipeline = planPipeline(p, n);
    if (pipeline.producer)
      planProducer(p);
    p.qkAhead = pipeline.qkAhead;
    p.pingPong = pipeline.pingPong;
    p.tma = pipeline.kvTma;
    p.qTma = pipeline.qTma;
    p.oTma = pipeline.oTma;
    // Without TMA, the staggered cp.async ring (two stages) or the ring.
  }
  p.vInK = n.vFromK() && p.registers() && !p.warpgroups() && !p.blocked() &&
           !p.staggered && !p.tma && !p.specialized;
  // Byte offsets of the shared tiles, each 128-byte aligned.
  int64_t at = 0;
  auto take = [&](int64_t bytes) {
    int64_t off = at;
    at += roundedTo128(bytes);
    return off;
  };
  const int64_t br = p.br, bc = p.bc, d = p.d, dv = p.dv;
  // Q is read into registers before the loop, so the loop's score,
  // probability and rescale tiles reuse its space (the barrier at the top
  // of the first iteration orders them); K/V follow.
  const int64_t qBytes = roundedTo128(br * p.inputRow(d) * 2);
  const int64_t sBytes = roundedTo128(br * (bc + kPadFloat) * 4);
  const int64_t pBytes = roundedTo128(br * (bc + kPadHalf) * 2);
  const int64_t aBytes = roundedTo128(p.warps * 16 * 16 * 4);
  p.qOff = 0;
  p.sOff = 0;
  p.pOff = sBytes;
  p.aOff = sBytes + pBytes;
  // The register score stage keeps S, P and the rescale in registers.
  at = p.registers() ? qBytes : std::max(qBytes, sBytes + pBytes + aBytes);
  p.kStage = roundedTo128(bc * p.kRowBytes());
  p.vStage = roundedTo128(bc * p.kvRowBytes(dv));
  p.kOff = take(p.stages * p.kStage);
  p.vOff = take((p.staggered ? 1 : p.stages) * p.vStage);
  if (p.vInK) { // no V tiles of their own
    at = p.vOff;
    p.vOff = p.kOff;
    p.vStage = p.kStage;
  }
  if (p.tma)
    p.barOff = take(p.mbarriers() * 8);
  p.oOff = 0;
  if (p.registers()) {
    // Each warp stages its rows of O, already in the output type, over
    // its own rows of Q when they fit there: no other warp reads those,
    // so no block barrier is needed. Otherwise over everything, after
    // one.
    const int64_t outBytes = p.outElt.getIntOrFloatBitWidth() / 8;
    // A blocked Q's rows are not contiguous: stage O over the whole block.
    p.overQ = !p.blocked() && dv * outBytes <= p.inputRow(d) * 2;
    p.oRow = p.overQ ? p.inputRow(d) * 2 / outBytes : dv + 16 / outBytes;
    // O by TMA is staged unpadded, in Q's blocked layout.
    p.smemBytes = std::max(at, p.overQ  ? 0
                               : p.oTma ? br * dv * outBytes
                                        : br * p.oRow * outBytes);
    if (p.kvGroups > 1) {
      // Groups past the first hand their states to it through shared
      // memory, after every warp is done with K/V and before O is
      // staged (beside it, not over it).
      p.xOff =
          roundedTo128(std::max(qBytes, p.overQ ? 0 : br * p.oRow * outBytes));
      p.smemBytes =
          std::max(p.smemBytes, p.xOff + (p.kvGroups - 1) * p.rowWarps *
                                             p.exchangeChunks() * kWarp * 16);
    }
  } else {
    // The f32 staging tile reuses all of it once the loop is done (Q
    // lives in registers by then); each row's m and l follow.
    p.smemBytes = std::max(at, br * (dv + kPadFloat) * 4);
    p.mlOff = roundedTo128(p.smemBytes);
    p.smemBytes = p.mlOff + br * 2 * 4;
  }
  // wgmma's swizzle atoms are 1024 bytes, aligned: every tile is a
  // multiple of 1024 bytes (rows a multiple of 16, 128-byte block rows).
  assert((!p.blocked() || (p.kOff % 1024 == 0 && p.vOff % 1024 == 0 &&
                           p.kStage % 1024 == 0 && p.vStage % 1024 == 0)) &&
         "blocked tiles must start on 1024-byte boundaries");
  if (p.smemBytes > maxSharedMemoryBytes(sm))
    return op->emitError()
           << "the " << tier << " tier needs " << p.smemBytes
           << " bytes of shared memory for D = " << p.headDim
           << ", Dv = " << p.valueHeadDim
           << ", tiles " << br << "x" << bc << ", " << p.stages
           << " K/V stage(s); sm_" << sm << " allows "
           << maxSharedMemoryBytes(sm);
  return p;
}

int64_t mlir::attn::mmaTileSharedBytes(int64_t blockQ, int64_t blockKv,
                                       int64_t d, int64_t dv, int64_t stages,
                                       bool vInK, bool kvBytes) {
  // As planPrefill lays out Q, then `stages` K tiles, then V tiles.
  auto tile = [](int64_t rows, int64_t width) {
    return roundedTo128(
        rows * inputRowOf(llvm::alignTo(width, 16), SharedLayout::Swizzled) *
        2);
  };
  auto kvTile = [&](int64_t width) {
    return kvBytes ? roundedTo128(blockKv * width) : tile(blockKv, width);
  };
  return tile(blockQ, d) + roundedTo128(stages * kvTile(d)) +
         (vInK ? 0 : roundedTo128(stages * kvTile(dv)));
}
