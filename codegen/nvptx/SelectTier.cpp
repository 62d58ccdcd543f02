//===- SelectTier.cpp - attn-select-tier ----------------------------------===//
//
// Few query rows per K/V head (decode) go to the split-K decode tier
// (tensor cores, or SIMT for a few rows), where K/V bandwidth is what
// counts; everything else to the tensor-core tier the pipeline names.
// Every schedule default is chosen here.
//
//===----------------------------------------------------------------------===//

#include "codegen/nvptx/Passes.h"

#include "dialect/AttnDialect.h"
#include "dialect/AttnSemantics.h"
#include "mlir/AsmParser/AsmParser.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNSELECTTIER
#include "codegen/nvptx/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;

namespace {

/// The decode tier's limits (AttnToDecode.cpp): K and V rows of 16-byte
/// slices, at most 32 per key. Rows past 16 (group x Sq) are tiled in
/// 16-row Q tiles, each streaming the K/V range once.
bool fitsDecode(AttentionOp op, int sm) {
  Type elt = cast<MemRefType>(op.getK().getType()).getElementType();
  int64_t vec = 16 / (elt.getIntOrFloatBitWidth() / 8);
  int64_t d = op.getHeadDim(), dv = op.getValueHeadDim();
  if (d % vec == 0 && dv % vec == 0 && std::max(d, dv) <= 32 * vec)
    return true;
  // Wider heads (MLA's 576 / 512) on the tensor-core split kernel alone:
  // f16 or bf16 K/V from sm_80 and more query rows a K/V head than the
  // SIMT kernel takes (a static Sq).
  std::optional<int64_t> sq = op.getStaticQueryLength();
  return sm >= 80 && (elt.isF16() || elt.isBF16()) && d % vec == 0 &&
         dv % vec == 0 && std::max(d, dv) <= kDecodeTensorCoreMaxHeadDim &&
         sq && *sq * op.getGroupSize() > kDecodeSimtMaxRows;
}

/// The decode tier's Q tile: at most 16 rows, kept in registers.
constexpr int64_t kDecodeMaxRows = 16;

/// Fills the schedule fields the op leaves unset (0), keeping the rest.
void fillSchedule(AttentionOp op, int64_t blockQ, int64_t blockKv,
                  int64_t warps, int64_t stages, int64_t unroll = 0) {
  ScheduleAttr s = op.getScheduleAttr();
  if (!s)
    s = ScheduleAttr::get(op.getContext(), 0, 0, 0, 0);
  auto pick = [](int64_t asked, int64_t fallback) {
    return asked ? asked : fallback;
  };
  op.setScheduleAttr(ScheduleAttr::get(
      op.getContext(), pick(s.getBlockQ(), blockQ),
      pick(s.getBlockKv(), blockKv), pick(s.getWarps(), warps),
      pick(s.getStages(), stages), pick(s.getUnroll(), unroll), s.getProducer(),
      s.getQkAhead(), s.getPingPong(), s.getKvLoad(), s.getQLoad(),
      s.getOStore()));
}

/// A pipeline field's wanted value: `asked`'s (the op's schedule), else
/// `defaults`' (attn-select-tier's default-schedule), else `fallback`,
/// where `get` reads the field (`auto`: unset).
template <typename Get, typename Enum>
Enum chosen(ScheduleAttr asked, ScheduleAttr defaults, Get get, Enum fallback) {
  if (asked && get(asked) != Enum::Auto)
    return get(asked);
  if (defaults && get(defaults) != Enum::Auto)
    return get(defaults);
  return fallback;
}

/// Whether the wgmma tier's tiles are to be a producer warpgroup's: the
/// spec's choice, else `defaults`', else yes; a producer needs K/V by TMA.
bool wantsProducer(ScheduleAttr asked, ScheduleAttr defaults) {
  return chosen(
             asked, defaults, [](ScheduleAttr s) { return s.getProducer(); },
             Toggle::On) == Toggle::On &&
         chosen(
             asked, defaults, [](ScheduleAttr s) { return s.getKvLoad(); },
             Transfer::Tma) == Transfer::Tma;
}

/// The prefill tiles of `tier` for head dims up to `dims` on `sm`.
std::pair<int64_t, int64_t> prefillTiles(Tier tier, int64_t dims, int sm) {
  // The mma tier's tiles, measured on an H100 (bench/RESULTS.md): 128-row
  // tiles (two 16-row m-tiles per warp) beat 64 rows by 8-15% at B4 S4096
  // and B32 S512; 64-row tiles stay ahead on grids too small to fill the
  // GPU (B1 S512), which smallGridSchedules covers with alternatives. 64 keys
  // per tile beat 32 by 2-7% at D128 too (S1k-16k, causal and not), but
  // two such blocks (99 KiB each) fit an SM only from sm_90 (228 KiB);
  // below, 128 x 32 keeps two. Past D128, two m-tiles exceed the
  // registers.
  if (tier == Tier::MMA && dims <= 128)
    return {128, dims <= 64 || sm >= 90 ? 64 : 32};
  // The wgmma tier: one warpgroup of 64 rows against 64 keys. Measured on
  // an H100 (bench/RESULTS.md, B4 S4096): at D128 477 TFLOP/s against 441
  // for 128x128 (two warpgroups, 201 registers and 160 KiB: one block an
  // SM) and 415 for 128x64; causal 427 against 400. At D64 64x64 and
  // 64x128 ran 419-455, 128x128 333. Small blocks let two or three share
  // an SM, so one block's softmax overlaps another's wgmma. At D256,
  // 128x64 (the only tile measured, in the suite).
  if (tier == Tier::WGMMA)
    return {dims <= 128 ? 64 : 128, 64};
  // The wmma tier's tile: 64 query rows (4 warps) x 32 keys. Measured on
  // an H100: 32 keys beat 64 (136 vs 114 TFLOP/s at D128, 107 vs 97 at
  // D64) because the smaller score tile and fewer registers let three
  // blocks share an SM instead of two; 128-row tiles were no faster. It
  // also keeps D = 128 inside Turing's 64 KiB.
  return {64, 32};
}

/// The prefill tiles attn-select-tier gives `op` on `tier`: prefillTiles',
/// but where a producer warpgroup is wanted (`wgmmaProducer`: the schedule
/// asks for one and for K/V by TMA) and the operands allow TMA, past D64
/// two consumer warpgroups (128 rows) and 128 keys up to D128 (one block
/// an SM: 160 KiB at D128). Measured on an H100 (bench/RESULTS.md): 4-13%
/// faster than 64 x 64 without one at D128 from S 2k; at D64 5% slower
/// (64 x 64, several blocks an SM, stays).
std::pair<int64_t, int64_t> selectedPrefillTiles(AttentionOp op, Tier tier,
                                                 int sm, bool wgmmaProducer) {
  int64_t dims = std::max(op.getHeadDim(), op.getValueHeadDim());
  if (tier == Tier::WGMMA && wgmmaProducer && dims > 64 &&
      whyNoTmaOperands(op).empty())
    return {128, dims <= 128 ? 128 : 64};
  return prefillTiles(tier, dims, sm);
}

/// Query rows per K/V head (group x Sq), or none when Sq is dynamic (a
/// packed Q: without max_q_len).
std::optional<int64_t> staticGroupRows(AttentionOp op) {
  std::optional<int64_t> sq = op.getStaticQueryLength();
  if (!sq)
    return std::nullopt;
  return *sq * op.getGroupSize();
}

/// The tier of `op`: its own attn.tier, else decode for a static Sq of at
/// most 16 queries (any group size), else `prefillTier`, except where
/// that is wgmma and the op does not fit it: mma.
Tier tierOf(AttentionOp op, Tier prefillTier, int sm) {
  if (auto chosen = op->getAttrOfType<TierAttr>(kTierAttrName))
    return chosen.getValue();
  std::optional<int64_t> sq = op.getStaticQueryLength();
  if (sq && *sq <= kDecodeMaxQueries && fitsDecode(op, sm))
    return Tier::Decode;
  if (prefillTier == Tier::WGMMA && !whyNotWgmma(op).empty())
    return Tier::MMA;
  return prefillTier;
}

/// Why a float decode takes the SIMT split kernel ("" where it takes
/// tensor cores).
std::string whyFloatDecodeSimt(AttentionOp op, int sm, bool tensorCores) {
  std::string why;
  llvm::raw_string_ostream os(why);
  Type elt = cast<MemRefType>(op.getQ().getType()).getElementType();
  ScheduleAttr asked = op.getScheduleAttr();
  // With a dynamic Sq, a Q tile for one query a sequence (decode).
  int64_t rows = staticGroupRows(op).value_or(op.getGroupSize());
  if (!elt.isF16() && !elt.isBF16())
    os << elt << " inputs (tensor cores take f16 or bf16)";
  else if (sm < 80)
    os << "no mma.sync on sm_" << sm;
  else if (asked && asked.getBlockQ() &&
           asked.getBlockQ() <= kDecodeSimtMaxRows)
    os << "the spec's block_q " << asked.getBlockQ()
       << " (8 rows or fewer ask for it)";
  else if (rows > kDecodeSimtMaxRows)
    return "";
  // Few rows take tensor cores on sm_90+ only: measured on an H100, and
  // the kernel's 68-135 KiB of stages fit no consumer part that runs
  // sm_80 code (99 KiB a block), where the SIMT kernel's 17 do.
  else if (sm < 90)
    os << "8 rows or fewer on sm_" << sm
       << " (tensor cores take them from sm_90)";
  else if (!tensorCores)
    os << "8 rows or fewer with decode-tensor-cores=false";
  return why;
}

/// A quantized K/V cache runs on the decode tier's SIMT kernel, which
/// decodes its bytes; the tensor-core kernels do not yet (said in a
/// remark where they would have run it), and fp8 Q has no NVIDIA kernel.
LogicalResult checkQuantized(AttentionOp op, Tier tier) {
  Type kElt = cast<MemRefType>(op.getK().getType()).getElementType();
  if (op.isQuantizedQ())
    return op.emitOpError()
           << "has an fp8 Q ("
           << cast<MemRefType>(op.getQ().getType()).getElementType()
           << "), which no NVIDIA tier lowers yet (fp8 prefill); the CPU "
              "pipeline (attn-to-cpu) runs it";
  if (tier != Tier::Decode)
    return op.emitOpError()
           << "has a quantized K/V cache (" << kElt
           << "), which on NVIDIA only the decode tier lowers (a static "
              "q_len of at most "
           << kDecodeMaxQueries
           << " queries, D and Dv multiples of 16 up to 512); this spec "
              "would run on the "
           << stringifyTier(tier)
           << " tier, which does not dequantize yet. The CPU pipeline "
              "(attn-to-cpu) runs it";
  return success();
}

struct AttnSelectTierPass
    : mlir::attn::impl::AttnSelectTierBase<AttnSelectTierPass> {
  using AttnSelectTierBase::AttnSelectTierBase;

  void runOnOperation() override {
    // The defaults of the schedule's choices, as an #attn.schedule (for
    // A/B runs and tuning: `producer = off` builds one-role kernels).
    ScheduleAttr defaults;
    if (!defaultSchedule.empty()) {
      Attribute parsed = parseAttribute(defaultSchedule, &getContext());
      defaults = dyn_cast_if_present<ScheduleAttr>(parsed);
      if (!defaults) {
        getOperation().emitError()
            << "attn-select-tier: option 'default-schedule' must be an "
               "#attn.schedule<...>; got '"
            << defaultSchedule << "'";
        return signalPassFailure();
      }
    }
    std::optional<Tier> prefillTier = symbolizeTier(prefill);
    if (!prefillTier || *prefillTier == Tier::Decode ||
        *prefillTier == Tier::Copy) {
      getOperation().emitError()
          << "attn-select-tier: option 'prefill' must be mma, wmma or wgmma, "
             "got '"
          << prefill << "'";
      return signalPassFailure();
    }
    WalkResult walked = getOperation().walk([&](AttentionOp op) {
      Tier tier = tierOf(op, *prefillTier, sm);
      if (op.isQuantizedKV() && failed(checkQuantized(op, tier)))
        return WalkResult::interrupt();
      if (tier == Tier::Copy) {
        op.emitOpError() << "'" << kTierAttrName
                         << "' is #attn.tier<copy>, the tier of "
                            "attn.cache_append; attention needs wmma, mma, "
                            "wgmma or decode";
        return WalkResult::interrupt();
      }
      if (!op->hasAttr(kTierAttrName))
        op->setAttr(kTierAttrName, TierAttr::get(op.getContext(), tier));
      // Only the wgmma tier has the pipeline fields: on another, said and
      // dropped.
      if (ScheduleAttr asked = op.getScheduleAttr();
          asked && asked.hasPipeline() && tier != Tier::WGMMA) {
        op.emitRemark() << "the " << stringifyTier(tier)
                        << " tier has no TMA, producer warpgroup or Q K^T "
                           "ahead: the schedule's pipeline fields are "
                           "ignored";
        op.setScheduleAttr(asked.withoutPipeline());
      }
      // Only the decode tier's SIMT kernel has `unroll`.
      auto dropUnroll = [&](StringRef kernel) {
        ScheduleAttr s = op.getScheduleAttr();
        if (!s || !s.getUnroll())
          return;
        op.emitRemark() << kernel
                        << " has no 'unroll' (the decode tier's SIMT "
                           "kernel's): the schedule's is ignored";
        op.setScheduleAttr(s.withUnroll(0));
      };
      if (tier == Tier::Decode) {
        // With a dynamic Sq, a Q tile for one query a sequence (decode).
        int64_t rows = staticGroupRows(op).value_or(op.getGroupSize());
        int64_t pow2 = static_cast<int64_t>(llvm::PowerOf2Ceil(rows));
        int64_t tensorCoreRows = std::clamp<int64_t>(pow2, 16, 64);
        if (whyDecodeSimt(op, sm, decodeTensorCores).empty()) {
          // Tensor-core split kernel: a Q tile of the group's rows, 16 to
          // 64 (one m-tile per warp), 64 keys per tile; four warps, which
          // split each tile's keys where there are fewer than 64 rows.
          // It is bound by memory, so four K/V stages where they fit: on
          // an H100 8% faster than two at MQA B8 Sk16k, 4% at
          // speculative decode B8 (bench/RESULTS.md). It takes few rows
          // too (GQA-4, MHA), padded to 16: the SIMT kernel spends about
          // a hundred instructions a key on its shuffles and online
          // softmax and is bound by issue (ncu: 0.75 issued a scheduler
          // cycle, long-scoreboard stalls 2%), the mma.sync one a few; on
          // an H100 GQA-4 D128 decode ran 3-15% faster, MHA and GQA-2
          // 1-5% (bench/RESULTS.md).
          int64_t stages = std::max<int64_t>(1, decodeTensorCoreStages);
          int64_t keys = 64;
          // A quantized cache's tiles are half the bytes: 128 keys and two
          // stages, the f16 tiles' bytes in flight. On an H200 at GQA-4
          // D128 fp8 (B1 Sk128k, B8 Sk16k, B64 Sk4k): 75.7 / 75.8 / 136.5
          // us, against 78.0 / 78.1 / 173.6 with 64 keys and four stages,
          // 77.4 / 77.6 / 149.4 with 128 keys and four (bench/RESULTS.md).
          if (op.isQuantizedKV()) {
            keys = 128;
            stages = 2;
          }
          auto fits = [&](int64_t n) {
            return mmaTileSharedBytes(tensorCoreRows, keys, op.getHeadDim(),
                                      op.getValueHeadDim(), n, op.getVFromK(),
                                      op.isQuantizedKV()) <=
                   maxSharedMemoryBytes(sm);
          };
          if (!fits(stages))
            stages = defaultStages(sm);
          // Wide heads (MLA's 576 / 512): the warps past the rows' split
          // Dv (PrefillPlan.h, dvGroups), eight where there are 32 rows or
          // more (16 x 128 or 16 x 256 accumulators a warp, not 16 x 512).
          // Tiles measured on an H200 (bench/RESULTS.md), Hq16 B64 Sk4k
          // and Hq128 B128 Sk4k: with V read from K's tile (v_from_k),
          // 32 keys and two stages below 64 rows (112 us; one stage 133,
          // 64 keys 130, 16 keys 130) and 64 keys and one stage from 64
          // (864 us; 32 keys and two stages 892); with a V of its own, 32
          // keys and one stage below 64 rows (141 us; two stages 212, 64
          // keys 263) and 32 keys and two stages from 64 (991 us; one
          // stage 1,076).
          const bool wide =
              std::max(op.getHeadDim(), op.getValueHeadDim()) > 256;
          const int64_t dvWarps = tensorCoreRows >= 32 ? 8 : 4;
          const bool splitsDv =
              wide && splitsValueColumns(op.getValueHeadDim(),
                                         dvWarps / (tensorCoreRows / 16));
          const int64_t warps = splitsDv ? dvWarps : 4;
          const int64_t keyGroups =
              std::max<int64_t>(1, warps / (tensorCoreRows / 16));
          if (splitsDv) {
            const bool many = tensorCoreRows >= 64;
            keys = op.getVFromK() && many ? 64 : 32;
            stages = op.getVFromK() != many ? 2 : 1;
          }
          if (!fits(stages))
            stages = 1;
          // Then fewer keys a tile, down to 16 for each of the warps that
          // split a tile's keys (4 warps over 16-row m-tiles).
          while (!fits(stages) && keys / 2 >= 16 * (splitsDv ? 1 : keyGroups))
            keys /= 2;
          fillSchedule(op, tensorCoreRows, keys, warps, stages);
          if (splitsDv)
            op.emitRemark()
                << "D " << op.getHeadDim() << " / Dv " << op.getValueHeadDim()
                << " decodes on the tensor-core split kernel with " << stages
                << " K/V stage(s), " << keyGroups << " warps a row splitting Dv"
                << (op.getVFromK() ? ", V read from K's tile" : "")
                << ": not yet an MLA kernel (each of a row's warps "
                   "computes the tile's scores, on mma.sync, not wgmma)";
          else if (wide)
            op.emitRemark()
                << "D " << op.getHeadDim() << " / Dv " << op.getValueHeadDim()
                << " decodes on the tensor-core split kernel with " << stages
                << " K/V stage(s); each warp keeps 16 x Dv f32 "
                   "accumulators, past its registers (it spills)";
          dropUnroll("the decode tier's tensor-core split kernel");
          return WalkResult::advance();
        }
        if (op.isQuantizedKV() &&
            whyFloatDecodeSimt(op, sm, decodeTensorCores).empty())
          op.emitRemark() << "decodes on the SIMT split kernel: "
                          << whyDecodeSimt(op, sm, decodeTensorCores);
        // SIMT split kernel: a Q tile of the group's rows, at most 16 (the
        // kernel's most, also when Sq is dynamic and the user chose
        // decode). It reads keys one at a time; the nest's K/V tile only
        // bounds its loop. 128 threads, 2 keys per key group a trip, 2
        // trips in flight where cp.async is (bench/RESULTS.md: the
        // shapes measured best on an H100). A quantized cache's lanes read
        // 16 one-byte elements a key and decode them: 4 keys a trip, 10%
        // faster than 2 at GQA-4 D128 fp8 on an H200 (bench/RESULTS.md).
        fillSchedule(op, std::min(pow2, kDecodeMaxRows), 32,
                     kDecodeSimtThreads / 32, defaultStages(sm),
                     op.isQuantizedKV() ? kDecodeSimtQuantizedUnroll
                                        : kDecodeSimtUnroll);
        return WalkResult::advance();
      }
      ScheduleAttr asked = op.getScheduleAttr();
      auto [blockQ, blockKv] =
          selectedPrefillTiles(op, tier, sm, wantsProducer(asked, defaults));
      int64_t rows = asked && asked.getBlockQ() ? asked.getBlockQ() : blockQ;
      // wgmma keeps two stages too: a third runs Q K^T a tile ahead
      // (PrefillPlan.h, `qkAhead`), which measured 7-11% slower on an H100
      // (bench/RESULTS.md), so only a schedule asks for it.
      // The mma tier's stages where they fit a block's shared memory;
      // else one (wide heads: MLA's 576 / 512 on sm_80), said.
      int64_t stages = defaultStages(sm);
      if (tier == Tier::MMA && stages > 1 && !(asked && asked.getStages())) {
        const int64_t keys =
            asked && asked.getBlockKv() ? asked.getBlockKv() : blockKv;
        auto bytes = [&](int64_t n) {
          return mmaTileSharedBytes(rows, keys, op.getHeadDim(),
                                    op.getValueHeadDim(), n, op.getVFromK());
        };
        if (bytes(stages) > maxSharedMemoryBytes(sm) &&
            bytes(1) <= maxSharedMemoryBytes(sm)) {
          op.emitRemark() << "the mma tier's " << stages << " K/V stages need "
                          << bytes(stages) << " bytes of shared memory at D "
                          << op.getHeadDim() << " / Dv " << op.getValueHeadDim()
                          << "; sm_" << static_cast<int>(sm) << " allows "
                          << maxSharedMemoryBytes(sm)
                          << ": one stage (no copy ahead of the math)";
          stages = 1;
        }
      }
      fillSchedule(op, blockQ, blockKv, defaultWarps(tier, rows), stages);
      dropUnroll(("the " + stringifyTier(tier) + " tier").str());
      if (tier != Tier::WGMMA)
        return WalkResult::advance();
      // Every pipeline choice written down: what the kernel will do.
      ScheduleAttr filled = op.getScheduleAttr();
      WgmmaPipeline pipeline =
          resolveWgmmaPipeline(wgmmaKernelShape(op, filled), asked, defaults,
                               [&](StringRef field, StringRef why) {
                                 op.emitRemark()
                                     << "the wgmma tier cannot honour the "
                                        "schedule's '"
                                     << field << "': " << why;
                               });
      op.setScheduleAttr(withPipeline(filled, pipeline));
      return WalkResult::advance();
    });
    if (walked.wasInterrupted())
      signalPassFailure();
  }
};

} // namespace

int64_t mlir::attn::defaultWarps(Tier tier, int64_t blockQ) {
  // wgmma: one warp per 16 rows, so 4 (a warpgroup) per 64.
  return tier == Tier::MMA ? std::min<int64_t>(4, blockQ / 16) : blockQ / 16;
}

int64_t mlir::attn::defaultStages(int sm) { return sm >= 80 ? 2 : 1; }

std::string mlir::attn::whyNotWgmma(AttentionOp op) {
  std::string why;
  llvm::raw_string_ostream os(why);
  Type elt = cast<MemRefType>(op.getQ().getType()).getElementType();
  int64_t d = op.getHeadDim(), dv = op.getValueHeadDim();
  ScheduleAttr s = op.getScheduleAttr();
  if (!elt.isF16() && !elt.isBF16())
    os << elt << " inputs (wgmma takes f16 or bf16)";
  else if (d % 64 || dv % 64)
    os << "D " << d << " / Dv " << dv
       << " not multiples of 64 (its tiles are 64-column blocks)";
  // Its smallest tile (64 rows, 64 keys, two stages) needs 64 x (D + Dv)
  // x 4 bytes of K/V stages and a 64 x Dv accumulator in one warpgroup's
  // registers: past 256 neither fits (MLA's 576 / 512 needs 278 KiB).
  else if (std::max(d, dv) > 256)
    os << "D " << d << " / Dv " << dv
       << " past 256 (its K/V stages exceed the shared memory)";
  else if (s && s.getBlockQ() % 64)
    os << "block_q " << s.getBlockQ()
       << " not a multiple of 64 (one warpgroup per 64 rows)";
  else if (s && s.getWarps() && s.getBlockQ() &&
           s.getWarps() != s.getBlockQ() / 16)
    os << "schedule warps " << s.getWarps() << " for block_q " << s.getBlockQ()
       << " (the tier runs block_q / 16)";
  return why;
}

std::string mlir::attn::whyDecodeSimt(AttentionOp op, int sm,
                                      bool tensorCores) {
  if (op.isQuantizedKV()) {
    std::string why = whyNoTensorCoreDequant(
        op.getHeadDim(), op.getValueHeadDim(), op.getVFromK());
    if (!why.empty())
      return "a quantized K/V cache with " + why;
  }
  return whyFloatDecodeSimt(op, sm, tensorCores);
}

std::string mlir::attn::whyNoTmaOperands(bool paged, bool packed, bool kvLens,
                                         int64_t headDim, int64_t valueHeadDim,
                                         bool vFromK) {
  if (vFromK)
    return "V is K's leading columns (v_from_k), which libattnrt encodes "
           "no tensor map of";
  if (paged)
    return "K/V are paged (a block table maps onto no one tensor map)";
  if (packed)
    return "K/V are packed (cu_seqlens_k)";
  if (kvLens)
    return "kv_lens ends sequences inside the cache, where a tensor map "
           "reads cache memory, not zeros";
  if (headDim % 64 || valueHeadDim % 64)
    return "its head dims are not multiples of 64 (64-column boxes)";
  return "";
}

std::string mlir::attn::whyNoTmaOperands(AttentionOp op) {
  return whyNoTmaOperands(op.getBlockTable() != nullptr,
                          op.getCuSeqlensK() != nullptr,
                          op.getKvLens() != nullptr, op.getHeadDim(),
                          op.getValueHeadDim(), op.getVFromK());
}

std::string mlir::attn::whyNoQTmaOperands(bool packedQ, int64_t blockQ,
                                          int64_t group) {
  if (packedQ)
    return "Q is packed (cu_seqlens_q)";
  if (blockQ % group && group % blockQ)
    return "its " + std::to_string(blockQ) + "-row tiles cut " +
           std::to_string(group) + "-head groups";
  return "";
}

std::string mlir::attn::whyNoOTmaOperands(bool packedQ, unsigned outBits,
                                          int64_t blockQ, int64_t group) {
  if (outBits != 16)
    return "O has " + std::to_string(outBits) +
           "-bit elements (its staging tile holds 16-bit ones)";
  return whyNoQTmaOperands(packedQ, blockQ, group);
}

bool mlir::attn::decodesAtRunTime(AttentionOp op) {
  // A dynamic Sq never takes fitsDecode's wide heads (a static Sq's).
  return !op.getStaticQueryLength() && !op->hasAttr(kTierAttrName) &&
         fitsDecode(op, /*sm=*/0);
}

bool mlir::attn::decodeOnTensorCores(int64_t blockQ, Type qElt, Type kvElt,
                                     int sm, bool dequantizes) {
  return blockQ > kDecodeSimtMaxRows && (qElt.isF16() || qElt.isBF16()) &&
         (kvElt == qElt ||
          (kvFormatOf(kvElt) != KVFormat::None && dequantizes)) &&
         sm >= 80;
}

std::string mlir::attn::whyNoTensorCoreDequant(int64_t headDim,
                                               int64_t valueHeadDim,
                                               bool vFromK) {
  if (vFromK)
    return "V is K's leading columns (v_from_k), which the tensor-core "
           "split kernel reads as f16 or bf16 only";
  // Rows of a power of two of 16-byte chunks: the bytes layout's swizzle
  // permutes a row's chunks by XOR (TileMMA.h, byteChunkSwizzle).
  auto rows = [](int64_t width, int64_t unit) {
    return width % unit == 0 && width <= 256 && llvm::isPowerOf2_64(width / 16);
  };
  if (!rows(headDim, 64) || !rows(valueHeadDim, 32))
    return "D " + std::to_string(headDim) + " / Dv " +
           std::to_string(valueHeadDim) +
           " (the tensor-core split kernel decodes K in 64-column slices "
           "and V in 32-column groups, each row a power of two of 16-byte "
           "chunks, at most 256 bytes)";
  return "";
}

bool mlir::attn::decodeOnWgmma(StringRef chip, int64_t blockQ, int64_t headDim,
                               int64_t valueHeadDim, Type kvElt) {
  // P V's N is Dv, which one wgmma takes up to 256 (wider heads, MLA's
  // 512, run on mma.sync).
  return hasWgmma(chip) && blockQ % 64 == 0 && headDim % 64 == 0 &&
         valueHeadDim % 64 == 0 && std::max(headDim, valueHeadDim) <= 256 &&
         kvFormatOf(kvElt) == KVFormat::None;
}

bool mlir::attn::usesArchSpecificCode(AttentionOp op, StringRef chip) {
  if (!hasWgmma(chip))
    return false;
  auto tier = op->getAttrOfType<TierAttr>(kTierAttrName);
  if (!tier)
    return false;
  if (tier.getValue() == Tier::WGMMA)
    return true;
  ScheduleAttr schedule = op.getScheduleAttr();
  FailureOr<int> sm = parseChip(chip);
  return tier.getValue() == Tier::Decode && schedule && succeeded(sm) &&
         decodeOnTensorCores(
             schedule.getBlockQ(),
             cast<MemRefType>(op.getQ().getType()).getElementType(),
             cast<MemRefType>(op.getK().getType()).getElementType(), *sm,
             whyNoTensorCoreDequant(op.getHeadDim(), op.getValueHeadDim(),
                                    op.getVFromK())
                 .empty()) &&
         decodeOnWgmma(chip, schedule.getBlockQ(), op.getHeadDim(),
                       op.getValueHeadDim(),
                       cast<MemRefType>(op.getK().getType()).getElementType());
}

// The mma tier's default 128-row tiles are the fastest once every SM has a
// block, but a small problem (B1 H8 S512: 32 blocks for 132 SMs) leaves
// most of the GPU idle. Measured on an H100 (bench/RESULTS.md), 64x64
// tiles win there by 1.1-1.6x at D64 and D128 and lose by up to 1.4x on
// grids of 2+ blocks per SM; where even the 64-row grid is short of the
// SMs, 128-key tiles split among 8 warps shorten each warp's chain of
// tiles: 32 rows at D64 (2 row warps, 4 key groups; B1 H8 S512 9.5
// against 12.1 us on 64x64), 64 rows past D64 (4 and 2), where a 32-row
// block's 136 KiB leave one block per SM (B1 H16 S512 D128: 64 rows 15.4
// us, 32 rows 20.3, 64x64 16.0; causal B1 H8 S1024: 21.3, 27.3, 23.3).
// So a kernel without a schedule of its own gets all of them; libattnrt
// launches the first, largest first, whose grid has a block for every
// multiprocessor, else the last (attnrt_attention.h).
namespace {
struct SmallGridTile {
  const char *suffix;
  int64_t rows, keys, warps;
};
constexpr SmallGridTile kSmallGridTiles[] = {{"_small_grid", 64, 64, 0},
                                             {"_tiny_grid", 32, 128, 8}};

/// The K/V length up to which the one-role 64x64 wgmma tile (`rows` x
/// `keys`, no extra warps) beats the 128-row producer tile (`defaultRows`)
/// of `op` (head dims up to `dims`, mask from `op`)
/// even on grids that fill the GPU; 0 where not measured. There each
/// 128-row block sees few K/V tiles and pays its first tile's latency
/// alone, which three 64-row blocks an SM hide. H100, H16 D128 (µs,
/// bench/RESULTS.md): S512 B32 165 against 179 (non-causal S1k B16 281
/// against 276: the bound is 512), causal S512 B32 118 against 148, S1k
/// B16 174 against 201, S1.5k B10 226 against 241 and S2k B8 304 against
/// 309 (causal blocks see half the tiles or fewer: 2048). At D256
/// the 64x64 tile (131 KiB, one block an SM) lost at every length tried
/// (S512 B32 229 against 149 µs), so D256 has no such alternative.
int64_t shortKvLen(AttentionOp op, int64_t dims, int64_t defaultRows,
                   int64_t rows, int64_t keys, int64_t warps) {
  if (defaultRows != 128 || rows != 64 || keys != 64 || warps || dims > 128)
    return 0;
  MaskAttr mask = op.getMaskAttr();
  bool causal = mask && mask.getKind() == MaskKind::Causal;
  return causal ? 2048 : 512;
}
} // namespace

SmallVector<AlternativeSchedule>
mlir::attn::smallGridSchedules(AttentionOp op, int sm, Tier prefill) {
  // Only a prefill without a schedule of its own that attn-to-ptx puts on
  // 128-row mma tiles.
  const int64_t dims = std::max(op.getHeadDim(), op.getValueHeadDim());
  if (op.getScheduleAttr() || defaultPrefillTier(sm) != Tier::MMA ||
      tierOf(op, Tier::MMA, sm) != Tier::MMA ||
      prefillTiles(Tier::MMA, dims, sm).first <= kSmallGridTiles[0].rows)
    return {};
  SmallVector<AlternativeSchedule> schedules;
  for (SmallGridTile tile : kSmallGridTiles) {
    if (tile.warps && dims > 64)
      tile.rows = 64;
    // Halve the keys (down to 16 per group) until Q and two stages of K/V
    // fit the chip's shared memory (64 rows and 128 keys at D128 take 144
    // KiB); O's staging and the key groups' exchange reuse that space.
    // libattnrt skips a kernel the GPU it runs on cannot fit: sm_80 code
    // also runs on sm_86 and sm_89, which allow 99 KiB.
    int64_t keys = tile.keys,
            groups = std::max<int64_t>(1, tile.warps / (tile.rows / 16));
    while (keys / 2 >= 16 * groups &&
           mmaTileSharedBytes(tile.rows, keys, op.getHeadDim(),
                              op.getValueHeadDim(),
                              /*stages=*/2) > maxSharedMemoryBytes(sm))
      keys /= 2;
    // The wgmma tier's default tile may be this one already (64x64 at
    // D64; past D64 with a producer it is 128 rows, and the 64x64 one-role
    // kernel is the alternative: B1 H16 S1k D128 27.5 us against 43.3 on
    // the 8-warp mma tile, bench/RESULTS.md).
    int64_t maxKvLen = 0;
    if (prefill == Tier::WGMMA && tierOf(op, prefill, sm) == Tier::WGMMA) {
      auto [rows, cols] = selectedPrefillTiles(op, Tier::WGMMA, sm,
                                               /*wgmmaProducer=*/true);
      if (tile.rows == rows && keys == cols &&
          (!tile.warps || tile.warps == defaultWarps(Tier::WGMMA, rows)))
        continue;
      maxKvLen = shortKvLen(op, dims, rows, tile.rows, keys, tile.warps);
    }
    schedules.push_back(
        {tile.suffix,
         ScheduleAttr::get(op.getContext(), tile.rows, keys, tile.warps, 0),
         maxKvLen});
  }
  return schedules;
}

WgmmaKernelShape mlir::attn::wgmmaKernelShape(AttentionOp op,
                                              ScheduleAttr filled) {
  WgmmaKernelShape k;
  k.paged = op.getBlockTable() != nullptr;
  k.packedK = op.getCuSeqlensK() != nullptr;
  k.kvLens = op.getKvLens() != nullptr;
  k.packedQ = op.isPackedQ();
  k.headDim = op.getHeadDim();
  k.valueHeadDim = op.getValueHeadDim();
  k.vFromK = op.getVFromK();
  k.group = op.getGroupSize();
  k.outBits = cast<MemRefType>(op.getO().getType()).getElementTypeBitWidth();
  k.blockQ = filled.getBlockQ();
  k.blockKv = filled.getBlockKv();
  k.warps = filled.getWarps();
  k.stages = filled.getStages();
  return k;
}

WgmmaPipeline mlir::attn::resolveWgmmaPipeline(
    const WgmmaKernelShape &k, ScheduleAttr asked, ScheduleAttr defaults,
    function_ref<void(StringRef field, StringRef why)> refused) {
  // What is wanted: the schedule's choice, else the defaults', else the
  // measured default (bench/RESULTS.md: ping-pong measured no faster).
  auto want = [&](auto get, auto fallback) {
    return chosen(asked, defaults, get, fallback);
  };
  auto on = [](Toggle t) { return t == Toggle::On; };
  auto tma = [](Transfer t) { return t == Transfer::Tma; };
  bool wantKv =
      tma(want([](ScheduleAttr s) { return s.getKvLoad(); }, Transfer::Tma));
  bool wantQ =
      tma(want([](ScheduleAttr s) { return s.getQLoad(); }, Transfer::Tma));
  bool wantO =
      tma(want([](ScheduleAttr s) { return s.getOStore(); }, Transfer::Tma));
  bool wantProducer =
      on(want([](ScheduleAttr s) { return s.getProducer(); }, Toggle::On));
  bool wantAhead =
      on(want([](ScheduleAttr s) { return s.getQkAhead(); }, Toggle::On));
  bool wantPingPong =
      on(want([](ScheduleAttr s) { return s.getPingPong(); }, Toggle::Off));

  WgmmaPipeline p;
  // K/V by TMA: the operands' rules, then whole 64-row boxes.
  std::string &kvWhy = p.whyNoKvTma;
  kvWhy = whyNoTmaOperands(k.paged, k.packedK, k.kvLens, k.headDim,
                           k.valueHeadDim, k.vFromK);
  if (kvWhy.empty() && k.blockKv % 64)
    kvWhy = "its K/V tiles are not whole 64-row boxes";
  // A producer warpgroup sends every K/V tile by TMA into rings of two or
  // more stages; one consumer warpgroup (64-row tiles) would gain nothing
  // from its registers: two or more.
  std::string &producerWhy = p.whyNoProducer;
  producerWhy = !wantKv          ? "K/V do not come by TMA (kv_load = threads)"
                : !kvWhy.empty() ? kvWhy
                : k.stages < 2   ? "it takes two or more K/V stages"
                : k.warps < 8    ? "it takes two or more consumer warpgroups "
                                   "(block_q 128 or more)"
                                 : "";
  p.producer = wantProducer && producerWhy.empty();
  // Without a producer, TMA takes the staggered two stages only.
  if (kvWhy.empty() && !p.producer && k.stages != 2)
    kvWhy = "its K/V stages are neither the staggered two nor a producer "
            "warpgroup's ring";
  p.kvTma = wantKv && kvWhy.empty();
  // Q K^T a tile ahead holds a second score tile: under a producer up to
  // D128 (at D256 ptxas spills, 4% slower on an H100); without one,
  // three or more stages run it (bench/RESULTS.md).
  std::string aheadWhy;
  if (p.producer) {
    p.qkAhead = wantAhead && std::max(k.headDim, k.valueHeadDim) <= 128;
    if (wantAhead && !p.qkAhead)
      aheadWhy = "past D128 the second score tile spills";
  } else {
    p.qkAhead = k.stages >= 3;
    aheadWhy = p.qkAhead ? "without a producer warpgroup, three or more "
                           "stages run Q K^T ahead"
                         : "without a producer warpgroup, it takes three "
                           "or more stages";
  }
  std::string pingWhy = !p.producer    ? "there is no producer warpgroup"
                        : !p.qkAhead   ? "Q K^T is not a tile ahead"
                        : k.warps != 8 ? "it takes exactly two consumer "
                                         "warpgroups"
                                       : "";
  p.pingPong = wantPingPong && pingWhy.empty();
  std::string &qWhy = p.whyNoQTma;
  qWhy = !p.kvTma ? "its K/V tiles do not come by TMA"
                  : whyNoQTmaOperands(k.packedQ, k.blockQ, k.group);
  p.qTma = wantQ && qWhy.empty();
  // O's map is Q's view of O: its own rules first, then Q's copies.
  std::string &oWhy = p.whyNoOTma;
  oWhy = whyNoOTmaOperands(k.packedQ, k.outBits, k.blockQ, k.group);
  if (oWhy.empty() && !p.qTma)
    oWhy = "Q does not come by TMA";
  p.oTma = wantO && oWhy.empty();

  // The schedule's own choices the kernel cannot honour, said.
  if (!asked)
    return p;
  if (asked.getProducer() == Toggle::On && !p.producer)
    refused("producer", producerWhy);
  if (asked.getKvLoad() == Transfer::Tma && !p.kvTma)
    refused("kv_load", kvWhy);
  if (asked.getQkAhead() != Toggle::Auto && on(asked.getQkAhead()) != p.qkAhead)
    refused("qk_ahead", aheadWhy);
  if (asked.getPingPong() == Toggle::On && !p.pingPong)
    refused("ping_pong", pingWhy);
  if (asked.getQLoad() == Transfer::Tma && !p.qTma)
    refused("q_load", qWhy);
  if (asked.getOStore() == Transfer::Tma && !p.oTma)
    refused("o_store", oWhy);
  return p;
}

ScheduleAttr mlir::attn::withPipeline(ScheduleAttr s, const WgmmaPipeline &p) {
  auto toggle = [](bool on) { return on ? Toggle::On : Toggle::Off; };
  auto transfer = [](bool tma) {
    return tma ? Transfer::Tma : Transfer::Threads;
  };
  return ScheduleAttr::get(s.getContext(), s.getBlockQ(), s.getBlockKv(),
                           s.getWarps(), s.getStages(), s.getUnroll(),
                           toggle(p.producer), toggle(p.qkAhead),
                           toggle(p.pingPong), transfer(p.kvTma),
                           transfer(p.qTma), transfer(p.oTma));
}
