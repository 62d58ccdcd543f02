"""attn.cascade's plan and composition on the CPU: MultiLevelCascadeAttention
run with float64 stand-ins for attn.torch's attention_varlen and
merge_states (written here from their definitions), against float64
attention over each request's whole sequence. Covers empty suffixes, a
prefix cut into chunks (the last one partial, some empty for shorter
groups), three levels, causal last levels, and the NHD page layout. The
kernels themselves are checked elsewhere: the merge on the CPU by
test/cpu/merge_states.mlir, both on GPUs by test_gpu.py."""
import math
import types

import pytest

torch = pytest.importorskip("torch")

from attn import cascade as cascade_mod  # noqa: E402


def attention_ref(q, k, v, causal):
    """float64 attention of q [Sq, Hq, D] over k, v [Sk, Hkv, D]; causal:
    bottom-right. Returns O [Sq, Hq, D] and LSE [Sq, Hq] (-inf, O 0 for a
    row with no key)."""
    sq, hq, d = q.shape
    sk, hkv = k.shape[0], k.shape[1]
    g = hq // hkv
    kk = k.double().repeat_interleave(g, dim=1)
    vv = v.double().repeat_interleave(g, dim=1)
    s = torch.einsum("qhd,khd->hqk", q.double(), kk) / math.sqrt(d)
    if causal:
        i = torch.arange(sq).view(sq, 1)
        j = torch.arange(sk).view(1, sk)
        s = s.masked_fill(j > i + sk - sq, -math.inf)
    lse = torch.logsumexp(s, dim=-1) if sk else torch.full(
        (hq, sq), -math.inf, dtype=torch.float64)
    p = torch.exp(s - lse.unsqueeze(-1)).nan_to_num(0.0)
    o = torch.einsum("hqk,khd->qhd", p, vv)
    return o, lse.transpose(0, 1)


def paged_tokens(cache, table_row, length):
    """[length, Hkv, D] tokens of a paged cache [pages, Hkv, page, D]."""
    page = cache.shape[2]
    rows = [cache[int(table_row[j // page]), :, j % page]
            for j in range(length)]
    return torch.stack(rows) if rows else cache.new_zeros(
        0, cache.shape[1], cache.shape[3])


def fake_ops():
    def attention_varlen(q, k, v, cu_seqlens_q, cu_seqlens_k, max_seqlen_q,
                         *, causal=False, block_table=None, kv_lens=None,
                         scale=None, softcap=None, return_lse=False):
        assert cu_seqlens_k is None and scale is None and softcap is None
        o = torch.full(q.shape, math.nan, dtype=torch.float64)
        lse = torch.full(q.shape[:2], math.nan, dtype=torch.float64)
        cu = cu_seqlens_q.tolist()
        for s in range(len(cu) - 1):
            rows = slice(cu[s], cu[s + 1])
            assert cu[s + 1] - cu[s] <= max_seqlen_q
            n = int(kv_lens[s])
            o[rows], lse[rows] = attention_ref(
                q[rows], paged_tokens(k, block_table[s], n),
                paged_tokens(v, block_table[s], n), causal)
        return o, lse

    def merge_states(o_parts, lse_parts, return_lse=True):
        m = lse_parts.max(0).values
        safe = torch.where(torch.isfinite(m), m, torch.zeros_like(m))
        w = torch.exp(lse_parts - safe)
        w = torch.where(lse_parts == -math.inf, torch.zeros_like(w), w)
        total = w.sum(0)
        o = (w.unsqueeze(-1) * o_parts.nan_to_num(0.0)).sum(0) / \
            total.clamp_min(1e-300).unsqueeze(-1)
        lse = torch.where(total > 0, safe + torch.log(total),
                          torch.full_like(m, -math.inf))
        return (o, lse) if return_lse else o
    return types.SimpleNamespace(attention_varlen=attention_varlen,
                                 merge_states=merge_states)


@pytest.fixture(autouse=True)
def reference_ops(monkeypatch):
    monkeypatch.setattr(cascade_mod, "_ops", fake_ops)


def run_case(levels, qpr, causal, page=4, chunk_tokens=8, layout="HND",
             seed=0):
    """levels: per level, a list of groups (requests in the group, tokens);
    every level's groups cover all requests in order."""
    gen = torch.Generator().manual_seed(seed)
    hq, hkv, d = 4, 2, 8
    requests = sum(n for n, _ in levels[0])
    pages_of = []
    next_page = 0
    for groups in levels:
        level_pages = []
        for _, tokens in groups:
            count = -(-tokens // page)
            level_pages.append(list(range(next_page, next_page + count)))
            next_page += count
        pages_of.append(level_pages)
    perm = torch.randperm(next_page + 3, generator=gen).tolist()
    pages_of = [[[perm[p] for p in ps] for ps in lv] for lv in pages_of]
    k = torch.rand(next_page + 3, hkv, page, d, generator=gen) * 2 - 1
    v = torch.rand(next_page + 3, hkv, page, d, generator=gen) * 2 - 1
    q = torch.rand(requests * qpr, hq, d, generator=gen) * 2 - 1
    qo, kv_indptr, indices, last = [], [], [], []
    for groups, level_pages in zip(levels, pages_of):
        q_ptr, kv_ptr, idx, lst = [0], [0], [], []
        for (n, tokens), ps in zip(groups, level_pages):
            q_ptr.append(q_ptr[-1] + n * qpr)
            kv_ptr.append(kv_ptr[-1] + len(ps))
            idx += ps
            lst.append(tokens - (len(ps) - 1) * page if ps else 0)
        qo.append(torch.tensor(q_ptr, dtype=torch.int32))
        kv_indptr.append(torch.tensor(kv_ptr, dtype=torch.int32))
        indices.append(torch.tensor(idx, dtype=torch.int32))
        last.append(torch.tensor(lst, dtype=torch.int32))
    c = cascade_mod.MultiLevelCascadeAttention(
        len(levels), chunk_tokens=chunk_tokens, kv_layout=layout,
        device="cpu")
    c.plan(qo, kv_indptr, indices, last, hq, hkv, d, page, causal=causal)
    caches = (k, v) if layout == "HND" else (k.permute(0, 2, 1, 3),
                                             v.permute(0, 2, 1, 3))
    o, lse = c.run(q, caches, return_lse=True)
    # Each request's whole sequence: its groups' tokens, level by level.
    for r in range(requests):
        ks, vs = [], []
        for groups, level_pages in zip(levels, pages_of):
            first = 0
            for (n, tokens), ps in zip(groups, level_pages):
                if first <= r < first + n:
                    ks.append(paged_tokens(k, ps, tokens))
                    vs.append(paged_tokens(v, ps, tokens))
                first += n
        rows = slice(r * qpr, (r + 1) * qpr)
        ref_o, ref_lse = attention_ref(q[rows], torch.cat(ks), torch.cat(vs),
                                       causal)
        assert torch.allclose(o[rows], ref_o, atol=1e-10), r
        assert torch.equal(torch.isinf(lse[rows]), torch.isinf(ref_lse))
        finite = torch.isfinite(ref_lse)
        assert torch.allclose(lse[rows][finite], ref_lse[finite]), r


def test_two_levels_decode_with_empty_suffixes():
    # A 37-token prefix (5 chunks of 8, the last partial) over 4 requests,
    # suffixes of 0, 1, 9 and 0 tokens (empty parts the merge skips).
    run_case([[(4, 37)], [(1, 0), (1, 1), (1, 9), (1, 0)]], qpr=1,
             causal=False)


def test_three_levels_causal_chunked_prefill():
    # A shared system prompt, two sub-groups, then each request's own 3+
    # tokens with 3 causal queries each; unequal chunk counts per group.
    run_case([[(4, 20)], [(3, 30), (1, 5)], [(1, 3), (1, 6), (1, 4),
                                             (1, 11)]],
             qpr=3, causal=True, seed=1)


def test_all_empty_rows_and_nhd_layout():
    # Nothing at all for the last request: O 0, LSE -inf; FlashInfer's
    # [pages, page, Hkv, D] caches.
    run_case([[(2, 8), (1, 0)], [(1, 5), (1, 0), (1, 0)]], qpr=2,
             causal=False, layout="NHD", seed=2)


def test_plan_refusals():
    c = cascade_mod.MultiLevelCascadeAttention(2, device="cpu")
    one = torch.tensor([0, 1], dtype=torch.int32)
    with pytest.raises(ValueError, match="each array list needs 2 levels"):
        c.plan([one], [one], [one], [one], 4, 2, 8, 4)
    with pytest.raises(ValueError, match="covers 2 queries, level 0 1"):
        c.plan([one, torch.tensor([0, 2], dtype=torch.int32)], [one, one],
               [torch.tensor([0], dtype=torch.int32)] * 2,
               [torch.tensor([1], dtype=torch.int32)] * 2, 4, 2, 8, 4)
    with pytest.raises(ValueError, match="not a multiple"):
        c.plan([one, one], [one, one], [one, one], [one, one], 3, 2, 8, 4)
    with pytest.raises(ValueError, match="last page holds 9 tokens"):
        c.plan([one, one], [one, one], [one, one],
               [torch.tensor([9], dtype=torch.int32)] * 2, 4, 2, 8, 4)
    with pytest.raises(RuntimeError, match="before plan"):
        c.run(torch.zeros(1, 4, 8), (None, None))
    with pytest.raises(ValueError, match="kv_layout"):
        cascade_mod.MultiLevelCascadeAttention(2, kv_layout="NDH")
