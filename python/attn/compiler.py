"""attn.compile: a spec (file or text) to a loaded Library, through
attn-compile and a cache on disk.

The cache key is the SHA-256 of the spec text, the targets, the library
name, the C prefix and attn's version (attn.__version__), and nothing about
the machine, so a cache filled where attn-compile runs can be copied to a
machine without LLVM (a GPU box) and used there: a hit never needs
attn-compile. Each entry is a folder <cache>/<key>/ with lib<name>.so,
<name>.json, <name>.h, the spec and a manifest.json written last; an entry
without its manifest is incomplete and ignored. Where attn-compile is
found, a hit made by a different attn-compile binary (its SHA-256 is in the
manifest) is compiled again, so a rebuilt compiler does not serve stale
kernels.
"""
import hashlib
import json
import os
import re
import shutil
import subprocess
import tempfile
import threading

from .library import Library

__version__ = "0.1.0"

DEFAULT_TARGETS = ("sm_80", "sm_90")
_REPO = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))


class CompileError(RuntimeError):
    """attn-compile refused the spec (its message is the text), or is not
    there when the cache does not have the spec."""


def default_cache_dir():
    """$ATTN_CACHE_DIR, else $XDG_CACHE_HOME/attn, else ~/.cache/attn."""
    if os.environ.get("ATTN_CACHE_DIR"):
        return os.environ["ATTN_CACHE_DIR"]
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(
        os.path.expanduser("~"), ".cache")
    return os.path.join(base, "attn")


def find_compiler(compiler=None):
    """attn-compile: the argument, $ATTN_COMPILE, PATH, then this checkout's
    build folders ($ATTN_BUILD_DIR/bin, build/bin). None if not found."""
    if compiler:
        if os.path.isfile(compiler) and os.access(compiler, os.X_OK):
            return os.path.abspath(compiler)
        raise CompileError(f"attn-compile not found at {compiler!r}")
    candidates = [os.environ.get("ATTN_COMPILE"),
                  shutil.which("attn-compile")]
    if os.environ.get("ATTN_BUILD_DIR"):
        candidates.append(os.path.join(os.environ["ATTN_BUILD_DIR"], "bin",
                                       "attn-compile"))
    candidates.append(os.path.join(_REPO, "build", "bin", "attn-compile"))
    for c in candidates:
        if c and os.path.isfile(c) and os.access(c, os.X_OK):
            return os.path.abspath(c)
    return None


_digests = {}


def _file_sha256(path):
    st = os.stat(path)
    key = (path, st.st_mtime_ns, st.st_size)
    if key not in _digests:
        h = hashlib.sha256()
        with open(path, "rb") as f:
            for block in iter(lambda: f.read(1 << 20), b""):
                h.update(block)
        _digests[key] = h.hexdigest()
    return _digests[key]


def _targets_list(targets):
    if isinstance(targets, str):
        targets = targets.split(",")
    targets = [t.strip() for t in targets if t.strip()]
    if not targets:
        raise ValueError("attn.compile: no targets")
    for t in targets:
        if not re.fullmatch(r"sm_\d+a?", t):
            raise ValueError(f"attn.compile: target {t!r} is not sm_<NN>")
    return targets


def _read_spec(spec):
    """(text, name) for a spec path or text."""
    if isinstance(spec, os.PathLike) or (
            isinstance(spec, str) and "\n" not in spec and
            "func.func" not in spec):
        path = os.fspath(spec)
        with open(path) as f:
            text = f.read()
        stem = os.path.splitext(os.path.basename(path))[0]
        name = re.sub(r"[^A-Za-z0-9_]", "_", stem) or "spec"
        if name[0].isdigit():
            name = "_" + name
        return text, name
    if not isinstance(spec, str):
        raise TypeError(f"attn.compile: spec must be a path or text, got "
                        f"{type(spec).__name__}")
    return spec, "spec"


def cache_key(text, targets=DEFAULT_TARGETS, name="spec", prefix="attn",
              extra_args=(), version=__version__):
    """The cache key of a spec text: the same on every machine."""
    blob = json.dumps({"spec": text, "targets": _targets_list(targets),
                       "name": name, "prefix": prefix, "version": version,
                       "args": list(extra_args)}, sort_keys=True)
    return hashlib.sha256(blob.encode()).hexdigest()[:40]


_lock = threading.Lock()
_loaded = {}  # entry folder -> Library


def _load(entry, name):
    with _lock:
        lib = _loaded.get(entry)
        if lib is None:
            lib = Library(os.path.join(entry, f"lib{name}.so"),
                          os.path.join(entry, f"{name}.json"))
            lib.cache_entry = entry
            _loaded[entry] = lib
        return lib


def _manifest(entry):
    try:
        with open(os.path.join(entry, "manifest.json")) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def lookup(spec, targets=DEFAULT_TARGETS, cache_dir=None, name=None,
           prefix="attn", extra_args=()):
    """The cache folder holding the spec's library, or None."""
    text, default_name = _read_spec(spec)
    name = name or default_name
    cache_dir = cache_dir or default_cache_dir()
    entry = os.path.join(cache_dir, cache_key(text, targets, name, prefix,
                                              extra_args))
    return entry if _manifest(entry) else None


def compile(spec, targets=DEFAULT_TARGETS, cache_dir=None, compiler=None,
            name=None, prefix="attn", extra_args=(), force=False):
    """Compiles a spec (a path, or spec text) with attn-compile --shared and
    returns the loaded Library, one callable per kernel. The result is
    cached under `cache_dir` (default: default_cache_dir()) by content
    hash; a hit loads the cached library without attn-compile.
    Raises CompileError with attn-compile's message when it refuses the
    spec, or when the spec is not cached and attn-compile is not found."""
    text, default_name = _read_spec(spec)
    name = name or default_name
    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
        raise ValueError(f"attn.compile: name {name!r} is not a C identifier")
    targets = _targets_list(targets)
    cache_dir = os.path.abspath(cache_dir or default_cache_dir())
    key = cache_key(text, targets, name, prefix, extra_args)
    entry = os.path.join(cache_dir, key)
    manifest = _manifest(entry)
    tool = find_compiler(compiler)
    if manifest and not force:
        if tool is None or manifest.get("compiler_sha256") in (
                None, _file_sha256(tool)):
            return _load(entry, name)
    if tool is None:
        raise CompileError(
            f"attn-compile not found (pass compiler=, set ATTN_COMPILE, or "
            f"put it on PATH), and the cache {cache_dir} has no entry {key} "
            f"for this spec and targets {','.join(targets)} (attn "
            f"{__version__}); fill the cache where attn-compile runs "
            f"(python/tools/prefill_cache.py) and copy it here")
    os.makedirs(cache_dir, exist_ok=True)
    tmp = tempfile.mkdtemp(prefix=f".{key}.", dir=cache_dir)
    try:
        spec_path = os.path.join(tmp, f"{name}.mlir")
        with open(spec_path, "w") as f:
            f.write(text)
        cmd = [tool, spec_path, f"--targets={','.join(targets)}", "--shared",
               f"--name={name}", f"--prefix={prefix}", "-o", tmp,
               *extra_args]
        result = subprocess.run(cmd, capture_output=True, text=True)
        if result.returncode != 0:
            message = (result.stderr or result.stdout).strip()
            raise CompileError(f"attn-compile failed (exit "
                               f"{result.returncode}) on {name}:\n{message}")
        with open(os.path.join(tmp, "manifest.json"), "w") as f:
            json.dump({"key": key, "name": name, "prefix": prefix,
                       "targets": targets, "version": __version__,
                       "compiler": tool,
                       "compiler_sha256": _file_sha256(tool),
                       "extra_args": list(extra_args)}, f, indent=1)
        with _lock:
            if os.path.isdir(entry):
                # A stale entry (or one another process just made): set it
                # aside; a library loaded from it stays mapped.
                old = tempfile.mkdtemp(prefix=f".old.{key}.", dir=cache_dir)
                os.rename(entry, os.path.join(old, "entry"))
                shutil.rmtree(old, ignore_errors=True)
                _loaded.pop(entry, None)
            try:
                os.rename(tmp, entry)
            except OSError:
                if not _manifest(entry):
                    raise
                shutil.rmtree(tmp, ignore_errors=True)  # another process won
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return _load(entry, name)
