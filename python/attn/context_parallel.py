"""Context parallelism: attention over a sequence split across the GPUs of
a torch.distributed process group (ring attention), forward only.

    import torch.distributed as dist, attn.context_parallel as cp
    dist.init_process_group("nccl")
    q_local = cp.zigzag_shard(q, dim=2)        # this rank's two chunks
    k_local, v_local = cp.zigzag_shard(k, dim=2), cp.zigzag_shard(v, dim=2)
    o_local = cp.ring_attention(q_local, k_local, v_local, causal=True)
    o = cp.zigzag_unshard(o_local, dim=2)      # all ranks: the whole O

The sequence is cut into 2N chunks and rank r holds chunks r and
2N - 1 - r (zigzag), so that causal work is the same on every rank. Each
of the N steps attends the local queries to one rank's K/V with attn's
kernels while the next rank's K/V travel around the ring by P2P
(torch.distributed.batch_isend_irecv, NCCL), and the steps' partial
results merge exactly through their log-sum-exps (attn.merge_states).
The distribution is torch.distributed's; attn makes the per-GPU kernels.

Backward is not built: ring_attention is an inference (forward) op.
"""
import math

import torch
import torch.distributed as dist



def _ops():
    """attn.torch, imported on the first call (it needs PyTorch 2.4+)."""
    from . import torch as attn_torch
    return attn_torch

__all__ = ["zigzag_shard", "zigzag_unshard", "ring_attention"]


def _world(group):
    return dist.get_world_size(group), dist.get_rank(group)


def zigzag_shard(x, dim=2, group=None):
    """This rank's zigzag shard of `x` along `dim` (the sequence): chunks
    r and 2N - 1 - r of 2N, concatenated. The length must divide by 2N."""
    world, rank = _world(group)
    n = x.shape[dim]
    if n % (2 * world):
        raise ValueError(f"zigzag_shard: the sequence ({n}) must divide "
                         f"into {2 * world} chunks")
    chunks = x.chunk(2 * world, dim=dim)
    return torch.cat([chunks[rank], chunks[2 * world - 1 - rank]], dim=dim)


def zigzag_unshard(local, dim=2, group=None):
    """The whole tensor from every rank's zigzag shard (all_gather)."""
    world, _ = _world(group)
    gathered = [torch.empty_like(local) for _ in range(world)]
    dist.all_gather(gathered, local.contiguous(), group=group)
    chunks = [None] * (2 * world)
    for r, part in enumerate(gathered):
        first, second = part.chunk(2, dim=dim)
        chunks[r], chunks[2 * world - 1 - r] = first, second
    return torch.cat(chunks, dim=dim)


def ring_attention(q, k, v, *, causal=True, scale=None, softcap=None,
                   return_lse=False, group=None):
    """Attention of this rank's queries over the whole sequence's keys.

    q [B, Hq, 2c, D], k/v [B, Hkv, 2c, D(v)]: this rank's zigzag shards
    (zigzag_shard). Returns O [B, Hq, 2c, Dv] for the local queries (and
    LSE [B, Hq, 2c], float32, with return_lse). `causal`: query i sees key
    j <= i in the global sequence. Forward only."""
    world, rank = _world(group)
    if q.dim() != 4 or k.dim() != 4 or v.dim() != 4:
        raise ValueError("ring_attention: q, k, v must be [B, H, S, D]")
    s_local = q.shape[2]
    if s_local % 2 or k.shape[2] != s_local or v.shape[2] != s_local:
        raise ValueError(f"ring_attention: q, k and v must hold the same "
                         f"even number of local positions (two zigzag "
                         f"chunks), got {q.shape[2]}, {k.shape[2]}, "
                         f"{v.shape[2]}")
    common = dict(scale=scale, softcap=softcap, return_lse=True)
    if world == 1:
        o, lse = _ops().attention(q, k, v, causal=causal, **common)
        return (o, lse) if return_lse else o
    c = s_local // 2
    b, hq, dv = q.shape[0], q.shape[1], v.shape[3]
    # One part a step: its rows' O and LSE; rows a step does not attend
    # keep LSE -inf, which merge_states skips.
    parts_o = q.new_empty((world, b, hq, s_local, dv))
    parts_lse = torch.full((world, b, hq, s_local), -math.inf,
                           dtype=torch.float32, device=q.device)
    send = (k.contiguous(), v.contiguous())
    recv = (torch.empty_like(send[0]), torch.empty_like(send[1]))
    to_rank = dist.get_global_rank(group, (rank + 1) % world) \
        if group is not None else (rank + 1) % world
    from_rank = dist.get_global_rank(group, (rank - 1) % world) \
        if group is not None else (rank - 1) % world
    for step in range(world):
        requests = []
        if step < world - 1:
            # The next step's K/V travel while this step's kernels run.
            ops = [dist.P2POp(dist.isend, send[0], to_rank, group),
                   dist.P2POp(dist.isend, send[1], to_rank, group),
                   dist.P2POp(dist.irecv, recv[0], from_rank, group),
                   dist.P2POp(dist.irecv, recv[1], from_rank, group)]
            requests = dist.batch_isend_irecv(ops)
        k_cur, v_cur = send
        src = (rank - step) % world
        if step == 0:
            # Local positions keep the global order: the causal mask of
            # the local block is the global one.
            o, lse = _ops().attention(q, k_cur, v_cur, causal=causal,
                                          **common)
            parts_o[0].copy_(o)
            parts_lse[0].copy_(lse)
        elif not causal:
            o, lse = _ops().attention(q, k_cur, v_cur, **common)
            parts_o[step].copy_(o)
            parts_lse[step].copy_(lse)
        elif src < rank:
            # Chunk src precedes both local chunks; chunk 2N-1-src follows
            # both: every local query sees the first half, none the second.
            o, lse = _ops().attention(q, k_cur[:, :, :c], v_cur[:, :, :c],
                                          **common)
            parts_o[step].copy_(o)
            parts_lse[step].copy_(lse)
        else:
            # src > rank: only the local second chunk (2N-1-rank) sees
            # anything, and it sees both of src's chunks.
            o, lse = _ops().attention(q[:, :, c:], k_cur, v_cur, **common)
            parts_o[step][:, :, c:].copy_(o)
            parts_lse[step][:, :, c:].copy_(lse)
        for r in requests:
            r.wait()
        if step < world - 1:
            send, recv = recv, send
    o, lse = _ops().merge_states(parts_o, parts_lse)
    return (o, lse) if return_lse else o
