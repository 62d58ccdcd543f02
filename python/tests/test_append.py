"""attn.cache_append kernels through python/attn, without a GPU: the
library's JSON names the caches as outputs, sizes come from the tensors,
and calls reach libattnrt's checks and (under the fake driver) its launch.
Each driver needs its own process, so the calls run in a child Python."""
import json
import os
import subprocess
import sys

import pytest

import attn

HERE = os.path.dirname(os.path.abspath(__file__))
APPEND_SPEC = os.path.join(HERE, "..", "..", "test", "compile", "Inputs",
                           "append.mlir")

CHILD = r'''
import json, sys
sys.path.insert(0, sys.argv[1])
import attn

class T:
    """A duck-typed tensor: shape, dtype, strides, a fake device pointer."""
    def __init__(self, shape, dtype="f16", ptr=1 << 20):
        self.shape, self.dtype, self.ptr = tuple(shape), dtype, ptr
        row, n = [], 1
        for s in reversed(self.shape):
            row.insert(0, n)
            n *= s
        self._strides = tuple(row)
    def stride(self):
        return self._strides
    def data_ptr(self):
        return self.ptr
    def is_contiguous(self):
        return True

lib = attn.Library(sys.argv[2])
B, CAP = 3, 100
def decode(**change):
    t = dict(k_new=T((B, 8, 1, 128)), v_new=T((B, 8, 1, 128), ptr=2 << 20),
             kv_lens=T((B,), "i32", ptr=3 << 20),
             k_cache=T((B, 8, CAP, 128), ptr=4 << 20),
             v_cache=T((B, 8, CAP, 128), ptr=5 << 20))
    t.update(change)
    return t
out = {"outputs": [o["name"] for o in lib.decode_append.outputs],
       "sizes": list(lib.decode_append.sizes),
       "paged sizes": list(lib.paged_append.sizes)}
def attempt(label, fn):
    try:
        fn()
        out[label] = ["ok"]
    except attn.AttnError as e:
        out[label] = ["AttnError", e.code, e.status, e.message]
    except Exception as e:
        out[label] = [type(e).__name__, str(e)]
attempt("valid", lambda: lib.decode_append(**decode()))
attempt("misaligned k_new", lambda: lib.decode_append(**decode(k_new=T((B, 8, 1, 128), ptr=(1 << 20) + 2))))
attempt("other capacity", lambda: lib.decode_append(**decode(v_cache=T((B, 8, CAP + 1, 128), ptr=5 << 20))))
print(json.dumps(out))
'''


@pytest.fixture(scope="module")
def append_library(tmp_path_factory):
    if attn.find_compiler() is None:
        pytest.skip("attn-compile not found (set ATTN_COMPILE)")
    cache = str(tmp_path_factory.mktemp("cache"))
    return attn.compile(APPEND_SPEC, cache_dir=cache).path


def run_child(so_path, **env):
    full = dict(os.environ)
    full.update(env)
    result = subprocess.run(
        [sys.executable, "-c", CHILD, os.path.join(HERE, ".."), so_path],
        capture_output=True, text=True, env=full, timeout=60)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_append_without_driver(append_library, tmp_path):
    out = run_child(append_library,
                    ATTNRT_CUDA_DRIVER=str(tmp_path / "no-libcuda.so"))
    assert out["outputs"] == ["k_cache", "v_cache"]
    assert out["sizes"] == ["batch", "capacity"]
    assert out["paged sizes"] == ["batch", "num_blocks", "max_blocks",
                                  "new_len"]
    assert out["valid"][2] == "ATTN_ERROR_NO_DRIVER", out["valid"]
    # Checked before the driver: alignment, and sizes that disagree.
    assert out["misaligned k_new"][2] == "ATTN_ERROR_MISALIGNED"
    assert "k_new" in out["misaligned k_new"][3]
    assert out["other capacity"][0] == "ValueError", out["other capacity"]


def test_append_fake_driver(append_library):
    compiler = attn.find_compiler()
    driver = os.path.join(os.path.dirname(os.path.dirname(compiler)), "lib",
                          "libfake_cuda_driver.so")
    if not os.path.exists(driver):
        pytest.skip(f"{driver} not built (ninja attnrt-unittests)")
    out = run_child(append_library, ATTNRT_CUDA_DRIVER=driver)
    assert out["valid"] == ["ok"], out["valid"]
