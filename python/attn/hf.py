"""attn's kernels as attention implementations of Hugging Face transformers
(5.x): `register()` adds

- "attn": the ordinary forward (model.generate, training-free inference):
  q [B, Hq, S, D] against the cache's K/V [B, Hkv, S_kv, D], causal and
  bottom-right aligned; a padded batch (a 2-D attention mask, as
  FlashAttention's integration gets it) runs packed through
  attention_varlen;
- "paged|attn": continuous batching (generate_batch): prefill and mixed
  batches through flash_attn_varlen_func over the K/V the cache gathers,
  decode-only batches through flash_attn_with_kvcache over the paged
  cache, which writes the new tokens in place. It mirrors transformers'
  own paged FlashAttention forward (integrations/flash_paged.py), with
  attn.flash_attn's functions.

    import attn.hf
    attn.hf.register()
    model = AutoModelForCausalLM.from_pretrained(..., attn_implementation="attn")
    model.generate_batch(prompts, ...)    # with attn_implementation="paged|attn"

Sliding-window layers (module.sliding_window) get FlashAttention's window
(sliding_window - 1, 0). GPT-OSS's attention sinks (the `s_aux` its
layers pass, one logit per query head) go to the kernels' `sinks`. Not
built: dropout; it raises rather than runs without."""
import torch

from . import flash_attn

NAME = "attn"


def _window(module, kwargs):
    window = kwargs.get("sliding_window") or getattr(module, "sliding_window",
                                                     None)
    return (window - 1, 0) if window else (-1, -1)


def _refuse(dropout=0.0):
    if dropout:
        raise NotImplementedError("attn.hf: dropout is not built")


def _sinks(kwargs):
    """GPT-OSS's s_aux (a parameter, one logit per query head) as the
    kernels read it: {} without sinks."""
    s_aux = kwargs.get("s_aux")
    return {} if s_aux is None else {"sinks": s_aux.detach()}


def attention_forward(module, query, key, value, attention_mask,
                      scaling=None, dropout=0.0, softcap=None, **kwargs):
    """transformers' attention interface: query [B, Hq, S, D], key/value
    [B, Hkv, S_kv, D], attention_mask None (no padding) or the 2-D [B, S_kv]
    padding mask of flash_attention_mask. Returns ([B, S, Hq, Dv], None)."""
    _refuse(dropout)
    ops = flash_attn._ops()
    sinks = _sinks(kwargs)
    causal = getattr(module, "is_causal", True)
    mask = flash_attn.mask_arguments(causal, _window(module, kwargs))
    if attention_mask is None:
        out = ops.attention(query, key, value, scale=scaling,
                            softcap=softcap or None, out_bshd=True, **mask,
                            **sinks)
        return out.transpose(1, 2), None
    if attention_mask.dim() != 2:
        raise ValueError(f"attn.hf: expected no mask or a 2-D padding mask "
                         f"[B, S_kv], got shape {tuple(attention_mask.shape)}"
                         f" (register() sets transformers' mask function)")
    # Padded: each row's valid tokens (one run, left or right padded) packed
    # back to back, attended per sequence, scattered back.
    b, hq, sq, d = query.shape
    kv_valid = attention_mask[:, -key.shape[2]:].bool()
    q_valid = kv_valid[:, -sq:]
    q_rows = q_valid.reshape(-1).nonzero().squeeze(1)
    kv_rows = kv_valid.reshape(-1).nonzero().squeeze(1)
    q_lens, kv_lens = q_valid.sum(1), kv_valid.sum(1)
    cu_q = torch.nn.functional.pad(q_lens.cumsum(0), (1, 0)).to(torch.int32)
    cu_k = torch.nn.functional.pad(kv_lens.cumsum(0), (1, 0)).to(torch.int32)

    def packed(t, rows):
        return t.transpose(1, 2).reshape(-1, t.shape[1], t.shape[3])[rows]
    o = ops.attention_varlen(packed(query, q_rows), packed(key, kv_rows),
                             packed(value, kv_rows), cu_q, cu_k,
                             int(q_lens.max()), scale=scaling,
                             softcap=softcap or None, **mask, **sinks)
    out = o.new_zeros(b * sq, hq, value.shape[3])
    out[q_rows] = o
    return out.view(b, sq, hq, value.shape[3]), None


def paged_attention_forward(module, q, k, v, attention_mask, cache,
                            cu_seq_lens_q, cu_seq_lens_k, max_seqlen_q,
                            max_seqlen_k, block_table, **kwargs):
    """transformers' paged attention interface (continuous batching):
    q [1, Hq, total_q, D], k/v [1, Hkv, total_q, D] the new tokens. With a
    block table (a decode-only batch): the new K/V go into the paged cache
    and attention reads it, in one flash_attn_with_kvcache call. Without:
    the cache writes the new K/V and gathers each sequence's (read_index,
    write_index), attended packed. Returns ([total_q, Hq, Dv], None)."""
    s_aux = _sinks(kwargs).get("sinks")
    window = _window(module, kwargs)
    if isinstance(cu_seq_lens_k, dict):
        layer_type = ("full_attention" if window == (-1, -1)
                      else "sliding_attention")
        cu_seq_lens_k = cu_seq_lens_k[layer_type]
        max_seqlen_k = max_seqlen_k[layer_type]
    if block_table is None:
        k, v = cache.update(key_states=k, value_states=v,
                            layer_idx=module.layer_idx,
                            read_index=kwargs["read_index"],
                            write_index=kwargs["write_index"])
        # Row-major packed tensors: one kernel whatever the batch.
        out = flash_attn.flash_attn_varlen_func(
            q.transpose(1, 2).squeeze(0).contiguous(), k.contiguous(),
            v.contiguous(),
            cu_seq_lens_q.to(torch.int32), cu_seq_lens_k.to(torch.int32),
            max_seqlen_q, max_seqlen_k, softmax_scale=module.scaling,
            causal=True, window_size=window, s_aux=s_aux)
        return out, None
    group, index_in_group = cache.layer_index_to_group_indices[
        module.layer_idx]
    shape = (-1, cache.block_size, cache.num_key_value_heads, cache.head_dim)
    k_cache = cache.key_cache[index_in_group].view(shape)
    v_cache = cache.value_cache[index_in_group].view(shape)
    batch = q.shape[2]
    # The cache's lengths before this step's token.
    lens = (cu_seq_lens_k[1:batch + 1] - cu_seq_lens_k[:batch] - 1).to(
        torch.int32)
    # [1, H, B, D] -> [B, 1, H, D], row-major (one kernel for every B).
    out = flash_attn.flash_attn_with_kvcache(
        q.permute(2, 0, 1, 3).contiguous(), k_cache, v_cache,
        k=k.permute(2, 0, 1, 3).contiguous(),
        v=v.permute(2, 0, 1, 3).contiguous(), cache_seqlens=lens,
        block_table=block_table[group], softmax_scale=module.scaling,
        causal=True, window_size=window, s_aux=s_aux)
    return out.squeeze(1), None


def register(name=NAME):
    """Registers `name` and `paged|name` with transformers'
    AttentionInterface, and FlashAttention's mask function (no mask, or
    the 2-D padding mask) for `name`."""
    from transformers import AttentionInterface
    from transformers.masking_utils import (AttentionMaskInterface,
                                            flash_attention_mask)
    AttentionInterface.register(name, attention_forward)
    AttentionInterface.register(f"paged|{name}", paged_attention_forward)
    AttentionMaskInterface.register(name, flash_attention_mask)
