//===- Passes.td - attn NVIDIA code generation -------------*- tablegen -*-===//

#ifndef ATTN_CODEGEN_NVPTX_PASSES_TD
#define ATTN_CODEGEN_NVPTX_PASSES_TD

include "mlir/Pass/PassBase.td"

def AttnToWMMA : Pass<"attn-to-wmma", "ModuleOp"> {
  let summary = "lower L1 loop nests to WMMA + cp.async GPU kernels (wmma tier)";
  let description = [{
    Each `scf.forall` loop nest made by `attn-tile` becomes a `gpu.func`
    kernel in `gpu.module @attn_kernels`, and the host function launches it
    with `gpu.launch_func`: one thread block of 32 * block_q / 16 threads
    per (Q tile, K/V head, batch). Q and double-buffered K/V tiles are
    copied to padded shared memory with 16-byte `cp.async` (zero-filled past
    the end; plain vector loads below sm_80); `attn.qk` and `attn.pv` run on
    WMMA m16n16k16 fragments, one warp per 16 query rows; the mask and the
    online softmax run on the score tile in shared memory (WMMA fragments
    are opaque), two threads per row. The kernel arguments are the
    attention operands in the order q, k, v, [block_table], [kv_lens], o,
    [lse], each passed as an MLIR memref descriptor.
  }];
  let options = [
    Option<"chip", "chip", "std::string", /*default=*/"\"sm_80\"",
           "target GPU (sm_75, sm_80, sm_86, sm_89, sm_90, sm_90a)">,
  ];
  let dependentDialects = ["gpu::GPUDialect", "nvgpu::NVGPUDialect",
                           "NVVM::NVVMDialect", "vector::VectorDialect",
                           "math::MathDialect"];
}

#endif // ATTN_CODEGEN_NVPTX_PASSES_TD
