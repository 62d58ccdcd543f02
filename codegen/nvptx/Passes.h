//===- Passes.h - attn NVIDIA code generation -------------------*- C++ -*-===//

#ifndef ATTN_CODEGEN_NVPTX_PASSES_H
#define ATTN_CODEGEN_NVPTX_PASSES_H

#include "codegen/nvptx/AttnNVDialect.h"
#include "codegen/nvptx/Target.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"

namespace mlir::attn {

/// The decode tier's two split kernels: the tensor-core one (the mma
/// tier's skeleton in its split-K form, wgmma's on sm_90a), for f16/bf16
/// on sm_90+ and for more than 8 rows on sm_80+ (attn-select-tier's
/// decode-tensor-cores), keeps
/// kDecodeTensorCoreStages K/V tiles in flight where the chip's shared
/// memory holds them; the SIMT one (f32, sm_75, few rows on sm_80-89)
/// keeps its Q tile's rows in registers, at most kDecodeSimtMaxRows of
/// them before it spills (measured on an H100: 16 rows of D128 ran MQA at
/// 0.08 TB/s).
inline constexpr int64_t kDecodeSimtMaxRows = 8;
/// The widest head the decode tier's tensor-core split kernel takes
/// (MLA's 576); the SIMT kernel's 32 lanes of 16 bytes take 256 (f16).
inline constexpr int64_t kDecodeTensorCoreMaxHeadDim = 576;
/// Whether `groups` warps that would split a tile's keys split a value
/// head of `dv` columns instead (mma.sync's register score stage;
/// PrefillPlan.h, dvGroups): past 256 columns, whole 16-column blocks each.
inline bool splitsValueColumns(int64_t dv, int64_t groups) {
  return groups > 1 && dv > 256 && dv % (16 * groups) == 0;
}
/// The SIMT split kernel's shape by default (attn-select-tier; a schedule
/// may set its `warps`, `unroll` and `stages`).
inline constexpr int64_t kDecodeSimtThreads = 128, kDecodeSimtUnroll = 2,
                         kDecodeSimtQuantizedUnroll = 4;
inline constexpr int64_t kDecodeTensorCoreStages = 4;
/// The most queries per sequence the decode tier takes by default.
inline constexpr int64_t kDecodeMaxQueries = 16;

#define GEN_PASS_DECL
#include "codegen/nvptx/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "codegen/nvptx/Passes.h.inc"

/// The schedule defaults of attn-select-tier (SelectTier.cpp), also used
/// by the tiers on nests whose schedule leaves a field at 0.
/// Warps of a `tier` block of `blockQ` rows: the mma tier gives a warp up
/// to two 16-row m-tiles (at most 4 warps), so K/V fragments feed more
/// mma.sync; the wmma tier one per 16 rows.
int64_t defaultWarps(Tier tier, int64_t blockQ);
/// K/V tiles in flight on `sm`: two with cp.async (sm_80+), else one
/// loaded synchronously, which also keeps D = 128 inside Turing's 64 KiB.
int64_t defaultStages(int sm);

/// Whether the decode tier's split kernel for a Q tile of `blockQ` rows
/// of `qElt` over K/V elements of `kvElt` runs on tensor cores: f16 or
/// bf16 Q over K/V of its type, or over a quantized cache the kernel
/// `dequantizes` (whyNoTensorCoreDequant is empty).
bool decodeOnTensorCores(int64_t blockQ, Type qElt, Type kvElt, int sm,
                         bool dequantizes);
/// Why the tensor-core split kernel cannot decode a quantized (one-byte)
/// K/V cache of these head dims, or empty where it can: it reads K in
/// 16-byte slices of 64 columns and V in 32-column groups, rows of a
/// power of two of 16-byte chunks (D 64, 128 or 256; Dv 32 to 256), and V
/// from a V cache of its own (no v_from_k). Its scales may be of any
/// granularity.
std::string whyNoTensorCoreDequant(int64_t headDim, int64_t valueHeadDim,
                                   bool vFromK);
/// Whether that tensor-core split kernel runs on wgmma rather than
/// mma.sync: on sm_90a, where its Q tile is whole warpgroups (64-row
/// multiples), both head dims are 64-column blocks and K/V are f16 or
/// bf16 (wgmma reads its B operand from shared memory: a quantized
/// cache's bytes are decoded in registers, on mma.sync).
bool decodeOnWgmma(StringRef chip, int64_t blockQ, int64_t headDim,
                   int64_t valueHeadDim, Type kvElt);

/// Whether `op`, after attn-select-tier, runs an instruction of the
/// arch-specific `chip` alone (sm_90a: wgmma, setmaxnreg): its prefill tier
/// is wgmma, or its decode tier's split kernel runs on wgmma. Where it does
/// not, its code for sm_90a is its code for sm_90, `.target` aside.
bool usesArchSpecificCode(AttentionOp op, StringRef chip);

/// Shared memory of the mma tier's Q tile and `stages` K/V tiles for tiles
/// of `blockQ` x `blockKv` and head dims `d`, `dv` (what tile sizes cost;
/// O's staging and the key groups' exchange reuse that space); with
/// `vInK` (V read from K's tile: v_from_k) no V tiles; with `kvBytes`
/// K/V tiles of one-byte elements (a quantized cache), unpadded.
int64_t mmaTileSharedBytes(int64_t blockQ, int64_t blockKv, int64_t d,
                           int64_t dv, int64_t stages, bool vInK = false,
                           bool kvBytes = false);

/// A schedule libattnrt may launch instead of the one attn-select-tier
/// picks, and the suffix of the name of the kernel function that has it.
/// `maxKvLen` (0: none) is its launch contract's `max_kv_len`: libattnrt
/// prefers it to the larger tiles up to that K/V length.
struct AlternativeSchedule {
  StringRef suffix;
  ScheduleAttr schedule;
  int64_t maxKvLen = 0;
};
/// The small-grid alternatives of `op` on `sm` with `prefill` the chip's
/// default prefill tier, largest tile first (empty where none applies):
/// extra copies of a prefill kernel for grids too small to fill the GPU,
/// among which libattnrt chooses at run time (SelectTier.cpp says why
/// these). A tile the default already has is left out.
SmallVector<AlternativeSchedule> smallGridSchedules(AttentionOp op, int sm,
                                                    Tier prefill);

/// Why the wgmma tier cannot run `op` as its schedule stands (head dims
/// not multiples of 64, a Q tile that is not whole warpgroups, ...), or
/// empty when it can. attn-select-tier sends such ops to the mma tier
/// when wgmma is the default; attn-compile's note repeats the reason.
std::string whyNotWgmma(AttentionOp op);

/// Why the decode tier gives `op` (on `sm`) the SIMT split kernel rather
/// than the tensor-core one (empty: tensor cores): f32 inputs, no
/// mma.sync, a schedule whose block_q asks for it, or at most
/// kDecodeSimtMaxRows rows below sm_90 or with `tensorCores` off.
/// attn-select-tier decides by it; attn-compile's note repeats it.
std::string whyDecodeSimt(AttentionOp op, int sm, bool tensorCores = true);

/// Why a tensor map cannot read an attention's K and V (empty: it can).
/// A tensor map covers a plain [B, Hkv, Sk, D] operand in 64-column boxes
/// and fills the rows past Sk with zeros; rows past a shorter
/// per-sequence length would be real (maybe uninitialized) cache memory.
/// The one statement of these rules: the wgmma tier's plan adds its own
/// (whyNoTma, PrefillPlan.h), attn-select-tier gives a producer
/// warpgroup's tiles only where they allow TMA, attn-compile says them.
std::string whyNoTmaOperands(bool paged, bool packed, bool kvLens,
                             int64_t headDim, int64_t valueHeadDim,
                             bool vFromK);
std::string whyNoTmaOperands(AttentionOp op);
/// Why Q's tiles of `blockQ` rows (a K/V head's query rows, query-major,
/// `group` heads each) cannot come by TMA where K/V do (a clause for a
/// note); empty when they can. Q's map views [B, Hq, Sq, D] as [B, Hkv,
/// Sq, group, D], so a box is whole queries or part of one query's group.
std::string whyNoQTmaOperands(bool packedQ, int64_t blockQ, int64_t group);
/// Why O's tiles cannot leave by a TMA store where Q comes by TMA (a
/// clause for a note); empty when they can. O's map is Q's view of O, so
/// its boxes are Q's; it also needs 16-bit elements (`outBits`).
std::string whyNoOTmaOperands(bool packedQ, unsigned outBits, int64_t blockQ,
                              int64_t group);
/// The wgmma tier's pipeline, each choice made: K/V, Q and O by TMA, a
/// producer warpgroup, Q K^T a tile ahead, the consumers' ping-pong
/// (PrefillPlan.h says what each does to the kernel).
struct WgmmaPipeline {
  bool kvTma = false, qTma = false, oTma = false, producer = false,
       qkAhead = false, pingPong = false;
  /// Why the kernel cannot have each (a clause for a note; empty where
  /// it can, whatever was asked).
  std::string whyNoKvTma, whyNoQTma, whyNoOTma, whyNoProducer;
};
/// What a wgmma prefill kernel's pipeline depends on: its operands' forms
/// and its tiles (the schedule's, filled in).
struct WgmmaKernelShape {
  bool paged = false, packedK = false, kvLens = false, packedQ = false,
       vFromK = false;
  int64_t headDim = 0, valueHeadDim = 0, group = 1, outBits = 16, blockQ = 0,
          blockKv = 0, warps = 0, stages = 0;
};
/// `op`'s, under its schedule `filled` (tiles, warps and stages set).
WgmmaKernelShape wgmmaKernelShape(AttentionOp op, ScheduleAttr filled);
/// The one statement of the wgmma tier's pipeline rules: what a kernel of
/// `shape` runs when the schedule `asked` sets some choices, `defaults`
/// (may be null) others, and the rest take the measured defaults (all on
/// but ping-pong). For each choice `asked` sets that the kernel cannot
/// honour, `refused` gets the field's name and the reason.
WgmmaPipeline resolveWgmmaPipeline(
    const WgmmaKernelShape &shape, ScheduleAttr asked, ScheduleAttr defaults,
    function_ref<void(StringRef field, StringRef why)> refused);
/// `schedule` with its pipeline fields set to `pipeline`.
ScheduleAttr withPipeline(ScheduleAttr schedule, const WgmmaPipeline &pipeline);

/// Whether `op`, whose Sq is dynamic and whose tier attn-select-tier picks,
/// also gets a decode-tier kernel that libraries launch instead of the
/// prefill one when q_len <= kDecodeMaxQueries (attn-compile packages
/// both; its C functions choose by q_len).
bool decodesAtRunTime(AttentionOp op);

/// attn-nv-to-nvvm's patterns: one per attn_nv op (AttnNVToNVVM.cpp).
void populateAttnNVToNVVMPatterns(RewritePatternSet &patterns);

/// Registers `attn-to-ptx`.
void registerNVPTXPipelines();

} // namespace mlir::attn

#endif // ATTN_CODEGEN_NVPTX_PASSES_H
