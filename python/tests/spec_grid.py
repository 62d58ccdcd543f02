"""The option combinations test_spec.py compiles: every mask form and
alignment, scale and soft-cap, GQA and MQA, Dv != D, LSE, variable K/V
lengths, paged caches (decode and prefill), strided views, and the three
element types."""
import itertools

from attn.spec import AttentionFacts


def grid():
    cases = []
    masks = [dict(mask="none"), dict(mask="causal"),
             dict(mask="causal", align="top_left"),
             dict(mask="window", window=(64, 0)),
             dict(mask="window", window=(32, 16), align="top_left")]
    heads = [(8, 8, 64), (32, 8, 128), (4, 1, 64)]
    for i, (mask, (hq, hkv, d)) in enumerate(itertools.product(masks, heads)):
        dtype = ("f16", "bf16")[i % 2]
        cases.append(AttentionFacts(dtype=dtype, hq=hq, hkv=hkv, d=d,
                                    lse=i % 3 == 0, strided=i % 4 == 1,
                                    kv_lens=i % 5 == 2, **mask))
    cases += [
        AttentionFacts("f16", 8, 4, 256, scale=0.0625, softcap=50.0,
                       mask="causal", strided=True),
        AttentionFacts("bf16", 16, 16, 128, scale=0.3, softcap=30.0),
        AttentionFacts("f16", 8, 8, 128, dv=64),
        AttentionFacts("f16", 32, 8, 128, q_len=1, mask="causal"),
        AttentionFacts("bf16", 32, 8, 128, q_len=1, kv_lens=True, lse=True),
        AttentionFacts("f16", 32, 8, 128, q_len=1, block_size=16,
                       kv_lens=True, mask="causal"),
        AttentionFacts("bf16", 8, 1, 64, q_len=1, block_size=32,
                       kv_lens=True, lse=True, softcap=20.0),
        AttentionFacts("f16", 8, 2, 128, block_size=16, kv_lens=True,
                       mask="causal"),
        AttentionFacts("f16", 8, 2, 64, q_len=1, strided=True,
                       mask="window", window=(128, 0)),
        # Attention sinks: prefill, paged decode, bf16 sinks.
        AttentionFacts("f16", 8, 2, 64, mask="causal", lse=True,
                       sinks="f32"),
        AttentionFacts("bf16", 64, 8, 64, q_len=1, block_size=16,
                       kv_lens=True, mask="window", window=(127, 0),
                       sinks="bf16"),
        # Quantized caches (decode): fp8 paged with per-token scales, i8
        # with a per-tensor K scale and per-head V scales, e5m2 unscaled.
        AttentionFacts("bf16", 32, 8, 128, q_len=1, block_size=16,
                       kv_lens=True, kv_dtype="f8E4M3FN", k_scale="token",
                       v_scale="token"),
        AttentionFacts("f16", 8, 2, 64, q_len=1, kv_dtype="i8",
                       k_scale="tensor", v_scale="head", lse=True),
        AttentionFacts("f16", 8, 8, 128, q_len=1, kv_lens=True,
                       strided=True, kv_dtype="f8E5M2"),
    ]
    return cases
