//===- MergeStates.h - attn.merge_states's kernel ---------------*- C++ -*-===//
//
// The copy tier's second kernel (attn-to-copy builds both): the merge of
// partial attention states, bound by memory like the cache append.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_CODEGEN_NVPTX_MERGESTATES_H
#define ATTN_CODEGEN_NVPTX_MERGESTATES_H

#include "dialect/AttnDialect.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"

namespace mlir::attn::nvptx {

/// Builds `op`'s kernel `name` in `module` and replaces `op` with its
/// launch, under a #attn.launch<merge, tier = copy, ...> contract.
LogicalResult buildMergeStatesKernel(gpu::GPUModuleOp module,
                                     MergeStatesOp op, StringRef name);

} // namespace mlir::attn::nvptx

#endif // ATTN_CODEGEN_NVPTX_MERGESTATES_H
