//===- CPUPipeline.cpp - attn-to-cpu --------------------------------------===//

#include "lib/Pipelines/Pipelines.h"

#include "lib/Transforms/Passes.h"
#include "mlir/Pass/PassRegistry.h"

using namespace mlir;
using namespace mlir::attn;

LogicalResult mlir::attn::buildCPUPipeline(OpPassManager &pm,
                                           const CPUPipelineOptions &options) {
  pm.addPass(createAttnCheckKernels());
  OpPassManager &fpm = pm.nest<func::FuncOp>();
  // Cache appends and merges first: loops over memrefs, before the
  // attention they may feed (or be fed by) is tiled.
  fpm.addPass(createAttnLowerAppend());
  fpm.addPass(createAttnLowerMergeStates());
  AttnTileOptions tile;
  tile.blockQ = options.blockQ;
  tile.blockKV = options.blockKV;
  fpm.addPass(createAttnTile(tile));
  if (options.numSplits.hasValue() || options.kvChunk.hasValue()) {
    AttnSplitKVOptions split;
    split.numSplits = options.numSplits;
    split.kvChunk = options.kvChunk;
    fpm.addPass(createAttnSplitKV(split));
  }
  fpm.addPass(createAttnDecompose());
  // Upstream lowering, spelled as a pipeline string: it reads like the
  // mlir-opt command line it replaces.
  return parsePassPipeline(
      "canonicalize,cse,"
      "one-shot-bufferize{allow-return-allocs-from-loops},"
      "buffer-deallocation-pipeline,convert-bufferization-to-memref,"
      "func.func(convert-linalg-to-loops,scf-forall-to-parallel),"
      "canonicalize,convert-scf-to-cf,"
      "arith-expand{include-bf16=true},"
      "expand-strided-metadata,lower-affine,"
      "convert-math-to-libm,convert-math-to-llvm,"
      "finalize-memref-to-llvm,convert-func-to-llvm,convert-arith-to-llvm,"
      "convert-index-to-llvm,convert-cf-to-llvm,convert-to-llvm,"
      "reconcile-unrealized-casts",
      pm);
}

void mlir::attn::registerPipelines() {
  // Registered by hand rather than with PassPipelineRegistration so a
  // pipeline that cannot be built reports failure instead of aborting.
  registerPassPipeline(
      "attn-to-cpu", "lower attn (L0 or L1) to the LLVM dialect for the host CPU",
      [](OpPassManager &pm, StringRef text,
         function_ref<LogicalResult(const Twine &)>) -> LogicalResult {
        CPUPipelineOptions options;
        if (failed(options.parseFromString(text)))
          return failure();
        return buildCPUPipeline(pm, options);
      },
      [](function_ref<void(const mlir::detail::PassOptions &)> handler) {
        handler(CPUPipelineOptions());
      });
}
