//===- AttnOps.td - attn operations ------------------------*- tablegen -*-===//

#ifndef ATTN_OPS_TD
#define ATTN_OPS_TD

include "dialect/AttnBase.td"
include "dialect/AttnAttrs.td"
include "mlir/IR/CommonAttrConstraints.td"
include "mlir/IR/CommonTypeConstraints.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/Interfaces/ControlFlowInterfaces.td"

//===----------------------------------------------------------------------===//
// L0: the problem
//===----------------------------------------------------------------------===//

// Operand types are checked in the verifier, which names the operand.
defvar Attn_AttentionMemRef = AnyMemRef;

def Attn_AttentionOp : Attn_Op<"attention", [
    AttrSizedOperandSegments, IsolatedFromAbove, Attn_HoldsModRegion,
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

    Attention sinks (GPT-OSS `sinks`, FlashAttention's `s_aux`): with
    `sinks` (`[Hq]`, one learned logit per query head), the sink joins the
    softmax denominator and carries no value. With `s_j` the row's visible
    scores (after scale, softcap, score_mod and masking) and
    `M = max(max_j s_j, sinks[h])`:

        O[b,h,i,:] = sum_j exp(s_j - M) V[b,h/G,j,:]
                     / (sum_j exp(s_j - M) + exp(sinks[h] - M))
        LSE[b,h,i] = M + log(sum_j exp(s_j - M) + exp(sinks[h] - M))

    so the LSE counts the sink. The sink is in the scores' natural-log
    units (it is not multiplied by `scale`). A row that sees no key gets
    `O = 0` and `LSE = sinks[h]`. Under split-K the sink joins once, when
    the partial states are finalized (the NVIDIA split-K combine, the
    attn.merge that ends attn-split-kv). Every backend and tier takes
    `sinks`: CPU, Metal, and NVIDIA's wmma, mma, wgmma and decode.

    Operands (all memrefs, destination style, nothing returned):

    | operand       | shape                             | element type   |
    |---------------|-----------------------------------|----------------|
    | `q`           | [B, Hq, Sq, D]                    | f16, bf16, f32 |
    | `k`           | [B, Hkv, Sk, D]                   | same as q      |
    | `v`           | [B, Hkv, Sk, Dv] (or `v_from_k`)  | same as q      |
    | `o`           | [B, Hq, Sq, Dv]                   | f16, bf16, f32 |
    | `lse`         | [B, Hq, Sq] (optional)            | f32            |
    | `block_table` | [B, max_blocks] (optional, paged) | i32            |
    | `kv_lens`     | [B] (optional)                    | i32            |
    | `sinks`       | [Hq] (optional)                   | f16, bf16, f32 |
    | `k_scale`     | (optional) see below              | f32            |
    | `v_scale`     | (optional) see below              | f32            |
    | `q_scale`     | (optional) [] or [Hq]             | f32            |

    Packed (varlen) batches, as FlashAttention's varlen API takes them:
    with `cu_seqlens_q` (`[B+1]` i32, monotone offsets from 0), Q, O and
    LSE hold the tokens of every sequence back to back: Q `[total_q, Hq,
    D]`, O `[total_q, Hq, Dv]`, LSE `[total_q, Hq]`, and sequence `b` owns
    rows `cu_seqlens_q[b] .. cu_seqlens_q[b+1] - 1`, so its
    `q_len = cu_seqlens_q[b+1] - cu_seqlens_q[b]` and B is
    `cu_seqlens_q`'s length minus 1. With `cu_seqlens_k` K and V are
    packed the same way (`[total_k, Hkv, D]`, `kv_len` from the offsets);
    it excludes `block_table` and `kv_lens`. Q may be packed over
    contiguous, packed or paged K/V (chunked prefill: new tokens against a
    paged cache), and K/V may be packed under a padded Q. Masks align per
    sequence: bottom-right shifts by that sequence's `kv_len - q_len`. A
    query that sees no key (q_len > kv_len under a bottom-right causal
    mask) gets `O = 0` and `LSE = -inf`. `max_q_len` is an optional
    promise that no sequence has more query tokens; backends may leave
    rows past it unwritten, and the decode tier takes a spec whose
    `max_q_len` is at most 16. The caller guarantees monotone offsets that
    fit the buffers.

    Quantized K/V caches (vLLM's `kv_cache_dtype`, TensorRT-LLM's int8
    and fp8 caches): K and V may hold `f8E4M3FN`, `f8E5M2` or `i8` (both
    the same) under a float Q. An element's value is its stored value
    times its dequantization scale,

        K[..., j, :] = decode(k[..., j, :]) * k_scale[g(j)]

    and the same for V with `v_scale`; `decode` reads the OCP fp8 formats
    exactly (e4m3fn: bias 7, no infinities, S.1111.111 is NaN; e5m2: the
    top byte of an f16) and an `i8` as its integer. A scale (f32,
    contiguous) has one of three granularities, told by its rank:

    | rank            | granularity        | shape                       |
    |-----------------|--------------------|-----------------------------|
    | 0               | per tensor         | `memref<f32>`               |
    | 1               | per K/V head       | [Hkv]                       |
    | K/V's rank - 1  | per token and head | K/V's shape without D       |

    (per token: [B, Hkv, Sk], paged [num_blocks, Hkv, block_size], packed
    [total_k, Hkv]). An absent scale is 1. Attention then runs on the
    dequantized values as on any others (f32 products and statistics). A
    scale belongs to a quantized operand only: `k_scale` with an f16 K is
    refused.

    fp8 attention (FlashAttention-3's fp8 forward): over a quantized K/V
    cache, Q may be `f8E4M3FN` or `f8E5M2` too, dequantized the same way
    with `q_scale`, per tensor (rank 0) or per query head (`[Hq]`). O
    stays f16, bf16 or f32.

    Multi-head latent attention (DeepSeek-V2/V3's MLA, absorbed decode):
    with the unit attribute `v_from_k` there is no `v` operand; V is the
    first Dv columns of K, the same buffer, where Dv is O's head dim:

        V[..., j, :] = K[..., j, 0:Dv]        (Dv <= D)

    so one latent cache of `[.., 1, Sk, 576]` (512 values, then 64 rotary
    ones) serves both products with no copy. Every form of K (contiguous,
    paged, packed, quantized) takes it; a quantized K's `k_scale` scales
    V too, so `v_scale` is not given. MLA's softmax scale is the model's
    (the query's 192-wide head before absorption), not 1/sqrt(576): give
    `scale`.

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
    `softcap` (logits become `softcap * tanh(s / softcap)`), `schedule`
    (tile sizes for `attn-tile`; pass options give the defaults).

    Programmable attention (FlexAttention's `score_mod` and `mask_mod`):
    two optional regions, each one block of pure `arith`/`math` ops and
    `memref.load`s from the captures, ended by `attn.yield`.

        score_mod: (score: f32, b, h, q_idx, kv_idx: index, captures...) -> f32
        mask_mod:  (b, h, q_idx, kv_idx: index, captures...) -> i1

    `captures(...)` are extra read-only memrefs (any rank, integer or
    float elements, identity layout) that the regions may load from:
    ALiBi slopes, bias tables, document ids. The op is
    IsolatedFromAbove: a region reaches the captures only through its
    trailing block arguments (one per capture, in order, of the capture's
    type), never through values defined outside. So a region can be
    cloned into any kernel (an L1 op, a GPU softmax step) by mapping its
    arguments, and no upstream pass (CSE, constant hoisting) can move a
    value out of it.

    Semantics: `b` is the sequence, `h` the query head, `q_idx` and
    `kv_idx` the query's and key's positions in their sequence (for the
    packed and paged forms, per sequence: row `cu_seqlens_q[b] + q_idx`
    of a packed Q; a bottom-right causal mask compares them as usual).
    The score given to `score_mod` is `cap(scale * <q, k>)`, the built-in
    `scale` and `softcap` applied first, in natural (not base-2) units;
    its result is the logit the softmax uses (`-inf` hides the key).
    A key is visible when it is inside the sequence (`kv_idx < kv_len`),
    the built-in `mask` shows it AND `mask_mod` yields true. The built-in
    mask also bounds which K/V tiles are visited; `mask_mod` does not
    (yet): its hidden keys are masked per element. The regions are
    evaluated only for positions inside the sequence (`q_idx < q_len`,
    `kv_idx < kv_len`; `mask_mod` only where the built-in mask shows
    the key), but possibly for any of those, so their loads must be in
    bounds for every such position. Every target lowers the regions:
    the CPU and NVIDIA paths inline them at each score, Metal prints each
    as an inline MSL function (f32 and integer values only there).

    Region rules (AttnMods.h): at most 256 ops; the arith and math ops of
    attn's list (those every backend lowers and the float64 reference
    evaluates), on index, i1 to i64, f16, bf16, f32 and f64; captures of
    i1 to i64 or f16, bf16, f32, f64 elements with the operands' dim and
    span limits. An integer division (`divsi`, `divui`, `remsi`, `remui`,
    `ceildivsi`, `floordivsi`) needs a divisor that integer range analysis
    proves nonzero at every position (and, for the signed ones, not -1
    unless the dividend is never the signed minimum): clamp it first. A
    load whose index is always outside a static dim is refused; one whose
    index only sometimes is (computed from data) is the caller's to keep
    in bounds, as FlexAttention's caller does.

    Limits, so that every backend's index and score arithmetic stays in
    range (64-bit element offsets, f32 scale factors):
    - static dims are in [1, 2^31-1], head dims at most 1024;
    - static strides are in [0, 2^40] elements, and the elements an operand
      addresses through its static sizes and strides span less than 2^48;
    - window extents are at most 2^31-1 (the longest sequence);
    - `scale` is at most 2^64. The scores are f32 products
      `scale * log2(e) * <q, k>`, so this keeps them finite for any f16
      inputs (`|<q, k>| <= 1024 * 65504^2`) and for bf16 and f32 inputs
      while `|<q, k>| < 1.2e19`; past that a row's scores overflow to inf
      and its output is wrong. A soft-cap bounds the scores whatever the
      inputs;
    - `softcap * log2(e)` and `scale / softcap`, which the kernels fold
      into f32 constants, must be finite in f32;
    - `o` and `lse` are written, so their layouts must not alias: taking
      the dims of size > 1 by increasing stride, each stride must exceed
      the farthest offset of the dims before it. The verifier checks the
      static part; the runtime checks the dynamic strides of each call.

    Example (Llama-3-8B-shaped causal prefill, GQA 32/8):

    ```mlir
    attn.attention q(%q : memref<?x32x?x128xf16>)
                   k(%k : memref<?x8x?x128xf16>)
                   v(%v : memref<?x8x?x128xf16>)
                -> o(%o : memref<?x32x?x128xf16>)
                   mask = <causal, bottom_right>
    ```

    With a region (ALiBi: a per-head slope times the key's distance):

    ```mlir
    attn.attention q(%q : memref<?x32x?x128xf16>)
                   k(%k : memref<?x32x?x128xf16>)
                   v(%v : memref<?x32x?x128xf16>)
                   captures(%slopes : memref<32xf32>)
                -> o(%o : memref<?x32x?x128xf16>)
                   mask = <causal>
                   score_mod {
    ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index,
         %sl: memref<32xf32>):
      %slope = memref.load %sl[%h] : memref<32xf32>
      %d = arith.subi %j, %i : index
      %di = arith.index_cast %d : index to i64
      %df = arith.sitofp %di : i64 to f32
      %bias = arith.mulf %slope, %df : f32
      %r = arith.addf %s, %bias : f32
      attn.yield %r : f32
    }
    ```
  }];

  let arguments = (ins
    Attn_AttentionMemRef:$q,
    Attn_AttentionMemRef:$k,
    Optional<Attn_AttentionMemRef>:$v,
    Optional<AnyMemRef>:$cu_seqlens_q,
    Optional<AnyMemRef>:$cu_seqlens_k,
    Optional<AnyMemRef>:$block_table,
    Optional<AnyMemRef>:$kv_lens,
    Optional<AnyMemRef>:$sinks,
    Optional<AnyMemRef>:$k_scale,
    Optional<AnyMemRef>:$v_scale,
    Optional<AnyMemRef>:$q_scale,
    Attn_AttentionMemRef:$o,
    Optional<AnyMemRef>:$lse,
    Variadic<AnyMemRef>:$captures,
    OptionalAttr<F32Attr>:$scale,
    OptionalAttr<Attn_MaskAttr>:$mask,
    OptionalAttr<F32Attr>:$softcap,
    OptionalAttr<I64Attr>:$max_q_len,
    OptionalAttr<Attn_ScheduleAttr>:$schedule,
    UnitAttr:$v_from_k);
  let regions = (region AnyRegion:$score_mod, AnyRegion:$mask_mod);

  let assemblyFormat = [{
    `q` `(` $q `:` type($q) `)`
    `k` `(` $k `:` type($k) `)`
    (`v` `(` $v^ `:` type($v) `)`)?
    (`v_from_k` $v_from_k^)?
    (`cu_seqlens_q` `(` $cu_seqlens_q^ `:` type($cu_seqlens_q) `)`)?
    (`cu_seqlens_k` `(` $cu_seqlens_k^ `:` type($cu_seqlens_k) `)`)?
    (`block_table` `(` $block_table^ `:` type($block_table) `)`)?
    (`kv_lens` `(` $kv_lens^ `:` type($kv_lens) `)`)?
    (`sinks` `(` $sinks^ `:` type($sinks) `)`)?
    (`k_scale` `(` $k_scale^ `:` type($k_scale) `)`)?
    (`v_scale` `(` $v_scale^ `:` type($v_scale) `)`)?
    (`q_scale` `(` $q_scale^ `:` type($q_scale) `)`)?
    (`captures` `(` $captures^ `:` type($captures) `)`)?
    `->` `o` `(` $o `:` type($o) `)`
    (`lse` `(` $lse^ `:` type($lse) `)`)?
    (`scale` `=` $scale^)?
    (`mask` `=` $mask^)?
    (`softcap` `=` $softcap^)?
    (`max_q_len` `=` $max_q_len^)?
    (`schedule` `=` $schedule^)?
    (`score_mod` $score_mod^)?
    (`mask_mod` $mask_mod^)?
    attr-dict
  }];

  let hasVerifier = 1;
  let hasRegionVerifier = 1;

  let extraClassDeclaration = [{
    bool isPaged() { return getBlockTable() != nullptr; }
    /// Whether the op has attention sinks.
    bool hasSinks() { return getSinks() != nullptr; }
    bool hasScoreMod() { return !getScoreMod().empty(); }
    bool hasMaskMod() { return !getMaskMod().empty(); }
    /// Whether the op has a score_mod or mask_mod region.
    bool hasMods() { return hasScoreMod() || hasMaskMod(); }
    /// Whether K and V are a quantized cache (fp8 or i8 elements).
    bool isQuantizedKV();
    /// Whether Q is fp8 (fp8 attention).
    bool isQuantizedQ();
    /// Q, O and LSE packed by cu_seqlens_q ([total_q, H, D]).
    bool isPackedQ() { return getCuSeqlensQ() != nullptr; }
    /// K and V packed by cu_seqlens_k ([total_k, Hkv, D]).
    bool isPackedKV() { return getCuSeqlensK() != nullptr; }
    /// The most queries a sequence has, where the spec fixes it: a padded
    /// Q's static Sq, or a packed Q's max_q_len.
    std::optional<int64_t> getStaticQueryLength();
    int64_t getNumQueryHeads();
    int64_t getNumKVHeads();
    /// Query heads per K/V head (1: MHA, Hq: MQA).
    int64_t getGroupSize() { return getNumQueryHeads() / getNumKVHeads(); }
    int64_t getHeadDim();
    /// Dv: O's head dim, which V's is (or the columns of K that are V).
    int64_t getValueHeadDim();
    /// The buffer V is read from: `v`, or `k` under `v_from_k`.
    Value getValueBuffer() { return getVFromK() ? getK() : getV(); }
    /// Rows per page of a paged cache; 0 for contiguous K/V.
    int64_t getBlockSize();
    /// `scale` if given, else 1/sqrt(D).
    float getScaleOrDefault();
    MaskAttr getMaskOrNone();
  }];
}

def Attn_CacheAppendOp : Attn_Op<"cache_append", [
    AttrSizedOperandSegments,
    DeclareOpInterfaceMethods<MemoryEffectsOpInterface>]> {
  let summary = "write new tokens' K and V into a K/V cache (L0)";
  let description = [{
    The sibling of `attn.attention` that fills the cache it reads. For every
    batch `b`, K/V head `h` and new token `t < n_b`:

        pos = max(kv_lens[b], 0) + t
        k_cache[slot(b, pos), h, row(pos), :] = k_new[b, h, t, :]
        v_cache[slot(b, pos), h, row(pos), :] = v_new[b, h, t, :]

    with `n_b = min(max(new_lens[b], 0), S_new)` when `new_lens` is given
    (ragged appends), else `S_new`. Contiguous caches
    `[B, Hkv, capacity, D]` have `slot = b`, `row = pos`; paged caches
    `[num_blocks, Hkv, block_size, D]` (the layout `attn.attention` reads)
    have `slot = block_table[b, pos / block_size]`, `row = pos % block_size`.

    The slot-mapping form (vLLM's `reshape_and_cache`) takes packed new
    tokens `[T, Hkv, D]` and `slot_mapping` `[T]` instead of kv_lens (and
    block_table, new_lens): token `t` goes to slot `s = slot_mapping[t]`
    of a cache `[N, Hkv, R, D]`, row `s % R` of block `s / R` (R is the
    block size of a paged cache, or the capacity of a contiguous one whose
    N is the batch). A slot outside `[0, N * R)`, e.g. vLLM's padding -1,
    is skipped.

    Operands (all memrefs, destination style, nothing returned):

    | operand       | shape                                  | element type   |
    |---------------|----------------------------------------|----------------|
    | `k_new`       | [B, Hkv, S_new, D]                     | f16, bf16, f32 |
    | `v_new`       | [B, Hkv, S_new, Dv]                    | same as k_new  |
    | `block_table` | [B, max_blocks] (optional, paged)      | i32            |
    | `kv_lens`     | [B], each sequence's length before     | i32            |
    | `new_lens`    | [B] (optional), new tokens per sequence| i32            |
    | `slot_mapping`| [T] (instead of kv_lens), packed form  | i32            |
    | `k_cache`     | [B, Hkv, capacity, D] or paged         | same as k_new  |
    | `v_cache`     | [B, Hkv, capacity, Dv] or paged        | same as k_new  |

    Quantized caches (the fp8 and i8 K/V caches `attn.attention` reads,
    both in one format) take f16, bf16 or f32 new tokens and store each
    element as the byte nearest `x / scale` (ties to even; fp8 saturates
    at its largest finite value, i8 clamps to [-127, 127]). The scales
    `k_scale`, `v_scale` (f32, contiguous, optional: 1 when absent) are
    those `attn.attention` takes:
    - rank 0 (per tensor) or 1 (`[Hkv]`, per K/V head): read;
    - the cache's shape without D (`[num_blocks, Hkv, block_size]` paged,
      `[B, Hkv, capacity]` contiguous, `[N, Hkv, R]` slot-mapped): per
      token and head, computed and written: each appended row's scale is
      `absmax(row) / largest` (448 e4m3, 57344 e5m2, 127 i8), written at
      the row's slot beside the cache (0, with zero bytes, for a row of
      zeros).

    The op does NOT update `kv_lens`: the caller adds `n_b` (S_new, or
    its `new_lens`) before the attention that reads the new tokens, e.g.
    `attn.attention ... kv_lens(kv_lens + n)`. It writes nothing but the
    new tokens' rows: a token whose position is at or past the capacity
    (contiguous) or past what the block table can name
    (`max_blocks * block_size`), or whose block number is outside
    `[0, num_blocks)`, is skipped; nothing is ever written out of bounds.

    B, S_new, capacity, num_blocks and max_blocks may be dynamic; head
    counts, head dims and the block size are static. The limits of
    `attn.attention` on dims and strides apply; the caches are written,
    so their layouts must not alias, and `k_cache`, `v_cache` must be
    other buffers than each other and than the new tokens.

    Examples (one decode step into a paged cache; packed tokens through a
    slot mapping):

    ```mlir
    attn.cache_append k_new(%kn : memref<?x8x1x128xf16>)
                      v_new(%vn : memref<?x8x1x128xf16>)
                      block_table(%bt : memref<?x?xi32>)
                      kv_lens(%lens : memref<?xi32>)
                   -> k_cache(%kc : memref<?x8x16x128xf16>)
                      v_cache(%vc : memref<?x8x16x128xf16>)
    attn.cache_append k_new(%kn : memref<?x8x128xf16>)
                      v_new(%vn : memref<?x8x128xf16>)
                      slot_mapping(%slots : memref<?xi32>)
                   -> k_cache(%kc : memref<?x8x16x128xf16>)
                      v_cache(%vc : memref<?x8x16x128xf16>)
    ```
  }];

  let arguments = (ins
    AnyMemRef:$k_new,
    AnyMemRef:$v_new,
    Optional<AnyMemRef>:$block_table,
    Optional<AnyMemRef>:$kv_lens,
    Optional<AnyMemRef>:$new_lens,
    Optional<AnyMemRef>:$slot_mapping,
    Optional<AnyMemRef>:$k_scale,
    Optional<AnyMemRef>:$v_scale,
    AnyMemRef:$k_cache,
    AnyMemRef:$v_cache);

  let assemblyFormat = [{
    `k_new` `(` $k_new `:` type($k_new) `)`
    `v_new` `(` $v_new `:` type($v_new) `)`
    (`block_table` `(` $block_table^ `:` type($block_table) `)`)?
    (`kv_lens` `(` $kv_lens^ `:` type($kv_lens) `)`)?
    (`new_lens` `(` $new_lens^ `:` type($new_lens) `)`)?
    (`slot_mapping` `(` $slot_mapping^ `:` type($slot_mapping) `)`)?
    (`k_scale` `(` $k_scale^ `:` type($k_scale) `)`)?
    (`v_scale` `(` $v_scale^ `:` type($v_scale) `)`)?
    `->` `k_cache` `(` $k_cache `:` type($k_cache) `)`
    `v_cache` `(` $v_cache `:` type($v_cache) `)`
    attr-dict
  }];

  let hasVerifier = 1;

  let extraClassDeclaration = [{
    bool isPaged() { return getBlockTable() != nullptr; }
    /// The slot-mapping form: packed [T, Hkv, D] tokens, one slot each.
    bool isSlotMapped() { return getSlotMapping() != nullptr; }
    int64_t getNumKVHeads();
    int64_t getHeadDim();
    int64_t getValueHeadDim();
    /// Rows per page of a paged cache; 0 for a contiguous cache. In the
    /// slot-mapping form, the cache's dim 2 (rows per slot block; may be
    /// dynamic).
    int64_t getBlockSize();
    /// Whether the caches are quantized (fp8 or i8 elements).
    bool isQuantized();
    /// Whether `scale` (k_scale or v_scale) is per token, which the op
    /// computes and writes.
    bool writesScale(Value scale);
  }];
}

def Attn_MergeStatesOp : Attn_Op<"merge_states", [
    DeclareOpInterfaceMethods<MemoryEffectsOpInterface>]> {
  let summary = "merge partial attention states over disjoint keys (L0)";
  let description = [{
    Attention over a key set split into N disjoint parts is the merge of the
    parts' results through their log-sum-exps: with `L_n = lse_parts[n,t,h]`
    (natural log, as `attn.attention` writes it) and `M = max_n L_n`,

        w_n    = exp(L_n - M)                     (0 where L_n = -inf)
        o[t,h,:] = sum_n w_n * o_parts[n,t,h,:] / sum_n w_n
        lse[t,h] = M + log(sum_n w_n)

    A row whose parts are all empty (every `L_n = -inf`) gets `o = 0` and
    `lse = -inf`, as `attn.attention` writes a row that sees no key. The O
    of an empty part is never used, so it may hold anything (NaN
    included). This is how cascade (shared-prefix) attention joins the
    prefix's result to each request's own, and how context parallelism
    joins the results of the sequence's slices.

    Operands (memrefs, destination style, nothing returned):

    | operand     | shape                         | element type   |
    |-------------|-------------------------------|----------------|
    | `o_parts`   | [N, T, H, Dv]                 | f16, bf16, f32 |
    | `lse_parts` | [N, T, H]                     | f32            |
    | `o`         | [T, H, Dv]                    | f16, bf16, f32 |
    | `lse`       | [T, H] (optional)             | f32            |

    `T` and `H` are any two row dims: packed tokens and heads
    (`[total_q, Hq, Dv]`, FlashAttention's varlen layout), or the batch's
    heads and queries of a `[B, Hq, Sq, Dv]` O seen as `[B * Hq, Sq, Dv]`.
    Strides may be any the attention op's operands take, so parts written
    in place by earlier attention ops (`[N, ...]` views of one buffer, or
    FlashInfer's `[T, N, H, Dv]`) are read where they are; the LSEs may
    have any strides, the innermost too (vLLM's `[H, T]`). `N` and `T` may
    be dynamic; `H` and `Dv` are static. `o`'s element type may differ
    from the parts' (f32 partials into an f16 result). `o` and `lse` are
    written, so their layouts must not alias, and they must be other
    buffers than the parts.

    ```mlir
    attn.merge_states o_parts(%op : memref<2x?x32x128xf32>)
                      lse_parts(%lp : memref<2x?x32xf32>)
                   -> o(%o : memref<?x32x128xf16>) lse(%l : memref<?x32xf32>)
    ```
  }];

  let arguments = (ins
    AnyMemRef:$o_parts,
    AnyMemRef:$lse_parts,
    AnyMemRef:$o,
    Optional<AnyMemRef>:$lse);

  let assemblyFormat = [{
    `o_parts` `(` $o_parts `:` type($o_parts) `)`
    `lse_parts` `(` $lse_parts `:` type($lse_parts) `)`
    `->` `o` `(` $o `:` type($o) `)`
    (`lse` `(` $lse^ `:` type($lse) `)`)?
    attr-dict
  }];

  let hasVerifier = 1;

  let extraClassDeclaration = [{
    /// H: the heads (the second row dim), static.
    int64_t getNumHeads();
    /// Dv: the value head dim, static.
    int64_t getValueHeadDim();
  }];
}

//===----------------------------------------------------------------------===//
// L1: the tiled online-softmax algorithm
//
// Tiles are static-shaped tensors; the online-softmax state (running max m,
// running sum l, accumulator acc) is f32 and travels as loop values. Scores
// are kept in base-2 logit units (log2(e) folded into the scale) so the
// exponentials are exp2. Rows of a Q tile are (query, head-in-group) pairs,
// query-major: tile row r of a tile starting at flat row `row` is query
// (row + r) / G of head kv_head * G + (row + r) % G, with G the GQA group.
//===----------------------------------------------------------------------===//

defvar Attn_Tile = AnyRankedTensor;

def Attn_InitStateOp : Attn_Op<"init_state", [Pure,
    AllTypesMatch<["max", "sum"]>]> {
  let summary = "empty online-softmax state: m = -inf, l = 0, acc = 0";
  let description = [{
    ```mlir
    %m, %l, %acc = attn.init_state : tensor<64xf32>, tensor<64x128xf32>
    ```
  }];
  let results = (outs Attn_Tile:$max, Attn_Tile:$sum, Attn_Tile:$acc);
  let assemblyFormat = "attr-dict `:` type($max) `,` type($acc)";
  let hasVerifier = 1;
  let builders = [OpBuilder<(ins "int64_t":$rows, "int64_t":$valueDim)>];
}

def Attn_LoadQOp : Attn_Op<"load_q", [AttrSizedOperandSegments]> {
  let summary = "load a Q tile, zero rows past the end";
  let description = [{
    `tile[r, :] = q[batch, kv_head * G + f % G, f / G, :]` with
    `f = row + r`, `G = group`; rows with `f >= G * Sq` are zero.

    Packed (`seq(start, len)`, q `[total_q, Hq, D]`): the sequence's rows
    start at row `start` of q and it has `len` queries:
    `tile[r, :] = q[start + f / G, kv_head * G + f % G, :]`, zero for
    `f >= G * len`. `batch` is then only the sequence's number.

    An fp8 `q` (fp8 attention) is dequantized into an f32 tile, each
    element decoded times its `scale` (rank 0: one; rank 1: the row's
    query head's); no scale is 1.

    ```mlir
    %qt = attn.load_q %q[%b, %h, %row] group 4
        : memref<?x32x?x128xf16> -> tensor<64x128xf16>
    %qp = attn.load_q %q[%b, %h, %row] group 4 seq(%start, %len)
        : memref<?x32x128xf16> -> tensor<64x128xf16>
    ```
  }];
  let arguments = (ins Arg<AnyMemRef, "", [MemRead]>:$q, Index:$batch,
                       Index:$kv_head, Index:$row, I64Attr:$group,
                       Optional<Index>:$seq_start, Optional<Index>:$seq_len,
                       Arg<Optional<AnyMemRef>, "", [MemRead]>:$scale);
  let results = (outs Attn_Tile:$tile);
  let assemblyFormat = [{
    $q `[` $batch `,` $kv_head `,` $row `]` `group` $group
    (`seq` `(` $seq_start^ `,` $seq_len `)`)?
    (`scale` `(` $scale^ `:` type($scale) `)`)? attr-dict
    `:` type($q) `->` type($tile)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    bool isPacked() { return getSeqStart() != nullptr; }
    /// Whether `q` is fp8 (the tile is dequantized to f32).
    bool isQuantized();
  }];
}

def Attn_LoadKVOp : Attn_Op<"load_kv", [AttrSizedOperandSegments]> {
  let summary = "load a K or V tile, contiguous or paged, zero past `length`";
  let description = [{
    Loads rows `start .. start + rows - 1` of one K/V head. Contiguous:
    `src[batch, kv_head, j, :]`. Paged (with `block_table`):
    `src[block_table[batch, j / bs], kv_head, j % bs, :]` with `bs` the
    cache's block size. Packed (`seq(start)`, src `[total_k, Hkv, D]`):
    `src[start + j, kv_head, :]`. Rows with `j >= length` are zero and
    read nothing, not even the block table. A tile narrower than src's
    head dim holds each row's first columns: an MLA V tile is the leading
    Dv columns of the latent K rows (attn.attention's `v_from_k`).

    A quantized `src` (f8E4M3FN, f8E5M2, i8: attn.attention's K/V caches)
    is dequantized into an f32 tile: each element decoded, times its
    `scale` (rank 0: one for the tensor; rank 1: `scale[kv_head]`; src's
    rank - 1: the row's own, indexed like src without D); no scale is 1.

    ```mlir
    %kt = attn.load_kv %k[%b, %h, %j] length %n block_table %bt
        : memref<?x8x16x128xf16>, memref<?x?xi32> -> tensor<64x128xf16>
    %kq = attn.load_kv %k[%b, %h, %j] length %n
        scale(%ks : memref<?x8x?xf32>)
        : memref<?x8x?x128xf8E4M3FN> -> tensor<64x128xf32>
    ```
  }];
  let arguments = (ins Arg<AnyMemRef, "", [MemRead]>:$src, Index:$batch,
                       Index:$kv_head, Index:$start, Index:$length,
                       Arg<Optional<AnyMemRef>, "", [MemRead]>:$block_table,
                       Optional<Index>:$seq_start,
                       Arg<Optional<AnyMemRef>, "", [MemRead]>:$scale);
  let results = (outs Attn_Tile:$tile);
  let assemblyFormat = [{
    $src `[` $batch `,` $kv_head `,` $start `]` `length` $length
    (`block_table` $block_table^)? (`seq` `(` $seq_start^ `)`)?
    (`scale` `(` $scale^ `:` type($scale) `)`)? attr-dict
    `:` type($src) (`,` type($block_table)^)? `->` type($tile)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    bool isPacked() { return getSeqStart() != nullptr; }
    /// Whether `src` is quantized (the tile is dequantized to f32).
    bool isQuantized();
  }];
}

def Attn_QKOp : Attn_Op<"qk", [RecursiveMemoryEffects, IsolatedFromAbove,
                               AttrSizedOperandSegments, Attn_HoldsModRegion]> {
  let summary = "scores of a Q tile against a K tile, in base-2 units";
  let description = [{
    `scores[r, c] = log2(e) * cap(scale * <q[r, :], k[c, :]>)` where
    `cap(x) = softcap * tanh(x / softcap)` when `softcap` is given, else
    `x`. Products accumulate in f32.

    With a `score_mod` region (attn.attention's, cloned by attn-tile),
    `scores[r, c] = log2(e) * score_mod(cap(scale * <q[r, :], k[c, :]>),
    batch, h, i, j, captures...)` with flat row `f = row + r`, query
    head `h = kv_head * group + f % group`, query `i = f / group` and key
    `j = col + c`, for the in-range pairs (`f < group * q_len`,
    `j < kv_len`); the others keep `log2(e) * cap(...)` (the mask hides
    them). The region is isolated from above; the captures are the op's
    operands, given to the region as its trailing arguments, so a target
    can inline the region wherever it computes a score.

    ```mlir
    %s = attn.qk %qt, %kt scale 0.125
        : tensor<64x128xf16>, tensor<32x128xf16> -> tensor<64x32xf32>
    %t = attn.qk %qt, %kt scale 0.125 at [%b, %h, %row, %j]
        q_len %sq kv_len %n group 4
        captures(%slopes : memref<32xf32>)
        : tensor<64x128xf16>, tensor<32x128xf16> -> tensor<64x32xf32>
        score_mod {
    ^bb0(%s: f32, %bb: index, %hh: index, %i: index, %jj: index,
         %sl: memref<32xf32>):
      attn.yield %s : f32
    }
    ```
  }];
  let arguments = (ins Attn_Tile:$q, Attn_Tile:$k, F32Attr:$scale,
                       OptionalAttr<F32Attr>:$softcap,
                       Optional<Index>:$batch, Optional<Index>:$kv_head,
                       Optional<Index>:$row, Optional<Index>:$col,
                       Optional<Index>:$q_len, Optional<Index>:$kv_len,
                       OptionalAttr<I64Attr>:$group,
                       Arg<Variadic<AnyMemRef>, "", [MemRead]>:$captures);
  let results = (outs Attn_Tile:$scores);
  let regions = (region AnyRegion:$score_mod);
  let assemblyFormat = [{
    $q `,` $k `scale` $scale (`softcap` $softcap^)?
    (`at` ` ` `[` $batch^ `,` $kv_head `,` $row `,` $col `]`
     `q_len` $q_len `kv_len` $kv_len)?
    (`group` $group^)?
    (`captures` `(` $captures^ `:` type($captures) `)`)? attr-dict
    `:` type($q) `,` type($k) `->` type($scores)
    (`score_mod` $score_mod^)?
  }];
  let builders = [
    OpBuilder<(ins "Type":$scores, "Value":$q, "Value":$k,
                   "FloatAttr":$scale, "FloatAttr":$softcap), [{
      build($_builder, $_state, scores, q, k, scale, softcap, Value(),
            Value(), Value(), Value(), Value(), Value(), IntegerAttr(),
            ValueRange());
    }]>];
  let hasVerifier = 1;
  let hasRegionVerifier = 1;
  let extraClassDeclaration = [{
    bool hasScoreMod() { return !getScoreMod().empty(); }
  }];
}

def Attn_MaskOp : Attn_Op<"mask", [RecursiveMemoryEffects, IsolatedFromAbove,
    AttrSizedOperandSegments, AllTypesMatch<["scores", "result"]>,
    Attn_HoldsModRegion]> {
  let summary = "set scores a query cannot see to -inf";
  let description = [{
    Tile row `r` is query `i = (row + r) / group`, column `c` is key
    `j = col + c`. A score becomes -inf when `j >= kv_len` or `mask` hides
    `j` from `i` (see `#attn.mask`; bottom-right alignment shifts by
    `kv_len - q_len`).

    With a `mask_mod` region (attn.attention's, cloned by attn-tile), the
    score also becomes -inf where `mask_mod(batch, h, i, j, captures...)`
    yields false, `h = kv_head * group + (row + r) % group`. The region is
    isolated from above; the captures are operands of the op and the
    region's trailing arguments.

    ```mlir
    %sm = attn.mask %s rows %row cols %j q_len %sq kv_len %n
          mask <causal, bottom_right> group 4 : tensor<64x32xf32>
    %sd = attn.mask %s rows %row cols %j q_len %sq kv_len %n
          mask <none> group 4 at [%b, %h] captures(%doc : memref<?xi32>)
          : tensor<64x32xf32> mask_mod {
    ^bb0(%bb: index, %hh: index, %i: index, %jj: index, %d: memref<?xi32>):
      %di = memref.load %d[%i] : memref<?xi32>
      %dj = memref.load %d[%jj] : memref<?xi32>
      %same = arith.cmpi eq, %di, %dj : i32
      attn.yield %same : i1
    }
    ```
  }];
  let arguments = (ins Attn_Tile:$scores, Index:$row, Index:$col,
                       Index:$q_len, Index:$kv_len, Attn_MaskAttr:$mask,
                       I64Attr:$group, Optional<Index>:$batch,
                       Optional<Index>:$kv_head,
                       Arg<Variadic<AnyMemRef>, "", [MemRead]>:$captures);
  let results = (outs Attn_Tile:$result);
  let regions = (region AnyRegion:$mask_mod);
  let assemblyFormat = [{
    $scores `rows` $row `cols` $col `q_len` $q_len `kv_len` $kv_len
    `mask` $mask `group` $group
    (`at` ` ` `[` $batch^ `,` $kv_head `]`)?
    (`captures` `(` $captures^ `:` type($captures) `)`)?
    attr-dict `:` type($scores)
    (`mask_mod` $mask_mod^)?
  }];
  let builders = [
    OpBuilder<(ins "Type":$result, "Value":$scores, "Value":$row,
                   "Value":$col, "Value":$q_len, "Value":$kv_len,
                   "MaskAttr":$mask, "IntegerAttr":$group), [{
      build($_builder, $_state, result, scores, row, col, q_len, kv_len,
            mask, group, Value(), Value(), ValueRange());
    }]>];
  let hasVerifier = 1;
  let hasRegionVerifier = 1;
  let extraClassDeclaration = [{
    bool hasMaskMod() { return !getMaskMod().empty(); }
  }];
}

def Attn_OnlineSoftmaxOp : Attn_Op<"online_softmax", [Pure,
    AllTypesMatch<["scores", "probs"]>,
    AllTypesMatch<["max", "sum", "new_max", "new_sum", "rescale"]>]> {
  let summary = "one online-softmax step over a score tile";
  let description = [{
    With `m' = max(max, rowmax(scores))` and `ms = (m' == -inf ? 0 : m')`:
    `probs = exp2(scores - ms)`, `rescale = exp2(max - ms)`,
    `new_sum = sum * rescale + rowsum(probs)`, `new_max = m'`. A row that
    has seen no key keeps m = -inf, l = 0 and produces no NaN.

    ```mlir
    %p, %m1, %l1, %alpha = attn.online_softmax %s, %m, %l
        : tensor<64x32xf32>, tensor<64xf32>
    ```
  }];
  let arguments = (ins Attn_Tile:$scores, Attn_Tile:$max, Attn_Tile:$sum);
  let results = (outs Attn_Tile:$probs, Attn_Tile:$new_max,
                      Attn_Tile:$new_sum, Attn_Tile:$rescale);
  let assemblyFormat = [{
    $scores `,` $max `,` $sum attr-dict `:` type($scores) `,` type($max)
  }];
  let hasVerifier = 1;
}

def Attn_PVOp : Attn_Op<"pv", [Pure, AllTypesMatch<["acc", "result"]>]> {
  let summary = "rescale the accumulator and add P·V";
  let description = [{
    `result[r, :] = acc[r, :] * rescale[r] + sum_c probs[r, c] * v[c, :]`.

    ```mlir
    %acc1 = attn.pv %p, %vt, %acc, %alpha
        : tensor<64x32xf32>, tensor<32x128xf16>, tensor<64x128xf32>, tensor<64xf32>
    ```
  }];
  let arguments = (ins Attn_Tile:$probs, Attn_Tile:$v, Attn_Tile:$acc,
                       Attn_Tile:$rescale);
  let results = (outs Attn_Tile:$result);
  let assemblyFormat = [{
    $probs `,` $v `,` $acc `,` $rescale attr-dict
    `:` type($probs) `,` type($v) `,` type($acc) `,` type($rescale)
  }];
  let hasVerifier = 1;
}

def Attn_MergeOp : Attn_Op<"merge", [Pure,
    AllTypesMatch<["max0", "sum0", "max1", "sum1", "max", "sum"]>,
    AllTypesMatch<["acc0", "acc1", "acc"]>]> {
  let summary = "merge two partial online-softmax states (split-K)";
  let description = [{
    The associative, commutative combine of flash-decoding: with
    `m = max(max0, max1)` and `ms = (m == -inf ? 0 : m)`,
    `a_i = exp2(max_i - ms)`, `sum = sum0 * a0 + sum1 * a1`,
    `acc = acc0 * a0 + acc1 * a1`. An empty partial (m = -inf, l = 0) is
    its identity.

    ```mlir
    %m, %l, %acc = attn.merge (%m0, %l0, %acc0), (%m1, %l1, %acc1)
        : tensor<64xf32>, tensor<64x128xf32>
    ```
  }];
  let arguments = (ins Attn_Tile:$max0, Attn_Tile:$sum0, Attn_Tile:$acc0,
                       Attn_Tile:$max1, Attn_Tile:$sum1, Attn_Tile:$acc1);
  let results = (outs Attn_Tile:$max, Attn_Tile:$sum, Attn_Tile:$acc);
  let assemblyFormat = [{
    ` ` `(` $max0 `,` $sum0 `,` $acc0 `)` `,` `(` $max1 `,` $sum1 `,` $acc1 `)`
    attr-dict `:` type($max0) `,` type($acc0)
  }];
  let hasVerifier = 1;
}

def Attn_LoadSinkOp : Attn_Op<"load_sink"> {
  let summary = "load each row's attention sink as f32";
  let description = [{
    `tile[r] = sinks[kv_head * G + (row + r) % G]` widened to f32, with
    `G = group`: the sink of tile row `r`'s query head under the GQA row
    packing of `attn.load_q`. Every row has a head, so every read is in
    bounds; rows past the end get their head's sink and are not stored.

    ```mlir
    %s = attn.load_sink %sinks[%h, %row] group 4
        : memref<32xf32> -> tensor<64xf32>
    ```
  }];
  let arguments = (ins Arg<AnyMemRef, "", [MemRead]>:$sinks, Index:$kv_head,
                       Index:$row, I64Attr:$group);
  let results = (outs Attn_Tile:$tile);
  let assemblyFormat = [{
    $sinks `[` $kv_head `,` $row `]` `group` $group attr-dict
    `:` type($sinks) `->` type($tile)
  }];
  let hasVerifier = 1;
}

def Attn_FinalizeOp : Attn_Op<"finalize", [Pure,
    AllTypesMatch<["max", "sum", "lse"]>]> {
  let summary = "normalize the accumulator and compute the log-sum-exp";
  let description = [{
    `out[r, :] = acc[r, :] / sum[r]` cast to the output element type, and
    `lse[r] = ln(2) * (max[r] + log2(sum[r]))`, both in natural units. A row
    with `sum = 0` (it saw no key) gets `out = 0`, `lse = -inf`.

    With `sink` (each row's attention sink in natural units, from
    `attn.load_sink`), the sink joins the denominator first: with
    `t = log2(e) * sink[r]`, `m' = max(max[r], t)` and
    `ms = (m' == -inf ? 0 : m')`, `sum' = sum[r] * exp2(max[r] - ms) +
    exp2(t - ms)` and `acc' = acc[r, :] * exp2(max[r] - ms)`, then the rule
    above with `(m', sum', acc')`. A row that saw no key gets `out = 0`,
    `lse = sink[r]`. This is the one place the sink enters, so split-K
    (which merges before finalizing) adds it once.

    ```mlir
    %o, %lse = attn.finalize %m, %l, %acc
        : tensor<64xf32>, tensor<64x128xf32> -> tensor<64x128xf16>
    %o2, %lse2 = attn.finalize %m, %l, %acc sink %s
        : tensor<64xf32>, tensor<64x128xf32>, tensor<64xf32>
          -> tensor<64x128xf16>
    ```
  }];
  let arguments = (ins Attn_Tile:$max, Attn_Tile:$sum, Attn_Tile:$acc,
                       Optional<Attn_Tile>:$sink);
  let results = (outs Attn_Tile:$out, Attn_Tile:$lse);
  let assemblyFormat = [{
    $max `,` $sum `,` $acc (`sink` $sink^)? attr-dict
    `:` type($max) `,` type($acc) (`,` type($sink)^)? `->` type($out)
  }];
  let hasVerifier = 1;
}

def Attn_StoreOOp : Attn_Op<"store_o", [AttrSizedOperandSegments]> {
  let summary = "store an output tile, skipping rows past the end";
  let description = [{
    Writes tile row `r` to `o[batch, kv_head * G + f % G, f / G, :]` with
    `f = row + r` when `f < G * Sq`; the layout of `attn.load_q`, packed
    (`seq(start, len)`, o `[total_q, Hq, Dv]`) as well.

    ```mlir
    attn.store_o %ot, %o[%b, %h, %row] group 4
        : tensor<64x128xf16>, memref<?x32x?x128xf16>
    ```
  }];
  let arguments = (ins Attn_Tile:$tile, Arg<AnyMemRef, "", [MemWrite]>:$o,
                       Index:$batch, Index:$kv_head, Index:$row,
                       I64Attr:$group, Optional<Index>:$seq_start,
                       Optional<Index>:$seq_len);
  let assemblyFormat = [{
    $tile `,` $o `[` $batch `,` $kv_head `,` $row `]` `group` $group
    (`seq` `(` $seq_start^ `,` $seq_len `)`)? attr-dict
    `:` type($tile) `,` type($o)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    bool isPacked() { return getSeqStart() != nullptr; }
  }];
}

def Attn_StoreLseOp : Attn_Op<"store_lse", [AttrSizedOperandSegments]> {
  let summary = "store a tile of log-sum-exp values";
  let description = [{
    Writes `tile[r]` to `lse[batch, kv_head * G + f % G, f / G]` with
    `f = row + r` when `f < G * Sq`; packed (`seq(start, len)`, lse
    `[total_q, Hq]`), to `lse[start + f / G, kv_head * G + f % G]` when
    `f < G * len`.

    ```mlir
    attn.store_lse %l, %lse[%b, %h, %row] group 4
        : tensor<64xf32>, memref<?x32x?xf32>
    ```
  }];
  let arguments = (ins Attn_Tile:$tile, Arg<AnyMemRef, "", [MemWrite]>:$lse,
                       Index:$batch, Index:$kv_head, Index:$row,
                       I64Attr:$group, Optional<Index>:$seq_start,
                       Optional<Index>:$seq_len);
  let assemblyFormat = [{
    $tile `,` $lse `[` $batch `,` $kv_head `,` $row `]` `group` $group
    (`seq` `(` $seq_start^ `,` $seq_len `)`)?
    attr-dict `:` type($tile) `,` type($lse)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    bool isPacked() { return getSeqStart() != nullptr; }
  }];
}

def Attn_YieldOp : Attn_Op<"yield", [Pure, Terminator, ReturnLike]> {
  let summary = "the value of a score_mod (f32) or mask_mod (i1) region";
  let description = [{
    Ends a `score_mod` or `mask_mod` region of `attn.attention`,
    `attn.qk` or `attn.mask` (or of another dialect's op that carries a
    copy of one: an op with the HoldsModRegion trait, such as
    `attn_nv.mask_tile`); the parent's verifier checks its type.

    ```mlir
    attn.yield %score : f32
    ```
  }];
  let arguments = (ins AnyType:$value);
  let assemblyFormat = "$value attr-dict `:` type($value)";
  let hasVerifier = 1;
}

#endif // ATTN_OPS_TD
