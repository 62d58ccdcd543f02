//===- Passes.td - attn NVIDIA code generation -------------*- tablegen -*-===//

#ifndef ATTN_CODEGEN_NVPTX_PASSES_TD
#define ATTN_CODEGEN_NVPTX_PASSES_TD

include "mlir/Pass/PassBase.td"

def AttnToWMMA : Pass<"attn-to-wmma", "ModuleOp"> {
  let summary = "lower L1 nests to WMMA kernels with the scores in shared "
                "memory (wmma tier, sm_75+)";
  let description = [{
    Each L1 loop nest of `attn-tile` marked `attn.tier = #attn.tier<wmma>`
    (or unmarked) becomes a `gpu.func` `@<function>_wmma` in
    `gpu.module @attn_kernels`, and the host function launches it with a
    `gpu.launch_func` that carries its `#attn.launch` contract: one block
    of 32 * block_q / 16 threads per (Q tile, K/V head, batch).

    Parts (PrefillPlan.h): WMMA m16n16k16 (mma.sync for bf16, which WMMA
    lacks), padded shared tiles, a ring of 16-byte `cp.async` stages on
    sm_80+ (plain loads below), and the shared-memory score stage
    (ScoresInShared.cpp): the mask and online softmax run on the score
    tile in shared memory, two threads per row, because WMMA fragments are
    opaque. The kernel arguments are q, k, v, [cu_seqlens_q],
    [cu_seqlens_k], [block_table], [kv_lens], the captures, o, [lse] and
    [a block mask's workspace], each an MLIR memref descriptor
    (inputOperands in L1Nest.h, then the outputs).
  }];
  let options = [
    Option<"chip", "chip", "std::string", /*default=*/"\"sm_80\"",
           "target GPU (sm_75, sm_80, sm_86, sm_89, sm_90, sm_90a)">,
  ];
  let dependentDialects = ["gpu::GPUDialect", "nvgpu::NVGPUDialect",
                           "attn::nv::AttnNVDialect",
                           "NVVM::NVVMDialect", "LLVM::LLVMDialect",
                           "vector::VectorDialect", "math::MathDialect",
                           "memref::MemRefDialect", "scf::SCFDialect",
                           "arith::ArithDialect"];
}

def AttnToMMA : Pass<"attn-to-mma", "ModuleOp"> {
  let summary = "lower L1 nests to mma.sync kernels with the scores in "
                "registers (mma tier, sm_80+)";
  let description = [{
    Each L1 loop nest marked `attn.tier = #attn.tier<mma>` (or unmarked)
    becomes a kernel `@<function>_mma` and its launch, as attn-to-wmma.

    Parts (PrefillPlan.h): mma.sync m16n8k16 with ldmatrix loads (.trans
    for V), XOR-swizzled Q/K/V rows (padded where a row is not a multiple
    of 64 elements), a ring of `stages` cp.async K/V tiles, and the
    register score stage (ScoresInRegisters.cpp): S, P, the mask and the
    online softmax stay in mma.sync's accumulator layout, P is repacked
    into A operands without shared memory, row maxima and sums take quad
    shuffles, the rescale is skipped unless a row's maximum grows past
    the slack. Warps beyond one per 16 rows (two 16-row m-tiles at most)
    split each K/V tile's keys; their states merge at the end.
  }];
  let options = [
    Option<"chip", "chip", "std::string", /*default=*/"\"sm_80\"",
           "target GPU (sm_80, sm_86, sm_89, sm_90, sm_90a)">,
  ];
  let dependentDialects = ["gpu::GPUDialect", "nvgpu::NVGPUDialect",
                           "attn::nv::AttnNVDialect",
                           "NVVM::NVVMDialect", "LLVM::LLVMDialect",
                           "vector::VectorDialect", "math::MathDialect",
                           "memref::MemRefDialect", "scf::SCFDialect",
                           "arith::ArithDialect"];
}

def AttnToWGMMA : Pass<"attn-to-wgmma", "ModuleOp"> {
  let summary = "lower L1 nests to wgmma kernels (wgmma tier, sm_90a)";
  let description = [{
    Each L1 loop nest marked `attn.tier = #attn.tier<wgmma>` becomes a
    kernel `@<function>_wgmma` and its launch, as attn-to-mma.

    Parts (PrefillPlan.h): Hopper's warpgroup MMA (WarpgroupMMA.h). Each
    warpgroup (4 warps) owns 64 rows of the Q tile: S = Q K^T is one
    wgmma.mma_async chain with Q and K read from shared memory through
    128-byte-swizzle matrix descriptors, and P V one with P in registers
    and V through a descriptor. Q/K/V tiles sit in 64-column swizzled
    blocks (head dims a multiple of 64). With two stages (the default) K
    has two and V one, V's copy running under Q K^T and the softmax.

    The pipeline is the nest's schedule (`#attn.schedule`'s `kv_load`,
    `q_load`, `o_store`, `producer`, `qk_ahead`, `ping_pong`), which
    attn-select-tier fills in; a field left `auto` takes the default, and
    one the nest cannot honour is a remark (the rules:
    resolveWgmmaPipeline, Passes.h). With `kv_load = tma` the K/V tiles
    come by TMA (`cp.async.bulk.tensor` from tensor maps passed by value,
    completion on mbarriers, one thread issuing), else by cp.async with
    fence.proxy.async before the barrier that hands them to the tensor
    cores. With `q_load = tma`, where K/V come by TMA, one tensor map
    views Q [B, Hq, Sq, D] as [B, Hkv, Sq, group, D], so a box of block_q
    rows is the block's rows in their GQA order; else Q comes by
    cp.async. With `o_store = tma`, where Q comes by TMA, the epilogue
    stages O in Q's blocked layout and one thread stores it through O's
    map (Q's view of O); else each warp copies its staged rows out in
    16-byte stores. The register score stage (ScoresInRegisters.cpp) runs
    unchanged on wgmma's accumulators, whose per-warp layout is
    mma.sync's.

    With `producer = on` (the default), a tile of two or more
    warpgroups whose K/V TMA can read gets a producer warpgroup: warpgroup
    0 gives up registers (setmaxnreg) and its thread 0 sends every K and V
    tile into rings of `stages`, waiting on each stage's "empty" mbarrier;
    the consumer warpgroups take the registers, wait on the "full" ones,
    and release a stage (one arrival per warp) once their products have
    read it. They meet on a named barrier, never the block's.

    Under a producer, up to D128 (`qk_ahead = on`, the default), Q K^T runs a
    tile ahead: step j waits for K_{j+1}, issues its product before tile
    j's softmax, and gives K_{j+1}'s stage back after the wait that ends
    the step.

    `ping_pong = on` (off by default: it measured no faster on an H100) makes the two
    consumer warpgroups take turns on named barriers 2 and 3, each turn
    from a step's P V to the next Q K^T issue.

    Not yet: P V left in flight under the next softmax, and a persistent
    schedule (the producer loading the next tile while the consumers
    finish the last), which short sequences lack.
  }];
  let options = [
    Option<"chip", "chip", "std::string", /*default=*/"\"sm_90a\"",
           "target GPU (sm_90a)">,
  ];
  let dependentDialects = ["gpu::GPUDialect", "nvgpu::NVGPUDialect",
                           "attn::nv::AttnNVDialect",
                           "NVVM::NVVMDialect", "LLVM::LLVMDialect",
                           "vector::VectorDialect", "math::MathDialect",
                           "memref::MemRefDialect", "scf::SCFDialect",
                           "arith::ArithDialect"];
}

def AttnSelectTier : Pass<"attn-select-tier", "func::FuncOp"> {
  let summary = "choose the NVIDIA tier (and Q tile) of each attn.attention";
  let description = [{
    Sets `attn.tier` (`#attn.tier<...>`) on each `attn.attention` that has
    none: `decode` when the query length is static and a K/V head's query
    rows (group x Sq) fit one 16-row block and D == Dv is a head dim the
    decode tier reads with 16-byte loads, else the `prefill` tier. It
    fills in the schedule fields the op leaves at 0 with the tier's
    defaults, which live here and nowhere else (the tiers call the same
    functions, Passes.h, when run on nests without them):

    - decode, f16/bf16 with more than 8 rows on sm_80+, or any rows on
      sm_90+ (`decode-tensor-cores`, the default): the tensor-core split
      kernel, `block_q` = those rows rounded up to a power of two, 16 to
      64, `block_kv` 64, 4 warps, 4 stages where they fit; otherwise
      (f32, sm_75, up to 8 rows on sm_80-89, the option off, or a
      schedule whose `block_q` is at most 8) the SIMT split kernel,
      `block_q` = the rows rounded up to a power of two, `block_kv` 32
      (it reads keys one at a time);
    - mma: the tiles measured best on an H100, 128 x 64 for head dims up
      to 64, and up to 128 where two such blocks fit an SM's shared
      memory (`sm` >= 90), else 128 x 32; 64 x 32 past D128;
    - wmma: 64 x 32 (32 keys let three blocks share an SM);
    - wgmma: 64 x 64 (one warpgroup); past D64, where TMA can read K/V
      and the schedule (or `default-schedule`) leaves `producer` on, a
      producer warpgroup's 128 x 128 (128 x 64 past D128); 128 x 64 at
      D256 otherwise; and every pipeline field (`kv_load`, `q_load`,
      `o_store`, `producer`, `qk_ahead`, `ping_pong`) set to what the
      kernel will do: the op's choice where the kernel can honour it (a
      remark says why where not), else `default-schedule`'s, else TMA,
      a producer and Q K^T ahead wherever they apply, no ping-pong;
    - `warps`: mma, up to two 16-row m-tiles per warp (at most 4 warps);
      wmma, one warp per 16 rows; `stages`: 2 with cp.async (sm_80+),
      else 1.

    attn-tile copies the tier and the schedule onto the loop nest; each
    tier's pass lowers its own nests.
  }];
  let options = [
    Option<"prefill", "prefill", "std::string", /*default=*/"\"mma\"",
           "the tier of prefill ops: mma (sm_80+), wmma, or wgmma "
           "(sm_90a)">,
    Option<"sm", "sm", "int", /*default=*/"80",
           "the target's SM version (90 for sm_90): how much shared memory "
           "the tiles may take">,
    Option<"defaultSchedule", "default-schedule", "std::string",
           /*default=*/"\"\"",
           "an #attn.schedule<...> whose set pipeline fields are the "
           "defaults of the ops that leave them auto (for A/B runs: "
           "producer=off, kv_load=threads, ...)">,
    Option<"decodeTensorCores", "decode-tensor-cores", "bool",
           /*default=*/"true",
           "decode specs with f16/bf16 inputs on sm_90+ take the "
           "tensor-core split kernel whatever their rows a K/V head "
           "(false, and on sm_80-89: the SIMT one up to 8 rows)">,
    Option<"decodeTensorCoreStages", "decode-tensor-core-stages", "int64_t",
           /*default=*/"::mlir::attn::kDecodeTensorCoreStages",
           "K/V tiles in flight in the tensor-core split kernel, where "
           "they fit the chip's shared memory (else 2)">,
  ];
}

def AttnToDecode : Pass<"attn-to-decode", "ModuleOp"> {
  let summary = "lower decode loop nests to split-K kernels (tensor-core "
                "or SIMT) and their combine";
  let description = [{
    Each loop nest of attn-tile marked `attn.tier = #attn.tier<decode>`
    becomes two kernels: a split kernel, one block per (split, K/V head,
    batch x Q tile), that writes the split's partial (acc, m, l) to a
    workspace, and a combine kernel, one block per output row (threads
    share the splits for m and l, then take a column each, 8 splits'
    loads in flight at a time), that merges the splits and writes O and
    the LSE. The workspace `memref<R x N x (Dv+2) x f32>` (R = B*Hq*Sq)
    is appended to the host function's arguments; N, its dim 1, is the
    split count the caller chooses at run time.

    The split kernel follows the nest's Q tile (attn-select-tier's
    choice). A tile of 16-64 rows with f16/bf16 inputs on sm_80+ gets the
    mma tier's skeleton in split-K form (mma.sync over the rows and
    64-key tiles, wgmma's on sm_90a for whole warpgroups, each block over
    its split's tiles). A tile of at most 8 rows (f32 inputs, sm_75, or
    when asked) gets the SIMT kernel, 128 threads in which groups of
    D / 8 lanes read one key at a time with 16-byte loads (K and V read
    once for all query heads of a GQA group), reduce the dot products
    with shuffles and keep an online softmax per row, then merge the
    block's groups in shared memory. Both write the same workspace for
    the same combine kernel.
  }];
  let options = [
    Option<"chip", "chip", "std::string", /*default=*/"\"sm_80\"",
           "target chip, sm_XY: whether the tensor-core split kernel "
           "(sm_80+) is available">,
  ];
  let dependentDialects = ["gpu::GPUDialect", "nvgpu::NVGPUDialect",
                           "attn::nv::AttnNVDialect",
                           "NVVM::NVVMDialect", "LLVM::LLVMDialect",
                           "vector::VectorDialect", "math::MathDialect",
                           "memref::MemRefDialect", "scf::SCFDialect",
                           "arith::ArithDialect"];
}

def AttnToCopy : Pass<"attn-to-copy", "ModuleOp"> {
  let summary = "lower attn.cache_append and attn.merge_states to vector "
                "kernels (copy tier)";
  let description = [{
    Each `attn.cache_append` becomes a kernel `@<function>_append` in
    `gpu.module @attn_kernels` and its `gpu.launch_func`, with a
    `#attn.launch<append, tier = copy, ...>` contract: one block per
    (chunk of new tokens, K/V head, batch). A block's threads take the
    chunk's rows in 16-byte pieces (narrower where D is not a multiple of
    16 bytes), each thread several, K and V: every thread issues all its
    loads before its first store, so many bytes are in flight. Rows past
    a sequence's new tokens, its capacity or its block table, and blocks
    numbered outside the cache, are skipped as the op says. The kernel
    arguments are k_new, v_new, [block_table], kv_lens, [new_lens],
    k_cache, v_cache, each an MLIR memref descriptor.

    Each `attn.merge_states` becomes a kernel `@<function>_merge` with a
    `#attn.launch<merge, tier = copy, ...>` contract: one block per group
    of (t, h) rows, one thread per 16-byte piece of a row's Dv values
    (f32 arithmetic; 16 bytes of the wider of the parts' and O's element
    types). A thread takes the row's largest LSE M, then sums the parts'
    pieces weighted by 2^((L_n - M) log2 e) (0 for an empty part, whose O
    it never uses) and divides by the weights' sum; an empty row is O = 0,
    LSE = -inf. A static part count of at most 8 is unrolled with every
    load issued first. The kernel arguments are o_parts, lse_parts, o,
    [lse].
  }];
  let dependentDialects = ["gpu::GPUDialect", "vector::VectorDialect",
                           "memref::MemRefDialect", "scf::SCFDialect",
                           "arith::ArithDialect", "math::MathDialect",
                           "LLVM::LLVMDialect"];
}

def AttnNVToNVVM : Pass<"attn-nv-to-nvvm"> {
  let summary = "expand attn_nv's tile instructions into nvvm, nvgpu and "
                "inline PTX";
  let description = [{
    Runs after the tier passes. Each `attn_nv` op becomes, in its place,
    the instructions it stands for (one pattern per op, one walk, no
    folding): `attn_nv.mma_tile` two `nvvm.mma.sync` m16n8k16 on its
    unpacked registers, `attn_nv.ldmatrix` an `nvgpu.ldmatrix` packed into
    i32 registers, `attn_nv.online_softmax` the step's quad shuffles,
    ex2 and sums (RegisterMath.h) with P packed into A fragments,
    `attn_nv.copy_tile` each thread's 16-byte chunks unrolled (`cp.async`
    or a load and a store, the source region inlined per chunk),
    `attn_nv.for_each_chunk` its rounds unrolled, each guarded body
    inlined, `attn_nv.mask_tile` MaskRules per element,
    `attn_nv.store_accumulator` four rounded pair stores, `attn_nv.wgmma` a fence, its chain of
    `wgmma.mma_async` (inline PTX on a struct of f32, with the shared
    tiles' matrix descriptors) and a commit, `attn_nv.fence_registers` an
    empty asm with side effects tied to every element.
  }];
  let dependentDialects = ["NVVM::NVVMDialect", "LLVM::LLVMDialect",
                           "nvgpu::NVGPUDialect", "gpu::GPUDialect",
                           "vector::VectorDialect", "math::MathDialect",
                           "scf::SCFDialect", "arith::ArithDialect"];
}

def AttnExternDynamicShared : Pass<"attn-extern-dynamic-shared",
                                  "gpu::GPUModuleOp"> {
  let summary = "declare dynamic shared memory extern, as PTX expects";
  let description = [{
    convert-gpu-to-nvvm gives `gpu.dynamic_shared_memory` an internal
    zero-length global, which the NVPTX backend demotes to a one-byte
    `.shared` variable (ptxas then warns of out-of-bounds accesses). Made
    external, it becomes `.extern .shared .b8 name[]`, the form PTX uses for
    the dynamic shared memory a launch provides. In a module with wgmma
    kernels it is also aligned to 1024 bytes, the swizzle atom of the
    descriptors they read shared tiles through.
  }];
  let dependentDialects = ["LLVM::LLVMDialect"];
}

def AttnTensorMapParams : Pass<"attn-tensor-map-params",
                               "gpu::GPUModuleOp"> {
  let summary = "pass TMA tensor maps by value, as __grid_constant__";
  let description = [{
    A kernel whose first N parameters are TMA tensor maps carries
    `attn.tensor_map_params = N` (an i64). convert-gpu-to-nvvm keeps
    neither `llvm.byval` nor `nvvm.grid_constant` on gpu.func arguments,
    so after it this pass gives each of those `llvm.func` parameters
    `llvm.byval = !llvm.array<128 x i8>`, `llvm.align = 64` and
    `nvvm.grid_constant`: PTX then declares `.param .align 64 .b8 p[128]`
    and the kernel reads the map where the launch put it, which is what
    `cp.async.bulk.tensor` wants (a CUtensorMap is 128 bytes, 64-aligned).
    The attribute is removed.
  }];
  let dependentDialects = ["LLVM::LLVMDialect", "NVVM::NVVMDialect"];
}

#endif // ATTN_CODEGEN_NVPTX_PASSES_TD
