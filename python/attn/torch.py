"""attn's kernels as PyTorch custom ops (torch.library.custom_op), with fake
implementations, so torch.compile(fullgraph=True) captures a model that
calls them without a graph break.

    import attn.torch
    o = attn.torch.attention(q, k, v, causal=True)        # like SDPA
    o, lse = attn.torch.attention(q, k, v, return_lse=True)
    o = attn.torch.attention(q, k_cache, v_cache, block_table=table,
                             kv_lens=lens, causal=True)   # paged decode

attention() writes a spec for the tensors' static facts (dtype, head
counts and dims, mask, scale, soft-cap, paging, layout), compiles it once
through attn.compile (cached on disk) and runs it on the current stream.
Tensors are [B, H, S, D] (views of [B, S, H, D] memory work too); the
result is a new contiguous [B, Hq, Sq, Dv] tensor.

Packed (varlen) batches, like flash_attn_varlen_func:

    o = attn.torch.attention_varlen(q, k, v, cu_seqlens_q, cu_seqlens_k,
                                    max_seqlen_q, causal=True)
    # q [total_q, Hq, D], k/v [total_k, Hkv, D], offsets int32 [B + 1]

    ops = attn.torch.register(attn.compile("spec.mlir"))
    o, lse = ops.my_kernel(q, k, v)      # torch.ops.attn_spec.my_kernel

register() makes each kernel of a compiled library a custom op taking its
input operands in spec order and returning its outputs (o, then lse).
"""
import math
import os
import re
import threading
import types
from typing import Optional, Tuple

import torch

from . import compiler
from .library import AttnError  # noqa: F401  (re-exported)
from ._torch_facts import (_KV_DTYPE_NAMES, _outputs, _varlen_outputs,
                           alibi_slopes_for, append_facts_for, facts_for,
                           merge_views, varlen_facts_for)
from .spec import DECODE_MAX_Q_LEN, AttentionFacts, mask_options  # noqa: F401

_TORCH_DTYPES = {"f16": torch.float16, "bf16": torch.bfloat16,
                 "f32": torch.float32, "i32": torch.int32}

_lock = threading.Lock()
_kernels = {}

# Tests set this: outputs are filled with NaN before each kernel runs, so
# an element the kernel does not write shows.
POISON_OUTPUTS = False


def device_targets(device=None):
    """The one target for the CUDA device that will run the kernels: its
    compute capability, sm_90a on a 9.0 (the wgmma tier needs it), and
    sm_90 past 9.x (its PTX, which the driver compiles for newer GPUs)."""
    major, minor = torch.cuda.get_device_capability(device)
    if major > 9:
        return ("sm_90",)
    return (f"sm_{major}{minor}" + ("a" if (major, minor) == (9, 0) else ""),)


def default_targets():
    """$ATTN_TARGETS (comma-separated), else the current CUDA device's
    target alone (one compile, not attn.DEFAULT_TARGETS' three images),
    else attn.DEFAULT_TARGETS."""
    env = os.environ.get("ATTN_TARGETS")
    if env:
        return tuple(env.split(","))
    if torch.cuda.is_available():
        return device_targets()
    return compiler.DEFAULT_TARGETS


def kernel_for(facts, cache_dir=None, targets=None, compiler_path=None):
    """The compiled kernel for AttentionFacts or AppendFacts (compiled once
    per process, and once per cache)."""
    targets = tuple(targets or default_targets())
    key = (facts, targets, cache_dir)
    kernel = _kernels.get(key)
    if kernel is None:
        with _lock:
            kernel = _kernels.get(key)
            if kernel is None:
                lib = facts.compile(targets=targets, cache_dir=cache_dir,
                                    compiler=compiler_path)
                kernel = _kernels[key] = lib.kernels[facts.KERNEL]
    return kernel


@torch.library.custom_op("attn::attention", mutates_args=(),
                         device_types="cuda")
def _attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor,
               block_table: Optional[torch.Tensor],
               kv_lens: Optional[torch.Tensor], mask: str, align: str,
               window_left: int, window_right: int, scale: float,
               softcap: float, return_lse: bool, out_bshd: bool = False,
               num_splits: int = 0,
               alibi_slopes: Optional[torch.Tensor] = None,
               sinks: Optional[torch.Tensor] = None,
               k_scale: Optional[torch.Tensor] = None,
               v_scale: Optional[torch.Tensor] = None
               ) -> Tuple[torch.Tensor, torch.Tensor]:
    o, lse = _outputs(q, v, return_lse, out_bshd)
    facts = facts_for(q, k, v, block_table, kv_lens, mask, align,
                      window_left, window_right, scale, softcap, return_lse,
                      o=o, alibi_slopes=alibi_slopes, sinks=sinks,
                      k_scale=k_scale, v_scale=v_scale)
    if o.numel() == 0:
        return o, lse
    if block_table is None and k.shape[2] == 0:
        o.zero_()  # no keys: O = 0, LSE = -inf (the sink's with sinks)
        if sinks is not None and return_lse:
            lse.copy_(sinks.float().view(1, -1, 1).expand_as(lse))
        else:
            lse.fill_(-math.inf)
        return o, lse
    tensors = {"q": q, "k": k, "v": v, "o": o}
    if sinks is not None:
        tensors["sinks"] = sinks.contiguous()
    tensors.update(_scales(k_scale, v_scale))
    if block_table is not None:
        tensors["block_table"] = block_table.to(torch.int32).contiguous()
    if kv_lens is not None:
        tensors["kv_lens"] = kv_lens.to(torch.int32).contiguous()
    if return_lse:
        tensors["lse"] = lse
    if alibi_slopes is not None:
        # Each sequence's kv_len - q_len: the bias's diagonal.
        lens = (tensors["kv_lens"] if kv_lens is not None else
                torch.full((q.shape[0],), k.shape[2], dtype=torch.int32,
                           device=q.device))
        tensors.update(_alibi_captures(alibi_slopes, lens - q.shape[2]))
    if POISON_OUTPUTS:
        o.fill_(math.nan)
        lse.fill_(math.nan)
    kernel = kernel_for(facts)
    kernel(num_splits=_splits_for(kernel, num_splits), **tensors)
    return o, lse


def _scales(k_scale, v_scale):
    """A quantized cache's dequantization scales, those given (facts_for
    has checked them: f32, contiguous)."""
    return {name: t for name, t in (("k_scale", k_scale),
                                    ("v_scale", v_scale)) if t is not None}


def _alibi_captures(slopes, shift):
    """The ALiBi score_mod's captures (attn.spec): slopes [B, Hq] and each
    sequence's kv_len - q_len."""
    return {"capture0": slopes, "capture1": shift.to(torch.int32).contiguous()}


@_attention.register_fake
def _attention_fake(q, k, v, block_table, kv_lens, mask, align, window_left,
                    window_right, scale, softcap, return_lse, out_bshd=False,
                    num_splits=0, alibi_slopes=None, sinks=None, k_scale=None,
                    v_scale=None):
    return _outputs(q, v, return_lse, out_bshd)


def _splits_for(kernel, num_splits):
    """The K/V split count a call passes: the caller's for a kernel with a
    split-K launch (0: the runtime chooses by batch and GPU), else 0, since
    a kernel without one takes no count above 1."""
    return int(num_splits) if "split" in kernel.tier else 0


def attention(q, k, v, *, causal=False, window=None, softcap=None,
              scale=None, block_table=None, kv_lens=None,
              align="bottom_right", return_lse=False, num_splits=0,
              out_bshd=False, alibi_slopes=None, sinks=None, k_scale=None,
              v_scale=None):
    """Scaled dot-product attention with attn's kernels.

    q [B, Hq, Sq, D]; k, v [B, Hkv, Sk, D] (Hq a multiple of Hkv: GQA), or
    with `block_table` [B, max_blocks] (int32) paged caches
    [num_blocks, Hkv, block_size, D] and `kv_lens` [B] each sequence's
    length (kv_lens alone: variable lengths up to Sk). f16 or bf16.
    `causal`: query i sees keys j <= i + Sk - Sq (`align="bottom_right"`,
    FlashAttention's convention, right for decode and chunked prefill) or
    j <= i (`align="top_left"`, SDPA's is_causal). `window`: (left, right)
    key extents around that diagonal (an int w: (w, 0)); None or -1 for
    an unbounded side. `scale` defaults to 1/sqrt(D); `softcap` turns the
    logits s into softcap * tanh(s / softcap). Returns O [B, Hq, Sq, Dv],
    and with return_lse=True also LSE [B, Hq, Sq] (f32; -inf for a row
    that sees no key). `num_splits`: the K/V splits of a split-K decode
    kernel (0: the runtime chooses by batch and GPU; a fixed count makes
    each sequence's result independent of the batch), ignored by kernels
    without split-K. `out_bshd`: O is a [B, Hq, Sq, Dv] view of
    [B, Sq, Hq, Dv] memory (FlashAttention's layout). `alibi_slopes`:
    float32 (Hq,) or (B, Hq), FlashAttention's ALiBi: the bias
    -slope * |i + Sk - Sq - j| (a score_mod region over the slopes).
    `sinks`: attention sinks (GPT-OSS's `sinks`, FlashAttention's
    `s_aux`), a float tensor (Hq,) on q's device: one logit per query head
    that joins each row's softmax denominator and carries no value; the
    LSE counts it, and a row that sees no key gets O = 0, LSE = its
    sink.

    Quantized K/V caches: k and v may be torch.float8_e4m3fn,
    torch.float8_e5m2 or torch.int8 (both the same) under an f16/bf16 q;
    an element's value is its stored value times its scale. `k_scale`,
    `v_scale`: float32, contiguous, on q's device, per tensor (shape ()),
    per K/V head ((Hkv,)) or per token and head (the cache's shape without
    its head dim: [B, Hkv, Sk], paged [num_blocks, Hkv, block_size]); None
    is a scale of 1. These run on the split-K decode kernels (Sq at most
    16); longer queries over a quantized cache are refused."""
    mask, left, right = mask_options(causal, window, align)
    if int(num_splits) < 0:
        raise ValueError(f"attention: num_splits must be >= 0 (0: the "
                         f"runtime chooses), got {num_splits!r}")
    for name, value in (("scale", scale), ("softcap", softcap)):
        if value is not None and not (math.isfinite(value) and value > 0):
            raise ValueError(f"attention: {name} must be positive and "
                             f"finite, got {value!r}")
    o, lse = _attention(q, k, v, block_table, kv_lens, mask, align, left,
                        right, float(scale or 0.0), float(softcap or 0.0),
                        bool(return_lse), bool(out_bshd), int(num_splits),
                        alibi_slopes_for("attention", alibi_slopes,
                                         q.shape[0], q.shape[1]), sinks,
                        k_scale, v_scale)
    return (o, lse) if return_lse else o


# -- packed (varlen) batches --------------------------------------------------
@torch.library.custom_op("attn::attention_varlen", mutates_args=(),
                         device_types="cuda")
def _attention_varlen(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor,
                      cu_seqlens_q: torch.Tensor,
                      cu_seqlens_k: Optional[torch.Tensor],
                      block_table: Optional[torch.Tensor],
                      kv_lens: Optional[torch.Tensor], max_seqlen_q: int,
                      mask: str, align: str, window_left: int,
                      window_right: int, scale: float, softcap: float,
                      return_lse: bool, num_splits: int = 0,
                      alibi_slopes: Optional[torch.Tensor] = None,
                      sinks: Optional[torch.Tensor] = None,
                      k_scale: Optional[torch.Tensor] = None,
                      v_scale: Optional[torch.Tensor] = None
                      ) -> Tuple[torch.Tensor, torch.Tensor]:
    facts = varlen_facts_for(q, k, v, cu_seqlens_q, cu_seqlens_k,
                             block_table, kv_lens, mask, align, window_left,
                             window_right, scale, softcap, return_lse,
                             alibi_slopes=alibi_slopes, sinks=sinks,
                             k_scale=k_scale, v_scale=v_scale)
    o, lse = _varlen_outputs(q, v, return_lse)
    tensors = {"q": q, "k": k, "v": v, "o": o,
               "cu_seqlens_q": cu_seqlens_q.contiguous()}
    if sinks is not None:
        tensors["sinks"] = sinks.contiguous()
    tensors.update(_scales(k_scale, v_scale))
    if cu_seqlens_k is not None:
        tensors["cu_seqlens_k"] = cu_seqlens_k.contiguous()
    if block_table is not None:
        tensors["block_table"] = block_table.to(torch.int32).contiguous()
    if kv_lens is not None:
        tensors["kv_lens"] = kv_lens.to(torch.int32).contiguous()
    if return_lse:
        tensors["lse"] = lse
    if alibi_slopes is not None:
        q_lens = cu_seqlens_q[1:] - cu_seqlens_q[:-1]
        kv = (cu_seqlens_k[1:] - cu_seqlens_k[:-1] if cu_seqlens_k is not None
              else tensors["kv_lens"] if kv_lens is not None else
              torch.full_like(q_lens, k.shape[2]))
        tensors.update(_alibi_captures(alibi_slopes, kv - q_lens))
    if POISON_OUTPUTS:
        o.fill_(math.nan)
        lse.fill_(math.nan)
    # An empty batch (no sequences, no tokens) is the library's to skip.
    kernel = kernel_for(facts)
    # A quantized cache's kernel has max_q_len fixed (the decode tier's).
    sizes = ({} if facts.max_q_len is not None
             else {"max_q_len": max(int(max_seqlen_q), 0)})
    kernel(sizes=sizes, num_splits=_splits_for(kernel, num_splits),
           **tensors)
    return o, lse


@_attention_varlen.register_fake
def _attention_varlen_fake(q, k, v, cu_seqlens_q, cu_seqlens_k, block_table,
                           kv_lens, max_seqlen_q, mask, align, window_left,
                           window_right, scale, softcap, return_lse,
                           num_splits=0, alibi_slopes=None, sinks=None,
                           k_scale=None, v_scale=None):
    return _varlen_outputs(q, v, return_lse)


def attention_varlen(q, k, v, cu_seqlens_q, cu_seqlens_k=None,
                     max_seqlen_q=0, max_seqlen_k=None, *, causal=False,
                     window=None, softcap=None, scale=None, block_table=None,
                     kv_lens=None, align="bottom_right", return_lse=False,
                     num_splits=0, alibi_slopes=None, sinks=None,
                     k_scale=None, v_scale=None):
    """Attention over a packed (varlen) batch, like FlashAttention's
    flash_attn_varlen_func.

    q [total_q, Hq, D] holds the batch's queries back to back: sequence b's
    are rows cu_seqlens_q[b] .. cu_seqlens_q[b + 1] - 1 (`cu_seqlens_q`: a
    torch.int32 CUDA tensor [B + 1], monotone from 0). K/V are
    [total_k, Hkv, D] packed the same way by `cu_seqlens_k`; or, without
    it, a paged cache [num_blocks, Hkv, block_size, D] through
    `block_table` [B, max_blocks] and `kv_lens` [B] (chunked prefill), or
    padded [B, Hkv, Sk, D] (with `kv_lens` for shorter sequences). The
    offsets stay on the GPU: nothing here reads them, so the caller
    guarantees they are monotone, start at 0 and fit the tensors.
    `max_seqlen_q`: the most queries a sequence has (a promise; rows past
    it may stay unwritten), 0 if not known; at most 16 runs the split-K
    decode kernels. `max_seqlen_k` is accepted for FlashAttention's
    signature and not needed. Masks align per sequence (`causal` with
    align="bottom_right": query i of a sequence with q_len Lq and kv_len Lk
    sees keys j <= i + Lk - Lq). Returns O [total_q, Hq, Dv], and with
    return_lse=True also LSE [total_q, Hq] (f32; -inf for a row that sees
    no key). `num_splits`, `alibi_slopes`, `sinks` and a quantized cache's
    `k_scale` and `v_scale` as attention()'s, per sequence (per token:
    packed [total_k, Hkv], paged [num_blocks, Hkv, block_size], padded
    [B, Hkv, Sk])."""
    del max_seqlen_k  # FlashAttention's; the kernels do not need it
    mask, left, right = mask_options(causal, window, align)
    for name, value in (("scale", scale), ("softcap", softcap)):
        if value is not None and not (math.isfinite(value) and value > 0):
            raise ValueError(f"attention_varlen: {name} must be positive "
                             f"and finite, got {value!r}")
    if int(num_splits) < 0:
        raise ValueError(f"attention_varlen: num_splits must be >= 0 (0: "
                         f"the runtime chooses), got {num_splits!r}")
    if max_seqlen_q is None or int(max_seqlen_q) < 0:
        raise ValueError(f"attention_varlen: max_seqlen_q must be >= 0 "
                         f"(0: not known), got {max_seqlen_q!r}")
    if (k.dtype in _KV_DTYPE_NAMES and
            not 1 <= int(max_seqlen_q) <= DECODE_MAX_Q_LEN):
        raise ValueError(f"attention_varlen: a quantized K/V cache "
                         f"({k.dtype}) is read by the decode kernels, which "
                         f"take at most {DECODE_MAX_Q_LEN} queries a "
                         f"sequence: max_seqlen_q must be 1 to "
                         f"{DECODE_MAX_Q_LEN}, got {max_seqlen_q!r}")
    o, lse = _attention_varlen(q, k, v, cu_seqlens_q, cu_seqlens_k,
                               block_table, kv_lens, int(max_seqlen_q), mask,
                               align, left, right, float(scale or 0.0),
                               float(softcap or 0.0), bool(return_lse),
                               int(num_splits),
                               alibi_slopes_for(
                                   "attention_varlen", alibi_slopes,
                                   cu_seqlens_q.shape[0] - 1, q.shape[1]),
                               sinks, k_scale, v_scale)
    return (o, lse) if return_lse else o


# -- cache appends ------------------------------------------------------------
@torch.library.custom_op("attn::cache_append",
                         mutates_args=("k_cache", "v_cache"),
                         device_types="cuda")
def _cache_append(k_new: torch.Tensor, v_new: torch.Tensor,
                  kv_lens: torch.Tensor, block_table: Optional[torch.Tensor],
                  k_cache: torch.Tensor, v_cache: torch.Tensor) -> None:
    facts = append_facts_for(k_new, v_new, k_cache, v_cache, block_table)
    if k_new.numel() == 0:
        return
    kernel = kernel_for(facts)
    tensors = {"k_new": k_new, "v_new": v_new,
               "kv_lens": kv_lens.to(torch.int32).contiguous(),
               "k_cache": k_cache, "v_cache": v_cache}
    if block_table is not None:
        tensors["block_table"] = block_table.to(torch.int32).contiguous()
    kernel(**tensors)


@_cache_append.register_fake
def _cache_append_fake(k_new, v_new, kv_lens, block_table, k_cache, v_cache):
    return None


def cache_append(k_new, v_new, k_cache, v_cache, kv_lens, block_table=None):
    """Writes new tokens into a K/V cache in place (attn.cache_append):
    k_new/v_new [B, Hkv, S_new, D(v)] go to rows kv_lens[b] .. + S_new - 1
    of sequence b's cache, [B, Hkv, capacity, D(v)], or of a paged cache
    [num_blocks, Hkv, block_size, D(v)] through `block_table`
    [B, max_blocks]. kv_lens is not updated: the caller adds S_new before
    attending over the new tokens. Rows past the capacity (or the block
    table) are skipped, never written out of bounds."""
    if kv_lens.dtype.is_floating_point or kv_lens.dim() != 1:
        raise TypeError(f"cache_append: kv_lens must be a 1-D integer "
                        f"tensor [B], got {kv_lens.dtype} "
                        f"{tuple(kv_lens.shape)}")
    _cache_append(k_new, v_new, kv_lens, block_table, k_cache, v_cache)


# -- merging partial states ---------------------------------------------------
@torch.library.custom_op("attn::merge_states", mutates_args=(),
                         device_types="cuda")
def _merge_states(o_parts: torch.Tensor, lse_parts: torch.Tensor,
                  out_dtype: torch.dtype,
                  return_lse: bool) -> Tuple[torch.Tensor, torch.Tensor]:
    facts, o4, l3, rows_shape, out_dtype = merge_views(
        o_parts, lse_parts, out_dtype, return_lse)
    dv = o4.shape[-1]
    o = torch.empty(rows_shape + [dv], dtype=out_dtype,
                    device=o_parts.device)
    lse = torch.empty(rows_shape if return_lse else [0],
                      dtype=torch.float32, device=o_parts.device)
    if POISON_OUTPUTS:
        o.fill_(float("nan"))
        lse.fill_(float("nan"))
    if o.numel() == 0:
        return o, lse
    tensors = {"o_parts": o4, "lse_parts": l3,
               "o": o.view(o4.shape[1], o4.shape[2], dv)}
    if return_lse:
        tensors["lse"] = lse.view(l3.shape[1], l3.shape[2])
    kernel_for(facts)(**tensors)
    return o, lse


@_merge_states.register_fake
def _merge_states_fake(o_parts, lse_parts, out_dtype, return_lse):
    rows = list(o_parts.shape[1:-1])
    return (o_parts.new_empty(rows + [o_parts.shape[-1]], dtype=out_dtype),
            lse_parts.new_empty(rows if return_lse else [0]))


def merge_states(o_parts, lse_parts, *, out_dtype=None, return_lse=True):
    """Merges N partial attention states over disjoint key sets into the
    exact result (attn.merge_states), as vLLM's merge_attn_states and
    FlashInfer's merge_states do:

        o   = sum_n exp(lse_n - M) o_n / sum_n exp(lse_n - M)
        lse = M + log(sum_n exp(lse_n - M)),  M = max_n lse_n

    o_parts [N, ..., Dv] (float16, bfloat16 or float32) and lse_parts
    [N, ...] (float32, natural log, as attention(return_lse=True) returns
    it), stacked, or lists of N tensors (stacked here, a copy). Any row
    layout: [B, H, S, Dv] outputs of attention(), packed [total, H, Dv],
    FlashInfer's parts as a permuted view. A part whose LSE is -inf is
    skipped (its O may hold anything); a row with no other part gets
    o = 0, lse = -inf. Returns (o [..., Dv] of out_dtype, default the
    parts', lse [...] float32), or o alone with return_lse=False."""
    if isinstance(o_parts, (list, tuple)):
        o_parts = torch.stack(list(o_parts))
    if isinstance(lse_parts, (list, tuple)):
        lse_parts = torch.stack(list(lse_parts))
    o, lse = _merge_states(o_parts, lse_parts, out_dtype or o_parts.dtype,
                           bool(return_lse))
    return (o, lse) if return_lse else o


# -- the kernels of a compiled library as custom ops ------------------------
_registered = {}


def register(library, namespace=None):
    """Registers each kernel of `library` (from attn.compile or
    attn.Library) as the custom op torch.ops.<namespace>.<kernel>, which
    takes the input operands positionally in spec order (q, k, v, then
    block_table and kv_lens where the spec has them) and returns the
    outputs: O, or (O, LSE) when the spec has an LSE. The namespace
    defaults to attn_<library name>. Returns a namespace of the ops."""
    namespace = namespace or "attn_" + re.sub(r"\W", "_", library.name)
    ops = {}
    for kernel in library.kernels.values():
        qualname = f"{namespace}::{kernel.name}"
        with _lock:
            op = _registered.get(qualname)
            if op is None:
                op = _registered[qualname] = _register_kernel(kernel,
                                                              qualname)
            elif _registered[qualname]._attn_kernel_path != \
                    kernel.library.path:
                raise ValueError(f"attn.torch.register: {qualname} is "
                                 f"already registered for another library; "
                                 f"pass another namespace")
        ops[kernel.name] = op
    return types.SimpleNamespace(**ops)


def _register_kernel(kernel, qualname):
    inputs = [o["name"] for o in kernel.inputs]
    outputs = [o["name"] for o in kernel.outputs]
    if not outputs:
        raise ValueError(f"{kernel.name}: no output operand")
    returns = ("Tensor" if len(outputs) == 1 else
               "(" + ", ".join("Tensor" for _ in outputs) + ")")
    schema = "(" + ", ".join(f"Tensor {n}" for n in inputs) + ") -> " + returns

    def make(tensors):
        sizes = kernel.size_values(tensors)
        shapes = kernel.output_shapes(sizes)
        first = tensors[inputs[0]]
        return {n: first.new_empty(shapes[n][0],
                                   dtype=_TORCH_DTYPES[shapes[n][1]])
                for n in outputs}

    def real(*args):
        tensors = dict(zip(inputs, args))
        out = make(tensors)
        if POISON_OUTPUTS:
            for t in out.values():
                t.fill_(math.nan)
        if all(t.numel() for t in out.values()):
            kernel(**tensors, **out)
        result = tuple(out[n] for n in outputs)
        return result[0] if len(result) == 1 else result

    def fake(*args):
        out = make(dict(zip(inputs, args)))
        result = tuple(out[n] for n in outputs)
        return result[0] if len(result) == 1 else result

    # Functions with the operands' names as parameters (custom_op binds
    # arguments by the schema's names).
    params = ", ".join(inputs)
    scope = {"_real": real, "_fake": fake}
    exec(f"def real_fn({params}):\n    return _real({params})\n"
         f"def fake_fn({params}):\n    return _fake({params})\n", scope)
    op = torch.library.custom_op(qualname, scope["real_fn"], mutates_args=(),
                                 device_types="cuda", schema=schema)
    op.register_fake(scope["fake_fn"])
    op._attn_kernel_path = kernel.library.path
    return op
