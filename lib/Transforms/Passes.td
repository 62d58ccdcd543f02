//===- Passes.td - attn target-independent passes ----------*- tablegen -*-===//

#ifndef ATTN_TRANSFORMS_PASSES_TD
#define ATTN_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def AttnCheckKernels : Pass<"attn-check-kernels", "ModuleOp"> {
  let summary = "check the rules of kernel functions (names, results, op counts)";
  let description = [{
    Each function holding attn ops is a kernel: its name must be a C
    identifier (it names PTX, MSL and C symbols), it returns nothing, and
    it holds at most one `attn.attention` and one `attn.cache_append`
    (CheckKernels.h). attn-to-cpu and attn-to-ptx run it first; the MSL
    translation and attn-compile call the same check.
  }];
}

def AttnFoldMods : Pass<"attn-fold-mods", "func::FuncOp"> {
  let summary = "turn score_mod / mask_mod regions the built-ins can say into attributes";
  let description = [{
    A `score_mod` yielding `c * tanh(s / c)` becomes `softcap = c`; a
    `mask_mod` that is a conjunction of comparisons of `q_idx - kv_idx`
    with constants becomes the built-in band (top-left aligned,
    intersected with the op's `mask`), so the kernels skip the tiles it
    hides. A `mask_mod` with other terms keeps its region, and its affine
    terms still narrow the built-in mask. The NVIDIA pipeline runs it
    first; attn-compile's tier note says what folded (FoldMods.h).
  }];
  let dependentDialects = ["arith::ArithDialect", "math::MathDialect"];
}

def AttnTile : Pass<"attn-tile", "func::FuncOp"> {
  let summary = "tile attn.attention into the online-softmax loop (L0 -> L1)";
  let description = [{
    Replaces each `attn.attention` with a parallel `scf.forall` over
    (batch, K/V head, Q tile) and, inside it, an `scf.for` over K/V tiles
    carrying the online-softmax state. Query heads of a GQA group share the
    K/V tiles: a Q tile holds (query, head-in-group) rows, query-major. The
    K/V loop covers only the tiles a Q tile can see under its mask (tiles
    above the causal diagonal or outside the window are skipped); partial
    tiles are masked by `attn.mask`. Tile sizes come from the op's
    `schedule` attribute, else from the options.
  }];
  let options = [
    Option<"blockQ", "block-q", "int64_t", /*default=*/"64",
           "query rows per tile (a power of two, 1..256)">,
    Option<"blockKV", "block-kv", "int64_t", /*default=*/"64",
           "key rows per tile (a power of two, 1..256)">,
  ];
  let dependentDialects = ["arith::ArithDialect", "scf::SCFDialect",
                           "memref::MemRefDialect", "tensor::TensorDialect"];
}

def AttnSplitKV : Pass<"attn-split-kv", "func::FuncOp"> {
  let summary = "split each K/V loop into independent partial states (split-K)";
  let description = [{
    Flash-decoding: rewrites each K/V loop made by `attn-tile` into an
    `scf.forall` over splits, each running the loop over its own range of
    K/V tiles from an empty state, and a loop that combines the partial
    states with `attn.merge`. The number of splits is fixed (`num-splits`,
    so results do not depend on the K/V length's split) or follows from a
    chunk of keys per split (`kv-chunk`). Splits past the end are empty and
    merge as the identity.
  }];
  let options = [
    Option<"numSplits", "num-splits", "int64_t", /*default=*/"0",
           "number of splits (>= 1; 0: not given)">,
    Option<"kvChunk", "kv-chunk", "int64_t", /*default=*/"0",
           "keys per split, a multiple of the K/V tile size (0: not given)">,
  ];
  let dependentDialects = ["arith::ArithDialect", "scf::SCFDialect",
                           "tensor::TensorDialect"];
}

def AttnDecompose : Pass<"attn-decompose", "func::FuncOp"> {
  let summary = "lower the L1 tile ops to linalg, tensor, scf and arith";
  let description = [{
    Each L1 op becomes `linalg.generic` ops on tensors (contractions,
    row reductions, elementwise maps) or loops over memref loads and
    stores, ready for one-shot bufferization and CPU code generation.
  }];
  let dependentDialects = ["arith::ArithDialect", "linalg::LinalgDialect",
                           "math::MathDialect", "memref::MemRefDialect",
                           "scf::SCFDialect", "tensor::TensorDialect"];
}

def AttnLowerAppend : Pass<"attn-lower-append", "func::FuncOp"> {
  let summary = "lower attn.cache_append to loops of memref loads and stores";
  let description = [{
    Each `attn.cache_append` becomes an `scf.for` nest over (batch, new
    token, K/V head, head-dim element) that copies the token's K and V rows
    to their cache rows, with the op's rules: a sequence's tokens start at
    `max(kv_lens[b], 0)`, there are `S_new` of them (or
    `clamp(new_lens[b], 0, S_new)`), tokens past the capacity or the block
    table are skipped, and so are blocks numbered outside the cache. The
    slot-mapping form is one loop over the packed tokens, skipping slots
    outside the cache. The CPU pipeline runs it first; the NVIDIA and MSL backends build their own
    kernels from the op.
  }];
  let dependentDialects = ["arith::ArithDialect", "memref::MemRefDialect",
                           "scf::SCFDialect"];
}

def AttnLowerMergeStates : Pass<"attn-lower-merge-states", "func::FuncOp"> {
  let summary = "lower attn.merge_states to loops of memref loads and stores";
  let description = [{
    Each `attn.merge_states` becomes an `scf.for` nest over (row, head):
    the parts' largest LSE `M`, the weights `exp(L_n - M)` (0 for an empty
    part, whose O is never used), their sum `S`, then for each value
    element the weighted sum of the parts' O times `1 / S`, and `M +
    log(S)` for the LSE; a row with no non-empty part gets `o = 0` and
    `lse = -inf`. Arithmetic is f32 whatever the element types. The CPU
    pipeline runs it first; the NVIDIA and MSL backends build their own
    kernels from the op.
  }];
  let dependentDialects = ["arith::ArithDialect", "math::MathDialect",
                           "memref::MemRefDialect", "scf::SCFDialect"];
}

#endif // ATTN_TRANSFORMS_PASSES_TD
