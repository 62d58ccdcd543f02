"""FlashMLA's Python functions on attn's kernels (DeepSeek's multi-head
latent attention, absorbed decode): an engine that calls FlashMLA switches
by changing its import.

    from attn.flash_mla import flash_mla_with_kvcache, get_mla_metadata

    metadata, num_splits = get_mla_metadata(cache_seqlens, s_q * h_q, 1)
    out, lse = flash_mla_with_kvcache(q, kv_cache, block_table,
                                      cache_seqlens, 512, metadata,
                                      num_splits, softmax_scale=scale,
                                      causal=True)

q [B, s_q, h_q, 576] (bf16 or fp16) attends over a paged latent cache
[num_blocks, page_block_size, 1, 576] whose first head_dim_v (512)
columns are V: attn's spec reads V from the same bytes (`v_from_k`).
Returns out [B, s_q, h_q, head_dim_v] and softmax_lse [B, h_q, s_q]
(float32). causal aligns to the bottom right (query i of a sequence sees
keys j <= i + kv_len - s_q). softmax_scale None is 1/sqrt(576); MLA's
models give their own.

get_mla_metadata returns (None, None): attn's runtime picks the split
count of its split-K decode itself, so flash_mla_with_kvcache accepts and
ignores FlashMLA's scheduler metadata and split counts.

On NVIDIA the kernel is the decode tier's tensor-core split kernel, its
warps splitting Dv: on an H200 0.79-0.86x of the latent read floor with
16 heads, short of FlashMLA (bench/RESULTS.md, "DeepSeek-V3").
Not built, refused with an error: fp8 latent caches (FlashMLA's
is_fp8_kvcache), sparse attention (indices) and more than one latent head.
"""
import math

import torch

from .spec import AttentionFacts


def _fail(message):
    raise RuntimeError(message)


def mla_facts(dtype, h_q, d, head_dim_v, s_q, page_block_size, causal,
              softmax_scale=None):
    """The AttentionFacts of flash_mla_with_kvcache's kernel: `dtype` 'bf16'
    or 'f16', one latent head of `d` whose first `head_dim_v` columns are
    V, paged, with kv_lens and the LSE."""
    return AttentionFacts(
        dtype, h_q, 1, d, dv=int(head_dim_v), q_len=s_q,
        mask="causal" if causal and s_q > 1 else "none",
        scale=float(softmax_scale or 1.0 / math.sqrt(d)),
        block_size=page_block_size, kv_lens=True, lse=True, v_from_k=True)


def get_mla_metadata(cache_seqlens, num_q_tokens_per_head_k, num_heads_k,
                     *args, **kwargs):
    """FlashMLA's scheduler metadata: (None, None) for attn, whose runtime
    picks the split count itself (see the module's docstring)."""
    return None, None


def flash_mla_with_kvcache(q, k_cache, block_table, cache_seqlens,
                           head_dim_v, tile_scheduler_metadata=None,
                           num_splits=None, softmax_scale=None, causal=False,
                           is_fp8_kvcache=False, indices=None):
    """FlashMLA's flash_mla_with_kvcache (module docstring): returns
    (out [B, s_q, h_q, head_dim_v], softmax_lse [B, h_q, s_q])."""
    del tile_scheduler_metadata, num_splits  # attn's runtime chooses
    if is_fp8_kvcache:
        raise NotImplementedError("an fp8 latent cache (is_fp8_kvcache): "
                                  "attn's MLA runs on bf16/fp16 caches")
    if indices is not None:
        raise NotImplementedError("sparse MLA (indices) is not built")
    tensors = (("q", q, 4), ("k_cache", k_cache, 4),
               ("block_table", block_table, 2),
               ("cache_seqlens", cache_seqlens, 1))
    for name, t, ndim in tensors:
        if not isinstance(t, torch.Tensor):
            raise TypeError(f"{name} must be a torch.Tensor, got "
                            f"{type(t).__name__}")
        if t.dim() != ndim:
            _fail(f"{name} must be {ndim}-D, got shape {tuple(t.shape)}")
    for name, t, _ in tensors:
        if t.device.type != "cuda":
            _fail(f"{name} must be on CUDA")
    if q.dtype not in (torch.float16, torch.bfloat16):
        _fail(f"q must be bf16 or fp16, got {q.dtype}")
    if k_cache.dtype != q.dtype:
        _fail(f"k_cache must have q's dtype ({q.dtype}), got "
              f"{k_cache.dtype}")
    for name, t in (("block_table", block_table),
                    ("cache_seqlens", cache_seqlens)):
        if t.dtype != torch.int32:
            _fail(f"{name} must be int32, got {t.dtype}")
    batch, s_q, h_q, d = q.shape
    num_blocks, page, h_kv, kd = k_cache.shape
    if h_kv != 1:
        _fail(f"k_cache must hold one latent head, got {h_kv}")
    if kd != d:
        _fail(f"k_cache must have head dimension {d} (q's), got {kd}")
    if not 0 < int(head_dim_v) <= d:
        _fail(f"head_dim_v must be in [1, {d}], got {head_dim_v}")
    if block_table.shape[0] != batch or cache_seqlens.shape[0] != batch:
        _fail(f"block_table and cache_seqlens must have batch {batch} "
              f"(q's)")
    if not k_cache.is_contiguous():
        _fail("k_cache must be contiguous")
    facts = mla_facts("bf16" if q.dtype == torch.bfloat16 else "f16", h_q,
                      d, head_dim_v, s_q, page, causal, softmax_scale)
    # attn's layouts: q [B, h_q, s_q, d], the cache [num_blocks, 1, page,
    # d] (the same bytes: one head), O [B, h_q, s_q, dv].
    qh = q.transpose(1, 2).contiguous()
    o = torch.empty(batch, h_q, s_q, int(head_dim_v), dtype=q.dtype,
                    device=q.device)
    lse = torch.empty(batch, h_q, s_q, dtype=torch.float32, device=q.device)
    from . import torch as attn_torch
    if attn_torch.POISON_OUTPUTS:
        o.fill_(math.nan)
        lse.fill_(math.nan)
    kernel = attn_torch.kernel_for(facts)
    kernel(q=qh, k=k_cache.view(num_blocks, 1, page, d),
           block_table=block_table.contiguous(),
           kv_lens=cache_seqlens.contiguous(), o=o, lse=lse)
    return o.transpose(1, 2).contiguous(), lse
