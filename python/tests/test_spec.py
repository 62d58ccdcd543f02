"""The spec writer: its checks, its text, and that every option
combination it writes compiles with attn-compile."""
import json
import os
import subprocess

import pytest

import attn
from attn.spec import AttentionFacts
from spec_grid import grid


def test_mask_and_attribute_text():
    text = AttentionFacts("bf16", 8, 2, 64, mask="window", window=(64, 0),
                          scale=0.125, softcap=1e-5).spec_text("k")
    assert "memref<?x8x?x64xbf16>" in text
    assert "memref<?x2x?x64xbf16>" in text
    # The op's attribute order: scale, mask, softcap; floats with a '.'.
    assert ("scale = 0.125 mask = <window 64, 0, bottom_right> "
            "softcap = 1.000000000e-05") in text
    assert "mask = <causal>" in AttentionFacts(
        "f16", 4, 4, 64, mask="causal", align="top_left").spec_text()
    assert "mask" not in AttentionFacts("f16", 4, 4, 64).spec_text(
        ).split("attn.attention")[1]


def test_decode_paged_strided_lse_text():
    text = AttentionFacts("f16", 32, 8, 128, q_len=1, block_size=16,
                          kv_lens=True, lse=True).spec_text("d")
    assert "%q: memref<?x32x1x128xf16>" in text
    assert "%k: memref<?x8x16x128xf16>" in text
    assert "block_table(%block_table : memref<?x?xi32>)" in text
    assert "kv_lens(%kv_lens : memref<?xi32>)" in text
    assert "lse(%lse : memref<?x32x1xf32>)" in text
    strided = AttentionFacts("f16", 4, 4, 64, dv=32, strided=True).spec_text()
    assert "memref<?x4x?x32xf16, strided<[?, ?, ?, 1]>>" in strided


def test_sinks_text():
    text = AttentionFacts("bf16", 8, 2, 64, q_len=1, block_size=16,
                          kv_lens=True, sinks="bf16").spec_text("s")
    assert "%sinks: memref<8xbf16>" in text
    # After kv_lens, before the outputs, as the op's syntax orders them.
    at = text.index("sinks(%sinks : memref<8xbf16>)")
    assert text.index("kv_lens(%kv_lens") < at < text.index("-> o(")
    # Facts without sinks keep their spec (and cached library) unchanged.
    assert "sinks" not in AttentionFacts("f16", 8, 2, 64).spec_text()
    with pytest.raises(ValueError, match="sinks 'f64'"):
        AttentionFacts("f16", 8, 2, 64, sinks="f64")


def test_quantized_cache_text():
    paged = AttentionFacts("bf16", 8, 2, 128, q_len=1, block_size=16,
                           kv_lens=True, kv_dtype="f8E4M3FN",
                           k_scale="token", v_scale="head").spec_text("q")
    assert "%k: memref<?x2x16x128xf8E4M3FN>" in paged
    assert "%v: memref<?x2x16x128xf8E4M3FN>" in paged
    # Per token: K's shape without D; per head: [Hkv]; per tensor: [].
    assert "%k_scale: memref<?x2x16xf32>" in paged
    assert "%v_scale: memref<2xf32>" in paged
    at = paged.index("k_scale(%k_scale")
    assert paged.index("kv_lens(%kv_lens") < at < paged.index(
        "v_scale(%v_scale") < paged.index("-> o(")
    packed = AttentionFacts("f16", 8, 2, 64, packed_q=True, packed_kv=True,
                            max_q_len=1, kv_dtype="i8", k_scale="token",
                            v_scale="tensor").spec_text("p")
    assert "%k_scale: memref<?x2xf32>" in packed
    assert "%v_scale: memref<f32>" in packed
    # Scales stay contiguous under strided K/V.
    strided = AttentionFacts("f16", 8, 2, 64, q_len=1, strided=True,
                             kv_dtype="i8", k_scale="token").spec_text()
    assert "%k_scale: memref<?x2x?xf32>" in strided
    # Float facts keep their spec (and cached library) unchanged.
    plain = AttentionFacts("f16", 8, 2, 64)
    for word in ("kv_dtype", "k_scale", "v_scale"):
        assert word not in plain.spec_text()


def test_mla_text():
    text = AttentionFacts("bf16", 16, 1, 576, dv=512, q_len=1, block_size=64,
                          kv_lens=True, lse=True, scale=0.1352,
                          v_from_k=True).spec_text("mla")
    # No v operand: V is k's first 512 columns.
    assert "%v" not in text
    assert "k(%k : memref<?x1x64x576xbf16>) v_from_k" in text
    assert "%o: memref<?x16x1x512xbf16>" in text
    fp8 = AttentionFacts("bf16", 16, 1, 576, dv=512, q_len=1, block_size=64,
                         kv_lens=True, kv_dtype="f8E4M3FN", k_scale="token",
                         v_from_k=True).spec_text()
    assert "k_scale(%k_scale : memref<?x1x64xf32>)" in fp8
    assert "v_scale" not in fp8
    # Other facts keep their spec (and cached library) unchanged.
    assert "v_from_k" not in AttentionFacts("f16", 8, 2, 64).spec_text()
    assert "v_from_k" not in repr(AttentionFacts("f16", 8, 2, 64))


@pytest.mark.parametrize("kwargs, message", [
    (dict(d=512, dv=576, v_from_k=True), "dv \\(576\\) must be at most d"),
    (dict(kv_dtype="i8", v_scale="head", v_from_k=True), "no v_scale"),
    (dict(kv_dtype="f8E4M3"), "kv_dtype 'f8E4M3'"),
    (dict(kv_dtype="i8", k_scale="block"), "k_scale 'block'"),
    (dict(v_scale="head"), "v_scale dequantizes a quantized K/V cache"),
    (dict(dtype="f64"), "dtype"),
    (dict(hq=6, hkv=4), "multiple of K/V heads"),
    (dict(d=0), "d must be a positive int"),
    (dict(mask="window"), "window"),
    (dict(mask="causal", window=(4, 0)), "window"),
    (dict(mask="window", window=(-1, 0)), "window must be"),
    (dict(scale=0.0), "scale must be positive"),
    (dict(softcap=float("inf")), "softcap must be positive"),
    (dict(block_size=16), "needs kv_lens"),
    (dict(align="middle"), "align"),
    (dict(q_len=0), "q_len"),
])
def test_facts_refused(kwargs, message):
    base = dict(dtype="f16", hq=4, hkv=4, d=64)
    base.update(kwargs)
    with pytest.raises(ValueError, match=message):
        AttentionFacts(**base)


def test_bad_kernel_name():
    with pytest.raises(ValueError, match="C identifier"):
        AttentionFacts("f16", 4, 4, 64).spec_text("1bad")


def test_grid_compiles(compiler, tmp_path):
    """Every combination in spec_grid compiles for a GPU target, and the
    library's JSON describes the operands the facts say."""
    cases = grid()
    spec = tmp_path / "grid.mlir"
    spec.write_text("\n".join(f.spec_text(f"k{i}")
                              for i, f in enumerate(cases)))
    result = subprocess.run(
        [compiler, str(spec), "--targets=sm_80", "--no-cubin", "-o",
         str(tmp_path)], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    meta = json.loads((tmp_path / "grid.json").read_text())
    assert len(meta["kernels"]) == len(cases)
    for facts, kernel in zip(cases, meta["kernels"]):
        names = [o["name"] for o in kernel["operands"]]
        want = ["q", "k", "v"]
        want += ["block_table"] if facts.block_size else []
        want += ["kv_lens"] if facts.kv_lens else []
        want += ["sinks"] if facts.sinks else []
        want += ["k_scale"] if facts.k_scale else []
        want += ["v_scale"] if facts.v_scale else []
        want += ["o"] + (["lse"] if facts.lse else [])
        assert names == want, (facts, names)
        q = kernel["operands"][0]
        assert q["dtype"] == facts.dtype
        k = kernel["operands"][1]
        assert k["dtype"] == (facts.kv_dtype or facts.dtype)
        assert q["shape"][1] == facts.hq and q["shape"][3] == facts.d
        assert q["shape"][2] == (facts.q_len or "q_len"), (facts, q)
        o = kernel["operands"][names.index("o")]
        assert o["shape"][3] == facts.value_dim
        expect_tier = "decode-split" if facts.q_len == 1 else "mma"
        assert kernel["tier"] == expect_tier, (facts, kernel["tier"])


def test_f32_refused_with_compiler_message(compiler, cache):
    text = AttentionFacts("f32", 4, 4, 64).spec_text("f32_kernel")
    with pytest.raises(attn.CompileError,
                       match="mma tier takes f16 or bf16 inputs"):
        attn.compile(text, targets="sm_80", cache_dir=cache)
    assert not os.path.exists(cache) or not [
        e for e in os.listdir(cache) if not e.startswith(".")]
