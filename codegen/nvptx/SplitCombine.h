//===- SplitCombine.h - the merge of split-K partial states -----*- C++ -*-===//
//
// Flash-decoding's second step, shared by the split kernels of the decode
// tier (the SIMT one and the tensor-core one): the split kernel writes
// each query row's partial state per split into a workspace
//
//   memref<R x N x (Dv + 2) x f32>   R = B * Hq * Sq rows, N splits:
//                                     acc[0..Dv), m (log2 units), l
//
// appended to the host function's arguments (N is the split count the
// caller chooses at run time), and the combine kernel merges the splits
// into O and the LSE.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_CODEGEN_NVPTX_SPLITCOMBINE_H
#define ATTN_CODEGEN_NVPTX_SPLITCOMBINE_H

#include "codegen/nvptx/KernelCommon.h"

namespace mlir::attn::nvptx {

/// Threads of the combine kernel's blocks (one block per query row).
constexpr int64_t kCombineThreads = 128;

/// Appends the workspace argument for Dv = `dv` to `func`; returns it.
FailureOr<Value> appendWorkspace(func::FuncOp func, int64_t dv);

/// Whether the combine on `sm` overlaps the split kernel's tail (CUDA's
/// programmatic dependent launch, sm_90+): the split kernel lets it start
/// (letCombineStart), it waits for the split kernel's writes, and its
/// launch contract says `programmatic`. It saves the combine's launch
/// latency, which short decode rows pay in full.
inline bool combineOverlapsSplit(int sm) { return sm >= 90; }
/// griddepcontrol.launch_dependents: where combineOverlapsSplit, the
/// split kernel's first instruction.
void letCombineStart(ImplicitLocOpBuilder &b);

/// Builds `<name>_combine` in `module` for `nest` (whose O and LSE it
/// writes) and launches it before `nest`'s forall, reading workspace `ws`
/// (an argument of the host function); on `sm`, overlapping the split
/// kernel where combineOverlapsSplit.
LogicalResult buildCombine(const L1Nest &nest, gpu::GPUModuleOp module,
                           StringRef name, Value ws, int sm);

} // namespace mlir::attn::nvptx

#endif // ATTN_CODEGEN_NVPTX_SPLITCOMBINE_H
