"""attn.flash_attn without a GPU: every argument of FlashAttention's three
functions reaches attn.torch as it should (layouts as views of the
caller's memory, masks, scale, soft-cap, splits, LSE layout, the cache
append before the attention), and every refusal raises its error. attn.torch
is replaced by a recorder, so only PyTorch (any version, CPU) is needed;
test_gpu.py runs the same functions on a GPU against float64 and SDPA."""
import math
import types

import pytest

torch = pytest.importorskip("torch")

from attn import flash_attn  # noqa: E402

F16 = torch.float16
BIG = 2**31 - 1


class Recorder:
    """attn.torch's attention, attention_varlen and cache_append: records
    each call and returns outputs of the shapes attn.torch returns."""

    def __init__(self):
        self.calls = []

    def attention(self, q, k, v, **kw):
        self.calls.append(("attention", (q, k, v), kw))
        b, hq, sq = q.shape[:3]
        o = (torch.zeros(b, sq, hq, v.shape[3], dtype=q.dtype).transpose(1, 2)
             if kw.get("out_bshd") else
             torch.zeros(b, hq, sq, v.shape[3], dtype=q.dtype))
        lse = torch.arange(b * hq * sq, dtype=torch.float32).view(b, hq, sq)
        return (o, lse) if kw.get("return_lse") else o

    def attention_varlen(self, q, k, v, cu_seqlens_q, cu_seqlens_k=None,
                         max_seqlen_q=0, **kw):
        self.calls.append(("attention_varlen",
                           (q, k, v, cu_seqlens_q, cu_seqlens_k,
                            max_seqlen_q), kw))
        o = torch.zeros(q.shape[0], q.shape[1], v.shape[-1], dtype=q.dtype)
        lse = torch.arange(q.shape[0] * q.shape[1],
                           dtype=torch.float32).view(q.shape[0], q.shape[1])
        return (o, lse) if kw.get("return_lse") else o

    def cache_append(self, k_new, v_new, k_cache, v_cache, kv_lens,
                     block_table=None):
        self.calls.append(("cache_append",
                           (k_new, v_new, k_cache, v_cache, kv_lens,
                            block_table), {}))


@pytest.fixture
def rec(monkeypatch):
    recorder = Recorder()
    monkeypatch.setattr(flash_attn, "_ops", lambda: recorder)
    # CPU tensors stand in for CUDA ones; test_refusals keeps the check.
    monkeypatch.setattr(flash_attn, "_require_cuda", lambda **t: None)
    return recorder


def rand(*shape, dtype=F16):
    return torch.randn(*shape).to(dtype)


def same_view(view, base, shape):
    """`view` is `base`'s memory seen as `shape` (no copy)."""
    return (view.data_ptr() == base.data_ptr() and
            tuple(view.shape) == tuple(shape))


# -- flash_attn_func ------------------------------------------------------------
def test_func_layouts_and_defaults(rec):
    q, k, v = rand(2, 5, 8, 64), rand(2, 7, 2, 64), rand(2, 7, 2, 32)
    out = flash_attn.flash_attn_func(q, k, v)
    (name, (aq, ak, av), kw), = rec.calls
    assert name == "attention"
    assert same_view(aq, q, (2, 8, 5, 64))
    assert same_view(ak, k, (2, 2, 7, 64))
    assert same_view(av, v, (2, 2, 7, 32))
    assert kw == dict(return_lse=False, out_bshd=True, num_splits=0,
                      causal=False, window=None, scale=None, softcap=None)
    assert tuple(out.shape) == (2, 5, 8, 32) and out.is_contiguous()


@pytest.mark.parametrize("causal, window_size, expect", [
    (False, (-1, -1), dict(causal=False, window=None)),
    (True, (-1, -1), dict(causal=True, window=None)),
    (False, (-1, 0), dict(causal=True, window=None)),
    (False, (128, 0), dict(causal=False, window=(128, 0))),
    (True, (128, -1), dict(causal=False, window=(128, 0))),
    (True, (128, 5), dict(causal=False, window=(128, 0))),
    (False, (128, -1), dict(causal=False, window=(128, BIG))),
    (False, (-1, 4), dict(causal=False, window=(BIG, 4))),
    (False, (3, 4), dict(causal=False, window=(3, 4))),
    (False, (-5, -2), dict(causal=False, window=None)),
])
def test_func_masks(rec, causal, window_size, expect):
    q, k = rand(1, 4, 2, 64), rand(1, 9, 2, 64)
    flash_attn.flash_attn_func(q, k, k, causal=causal,
                               window_size=window_size)
    kw = rec.calls[0][2]
    assert {n: kw[n] for n in expect} == expect


def test_func_scale_softcap_splits_lse(rec):
    q, k = rand(3, 1, 4, 128), rand(3, 10, 1, 128)
    out, lse, probs = flash_attn.flash_attn_func(
        q, k, k, softmax_scale=0.25, softcap=30.0, deterministic=True,
        return_attn_probs=True)
    kw = rec.calls[0][2]
    assert kw["scale"] == 0.25 and kw["softcap"] == 30.0
    assert kw["num_splits"] == flash_attn.DETERMINISTIC_SPLITS
    assert kw["return_lse"] is True
    assert tuple(out.shape) == (3, 1, 4, 128)
    assert tuple(lse.shape) == (3, 4, 1) and probs is None
    flash_attn.flash_attn_func(q, k, k, num_splits=3, deterministic=True)
    assert rec.calls[1][2]["num_splits"] == 3
    flash_attn.flash_attn_func(q, k, k, softcap=0.0)
    assert rec.calls[2][2]["softcap"] is None


# -- flash_attn_varlen_func ---------------------------------------------------
def offsets(*lens):
    return torch.tensor([0] + list(torch.tensor(lens).cumsum(0)),
                        dtype=torch.int32)


def test_varlen_packed(rec):
    cq, ck = offsets(3, 0, 5), offsets(4, 2, 9)
    q, k, v = rand(8, 8, 64), rand(15, 2, 64), rand(15, 2, 64)
    out = flash_attn.flash_attn_varlen_func(q, k, v, cq, ck, 5, 9,
                                            causal=True, softcap=50.0)
    (name, args, kw), = rec.calls
    assert name == "attention_varlen"
    assert args[0] is q and args[1] is k and args[2] is v
    assert args[3] is cq and args[4] is ck and args[5] == 5
    assert kw == dict(return_lse=False, num_splits=0, causal=True,
                      window=None, scale=None, softcap=50.0)
    assert tuple(out.shape) == (8, 8, 64)


def test_varlen_lse_layouts_and_determinism(rec):
    cq, ck = offsets(2, 3), offsets(5, 5)
    q, k = rand(5, 4, 64), rand(10, 4, 64)
    out, lse = flash_attn.flash_attn_varlen_func(
        q, k, k, cq, ck, 3, 5, return_softmax_lse=True, deterministic=True,
        window_size=(16, 16))
    name, args, kw = rec.calls[0]
    # deterministic: no max_q_len hint (one kernel for every batch).
    assert args[5] == 0
    assert kw["num_splits"] == flash_attn.DETERMINISTIC_SPLITS
    assert kw["window"] == (16, 16) and kw["causal"] is False
    # FlashAttention's LSE is [Hq, total_q]: attn's [total_q, Hq] turned.
    assert tuple(lse.shape) == (4, 5) and lse.is_contiguous()
    assert lse[1, 2].item() == 2 * 4 + 1
    out, lse, probs = flash_attn.flash_attn_varlen_func(
        q, k, k, cq, ck, 3, 5, return_attn_probs=True)
    assert tuple(lse.shape) == (4, 5) and probs is None


def test_varlen_paged(rec):
    cq, ck = offsets(1, 4), offsets(20, 35)
    q = rand(5, 8, 128)
    k_cache, v_cache = rand(6, 16, 2, 128), rand(6, 16, 2, 128)
    table = torch.tensor([[0, 1, 5], [2, 3, 4]], dtype=torch.int32)
    flash_attn.flash_attn_varlen_func(q, k_cache, v_cache, cq, ck, 4, 35,
                                      block_table=table, causal=True)
    (name, args, kw), = rec.calls
    assert same_view(args[1], k_cache, (6, 2, 16, 128))
    assert same_view(args[2], v_cache, (6, 2, 16, 128))
    assert args[4] is None  # lengths from cu_seqlens_k, as kv_lens
    assert kw["block_table"] is table
    assert kw["kv_lens"].tolist() == [20, 35]


# -- flash_attn_with_kvcache ----------------------------------------------------
def test_kvcache_append_then_attend(rec):
    q = rand(2, 1, 8, 64)
    k_cache, v_cache = rand(2, 50, 2, 64), rand(2, 50, 2, 64)
    k, v = rand(2, 1, 2, 64), rand(2, 1, 2, 64)
    lens = torch.tensor([7, 30], dtype=torch.int32)
    out, lse = flash_attn.flash_attn_with_kvcache(
        q, k_cache, v_cache, k, v, cache_seqlens=lens, causal=True,
        num_splits=4, return_softmax_lse=True, softmax_scale=0.1)
    (append, a_args, _), (attend, t_args, kw) = rec.calls
    assert append == "cache_append" and attend == "attention"
    assert same_view(a_args[0], k, (2, 2, 1, 64))
    assert same_view(a_args[1], v, (2, 2, 1, 64))
    assert same_view(a_args[2], k_cache, (2, 2, 50, 64))
    assert same_view(a_args[3], v_cache, (2, 2, 50, 64))
    assert a_args[4] is lens and a_args[5] is None
    # The attention reads the appended caches over the grown lengths.
    assert same_view(t_args[1], k_cache, (2, 2, 50, 64))
    assert kw["kv_lens"].tolist() == [8, 31] and lens.tolist() == [7, 30]
    assert kw["causal"] is True and kw["num_splits"] == 4
    assert kw["scale"] == 0.1 and kw["block_table"] is None
    assert tuple(out.shape) == (2, 1, 8, 64) and tuple(lse.shape) == (2, 8, 1)


def test_kvcache_paged_and_int_lengths(rec):
    q = rand(3, 2, 4, 64)
    k_cache = rand(10, 16, 4, 64)
    table = torch.zeros(3, 4, dtype=torch.int32)
    flash_attn.flash_attn_with_kvcache(q, k_cache, k_cache, cache_seqlens=9,
                                       block_table=table, window_size=(8, 0))
    (name, args, kw), = rec.calls  # no new tokens: no append
    assert name == "attention"
    assert same_view(args[1], k_cache, (10, 4, 16, 64))
    assert kw["block_table"] is table
    assert kw["kv_lens"].dtype == torch.int32
    assert kw["kv_lens"].tolist() == [9, 9, 9]
    assert kw["window"] == (8, 0)


def test_kvcache_whole_cache(rec):
    q, k_cache = rand(2, 3, 2, 64), rand(2, 40, 2, 64)
    flash_attn.flash_attn_with_kvcache(q, k_cache, k_cache)
    assert rec.calls[0][2]["kv_lens"] is None


def test_alibi_slopes(rec):
    q, k = rand(2, 4, 8, 64), rand(2, 6, 2, 64)
    slopes = torch.rand(8)
    flash_attn.flash_attn_func(q, k, k, causal=True, alibi_slopes=slopes)
    assert rec.calls[-1][2]["alibi_slopes"] is slopes
    cq = offsets(4, 4)
    flash_attn.flash_attn_varlen_func(q.flatten(0, 1), k.flatten(0, 1)[:8],
                                      k.flatten(0, 1)[:8], cq, cq, 4, 4,
                                      alibi_slopes=slopes.expand(2, 8))
    assert rec.calls[-1][2]["alibi_slopes"].shape == (2, 8)
    flash_attn.flash_attn_with_kvcache(q, k, k, cache_seqlens=3,
                                       alibi_slopes=slopes)
    assert rec.calls[-1][2]["alibi_slopes"] is slopes
    raises(RuntimeError, "ALiBi slopes must have dtype fp32",
           flash_attn.flash_attn_func, q, k, k, alibi_slopes=slopes.half())
    raises(RuntimeError, r"shape \(nheads\) or \(batch_size, nheads\)",
           flash_attn.flash_attn_func, q, k, k, alibi_slopes=torch.rand(4))


def test_sinks_reach_every_function(rec):
    # s_aux (Hq,) goes to attn.torch as `sinks`, the caller's tensor.
    q, k = rand(2, 4, 8, 64), rand(2, 4, 2, 64)
    sinks = torch.randn(8)
    flash_attn.flash_attn_func(q, k, k, causal=True, s_aux=sinks)
    assert rec.calls[-1][2]["sinks"] is sinks
    cq = offsets(4, 4)
    flash_attn.flash_attn_varlen_func(q.flatten(0, 1), k.flatten(0, 1),
                                      k.flatten(0, 1), cq, cq, 4, 4,
                                      s_aux=sinks.bfloat16())
    assert rec.calls[-1][2]["sinks"].dtype == torch.bfloat16
    flash_attn.flash_attn_with_kvcache(q, k, k, cache_seqlens=3,
                                       s_aux=sinks)
    assert rec.calls[-1][2]["sinks"] is sinks
    # Without s_aux no `sinks` keyword at all (the kernels without sinks).
    flash_attn.flash_attn_func(q, k, k)
    assert "sinks" not in rec.calls[-1][2]
    raises(RuntimeError, r"s_aux must be a tensor of shape \(8,\)",
           flash_attn.flash_attn_func, q, k, k, s_aux=torch.randn(4))
    raises(RuntimeError, r"s_aux must be a tensor of shape \(8,\)",
           flash_attn.flash_attn_with_kvcache, q, k, k, cache_seqlens=3,
           s_aux=torch.randn(1, 8))
    raises(RuntimeError, "s_aux must have dtype float32",
           flash_attn.flash_attn_varlen_func, q.flatten(0, 1),
           k.flatten(0, 1), k.flatten(0, 1), cq, cq, 4, 4,
           s_aux=torch.ones(8, dtype=torch.float64))


def test_descales_of_quantized_caches(rec):
    # FA3's (B, Hkv) descales over int8 caches (fp8 ones route the same;
    # torch.int8 is in every PyTorch): the same for every sequence (an
    # expand(), as vLLM passes them) they go per head or per tensor, the
    # caller's memory; varying by sequence they become per-token scales.
    q, k = rand(2, 3, 8, 64), torch.randint(-9, 9, (2, 5, 2, 64),
                                            dtype=torch.int8)
    per_head = torch.tensor([0.5, 0.25]).expand(2, 2)
    per_tensor = torch.tensor(0.125).expand(2, 2)
    flash_attn.flash_attn_func(q, k, k, k_descale=per_head,
                               v_descale=per_tensor)
    _, (_, ak, av), kw = rec.calls[-1]
    assert ak.dtype == torch.int8 and same_view(ak, k, (2, 2, 5, 64))
    assert kw["k_scale"].tolist() == [0.5, 0.25]
    assert kw["v_scale"].dim() == 0 and kw["v_scale"].item() == 0.125
    varying = torch.tensor([[1.0, 2.0], [3.0, 4.0]])
    flash_attn.flash_attn_func(q, k, k, k_descale=varying)
    kw = rec.calls[-1][2]
    assert "v_scale" not in kw
    assert tuple(kw["k_scale"].shape) == (2, 2, 5)  # [B, Hkv, Sk]
    assert kw["k_scale"].is_contiguous()
    assert kw["k_scale"][1, 0].tolist() == [3.0] * 5
    # The cache, contiguous: per token over its S_cache.
    flash_attn.flash_attn_with_kvcache(q, k, k, cache_seqlens=4,
                                       v_descale=varying)
    assert tuple(rec.calls[-1][2]["v_scale"].shape) == (2, 2, 5)
    # Packed: each token gets its own sequence's descale.
    cq, ck = offsets(3, 3), torch.tensor([0, 2, 5], dtype=torch.int32)
    kp = k[0]  # [total_k 5, Hkv 2, 64]
    flash_attn.flash_attn_varlen_func(q.flatten(0, 1), kp, kp, cq, ck, 3, 3,
                                      k_descale=varying)
    scale = rec.calls[-1][2]["k_scale"]
    assert scale.tolist() == [[1.0, 2.0]] * 2 + [[3.0, 4.0]] * 3
    # Paged: per head for every sequence, or refused.
    pages = torch.randint(-9, 9, (4, 16, 2, 64), dtype=torch.int8)
    table = torch.tensor([[0, 1], [2, 3]], dtype=torch.int32)
    flash_attn.flash_attn_with_kvcache(q[:, :1], pages, pages,
                                       cache_seqlens=20, block_table=table,
                                       k_descale=per_head)
    assert rec.calls[-1][2]["k_scale"].tolist() == [0.5, 0.25]
    raises(RuntimeError, "varies by sequence, which a paged cache",
           flash_attn.flash_attn_with_kvcache, q[:, :1], pages, pages,
           cache_seqlens=20, block_table=table, k_descale=varying)
    # Refusals: q_descale, descales of a float cache, bad shape or dtype,
    # mixed K/V types, new tokens into a quantized cache.
    raises(NotImplementedError, "q_descale", flash_attn.flash_attn_func,
           q, k, k, q_descale=per_head)
    raises(RuntimeError, "k_descale is for a quantized",
           flash_attn.flash_attn_func, q, rand(2, 5, 2, 64),
           rand(2, 5, 2, 64), k_descale=per_head)
    raises(RuntimeError, r"v_descale must have shape \(2, 2\)",
           flash_attn.flash_attn_func, q, k, k, v_descale=torch.ones(2))
    raises(RuntimeError, "k_descale must be a float32 tensor",
           flash_attn.flash_attn_func, q, k, k,
           k_descale=torch.ones(2, 2, dtype=torch.float16))
    raises(RuntimeError, "key and value must have the same dtype",
           flash_attn.flash_attn_func, q, k, rand(2, 5, 2, 64))
    raises(NotImplementedError, "does not quantize yet",
           flash_attn.flash_attn_with_kvcache, q, k, k, k=rand(2, 1, 2, 64),
           v=rand(2, 1, 2, 64), cache_seqlens=3)


def test_quantized_facts():
    # attn.torch's facts for a quantized cache: the cache's element type and
    # each scale's granularity, told by its shape; refusals by name.
    from attn import _torch_facts as tf
    q = rand(2, 8, 1, 64)
    k = torch.randint(-9, 9, (2, 2, 5, 64), dtype=torch.int8)
    one = torch.tensor(0.5)
    facts = tf.facts_for(q, k, k, k_scale=one, v_scale=torch.ones(2))
    assert (facts.kv_dtype, facts.k_scale, facts.v_scale) == ("i8", "tensor",
                                                              "head")
    assert "%k: memref<?x2x?x64xi8>" in facts.spec_text()
    facts = tf.facts_for(q, k, k, k_scale=torch.ones(2, 2, 5))
    assert (facts.k_scale, facts.v_scale) == ("token", None)
    # Packed K/V [total_k, Hkv, D]: per token is [total_k, Hkv].
    kp, cq = k.transpose(1, 2).flatten(0, 1)[:5], offsets(1, 1)
    facts = tf.varlen_facts_for(q[:, :, 0], kp, kp, cq, offsets(2, 3),
                                v_scale=torch.ones(5, 2))
    assert facts.v_scale == "token" and facts.packed_kv
    for kwargs, kind, match in (
            (dict(k_scale=torch.ones(3)), ValueError,
             r"k_scale must have shape \(\) \(per tensor\), \(2,\)"),
            (dict(k_scale=torch.ones(2, dtype=torch.float16)), TypeError,
             "k_scale must be torch.float32"),
            (dict(v_scale=torch.ones(2, 5, 2).transpose(1, 2)), ValueError,
             "v_scale must be contiguous")):
        with pytest.raises(kind, match=match):
            tf.facts_for(q, k, k, **kwargs)
    with pytest.raises(TypeError, match="k_scale dequantizes a quantized"):
        tf.facts_for(q, rand(2, 2, 5, 64), rand(2, 2, 5, 64), k_scale=one)
    with pytest.raises(TypeError, match="v is torch.float16 but k is "
                       "torch.int8"):
        tf.facts_for(q, k, rand(2, 2, 5, 64))


# -- refusals -------------------------------------------------------------------
def raises(kind, match, fn, *args, **kw):
    with pytest.raises(kind, match=match):
        fn(*args, **kw)


def test_refusals_of_what_is_not_built():
    q, k = rand(1, 4, 2, 64), rand(1, 4, 2, 64)
    f = flash_attn.flash_attn_func
    raises(ValueError, "dropout", f, q, k, k, dropout_p=0.1)
    kv = flash_attn.flash_attn_with_kvcache
    for name in ("rotary_cos", "rotary_sin", "cache_batch_idx",
                 "cache_leftpad"):
        raises(NotImplementedError, name, kv, q, k, k,
               **{name: torch.ones(1)})
    cq = offsets(4)
    raises(ValueError, "dropout", flash_attn.flash_attn_varlen_func,
           q[0], k[0], k[0], cq, cq, 4, 4, dropout_p=0.5)


def test_refusals_as_flash_attention_raises():
    q, k = rand(1, 4, 2, 64), rand(1, 4, 2, 64)
    f = flash_attn.flash_attn_func
    # The device comes after the dtype, as in FlashAttention.
    raises(RuntimeError, "only support fp16 and bf16", f,
           q.float(), k.float(), k.float())
    raises(RuntimeError, "query and key must have the same dtype", f,
           q, k.to(torch.bfloat16), k)
    raises(RuntimeError, "query and value must have the same dtype", f,
           q, k, k.to(torch.bfloat16))
    raises(RuntimeError, "q must be on CUDA", f, q, k, k)
    raises(RuntimeError, "must be 4-D", f, q[0], k, k)


def test_shape_and_argument_refusals(rec):
    q, k = rand(1, 4, 2, 64), rand(1, 4, 2, 64)
    f = flash_attn.flash_attn_func
    raises(RuntimeError, "contiguous last dimension", f,
           rand(1, 4, 2, 64, 2)[..., 0], k, k)
    raises(RuntimeError, "at most 256", f, rand(1, 4, 2, 512),
           rand(1, 4, 2, 512), rand(1, 4, 2, 512))
    raises(RuntimeError, "must divide number of heads", f, rand(1, 4, 3, 64),
           k, k)
    raises(RuntimeError, "head dimension 64", f, q, rand(1, 4, 2, 32), k)
    raises(RuntimeError, "batch_size", f, q, rand(2, 4, 2, 64),
           rand(2, 4, 2, 64))
    raises(ValueError, "window_size", f, q, k, k, window_size=3)
    raises(ValueError, "softcap", f, q, k, k, softcap=-1.0)
    raises(ValueError, "softmax_scale", f, q, k, k, softmax_scale=math.inf)
    raises(ValueError, "num_splits", f, q, k, k, num_splits=-1)

    vf = flash_attn.flash_attn_varlen_func
    cq = offsets(4)
    raises(RuntimeError, "cu_seqlens_q must have dtype int32", vf, q[0],
           k[0], k[0], cq.long(), cq, 4, 4)
    raises(RuntimeError, r"cu_seqlens_k must have shape \(2,\)", vf, q[0],
           k[0], k[0], cq, offsets(1, 3), 4, 4)
    raises(RuntimeError, "block_table must have dtype torch.int32", vf, q[0],
           rand(3, 16, 2, 64), rand(3, 16, 2, 64), cq, cq, 4, 4,
           block_table=torch.zeros(1, 2, dtype=torch.int64))
    raises(RuntimeError, r"block_table must have shape \(1, ", vf, q[0],
           rand(3, 16, 2, 64), rand(3, 16, 2, 64), cq, cq, 4, 4,
           block_table=torch.zeros(2, 2, dtype=torch.int32))
    raises(RuntimeError, "must be 4-D", vf, q[0], k[0], k[0], cq, cq, 4, 4,
           block_table=torch.zeros(1, 2, dtype=torch.int32))

    kv = flash_attn.flash_attn_with_kvcache
    raises(RuntimeError, "k and v must be given together", kv, q, k, k,
           k=k, cache_seqlens=1)
    raises(RuntimeError, "cache_seqlens is needed", kv, q, k, k, k=k, v=k)
    raises(RuntimeError, "cache_seqlens is needed", kv, q, rand(3, 16, 2, 64),
           rand(3, 16, 2, 64), block_table=torch.zeros(1, 1,
                                                       dtype=torch.int32))
    raises(RuntimeError, "cache_seqlens must have dtype int32", kv, q, k, k,
           cache_seqlens=torch.ones(1))
    raises(RuntimeError, r"cache_seqlens must have shape \(1,\)", kv, q, k, k,
           cache_seqlens=torch.ones(2, dtype=torch.int32))
    raises(RuntimeError, "cache_seqlens must be >= 0", kv, q, k, k,
           cache_seqlens=-1)
    raises(RuntimeError, "k_cache must have batch 1", kv, q,
           rand(2, 4, 2, 64), rand(2, 4, 2, 64))
    raises(RuntimeError, r"k must have shape \(1, seqlen_new, 2", kv, q, k, k,
           k=rand(1, 1, 4, 64), v=rand(1, 1, 4, 64), cache_seqlens=1)
    raises(RuntimeError, "k must have the dtype of q", kv, q, k, k,
           k=rand(1, 1, 2, 64, dtype=torch.bfloat16), v=rand(1, 1, 2, 64),
           cache_seqlens=1)
    assert rec.calls == []  # nothing reached a kernel


def test_mask_arguments_are_attn_torch_masks():
    # Each routed (causal, window) is one attn.spec.mask_options accepts.
    from attn.spec import mask_options
    for causal in (False, True):
        for window in ((-1, -1), (-1, 0), (0, 0), (7, -1), (-1, 7), (7, 7)):
            routed = flash_attn.mask_arguments(causal, window)
            mask, _, _ = mask_options(routed["causal"], routed["window"])
            assert mask == ("none" if window == (-1, -1) and not causal else
                            "causal" if window[0] == -1 and
                            (causal or window[1] == 0) else "window")


# -- attn.hf (transformers' attention interface), without transformers ---------
def test_hf_forward_routes_and_packs_padding(rec):
    from attn import hf
    module = types.SimpleNamespace(is_causal=True, sliding_window=None)
    q, k = rand(2, 4, 3, 8), rand(2, 2, 3, 8)
    out, _ = hf.attention_forward(module, q, k, k, None, scaling=0.5)
    (name, args, kw), = rec.calls
    assert name == "attention" and args[0] is q
    assert kw == dict(scale=0.5, softcap=None, out_bshd=True, causal=True,
                      window=None)
    assert tuple(out.shape) == (2, 3, 4, 8)

    # Left padding: each row's valid tokens packed back to back, the
    # kernel's rows scattered back, padded rows zero.
    rec.calls.clear()
    rec.attention_varlen = lambda q, k, v, cu_q, cu_k, max_q, **kw: (
        rec.calls.append(("attention_varlen", (q, k, v, cu_q, cu_k, max_q),
                          kw)) or q.clone())
    mask = torch.tensor([[0, 1, 1], [1, 1, 1]])
    module.sliding_window = 4
    out, _ = hf.attention_forward(module, q, k, k, mask, scaling=0.5)
    (name, args, kw), = rec.calls
    assert args[3].tolist() == [0, 2, 5] and args[4].tolist() == [0, 2, 5]
    assert args[5] == 3
    assert kw["window"] == (3, 0) and kw["causal"] is False
    assert torch.equal(args[1][0], k[0, :, 1])  # row 0's first valid key
    assert torch.equal(out[0, 0], torch.zeros(4, 8, dtype=F16))
    assert torch.equal(out[0, 1], q[0, :, 1])
    assert torch.equal(out[1, 2], q[1, :, 2])
    # GPT-OSS's s_aux reaches the kernels as `sinks`; dropout is refused.
    rec.calls.clear()
    sinks = torch.randn(4)
    hf.attention_forward(module, q, k, k, None, s_aux=sinks)
    assert torch.equal(rec.calls[-1][2]["sinks"], sinks)
    hf.attention_forward(module, q, k, k, mask, s_aux=sinks)
    assert torch.equal(rec.calls[-1][2]["sinks"], sinks)
    raises(NotImplementedError, "dropout", hf.attention_forward, module, q,
           k, k, None, dropout=0.1)
