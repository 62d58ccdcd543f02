"""attn.compile's cache: content-hash keys that do not depend on the
machine, hits that need no attn-compile (as on a GPU machine without LLVM),
misses that say what to do, stale entries recompiled, bad specs reported."""
import json
import os
import shutil
import subprocess
import sys

import pytest

import attn
from attn.spec import AttentionFacts

HERE = os.path.dirname(os.path.abspath(__file__))
SPEC = AttentionFacts("f16", 4, 2, 64, q_len=1, block_size=16, kv_lens=True,
                      mask="causal").spec_text("decode")


def entries(cache):
    return sorted(e for e in os.listdir(cache) if not e.startswith("."))


def test_key_is_content_hash():
    a = attn.cache_key(SPEC, ["sm_80", "sm_90"], "x")
    assert a == attn.cache_key(SPEC, "sm_80,sm_90", "x")
    assert a != attn.cache_key(SPEC, "sm_90", "x")
    assert a != attn.cache_key(SPEC + "\n", "sm_80,sm_90", "x")
    assert a != attn.cache_key(SPEC, "sm_80,sm_90", "x", version="0.0.0")


def test_hit_and_miss(compiler, cache):
    lib = attn.compile(SPEC, targets="sm_80", cache_dir=cache, name="d1")
    assert entries(cache) == [attn.cache_key(SPEC, "sm_80", "d1")]
    entry = os.path.join(cache, entries(cache)[0])
    manifest = json.load(open(os.path.join(entry, "manifest.json")))
    assert manifest["version"] == attn.__version__
    assert manifest["targets"] == ["sm_80"]
    assert sorted(os.listdir(entry)) == ["attnrt.h", "d1.h", "d1.json",
                                         "d1.mlir", "libd1.a", "libd1.so",
                                         "manifest.json"]
    assert lib.decode.tier == "decode-split"
    assert [o["name"] for o in lib.decode.operands] == [
        "q", "k", "v", "block_table", "kv_lens", "o"]
    assert attn.compile(SPEC, targets="sm_80", cache_dir=cache,
                        name="d1") is lib
    assert attn.lookup(SPEC, "sm_80", cache, "d1") == entry
    assert attn.lookup(SPEC, "sm_90", cache, "d1") is None


def test_hit_without_compiler(compiler, cache, tmp_path):
    """A copied cache serves a copied package with no attn-compile
    anywhere (no argument, no ATTN_COMPILE, not on PATH, no build/)."""
    attn.compile(SPEC, targets="sm_80", cache_dir=cache, name="d2")
    shipped = tmp_path / "shipped"
    shutil.copytree(os.path.join(HERE, "..", "attn"), shipped / "attn")
    shutil.copytree(cache, shipped / "cache")
    code = (
        "import sys, attn\n"
        "assert attn.find_compiler() is None, attn.find_compiler()\n"
        f"lib = attn.compile({SPEC!r}, targets='sm_80', name='d2')\n"
        "print(lib.decode.tier, lib.decode.sizes)\n"
        "try:\n"
        f"    attn.compile({SPEC!r}, targets='sm_90', name='d2')\n"
        "except attn.CompileError as e:\n"
        "    print('miss:', e)\n")
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(shipped),
           "ATTN_CACHE_DIR": str(shipped / "cache")}
    result = subprocess.run([sys.executable, "-c", code], capture_output=True,
                            text=True, env=env, cwd=str(tmp_path))
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == "decode-split ['batch', 'num_blocks', 'max_blocks']"
    assert lines[1].startswith("miss: attn-compile not found")
    assert "prefill_cache.py" in lines[1]
    key = attn.cache_key(SPEC, "sm_90", "d2")
    assert key in lines[1]
    # The miss is saved, and prefill_cache.py --missing compiles it where
    # attn-compile runs, under the key the miss asked for.
    saved = shipped / "cache" / "missing" / f"{key}.json"
    assert f"the request is saved as {saved}" in lines[1]
    assert json.load(open(saved))["text"] == SPEC
    tool = os.path.join(HERE, "..", "tools", "prefill_cache.py")
    result = subprocess.run([sys.executable, tool, str(shipped / "cache"),
                             "--missing", "--compiler", compiler],
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[-1].startswith("1 saved requests")
    assert not saved.exists()
    assert attn.lookup(SPEC, "sm_90", str(shipped / "cache"), "d2")


def test_stale_and_incomplete_entries(compiler, cache):
    attn.compile(SPEC, targets="sm_80", cache_dir=cache, name="d3")
    entry = os.path.join(cache, entries(cache)[0])
    path = os.path.join(entry, "manifest.json")
    manifest = json.load(open(path))
    manifest["compiler_sha256"] = "0" * 64  # made by another attn-compile
    json.dump(manifest, open(path, "w"))
    attn.compile(SPEC, targets="sm_80", cache_dir=cache, name="d3")
    assert json.load(open(path))["compiler_sha256"] != "0" * 64
    os.remove(path)  # no manifest: incomplete, not a hit
    assert attn.lookup(SPEC, "sm_80", cache, "d3") is None
    attn.compile(SPEC, targets="sm_80", cache_dir=cache, name="d3")
    assert os.path.exists(path)
    assert entries(cache) == [os.path.basename(entry)]


def test_spec_file_and_errors(compiler, cache, tmp_path):
    spec = tmp_path / "my-kernels.mlir"
    spec.write_text(SPEC)
    lib = attn.compile(str(spec), targets="sm_80", cache_dir=cache)
    assert lib.name == "my_kernels"
    bad = SPEC.replace("memref<?x2x16x64xf16>", "memref<?x3x16x64xf16>")
    with pytest.raises(attn.CompileError,
                       match=r"query heads \(4\) must be a multiple"):
        attn.compile(bad, targets="sm_80", cache_dir=cache)
    with pytest.raises(ValueError, match="target"):
        attn.compile(SPEC, targets="ampere", cache_dir=cache)
    with pytest.raises(attn.CompileError, match="not found at"):
        attn.compile(SPEC, cache_dir=cache, compiler="/nonexistent/tool")
    with pytest.raises(attn.CompileError, match="no such spec file"):
        attn.compile(str(tmp_path / "missing.mlir"), cache_dir=cache)


def test_prefill_list():
    """prefill_cache.py --list names every spec the GPU tests use."""
    tool = os.path.join(HERE, "..", "tools", "prefill_cache.py")
    result = subprocess.run([sys.executable, tool, "unused", "--list"],
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    import gpu_cases
    lines = result.stdout.splitlines()
    try:  # attn.flash_attn's, the transformers client's, the merge,
        # cascade and context-parallel, the quantized and the MLA cases,
        # where PyTorch is here
        flash = len(gpu_cases.flash_facts() + gpu_cases.hf_client_facts()
                    + gpu_cases.compose_facts() + gpu_cases.quant_facts()
                    + gpu_cases.mla_facts())
    except ImportError:
        flash = 0
    assert len(lines) == len(gpu_cases.SPEC_FILES) + len(
        gpu_cases.all_facts()) + flash
    assert all(len(line.split()[0]) == 40 for line in lines)


def test_kernel_set(compiler, tmp_path):
    """python3 -m attn.kernel_set build compiles the set into a folder; a
    copied package with no attn-compile and an empty cache then loads each
    of those kernels from $ATTN_KERNEL_SETS, compiling nothing."""
    kset = tmp_path / "set"
    env = dict(os.environ, PYTHONPATH=os.path.join(HERE, ".."))
    result = subprocess.run(
        [sys.executable, "-m", "attn.kernel_set", "build", str(kset),
         "--targets", "sm_80", "--models", "gpt-oss-20b", "--dtypes", "f16",
         "--compiler", compiler], capture_output=True, text=True, env=env)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[-1].startswith("8 kernels for sm_80")
    shipped = tmp_path / "shipped"
    shutil.copytree(os.path.join(HERE, "..", "attn"), shipped / "attn",
                    ignore=shutil.ignore_patterns("_toolchain", "_kernels"))
    code = (
        "import attn, attn.kernel_set as ks\n"
        "assert attn.find_compiler() is None, attn.find_compiler()\n"
        "for f in ks.facts(['gpt-oss-20b'], ['f16']):\n"
        "    lib = f.compile(targets=['sm_80'])\n"
        "    print(lib.kernels['attention'].tier, lib.cache_entry)\n")
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True,
        cwd=str(tmp_path),
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(shipped),
             "ATTN_CACHE_DIR": str(tmp_path / "empty"),
             "ATTN_KERNEL_SETS": str(kset)})
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert len(lines) == 8
    assert all(line.split()[1].startswith(str(kset)) for line in lines)
    assert not os.path.exists(tmp_path / "empty")  # nothing compiled


def test_import_needs_no_torch():
    code = ("import sys, attn, attn.spec, attn.library, attn.compiler\n"
            "print('torch' in sys.modules)")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True,
                            text=True, env=dict(os.environ, PYTHONPATH=os.path.join(HERE, "..")))
    assert result.stdout.strip() == "False", result.stderr
