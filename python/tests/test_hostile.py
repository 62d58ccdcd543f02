"""attn.compile and attn.Library used wrongly or with broken tools, files
and caches, without attn-compile or a GPU: every failure is attn's own
error (CompileError, LibraryError) naming the path and the problem, with
the original exception chained, and a failed compile leaves no cache entry
that later calls would take as complete. attn-compile is stood in for by
small scripts; a stub lib<name>.so (two C functions, built with the C
compiler where there is one) stands in for a real library."""
import json
import os
import pathlib
import shutil
import subprocess
import sys

import pytest

import attn
import attn.compiler
from attn.spec import AttentionFacts

SPEC = AttentionFacts("f16", 4, 2, 64, q_len=1, block_size=16, kv_lens=True,
                      mask="causal").spec_text("decode")
TRUE = shutil.which("true") or "/bin/true"

# Stands in for attn-compile: writes lib<name>.so (a copy of SO, or
# garbage) and <name>.json (JSON_TEXT with {name} filled in) into the last
# -o folder, either of them left out when None.
FAKE = r'''#!{python}
import shutil, sys
args = sys.argv[1:]
out = [args[i + 1] for i, a in enumerate(args) if a == "-o"][-1]
name = [a.split("=", 1)[1] for a in args if a.startswith("--name=")][0]
so, json_text = {so!r}, {json_text!r}
if so == "garbage":
    open(f"{{out}}/lib{{name}}.so", "wb").write(b"not a shared library")
elif so is not None:
    shutil.copy(so, f"{{out}}/lib{{name}}.so")
if json_text is not None:
    open(f"{{out}}/{{name}}.json", "w").write(json_text.replace("NAME", name))
'''
GOOD_JSON = '{"library": "NAME", "prefix": "attn", "kernels": []}'


def entries(cache):
    """The cache's entries, and any temporary folder left behind."""
    if not os.path.isdir(cache):
        return []
    return sorted(os.listdir(cache))


@pytest.fixture
def fake(tmp_path):
    """fake(so=..., json_text=...): the path of a stand-in attn-compile."""
    count = [0]

    def make(so=None, json_text=None):
        count[0] += 1
        path = tmp_path / f"fake-attn-compile-{count[0]}"
        path.write_text(FAKE.format(python=sys.executable, so=so,
                                    json_text=json_text))
        path.chmod(0o755)
        return str(path)
    return make


@pytest.fixture(scope="session")
def stub_so(tmp_path_factory):
    """A shared library with attn_status_string and attn_last_error: what
    Library needs of a library without kernels."""
    cc = shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")
    if cc is None:
        pytest.skip("no C compiler for the stub library")
    folder = tmp_path_factory.mktemp("stub")
    source = folder / "stub.c"
    source.write_text(
        'const char *attn_status_string(int code) { return "stub"; }\n'
        'const char *attn_last_error(void) { return ""; }\n')
    so = folder / "libstub.so"
    result = subprocess.run([cc, "-shared", "-fPIC", "-o", str(so),
                             str(source)], capture_output=True, text=True)
    if result.returncode != 0:
        pytest.skip(f"cannot build the stub library: {result.stderr}")
    return str(so)


@pytest.fixture
def no_compiler(monkeypatch):
    """No attn-compile anywhere, as on a GPU machine without LLVM."""
    monkeypatch.setattr(attn.compiler, "find_compiler",
                        lambda compiler=None: None)


def broken_entry(cache, files):
    """A cache entry for SPEC (sm_80, name "d") with a manifest and the
    given {file name: bytes}."""
    entry = os.path.join(cache, attn.cache_key(SPEC, "sm_80", "d"))
    os.makedirs(entry)
    with open(os.path.join(entry, "manifest.json"), "w") as f:
        json.dump({"name": "d", "compiler_sha256": None}, f)
    for file, data in files.items():
        with open(os.path.join(entry, file), "wb") as f:
            f.write(data)
    return entry


# -- 1. a compile that writes nothing leaves nothing ----------------------
def test_compiler_writing_nothing_caches_nothing(cache, monkeypatch):
    for _ in range(2):
        with pytest.raises(attn.CompileError,
                           match=r"exited 0 but did not write libd\.so and "
                                 r"d\.json") as info:
            attn.compile(SPEC, targets="sm_80", cache_dir=cache, name="d",
                         compiler=TRUE)
        assert "nothing was cached" in str(info.value)
        assert entries(cache) == []
    assert attn.lookup(SPEC, "sm_80", cache, "d") is None
    # Later, with no attn-compile anywhere: a miss, not a poisoned hit.
    monkeypatch.setattr(attn.compiler, "find_compiler",
                        lambda compiler=None: None)
    with pytest.raises(attn.CompileError, match="attn-compile not found"):
        attn.compile(SPEC, targets="sm_80", cache_dir=cache, name="d")


def test_output_moved_by_extra_args(cache, fake, tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    tool = fake(so="garbage", json_text=GOOD_JSON)
    with pytest.raises(attn.CompileError, match=r"did not write .*extra_args"):
        attn.compile(SPEC, targets="sm_80", cache_dir=cache, name="d",
                     compiler=tool, extra_args=["-o", str(elsewhere)])
    assert sorted(os.listdir(elsewhere)) == ["d.json", "libd.so"]
    assert entries(cache) == []


@pytest.mark.parametrize("so,json_text,match", [
    ("garbage", None, r"did not write d\.json"),
    ("garbage", "{not json", r"unusable output: .*d\.json' is not JSON"),
    ("garbage", "{}", r"unusable output: .*no 'library' key"),
    ("garbage", GOOD_JSON, r"library for d does not load: cannot load"),
])
def test_unusable_output_caches_nothing(cache, fake, so, json_text, match):
    tool = fake(so=so, json_text=json_text)
    with pytest.raises(attn.CompileError, match=match):
        attn.compile(SPEC, targets="sm_80", cache_dir=cache, name="d",
                     compiler=tool)
    assert entries(cache) == []
    assert attn.lookup(SPEC, "sm_80", cache, "d") is None


@pytest.mark.parametrize("files", [
    {},                                                    # files missing
    {"d.json": GOOD_JSON.replace("NAME", "d").encode()},   # no library
    {"libd.so": b"garbage", "d.json": b"{"},               # corrupt JSON
    {"libd.so": b"garbage",
     "d.json": GOOD_JSON.replace("NAME", "d").encode()},   # corrupt library
])
def test_broken_entry_without_compiler(cache, no_compiler, files):
    """A manifest whose files are missing or corrupt is no hit: with no
    attn-compile to compile it again, a CompileError says so."""
    entry = broken_entry(cache, files)
    if "libd.so" not in files or "d.json" not in files:
        assert attn.lookup(SPEC, "sm_80", cache, "d") is None
    with pytest.raises(attn.CompileError, match="is broken") as info:
        attn.compile(SPEC, targets="sm_80", cache_dir=cache, name="d")
    assert entry in str(info.value)
    assert "attn-compile is not found" in str(info.value)
    assert isinstance(info.value.__cause__, attn.LibraryError)


def test_broken_entry_compiled_again(cache, fake, stub_so):
    entry = broken_entry(cache, {"d.json": b"{"})
    tool = fake(so=stub_so, json_text=GOOD_JSON)
    lib = attn.compile(SPEC, targets="sm_80", cache_dir=cache, name="d",
                       compiler=tool)
    assert lib.name == "d" and lib.kernels == {}
    assert lib.cache_entry == entry
    assert entries(cache) == [os.path.basename(entry)]
    assert json.load(open(os.path.join(entry, "d.json")))["library"] == "d"
    manifest = json.load(open(os.path.join(entry, "manifest.json")))
    assert manifest["compiler"] == tool
    assert attn.lookup(SPEC, "sm_80", cache, "d") == entry


# -- 2. unreadable specs, unwritable caches, bad library JSON --------------
def test_non_utf8_spec_file(cache, tmp_path):
    path = tmp_path / "latin1.mlir"
    path.write_bytes(SPEC.encode() + b"// caf\xe9\n")
    with pytest.raises(attn.CompileError,
                       match=r"latin1\.mlir' is not UTF-8 text \(byte 0xe9")\
            as info:
        attn.compile(str(path), targets="sm_80", cache_dir=cache,
                     compiler=TRUE)
    assert isinstance(info.value.__cause__, UnicodeDecodeError)
    with pytest.raises(attn.CompileError, match="not UTF-8"):
        attn.lookup(path, "sm_80", cache)


def test_spec_path_is_a_folder(cache, tmp_path):
    with pytest.raises(attn.CompileError,
                       match=r"cannot read the spec file .*: Is a directory")\
            as info:
        attn.compile(str(tmp_path), cache_dir=cache, compiler=TRUE)
    assert isinstance(info.value.__cause__, IsADirectoryError)


def test_cache_dir_is_a_file(tmp_path):
    file = tmp_path / "cachefile"
    file.write_text("x")
    with pytest.raises(attn.CompileError,
                       match=r"cannot write to the cache folder "
                             r".*cachefile': it is not a folder") as info:
        attn.compile(SPEC, targets="sm_80", cache_dir=str(file),
                     compiler=TRUE)
    assert isinstance(info.value.__cause__, FileExistsError)
    with pytest.raises(attn.CompileError,
                       match=r"cannot write to the cache folder "
                             r".*cachefile/sub'") as info:
        attn.compile(SPEC, targets="sm_80", cache_dir=str(file / "sub"),
                     compiler=TRUE)
    assert isinstance(info.value.__cause__, NotADirectoryError)


@pytest.mark.skipif(hasattr(os, "geteuid") and os.geteuid() == 0,
                    reason="root writes into read-only folders")
def test_read_only_cache_dir(tmp_path):
    cache = tmp_path / "ro"
    cache.mkdir()
    cache.chmod(0o555)
    try:
        with pytest.raises(attn.CompileError,
                           match=r"cannot write to the cache folder .*ro'"
                                 r": Permission denied") as info:
            attn.compile(SPEC, targets="sm_80", cache_dir=str(cache),
                         compiler=TRUE)
        assert isinstance(info.value.__cause__, PermissionError)
    finally:
        cache.chmod(0o755)


def test_unwritable_cache_dir(cache, monkeypatch):
    """As test_read_only_cache_dir, also as root (CI): the temporary folder
    of a compile cannot be made."""
    def mkdtemp(prefix=None, dir=None, **kwargs):
        raise PermissionError(13, "Permission denied",
                              os.path.join(dir, prefix + "xyz"))
    monkeypatch.setattr(attn.compiler.tempfile, "mkdtemp", mkdtemp)
    with pytest.raises(attn.CompileError,
                       match=r"cannot write to the cache folder .*cache'"
                             r": Permission denied") as info:
        attn.compile(SPEC, targets="sm_80", cache_dir=cache, compiler=TRUE)
    assert isinstance(info.value.__cause__, PermissionError)


def test_library_json_errors(tmp_path):
    so = str(tmp_path / "libx.so")
    meta = tmp_path / "x.json"
    with pytest.raises(attn.LibraryError,
                       match=r"cannot read the library metadata .*x\.json'"
                             r": No such file") as info:
        attn.Library(so)
    assert isinstance(info.value.__cause__, FileNotFoundError)
    meta.write_text("{}")
    with pytest.raises(attn.LibraryError,
                       match=r"x\.json' is not attn-compile library metadata"
                             r": it has no 'library' key") as info:
        attn.Library(so, str(meta))
    assert isinstance(info.value.__cause__, KeyError)
    assert isinstance(info.value, attn.CompileError)
    meta.write_text('{"library": "x", "prefix": "attn"')
    with pytest.raises(attn.LibraryError, match=r"x\.json' is not JSON"):
        attn.Library(so, str(meta))
    meta.write_text("[]")
    with pytest.raises(attn.LibraryError, match="a JSON list, not an object"):
        attn.Library(so, str(meta))
    meta.write_text('{"library": "x", "prefix": "attn", "kernels": []}')
    with pytest.raises(attn.LibraryError,
                       match=r"cannot load the library .*libx\.so'") as info:
        attn.Library(so)
    assert isinstance(info.value.__cause__, OSError)


def test_library_json_mismatch(tmp_path, stub_so):
    meta = tmp_path / "x.json"
    meta.write_text('{"library": "x", "prefix": "other", "kernels": []}')
    with pytest.raises(attn.LibraryError,
                       match=r"not an attn-compile library with prefix "
                             r"'other'") as info:
        attn.Library(stub_so, str(meta))
    assert isinstance(info.value.__cause__, AttributeError)
    meta.write_text('{"library": "x", "prefix": "attn", "kernels": '
                    '[{"name": "k"}]}')
    with pytest.raises(attn.LibraryError,
                       match=r"x\.json': kernel 0 is not attn-compile kernel"):
        attn.Library(stub_so, str(meta))
    meta.write_text('{"library": "x", "prefix": "attn", "kernels": []}')
    assert attn.Library(stub_so, str(meta)).kernels == {}


# -- 3. spec text or path: one rule ----------------------------------------
@pytest.mark.parametrize("spec,text", [
    ("module {}", True),
    ("  module @m {}", True),
    ("module{}", True),
    ("builtin.module {}", True),
    ("func.func @f() { return }", True),
    ("\tfunc.func private @f()", True),
    ("// a comment\nfunc.func @f()", True),
    ("x\r\ny", True),
    ("", True),                          # empty text: an error
    ("   ", True),
    ("module.mlir", False),
    ("modules/x.mlir", False),
    ("module-x.mlir", False),
    ("func.func.mlir", False),
    ("my func.func kernels.mlir", False),
    ("/tmp/func.func @x.mlir", False),
    ("examples/paged_decode.mlir", False),
    (pathlib.Path("module {}"), False),
    (pathlib.Path("a\nb.mlir"), False),
])
def test_spec_text_or_path_rule(spec, text):
    assert attn.compiler.is_spec_text(spec) is text


def test_spec_text_or_path(cache, tmp_path):
    # One line of text starting with "module" is text, not a missing file.
    assert attn.lookup("module {}", "sm_80", cache) is None
    with pytest.raises(attn.CompileError, match="did not write"):
        attn.compile("module {}", targets="sm_80", cache_dir=cache,
                     compiler=TRUE)
    for empty in ("", " \n "):
        with pytest.raises(attn.CompileError, match="the spec is empty"):
            attn.compile(empty, cache_dir=cache, compiler=TRUE)
    # A file whose name contains func.func is a path.
    odd = tmp_path / "my func.func kernels.mlir"
    odd.write_text(SPEC)
    assert attn.compiler._read_spec(str(odd)) == (SPEC,
                                                  "my_func_func_kernels")
    assert attn.lookup(str(odd), "sm_80", cache) is None
    # A file whose name reads as text, as a pathlib.Path.
    moduleish = tmp_path / "module {x}.mlir"
    moduleish.write_text(SPEC)
    assert attn.compiler._read_spec(moduleish) == (SPEC, "module__x_")
    # Universal newlines, as before: the same key as the text.
    crlf = tmp_path / "crlf.mlir"
    crlf.write_bytes(SPEC.replace("\n", "\r\n").encode())
    assert attn.compiler._read_spec(crlf) == (SPEC, "crlf")
    with pytest.raises(TypeError, match="path or text, got bytes"):
        attn.compile(SPEC.encode(), cache_dir=cache, compiler=TRUE)


def test_missing_spec_file(cache, tmp_path):
    missing = str(tmp_path / "missing.mlir")
    for call in (attn.compile, attn.lookup):
        with pytest.raises(attn.CompileError) as info:
            call(missing, cache_dir=cache)
        assert str(info.value) == (
            f"attn.compile: no such spec file {missing!r} (pass spec text "
            f"containing 'func.func' or a path)")
        assert isinstance(info.value.__cause__, FileNotFoundError)
    # One line of text without a keyword is a path too.
    with pytest.raises(attn.CompileError, match="no such spec file 'x = 1'"):
        attn.compile("x = 1", cache_dir=cache, compiler=TRUE)


def test_repository_specs_are_paths():
    """The call sites' specs (examples/*.mlir, test/compile/Inputs/*.mlir,
    AttentionFacts.spec_text) keep their meaning."""
    repo = os.path.join(os.path.dirname(__file__), "..", "..")
    for name in ("examples/paged_decode.mlir",
                 "test/compile/Inputs/abi.mlir"):
        path = os.path.join(repo, name)
        assert not attn.compiler.is_spec_text(path)
        if os.path.exists(path):
            text, stem = attn.compiler._read_spec(path)
            assert "func.func" in text and stem == os.path.basename(
                name)[:-5]
    assert attn.compiler.is_spec_text(SPEC)
