//===- Pipelines.h - attn pass pipelines ------------------------*- C++ -*-===//

#ifndef ATTN_LIB_PIPELINES_PIPELINES_H
#define ATTN_LIB_PIPELINES_PIPELINES_H

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"

namespace mlir::attn {

/// Options of `attn-to-cpu`: the schedule of attn-tile and attn-split-kv.
struct CPUPipelineOptions : PassPipelineOptions<CPUPipelineOptions> {
  Option<int64_t> blockQ{*this, "block-q", llvm::cl::desc("query rows per tile"),
                         llvm::cl::init(64)};
  Option<int64_t> blockKV{*this, "block-kv", llvm::cl::desc("key rows per tile"),
                          llvm::cl::init(64)};
  Option<int64_t> numSplits{*this, "num-splits",
                            llvm::cl::desc("split the K/V loop (split-K)")};
  Option<int64_t> kvChunk{*this, "kv-chunk",
                          llvm::cl::desc("keys per K/V split (split-K)")};
};

/// L0 or L1 -> LLVM dialect for the host CPU: tile, (split), decompose,
/// bufferize, lower to loops and to LLVM. Fails on bad options.
LogicalResult buildCPUPipeline(OpPassManager &pm,
                               const CPUPipelineOptions &options);

/// Registers `attn-to-cpu` with attn-opt.
void registerPipelines();

} // namespace mlir::attn

#endif // ATTN_LIB_PIPELINES_PIPELINES_H
