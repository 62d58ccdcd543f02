//===- BlockMask.h - tile skipping for a mask_mod ---------------*- C++ -*-===//
//
// FlexAttention's BlockMask for attn's prefill kernels. A mask_mod the
// built-ins cannot say (documents, prefix-LM, any data-dependent rule) is
// classified ahead of the attention, per block of 128 queries x 128 keys,
// by a kernel of its own that evaluates the region (and the built-in
// mask) on every position. Its result, the workspace
//
//   memref<(B' * H') x nQ x 2 x nK x i32>   nQ = ceil(Sq / 128),
//                                           nK = ceil(Sk / 128)
//   [bh, q, 0, i]  the i-th K/V block some position of Q block q sees:
//                  (block << 1) | full, in increasing block order
//   [bh, q, 1, 0]  how many there are
//
// (B' = batch and H' = K/V heads where the region reads b and h, else 1;
// a block is full when all its positions exist and are visible), lets the
// prefill kernel walk only the listed blocks and skip the mask on full
// ones. The list order keeps the K/V pipeline a ring over consecutive
// entries.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_CODEGEN_NVPTX_BLOCKMASK_H
#define ATTN_CODEGEN_NVPTX_BLOCKMASK_H

#include "codegen/nvptx/PrefillPlan.h"
#include "codegen/nvptx/KernelCommon.h"

namespace mlir::attn::nvptx {

/// Queries and keys of a block-mask block.
constexpr int64_t kMaskBlock = 128;
/// Threads of the block-mask kernel.
constexpr int64_t kBlockMaskThreads = 256;

/// Why `plan`'s kernel for `nest` cannot read a block mask, or "" when it
/// can: a mask_mod left after attn-fold-mods (on any form: padded or
/// packed Q, contiguous, paged or packed K/V), no split-K, and tiles that
/// lie inside one block.
std::string whyNoBlockMask(const L1Nest &nest, const PrefillPlan &plan);

/// The block mask's workspace type.
MemRefType blockMaskType(MLIRContext *ctx);

/// Appends the block mask's workspace argument to `func`; returns it.
FailureOr<Value> appendBlockMask(func::FuncOp func);

/// Builds `<name>_block_mask` in `module` for `nest` and launches it before
/// `nest`'s forall, writing `mask` (an argument of the host function).
LogicalResult buildBlockMask(const L1Nest &nest, gpu::GPUModuleOp module,
                             StringRef name, Value mask);

/// Where the block mask keeps the rows of `nest`'s batch `batch` and K/V
/// head `kvHead`: bh = batch' * H' + head'.
Value blockMaskRow(const L1Nest &nest, ImplicitLocOpBuilder &b, Value batch,
                   Value kvHead, Value kvHeads);

/// Whether the block mask has rows per batch and per K/V head: where the
/// mask_mod reads b (or the lengths vary per sequence: kv_lens, a packed
/// batch) and where it reads h.
std::pair<bool, bool> blockMaskRows(const L1Nest &nest);

} // namespace mlir::attn::nvptx

#endif // ATTN_CODEGEN_NVPTX_BLOCKMASK_H
