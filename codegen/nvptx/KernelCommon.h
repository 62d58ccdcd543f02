//===- KernelCommon.h - shared pieces of the NVIDIA tiers -------*- C++ -*-===//
//
// Every NVIDIA tier lowers the same L1 loop nest (attn-tile's): this header
// recognizes it and gives the tiers one way to clone its index arithmetic
// into a kernel and to spell the score transform and the mask.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_CODEGEN_NVPTX_KERNELCOMMON_H
#define ATTN_CODEGEN_NVPTX_KERNELCOMMON_H

#include "codegen/nvptx/RegisterMath.h"
#include "dialect/AttnDialect.h"
#include "dialect/AttnSemantics.h"
#include "lib/Transforms/L1Nest.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"
#include "llvm/ADT/DenseMap.h"

namespace mlir::attn::nvptx {

/// The attn-tile nest at `forall`, which these tiers take without
/// attn-split-kv (they split K/V themselves); `pass` names the caller.
FailureOr<L1Nest> matchNest(scf::ForallOp forall, StringRef pass);

/// The outermost L1 nests (attn-tile foralls) of `module`, with their
/// functions.
SmallVector<std::pair<func::FuncOp, scf::ForallOp>> findNests(ModuleOp module);

/// `gpu.module @attn_kernels` of `module`, created on first use; marks the
/// module as a GPU container.
gpu::GPUModuleOp getKernelModule(ModuleOp module);

/// A kernel `gpu.func @name(args)` at the end of `module`, run by `threads`
/// threads a block (its known block size), its name made unique in the
/// module's symbol table.
gpu::GPUFuncOp createKernel(gpu::GPUModuleOp module, Location loc,
                            StringRef name, TypeRange args, int64_t threads);

/// The host side of a copy-tier kernel: replaces `op` with the launch of
/// `kernel` (built at `hb`, before `op`) on `grid`, `threads` threads a
/// block and no dynamic shared memory, passing `operands`, under the
/// launch contract `contract`.
void replaceWithLaunch(Operation *op, ImplicitLocOpBuilder &hb,
                       gpu::GPUFuncOp kernel, gpu::KernelDim3 grid,
                       int64_t threads, ValueRange operands,
                       LaunchAttr contract);

/// Folds the repeated constants a tier's builders leave in `kernels` into
/// the first that dominates each, so the IR after a tier pass reads as
/// its steps; the pipeline's canonicalize would merge them a little later
/// anyway.
void tidyKernels(gpu::GPUModuleOp kernels);

/// A mod region's position arguments (b, h, q_idx, kv_idx) for flat row
/// `flatRow` of K/V head `kvHead`'s rows (query-major GQA packing,
/// `group` query heads a K/V head) and key `key`. With `guards` (q_idx,
/// kv_idx: modPositionGuards), a query or key past the sequence (a tile's
/// tail, whose result the mask drops) is given as position 0, so that the
/// region's loads stay where the caller's sizes say.
SmallVector<Value> modPositionArgs(ImplicitLocOpBuilder &b, int64_t group,
                                   std::pair<bool, bool> guards, Value batch,
                                   Value kvHead, Value flatRow, Value key,
                                   Value qLen, Value kvLen);
/// Whether a mod region (with `captures` trailing capture arguments)
/// addresses memory with its q_idx and with its kv_idx (addressesMemory).
std::pair<bool, bool> modPositionGuards(Region &region, unsigned captures);

/// tanh(x) on tanh.approx.f32 (sm_75+, as every tier): one MUFU op, as
/// FlashAttention's soft-cap, with a relative error below 2^-10.9.
/// math.tanh would become a libdevice call that must be linked.
Value tanhApprox(ImplicitLocOpBuilder &b, Value x);

/// A quantized fp8 cache's bytes `x` (vector<N x f8E4M3FN or f8E5M2>, N
/// even) as f16 on `sm`: cvt.rn.f16x2.{e4m3,e5m2}x2 from sm_89, two bytes
/// a conversion; below, bit operations, which leave an e4m3fn value
/// times 2^-8 (fp8TimesUnit: the caller multiplies by 256, in f16 or
/// after widening). Exact for every byte.
Value fp8ToF16(ImplicitLocOpBuilder &b, Value x, int sm);
inline bool fp8TimesUnit(Type from, int sm) {
  return sm < 89 && kvFormatOf(from) == KVFormat::E4M3;
}
/// attn.qk's scale and soft-cap (`score`) of a raw dot product, in units
/// of `unit` (log2(e): base-2 logits; 1: natural, what a score_mod sees).
Value transformDot(ImplicitLocOpBuilder &b, ScoreTransform score, Value dot,
                   double unit);

/// Helpers for building one kernel from one nest.
class KernelEmitter {
public:
  explicit KernelEmitter(L1Nest nest) : n(nest) {}

  Value idx(int64_t v) { return arith::ConstantIndexOp::create(*b, v); }
  Value f32(double v);
  Value i32(int64_t v);
  Value add(Value x, Value y) { return arith::AddIOp::create(*b, x, y); }
  Value mul(Value x, Value y) { return arith::MulIOp::create(*b, x, y); }
  Value lt(Value x, Value y) {
    return arith::CmpIOp::create(*b, arith::CmpIPredicate::slt, x, y);
  }
  void syncWarp() { NVVM::SyncWarpOp::create(*b, i32(-1)); }

  /// fastExp2 (RegisterMath.h).
  Value exp2(Value x);
  /// `index` through an inline PTX mov that LLVM can neither fold nor
  /// hoist: computed again where it is used, so addresses built on it stay
  /// base + immediate instead of one hoisted register each.
  Value opaqueIndex(Value index);
  /// tanh(x) on tanh.approx.f32 (sm_75+, as every tier): one MUFU op, as
  /// FlashAttention's soft-cap, with a relative error below 2^-10.9.
  /// math.tanh would become a libdevice call that must be linked.
  Value tanh(Value x);
  /// attn.qk's transform of a raw dot product into base-2 logit units.
  Value scoreFromDot(Value dot);
  /// attn.qk's scale and soft-cap of a raw dot product, in units of
  /// `unit` (log2(e): base-2 logits; 1: natural, what a score_mod sees).
  Value transformDot(Value dot, double unit);
  /// Global indices (all but the column) of row `j` of `load`'s K or V:
  /// packed (the sequence's first row + j), paged (through the block
  /// table) or contiguous. `j` must exist; the load's batch, head,
  /// sequence start and table must be mapped.
  SmallVector<Value> kvRowIndices(LoadKVOp load, Value j);
  /// With a score_mod: log2(e) * score_mod(cap(scale * dot), b, h, q_idx,
  /// kv_idx), the region inlined, for flat row `flatRow` of K/V head
  /// `kvHead`'s rows and key `key` (per sequence in the packed forms) of a
  /// sequence of `qLen` queries and `kvLen` keys.
  Value modScore(Value dot, Value batch, Value kvHead, Value flatRow,
                 Value key, Value qLen, Value kvLen);
  /// With a mask_mod: the region's verdict for the same positions.
  Value modVisible(Value batch, Value kvHead, Value flatRow, Value key,
                   Value qLen, Value kvLen);
  /// (b, h, q_idx, kv_idx) of flat row `flatRow` and key `key` for
  /// `region`. Where the region loads from its captures at q_idx or
  /// kv_idx, a query or key past the sequence (a tile's tail, whose
  /// result the mask drops) is given as position 0, so that the loads
  /// stay where the caller's sizes say.
  SmallVector<Value> modPositions(Region &region, Value batch, Value kvHead,
                                  Value flatRow, Value key, Value qLen,
                                  Value kvLen);
  /// Whether `region`'s q_idx and kv_idx need that guard (addressesMemory),
  /// decided once per region: the kernels inline it for every score.
  std::pair<bool, bool> positionGuards(Region &region);
  /// The kernel's arguments for the nest's captures (kernel parameters
  /// after the inputs: inputOperands).
  SmallVector<Value> mappedCaptures();
  bool hasScoreMod() { return n.qk.hasScoreMod(); }
  bool hasMaskMod() { return n.mask.hasMaskMod(); }
  /// attn.qk's scale and soft-cap (AttnSemantics.h).
  ScoreTransform scoreTransform();
  /// The factor c when that transform is the plain scale c * dot (no
  /// soft-cap, no score_mod); c > 0.
  std::optional<double> linearScoreScale();
  /// Whether query `query` sees key `key` (attn.mask, plus key < kvLen):
  /// MaskRules (AttnSemantics.h) on the kernel's index values.
  Value visible(Value key, Value query, Value qLen, Value kvLen);
  /// Whether every key in [keyFirst, keyLast] is visible to every query in
  /// [queryFirst, queryLast] (`every`: such a tile needs no mask), or
  /// whether some key may be visible to some query (false: the tile adds
  /// nothing).
  Value bandTest(Value keyFirst, Value keyLast, Value queryFirst,
                 Value queryLast, Value qLen, Value kvLen, bool every);
  Value allVisible(Value keyFirst, Value keyLast, Value queryFirst,
                   Value queryLast, Value qLen, Value kvLen) {
    return bandTest(keyFirst, keyLast, queryFirst, queryLast, qLen, kvLen,
                    /*every=*/true);
  }
  Value anyVisible(Value keyFirst, Value keyLast, Value queryFirst,
                   Value queryLast, Value qLen, Value kvLen) {
    return bandTest(keyFirst, keyLast, queryFirst, queryLast, qLen, kvLen,
                    /*every=*/false);
  }
  /// RegisterMath.h's, at the kernel's builder.
  Value referenceMoves(Value score, Value m) {
    return nvptx::referenceMoves(*b, score, m);
  }
  Value xorReduce(Value x, ArrayRef<int64_t> offsets, bool isMax) {
    return nvptx::xorReduce(*b, x, offsets, isMax);
  }
  Value safeMax(Value m) { return nvptx::safeMax(*b, m); }
  /// Query head `head`'s attention sink from the kernel's `sinks` ([Hq],
  /// any float type) as f32, in natural units.
  Value loadSink(Value sinks, Value head);
  /// A row's softmax state with its sink folded in (attn.finalize's
  /// `sink`): from (m, l) in log2 units and the sink in natural units,
  /// m' = max(m, t) with t = log2(e) * sink, l' = l 2^(m - m') + 2^(t -
  /// m'), and the factor r = 2^(m - m') that scales the accumulator, so
  /// that O = acc * r / l' and the LSE is (m', l')'s. A row with neither
  /// a key nor a finite sink keeps l' = 0.
  struct SinkFold {
    Value max, sum, accScale;
  };
  SinkFold foldSink(Value m, Value l, Value sink);

  /// Clones the L1 computation of `v` (pure ops and memref loads) into the
  /// kernel, through `map`.
  FailureOr<Value> materialize(Value v);
  /// materialize() for an optional value (a packed form's first row): a
  /// null value stays null.
  FailureOr<Value> materializeOptional(Value v) {
    return v ? materialize(v) : FailureOr<Value>(Value());
  }

  /// A split-K kernel's block (x, y, z) = (split, K/V head, batch * Q tiles
  /// + Q tile): maps the nest's batch, K/V head and Q tile and returns the
  /// split.
  FailureOr<Value> mapSplitBlock();
  /// A packed Q's block (x, y) = (packed Q tile, K/V head): sequence b's
  /// tiles of `blockQ` rows start at floor(cu_seqlens_q[b] * G / blockQ)
  /// + b, so a binary search over the offsets finds a block's sequence
  /// and tile without a table, and at most one block a sequence (the gap
  /// its rounding leaves) has no rows. Maps the nest's batch, K/V head and
  /// Q tile.
  void mapPackedBlock(int64_t blockQ);
  /// The blocks mapPackedBlock covers, on the host at `hb`: floor(total_q
  /// * G / blockQ) + B.
  Value packedTileCount(ImplicitLocOpBuilder &hb, int64_t blockQ);

  /// A dequantization scale operand (k_scale or v_scale; null: none)
  /// that is one value for a block of K/V head `kvHead`, loaded: per
  /// tensor or per K/V head. Null for none and for a scale per token.
  Value uniformScale(Value scale, Value kvHead);

  /// Split `split`'s keys of [lo, hi) out of `splits`: [lo + s * per,
  /// min(hi, lo + (s + 1) * per)), `per` rounded up to whole `granule`s
  /// (K/V tiles, so that no tile straddles two splits).
  std::pair<Value, Value> splitRange(Value split, Value splits, Value lo,
                                     Value hi, int64_t granule);

  L1Nest n;
  /// positionGuards' answers, by region.
  llvm::SmallDenseMap<Region *, std::pair<bool, bool>, 2> guards;
  /// Set by the tier when it starts building the kernel.
  ImplicitLocOpBuilder *b = nullptr;
  IRMapping map;
};

} // namespace mlir::attn::nvptx

#endif // ATTN_CODEGEN_NVPTX_KERNELCOMMON_H
