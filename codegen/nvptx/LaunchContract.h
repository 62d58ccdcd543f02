//===- LaunchContract.h - #attn.launch for the NVIDIA tiers -----*- C++ -*-===//
//
// The tiers describe each gpu.launch_func they build with one declared
// #attn.launch (dialect/AttnAttrs.td): the grid as a function of named
// sizes, the kernel parameters in order, the shared memory and the
// workspace. Hosts that do not read the IR (attn-compile's tables,
// libattnrt) launch from that contract alone.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_CODEGEN_NVPTX_LAUNCHCONTRACT_H
#define ATTN_CODEGEN_NVPTX_LAUNCHCONTRACT_H

#include "dialect/AttnDialect.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"

namespace mlir::attn {

struct L1Nest;

/// The attribute name a launch's contract goes under.
inline constexpr llvm::StringLiteral kLaunchAttrName = "attn.launch";

/// Which of attn.attention's optional operands a kernel takes.
struct LaunchOperands {
  bool kScale = false, vScale = false, blockTable = false, kvLens = false,
       lse = false, cuSeqlensQ = false, cuSeqlensK = false, sinks = false;
  unsigned captures = 0; // the mod regions' memrefs, passed last
  /// V is read from K's buffer (attn.attention's v_from_k, MLA): the V
  /// slot passes k, and v_scale's passes k_scale.
  bool vFromK = false;

  /// The operands of `nest`'s attention, as inputOperands() and the
  /// stores pass them.
  static LaunchOperands of(const L1Nest &nest);
};

/// One block per (Q tile of `blockQ` rows of a K/V head's query rows, K/V
/// head, batch), or, for a packed Q, per (packed Q tile, K/V head); params
/// q, k, v, [k_scale], [v_scale], [cu_seqlens_q], [cu_seqlens_k],
/// [block_table], [kv_lens], [capture(0) ...], [sinks], o, [lse]: the launches
/// that normalize O read the sinks, just before it. With `blockMask` (whether
/// the block mask has a row per batch and per K/V head), the block mask is the
/// workspace, the last param. The tensor maps of `tensorMaps` (tensor_map(q),
/// tensor_map(k), ...) come first, in that order.
LaunchAttr
prefillLaunch(const L1Nest &nest, Tier tier, int64_t threads,
              int64_t sharedBytes, int64_t blockQ, int64_t group,
              std::optional<std::pair<bool, bool>> blockMask = std::nullopt,
              ArrayRef<LaunchOperand> tensorMaps = {});

/// The tensor-core split kernel's one-split form (decode_unsplit): the
/// grid and params of prefillLaunch; libattnrt launches it in place of
/// decode_split and decode_combine when the call has one split.
LaunchAttr decodeUnsplitLaunch(const L1Nest &nest, Tier tier, int64_t threads,
                               int64_t sharedBytes, int64_t blockQ,
                               int64_t group);

/// The block-mask kernel (BlockMask.h): one block per (ceildiv(q_len,
/// `block`), K/V head if `perHead`, batch if `perBatch`); params q, k, v,
/// [captures], workspace (the block mask).
LaunchAttr blockMaskLaunch(const L1Nest &nest, int64_t threads, bool perBatch,
                           bool perHead, int64_t block);

/// The Q tiles per sequence of a nest over a packed Q whose max_q_len the
/// spec fixes (its forall's static bound); 0 when it is not static.
int64_t packedQTiles(const L1Nest &nest);

/// Split-K decode, first launch: one block per (split, K/V head, batch x Q
/// tile); params q, k, v, [block_table], [kv_lens], [capture(0) ...],
/// workspace. `workspace`
/// is the type of the workspace operand, [rows, splits, Dv + 2]; `tier`
/// the kernel's (decode, or mma for the tensor-core split kernel).
LaunchAttr decodeSplitLaunch(const L1Nest &nest, Tier tier, int64_t threads,
                             int64_t sharedBytes, int64_t blockQ, int64_t group,
                             MemRefType workspace);

/// Split-K decode, second launch: one block per `rowsPerBlock` query rows;
/// params workspace, [sinks], o, [lse]. `programmatic`: it may start while the
/// split launch runs (its kernel waits for the split kernel's writes).
LaunchAttr decodeCombineLaunch(const L1Nest &nest, int64_t threads,
                               int64_t sharedBytes, int64_t rowsPerBlock,
                               MemRefType workspace, bool programmatic);

/// attn.cache_append's copy kernel: one block per (`tokensPerBlock` new
/// tokens, K/V head, batch); params k_new, v_new, [block_table], kv_lens,
/// [new_lens], k (the K cache), v (the V cache). The slot-mapping form:
/// one block per (`tokensPerBlock` packed tokens, K/V head); params k_new,
/// v_new, slot_mapping, k, v.
LaunchAttr appendLaunch(CacheAppendOp op, int64_t threads,
                        int64_t tokensPerBlock);

/// attn.merge_states's kernel: one block per `rowsPerBlock` of its T * H
/// rows (the contract's `rows`); params o_parts, lse_parts, o, [lse].
LaunchAttr mergeLaunch(MergeStatesOp op, int64_t threads, int64_t rowsPerBlock);

/// Attaches `contract` to `launch` as kLaunchAttrName. The dialect verifies
/// it against the launch (params against the kernel operands, threads and
/// shared memory against the launch's constants).
void setLaunchContract(gpu::LaunchFuncOp launch, LaunchAttr contract);

/// The same for a launch of `nest`'s kernels, after checking that each
/// parameter is the value the contract names (the dialect's verifier can
/// check kinds and types, not which operand is which): an operand's memref
/// from the nest (a tensor map: a cast of it), a capture, or `workspace`.
/// libattnrt passes the arguments in the contract's order; a launch built
/// in another would read one buffer for another. An internal error
/// otherwise.
LogicalResult setLaunchContract(gpu::LaunchFuncOp launch, LaunchAttr contract,
                                const L1Nest &nest, Value workspace = {});

/// `launch`'s contract; null if it has none.
LaunchAttr getLaunchContract(gpu::LaunchFuncOp launch);

} // namespace mlir::attn

#endif // ATTN_CODEGEN_NVPTX_LAUNCHCONTRACT_H
