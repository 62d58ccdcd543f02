//===- AttnOps.td - attn operations ------------------------*- tablegen -*-===//

#ifndef ATTN_OPS_TD
#define ATTN_OPS_TD

include "dialect/AttnBase.td"
include "dialect/AttnAttrs.td"
include "mlir/IR/CommonAttrConstraints.td"
include "mlir/IR/CommonTypeConstraints.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

//===----------------------------------------------------------------------===//
// L0: the problem
//===----------------------------------------------------------------------===//

// Operand types are checked in the verifier, which names the operand.
defvar Attn_AttentionMemRef = AnyMemRef;

def Attn_AttentionOp : Attn_Op<"attention", [
    AttrSizedOperandSegments,
    DeclareOpInterfaceMethods<MemoryEffectsOpInterface>]> {
  let summary = "scaled dot-product attention over buffers (L0)";
  let description = [{
    Computes, for every batch `b`, query head `h` and query row `i`,

        s_j   = softcap(scale * <Q[b,h,i,:], K[b,h/G,j,:]>)     (j visible)
        O[b,h,i,:] = sum_j softmax(s)_j * V[b,h/G,j,:]
        LSE[b,h,i] = log(sum_j exp(s_j))

    with `G = Hq / Hkv` query heads sharing one K/V head (GQA; MQA when
    `Hkv = 1`). Statistics are kept in f32 whatever the element type. A row
    that sees no key gets `O = 0` and `LSE = -inf`.

    Operands (all memrefs, destination style, nothing returned):

    | operand       | shape                             | element type   |
    |---------------|-----------------------------------|----------------|
    | `q`           | [B, Hq, Sq, D]                    | f16, bf16, f32 |
    | `k`           | [B, Hkv, Sk, D]                   | same as q      |
    | `v`           | [B, Hkv, Sk, Dv]                  | same as q      |
    | `o`           | [B, Hq, Sq, Dv]                   | f16, bf16, f32 |
    | `lse`         | [B, Hq, Sq] (optional)            | f32            |
    | `block_table` | [B, max_blocks] (optional, paged) | i32            |
    | `kv_lens`     | [B] (optional)                    | i32            |

    With `block_table`, K and V are paged caches
    `[num_blocks, Hkv, block_size, D]`: key `j` of sequence `b` lives in block
    `block_table[b, j / block_size]` at row `j % block_size`. `kv_lens` gives
    each sequence's K/V length; it is required with a block table and may also
    be given for contiguous K/V (variable lengths up to Sk). Both forms reach
    later passes as the same logical K/V sequence.

    B and S dims may be dynamic (`?`); head counts and head dims are static.
    Memrefs may be strided (e.g. a `[B, S, H, D]` buffer viewed as
    `[B, H, S, D]`) but the head dim must have unit stride.

    Attributes: `scale` (default `1/sqrt(D)`), `mask` (default none),
    `softcap` (logits become `softcap * tanh(s / softcap)`).

    Example (Llama-3-8B-shaped causal prefill, GQA 32/8):

    ```mlir
    attn.attention q(%q : memref<?x32x?x128xf16>)
                   k(%k : memref<?x8x?x128xf16>)
                   v(%v : memref<?x8x?x128xf16>)
                -> o(%o : memref<?x32x?x128xf16>)
                   mask = <causal, bottom_right>
    ```
  }];

  let arguments = (ins
    Attn_AttentionMemRef:$q,
    Attn_AttentionMemRef:$k,
    Attn_AttentionMemRef:$v,
    Optional<AnyMemRef>:$block_table,
    Optional<AnyMemRef>:$kv_lens,
    Attn_AttentionMemRef:$o,
    Optional<AnyMemRef>:$lse,
    OptionalAttr<F32Attr>:$scale,
    OptionalAttr<Attn_MaskAttr>:$mask,
    OptionalAttr<F32Attr>:$softcap);

  let assemblyFormat = [{
    `q` `(` $q `:` type($q) `)`
    `k` `(` $k `:` type($k) `)`
    `v` `(` $v `:` type($v) `)`
    (`block_table` `(` $block_table^ `:` type($block_table) `)`)?
    (`kv_lens` `(` $kv_lens^ `:` type($kv_lens) `)`)?
    `->` `o` `(` $o `:` type($o) `)`
    (`lse` `(` $lse^ `:` type($lse) `)`)?
    (`scale` `=` $scale^)?
    (`mask` `=` $mask^)?
    (`softcap` `=` $softcap^)?
    attr-dict
  }];

  let hasVerifier = 1;

  let extraClassDeclaration = [{
    bool isPaged() { return getBlockTable() != nullptr; }
    int64_t getNumQueryHeads();
    int64_t getNumKVHeads();
    /// Query heads per K/V head (1: MHA, Hq: MQA).
    int64_t getGroupSize() { return getNumQueryHeads() / getNumKVHeads(); }
    int64_t getHeadDim();
    int64_t getValueHeadDim();
    /// Rows per page of a paged cache; 0 for contiguous K/V.
    int64_t getBlockSize();
    /// `scale` if given, else 1/sqrt(D).
    float getScaleOrDefault();
    MaskAttr getMaskOrNone();
  }];
}

#endif // ATTN_OPS_TD
