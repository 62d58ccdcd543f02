"""Writes kernel specs (attn.attention at L0) from the static facts of an
attention call: element type, head counts, head dims, mask, scale,
soft-cap, paging, LSE, layout. Batch and sequence lengths stay dynamic
(`?`), so one compiled kernel serves every such call; a query length of 1
is written static, which selects attn's decode kernels.

    facts = AttentionFacts(dtype="f16", hq=32, hkv=8, d=128, causal=True)
    text = facts.spec_text("attention")

Packed (varlen) batches, FlashAttention's varlen layout: `packed_q` makes
Q, O and LSE [total_q, H, D] with cu_seqlens_q offsets, `packed_kv` makes
K and V [total_k, Hkv, D] with cu_seqlens_k offsets. Their lengths stay
dynamic too; `max_q_len` fixes the most queries a sequence has (else the
kernel takes it per call, and runs decode code for at most 16).
"""
import dataclasses
import hashlib
import math
import re
from typing import Optional, Tuple

DTYPES = ("f16", "bf16", "f32")
# A quantized K/V cache's element types (attn.attention's fp8 and int8
# caches) and a dequantization scale's granularities: one f32 for the
# tensor, one per K/V head, or one per token and head.
KV_DTYPES = ("f8E4M3FN", "f8E5M2", "i8")
# The most queries a sequence the decode tier takes, which alone reads a
# quantized cache on the GPU.
DECODE_MAX_Q_LEN = 16
SCALES = ("tensor", "head", "token")
ALIGNS = ("bottom_right", "top_left")
MASKS = ("none", "causal", "window")


def _float(x):
    """An MLIR float literal (it needs a '.'), exact for an f32 value."""
    x = float(x)
    text = repr(x)
    if "." in text and "e" not in text:
        return text
    return f"{x:.9e}"


# FlashAttention's ALiBi as a score_mod: the bias -slope * |i + shift - j|
# of query i and key j of sequence b, slope = alibi_slopes[b, h] and shift
# = the sequence's kv_len - q_len (bottom-right aligned), both captures.
_ALIBI_SCORE_MOD = """score_mod {{
      ^bb0(%score: f32, %b: index, %h: index, %q_idx: index, %kv_idx: index,
           %slopes: memref<?x{hq}xf32>, %shift: memref<?xi32>):
        %slope = memref.load %slopes[%b, %h] : memref<?x{hq}xf32>
        %shift32 = memref.load %shift[%b] : memref<?xi32>
        %shift_idx = arith.index_cast %shift32 : i32 to index
        %diagonal = arith.addi %q_idx, %shift_idx : index
        %distance = arith.subi %diagonal, %kv_idx : index
        %distance64 = arith.index_cast %distance : index to i64
        %distance_f = arith.sitofp %distance64 : i64 to f32
        %magnitude = math.absf %distance_f : f32
        %bias = arith.mulf %slope, %magnitude : f32
        %biased = arith.subf %score, %bias : f32
        attn.yield %biased : f32
      }}"""


@dataclasses.dataclass(frozen=True)
class AttentionFacts:
    """What a kernel is built for. `q_len` None: dynamic query length (a
    static 1 for decode). `block_size`: K/V are a paged cache with pages of
    that many rows (needs `kv_lens`). `window`: (left, right) key extents
    around the query's diagonal. `strided`: every Q/K/V/O dim but the head
    dim has a run-time stride (views such as [B, S, H, D] memory seen as
    [B, H, S, D]); otherwise the buffers are row-major. `packed_q`: Q, O,
    LSE packed by cu_seqlens_q ([total_q, H, D]); `packed_kv`: K, V packed
    by cu_seqlens_k ([total_k, Hkv, D]; no block_size or kv_lens);
    `max_q_len`: a packed Q's most queries a sequence, fixed in the
    kernel (None: given per call). `sinks`: the element type of attention
    sinks [Hq] (one logit per query head in the softmax denominator; the
    LSE counts it), None for none. `kv_dtype`: a quantized K/V cache's
    element type (KV_DTYPES; None: K/V are `dtype`); `k_scale`, `v_scale`:
    the granularity of its dequantization scales (SCALES: f32 [], [Hkv] or
    K's shape without D), None for none (a scale of 1). `v_from_k`: V is
    the first `dv` columns of K (MLA's latent cache: no v operand; a
    quantized K's `k_scale` dequantizes V too)."""
    dtype: str
    hq: int
    hkv: int
    d: int
    dv: Optional[int] = None
    q_len: Optional[int] = None
    mask: str = "none"
    align: str = "bottom_right"
    window: Optional[Tuple[int, int]] = None
    scale: Optional[float] = None
    softcap: Optional[float] = None
    block_size: Optional[int] = None
    kv_lens: bool = False
    lse: bool = False
    strided: bool = False
    packed_q: bool = False
    packed_kv: bool = False
    max_q_len: Optional[int] = None
    alibi: bool = False
    sinks: Optional[str] = None
    kv_dtype: Optional[str] = None
    k_scale: Optional[str] = None
    v_scale: Optional[str] = None
    v_from_k: bool = False

    def __post_init__(self):
        def bad(msg):
            raise ValueError(f"attention: {msg}")
        if self.dtype not in DTYPES:
            bad(f"dtype {self.dtype!r} is not one of {DTYPES}")
        if self.sinks is not None and self.sinks not in DTYPES:
            bad(f"sinks {self.sinks!r} (their element type) is not one of "
                f"{DTYPES}")
        if self.kv_dtype is not None and self.kv_dtype not in KV_DTYPES:
            bad(f"kv_dtype {self.kv_dtype!r} (a quantized cache's element "
                f"type) is not one of {KV_DTYPES}")
        for name in ("k_scale", "v_scale"):
            value = getattr(self, name)
            if value is None:
                continue
            if value not in SCALES:
                bad(f"{name} {value!r} (its granularity) is not one of "
                    f"{SCALES}")
            if self.kv_dtype is None:
                bad(f"{name} dequantizes a quantized K/V cache (kv_dtype); "
                    f"K/V of {self.dtype} take none")
        for name in ("hq", "hkv", "d"):
            value = getattr(self, name)
            if not isinstance(value, int) or value < 1:
                bad(f"{name} must be a positive int, got {value!r}")
        if self.dv is not None and (not isinstance(self.dv, int)
                                    or self.dv < 1):
            bad(f"dv must be a positive int, got {self.dv!r}")
        if self.hq % self.hkv:
            bad(f"query heads ({self.hq}) must be a multiple of K/V heads "
                f"({self.hkv})")
        if self.q_len is not None and (not isinstance(self.q_len, int)
                                       or self.q_len < 1):
            bad(f"q_len must be None or a positive int, got {self.q_len!r}")
        if self.mask not in MASKS:
            bad(f"mask {self.mask!r} is not one of {MASKS}")
        if self.align not in ALIGNS:
            bad(f"align {self.align!r} is not one of {ALIGNS}")
        if (self.mask == "window") != (self.window is not None):
            bad("window (left, right) is given exactly when mask is 'window'")
        if self.window is not None:
            if (len(self.window) != 2 or
                    not all(isinstance(w, int) and w >= 0
                            for w in self.window)):
                bad(f"window must be (left, right) ints >= 0, got "
                    f"{self.window!r}")
        for name in ("scale", "softcap"):
            value = getattr(self, name)
            if value is not None and not (math.isfinite(value) and value > 0):
                bad(f"{name} must be positive and finite, got {value!r}")
        if self.block_size is not None:
            if not isinstance(self.block_size, int) or self.block_size < 1:
                bad(f"block_size must be a positive int, got "
                    f"{self.block_size!r}")
            if not self.kv_lens:
                bad("a paged K/V cache (block_size) needs kv_lens")
        if self.packed_q and self.q_len is not None:
            bad("a packed Q (packed_q) has no q_len; max_q_len bounds its "
                "sequences")
        if self.max_q_len is not None:
            if not self.packed_q:
                bad("max_q_len is for a packed Q (packed_q)")
            if not isinstance(self.max_q_len, int) or self.max_q_len < 1:
                bad(f"max_q_len must be None or a positive int, got "
                    f"{self.max_q_len!r}")
        if self.v_from_k and self.value_dim > self.d:
            bad(f"v_from_k reads V as the first dv columns of K: dv "
                f"({self.value_dim}) must be at most d ({self.d})")
        if self.v_from_k and self.v_scale is not None:
            bad("v_from_k reads V from K, which k_scale dequantizes: no "
                "v_scale")
        if self.packed_kv and (self.block_size is not None or self.kv_lens):
            bad("packed K/V (packed_kv) take their lengths from "
                "cu_seqlens_k: no block_size or kv_lens")

    # The packed forms' fields, left out of repr() (and so of the spec's
    # first line and library_name()) while they have their defaults: the
    # specs, and cached libraries, of padded facts stay as they were.
    _PACKED_DEFAULTS = (("packed_q", False), ("packed_kv", False),
                        ("max_q_len", None), ("alibi", False),
                        ("sinks", None), ("kv_dtype", None),
                        ("k_scale", None), ("v_scale", None),
                        ("v_from_k", False))

    def __repr__(self):
        skip = {name for name, default in self._PACKED_DEFAULTS
                if getattr(self, name) == default}
        fields = ", ".join(f"{f.name}={getattr(self, f.name)!r}"
                           for f in dataclasses.fields(self)
                           if f.name not in skip)
        return f"AttentionFacts({fields})"

    @property
    def value_dim(self):
        return self.dv if self.dv is not None else self.d

    def mask_text(self):
        br = ", bottom_right" if self.align == "bottom_right" else ""
        if self.mask == "causal":
            return f"<causal{br}>"
        if self.mask == "window":
            return f"<window {self.window[0]}, {self.window[1]}{br}>"
        return None

    # The kernel's name in the library compile() makes.
    KERNEL = "attention"

    def library_name(self):
        """The library attn.torch.attention() compiles these facts into."""
        digest = hashlib.sha256(self.spec_text().encode()).hexdigest()[:12]
        return f"attention_{digest}"

    def compile(self, **kwargs):
        """attn.compile of this spec under library_name(); the kernel is
        KERNEL. kwargs: targets, cache_dir, compiler."""
        from .compiler import compile
        return compile(self.spec_text(self.KERNEL),
                       name=self.library_name(), **kwargs)

    def spec_text(self, name="attention"):
        """The spec: one func.func @name around one attn.attention."""
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
            raise ValueError(f"attention: kernel name {name!r} is not a C "
                             "identifier")
        sq = "?" if self.q_len is None else str(self.q_len)
        layout4 = ", strided<[?, ?, ?, 1]>" if self.strided else ""
        layout3 = ", strided<[?, ?, 1]>" if self.strided else ""

        def ty(dims, elt, layout=""):
            return f"memref<{'x'.join(str(d) for d in dims)}x{elt}{layout}>"
        kv_seq = str(self.block_size) if self.block_size else "?"
        # Packed: [total, H, D] rows instead of [B, H, S, D].
        q_dims = (["?", self.hq] if self.packed_q else ["?", self.hq, sq])
        kv_dims = (["?", self.hkv] if self.packed_kv
                   else ["?", self.hkv, kv_seq])
        q_layout = layout3 if self.packed_q else layout4
        kv_layout = layout3 if self.packed_kv else layout4
        kv_elt = self.kv_dtype or self.dtype
        operands = [
            ("q", ty(q_dims + [self.d], self.dtype, q_layout)),
            ("k", ty(kv_dims + [self.d], kv_elt, kv_layout)),
        ]
        if not self.v_from_k:
            operands.append(
                ("v", ty(kv_dims + [self.value_dim], kv_elt, kv_layout)))
        if self.packed_q:
            operands.append(("cu_seqlens_q", "memref<?xi32>"))
        if self.packed_kv:
            operands.append(("cu_seqlens_k", "memref<?xi32>"))
        if self.block_size:
            operands.append(("block_table", "memref<?x?xi32>"))
        if self.kv_lens:
            operands.append(("kv_lens", "memref<?xi32>"))
        if self.sinks:
            operands.append(("sinks", f"memref<{self.hq}x{self.sinks}>"))
        # Scales are contiguous f32: per tensor, per K/V head, or K's
        # shape without D (per token and head).
        scale_types = {"tensor": "memref<f32>",
                       "head": f"memref<{self.hkv}xf32>",
                       "token": ty(kv_dims, "f32")}
        for scale in ("k_scale", "v_scale"):
            if getattr(self, scale):
                operands.append((scale, scale_types[getattr(self, scale)]))
        operands.append(("o", ty(q_dims + [self.value_dim], self.dtype,
                                 q_layout)))
        if self.lse:
            operands.append(("lse", ty(q_dims, "f32")))
        if self.alibi:
            operands += [("alibi_slopes", f"memref<?x{self.hq}xf32>"),
                         ("alibi_shift", "memref<?xi32>")]
        types = dict(operands)
        args = ",\n    ".join(f"%{n}: {t}" for n, t in operands)
        op = ["attn.attention " + " ".join(
            f"{n}(%{n} : {types[n]})" for n in ("q", "k", "v")
            if n in types) + (" v_from_k" if self.v_from_k else "")]
        for n in ("cu_seqlens_q", "cu_seqlens_k", "block_table", "kv_lens",
                  "sinks", "k_scale", "v_scale"):
            if n in types:
                op.append(f"{n}(%{n} : {types[n]})")
        if self.alibi:
            op.append("captures(%alibi_slopes, %alibi_shift : "
                      f"{types['alibi_slopes']}, {types['alibi_shift']})")
        op.append(f"-> o(%o : {types['o']})")
        if self.lse:
            op.append(f"lse(%lse : {types['lse']})")
        attrs = []
        if self.scale is not None:
            attrs.append(f"scale = {_float(self.scale)}")
        mask = self.mask_text()
        if mask:
            attrs.append(f"mask = {mask}")
        if self.softcap is not None:
            attrs.append(f"softcap = {_float(self.softcap)}")
        if self.max_q_len is not None:
            attrs.append(f"max_q_len = {self.max_q_len}")
        if attrs:
            op.append(" ".join(attrs))
        body = "\n      ".join(op)
        if self.alibi:
            body += " " + _ALIBI_SCORE_MOD.format(hq=self.hq)
        return (f"// Written by attn.spec from {self!r}\n"
                f"func.func @{name}(\n    {args}) {{\n"
                f"  {body}\n"
                f"  return\n}}\n")


def mask_options(causal=False, window=None, align="bottom_right"):
    """(mask, window_left, window_right) for attention()'s options:
    `causal`, `window` (an int w: (w, 0); (left, right) with None or -1
    for an unbounded side) and `align`. -1: unbounded."""
    if align not in ALIGNS:
        raise ValueError(f"attention: align must be 'bottom_right' or "
                         f"'top_left', got {align!r}")
    if window is None:
        return ("causal" if causal else "none"), -1, -1
    if isinstance(window, int):
        window = (window, 0)
    try:
        left, right = window
    except (TypeError, ValueError):
        raise ValueError(f"attention: window must be an int or (left, right),"
                         f" got {window!r}") from None
    left = -1 if left is None else int(left)
    right = -1 if right is None else int(right)
    if causal:
        if right not in (0, -1):
            raise ValueError(f"attention: causal=True with window right "
                             f"extent {right}; causal means right = 0")
        right = 0
    if left < -1 or right < -1:
        raise ValueError(f"attention: window extents must be >= 0 (or -1 / "
                         f"None for unbounded), got {window!r}")
    if left == -1:
        if right == -1:
            return "none", -1, -1
        if right == 0:
            return "causal", -1, -1
        raise ValueError("attention: a window unbounded on the left must "
                         "have right extent 0 (causal) or be unbounded")
    if right == -1:
        raise ValueError("attention: a window bounded on the left needs a "
                         "bounded right extent")
    return "window", left, right


def facts_from_shapes(dtype, q_shape, k_shape, v_shape, *, paged=False,
                      kv_lens=False, strided=False, mask="none",
                      align="bottom_right", window_left=-1, window_right=-1,
                      scale=None, softcap=None, lse=False, alibi=False,
                      sinks=None, kv_dtype=None, k_scale=None, v_scale=None):
    """The AttentionFacts attn.torch.attention() compiles for tensors of
    these shapes ([B, H, S, D]; K/V [num_blocks, Hkv, block_size, D] when
    paged) and options (mask_options' result; scale/softcap 0 or None:
    default / none). Sq is fixed in the kernel when it is 1, and over a
    quantized cache (`kv_dtype`), whose kernels are the decode tier's."""
    return AttentionFacts(
        dtype=dtype, hq=int(q_shape[1]), hkv=int(k_shape[1]),
        d=int(q_shape[3]),
        dv=None if v_shape[3] == q_shape[3] else int(v_shape[3]),
        q_len=(int(q_shape[2]) if q_shape[2] == 1 or kv_dtype else None),
        mask=mask, align=align,
        window=(window_left, window_right) if mask == "window" else None,
        scale=scale or None, softcap=softcap or None,
        block_size=int(k_shape[2]) if paged else None,
        kv_lens=bool(kv_lens), lse=bool(lse), strided=bool(strided),
        alibi=bool(alibi), sinks=sinks, kv_dtype=kv_dtype, k_scale=k_scale,
        v_scale=v_scale)


def varlen_facts_from_shapes(dtype, q_shape, k_shape, v_shape, *,
                             packed_kv=True, paged=False, kv_lens=False,
                             strided=False, mask="none", align="bottom_right",
                             window_left=-1, window_right=-1, scale=None,
                             softcap=None, lse=False, max_q_len=None,
                             alibi=False, sinks=None, kv_dtype=None,
                             k_scale=None, v_scale=None):
    """The AttentionFacts attn.torch.attention_varlen() compiles: a packed
    Q [total_q, Hq, D] over packed K/V [total_k, Hkv, D] (`packed_kv`), a
    paged cache [num_blocks, Hkv, block_size, D] (`paged`, with kv_lens) or
    padded K/V [B, Hkv, Sk, D] (with or without kv_lens). Over a quantized
    cache (`kv_dtype`) max_q_len is the decode tier's 16 unless given."""
    packed_kv = bool(packed_kv) and not paged
    if kv_dtype and max_q_len is None:
        max_q_len = DECODE_MAX_Q_LEN
    return AttentionFacts(
        dtype=dtype, hq=int(q_shape[1]), hkv=int(k_shape[1]),
        d=int(q_shape[2]),
        dv=None if v_shape[-1] == q_shape[2] else int(v_shape[-1]),
        mask=mask, align=align,
        window=(window_left, window_right) if mask == "window" else None,
        scale=scale or None, softcap=softcap or None,
        block_size=int(k_shape[2]) if paged else None,
        kv_lens=bool(kv_lens), lse=bool(lse), strided=bool(strided),
        packed_q=True, packed_kv=packed_kv, max_q_len=max_q_len,
        alibi=bool(alibi), sinks=sinks, kv_dtype=kv_dtype, k_scale=k_scale,
        v_scale=v_scale)


@dataclasses.dataclass(frozen=True)
class AppendFacts:
    """What a cache-append kernel (attn.cache_append) is built for: new
    tokens k_new/v_new [B, Hkv, S_new, D(v)] written into caches
    [B, Hkv, capacity, D(v)], or paged ones [num_blocks, Hkv, block_size,
    D(v)] through a block table, at each sequence's kv_lens. `strided`:
    every dim but the head dim has a run-time stride (FlashAttention's
    [B, S, H, D] memory seen as [B, H, S, D])."""
    dtype: str
    hkv: int
    d: int
    dv: Optional[int] = None
    block_size: Optional[int] = None
    strided: bool = False

    def __post_init__(self):
        if self.dtype not in DTYPES:
            raise ValueError(f"cache_append: dtype {self.dtype!r} is not one "
                             f"of {DTYPES}")
        for name in ("hkv", "d", "dv", "block_size"):
            value = getattr(self, name)
            if value is not None and (not isinstance(value, int)
                                      or value < 1):
                raise ValueError(f"cache_append: {name} must be a positive "
                                 f"int, got {value!r}")

    @property
    def value_dim(self):
        return self.dv if self.dv is not None else self.d

    KERNEL = "cache_append"

    def library_name(self):
        digest = hashlib.sha256(self.spec_text().encode()).hexdigest()[:12]
        return f"cache_append_{digest}"

    def compile(self, **kwargs):
        """attn.compile of this spec; the kernel is KERNEL."""
        from .compiler import compile
        return compile(self.spec_text(self.KERNEL),
                       name=self.library_name(), **kwargs)

    def spec_text(self, name="cache_append"):
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
            raise ValueError(f"cache_append: kernel name {name!r} is not a "
                             "C identifier")
        layout = ", strided<[?, ?, ?, 1]>" if self.strided else ""
        rows = str(self.block_size) if self.block_size else "?"

        def ty(rows, dim):
            return f"memref<?x{self.hkv}x{rows}x{dim}x{self.dtype}{layout}>"
        operands = [("k_new", ty("?", self.d)),
                    ("v_new", ty("?", self.value_dim))]
        if self.block_size:
            operands.append(("block_table", "memref<?x?xi32>"))
        operands += [("kv_lens", "memref<?xi32>"),
                     ("k_cache", ty(rows, self.d)),
                     ("v_cache", ty(rows, self.value_dim))]
        types = dict(operands)
        args = ",\n    ".join(f"%{n}: {t}" for n, t in operands)
        ins = " ".join(f"{n}(%{n} : {types[n]})" for n, _ in operands
                       if n not in ("k_cache", "v_cache"))
        outs = " ".join(f"{n}(%{n} : {types[n]})"
                        for n in ("k_cache", "v_cache"))
        return (f"// Written by attn.spec from {self!r}\n"
                f"func.func @{name}(\n    {args}) {{\n"
                f"  attn.cache_append {ins}\n      -> {outs}\n"
                f"  return\n}}\n")


@dataclasses.dataclass(frozen=True)
class MergeFacts:
    """What a merge kernel (attn.merge_states) is built for: N partial
    states o_parts [N, T, H, Dv] (`dtype`) and lse_parts [N, T, H] (f32)
    merged into o [T, H, Dv] (`out_dtype`) and, with `lse`, lse [T, H].
    N and T are dynamic and every stride but the last is a run-time one,
    so one kernel takes any layout whose rows it can index. `parts` fixes
    N in the kernel, which then loads every part's state at once (a
    dynamic N loops over them)."""
    dtype: str
    heads: int
    dv: int
    out_dtype: Optional[str] = None
    lse: bool = True
    parts: Optional[int] = None  # a static N (None: given per call)

    def __post_init__(self):
        for name in ("dtype", "out_dtype"):
            value = getattr(self, name)
            if value is not None and value not in DTYPES:
                raise ValueError(f"merge_states: {name} {value!r} is not one "
                                 f"of {DTYPES}")
        for name in ("heads", "dv", "parts"):
            value = getattr(self, name)
            if (value is not None or name != "parts") and (
                    not isinstance(value, int) or value < 1):
                raise ValueError(f"merge_states: {name} must be a positive "
                                 f"int, got {value!r}")

    KERNEL = "merge_states"

    def library_name(self):
        digest = hashlib.sha256(self.spec_text().encode()).hexdigest()[:12]
        return f"merge_states_{digest}"

    def compile(self, **kwargs):
        """attn.compile of this spec; the kernel is KERNEL."""
        from .compiler import compile
        return compile(self.spec_text(self.KERNEL),
                       name=self.library_name(), **kwargs)

    def spec_text(self, name="merge_states"):
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
            raise ValueError(f"merge_states: kernel name {name!r} is not a "
                             "C identifier")
        out = self.out_dtype or self.dtype
        h, dv = self.heads, self.dv
        n = self.parts or "?"
        operands = [
            ("o_parts",
             f"memref<{n}x?x{h}x{dv}x{self.dtype}, strided<[?, ?, ?, 1]>>"),
            ("lse_parts", f"memref<{n}x?x{h}xf32, strided<[?, ?, ?]>>"),
            ("o", f"memref<?x{h}x{dv}x{out}, strided<[?, ?, 1]>>")]
        if self.lse:
            operands.append(("lse", f"memref<?x{h}xf32, strided<[?, ?]>>"))
        types = dict(operands)
        args = ",\n    ".join(f"%{n}: {t}" for n, t in operands)
        ins = " ".join(f"{n}(%{n} : {types[n]})"
                       for n in ("o_parts", "lse_parts"))
        outs = " ".join(f"{n}(%{n} : {types[n]})" for n, _ in operands[2:])
        return (f"// Written by attn.spec from {self!r}\n"
                f"func.func @{name}(\n    {args}) {{\n"
                f"  attn.merge_states {ins}\n      -> {outs}\n"
                f"  return\n}}\n")

