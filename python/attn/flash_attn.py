"""FlashAttention's Python functions on attn's kernels: an engine that
calls FlashAttention switches by changing its import.

    from attn.flash_attn import (flash_attn_func, flash_attn_varlen_func,
                                 flash_attn_with_kvcache)

The signatures, layouts and results are FlashAttention 2's:

- flash_attn_func: q [B, Sq, Hq, D], k/v [B, Sk, Hkv, D] -> out
  [B, Sq, Hq, Dv] (and softmax_lse [B, Hq, Sq] with return_attn_probs).
- flash_attn_varlen_func: q [total_q, Hq, D], k/v [total_k, Hkv, D] packed
  by cu_seqlens_q/k (int32 [B + 1]), or with block_table a paged cache
  [num_blocks, page_block_size, Hkv, D] whose lengths cu_seqlens_k gives
  -> out [total_q, Hq, Dv] (and softmax_lse [Hq, total_q]).
- flash_attn_with_kvcache: q [B, Sq, Hq, D] over k_cache/v_cache
  [B, S_cache, Hkv, D] or paged [num_blocks, page_block_size, Hkv, D];
  new tokens k/v [B, S_new, Hkv, D] are written into the caches in place
  at cache_seqlens first (attn.cache_append), then attended to with the
  rest -> out [B, Sq, Hq, Dv] (and softmax_lse [B, Hq, Sq]).

Masks are FlashAttention's: causal aligned to the bottom right (query i of
a sequence sees keys j <= i + Sk - Sq), window_size=(left, right) around
that diagonal with -1 for an unbounded side, softcap 0 for none,
softmax_scale None for 1/sqrt(D). `deterministic=True` makes each
sequence's result independent of the batch it runs in (one kernel and one
split count whatever the batch); `num_splits` fixes the split count of a
split-K decode kernel (0: the runtime chooses; a fixed count is
batch-invariant too).

alibi_slopes (float32 (Hq,) or (B, Hq)) adds FlashAttention's ALiBi bias,
-slope * |i + Sk - Sq - j|, through a score_mod region.

s_aux (vLLM's FlashAttention and FA3's keyword; GPT-OSS's `sinks`): one
attention-sink logit per query head, a float tensor (Hq,) on q's device,
joins each row's softmax denominator and carries no value. The returned
softmax_lse counts it (a row that sees no key has out 0 and the sink's
LSE).

Quantized K/V caches (FlashAttention-3's fp8 forward, vLLM's fp8 KV
cache): k and v (or k_cache and v_cache) may be torch.float8_e4m3fn,
torch.float8_e5m2 or torch.int8 under an fp16/bf16 q, with FA3's
k_descale and v_descale (float32 (B, Hkv); None: 1) multiplying each
element. A descale that is the same for every sequence (an expand() of
one (Hkv,) or () tensor, as vLLM passes it: stride 0 along the batch) is
read per head or per tensor; one that varies by sequence becomes a
per-token scale over a contiguous or packed cache, and is refused over a
paged one (its pages do not say whose they are). These run on attn's
split-K decode kernels (queries of at most 16 tokens a sequence);
q_descale (an fp8 q) and new k/v appended into a quantized cache are not
built on the GPU and are refused.

Not built, refused with an error rather than ignored: dropout (attn is for
inference), rotary embedding (rotary_cos/rotary_sin), cache_batch_idx and
cache_leftpad. Bad
shapes, dtypes and devices raise RuntimeError with FlashAttention's
messages.
"""
import math

import torch

from ._torch_facts import _KV_DTYPE_NAMES

# FlashAttention's -1 (unbounded) for one side of a window whose other side
# is bounded: attn's window takes extents up to 2^31-1, past every
# sequence, so this one sees the same keys.
_UNBOUNDED = 2**31 - 1
# The split count of deterministic=True calls of split-K decode kernels.
DETERMINISTIC_SPLITS = 8


def _ops():
    """attn.torch, imported on the first call (it needs PyTorch 2.4+)."""
    from . import torch as attn_torch
    return attn_torch


def _fail(message):
    # FlashAttention's checks are TORCH_CHECKs, which raise RuntimeError.
    raise RuntimeError(message)


def _require_cuda(**tensors):
    for name, t in tensors.items():
        if t is not None and t.device.type != "cuda":
            _fail(f"{name} must be on CUDA")


# A quantized K/V cache's element types (those this PyTorch has): the
# ones attn.torch's facts take.
_QUANTIZED = tuple(_KV_DTYPE_NAMES)


def _check_inputs(q, k, v, q_ndim, kv_ndim=None, **cuda):
    for name, t in (("q", q), ("k", k), ("v", v)):
        if not isinstance(t, torch.Tensor):
            raise TypeError(f"{name} must be a torch.Tensor, got "
                            f"{type(t).__name__}")
        ndim = q_ndim if name == "q" else kv_ndim or q_ndim
        if t.dim() != ndim:
            _fail(f"{name} must be {ndim}-D, got shape {tuple(t.shape)}")
    if q.dtype not in (torch.float16, torch.bfloat16):
        _fail("FlashAttention only support fp16 and bf16 data type")
    if k.dtype in _QUANTIZED:
        if v.dtype != k.dtype:
            _fail("key and value must have the same dtype")
    else:
        if k.dtype != q.dtype:
            _fail("query and key must have the same dtype")
        if v.dtype != q.dtype:
            _fail("query and value must have the same dtype")
    _require_cuda(q=q, k=k, v=v, **cuda)
    for t in (q, k, v):
        if t.stride(-1) != 1:
            _fail("Input tensor must have contiguous last dimension")
    if q.shape[-1] > 256:
        _fail("FlashAttention forward only supports head dimension at most "
              "256")
    if k.shape[-1] != q.shape[-1]:
        _fail(f"k must have head dimension {q.shape[-1]} (q's), got "
              f"{k.shape[-1]}")
    hq, hkv = q.shape[-2], k.shape[-2]
    if v.shape[-2] != hkv:
        _fail(f"v must have {hkv} heads (k's), got {v.shape[-2]}")
    if hkv == 0 or hq % hkv:
        _fail("Number of heads in key/value must divide number of heads in "
              "query")


def _refuse(dropout_p=0.0, **others):
    """What attn does not build: refused, never ignored."""
    if dropout_p:
        raise ValueError(f"dropout_p is {dropout_p}: attn's kernels are for "
                         "inference and apply no dropout; pass 0.0")
    for name, value in others.items():
        if value is not None:
            raise NotImplementedError(f"{name}: not built in "
                                      "attn.flash_attn; pass None")


def _int32_vector(name, t, length=None):
    if not isinstance(t, torch.Tensor) or t.dim() != 1:
        _fail(f"{name} must be a 1-D tensor")
    if t.dtype != torch.int32:
        _fail(f"{name} must have dtype int32")
    if length is not None and t.shape[0] != length:
        _fail(f"{name} must have shape ({length},), got {tuple(t.shape)}")


def _alibi(alibi_slopes, batch, heads):
    """FlashAttention's ALiBi checks; the slopes as given (attn.torch makes
    them [B, Hq])."""
    if alibi_slopes is None:
        return {}
    if alibi_slopes.dtype != torch.float32:
        _fail("ALiBi slopes must have dtype fp32")
    _require_cuda(alibi_slopes=alibi_slopes)
    if tuple(alibi_slopes.shape) not in ((heads,), (batch, heads)):
        _fail("ALiBi slopes tensor must have shape (nheads) or (batch_size, "
              "nheads)")
    return dict(alibi_slopes=alibi_slopes)


def _sinks(s_aux, heads):
    """Attention sinks (s_aux) as attn.torch takes them."""
    if s_aux is None:
        return {}
    if not isinstance(s_aux, torch.Tensor) or tuple(s_aux.shape) != (heads,):
        _fail(f"s_aux must be a tensor of shape ({heads},), one sink per "
              f"query head")
    if s_aux.dtype not in (torch.float32, torch.float16, torch.bfloat16):
        _fail("s_aux must have dtype float32, float16 or bfloat16")
    _require_cuda(s_aux=s_aux)
    return dict(sinks=s_aux)


def _descales(k, q_descale, k_descale, v_descale, batch, form,
              cu_seqlens_k=None):
    """FA3's descales as attn.torch's k_scale and v_scale for the cache `k`
    in attn's layout: `form` 'padded' ([B, Hkv, Sk, D]), 'packed'
    ([total_k, Hkv, D], by cu_seqlens_k) or 'paged'."""
    if q_descale is not None:
        raise NotImplementedError(
            "q_descale: attn's GPU kernels take an fp16 or bf16 q over a "
            "quantized K/V cache (an fp8 q runs on attn's CPU path only); "
            "pass None")
    out = {}
    hkv = k.shape[1]
    for name, t in (("k_descale", k_descale), ("v_descale", v_descale)):
        if t is None:
            continue
        if k.dtype not in _QUANTIZED:
            _fail(f"{name} is for a quantized (fp8 or int8) K/V cache; "
                  f"k is {k.dtype}")
        if not isinstance(t, torch.Tensor) or t.dtype != torch.float32:
            _fail(f"{name} must be a float32 tensor")
        if tuple(t.shape) != (batch, hkv):
            _fail(f"{name} must have shape ({batch}, {hkv}) (batch_size, "
                  f"num_heads_k), got {tuple(t.shape)}")
        _require_cuda(**{name: t})
        key = "k_scale" if name == "k_descale" else "v_scale"
        if batch == 1 or t.stride(0) == 0:
            # The same for every sequence: per head, or per tensor.
            out[key] = (t[0, 0] if t.stride(1) == 0 or hkv == 1
                        else t[0].contiguous())
        elif form == "padded":
            out[key] = (t[:, :, None].expand(batch, hkv, k.shape[2])
                        .contiguous())
        elif form == "packed":
            tokens = torch.arange(k.shape[0], device=t.device)
            seq = torch.searchsorted(cu_seqlens_k[1:].long(), tokens,
                                     right=True)
            out[key] = t[seq.clamp_(max=batch - 1)].contiguous()
        else:
            _fail(f"{name} varies by sequence, which a paged cache cannot "
                  f"tell (its pages do not say whose they are); pass one "
                  f"per head for every sequence, e.g. "
                  f"descale.expand({batch}, {hkv}) of a ({hkv},) tensor")
    return out


def _block_table(block_table, batch):
    if block_table.dtype != torch.int32:
        _fail("block_table must have dtype torch.int32")
    if block_table.dim() != 2 or block_table.shape[0] != batch:
        _fail(f"block_table must have shape ({batch}, max_num_blocks), got "
              f"{tuple(block_table.shape)}")
    if block_table.stride(-1) != 1:
        _fail("block_table must have contiguous last dimension")


def mask_arguments(causal, window_size):
    """attn.torch's (causal, window) for FlashAttention's causal and
    window_size: causal makes the right extent 0, -1 (any negative) leaves
    a side unbounded."""
    try:
        left, right = (int(w) for w in window_size)
    except (TypeError, ValueError):
        raise ValueError(f"window_size must be (left, right), got "
                         f"{window_size!r}") from None
    if causal:
        right = 0
    if left < 0 and right < 0:
        return dict(causal=False, window=None)
    if left < 0 and right == 0:
        return dict(causal=True, window=None)
    return dict(causal=False,
                window=(_UNBOUNDED if left < 0 else left,
                        _UNBOUNDED if right < 0 else right))


def _scale_softcap(softmax_scale, softcap):
    if softmax_scale is not None and not (math.isfinite(softmax_scale)
                                          and softmax_scale > 0):
        raise ValueError(f"softmax_scale must be positive and finite, got "
                         f"{softmax_scale!r}")
    if softcap is None or softcap == 0.0:
        softcap = None
    elif not (math.isfinite(softcap) and softcap > 0):
        raise ValueError(f"softcap must be >= 0 and finite, got {softcap!r}")
    return dict(scale=softmax_scale, softcap=softcap)


def _splits(num_splits, deterministic):
    num_splits = int(num_splits or 0)
    if num_splits < 0:
        raise ValueError(f"num_splits must be >= 0 (0: the runtime "
                         f"chooses), got {num_splits}")
    if deterministic and num_splits == 0:
        return DETERMINISTIC_SPLITS
    return num_splits


def _with_lse(want_lse, result):
    """(O, LSE or None) from attn.torch's O or (O, LSE)."""
    return result if want_lse else (result, None)


def flash_attn_func(q, k, v, dropout_p=0.0, softmax_scale=None,
                    causal=False, window_size=(-1, -1), softcap=0.0,
                    alibi_slopes=None, deterministic=False,
                    return_attn_probs=False, *, num_splits=0, s_aux=None,
                    q_descale=None, k_descale=None, v_descale=None):
    """FlashAttention's flash_attn_func: q [B, Sq, Hq, D], k/v
    [B, Sk, Hkv, D] -> out [B, Sq, Hq, Dv]; with return_attn_probs,
    (out, softmax_lse [B, Hq, Sq], None): attn returns no probabilities
    (FlashAttention's third value is the dropout pattern). k_descale,
    v_descale: FA3's, for quantized k/v (the module's docstring)."""
    _refuse(dropout_p)
    _check_inputs(q, k, v, 4)
    if k.shape[0] != q.shape[0] or v.shape[:2] != k.shape[:2]:
        _fail(f"k and v must have shape (batch_size, seqlen_k, num_heads_k, "
              f"head_size) with q's batch {q.shape[0]}, got "
              f"{tuple(k.shape)} and {tuple(v.shape)}")
    o, lse = _with_lse(bool(return_attn_probs), _ops().attention(
        q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2),
        return_lse=bool(return_attn_probs), out_bshd=True,
        num_splits=_splits(num_splits, deterministic),
        **_alibi(alibi_slopes, q.shape[0], q.shape[2]),
        **_sinks(s_aux, q.shape[2]),
        **_descales(k.transpose(1, 2), q_descale, k_descale, v_descale,
                    q.shape[0], "padded"),
        **mask_arguments(causal, window_size),
        **_scale_softcap(softmax_scale, softcap)))
    out = o.transpose(1, 2)
    return (out, lse, None) if return_attn_probs else out


def flash_attn_varlen_func(q, k, v, cu_seqlens_q, cu_seqlens_k, max_seqlen_q,
                           max_seqlen_k, dropout_p=0.0, softmax_scale=None,
                           causal=False, window_size=(-1, -1), softcap=0.0,
                           alibi_slopes=None, deterministic=False,
                           return_attn_probs=False, block_table=None, *,
                           return_softmax_lse=False, num_splits=0,
                           s_aux=None, q_descale=None, k_descale=None,
                           v_descale=None):
    """FlashAttention's flash_attn_varlen_func: q [total_q, Hq, D] packed by
    cu_seqlens_q, k/v [total_k, Hkv, D] packed by cu_seqlens_k, or with
    block_table [B, max_num_blocks] a paged cache [num_blocks,
    page_block_size, Hkv, D] holding cu_seqlens_k's lengths. Returns out
    [total_q, Hq, Dv]; with return_attn_probs (out, softmax_lse
    [Hq, total_q], None), with return_softmax_lse (vLLM's) (out,
    softmax_lse). max_seqlen_q is the most queries a sequence has (a
    promise); max_seqlen_k is not needed. The offsets stay on the GPU:
    nothing here reads them. k_descale, v_descale: FA3's, for quantized
    k/v (the module's docstring)."""
    _refuse(dropout_p)
    paged = block_table is not None
    _check_inputs(q, k, v, 3, 4 if paged else 3, cu_seqlens_q=cu_seqlens_q,
                  cu_seqlens_k=cu_seqlens_k, block_table=block_table)
    _int32_vector("cu_seqlens_q", cu_seqlens_q)
    batch = cu_seqlens_q.shape[0] - 1
    _int32_vector("cu_seqlens_k", cu_seqlens_k, batch + 1)
    if int(max_seqlen_q) < 0:
        _fail(f"max_seqlen_q must be >= 0, got {max_seqlen_q}")
    del max_seqlen_k  # FlashAttention's; attn's kernels do not need it
    want_lse = bool(return_attn_probs or return_softmax_lse)
    options = dict(return_lse=want_lse,
                   num_splits=_splits(num_splits, deterministic),
                   **_alibi(alibi_slopes, batch, q.shape[1]),
                   **_sinks(s_aux, q.shape[1]),
                   **mask_arguments(causal, window_size),
                   **_scale_softcap(softmax_scale, softcap))
    # deterministic: no max_q_len hint, so every batch runs the same
    # (prefill) kernel rather than the decode one for short queries.
    max_q = 0 if deterministic else int(max_seqlen_q)
    if paged:
        _block_table(block_table, batch)
        kv_lens = cu_seqlens_k[1:] - cu_seqlens_k[:-1]
        result = _ops().attention_varlen(
            q, k.transpose(1, 2), v.transpose(1, 2), cu_seqlens_q, None,
            max_q, block_table=block_table, kv_lens=kv_lens,
            **_descales(k.transpose(1, 2), q_descale, k_descale, v_descale,
                        batch, "paged"), **options)
    else:
        result = _ops().attention_varlen(
            q, k, v, cu_seqlens_q, cu_seqlens_k, max_q,
            **_descales(k, q_descale, k_descale, v_descale, batch, "packed",
                        cu_seqlens_k), **options)
    o, lse = _with_lse(want_lse, result)
    if not want_lse:
        return o
    lse = lse.t().contiguous()  # FlashAttention's [Hq, total_q]
    if return_attn_probs:
        return o, lse, None
    return (o, lse) if return_softmax_lse else o


def flash_attn_with_kvcache(q, k_cache, v_cache, k=None, v=None,
                            rotary_cos=None, rotary_sin=None,
                            cache_seqlens=None, cache_batch_idx=None,
                            cache_leftpad=None, block_table=None,
                            softmax_scale=None, causal=False,
                            window_size=(-1, -1), softcap=0.0,
                            rotary_interleaved=True, alibi_slopes=None,
                            num_splits=0, return_softmax_lse=False, *,
                            s_aux=None, q_descale=None, k_descale=None,
                            v_descale=None):
    """FlashAttention's flash_attn_with_kvcache: q [B, Sq, Hq, D] over
    k_cache/v_cache [B, S_cache, Hkv, D], or paged [num_blocks,
    page_block_size, Hkv, D] through block_table [B, max_num_blocks].
    cache_seqlens (an int or int32 [B]) are the lengths in the cache; k/v
    [B, S_new, Hkv, D], where given, are written into the caches in place
    at those positions first (the cache update and the attention in one
    call) and attended to with the rest. Returns out [B, Sq, Hq, Dv], and
    softmax_lse [B, Hq, Sq] with return_softmax_lse. k_descale, v_descale:
    FA3's, for quantized caches (the module's docstring)."""
    del rotary_interleaved  # meaningful with rotary_cos/sin only
    _refuse(rotary_cos=rotary_cos, rotary_sin=rotary_sin,
            cache_batch_idx=cache_batch_idx, cache_leftpad=cache_leftpad)
    paged = block_table is not None
    _check_inputs(q, k_cache, v_cache, 4, block_table=block_table,
                  cache_seqlens=(cache_seqlens
                                 if isinstance(cache_seqlens, torch.Tensor)
                                 else None))
    batch = q.shape[0]
    if (k is None) != (v is None):
        _fail("k and v must be given together")
    if paged:
        _block_table(block_table, batch)
    elif k_cache.shape[0] != batch:
        _fail(f"k_cache must have batch {batch} (q's), got "
              f"{k_cache.shape[0]}; cache_batch_idx is not built")
    if cache_seqlens is None:
        if paged or k is not None:
            _fail("cache_seqlens is needed with a paged cache or new k/v")
        lens = None
    elif isinstance(cache_seqlens, int):
        if cache_seqlens < 0:
            _fail(f"cache_seqlens must be >= 0, got {cache_seqlens}")
        lens = torch.full((batch,), cache_seqlens, dtype=torch.int32,
                          device=q.device)
    else:
        _int32_vector("cache_seqlens", cache_seqlens, batch)
        lens = cache_seqlens
    # attn's layout: [B, Hkv, S, D] views of FlashAttention's memory.
    kc, vc = k_cache.transpose(1, 2), v_cache.transpose(1, 2)
    if k is not None and k_cache.dtype in _QUANTIZED:
        raise NotImplementedError(
            f"k/v appended into a {k_cache.dtype} cache: attn's GPU cache "
            f"append does not quantize yet (its CPU path does); append "
            f"quantized tokens yourself and pass k=None, v=None")
    if k is not None:
        for name, t in (("k", k), ("v", v)):
            if not isinstance(t, torch.Tensor) or t.dim() != 4:
                _fail(f"{name} must be a 4-D tensor [B, S_new, Hkv, D]")
            if t.dtype != q.dtype:
                _fail(f"{name} must have the dtype of q")
            _require_cuda(**{name: t})
            if (t.shape[0] != batch or t.shape[2] != k_cache.shape[2] or
                    t.shape[1] != k.shape[1] or
                    t.shape[3] != (k_cache if name == "k" else v_cache)
                    .shape[3]):
                _fail(f"{name} must have shape ({batch}, seqlen_new, "
                      f"{k_cache.shape[2]}, head_size), got "
                      f"{tuple(t.shape)}")
        _ops().cache_append(k.transpose(1, 2), v.transpose(1, 2), kc, vc,
                            lens, block_table)
        lens = lens + k.shape[1]
    o, lse = _with_lse(bool(return_softmax_lse), _ops().attention(
        q.transpose(1, 2), kc, vc, block_table=block_table, kv_lens=lens,
        return_lse=bool(return_softmax_lse), out_bshd=True,
        num_splits=_splits(num_splits, False),
        **_alibi(alibi_slopes, batch, q.shape[2]),
        **_sinks(s_aux, q.shape[2]),
        **_descales(kc, q_descale, k_descale, v_descale, batch,
                    "paged" if paged else "padded"),
        **mask_arguments(causal, window_size),
        **_scale_softcap(softmax_scale, softcap)))
    out = o.transpose(1, 2)
    return (out, lse) if return_softmax_lse else out
