"""C ABI statuses become AttnError with the library's message, without a
GPU: a library loaded through ctypes and called with duck-typed tensors
(fake device pointers) under a missing CUDA driver and under the fake
driver test/runtime builds. Each driver needs its own process (libattnrt
loads the driver once), so the calls run in a child Python."""
import json
import os
import subprocess
import sys

import pytest

import attn

HERE = os.path.dirname(os.path.abspath(__file__))
ABI_SPEC = os.path.join(HERE, "..", "..", "test", "compile", "Inputs",
                        "abi.mlir")

CHILD = r'''
import json, sys
sys.path.insert(0, sys.argv[1])
import attn

class T:
    """A duck-typed tensor: shape, dtype, strides, a fake device pointer."""
    def __init__(self, shape, dtype="f16", ptr=1 << 20, strides=None):
        self.shape, self.dtype, self.ptr = tuple(shape), dtype, ptr
        row = []
        n = 1
        for s in reversed(self.shape):
            row.insert(0, n)
            n *= s
        self._strides = tuple(strides or row)
        self._contiguous = strides is None
    def stride(self):
        return self._strides
    def data_ptr(self):
        return self.ptr
    def is_contiguous(self):
        return self._contiguous

lib = attn.Library(sys.argv[2])
B, Sq, Sk = 2, 64, 80
def prefill(**change):
    t = dict(q=T((B, 4, Sq, 64)), k=T((B, 2, Sk, 64), ptr=2 << 20),
             v=T((B, 2, Sk, 64), ptr=3 << 20), o=T((B, 4, Sq, 64), ptr=4 << 20),
             lse=T((B, 4, Sq), "f32", ptr=5 << 20))
    t.update(change)
    return t
out = {}
def attempt(label, fn):
    try:
        fn()
        out[label] = ["ok"]
    except attn.AttnError as e:
        out[label] = ["AttnError", e.code, e.status, e.message, str(e)]
    except Exception as e:
        out[label] = [type(e).__name__, str(e)]
attempt("valid", lambda: lib.prefill(**prefill()))
attempt("null q", lambda: lib.prefill(**prefill(q=T((B, 4, Sq, 64), ptr=0))))
attempt("misaligned q", lambda: lib.prefill(**prefill(q=T((B, 4, Sq, 64), ptr=(1 << 20) + 2))))
attempt("k strides", lambda: lib.prefill(**prefill(k=T((B, 2, Sk, 64), ptr=2 << 20, strides=(2 * Sk * 64, Sk * 64, 64, 2)))))
attempt("wrong dtype", lambda: lib.prefill(**prefill(q=T((B, 4, Sq, 64), "bf16"))))
attempt("wrong heads", lambda: lib.prefill(**prefill(q=T((B, 8, Sq, 64)))))
attempt("missing lse", lambda: lib.prefill(**{k: v for k, v in prefill().items() if k != "lse"}))
out["can_implement batch 0"] = lib.prefill.can_implement(0, Sq, Sk)
out["can_implement named"] = lib.prefill.can_implement(batch=B, q_len=Sq, kv_len=Sk)
attempt("decode workspace", lambda: lib.decode.workspace_bytes({"batch": 2, "num_blocks": 8, "max_blocks": 4}))
attempt("raw run", lambda: lib.prefill.run({"q": 1 << 20, "k": 2 << 20, "v": 3 << 20, "o": 4 << 20, "lse": 5 << 20}, {}, {"batch": B, "q_len": Sq, "kv_len": Sk}))
# Captures (capture0 the document ids, capture1 the slopes) and the block
# mask the workspace holds ([B, 1, 2, 1] i32 here).
def documents(**change):
    t = dict(q=T((B, 4, Sq, 64)), k=T((B, 2, Sk, 64), ptr=2 << 20),
             v=T((B, 2, Sk, 64), ptr=3 << 20),
             capture0=T((B, Sk), "i32", ptr=6 << 20),
             capture1=T((4,), "f32", ptr=7 << 20), o=T((B, 4, Sq, 64), ptr=4 << 20))
    t.update(change)
    return t
out["documents sizes"] = lib.documents.sizes
out["documents block mask"] = lib.documents.has_block_mask
ws = (8 << 20, B * 2 * 4)
attempt("documents", lambda: lib.documents(workspace=ws, **documents()))
attempt("documents reuse", lambda: lib.documents(block_mask=ws, **documents()))
attempt("documents null capture", lambda: lib.documents(workspace=ws, **documents(capture0=T((B, Sk), "i32", ptr=0))))
attempt("documents capture dtype", lambda: lib.documents(workspace=ws, **documents(capture1=T((4,), "f16", ptr=7 << 20))))
print(json.dumps(out))
'''


@pytest.fixture(scope="module")
def abi_library(tmp_path_factory):
    if attn.find_compiler() is None:
        pytest.skip("attn-compile not found (set ATTN_COMPILE)")
    cache = str(tmp_path_factory.mktemp("cache"))
    lib = attn.compile(ABI_SPEC, cache_dir=cache)
    return lib.path


def run_child(so_path, **env):
    full = dict(os.environ)
    full.update(env)
    result = subprocess.run(
        [sys.executable, "-c", CHILD, os.path.join(HERE, ".."), so_path],
        capture_output=True, text=True, env=full, timeout=60)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def fake_driver(name="libfake_cuda_driver.so"):
    compiler = attn.find_compiler()
    path = os.path.join(os.path.dirname(os.path.dirname(compiler)), "lib",
                        name)
    if not os.path.exists(path):
        pytest.skip(f"{path} not built (ninja attnrt-unittests)")
    return path


def test_checks_before_the_driver(abi_library, tmp_path):
    out = run_child(abi_library,
                    ATTNRT_CUDA_DRIVER=str(tmp_path / "no-libcuda.so.1"))
    code, status, message = out["null q"][1:4]
    assert (code, status) == (1, "ATTN_ERROR_NULL_POINTER")
    assert "q" in message
    code, status, message, text = out["misaligned q"][1:5]
    assert (code, status) == (2, "ATTN_ERROR_MISALIGNED")
    assert "q (0x100002) is not 16-byte aligned" in message
    assert text.startswith("ATTN_ERROR_MISALIGNED (2): prefill: q")
    code, status, message = out["k strides"][1:4]
    assert (code, status) == (4, "ATTN_ERROR_UNSUPPORTED_STRIDE")
    assert "k stride 3 is 2" in message
    assert out["can_implement batch 0"] is False
    assert out["can_implement named"] is True
    # Checked in Python before the C call, naming the operand.
    assert out["wrong dtype"][0] == "ValueError"
    assert "q is bf16, the kernel takes f16" in out["wrong dtype"][1]
    assert out["wrong heads"][0] == "ValueError"
    assert "q dim 1 is 8, the kernel is built for 4" in out["wrong heads"][1]
    assert out["missing lse"] == ["ValueError", "prefill: missing ['lse']"]


def test_no_driver(abi_library, tmp_path):
    missing = str(tmp_path / "no-libcuda.so.1")
    out = run_child(abi_library, ATTNRT_CUDA_DRIVER=missing)
    for label in ("valid", "decode workspace", "raw run"):
        kind, code, status, message = out[label][:4]
        assert (kind, code, status) == ("AttnError", 6,
                                        "ATTN_ERROR_NO_DRIVER"), out[label]
        assert "cannot load the CUDA driver" in message
        assert missing in message


def test_fake_driver(abi_library):
    out = run_child(abi_library, ATTNRT_CUDA_DRIVER=fake_driver())
    assert out["valid"] == ["ok"]
    assert out["raw run"] == ["ok"]
    assert out["decode workspace"][0] == "ok"
    # The argument checks do not depend on the driver.
    assert out["null q"][2] == "ATTN_ERROR_NULL_POINTER"
    # Captures are operands named capture<N>, their dynamic dims sizes of
    # their own; the block mask is computed per call or reused.
    assert out["documents sizes"] == ["batch", "q_len", "kv_len",
                                      "capture0_size0", "capture0_size1"]
    assert out["documents block mask"] is True
    assert out["documents"] == ["ok"], out["documents"]
    assert out["documents reuse"] == ["ok"], out["documents reuse"]
    assert out["documents null capture"][2] == "ATTN_ERROR_NULL_POINTER"
    assert "capture0 is NULL" in out["documents null capture"][3]
    assert out["documents capture dtype"][0] == "ValueError"
    assert "capture1" in out["documents capture dtype"][1]


def test_fake_driver_failures(abi_library):
    out = run_child(abi_library, ATTNRT_CUDA_DRIVER=fake_driver(),
                    FAKE_CUDA_DEVICE_COUNT="0")
    assert out["valid"][2] == "ATTN_ERROR_NO_DEVICE", out["valid"]
    assert out["valid"][3]
    out = run_child(abi_library, ATTNRT_CUDA_DRIVER=fake_driver(),
                    FAKE_CUDA_LAUNCH_RESULT="719")  # CUDA_ERROR_LAUNCH_FAILED
    assert out["valid"][2] == "ATTN_ERROR_LAUNCH_FAILED", out["valid"]
    assert out["valid"][3]
