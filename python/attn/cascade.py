"""Cascade (shared-prefix) attention on attn's kernels, in the spirit of
FlashInfer's MultiLevelCascadeAttentionWrapper.

A batch of requests that share a prefix (a system prompt, parallel
samples, beams) reads the prefix's K/V once per group instead of once per
request: at each level, the queries of a group become one multi-query
problem over the group's pages, and the levels' partial results merge
exactly through their log-sum-exps (attn.merge_states).

    import attn.cascade
    cascade = attn.cascade.MultiLevelCascadeAttention(num_levels=2)
    cascade.plan(qo_indptr_arr, paged_kv_indptr_arr, paged_kv_indices_arr,
                 paged_kv_last_page_len_arr, num_qo_heads, num_kv_heads,
                 head_dim, page_size)
    o = cascade.run(q, (k_cache, v_cache))

Level l has groups g = 0 .. G_l - 1: qo_indptr_arr[l] [G_l + 1] splits
the packed queries q [total_q, Hq, D] into the groups (every level covers
all of them, in order), and paged_kv_indptr_arr[l] [G_l + 1],
paged_kv_indices_arr[l] and paged_kv_last_page_len_arr[l] [G_l] name each
group's pages (FlashInfer's CSR form). The caches are attn's paged layout
[num_pages, Hkv, page_size, D] (kv_layout="HND"), or FlashInfer's
[num_pages, page_size, Hkv, D] (kv_layout="NHD", read through a view).

Levels before the last are not masked (the shared tokens precede every
query); `causal` applies to the last level, each request's own tokens,
bottom-right aligned: a request's queries are the last tokens of its
last-level group, so that group holds at least as many tokens as it has
queries. Long unmasked levels are cut into chunks of
`chunk_tokens` keys, each its own sequence with the group's queries, so
that a level of one group still fills the GPU.

The unmasked levels run as one launch: every (chunk, group) sequence of
every unmasked level packs into one attention_varlen call, whose O and
LSE are already the merge's parts (no concatenation), and whose small
sequences (a decode's suffixes) fill the tail of the large ones' grid. A
causal last level runs beside it on a side stream.
"""
import math

import torch



def _ops():
    """attn.torch, imported on the first call (it needs PyTorch 2.4+)."""
    from . import torch as attn_torch
    return attn_torch

__all__ = ["MultiLevelCascadeAttention"]


def _host_list(name, t):
    if isinstance(t, torch.Tensor):
        if t.dim() != 1 or t.dtype.is_floating_point:
            raise TypeError(f"cascade: {name} must be a 1-D integer tensor, "
                            f"got {t.dtype} {tuple(t.shape)}")
        return [int(x) for x in t.tolist()]
    return [int(x) for x in t]


class _no_stream:
    """A context that changes nothing (CPU tensors: no streams)."""

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


class _Level:
    """One launch: packed queries repeated `chunks` times, one sequence
    per (chunk, group) of the levels it holds, paged K/V through its
    block table."""

    def __init__(self, chunks, cu_seqlens_q, block_table, kv_lens,
                 max_q_len, causal):
        self.chunks = chunks
        self.cu_seqlens_q = cu_seqlens_q
        self.block_table = block_table
        self.kv_lens = kv_lens
        self.max_q_len = max_q_len
        self.causal = causal


def _fuse(levels, total_q):
    """Levels (chunks, cu_seqlens_q, table, kv_lens, max_q, masked) that
    share a mask, as one launch: their sequences in order, the queries
    repeated once per chunk of each, block-table rows padded to one
    width."""
    if len(levels) == 1:
        return levels[0]
    width = max(len(lv[2][0]) for lv in levels)
    chunks, cu, table, kv_lens = 0, [0], [], []
    for n, level_cu, level_table, level_lens, _, _ in levels:
        cu += [chunks * total_q + x for x in level_cu[1:]]
        table += [row + [0] * (width - len(row)) for row in level_table]
        kv_lens += level_lens
        chunks += n
    return (chunks, cu, table, kv_lens, max(lv[4] for lv in levels),
            levels[0][5])


class MultiLevelCascadeAttention:
    """Multi-level cascade attention over paged K/V caches: plan() once for
    a batch's structure, run() for each layer's q and caches."""

    def __init__(self, num_levels, *, kv_layout="HND", chunk_tokens=2048,
                 device="cuda"):
        if int(num_levels) < 1:
            raise ValueError(f"cascade: num_levels must be >= 1, got "
                             f"{num_levels!r}")
        if kv_layout not in ("HND", "NHD"):
            raise ValueError(f"cascade: kv_layout must be 'HND' or 'NHD', "
                             f"got {kv_layout!r}")
        if int(chunk_tokens) < 1:
            raise ValueError(f"cascade: chunk_tokens must be >= 1, got "
                             f"{chunk_tokens!r}")
        self.num_levels = int(num_levels)
        self.kv_layout = kv_layout
        self.chunk_tokens = int(chunk_tokens)
        self.device = torch.device(device)
        self._levels = None

    def _stream(self, level):
        """The side stream of `level` (made once, on first use)."""
        streams = self.__dict__.setdefault("_streams", {})
        if level not in streams:
            streams[level] = torch.cuda.Stream(device=self.device)
        return streams[level]

    def plan(self, qo_indptr_arr, paged_kv_indptr_arr, paged_kv_indices_arr,
             paged_kv_last_page_len_arr, num_qo_heads, num_kv_heads,
             head_dim, page_size, causal=False, sm_scale=None,
             logits_soft_cap=None):
        """The batch's structure, level by level (module docstring); reads
        the index arrays on the host once, so run() launches without a
        synchronization."""
        arrays = (qo_indptr_arr, paged_kv_indptr_arr, paged_kv_indices_arr,
                  paged_kv_last_page_len_arr)
        if any(len(a) != self.num_levels for a in arrays):
            raise ValueError(f"cascade: each array list needs "
                             f"{self.num_levels} levels, got "
                             f"{[len(a) for a in arrays]}")
        if num_qo_heads % num_kv_heads:
            raise ValueError(f"cascade: {num_qo_heads} query heads are not a "
                             f"multiple of {num_kv_heads} K/V heads")
        self.num_qo_heads, self.num_kv_heads = num_qo_heads, num_kv_heads
        self.head_dim, self.page_size = head_dim, page_size
        self.sm_scale, self.softcap = sm_scale, logits_soft_cap
        self.chunk_pages = max(1, self.chunk_tokens // page_size)
        total_q = None
        levels = []
        for level in range(self.num_levels):
            qo = _host_list("qo_indptr", qo_indptr_arr[level])
            kv_indptr = _host_list("paged_kv_indptr",
                                   paged_kv_indptr_arr[level])
            indices = _host_list("paged_kv_indices",
                                 paged_kv_indices_arr[level])
            last = _host_list("paged_kv_last_page_len",
                              paged_kv_last_page_len_arr[level])
            groups = len(qo) - 1
            if groups < 1 or len(kv_indptr) != groups + 1 or \
                    len(last) != groups:
                raise ValueError(
                    f"cascade: level {level} has {len(qo)} qo_indptr, "
                    f"{len(kv_indptr)} paged_kv_indptr and {len(last)} "
                    f"last_page_len entries; G groups take G + 1, G + 1, G")
            if qo[0] != 0 or any(a > b for a, b in zip(qo, qo[1:])):
                raise ValueError(f"cascade: level {level}'s qo_indptr must "
                                 "start at 0 and not decrease")
            if total_q is None:
                total_q = qo[-1]
            elif qo[-1] != total_q:
                raise ValueError(f"cascade: level {level} covers {qo[-1]} "
                                 f"queries, level 0 {total_q}; every level "
                                 "covers all of them")
            pages = [indices[kv_indptr[g]:kv_indptr[g + 1]]
                     for g in range(groups)]
            lens = []
            for g in range(groups):
                n = len(pages[g])
                if n and not 1 <= last[g] <= page_size:
                    raise ValueError(f"cascade: level {level} group {g}'s "
                                     f"last page holds {last[g]} tokens; "
                                     f"1 to {page_size}")
                lens.append((n - 1) * page_size + last[g] if n else 0)
            is_last = level == self.num_levels - 1
            masked = causal and is_last
            # Chunks of an unmasked level: each a sequence of its own.
            chunks = 1 if masked else max(
                1, max(math.ceil(len(p) / self.chunk_pages) for p in pages))
            per = max(len(p) for p in pages) if chunks == 1 else \
                self.chunk_pages
            per = max(per, 1)
            table, kv_lens, cu = [], [], [0]
            for c in range(chunks):
                for g in range(groups):
                    first = c * per
                    mine = pages[g][first:first + per]
                    table.append(mine + [0] * (per - len(mine)))
                    kv_lens.append(max(0, min(per * page_size,
                                              lens[g] - first * page_size)))
                    cu.append(c * total_q + qo[g + 1])
            max_q = max(b - a for a, b in zip(qo, qo[1:]))
            levels.append((chunks, cu, table, kv_lens, max_q, masked))
        # The unmasked levels as one launch, then a masked one.
        unmasked = [lv for lv in levels if not lv[5]]
        launches = [lv for lv in levels if lv[5]]
        if unmasked:
            launches.insert(0, _fuse(unmasked, total_q))
        dev = self.device
        self.total_q = total_q
        self._levels = [_Level(
            chunks,
            torch.tensor(cu, dtype=torch.int32, device=dev),
            torch.tensor(table, dtype=torch.int32, device=dev),
            torch.tensor(kv_lens, dtype=torch.int32, device=dev),
            max_q, masked)
            for chunks, cu, table, kv_lens, max_q, masked in launches]
        return self

    def run(self, q, paged_kv_cache, return_lse=False):
        """q [total_q, Hq, D]; paged_kv_cache (k_cache, v_cache) in
        kv_layout. Returns O [total_q, Hq, D] (and LSE [total_q, Hq],
        float32, natural log, with return_lse)."""
        if self._levels is None:
            raise RuntimeError("cascade: run() before plan()")
        k_cache, v_cache = paged_kv_cache
        if self.kv_layout == "NHD":
            k_cache = k_cache.permute(0, 2, 1, 3)
            v_cache = v_cache.permute(0, 2, 1, 3)
        if q.dim() != 3 or q.shape[0] != self.total_q or \
                q.shape[1] != self.num_qo_heads:
            raise ValueError(f"cascade: q must be [{self.total_q}, "
                             f"{self.num_qo_heads}, D] as planned, got "
                             f"{tuple(q.shape)}")
        o_parts, lse_parts = [], []
        # The launches are independent until the merge: a causal last
        # level runs on a side stream, beside the unmasked levels' launch,
        # and the merge waits for both.
        main = torch.cuda.current_stream() if q.is_cuda else None
        for i, level in enumerate(self._levels):
            side = self._stream(i) if main is not None and i else None
            if side is not None:
                side.wait_stream(main)
            with torch.cuda.stream(side) if side is not None else \
                    _no_stream():
                q_level = q if level.chunks == 1 else \
                    q.repeat(level.chunks, 1, 1)
                o, lse = _ops().attention_varlen(
                    q_level, k_cache, v_cache, level.cu_seqlens_q, None,
                    level.max_q_len, causal=level.causal,
                    block_table=level.block_table, kv_lens=level.kv_lens,
                    scale=self.sm_scale, softcap=self.softcap,
                    return_lse=True)
            if side is not None:
                main.wait_stream(side)
                # Made on the side stream, read on the main one.
                for t in (q_level, o, lse):
                    t.record_stream(main)
            o_parts.append(o.view(level.chunks, self.total_q, *o.shape[1:]))
            lse_parts.append(lse.view(level.chunks, self.total_q,
                                      lse.shape[1]))
        o_all = o_parts[0] if len(o_parts) == 1 else torch.cat(o_parts)
        lse_all = lse_parts[0] if len(lse_parts) == 1 else \
            torch.cat(lse_parts)
        return _ops().merge_states(o_all, lse_all,
                                       return_lse=return_lse)
