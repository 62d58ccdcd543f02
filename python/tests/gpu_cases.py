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
