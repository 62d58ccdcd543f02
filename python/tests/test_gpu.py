"""GPU tests of attn's Python package (skipped without PyTorch or CUDA):
library kernels and attn.torch.attention against a float64 reference on
fresh random inputs, outputs poisoned with NaN first and every element
checked written; errors for bad strides, dtypes and alignment; a small
transformer layer under torch.compile(fullgraph=True) against SDPA; calls
captured in a CUDA graph and replayed.

Runs under pytest or standalone (python3 run_gpu_tests.py); no fixtures.
Kernels come from attn.compile's cache: on a machine without attn-compile,
fill it first (python/tools/prefill_cache.py) and set ATTN_CACHE_DIR.
"""
import math
import unittest

try:
    import torch
    HAVE_CUDA = torch.cuda.is_available()
except ImportError:  # CI machines without PyTorch
    torch = None
    HAVE_CUDA = False

import attn
import gpu_cases


_attn_torch = None  # attn.torch, once need_cuda() imported it


def need_cuda():
    global _attn_torch
    if not HAVE_CUDA:
        raise unittest.SkipTest("needs PyTorch with a CUDA GPU")
    import attn.torch
    attn.torch.POISON_OUTPUTS = True
    _attn_torch = attn.torch
    return attn.torch


def reference(q, k, v, kv_lens=None, mask="none", align="bottom_right",
              left=-1, right=-1, scale=None, softcap=None, alibi=None,
              sinks=None):
    """float64 attention of [B, H, S, D] tensors; GQA by head groups; key j
    visible from query i when i + shift - left <= j <= i + shift + right
    (-1: unbounded; causal: right 0) and j < the sequence's length, with
    shift = len - Sq (bottom_right) or 0. Rows with no key: O 0, LSE -inf.
    `sinks` [Hq]: one more logit per head in each row's denominator, with
    no value (a row with no key: O 0, LSE its sink)."""
    b, hq, sq, d = q.shape
    group = hq // k.shape[1]
    k = k.double().repeat_interleave(group, dim=1)
    v = v.double().repeat_interleave(group, dim=1)
    s = q.double() @ k.transpose(-1, -2) * (scale or 1 / math.sqrt(d))
    if softcap:
        s = softcap * torch.tanh(s / softcap)
    sk = k.shape[2]
    lens = (kv_lens.long().to(q.device) if kv_lens is not None
            else torch.full((b,), sk, device=q.device))
    lens = lens.view(b, 1, 1, 1)
    i = torch.arange(sq, device=q.device).view(1, 1, sq, 1)
    j = torch.arange(sk, device=q.device).view(1, 1, 1, sk)
    diag = i + (lens - sq if align == "bottom_right" else 0)
    if alibi is not None:  # [B, Hq] slopes: FlashAttention's ALiBi
        s = s - alibi.double().view(b, hq, 1, 1) * (diag - j).abs()
    hidden = j >= lens
    if mask == "causal":
        right, left = 0, -1
    if mask in ("causal", "window"):
        # Not in place: the mask grows from [B, 1, 1, Sk] to [B, 1, Sq, Sk].
        hidden = hidden | (j > diag + right)
        if left >= 0:
            hidden = hidden | (j < diag - left)
    s = s.masked_fill(hidden, -math.inf)
    if sinks is not None:
        column = sinks.double().view(1, hq, 1, 1).expand(b, hq, sq, 1)
        lse = torch.logsumexp(torch.cat([s, column], dim=-1), dim=-1)
        p = torch.exp(s - lse.unsqueeze(-1)).nan_to_num(0.0)
        return p @ v, lse
    lse = torch.logsumexp(s, dim=-1)
    p = torch.exp(s - lse.unsqueeze(-1)).nan_to_num(0.0)
    return p @ v, lse


def check_close(label, o, ref_o, lse=None, ref_lse=None, tol=1e-2):
    unwritten = int(torch.isnan(o).sum())
    assert unwritten == 0, f"{label}: {unwritten} elements of O not written"
    rel = float((o.double() - ref_o).norm() / ref_o.norm().clamp_min(1e-30))
    assert rel <= tol, f"{label}: O rel_err {rel:.2e} > {tol}"
    if lse is not None:
        assert int(torch.isnan(lse).sum()) == 0, f"{label}: LSE not written"
        finite = torch.isfinite(ref_lse)
        assert bool((lse[~finite] == -math.inf).all()), label
        err = float((lse.double() - ref_lse)[finite].abs().max())
        assert err <= 1e-3 * max(1.0, float(ref_lse[finite].abs().max())), \
            f"{label}: LSE err {err:.2e}"


def rand(gen, *shape, dtype=torch.float16 if torch else None):
    return (torch.rand(*shape, generator=gen, device="cuda") * 2 - 1).to(
        dtype)


def make_case(c, gen):
    """Tensors for a gpu_cases case: q, k, v as attention() takes them, the
    contiguous K/V for the reference, block_table and kv_lens."""
    dtype = {"f16": torch.float16, "bf16": torch.bfloat16}[c["dtype"]]
    B, Hq, Hkv, Sq, Sk, D, Dv = (c[n] for n in
                                 ("B", "Hq", "Hkv", "Sq", "Sk", "D", "Dv"))
    if c["layout"] == "bshd":
        q = rand(gen, B, Sq, Hq, D, dtype=dtype).transpose(1, 2)
        k = rand(gen, B, Sk, Hkv, D, dtype=dtype).transpose(1, 2)
        v = rand(gen, B, Sk, Hkv, Dv, dtype=dtype).transpose(1, 2)
    else:
        q = rand(gen, B, Hq, Sq, D, dtype=dtype)
        k = rand(gen, B, Hkv, Sk, D, dtype=dtype)
        v = rand(gen, B, Hkv, Sk, Dv, dtype=dtype)
    lens = table = None
    if c["kv_lens"]:
        lens = torch.randint(1, Sk + 1, (B,), generator=gen, device="cuda")
        lens[0] = Sk
        lens = lens.int()
    k_arg, v_arg = k, v
    if c["block"]:
        bs = c["block"]
        max_blocks = (Sk + bs - 1) // bs
        num_blocks = B * max_blocks + 3
        k_arg = rand(gen, num_blocks, Hkv, bs, D, dtype=dtype)
        v_arg = rand(gen, num_blocks, Hkv, bs, Dv, dtype=dtype)
        table = torch.randperm(num_blocks, generator=gen, device="cuda")[
            :B * max_blocks].view(B, max_blocks).int()
        def gather(cache, dim):
            return cache[table.long()].permute(0, 2, 1, 3, 4).reshape(
                B, Hkv, max_blocks * bs, dim)
        k, v = gather(k_arg, D), gather(v_arg, Dv)
    return q, k, v, k_arg, v_arg, table, lens


def test_attention_cases():
    at = need_cuda()
    from attn.spec import mask_options
    failures = []
    for n, c in enumerate(gpu_cases.CASES):
        gen = torch.Generator(device="cuda").manual_seed(1000 + n)
        q, k, v, k_arg, v_arg, table, lens = make_case(c, gen)
        try:
            mask, left, right = mask_options(c["causal"], c["window"],
                                             c["align"])
            facts = at.facts_for(q, k_arg, v_arg, table, lens, mask=mask,
                                 align=c["align"], window_left=left,
                                 window_right=right,
                                 scale=c["scale"] or 0.0,
                                 softcap=c["softcap"] or 0.0,
                                 return_lse=c["lse"])
            assert facts == gpu_cases.case_facts(c), (facts, c)
            result = at.attention(q, k_arg, v_arg, causal=c["causal"],
                                  window=c["window"], align=c["align"],
                                  softcap=c["softcap"], scale=c["scale"],
                                  block_table=table, kv_lens=lens,
                                  return_lse=c["lse"])
            o, lse = result if c["lse"] else (result, None)
            torch.cuda.synchronize()
            ref_o, ref_lse = reference(q, k, v, lens, mask, c["align"], left,
                                       right, c["scale"], c["softcap"])
            tol = 2e-2 if c["dtype"] == "bf16" else 1e-2
            check_close(c["name"], o, ref_o, lse, ref_lse, tol)
            print(f"PASS {c['name']}")
        except Exception as e:  # report every case, then fail
            print(f"FAIL {c['name']}: {type(e).__name__}: {e}")
            failures.append(f"{c['name']}: {e}")
    assert not failures, "\n".join(failures)


def test_varlen_cases():
    """attention_varlen on packed batches (empty and one-token sequences,
    q_len > kv_len, a paged cache, the decode code through the hint),
    each sequence checked against the float64 reference of its own rows."""
    at = need_cuda()
    from attn.spec import mask_options
    failures = []
    for n, c in enumerate(gpu_cases.VARLEN_CASES):
        gen = torch.Generator(device="cuda").manual_seed(2000 + n)
        dtype = {"f16": torch.float16, "bf16": torch.bfloat16}[c["dtype"]]
        Hq, Hkv, D = c["Hq"], c["Hkv"], c["D"]
        lens_q, lens_k = c["lens_q"], c["lens_k"]
        B = len(lens_q)
        cu_q = torch.tensor([0] + lens_q, device="cuda").cumsum(0).int()
        q = rand(gen, sum(lens_q), Hq, D, dtype=dtype)
        # Each sequence's K/V rows, contiguous, for the reference.
        ks = [rand(gen, n_k, Hkv, D, dtype=dtype) for n_k in lens_k]
        vs = [rand(gen, n_k, Hkv, D, dtype=dtype) for n_k in lens_k]
        kwargs = {}
        if c["block"]:
            bs = c["block"]
            max_blocks = (max(lens_k) + bs - 1) // bs
            num_blocks = B * max_blocks + 3
            k_arg = rand(gen, num_blocks, Hkv, bs, D, dtype=dtype)
            v_arg = rand(gen, num_blocks, Hkv, bs, D, dtype=dtype)
            table = torch.randperm(num_blocks, generator=gen,
                                   device="cuda")[:B * max_blocks].view(
                                       B, max_blocks).int()
            for b in range(B):
                for j in range(lens_k[b]):
                    block = int(table[b, j // bs])
                    k_arg[block, :, j % bs] = ks[b][j]
                    v_arg[block, :, j % bs] = vs[b][j]
            kwargs = dict(block_table=table,
                          kv_lens=torch.tensor(lens_k, device="cuda").int())
            cu_k = None
        else:
            k_arg, v_arg = torch.cat(ks), torch.cat(vs)
            cu_k = torch.tensor([0] + lens_k, device="cuda").cumsum(0).int()
        try:
            result = at.attention_varlen(
                q, k_arg, v_arg, cu_q, cu_k, max_seqlen_q=c["hint"],
                causal=c["causal"], window=c["window"],
                return_lse=c["lse"], **kwargs)
            o, lse = result if c["lse"] else (result, None)
            torch.cuda.synchronize()
            mask, left, right = mask_options(c["causal"], c["window"],
                                             "bottom_right")
            start = 0
            for b in range(B):
                rows = slice(start, start + lens_q[b])
                start += lens_q[b]
                if lens_q[b] == 0:
                    continue
                qb = q[rows].transpose(0, 1).unsqueeze(0)
                kb = ks[b].transpose(0, 1).unsqueeze(0)
                vb = vs[b].transpose(0, 1).unsqueeze(0)
                if lens_k[b] == 0:  # no key: O 0, LSE -inf
                    ref_o = torch.zeros_like(qb, dtype=torch.float64)
                    ref_lse = torch.full(qb.shape[:3], -math.inf,
                                         device="cuda", dtype=torch.float64)
                else:
                    ref_o, ref_lse = reference(qb, kb, vb, None, mask,
                                               "bottom_right", left, right)
                ob = o[rows].transpose(0, 1).unsqueeze(0)
                lb = lse[rows].transpose(0, 1).unsqueeze(0) if c["lse"] \
                    else None
                tol = 2e-2 if c["dtype"] == "bf16" else 1e-2
                check_close(f"{c['name']} sequence {b}", ob, ref_o, lb,
                            ref_lse if c["lse"] else None, tol)
            assert start == o.shape[0]
            print(f"PASS {c['name']}")
        except Exception as e:  # report every case, then fail
            print(f"FAIL {c['name']}: {type(e).__name__}: {e}")
            failures.append(f"{c['name']}: {e}")
    assert not failures, "\n".join(failures)


def flash_reference_mask(c):
    """The reference's (mask, left, right) for a FLASH_CASES case, from
    FlashAttention's rules (causal: right 0; a negative side unbounded),
    not from attn.flash_attn's translation."""
    left, right = c["window"]
    if c["causal"]:
        right = 0
    if left < 0 and right < 0:
        return "none", -1, -1
    return "window", max(left, -1), right if right >= 0 else 10**9


def seq_reference(c, qb, kb, vb, alibi=None, sinks=None):
    """Reference of one sequence: qb [Sq, Hq, D], kb/vb [Sk, Hkv, D] ->
    O [Sq, Hq, D] and LSE [Hq, Sq] (float64); `alibi` its slopes [Hq],
    `sinks` the call's s_aux [Hq]."""
    mask, left, right = flash_reference_mask(c)
    if kb.shape[0] == 0 and sinks is not None:
        return (torch.zeros(qb.shape, dtype=torch.float64, device="cuda"),
                sinks.double().view(-1, 1).expand(qb.shape[1], qb.shape[0]))
    if kb.shape[0] == 0:
        return (torch.zeros(qb.shape, dtype=torch.float64, device="cuda"),
                torch.full((qb.shape[1], qb.shape[0]), -math.inf,
                           dtype=torch.float64, device="cuda"))
    o, lse = reference(qb.transpose(0, 1)[None], kb.transpose(0, 1)[None],
                       vb.transpose(0, 1)[None], None, mask, "bottom_right",
                       left, right, c.get("scale"), c["softcap"] or None,
                       None if alibi is None else alibi.view(1, -1), sinks)
    return o[0].transpose(0, 1), lse[0]


def slopes(kw, b):
    """Sequence b's ALiBi slopes [Hq] from a call's alibi_slopes (Hq,) or
    (B, Hq); None without."""
    a = kw.get("alibi_slopes")
    return None if a is None else (a if a.dim() == 1 else a[b])


def test_flash_attn_cases():
    """attn.flash_attn's three functions in FlashAttention's layouts: O and
    LSE against float64 per sequence (and against SDPA's error where SDPA
    computes the same), the caches after the append element by element,
    and deterministic=True giving each sequence the same bits alone as in
    its batch."""
    need_cuda()
    from attn import flash_attn
    failures = []
    for n, c in enumerate(gpu_cases.FLASH_CASES):
        gen = torch.Generator(device="cuda").manual_seed(3000 + n)
        fn, args, kw, extra = gpu_cases.flash_call(c, "cuda", gen)
        tol = 2e-2 if c["dtype"] == "bf16" else 1e-2
        try:
            result = getattr(flash_attn, fn)(*args, **kw)
            o, lse = (result[0], result[1]) if c["lse"] else (result, None)
            torch.cuda.synchronize()
            if fn == "flash_attn_func":
                q, k, v = args
                for b in range(q.shape[0]):
                    ref_o, ref_lse = seq_reference(c, q[b], k[b], v[b],
                                                   slopes(kw, b),
                                                   kw.get("s_aux"))
                    check_close(f"{c['name']} batch {b}", o[b], ref_o,
                                None if lse is None else lse[b],
                                None if lse is None else ref_lse, tol)
                if (c["causal"] and q.shape[1] == k.shape[1] and
                        "s_aux" not in kw):  # SDPA has no sinks
                    # SDPA's own error on the same inputs bounds attn's.
                    g = q.shape[2] // k.shape[2]
                    sdpa = torch.nn.functional.scaled_dot_product_attention(
                        q.transpose(1, 2),
                        k.transpose(1, 2).repeat_interleave(g, 1),
                        v.transpose(1, 2).repeat_interleave(g, 1),
                        is_causal=True).transpose(1, 2)
                    ref = torch.stack([seq_reference(c, q[b], k[b], v[b])[0]
                                       for b in range(q.shape[0])])
                    err = float((o.double() - ref).norm() / ref.norm())
                    sdpa_err = float((sdpa.double() - ref).norm() /
                                     ref.norm())
                    assert err <= 2 * sdpa_err + 1e-3, (err, sdpa_err)
                if kw.get("deterministic"):
                    for b in range(q.shape[0]):
                        alone = flash_attn.flash_attn_func(
                            q[b:b + 1], k[b:b + 1], v[b:b + 1], **kw)
                        alone = alone[0] if c["lse"] else alone
                        assert torch.equal(alone[0], o[b]), \
                            f"batch {b} alone differs from its batch"
            elif fn == "flash_attn_varlen_func":
                q, _, _, cu_q = args[:4]
                starts = cu_q.tolist()
                for b in range(len(starts) - 1):
                    rows = slice(starts[b], starts[b + 1])
                    if rows.start == rows.stop:
                        continue
                    ref_o, ref_lse = seq_reference(c, q[rows], extra["ks"][b],
                                                   extra["vs"][b],
                                                   slopes(kw, b),
                                                   kw.get("s_aux"))
                    check_close(f"{c['name']} sequence {b}", o[rows], ref_o,
                                None if lse is None else lse[:, rows],
                                None if lse is None else ref_lse, tol)
                assert lse is None or tuple(lse.shape) == (q.shape[1],
                                                           q.shape[0])
                if kw.get("deterministic"):
                    for b in range(len(starts) - 1):
                        rows = slice(starts[b], starts[b + 1])
                        kb, vb = extra["ks"][b], extra["vs"][b]
                        one_q = torch.tensor([0, rows.stop - rows.start],
                                             dtype=torch.int32, device="cuda")
                        one_k = torch.tensor([0, kb.shape[0]],
                                             dtype=torch.int32, device="cuda")
                        alone = flash_attn.flash_attn_varlen_func(
                            q[rows], kb, vb, one_q, one_k,
                            rows.stop - rows.start, kb.shape[0], **kw)
                        alone = alone[0] if c["lse"] else alone
                        assert torch.equal(alone, o[rows]), \
                            f"sequence {b} alone differs from its batch"
            else:
                q, k_cache, v_cache = args
                lens = kw["cache_seqlens"].tolist()
                new = c["new"]
                table = kw.get("block_table")
                exp_k, exp_v = extra["k_cache"], extra["v_cache"]

                def where(b, pos):  # (index into the cache, row)
                    if table is None:
                        return b, pos
                    bs = c["block"]
                    return int(table[b, pos // bs]), pos % bs
                for b in range(q.shape[0]):
                    for t in range(new):
                        at, row = where(b, lens[b] + t)
                        exp_k[at, row] = kw["k"][b, t]
                        exp_v[at, row] = kw["v"][b, t]
                assert torch.equal(k_cache, exp_k), "k_cache after append"
                assert torch.equal(v_cache, exp_v), "v_cache after append"
                for b in range(q.shape[0]):
                    n_k = lens[b] + new
                    idx = [where(b, j) for j in range(n_k)]
                    kb = torch.stack([k_cache[i, r] for i, r in idx]) \
                        if idx else k_cache[0, :0]
                    vb = torch.stack([v_cache[i, r] for i, r in idx]) \
                        if idx else v_cache[0, :0]
                    ref_o, ref_lse = seq_reference(c, q[b], kb, vb,
                                                   slopes(kw, b),
                                                   kw.get("s_aux"))
                    check_close(f"{c['name']} batch {b}", o[b], ref_o,
                                None if lse is None else lse[b],
                                None if lse is None else ref_lse, tol)
            print(f"PASS {c['name']}")
        except Exception as e:  # report every case, then fail
            print(f"FAIL {c['name']}: {type(e).__name__}: {e}")
            failures.append(f"{c['name']}: {e}")
    assert not failures, "\n".join(failures)


def test_quantized_caches():
    """fp8 (e4m3fn, e5m2) and int8 K/V caches with their scales of each
    granularity through attn.torch's attention and attention_varlen and
    attn.flash_attn's three functions (FA3's k_descale/v_descale), against
    float64 attention over the dequantized caches."""
    need_cuda()
    from attn import flash_attn
    gen = torch.Generator(device="cuda").manual_seed(41)
    for c in gpu_cases.QUANT_CASES:
        if not hasattr(torch, gpu_cases._QUANT_TORCH[c["kv"]]):
            raise unittest.SkipTest(f"this PyTorch has no "
                                    f"{gpu_cases._QUANT_TORCH[c['kv']]}")
        module, fn, args, kw, ref = gpu_cases.quant_call(c, "cuda", gen)
        target = flash_attn if module == "flash" else _attn_torch
        result = getattr(target, fn)(*args, **kw)
        o, lse = result if isinstance(result, tuple) else (result, None)
        ref_o, ref_lse = reference(ref["q"], ref["k"], ref["v"], ref["lens"])
        check_close(c["name"], ref["o_view"](o), ref_o,
                    None if lse is None else ref["lse_view"](lse),
                    None if lse is None else ref_lse)


def test_flash_mla():
    """attn.flash_mla.flash_mla_with_kvcache (FlashMLA's signature) over a
    paged latent cache, V its first 512 columns, against float64 attention
    over the same bytes; pages no sequence owns hold garbage, and a
    sequence with no keys gets O 0 and LSE -inf."""
    need_cuda()
    from attn import flash_mla
    gen = torch.Generator(device="cuda").manual_seed(43)
    for c in gpu_cases.MLA_CASES:
        dtype = torch.bfloat16 if c["dtype"] == "bf16" else torch.float16
        lens = torch.tensor(c["lens"], dtype=torch.int32, device="cuda")
        b, page = len(c["lens"]), c["page"]
        blocks = max(1, max((n + page - 1) // page for n in c["lens"]))
        pool = b * blocks + 3  # three more pages, never named
        cache = rand(gen, pool, page, 1, 576, dtype=dtype) * 2
        table = torch.randperm(pool, generator=gen, device="cuda")[
            :b * blocks].view(b, blocks).to(torch.int32)
        q = rand(gen, b, c["s_q"], c["h_q"], 576, dtype=dtype)
        meta, splits = flash_mla.get_mla_metadata(lens, c["s_q"] * c["h_q"],
                                                  1)
        out, lse = flash_mla.flash_mla_with_kvcache(
            q, cache, table, lens, 512, meta, splits,
            softmax_scale=c["scale"], causal=c["causal"])
        assert out.shape == (b, c["s_q"], c["h_q"], 512), c["name"]
        assert lse.shape == (b, c["h_q"], c["s_q"]), c["name"]
        # The contiguous latent rows of each sequence, [B, 1, Sk, 576].
        rows = cache[table.long()].reshape(b, blocks * page, 576)
        latent = rows.unsqueeze(1)
        ref_o, ref_lse = reference(
            q.transpose(1, 2), latent, latent[..., :512], lens,
            mask="causal" if c["causal"] else "none",
            scale=c["scale"] or 1 / math.sqrt(576))
        check_close(c["name"], out.transpose(1, 2), ref_o, lse, ref_lse)


def merge_reference(o_parts, lse_parts):
    """float64 merge of stacked partial states: parts with LSE -inf are
    skipped (their O is not read); a row with none left is O 0, LSE -inf."""
    lse = lse_parts.double()
    m = lse.max(0).values
    empty = lse == -math.inf
    w = torch.exp(lse - torch.where(torch.isfinite(m), m,
                                    torch.zeros_like(m)))
    w = torch.where(empty, torch.zeros_like(w), w)
    o = torch.where(empty.unsqueeze(-1), torch.zeros_like(o_parts.double()),
                    o_parts.double())
    total = w.sum(0)
    ref_o = (w.unsqueeze(-1) * o).sum(0) / total.clamp_min(1e-300).unsqueeze(
        -1)
    ref_lse = torch.where(total > 0, m + torch.log(total),
                          torch.full_like(m, -math.inf))
    return ref_o, ref_lse


def test_merge_states():
    """attn.torch.merge_states against the float64 merge: random parts with
    empty ones (LSE -inf, NaN O) and all-empty rows, three parts (a kernel
    with N fixed) and eleven (the loop over a dynamic N), f32 partials into
    f16/bf16, vLLM's [T, H, D] parts with [H, T] LSEs; and exactness: the
    merge of attention over three disjoint key sets is the attention over
    all of them (float64 reference)."""
    at = need_cuda()
    C = gpu_cases.COMPOSE
    Hq, Hkv, D = C["Hq"], C["Hkv"], C["D"]
    for n, name in enumerate(C["dtypes"]):
        dtype = {"f16": torch.float16, "bf16": torch.bfloat16}[name]
        gen = torch.Generator(device="cuda").manual_seed(3000 + n)
        parts = rand(gen, 3, 2, Hq, 37, D, dtype=dtype)
        lse = rand(gen, 3, 2, Hq, 37, dtype=torch.float32) * 6
        empty = torch.rand(3, 2, Hq, 37, generator=gen, device="cuda") < 0.3
        empty[:, :, :, 5] = True  # rows empty in every part
        lse[empty] = -math.inf
        parts[empty] = math.nan
        ref_o, ref_lse = merge_reference(parts, lse)
        o, out_lse = at.merge_states(parts, lse)
        check_close(f"merge {name}", o, ref_o, out_lse, ref_lse)
        assert bool((o[:, :, 5] == 0).all()), "empty rows: O = 0"
        # Eleven parts: more than a kernel fixes, so the loop over N.
        many = rand(gen, 11, 2, Hq, 37, D, dtype=dtype)
        many_lse = rand(gen, 11, 2, Hq, 37, dtype=torch.float32) * 6
        none = torch.rand(11, 2, Hq, 37, generator=gen, device="cuda") < 0.3
        none[:, :, :, 7] = True
        many_lse[none] = -math.inf
        many[none] = math.nan
        ref_o, ref_lse = merge_reference(many, many_lse)
        o, out_lse = at.merge_states(many, many_lse)
        check_close(f"merge of 11 parts {name}", o, ref_o, out_lse, ref_lse)
        ref_o, ref_lse = merge_reference(parts, lse)
        o32 = at.merge_states(parts.float(), lse, out_dtype=dtype,
                              return_lse=False)
        assert o32.dtype == dtype
        check_close(f"merge f32->{name}", o32, ref_o)
        # vLLM's merge_attn_states layout: O [T, H, D], LSE [H, T].
        t_parts = [rand(gen, 29, Hq, D, dtype=dtype) for _ in range(2)]
        h_lse = [rand(gen, Hq, 29, dtype=torch.float32) * 4
                 for _ in range(2)]
        o, out_lse = at.merge_states(t_parts,
                                     [x.transpose(0, 1) for x in h_lse])
        ref_o, ref_lse = merge_reference(
            torch.stack(t_parts), torch.stack(h_lse).transpose(1, 2))
        check_close(f"merge vllm {name}", o, ref_o, out_lse, ref_lse)

        # Exactness: keys split three ways (the last part empty for one
        # sequence), merged, against attention over all of them.
        q = rand(gen, 2, Hq, 64, D, dtype=dtype)
        k = rand(gen, 2, Hkv, 300, D, dtype=dtype)
        v = rand(gen, 2, Hkv, 300, D, dtype=dtype)
        cuts = (0, 100, 220, 300)
        os_, lses = [], []
        for a, b in zip(cuts, cuts[1:]):
            lens = torch.tensor([b - a, min(b - a, max(0, 150 - a))],
                                device="cuda").int()
            o_i, l_i = at.attention(q, k[:, :, a:b].contiguous(),
                                    v[:, :, a:b].contiguous(),
                                    kv_lens=lens, return_lse=True)
            os_.append(o_i)
            lses.append(l_i)
        o, out_lse = at.merge_states(os_, lses)
        lens = torch.tensor([300, 150], device="cuda").int()
        ref_o, ref_lse = reference(q, k, v, kv_lens=lens)
        check_close(f"merge of split attention {name}", o, ref_o, out_lse,
                    ref_lse)


def test_cascade():
    """Two-level cascade attention (a shared prefix, then each request's
    own suffix, both paged) against float64 attention over the request's
    whole sequence: decode, and three causal queries a request; suffixes
    of 0 tokens and a prefix cut into chunks."""
    need_cuda()
    C = gpu_cases.COMPOSE
    for n, name in enumerate(C["dtypes"]):
        for causal, qpr in ((False, 1), (True, 3)):
            gen = torch.Generator().manual_seed(4000 + n)
            # Causal queries are a request's last tokens, in its suffix.
            suffixes = [3, 5, 40] if causal else [0, 5, 40]
            cascade, q, kc, vc, pages = gpu_cases.cascade_calls(
                "cuda", name, C["Hq"], C["Hkv"], C["D"], C["block"], 3, 100,
                suffixes, qpr, causal, C["chunk_tokens"], gen)
            o, lse = cascade.run(q, (kc, vc), return_lse=True)
            torch.cuda.synchronize()
            prefix_pages, suffix_pages = pages

            def tokens(cache, page_list, count):
                if not page_list:
                    return cache.new_empty(C["Hkv"], 0, C["D"])
                idx = torch.tensor(page_list, device="cuda", dtype=torch.long)
                return cache[idx].permute(1, 0, 2, 3).reshape(
                    C["Hkv"], -1, C["D"])[:, :count]
            for b in range(len(suffixes)):
                k = torch.cat([tokens(kc, prefix_pages, 100),
                               tokens(kc, suffix_pages[b], suffixes[b])],
                              dim=1).unsqueeze(0)
                v = torch.cat([tokens(vc, prefix_pages, 100),
                               tokens(vc, suffix_pages[b], suffixes[b])],
                              dim=1).unsqueeze(0)
                rows = slice(b * qpr, (b + 1) * qpr)
                qb = q[rows].transpose(0, 1).unsqueeze(0)
                ref_o, ref_lse = reference(
                    qb, k, v, mask="causal" if causal else "none")
                check_close(f"cascade {name} causal={causal} request {b}",
                            o[rows].transpose(0, 1).unsqueeze(0), ref_o,
                            lse[rows].transpose(0, 1).unsqueeze(0), ref_lse)


def test_library_kernels_and_ops():
    """attn.compile'd example libraries: the llama3 prefill as a custom op
    (torch.ops), the strided gemma2 and paged decode kernels called
    directly with poisoned outputs."""
    at = need_cuda()
    paths = {p.split("/")[-1][:-5]: p for p in gpu_cases.SPEC_FILES}
    prefill = attn.compile(paths["llama3_8b_prefill"])
    ops = at.register(prefill)
    gen = torch.Generator(device="cuda").manual_seed(7)
    q, k, v = (rand(gen, 2, 32, 300, 128), rand(gen, 2, 8, 310, 128),
               rand(gen, 2, 8, 310, 128))
    o, lse = ops.llama3_8b_prefill(q, k, v)
    assert o is not None and tuple(lse.shape) == (2, 32, 300)
    torch.cuda.synchronize()
    ref_o, ref_lse = reference(q, k, v, mask="causal")
    check_close("llama3 op", o, ref_o, lse, ref_lse)
    assert torch.ops.attn_llama3_8b_prefill.llama3_8b_prefill is not None

    gemma = attn.compile(paths["gemma2_softcap"])
    def bshd(h, s):
        return rand(gen, 1, s, h, 256).transpose(1, 2)
    q, k, v = bshd(8, 257), bshd(4, 257), bshd(4, 257)
    o = torch.full((1, 257, 8, 256), math.nan, dtype=torch.float16,
                   device="cuda").transpose(1, 2)
    gemma.gemma2_softcap(q=q, k=k, v=v, o=o)
    torch.cuda.synchronize()
    check_close("gemma2 strided", o, reference(
        q, k, v, mask="causal", align="top_left", scale=0.0625,
        softcap=50.0)[0])

    decode = attn.compile(paths["paged_decode"])
    c = gpu_cases.case("paged", B=5, Hq=32, Hkv=8, Sq=1, Sk=900, D=128,
                       causal=True, block=16)
    q, k, v, k_arg, v_arg, table, lens = make_case(c, gen)
    o = torch.full_like(q, math.nan)
    decode.paged_decode(q=q, k=k_arg, v=v_arg, block_table=table,
                        kv_lens=lens, o=o)
    torch.cuda.synchronize()
    check_close("paged_decode", o, reference(q, k, v, lens, "causal")[0])


def captured(call):
    """A CUDA graph of one prepared attn call, after a first call outside
    the capture (it loads the module). The caller keeps `call` alive as
    long as the graph: it owns the workspace the graph's launches name."""
    call()
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        call()
    return graph


def replay_on(graph, statics, fresh, poisoned):
    """Copies `fresh` into the captured `statics`, poisons `poisoned` with
    NaN and replays the graph."""
    for static, new in zip(statics, fresh):
        static.copy_(new)
    for t in poisoned:
        t.fill_(math.nan)
    graph.replay()
    torch.cuda.synchronize()


def test_cuda_graph_replay():
    """attn's launches captured in a CUDA graph (torch.cuda.graph) and
    replayed on fresh inputs copied into the captured buffers: the paged
    decode's split kernel and programmatic combine (B 4) and its one-split
    kernel (B 40), and the llama3
    prefill (on sm_90a: tensor maps passed by value). Each replay against
    the float64 reference, O poisoned before it."""
    need_cuda()
    paths = {p.split("/")[-1][:-5]: p for p in gpu_cases.SPEC_FILES}
    gen = torch.Generator(device="cuda").manual_seed(11)

    decode = attn.compile(paths["paged_decode"])
    # B 4: split and combine kernels; B 40 fills an H100 at one split,
    # where the one-split kernel runs alone, without a workspace.
    for batch in (4, 40):
        c = gpu_cases.case("paged", B=batch, Hq=32, Hkv=8, Sq=1, Sk=700,
                           D=128, causal=True, block=16)
        q, k, v, k_arg, v_arg, table, lens = make_case(c, gen)
        o = torch.full_like(q, math.nan)
        call = decode.paged_decode.prepare(q=q, k=k_arg, v=v_arg,
                                           block_table=table, kv_lens=lens,
                                           o=o)
        graph = captured(call)
        for replay in range(2):
            q2, k2, v2, k_arg2, v_arg2, table2, lens2 = make_case(c, gen)
            replay_on(graph, (q, k_arg, v_arg, table, lens),
                      (q2, k_arg2, v_arg2, table2, lens2), (o,))
            check_close(f"paged_decode B{batch} graph replay {replay}", o,
                        reference(q2, k2, v2, lens2, "causal")[0])

    prefill = attn.compile(paths["llama3_8b_prefill"])
    shapes = ((2, 32, 300, 128), (2, 8, 310, 128), (2, 8, 310, 128))
    q, k, v = (rand(gen, *s) for s in shapes)
    o = torch.full_like(q, math.nan)
    lse = torch.full((2, 32, 300), math.nan, device="cuda")
    call = prefill.llama3_8b_prefill.prepare(q=q, k=k, v=v, o=o, lse=lse)
    graph = captured(call)
    for replay in range(2):
        fresh = [rand(gen, *s) for s in shapes]
        replay_on(graph, (q, k, v), fresh, (o, lse))
        ref_o, ref_lse = reference(*fresh, mask="causal")
        check_close(f"llama3 prefill graph replay {replay}", o, ref_o, lse,
                    ref_lse)
    print("PASS attn calls captured in CUDA graphs and replayed on fresh "
          "inputs (paged decode, llama3 prefill)")


def test_errors():
    at = need_cuda()
    paths = {p.split("/")[-1][:-5]: p for p in gpu_cases.SPEC_FILES}
    lib = attn.compile(paths["llama3_8b_prefill"])
    gen = torch.Generator(device="cuda").manual_seed(3)
    # [B, S, H, D] memory viewed as [B, H, S, D]: the spec is row-major.
    q = rand(gen, 1, 64, 32, 128).transpose(1, 2)
    k = rand(gen, 1, 8, 64, 128)
    o = torch.full((1, 32, 64, 128), math.nan, dtype=torch.float16,
                   device="cuda")
    lse = torch.full((1, 32, 64), math.nan, device="cuda")
    try:
        lib.llama3_8b_prefill(q=q, k=k, v=k, o=o, lse=lse)
        raise AssertionError("a transposed q was accepted")
    except attn.AttnError as e:
        assert e.status == "ATTN_ERROR_UNSUPPORTED_STRIDE", e
        assert "q stride" in e.message, e
    torch.cuda.synchronize()
    assert bool(torch.isnan(o).all()) and bool(torch.isnan(lse).all())
    # Misaligned: q starts 1 element (2 bytes) into its storage.
    flat = rand(gen, 32 * 64 * 128 + 1)
    q = flat[1:].view(1, 32, 64, 128)
    try:
        lib.llama3_8b_prefill(q=q, k=k, v=k, o=o, lse=lse)
        raise AssertionError("a misaligned q was accepted")
    except attn.AttnError as e:
        assert e.status == "ATTN_ERROR_MISALIGNED" and "q" in e.message, e
    # Through attention(): a head dim with stride 2.
    c = gpu_cases.CASES[4]  # the strided softcap case: same kernel
    wide = rand(gen, 2, 300, 8, 256)
    q = wide[..., ::2].transpose(1, 2)
    k = rand(gen, 2, 300, 4, 128).transpose(1, 2)
    try:
        at.attention(q, k, k, causal=True, softcap=c["softcap"],
                     scale=c["scale"])
        raise AssertionError("a head dim of stride 2 was accepted")
    except attn.AttnError as e:
        assert e.status == "ATTN_ERROR_UNSUPPORTED_STRIDE", e
    for bad, kind, text in [
            (dict(q=q.float()), TypeError, "float16 or torch.bfloat16"),
            (dict(k=k.bfloat16()), TypeError, "k is torch.bfloat16"),
            (dict(q=q[0]), ValueError, "4-D")]:
        args = dict(q=rand(gen, 1, 8, 16, 128), k=rand(gen, 1, 4, 16, 128))
        args.update(bad)
        try:
            at.attention(args["q"], args["k"], args["k"] if "k" not in bad
                         else rand(gen, 1, 4, 16, 128))
            raise AssertionError(f"{bad.keys()} accepted")
        except kind as e:
            assert text in str(e), e
    try:
        at.attention(q, k, k, window=(4, 2), causal=True)
        raise AssertionError("causal with a right window accepted")
    except ValueError as e:
        assert "causal" in str(e)


class Layer(torch.nn.Module if torch else object):
    """Pre-norm transformer layer: GQA attention (causal) and a GELU MLP."""

    def __init__(self, dim, hq, hkv, d, use_attn):
        super().__init__()
        self.hq, self.hkv, self.d, self.use_attn = hq, hkv, d, use_attn
        self.norm1 = torch.nn.LayerNorm(dim)
        self.norm2 = torch.nn.LayerNorm(dim)
        self.wq = torch.nn.Linear(dim, hq * d, bias=False)
        self.wkv = torch.nn.Linear(dim, 2 * hkv * d, bias=False)
        self.wo = torch.nn.Linear(hq * d, dim, bias=False)
        self.mlp = torch.nn.Sequential(torch.nn.Linear(dim, 4 * dim),
                                       torch.nn.GELU(),
                                       torch.nn.Linear(4 * dim, dim))

    def forward(self, x):
        b, s, _ = x.shape
        h = self.norm1(x)
        q = self.wq(h).view(b, s, self.hq, self.d).transpose(1, 2)
        k, v = self.wkv(h).view(b, s, 2, self.hkv, self.d).unbind(2)
        k, v = k.transpose(1, 2), v.transpose(1, 2)
        if self.use_attn:
            a = _attn_torch.attention(q, k, v, causal=True, align="top_left")
        else:
            g = self.hq // self.hkv
            a = torch.nn.functional.scaled_dot_product_attention(
                q, k.repeat_interleave(g, 1), v.repeat_interleave(g, 1),
                is_causal=True)
        x = x + self.wo(a.transpose(1, 2).reshape(b, s, -1))
        return x + self.mlp(self.norm2(x))


def test_hf_padded_window_sinks():
    """attn.hf's forward on a left-padded batch (transformers' 2-D padding
    mask, as model.generate passes it) with GPT-OSS's sinks (s_aux), full
    and 128-token sliding-window layers: each row's valid tokens against
    the float64 reference of that row alone."""
    need_cuda()
    import types
    from attn import hf
    c = gpu_cases.HF_GPT_OSS
    Hq, Hkv, D, scale = c["Hq"], c["Hkv"], c["D"], c["scale"]
    gen = torch.Generator(device="cuda").manual_seed(4000)
    lens, S = [200, 150, 20], 200
    q = rand(gen, 3, Hq, S, D)
    k, v = rand(gen, 3, Hkv, S, D), rand(gen, 3, Hkv, S, D)
    mask = (torch.arange(S, device="cuda")[None, :] >=
            torch.tensor([S - n for n in lens], device="cuda")[:, None])
    sinks = (torch.rand(Hq, generator=gen, device="cuda") * 6 - 2).half()
    for window in (None, 128):
        module = types.SimpleNamespace(is_causal=True, sliding_window=window)
        out, _ = hf.attention_forward(module, q, k, v, mask.long(),
                                      scaling=scale, sliding_window=window,
                                      s_aux=sinks)
        torch.cuda.synchronize()
        for b, n in enumerate(lens):
            rows = slice(S - n, S)
            mode, left = ("window", window - 1) if window else ("causal", -1)
            ref_o, _ = reference(q[b:b + 1, :, rows], k[b:b + 1, :, rows],
                                 v[b:b + 1, :, rows], None, mode,
                                 "bottom_right", left, 0, scale, None, None,
                                 sinks)
            check_close(f"hf padded window={window} row {b}",
                        out[b, rows].transpose(0, 1).unsqueeze(0), ref_o,
                        tol=2e-3)
        print(f"PASS hf padded batch, sinks, window={window}")


def test_transformer_layer_compiled():
    need_cuda()
    import torch._dynamo
    L = gpu_cases.LAYER
    torch.manual_seed(0)
    ours = Layer(L["dim"], L["Hq"], L["Hkv"], L["D"], True).cuda().half()
    ref = Layer(L["dim"], L["Hq"], L["Hkv"], L["D"], False).cuda().half()
    ref.load_state_dict(ours.state_dict())
    x = torch.randn(L["B"], L["S"], L["dim"], device="cuda",
                    dtype=torch.float16)
    torch._dynamo.reset()
    torch._dynamo.utils.counters.clear()
    compiled = torch.compile(ours, fullgraph=True)  # a graph break raises
    with torch.no_grad():
        y = compiled(x)
        y2 = compiled(x)
        want = ref(x)
    torch.cuda.synchronize()
    breaks = dict(torch._dynamo.utils.counters["graph_break"])
    assert not breaks, f"graph breaks: {breaks}"
    assert torch.equal(y, y2)
    assert int(torch.isnan(y).sum()) == 0
    rel = float((y.float() - want.float()).norm() / want.float().norm())
    assert rel < 1e-2, f"compiled layer vs SDPA: rel_err {rel:.2e}"
    print(f"PASS transformer layer under torch.compile(fullgraph=True): "
          f"rel_err vs SDPA {rel:.1e}")
