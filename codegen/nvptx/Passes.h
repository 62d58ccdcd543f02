//===- Passes.h - attn NVIDIA code generation -------------------*- C++ -*-===//

#ifndef ATTN_CODEGEN_NVPTX_PASSES_H
#define ATTN_CODEGEN_NVPTX_PASSES_H

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"

namespace mlir::attn {

#define GEN_PASS_DECL
#include "codegen/nvptx/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "codegen/nvptx/Passes.h.inc"

/// Compute capability of "sm_XY[a]" (e.g. 80), or failure.
FailureOr<int> parseChip(StringRef chip);

/// Largest dynamic shared memory a block may opt into on `sm`, in bytes.
int64_t maxSharedMemoryBytes(int sm);

/// The prefill tier attn-to-ptx uses on `sm` unless told: "mma" from sm_80,
/// else "wmma".
StringRef defaultPrefillTier(int sm);

/// Shared memory of the mma tier's Q tile and `stages` K/V tiles for tiles
/// of `blockQ` x `blockKv` and head dims `d`, `dv` (what tile sizes cost;
/// O's staging and the key groups' exchange reuse that space).
int64_t mmaTileSharedBytes(int64_t blockQ, int64_t blockKv, int64_t d,
                           int64_t dv, int64_t stages);

/// Registers `attn-to-ptx`.
void registerNVPTXPipelines();

} // namespace mlir::attn

#endif // ATTN_CODEGEN_NVPTX_PASSES_H
