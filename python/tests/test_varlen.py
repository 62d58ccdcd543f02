"""Packed (varlen) batches without a GPU: the spec writer's packed forms
(and that padded facts' specs stay as they were), that they compile, and
the ctypes layer over a packed library (Inputs/varlen.mlir): offsets of
batch + 1 entries, the max_q_len size no tensor gives, empty batches, under
a missing and a fake CUDA driver."""
import json
import os
import subprocess
import sys

import pytest

import attn
from attn.spec import AttentionFacts, varlen_facts_from_shapes

HERE = os.path.dirname(os.path.abspath(__file__))
VARLEN_SPEC = os.path.join(HERE, "..", "..", "test", "compile", "Inputs",
                           "varlen.mlir")


def test_packed_text():
    text = AttentionFacts("f16", 8, 2, 64, packed_q=True, packed_kv=True,
                          lse=True, mask="causal").spec_text("k")
    assert "%q: memref<?x8x64xf16>" in text
    assert "%k: memref<?x2x64xf16>" in text
    assert "%lse: memref<?x8xf32>" in text
    assert "cu_seqlens_q(%cu_seqlens_q : memref<?xi32>)" in text
    assert "cu_seqlens_k(%cu_seqlens_k : memref<?xi32>)" in text
    assert "max_q_len" not in text.split("attn.attention")[1]
    paged = AttentionFacts("bf16", 8, 2, 64, packed_q=True, block_size=16,
                           kv_lens=True, max_q_len=4, strided=True).spec_text()
    assert "%q: memref<?x8x64xbf16, strided<[?, ?, 1]>>" in paged
    assert "%k: memref<?x2x16x64xbf16, strided<[?, ?, ?, 1]>>" in paged
    assert "max_q_len = 4" in paged
    # Arguments in the op's operand order.
    args = paged.split("{")[0]
    order = [args.index(f"%{n}:") for n in
             ("q", "k", "v", "cu_seqlens_q", "block_table", "kv_lens", "o")]
    assert order == sorted(order)


def test_padded_specs_unchanged():
    """The packed fields stay out of a padded spec's text, so its library
    name (the cache key) is the one it had before they existed."""
    facts = AttentionFacts("f16", 8, 2, 64)
    assert "packed" not in facts.spec_text()
    assert facts.library_name() == "attention_72ca7a500566"


@pytest.mark.parametrize("kwargs, message", [
    (dict(packed_q=True, q_len=1), "has no q_len"),
    (dict(max_q_len=4), "max_q_len is for a packed Q"),
    (dict(packed_q=True, max_q_len=0), "max_q_len must be"),
    (dict(packed_kv=True, kv_lens=True), "no block_size or kv_lens"),
])
def test_packed_refused(kwargs, message):
    with pytest.raises(ValueError, match=message):
        AttentionFacts("f16", 4, 4, 64, **kwargs)


def test_varlen_facts_from_shapes():
    facts = varlen_facts_from_shapes("f16", (100, 8, 64), (300, 2, 64),
                                     (300, 2, 32), mask="causal")
    assert facts.packed_q and facts.packed_kv and facts.dv == 32
    paged = varlen_facts_from_shapes("f16", (100, 8, 64), (50, 2, 16, 64),
                                     (50, 2, 16, 64), paged=True,
                                     kv_lens=True)
    assert paged.block_size == 16 and not paged.packed_kv


def test_packed_compile(compiler, tmp_path):
    cases = [
        AttentionFacts("f16", 8, 2, 64, packed_q=True, packed_kv=True,
                       lse=True, mask="causal"),
        AttentionFacts("bf16", 8, 2, 128, packed_q=True, block_size=16,
                       kv_lens=True, mask="causal", max_q_len=4),
        AttentionFacts("f16", 4, 4, 64, packed_kv=True, strided=True),
    ]
    spec = tmp_path / "varlen.mlir"
    spec.write_text("\n".join(f.spec_text(f"k{i}")
                              for i, f in enumerate(cases)))
    result = subprocess.run(
        [compiler, str(spec), "--targets=sm_80", "--no-cubin", "--quiet",
         "-o", str(tmp_path)], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    meta = json.loads((tmp_path / "varlen.json").read_text())
    k0, k1, k2 = meta["kernels"]
    assert k0["sizes"] == ["batch", "total_q", "total_k", "max_q_len"]
    assert k0["decode_max_q_len"] == 16
    assert {"name": "cu_seqlens_q", "dtype": "i32",
            "shape": ["batch + 1"]} in k0["operands"]
    assert k1["max_q_len"] == 4 and "max_q_len" not in k1["sizes"]
    assert k2["sizes"] == ["batch", "q_len", "total_k"]


CHILD = r'''
import json, sys
sys.path.insert(0, sys.argv[1])
import attn

class T:
    """A duck-typed tensor: shape, dtype, a fake device pointer."""
    def __init__(self, shape, dtype="f16", ptr=1 << 20):
        self.shape, self.dtype, self.ptr = tuple(shape), dtype, ptr
    def stride(self):
        row, n = [], 1
        for s in reversed(self.shape):
            row.insert(0, n)
            n *= s
        return tuple(row)
    def data_ptr(self):
        return self.ptr
    def is_contiguous(self):
        return True

lib = attn.Library(sys.argv[2])
def packed(B=3, total_q=100, total_k=300, **change):
    t = dict(q=T((total_q, 8, 64)), k=T((total_k, 2, 64), ptr=2 << 20),
             v=T((total_k, 2, 64), ptr=3 << 20),
             cu_seqlens_q=T((B + 1,), "i32", ptr=4 << 20),
             cu_seqlens_k=T((B + 1,), "i32", ptr=5 << 20),
             o=T((total_q, 8, 64), ptr=6 << 20),
             lse=T((total_q, 8), "f32", ptr=7 << 20))
    t.update(change)
    return t
out = {}
def attempt(label, fn):
    try:
        fn()
        out[label] = ["ok"]
    except attn.AttnError as e:
        out[label] = ["AttnError", e.code, e.status, e.message]
    except Exception as e:
        out[label] = [type(e).__name__, str(e)]
kernel = lib.packed
out["sizes"] = kernel.size_values(packed())
out["output shapes"] = kernel.output_shapes(dict(out["sizes"], max_q_len=0))
attempt("valid", lambda: kernel(**packed()))
attempt("valid, max_q_len 17", lambda: kernel(sizes={"max_q_len": 17}, **packed()))
attempt("empty batch", lambda: kernel(**packed(B=0, total_q=0, total_k=0)))
attempt("decode without workspace", lambda: kernel(sizes={"max_q_len": 3}, **packed()))
attempt("offsets of two batches", lambda: kernel(**packed(cu_seqlens_k=T((3,), "i32"))))
attempt("size from a shape", lambda: kernel(sizes={"batch": 2}, **packed()))
attempt("unknown size", lambda: kernel(sizes={"q_len": 2}, **packed()))
out["can_implement"] = kernel.can_implement(batch=3, total_q=100, total_k=300, max_q_len=0)
out["can_implement B0"] = kernel.can_implement(0, 0, 0, 0)
out["can_implement max_q_len -1"] = kernel.can_implement(3, 100, 300, -1)
print(json.dumps(out))
'''


@pytest.fixture(scope="module")
def varlen_library(tmp_path_factory):
    if attn.find_compiler() is None:
        pytest.skip("attn-compile not found (set ATTN_COMPILE)")
    cache = str(tmp_path_factory.mktemp("cache"))
    return attn.compile(VARLEN_SPEC, cache_dir=cache).path


def run_child(so_path, **env):
    full = dict(os.environ)
    full.update(env)
    result = subprocess.run(
        [sys.executable, "-c", CHILD, os.path.join(HERE, ".."), so_path],
        capture_output=True, text=True, env=full, timeout=60)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_packed_library_no_driver(varlen_library, tmp_path):
    out = run_child(varlen_library,
                    ATTNRT_CUDA_DRIVER=str(tmp_path / "no-libcuda.so.1"))
    # batch from the offsets' batch + 1 entries.
    assert out["sizes"] == {"total_q": 100, "total_k": 300, "batch": 3}
    assert out["output shapes"] == {"o": [[100, 8, 64], "f16"],
                                    "lse": [[100, 8], "f32"]}
    assert out["valid"][2] == "ATTN_ERROR_NO_DRIVER", out["valid"]
    # An empty batch launches nothing and needs no driver.
    assert out["empty batch"] == ["ok"]
    assert out["offsets of two batches"][0] == "ValueError"
    assert "cu_seqlens_k dim 0 is 3 (batch + 1), but batch is 3" in \
        out["offsets of two batches"][1]
    assert out["size from a shape"] == [
        "ValueError", "packed: size batch comes from the tensors' shapes"]
    assert out["unknown size"][0] == "ValueError"
    assert "takes no size q_len" in out["unknown size"][1]
    assert out["can_implement"] is True
    assert out["can_implement B0"] is True
    assert out["can_implement max_q_len -1"] is False


def test_packed_library_fake_driver(varlen_library):
    path = os.path.join(os.path.dirname(os.path.dirname(
        attn.find_compiler())), "lib", "libfake_cuda_driver.so")
    if not os.path.exists(path):
        pytest.skip(f"{path} not built (ninja attnrt-unittests)")
    out = run_child(varlen_library, ATTNRT_CUDA_DRIVER=path)
    assert out["valid"] == ["ok"]
    assert out["valid, max_q_len 17"] == ["ok"]
    assert out["empty batch"] == ["ok"]
    # max_q_len <= 16 runs the decode code, which needs a workspace.
    assert out["decode without workspace"][0] == "ValueError"
    assert "needs a workspace" in out["decode without workspace"][1]
