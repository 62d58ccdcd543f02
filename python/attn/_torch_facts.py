"""What attn.torch compiles for a call: the AttentionFacts / AppendFacts of
its tensors and options, and the outputs it allocates. Apart from
attn.torch's custom ops, so that they also run on a PyTorch without
torch.library.custom_op (older than 2.4): tools that fill a kernel cache
for a GPU machine compute the very facts the GPU tests will ask for."""
import math

import torch

from .spec import (DECODE_MAX_Q_LEN, AppendFacts, MergeFacts,
                   facts_from_shapes, varlen_facts_from_shapes)

_DTYPE_NAMES = {torch.float16: "f16", torch.bfloat16: "bf16",
                torch.float32: "f32"}
# A quantized K/V cache's element types (those this PyTorch has: float8
# came in 2.1).
_KV_DTYPE_NAMES = {getattr(torch, name): spec for name, spec in (
    ("float8_e4m3fn", "f8E4M3FN"), ("float8_e5m2", "f8E5M2"),
    ("int8", "i8")) if hasattr(torch, name)}


def _check_dtypes(fn, q, k, v):
    """The element type name of a quantized K/V cache, or None for K/V of
    q's dtype; raises TypeError for anything else."""
    if q.dtype not in (torch.float16, torch.bfloat16):
        raise TypeError(f"{fn}: q is {q.dtype}; attn's GPU kernels take "
                        "torch.float16 or torch.bfloat16")
    if k.dtype in _KV_DTYPE_NAMES:
        if v.dtype != k.dtype:
            raise TypeError(f"{fn}: v is {v.dtype} but k is {k.dtype} (a "
                            "quantized cache's K and V share their element "
                            "type)")
        return _KV_DTYPE_NAMES[k.dtype]
    for name, t in (("k", k), ("v", v)):
        if t.dtype != q.dtype:
            raise TypeError(f"{fn}: {name} is {t.dtype} but q is {q.dtype} "
                            "(K/V are q's dtype, or a quantized cache of "
                            "torch.float8_e4m3fn, torch.float8_e5m2 or "
                            "torch.int8)")
    return None


def _scale_kind(fn, name, scale, kv, kv_dtype, q):
    """The granularity ('tensor', 'head' or 'token') of the dequantization
    scale `name` of the cache `kv` (None: none, a scale of 1)."""
    if scale is None:
        return None
    if kv_dtype is None:
        raise TypeError(f"{fn}: {name} dequantizes a quantized K/V cache "
                        f"(torch.float8_e4m3fn, torch.float8_e5m2 or "
                        f"torch.int8); K/V are {kv.dtype}")
    if scale.dtype != torch.float32:
        raise TypeError(f"{fn}: {name} must be torch.float32, got "
                        f"{scale.dtype}")
    if scale.device != q.device:
        raise ValueError(f"{fn}: {name} is on {scale.device} but q on "
                         f"{q.device}")
    if not scale.is_contiguous():
        raise ValueError(f"{fn}: {name} must be contiguous")
    shape, heads, token = tuple(scale.shape), kv.shape[1], tuple(kv.shape[:-1])
    if shape == ():
        return "tensor"
    if shape == (heads,):
        return "head"
    if shape == token:
        return "token"
    raise ValueError(f"{fn}: {name} must have shape () (per tensor), "
                     f"({heads},) (per K/V head) or {token} (the cache's "
                     f"shape without its head dim: per token and head), got "
                     f"{shape}")


def _scale_kinds(fn, k, v, kv_dtype, q, k_scale, v_scale):
    return dict(kv_dtype=kv_dtype,
                k_scale=_scale_kind(fn, "k_scale", k_scale, k, kv_dtype, q),
                v_scale=_scale_kind(fn, "v_scale", v_scale, v, kv_dtype, q))


def _check_paging(fn, block_table, kv_lens):
    if block_table is not None and kv_lens is None:
        raise ValueError(f"{fn}: a paged K/V cache (block_table) needs "
                         "kv_lens")
    for name, t in (("block_table", block_table), ("kv_lens", kv_lens)):
        if t is not None and (t.dtype.is_floating_point or t.is_complex()):
            raise TypeError(f"{fn}: {name} must be an integer tensor, got "
                            f"{t.dtype}")


def _sinks_type(fn, sinks, q, hq):
    """The element type name of attention sinks [Hq] (None: none)."""
    if sinks is None:
        return None
    if sinks.dtype not in _DTYPE_NAMES:
        raise TypeError(f"{fn}: sinks must be float32, float16 or bfloat16,"
                        f" got {sinks.dtype}")
    if tuple(sinks.shape) != (hq,):
        raise ValueError(f"{fn}: sinks must have shape ({hq},), one logit "
                         f"per query head, got {tuple(sinks.shape)}")
    if sinks.device != q.device:
        raise ValueError(f"{fn}: sinks is on {sinks.device} but q on "
                         f"{q.device}")
    return _DTYPE_NAMES[sinks.dtype]


def facts_for(q, k, v, block_table=None, kv_lens=None, mask="none",
              align="bottom_right", window_left=-1, window_right=-1,
              scale=0.0, softcap=0.0, return_lse=False, o=None,
              alibi_slopes=None, sinks=None, k_scale=None, v_scale=None):
    """The AttentionFacts attention() compiles for these tensors/options
    (and the output `o` it writes, where given); raises ValueError/TypeError
    for what no kernel can take."""
    for name, t in (("q", q), ("k", k), ("v", v)):
        if t.dim() != 4:
            raise ValueError(f"attention: {name} must be 4-D "
                             f"[B, H, S, D], got shape {tuple(t.shape)}")
    kv_dtype = _check_dtypes("attention", q, k, v)
    _check_paging("attention", block_table, kv_lens)
    if kv_dtype and q.shape[2] > DECODE_MAX_Q_LEN:
        raise ValueError(f"attention: a quantized K/V cache ({k.dtype}) is "
                         f"read by the decode kernels, which take at most "
                         f"{DECODE_MAX_Q_LEN} queries a sequence; q has "
                         f"{q.shape[2]}")
    return facts_from_shapes(
        _DTYPE_NAMES[q.dtype], q.shape, k.shape, v.shape,
        paged=block_table is not None, kv_lens=kv_lens is not None,
        strided=not all(t.is_contiguous() for t in (q, k, v, o)
                        if t is not None), mask=mask,
        align=align, window_left=window_left, window_right=window_right,
        scale=scale, softcap=softcap, lse=return_lse,
        alibi=alibi_slopes is not None,
        sinks=_sinks_type("attention", sinks, q, q.shape[1]),
        **_scale_kinds("attention", k, v, kv_dtype, q, k_scale, v_scale))


def _outputs(q, v, return_lse, out_bshd=False):
    """O [B, Hq, Sq, Dv], row-major, or with `out_bshd` a view of
    [B, Sq, Hq, Dv] memory (FlashAttention's layout; no copy after)."""
    b, hq, sq = q.shape[0], q.shape[1], q.shape[2]
    o = (q.new_empty((b, sq, hq, v.shape[3])).transpose(1, 2) if out_bshd
         else q.new_empty((b, hq, sq, v.shape[3])))
    lse = q.new_empty((b, hq, sq) if return_lse else (0,),
                      dtype=torch.float32)
    return o, lse


def varlen_facts_for(q, k, v, cu_seqlens_q, cu_seqlens_k=None,
                     block_table=None, kv_lens=None, mask="none",
                     align="bottom_right", window_left=-1, window_right=-1,
                     scale=0.0, softcap=0.0, return_lse=False,
                     alibi_slopes=None, sinks=None, k_scale=None,
                     v_scale=None):
    """The AttentionFacts attention_varlen() compiles; raises
    ValueError/TypeError for what no kernel can take."""
    if q.dim() != 3:
        raise ValueError(f"attention_varlen: q must be 3-D [total_q, Hq, D],"
                         f" got shape {tuple(q.shape)}")
    paged = block_table is not None
    if cu_seqlens_k is not None:
        if paged or kv_lens is not None:
            raise ValueError("attention_varlen: packed K/V (cu_seqlens_k) "
                             "take no block_table or kv_lens")
        want = 3
        form = "[total_k, Hkv, D] (with cu_seqlens_k)"
    else:
        want = 4
        form = ("[num_blocks, Hkv, block_size, D] (paged)" if paged else
                "[B, Hkv, Sk, D] (without cu_seqlens_k)")
    for name, t in (("k", k), ("v", v)):
        if t.dim() != want:
            raise ValueError(f"attention_varlen: {name} must be {form}, got "
                             f"shape {tuple(t.shape)}")
    kv_dtype = _check_dtypes("attention_varlen", q, k, v)
    # FlashAttention's contract: the offsets are int32 device tensors; they
    # are never read on the host (no synchronization).
    for name, t in (("cu_seqlens_q", cu_seqlens_q),
                    ("cu_seqlens_k", cu_seqlens_k)):
        if t is None:
            continue
        if t.dtype != torch.int32 or t.dim() != 1:
            raise TypeError(f"attention_varlen: {name} must be a 1-D "
                            f"torch.int32 tensor [B + 1], got {t.dtype} "
                            f"{tuple(t.shape)}")
    _check_paging("attention_varlen", block_table, kv_lens)
    return varlen_facts_from_shapes(
        _DTYPE_NAMES[q.dtype], q.shape, k.shape, v.shape,
        packed_kv=cu_seqlens_k is not None, paged=paged,
        kv_lens=kv_lens is not None,
        strided=not all(t.is_contiguous() for t in (q, k, v)), mask=mask,
        align=align, window_left=window_left, window_right=window_right,
        scale=scale, softcap=softcap, lse=return_lse,
        alibi=alibi_slopes is not None,
        sinks=_sinks_type("attention_varlen", sinks, q, q.shape[1]),
        **_scale_kinds("attention_varlen", k, v, kv_dtype, q, k_scale,
                       v_scale))


def alibi_slopes_for(fn, slopes, batch, heads):
    """ALiBi slopes as the kernels read them: float32 [B, Hq], from
    FlashAttention's (Hq,) or (B, Hq)."""
    if slopes is None:
        return None
    if slopes.dtype != torch.float32:
        raise TypeError(f"{fn}: alibi_slopes must be torch.float32, got "
                        f"{slopes.dtype}")
    if tuple(slopes.shape) not in ((heads,), (batch, heads)):
        raise ValueError(f"{fn}: alibi_slopes must have shape ({heads},) or "
                         f"({batch}, {heads}), got {tuple(slopes.shape)}")
    return slopes.expand(batch, heads).contiguous()


def _varlen_outputs(q, v, return_lse):
    o = q.new_empty((q.shape[0], q.shape[1], v.shape[-1]))
    lse = q.new_empty((q.shape[0], q.shape[1]) if return_lse else (0,),
                      dtype=torch.float32)
    return o, lse


def append_facts_for(k_new, v_new, k_cache, v_cache, block_table=None):
    """The AppendFacts cache_append() compiles; raises ValueError/TypeError
    for what no kernel can take."""
    for name, t in (("k_new", k_new), ("v_new", v_new),
                    ("k_cache", k_cache), ("v_cache", v_cache)):
        if t.dim() != 4:
            raise ValueError(f"cache_append: {name} must be 4-D, got shape "
                             f"{tuple(t.shape)}")
        if t.dtype != k_cache.dtype:
            raise TypeError(f"cache_append: {name} is {t.dtype} but k_cache "
                            f"is {k_cache.dtype}")
    if k_cache.dtype not in _DTYPE_NAMES:
        raise TypeError(f"cache_append: the caches are {k_cache.dtype}; "
                        "attn takes float16, bfloat16 or float32")
    return AppendFacts(
        dtype=_DTYPE_NAMES[k_cache.dtype], hkv=int(k_cache.shape[1]),
        d=int(k_cache.shape[3]),
        dv=(None if v_cache.shape[3] == k_cache.shape[3]
            else int(v_cache.shape[3])),
        block_size=int(k_cache.shape[2]) if block_table is not None else None,
        strided=not all(t.is_contiguous()
                        for t in (k_new, v_new, k_cache, v_cache)))


def _row_views(o_parts, lse_parts, rows_shape, dv):
    """o_parts [N, *rows_shape, Dv] and lse_parts [N, *rows_shape] as
    [N, T, H, Dv] and [N, T, H] without a copy: (T, H) = (rows, 1) where
    the row dims collapse into one stride in both, else
    (prod(rows_shape[:-1]), rows_shape[-1]); None if neither view exists."""
    n = o_parts.shape[0]
    rows = math.prod(rows_shape)
    last = rows_shape[-1] if rows_shape else 1
    for t_dim, h_dim in ((rows, 1), (rows // max(last, 1), last)):
        try:
            return (o_parts.view(n, t_dim, h_dim, dv),
                    lse_parts.view(n, t_dim, h_dim))
        except RuntimeError:
            continue
    return None


# Part counts up to this get a kernel with N fixed (attn-to-copy unrolls
# up to 8 parts).
STATIC_MERGE_PARTS = 8


def merge_views(o_parts, lse_parts, out_dtype=None, return_lse=True):
    """The MergeFacts of stacked partial states o_parts [N, ..., Dv] and
    lse_parts [N, ...] (float32), and their [N, T, H, Dv] / [N, T, H]
    views: H = 1 where the row dims collapse (one kernel a dtype and Dv),
    else the last row dim. Copies (reshape) only where no view exists."""
    fn = "merge_states"
    if o_parts.dim() < 3:
        raise ValueError(f"{fn}: o_parts must be [N, ..., Dv] with at least "
                         f"one row dim, got shape {tuple(o_parts.shape)}")
    if tuple(lse_parts.shape) != tuple(o_parts.shape[:-1]):
        raise ValueError(f"{fn}: lse_parts must be o_parts' shape without "
                         f"Dv, {tuple(o_parts.shape[:-1])}; got "
                         f"{tuple(lse_parts.shape)}")
    if o_parts.dtype not in _DTYPE_NAMES:
        raise TypeError(f"{fn}: o_parts is {o_parts.dtype}; attn takes "
                        "float16, bfloat16 or float32")
    if lse_parts.dtype != torch.float32:
        raise TypeError(f"{fn}: lse_parts must be float32, got "
                        f"{lse_parts.dtype}")
    out_dtype = out_dtype or o_parts.dtype
    if out_dtype not in _DTYPE_NAMES:
        raise TypeError(f"{fn}: out_dtype {out_dtype} is not float16, "
                        "bfloat16 or float32")
    if o_parts.device != lse_parts.device:
        raise ValueError(f"{fn}: o_parts is on {o_parts.device}, lse_parts "
                         f"on {lse_parts.device}")
    rows_shape = list(o_parts.shape[1:-1])
    dv = int(o_parts.shape[-1])
    views = _row_views(o_parts, lse_parts, rows_shape, dv)
    if views is None:
        # Rows no view can index: copies in the last view's shape.
        h = rows_shape[-1]
        views = (o_parts.reshape(o_parts.shape[0], -1, h, dv),
                 lse_parts.reshape(lse_parts.shape[0], -1, h))
    o4, l3 = views
    if o4.stride(-1) != 1:
        o4 = o4.contiguous()
    # A few parts (vLLM's two, a ring's N GPUs) get a kernel of their own
    # that loads them all at once; more loop.
    n = int(o_parts.shape[0])
    facts = MergeFacts(dtype=_DTYPE_NAMES[o_parts.dtype],
                       heads=int(o4.shape[2]), dv=dv,
                       out_dtype=(None if out_dtype == o_parts.dtype
                                  else _DTYPE_NAMES[out_dtype]),
                       lse=bool(return_lse),
                       parts=n if n <= STATIC_MERGE_PARTS else None)
    return facts, o4, l3, rows_shape, out_dtype

