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

    With `softmax=registers` (the `mma` tier, sm_80+) the tile products run
    on mma.sync m16n8k16 with ldmatrix loads, and S, P, the mask and the
    online softmax stay in registers in mma.sync's accumulator layout: P is
    repacked from the accumulator layout into A operands without touching
    shared memory, row maxima and sums take quad shuffles, and the rescale
    multiplies the accumulators in place. bf16 inputs always take mma.sync
    (WMMA has no bf16).
  }];
  let options = [
    Option<"chip", "chip", "std::string", /*default=*/"\"sm_80\"",
           "target GPU (sm_75, sm_80, sm_86, sm_89, sm_90, sm_90a)">,
    Option<"softmax", "softmax", "std::string", /*default=*/"\"shared\"",
           "where the scores live: shared (wmma tier) or registers (mma "
           "tier, sm_80+)">,
  ];
  let dependentDialects = ["gpu::GPUDialect", "nvgpu::NVGPUDialect",
                           "NVVM::NVVMDialect", "vector::VectorDialect",
                           "math::MathDialect"];
}

def AttnSelectTier : Pass<"attn-select-tier", "func::FuncOp"> {
  let summary = "choose the NVIDIA tier (and Q tile) of each attn.attention";
  let description = [{
    Sets `attn.tier` on each `attn.attention` that has none: `decode` when
    the query length is static and a K/V head's query rows (group x Sq) fit
    one 16-row block and D == Dv is a head dim the decode tier reads with
    16-byte loads, else `wmma`. For `decode` it also sets the schedule's
    `block_q` to those rows, rounded up to a power of two. With
    `mma-tiles` (attn-to-ptx sets it for the mma tier), prefill ops with no
    schedule get the tiles measured best for that tier on an H100: 128 x 64
    for head dims up to 64, and up to 128 where two such blocks fit an SM's
    shared memory (`sm` >= 90), else 128 x 32 (larger head dims keep the
    pipeline's 64 x 32). attn-tile copies the tier onto the loop nest; each
    tier's pass lowers its own nests.
  }];
  let options = [
    Option<"mmaTiles", "mma-tiles", "bool", /*default=*/"false",
           "give prefill ops the mma tier's measured default tiles">,
    Option<"sm", "sm", "int", /*default=*/"80",
           "the target's SM version (90 for sm_90): how much shared memory "
           "the tiles may take">,
  ];
}

def AttnToSplitDecode : Pass<"attn-to-split-decode", "ModuleOp"> {
  let summary = "lower decode loop nests to split-K SIMT kernels";
  let description = [{
    Each loop nest of attn-tile marked `attn.tier = "decode"` becomes two
    kernels: a split kernel, one 128-thread block per (split, K/V head,
    batch x Q tile), in which groups of D / 8 lanes read one key at a time
    with 16-byte loads (K and V read once for all query heads of a GQA
    group), reduce the dot products with shuffles and keep an online
    softmax per row, then merge the block's groups in shared memory and
    write the split's partial (acc, m, l) to a workspace; and a combine
    kernel, one block per output row (threads share the splits for m and
    l, then take a column each), that merges the splits and writes O and
    the LSE. The workspace `memref<R x N x (Dv+2) x f32>` (R = B*Hq*Sq)
    is appended to the host function's arguments; N, its dim 1, is the
    split count the caller chooses at run time.
  }];
  let dependentDialects = ["gpu::GPUDialect", "vector::VectorDialect",
                           "math::MathDialect"];
}

def AttnExternDynamicShared : Pass<"attn-extern-dynamic-shared",
                                  "gpu::GPUModuleOp"> {
  let summary = "declare dynamic shared memory extern, as PTX expects";
  let description = [{
    convert-gpu-to-nvvm gives `gpu.dynamic_shared_memory` an internal
    zero-length global, which the NVPTX backend demotes to a one-byte
    `.shared` variable (ptxas then warns of out-of-bounds accesses). Made
    external, it becomes `.extern .shared .b8 name[]`, the form PTX uses for
    the dynamic shared memory a launch provides.
  }];
  let dependentDialects = ["LLVM::LLVMDialect"];
}

#endif // ATTN_CODEGEN_NVPTX_PASSES_TD
