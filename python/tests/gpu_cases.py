"""What the GPU tests run, in one place: test_gpu.py runs these cases and
tools/prefill_cache.py compiles their specs, so a cache filled where
attn-compile runs has every kernel the GPU tests ask for."""
import os

from attn.spec import facts_from_shapes, mask_options, varlen_facts_from_shapes

REPO = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
# Spec files the GPU tests compile with attn.compile.
SPEC_FILES = [os.path.join(REPO, "examples", name) for name in (
    "llama3_8b_prefill.mlir", "paged_decode.mlir", "gemma2_softcap.mlir")]


def case(name, dtype="f16", B=1, Hq=8, Hkv=8, Sq=128, Sk=128, D=64, Dv=None,
         layout="bhsd", causal=False, window=None, align="bottom_right",
         softcap=None, scale=None, lse=False, kv_lens=False, block=None):
    return dict(name=name, dtype=dtype, B=B, Hq=Hq, Hkv=Hkv, Sq=Sq, Sk=Sk,
                D=D, Dv=Dv or D, layout=layout, causal=causal, window=window,
                align=align, softcap=softcap, scale=scale, lse=lse,
                kv_lens=kv_lens or block is not None, block=block)


# attn.torch.attention calls, checked against a float64 reference.
CASES = [
    case("mha causal", B=2, Sq=300, Sk=300, causal=True),
    case("gqa causal top-left bf16 lse", dtype="bf16", Hkv=2, Sq=200,
         Sk=333, D=128, causal=True, align="top_left", lse=True),
    case("mqa window", B=2, Hkv=1, Sq=512, Sk=512, window=(128, 0)),
    case("window both sides", Hq=4, Hkv=4, Sq=257, Sk=257, window=(32, 16),
         align="top_left"),
    case("softcap scale [B,S,H,D] views", B=2, Hkv=4, Sq=300, Sk=300, D=128,
         layout="bshd", causal=True, softcap=30.0, scale=0.1),
    case("variable kv_lens", B=3, Hkv=2, Sq=64, Sk=400, causal=True,
         kv_lens=True, lse=True),
    case("decode contiguous", B=4, Hq=32, Hkv=8, Sq=1, Sk=1000, D=128,
         causal=True, kv_lens=True),
    case("paged decode", B=4, Hq=32, Hkv=8, Sq=1, Sk=700, D=128, causal=True,
         block=16),
    case("paged decode bf16 softcap lse", dtype="bf16", B=3, Hkv=1, Sq=1,
         Sk=500, block=32, softcap=20.0, lse=True),
    case("paged prefill", B=2, Hkv=2, Sq=40, Sk=300, D=128, causal=True,
         block=16),
    case("Dv < D", Hq=4, Hkv=4, Sq=128, Sk=128, D=128, Dv=64),
]

# attn.torch.attention_varlen calls: each sequence's query and key counts
# (packed K/V unless `block` makes a paged cache, which reads kv_lens),
# max_seqlen_q as the caller's hint (0: not known; 1..16 runs the decode
# code); checked per sequence against the float64 reference.
VARLEN_CASES = [
    dict(name="varlen gqa causal lse", dtype="f16", Hq=8, Hkv=2, D=128,
         lens_q=[300, 1, 0, 77], lens_k=[300, 1, 5, 200], causal=True,
         window=None, lse=True, block=None, hint=0),
    dict(name="varlen bf16 window", dtype="bf16", Hq=4, Hkv=4, D=64,
         lens_q=[200, 50], lens_k=[200, 50], causal=False, window=(64, 0),
         lse=False, block=None, hint=0),
    dict(name="varlen chunked prefill over paged cache", dtype="f16", Hq=8,
         Hkv=2, D=64, lens_q=[64, 1, 17], lens_k=[300, 33, 17], causal=True,
         window=None, lse=True, block=16, hint=64),
    dict(name="varlen decode (hint 1)", dtype="f16", Hq=32, Hkv=8, D=128,
         lens_q=[1, 1, 1, 1], lens_k=[500, 1, 77, 1000], causal=True,
         window=None, lse=True, block=None, hint=1),
]


def varlen_case_facts(c):
    mask, left, right = mask_options(c["causal"], c["window"], "bottom_right")
    q_shape = (sum(c["lens_q"]), c["Hq"], c["D"])
    if c["block"]:
        k_shape = (1, c["Hkv"], c["block"], c["D"])
    else:
        k_shape = (sum(c["lens_k"]), c["Hkv"], c["D"])
    return varlen_facts_from_shapes(
        c["dtype"], q_shape, k_shape, k_shape, packed_kv=not c["block"],
        paged=bool(c["block"]), kv_lens=bool(c["block"]), mask=mask,
        align="bottom_right", window_left=left, window_right=right,
        lse=c["lse"])


# attn.flash_attn calls in FlashAttention's layouts ([B, S, H, D], packed
# [total, H, D], paged [num_blocks, page_size, Hkv, D]), checked against
# the float64 reference (and SDPA where it computes the same thing).
# `window` is FlashAttention's window_size; `ref_window` the reference's
# (left, right), -1 unbounded.
FLASH_CASES = [
    dict(name="func gqa causal lse", fn="func", dtype="f16", B=2, Sq=300,
         Sk=300, Hq=8, Hkv=2, D=128, causal=True, window=(-1, -1),
         softcap=0.0, scale=None, lse=True),
    dict(name="func bf16 window softcap scale", fn="func", dtype="bf16", B=2,
         Sq=100, Sk=333, Hq=4, Hkv=4, D=64, causal=False, window=(64, 8),
         softcap=30.0, scale=0.1, lse=False),
    dict(name="func window left only", fn="func", dtype="f16", B=1, Sq=200,
         Sk=200, Hq=4, Hkv=2, D=64, causal=False, window=(50, -1),
         softcap=0.0, scale=None, lse=True),
    dict(name="func decode deterministic", fn="func", dtype="f16", B=4,
         Sq=1, Sk=1000, Hq=32, Hkv=8, D=128, causal=True, window=(-1, -1),
         softcap=0.0, scale=None, lse=True, deterministic=True),
    dict(name="varlen causal lse", fn="varlen", dtype="f16", Hq=8, Hkv=2,
         D=128, lens_q=[300, 1, 0, 77], lens_k=[300, 1, 5, 200], causal=True,
         window=(-1, -1), softcap=0.0, lse=True, block=None),
    dict(name="varlen paged chunked bf16", fn="varlen", dtype="bf16", Hq=8,
         Hkv=2, D=64, lens_q=[64, 1, 17], lens_k=[300, 33, 17], causal=True,
         window=(-1, -1), softcap=0.0, lse=False, block=16),
    dict(name="varlen deterministic softcap", fn="varlen", dtype="f16", Hq=8,
         Hkv=8, D=64, lens_q=[1, 1, 40], lens_k=[500, 77, 40], causal=True,
         window=(-1, -1), softcap=20.0, lse=True, block=None,
         deterministic=True),
    dict(name="kvcache decode append lse", fn="kvcache", dtype="f16", B=3,
         Sq=1, new=1, cap=512, Hq=32, Hkv=8, D=128, lens=[100, 0, 300],
         causal=True, window=(-1, -1), softcap=0.0, lse=True, block=None,
         num_splits=0),
    dict(name="kvcache paged chunk append bf16", fn="kvcache", dtype="bf16",
         B=2, Sq=5, new=5, cap=128, Hq=8, Hkv=2, D=64, lens=[20, 47],
         causal=True, window=(-1, -1), softcap=0.0, lse=False, block=16,
         num_splits=3),
    dict(name="func alibi causal gqa", fn="func", dtype="f16", B=2, Sq=200,
         Sk=260, Hq=8, Hkv=2, D=64, causal=True, window=(-1, -1),
         softcap=0.0, scale=None, lse=True, alibi="heads"),
    dict(name="varlen alibi per sequence, not causal", fn="varlen",
         dtype="bf16", Hq=4, Hkv=4, D=128, lens_q=[100, 1, 50],
         lens_k=[120, 30, 50], causal=False, window=(-1, -1), softcap=0.0,
         lse=True, block=None, alibi="batch"),
    dict(name="kvcache paged decode alibi", fn="kvcache", dtype="f16", B=3,
         Sq=1, new=1, cap=256, Hq=16, Hkv=4, D=128, lens=[50, 0, 200],
         causal=True, window=(-1, -1), softcap=0.0, lse=True, block=16,
         num_splits=0, alibi="heads"),
    dict(name="kvcache window, no new tokens", fn="kvcache", dtype="f16",
         B=2, Sq=1, new=0, cap=256, Hq=8, Hkv=8, D=64, lens=[200, 9],
         causal=False, window=(32, 0), softcap=0.0, lse=False, block=None,
         num_splits=0),
    # Attention sinks (s_aux, GPT-OSS): one logit per query head drawn from
    # [-2, 4), so that a sink sometimes dominates its row; rows with no
    # key get O 0 and the sink's LSE.
    dict(name="func sinks gqa causal lse", fn="func", dtype="f16", B=2,
         Sq=200, Sk=260, Hq=8, Hkv=2, D=64, causal=True, window=(-1, -1),
         softcap=0.0, scale=None, lse=True, sinks="f32"),
    dict(name="varlen sinks window bf16", fn="varlen", dtype="bf16", Hq=8,
         Hkv=2, D=64, lens_q=[300, 1, 7, 40], lens_k=[300, 1, 0, 200],
         causal=True, window=(127, 0), softcap=0.0, lse=True, block=None,
         sinks="bf16"),
    dict(name="kvcache paged decode sinks", fn="kvcache", dtype="bf16", B=3,
         Sq=1, new=1, cap=256, Hq=16, Hkv=4, D=64, lens=[50, 0, 200],
         causal=True, window=(127, 0), softcap=0.0, lse=True, block=16,
         num_splits=0, sinks="f32"),
]


def flash_call(c, device, gen=None):
    """The arguments of case c's attn.flash_attn call, random on `device`:
    (function name, args, kwargs, extra), extra holding what the reference
    needs (the caches before the append, per-sequence K/V)."""
    import torch
    dtype = {"f16": torch.float16, "bf16": torch.bfloat16}[c["dtype"]]

    def rand(*shape):
        return (torch.rand(*shape, generator=gen, device=device) * 2 - 1).to(
            dtype)

    def int32(values):
        return torch.tensor(values, dtype=torch.int32, device=device)

    Hq, Hkv, D = c["Hq"], c["Hkv"], c["D"]
    kw = dict(softmax_scale=c.get("scale"), causal=c["causal"],
              window_size=c["window"], softcap=c["softcap"])
    if c.get("alibi"):  # FlashAttention's (Hq,) or (B, Hq) float32 slopes
        batch = c.get("B") or len(c["lens_q"])
        shape = (Hq,) if c["alibi"] == "heads" else (batch, Hq)
        kw["alibi_slopes"] = torch.rand(*shape, generator=gen,
                                        device=device) * 0.5
    if c.get("sinks"):
        kw["s_aux"] = (torch.rand(Hq, generator=gen, device=device) * 6 -
                       2).to({"f32": torch.float32, "bf16": torch.bfloat16,
                              "f16": torch.float16}[c["sinks"]])
    extra = {}
    if c["fn"] == "func":
        q, k, v = (rand(c["B"], c["Sq"], Hq, D), rand(c["B"], c["Sk"], Hkv, D),
                   rand(c["B"], c["Sk"], Hkv, D))
        kw.update(deterministic=c.get("deterministic", False),
                  return_attn_probs=c["lse"])
        return "flash_attn_func", (q, k, v), kw, extra
    if c["fn"] == "varlen":
        lens_q, lens_k = c["lens_q"], c["lens_k"]
        B = len(lens_q)
        cu_q = int32([sum(lens_q[:i]) for i in range(B + 1)])
        cu_k = int32([sum(lens_k[:i]) for i in range(B + 1)])
        q = rand(sum(lens_q), Hq, D)
        ks = [rand(n, Hkv, D) for n in lens_k]
        vs = [rand(n, Hkv, D) for n in lens_k]
        extra.update(ks=ks, vs=vs)
        if c["block"]:
            bs = c["block"]
            max_blocks = (max(lens_k) + bs - 1) // bs
            num_blocks = B * max_blocks + 3
            k, v = rand(num_blocks, bs, Hkv, D), rand(num_blocks, bs, Hkv, D)
            table = torch.randperm(num_blocks, generator=gen, device=device)[
                :B * max_blocks].view(B, max_blocks).to(torch.int32)
            for b in range(B):
                for j in range(lens_k[b]):
                    block = int(table[b, j // bs])
                    k[block, j % bs] = ks[b][j]
                    v[block, j % bs] = vs[b][j]
            kw.update(block_table=table)
        else:
            k, v = torch.cat(ks), torch.cat(vs)
        kw.update(deterministic=c.get("deterministic", False),
                  return_softmax_lse=c["lse"])
        return ("flash_attn_varlen_func",
                (q, k, v, cu_q, cu_k, max(lens_q), max(lens_k)), kw, extra)
    B, cap, new = c["B"], c["cap"], c["new"]
    q = rand(B, c["Sq"], Hq, D)
    if c["block"]:
        bs = c["block"]
        max_blocks = cap // bs
        num_blocks = B * max_blocks + 2
        k_cache = rand(num_blocks, bs, Hkv, D)
        v_cache = rand(num_blocks, bs, Hkv, D)
        table = torch.randperm(num_blocks, generator=gen, device=device)[
            :B * max_blocks].view(B, max_blocks).to(torch.int32)
        kw.update(block_table=table)
    else:
        k_cache, v_cache = rand(B, cap, Hkv, D), rand(B, cap, Hkv, D)
    extra.update(k_cache=k_cache.clone(), v_cache=v_cache.clone())
    if new:
        kw.update(k=rand(B, new, Hkv, D), v=rand(B, new, Hkv, D))
    kw.update(cache_seqlens=int32(c["lens"]), num_splits=c["num_splits"],
              return_softmax_lse=c["lse"])
    return "flash_attn_with_kvcache", (q, k_cache, v_cache), kw, extra


def flash_facts():
    """The AttentionFacts and AppendFacts FLASH_CASES compile."""
    import torch

    def calls():
        from attn import flash_attn
        for c in FLASH_CASES:
            fn, args, kw, _ = flash_call(c, "cpu",
                                         torch.Generator().manual_seed(0))
            getattr(flash_attn, fn)(*args, **kw)
    return recorded_facts(calls)


def recorded_facts(calls):
    """The AttentionFacts and AppendFacts that `calls()` asks for, found by
    running it (attn.flash_attn and attn.hf on CPU tensors) with
    attn.torch's kernels replaced by what attn.torch does to find their
    facts; it computes nothing."""
    import types
    from attn import _torch_facts as tf
    from attn import flash_attn
    found = []

    def attention(q, k, v, *, causal=False, window=None, softcap=None,
                  scale=None, block_table=None, kv_lens=None,
                  align="bottom_right", return_lse=False, num_splits=0,
                  out_bshd=False, alibi_slopes=None, sinks=None,
                  k_scale=None, v_scale=None):
        mask, left, right = mask_options(causal, window, align)
        o, lse = tf._outputs(q, v, return_lse, out_bshd)
        found.append(tf.facts_for(q, k, v, block_table, kv_lens, mask, align,
                                  left, right, float(scale or 0.0),
                                  float(softcap or 0.0), return_lse, o=o,
                                  alibi_slopes=alibi_slopes, sinks=sinks,
                                  k_scale=k_scale, v_scale=v_scale))
        return (o, lse) if return_lse else o

    def attention_varlen(q, k, v, cu_seqlens_q, cu_seqlens_k=None,
                         max_seqlen_q=0, *, causal=False, window=None,
                         softcap=None, scale=None, block_table=None,
                         kv_lens=None, align="bottom_right",
                         return_lse=False, num_splits=0, alibi_slopes=None,
                         sinks=None, k_scale=None, v_scale=None):
        mask, left, right = mask_options(causal, window, align)
        found.append(tf.varlen_facts_for(
            q, k, v, cu_seqlens_q, cu_seqlens_k, block_table, kv_lens, mask,
            align, left, right, float(scale or 0.0), float(softcap or 0.0),
            return_lse, alibi_slopes=alibi_slopes, sinks=sinks,
            k_scale=k_scale, v_scale=v_scale))
        o, lse = tf._varlen_outputs(q, v, return_lse)
        return (o, lse) if return_lse else o

    def cache_append(k_new, v_new, k_cache, v_cache, kv_lens,
                     block_table=None):
        found.append(tf.append_facts_for(k_new, v_new, k_cache, v_cache,
                                         block_table))

    def merge_states(o_parts, lse_parts, *, out_dtype=None, return_lse=True):
        import torch
        if isinstance(o_parts, (list, tuple)):
            o_parts = torch.stack(list(o_parts))
        if isinstance(lse_parts, (list, tuple)):
            lse_parts = torch.stack(list(lse_parts))
        facts, _, _, rows, out_dtype = tf.merge_views(
            o_parts, lse_parts, out_dtype, return_lse)
        found.append(facts)
        o = o_parts.new_empty(rows + [o_parts.shape[-1]], dtype=out_dtype)
        lse = lse_parts.new_empty(rows)
        return (o, lse) if return_lse else o

    ops = types.SimpleNamespace(attention=attention,
                                attention_varlen=attention_varlen,
                                cache_append=cache_append,
                                merge_states=merge_states)
    # attn.flash_attn, attn.cascade and attn.context_parallel reach
    # attn.torch through _ops().
    from attn import cascade
    saved = (flash_attn._ops, flash_attn._require_cuda, cascade._ops)
    flash_attn._ops, flash_attn._require_cuda = (lambda: ops), \
        (lambda **t: None)
    cascade._ops = lambda: ops
    try:
        calls()
    finally:
        flash_attn._ops, flash_attn._require_cuda, cascade._ops = saved
    return found


# bench/transformers_client.py's Llama (bf16, 16 query heads, 4 K/V
# heads of 64, scale 1/8) under attn.hf: the kernels its calls compile.
HF_LLAMA = dict(dtypes=("bf16", "f16"), Hq=16, Hkv=4, D=64, scale=0.125,
                block=256)
# ... and its GPT-OSS-style model: sinks (a bf16 parameter, s_aux), layers
# alternating a 128-token sliding window ((127, 0)) with full attention.
HF_GPT_OSS = dict(dtypes=("bf16", "f16"), Hq=16, Hkv=4, D=64, scale=0.125,
                  block=256, windows=((-1, -1), (127, 0)), sinks=True)


def hf_client_facts():
    """The AttentionFacts and AppendFacts attn.hf asks for when
    transformers runs HF_LLAMA and HF_GPT_OSS: continuous batching's packed prefill and
    its decode over the paged cache (append, then attention), and
    model.generate's prefill ([B, S, H, D] views), decode (one query) and
    padded batches (packed). Worked out from the layouts transformers
    passes, with attn.torch's own facts functions."""
    import torch
    from attn import _torch_facts as tf
    dtypes = {"f16": torch.float16, "bf16": torch.bfloat16}
    return [f for c in (HF_LLAMA, HF_GPT_OSS) for name in c["dtypes"]
            for window in c.get("windows", ((-1, -1),))
            for f in _hf_facts(tf, dtypes[name], c, window)]


def _hf_facts(tf, dtype, c, window):
    import torch
    Hq, Hkv, D, bs = c["Hq"], c["Hkv"], c["D"], c["block"]

    def empty(*shape):
        return torch.empty(*shape, dtype=dtype)
    mask, left, right = mask_options(window == (-1, -1),
                                     None if window == (-1, -1) else window)
    common = dict(mask=mask, window_left=left, window_right=right,
                  scale=c["scale"],
                  sinks=empty(Hq) if c.get("sinks") else None)
    packed = tf.varlen_facts_for(
        empty(9, Hq, D), empty(30, Hkv, D), empty(30, Hkv, D),
        torch.zeros(3, dtype=torch.int32), torch.zeros(3, dtype=torch.int32),
        **common)
    cache = empty(5, bs, Hkv, D).transpose(1, 2)  # FlashAttention's pages
    table, lens = (torch.zeros(2, 3, dtype=torch.int32),
                   torch.zeros(2, dtype=torch.int32))
    append = tf.append_facts_for(empty(2, 1, Hkv, D).transpose(1, 2),
                                 empty(2, 1, Hkv, D).transpose(1, 2), cache,
                                 cache, table)
    q1 = empty(2, 1, Hq, D).transpose(1, 2)
    decode_paged = tf.facts_for(q1, cache, cache, table, lens, o=q1,
                                **common)
    q = empty(1, 7, Hq, D).transpose(1, 2)
    prefill = tf.facts_for(q, empty(1, 7, Hkv, D).transpose(1, 2),
                           empty(1, 7, Hkv, D).transpose(1, 2), o=q, **common)
    kv = empty(1, Hkv, 8, D)
    decode = tf.facts_for(empty(1, 1, Hq, D).transpose(1, 2), kv, kv,
                          o=empty(1, 1, Hq, D).transpose(1, 2), **common)
    return [packed, append, decode_paged, prefill, decode]


# attn.merge_states, cascade and context parallelism (test_gpu.py's
# test_merge_states / test_cascade, test_context_parallel.py, the
# benchmarks in bench/compose.py): heads, dims, page size, dtypes.
COMPOSE = dict(dtypes=("f16", "bf16"), Hq=8, Hkv=2, D=128, block=16,
               chunk_tokens=64)
CASCADE_BENCH = dict(dtype="f16", Hq=32, Hkv=8, D=128, block=16,
                     prefix=32768, batches=(64, 128), max_suffix=256)
CP = dict(dtype="bf16", Hq=32, Hkv=8, D=128)


def cascade_calls(device, dtype, Hq, Hkv, D, block, B, prefix, suffixes,
                  q_per_request=1, causal=False, chunk_tokens=2048,
                  gen=None):
    """A two-level cascade over one paged cache: a shared prefix of
    `prefix` tokens, then request b's own suffixes[b] tokens; q has
    q_per_request queries a request. Returns (cascade, q, k_cache,
    v_cache, pages) where pages = (the prefix's pages, each request's
    suffix pages)."""
    import torch
    from attn.cascade import MultiLevelCascadeAttention
    torch_dtype = {"f16": torch.float16, "bf16": torch.bfloat16}[dtype]
    n_prefix = -(-prefix // block)
    own = [-(-s // block) for s in suffixes]
    num_pages = n_prefix + sum(own) + 2
    perm = torch.randperm(num_pages, generator=gen).tolist()
    prefix_pages = perm[:n_prefix]
    suffix_pages, at = [], n_prefix
    for n in own:
        suffix_pages.append(perm[at:at + n])
        at += n

    def rand(*shape):
        x = torch.rand(*shape, generator=gen) * 2 - 1
        return x.to(torch_dtype).to(device)
    k_cache = rand(num_pages, Hkv, block, D)
    v_cache = rand(num_pages, Hkv, block, D)
    total_q = B * q_per_request
    q = rand(total_q, Hq, D)
    last = lambda n: n - (-(-n // block) - 1) * block if n else 0  # noqa
    qo = [[0, total_q], [b * q_per_request for b in range(B + 1)]]
    kv_indptr = [[0, n_prefix], [0]]
    for n in own:
        kv_indptr[1].append(kv_indptr[1][-1] + n)
    indices = [prefix_pages, [p for ps in suffix_pages for p in ps]]
    last_len = [[last(prefix)], [last(s) for s in suffixes]]
    cascade = MultiLevelCascadeAttention(2, chunk_tokens=chunk_tokens,
                                         device=device)
    cascade.plan([torch.tensor(x, dtype=torch.int32) for x in qo],
                 [torch.tensor(x, dtype=torch.int32) for x in kv_indptr],
                 [torch.tensor(x, dtype=torch.int32) for x in indices],
                 [torch.tensor(x, dtype=torch.int32) for x in last_len],
                 Hq, Hkv, D, block, causal=causal)
    return cascade, q, k_cache, v_cache, (prefix_pages, suffix_pages)


def compose_facts():
    """The facts test_merge_states, test_cascade, test_context_parallel
    and bench/compose.py compile: cascades run on CPU tensors with
    attn.torch's calls recorded; the merge and context-parallel calls
    worked out from their tensors."""
    import torch
    from attn import _torch_facts as tf
    dtypes = {"f16": torch.float16, "bf16": torch.bfloat16}
    C = COMPOSE

    def calls():
        from attn import cascade
        attn_torch = cascade._ops()  # the recording ops, in calls()
        gen = torch.Generator().manual_seed(0)
        for name in C["dtypes"]:
            for causal, qpr in ((False, 1), (True, 3)):
                cascade, q, kc, vc, _ = cascade_calls(
                    "cpu", name, C["Hq"], C["Hkv"], C["D"], C["block"], 3,
                    100, [3 if causal else 0, 5, 40], qpr, causal,
                    C["chunk_tokens"], gen)
                cascade.run(q, (kc, vc))
            # The merge tests: parts [3, 2, Hq, 37, D] (contiguous: H = 1),
            # f32 parts into this dtype, vLLM's [T, H, D] with LSE [H, T].
            parts = torch.empty(3, 2, C["Hq"], 37, C["D"], dtype=dtypes[name])
            attn_torch.merge_states(parts, torch.empty(3, 2, C["Hq"], 37))
            attn_torch.merge_states(parts.float(),
                                    torch.empty(3, 2, C["Hq"], 37),
                                    out_dtype=dtypes[name], return_lse=False)
            # More parts than a kernel fixes: the loop over a dynamic N.
            attn_torch.merge_states(
                torch.empty(11, 2, C["Hq"], 37, C["D"], dtype=dtypes[name]),
                torch.empty(11, 2, C["Hq"], 37))
            t = torch.empty(2, 29, C["Hq"], C["D"], dtype=dtypes[name])
            attn_torch.merge_states(
                t, torch.empty(2, C["Hq"], 29).transpose(1, 2))
        B = CASCADE_BENCH
        for b in B["batches"]:
            cascade, q, kc, vc, _ = cascade_calls(
                "cpu", B["dtype"], B["Hq"], B["Hkv"], B["D"], B["block"], b,
                B["prefix"], [1] * b, gen=gen)
            cascade.run(q, (kc, vc))
        # bench/compose.py's merges: f16 and f32 parts [N, T, 32, 128].
        for dtype in (torch.float16, torch.float32):
            for n in (2, 4, 12):
                attn_torch.merge_states(
                    torch.empty(n, 4, 32, 128, dtype=dtype),
                    torch.empty(n, 4, 32))
    facts = recorded_facts(calls)
    # test_merge_states' attention over three key sets (kv_lens, LSE).
    for name in C["dtypes"]:
        q = torch.empty(2, C["Hq"], 64, C["D"], dtype=dtypes[name])
        kv = torch.empty(2, C["Hkv"], 100, C["D"], dtype=dtypes[name])
        facts.append(tf.facts_for(
            q, kv, kv, kv_lens=torch.zeros(2, dtype=torch.int32),
            return_lse=True, o=q))
    # Context parallelism: the ring's three attention calls a step (the
    # local causal block, a key half, a query half), and its merge; the
    # tests' small heads and the benchmark's (CP).
    for name, Hq, Hkv, D in ((C["dtypes"][1], C["Hq"], C["Hkv"], C["D"]),
                             (CP["dtype"], CP["Hq"], CP["Hkv"], CP["D"])):
        q = torch.empty(1, Hq, 64, D, dtype=dtypes[name])
        kv = torch.empty(1, Hkv, 64, D, dtype=dtypes[name])
        for qq, k, mask in ((q, kv, "causal"), (q, kv[:, :, :32], "none"),
                            (q[:, :, 32:], kv, "none"), (q, kv, "none")):
            facts.append(tf.facts_for(qq, k, k, mask=mask, return_lse=True,
                                      o=tf._outputs(qq, k, True)[0]))
        # The one-GPU attention the ring is checked and timed against.
        for mask in ("causal", "none"):
            facts.append(tf.facts_for(q, kv, kv, mask=mask, o=q))
        facts.append(tf.merge_views(torch.empty(2, 1, Hq, 64, D,
                                                dtype=dtypes[name]),
                                    torch.empty(2, 1, Hq, 64))[0])
    # The paged decode baseline of the cascade benchmark.
    B = CASCADE_BENCH
    q1 = torch.empty(2, B["Hq"], 1, B["D"], dtype=dtypes[B["dtype"]])
    cache = torch.empty(4, B["Hkv"], B["block"], B["D"],
                        dtype=dtypes[B["dtype"]])
    facts.append(tf.facts_for(q1, cache, cache,
                              torch.zeros(2, 3, dtype=torch.int32),
                              torch.zeros(2, dtype=torch.int32), o=q1))
    unique = []
    for f in facts:
        if f not in unique:
            unique.append(f)
    return unique


# The transformer layer under torch.compile: heads, dims.
LAYER = dict(B=2, S=256, dim=512, Hq=8, Hkv=2, D=64)


def case_facts(c):
    mask, left, right = mask_options(c["causal"], c["window"], c["align"])
    if c["block"]:
        k_shape = (1, c["Hkv"], c["block"], c["D"])
        v_shape = (1, c["Hkv"], c["block"], c["Dv"])
    else:
        k_shape = (c["B"], c["Hkv"], c["Sk"], c["D"])
        v_shape = (c["B"], c["Hkv"], c["Sk"], c["Dv"])
    return facts_from_shapes(
        c["dtype"], (c["B"], c["Hq"], c["Sq"], c["D"]), k_shape, v_shape,
        paged=bool(c["block"]), kv_lens=c["kv_lens"],
        strided=c["layout"] == "bshd", mask=mask, align=c["align"],
        window_left=left, window_right=right, scale=c["scale"],
        softcap=c["softcap"], lse=c["lse"])




def all_facts():
    """Every AttentionFacts the GPU tests compile."""
    facts = [case_facts(c) for c in CASES]
    L = LAYER
    for strided in (False, True):  # as eager or inductor lays out q, k, v
        facts.append(facts_from_shapes(
            "f16", (L["B"], L["Hq"], L["S"], L["D"]),
            (L["B"], L["Hkv"], L["S"], L["D"]),
            (L["B"], L["Hkv"], L["S"], L["D"]), strided=strided,
            mask="causal", align="top_left"))
    facts += [varlen_case_facts(c) for c in VARLEN_CASES]
    return facts


# Quantized K/V caches (fp8 e4m3fn/e5m2, int8) through attn.torch and
# attn.flash_attn, decode (one query a sequence): each case's cache, its
# scales' granularity and the call's form. `scales`: (k, v) granularity,
# "tensor", "head", "token", or for attn.flash_attn's FA3 descales
# "shared" (an expand() of one (Hkv,) tensor) and "varying" ((B, Hkv)).
QUANT_CASES = [
    dict(name="attention i8 contiguous", form="torch", kv="i8", dtype="f16",
         Hq=8, Hkv=2, D=64, lens=[300, 300, 300], scales=("tensor", "head"),
         lse=True),
    dict(name="attention e4m3 paged", form="torch_paged", kv="e4m3",
         dtype="bf16", Hq=16, Hkv=4, D=128, lens=[37, 1, 200], block=16,
         scales=("token", "token"), lse=True),
    dict(name="attention_varlen e5m2 packed", form="varlen", kv="e5m2",
         dtype="f16", Hq=8, Hkv=2, D=128, lens=[50, 3, 129],
         scales=("token", "head"), lse=False),
    dict(name="flash_attn_with_kvcache e4m3 paged", form="kvcache", kv="e4m3",
         dtype="bf16", Hq=32, Hkv=8, D=128, lens=[70, 16, 257], block=16,
         scales=("shared", "shared"), lse=True),
    dict(name="flash_attn_varlen_func e4m3 packed", form="flash_varlen",
         kv="e4m3", dtype="bf16", Hq=16, Hkv=4, D=64, lens=[9, 100, 33],
         scales=("varying", "varying"), lse=True),
    dict(name="flash_attn_func i8", form="func", kv="i8", dtype="f16", Hq=8,
         Hkv=8, D=64, lens=[65, 65], scales=("varying", None), lse=False),
]
_QUANT_TORCH = {"i8": "int8", "e4m3": "float8_e4m3fn",
                "e5m2": "float8_e5m2"}
QUANT_SPEC = {"i8": "i8", "e4m3": "f8E4M3FN", "e5m2": "f8E5M2"}


def quant_call(c, device, gen, stored_dtype=None):
    """Case c's call: (module, function, args, kwargs, ref), ref holding
    the float64 reference's inputs: q [B, Hq, 1, D], the dequantized K and
    V [B, Hkv, Sk, D] and the lengths, and how to read O back as
    [B, Hq, 1, Dv] (`o_view`) and the LSE as [B, Hq, 1] (`lse_view`).
    `stored_dtype` replaces the cache's dtype (a PyTorch without float8
    finding the facts)."""
    import torch
    dtype = {"f16": torch.float16, "bf16": torch.bfloat16}[c["dtype"]]
    stored = stored_dtype or getattr(torch, _QUANT_TORCH[c["kv"]])
    B, Hq, Hkv, D, lens = len(c["lens"]), c["Hq"], c["Hkv"], c["D"], c["lens"]
    Sk = max(lens)

    def uniform(*shape, lo=-1.0, hi=1.0):
        return (torch.rand(*shape, generator=gen, device=device) *
                (hi - lo) + lo)

    def quantized(*shape):
        if stored == torch.int8:
            return torch.randint(-127, 128, shape, generator=gen,
                                 device=device).to(torch.int8)
        return (uniform(*shape) * 4).to(stored)

    def logical_scale(kind):
        """Per (b, h, j) f32, as the granularity has it, and the tensor
        attn.torch / FA3 is given (before the layout's per-token form)."""
        if kind is None:
            return torch.ones(B, Hkv, Sk, device=device), None
        if kind == "tensor":
            t = uniform(1, lo=0.01, hi=0.03)[0]
            return t.expand(B, Hkv, Sk).clone(), t
        if kind in ("head", "shared"):
            t = uniform(Hkv, lo=0.01, hi=0.03)
            given = t if kind == "head" else t.expand(B, Hkv)
            return t.view(1, Hkv, 1).expand(B, Hkv, Sk).clone(), given
        if kind == "varying":
            t = uniform(B, Hkv, lo=0.01, hi=0.03)
            return t.view(B, Hkv, 1).expand(B, Hkv, Sk).clone(), t
        t = uniform(B, Hkv, Sk, lo=0.01, hi=0.03)  # token
        return t, t

    q = uniform(B, Hq, 1, D).to(dtype)
    k, v = quantized(B, Hkv, Sk, D), quantized(B, Hkv, Sk, D)
    (ks, kgiven), (vs, vgiven) = (logical_scale(kind) for kind in c["scales"])
    deq = [(t.double() if t.dtype == torch.int8 else t.float().double())
           * s.double().unsqueeze(-1) for t, s in ((k, ks), (v, vs))]
    lens_t = torch.tensor(lens, dtype=torch.int32, device=device)
    ref = dict(q=q, k=deq[0], v=deq[1], lens=lens_t)
    form, kw = c["form"], {}
    if form == "torch":
        for name, kind, given in (("k_scale", c["scales"][0], kgiven),
                                  ("v_scale", c["scales"][1], vgiven)):
            if given is not None:
                kw[name] = given
        kw.update(kv_lens=lens_t, return_lse=c["lse"])
        ref.update(o_view=lambda o: o, lse_view=lambda l: l)
        return "torch", "attention", (q, k, v), kw, ref
    if form in ("torch_paged", "kvcache"):
        bs = c["block"]
        per = (Sk + bs - 1) // bs
        nb = B * per + 2
        table = torch.randperm(nb, generator=torch.Generator().manual_seed(
            sum(lens)))[:B * per].view(B, per).to(torch.int32).to(device)
        # Bytes are copied as bytes (uint8 views): float8 tensors take
        # few operations.
        pages = [torch.zeros(nb, Hkv, bs, D, dtype=torch.uint8, device=device)
                 for _ in range(2)]
        page_scales = [torch.full((nb, Hkv, bs), float("nan"), device=device)
                       for _ in range(2)]
        for b in range(B):
            for j in range(lens[b]):
                blk, row = int(table[b, j // bs]), j % bs
                for i, (t, s) in enumerate(((k, ks), (v, vs))):
                    pages[i][blk, :, row] = t.view(torch.uint8)[b, :, j]
                    page_scales[i][blk, :, row] = s[b, :, j]
        pages = [p.view(stored) for p in pages]
        if form == "torch_paged":
            for i, (name, kind, given) in enumerate(
                    (("k_scale", c["scales"][0], kgiven),
                     ("v_scale", c["scales"][1], vgiven))):
                if kind == "token":
                    kw[name] = page_scales[i]
                elif given is not None:
                    kw[name] = given
            kw.update(block_table=table, kv_lens=lens_t, return_lse=c["lse"])
            ref.update(o_view=lambda o: o, lse_view=lambda l: l)
            return "torch", "attention", (q, pages[0], pages[1]), kw, ref
        # FlashAttention's paged layout [num_blocks, page, Hkv, D].
        kw.update(cache_seqlens=lens_t, block_table=table,
                  return_softmax_lse=c["lse"], k_descale=kgiven,
                  v_descale=vgiven)
        ref.update(o_view=lambda o: o.transpose(1, 2), lse_view=lambda l: l)
        return ("flash", "flash_attn_with_kvcache",
                (q.transpose(1, 2), pages[0].transpose(1, 2),
                 pages[1].transpose(1, 2)), kw, ref)
    # Packed K/V [total_k, Hkv, D] and one query a sequence.
    cu_k = torch.tensor([sum(lens[:i]) for i in range(B + 1)],
                        dtype=torch.int32, device=device)
    cu_q = torch.arange(B + 1, dtype=torch.int32, device=device)
    kp, vp = (torch.cat([t.view(torch.uint8)[b, :, :lens[b]].transpose(0, 1)
                         for b in range(B)]).view(stored) for t in (k, v))
    qp = q[:, :, 0]
    if form == "varlen":
        for name, kind, s, given in (("k_scale", c["scales"][0], ks, kgiven),
                                     ("v_scale", c["scales"][1], vs, vgiven)):
            if kind == "token":
                kw[name] = torch.cat([s[b, :, :lens[b]].t()
                                      for b in range(B)]).contiguous()
            elif given is not None:
                kw[name] = given
        kw.update(return_lse=c["lse"])
        ref.update(o_view=lambda o: o.unsqueeze(2),
                   lse_view=lambda l: l.unsqueeze(2))
        return ("torch", "attention_varlen", (qp, kp, vp, cu_q, cu_k, 1), kw,
                ref)
    if form == "flash_varlen":
        kw.update(return_softmax_lse=c["lse"], k_descale=kgiven,
                  v_descale=vgiven)
        ref.update(o_view=lambda o: o.unsqueeze(2),
                   lse_view=lambda l: l.t().unsqueeze(2))
        return ("flash", "flash_attn_varlen_func",
                (qp, kp, vp, cu_q, cu_k, 1, Sk), kw, ref)
    assert form == "func" and len(set(lens)) == 1
    kw.update(k_descale=kgiven, v_descale=vgiven)
    ref.update(o_view=lambda o: o.transpose(1, 2), lse_view=None)
    return ("flash", "flash_attn_func",
            (q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2)), kw,
            ref)


def quant_facts():
    """The AttentionFacts QUANT_CASES compile. Found with int8 caches where
    this PyTorch lacks float8 (older than 2.1), then given the case's
    element type."""
    import dataclasses
    import torch
    out = []
    for c in QUANT_CASES:
        stored = getattr(torch, _QUANT_TORCH[c["kv"]], torch.int8)
        module, fn, args, kw, _ = quant_call(
            c, "cpu", torch.Generator().manual_seed(0), stored)

        def calls():
            from attn import flash_attn
            if module == "flash":
                getattr(flash_attn, fn)(*args, **kw)
            else:
                getattr(flash_attn._ops(), fn)(*args, **kw)
        out += [dataclasses.replace(f, kv_dtype=QUANT_SPEC[c["kv"]])
                for f in recorded_facts(calls)]
    return out


# attn.flash_mla's FlashMLA-compatible decode over MLA's latent cache (one
# head of 576, V its first 512): sequences of 0 and 1 keys, pages past a
# length holding garbage, Sq 1-4 (causal, bottom-right), 16 and 128 heads,
# 64- and 16-row pages, bf16 and f16.
MLA_CASES = [
    dict(name="mla_h16_sq1_p64", dtype="bf16", s_q=1, h_q=16, page=64,
         lens=[300, 1, 0, 129], causal=False, scale=0.1352),
    dict(name="mla_h16_sq2_p64_causal", dtype="bf16", s_q=2, h_q=16, page=64,
         lens=[200, 2, 1, 65], causal=True, scale=0.1352),
    dict(name="mla_h16_sq4_p16_causal_f16", dtype="f16", s_q=4, h_q=16,
         page=16, lens=[77, 4, 33], causal=True, scale=None),
    dict(name="mla_h128_sq1_p64", dtype="bf16", s_q=1, h_q=128, page=64,
         lens=[500, 64], causal=False, scale=0.1352),
]


def mla_facts():
    """The AttentionFacts MLA_CASES compile (attn.flash_mla.mla_facts)."""
    from attn.flash_mla import mla_facts as facts
    return [facts(c["dtype"], c["h_q"], 576, 512, c["s_q"], c["page"],
                  c["causal"], c["scale"]) for c in MLA_CASES]
