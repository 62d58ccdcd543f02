"""attn.compile: a spec (file or text) to a loaded Library, through
attn-compile and a cache on disk.

The cache key is the SHA-256 of the spec text, the targets, the library
name, the C prefix and attn's version (attn.__version__), and nothing about
the machine, so a cache filled where attn-compile runs can be copied to a
machine without LLVM (a GPU box) and used there: a hit never needs
attn-compile. Each entry is a folder <cache>/<key>/ with lib<name>.so,
<name>.json, <name>.h, the spec and a manifest.json written last; an entry
without its manifest, or whose library or JSON is missing or does not load,
is incomplete and ignored (compiled again). Where attn-compile is
found, a hit made by a different attn-compile binary (its SHA-256 is in the
manifest) is compiled again, so a rebuilt compiler does not serve stale
kernels.
"""
import hashlib
import json
import os
import re
import shutil
import signal
import subprocess
import tempfile
import threading

from .errors import CompileError, LibraryError, why
from .library import Library, read_metadata

__version__ = "0.1.0"

DEFAULT_TARGETS = ("sm_80", "sm_90")
_REPO = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))


def default_cache_dir():
    """$ATTN_CACHE_DIR, else $XDG_CACHE_HOME/attn, else ~/.cache/attn."""
    if os.environ.get("ATTN_CACHE_DIR"):
        return os.environ["ATTN_CACHE_DIR"]
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(
        os.path.expanduser("~"), ".cache")
    return os.path.join(base, "attn")


# Where `pip install .` bundles attn-compile (setup.py).
BUNDLED_COMPILER = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "_toolchain", "bin", "attn-compile")


def find_compiler(compiler=None):
    """attn-compile: the argument, $ATTN_COMPILE, the one an installed
    package bundles, PATH, then this checkout's build folders
    ($ATTN_BUILD_DIR/bin, build/bin). None if not found."""
    if compiler:
        if os.path.isfile(compiler) and os.access(compiler, os.X_OK):
            return os.path.abspath(compiler)
        raise CompileError(f"attn-compile not found at {compiler!r}")
    candidates = [os.environ.get("ATTN_COMPILE"), BUNDLED_COMPILER,
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


# A one-line str that starts (after whitespace) with one of these MLIR
# keywords, followed by whitespace, "@" or "{", is spec text.
_TEXT_HEAD = re.compile(r"\s*(?:func\.func|builtin\.module|module)(?=[\s@{])")
_SPEC_HINT = "pass spec text containing 'func.func' or a path"


def is_spec_text(spec):
    """Whether attn.compile takes `spec` as spec text rather than as the path
    of a spec file. The rule: an os.PathLike (pathlib.Path) is always a
    path; a str is text when it contains a line break, is empty or all
    whitespace (an error: empty spec), or starts, after whitespace, with
    `func.func`, `module` or `builtin.module` followed by whitespace, `@`
    or `{`; any other str is a path. (Pass a pathlib.Path for a file whose
    name breaks this rule, e.g. one named "module x.mlir".)"""
    if isinstance(spec, os.PathLike):
        return False
    if not isinstance(spec, str):
        raise TypeError(f"attn.compile: spec must be a path or text, got "
                        f"{type(spec).__name__}")
    return ("\n" in spec or "\r" in spec or not spec.strip() or
            _TEXT_HEAD.match(spec) is not None)


def _read_spec(spec):
    """(text, name) for a spec path or text (see is_spec_text). A file is
    read as UTF-8 with universal newlines."""
    if is_spec_text(spec):
        if not spec.strip():
            raise CompileError(
                f"attn.compile: the spec is empty ({_SPEC_HINT})")
        return spec, "spec"
    path = os.fspath(spec)
    if isinstance(path, bytes):
        path = os.fsdecode(path)
    try:
        with open(path, "rb") as f:
            data = f.read()
    except FileNotFoundError as e:
        raise CompileError(f"attn.compile: no such spec file {path!r} "
                           f"({_SPEC_HINT})") from e
    except OSError as e:
        raise CompileError(f"attn.compile: cannot read the spec file "
                           f"{path!r}: {why(e)}") from e
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise CompileError(
            f"attn.compile: the spec file {path!r} is not UTF-8 text (byte "
            f"{data[e.start]:#04x} at offset {e.start})") from e
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    stem = os.path.splitext(os.path.basename(path))[0]
    name = re.sub(r"[^A-Za-z0-9_]", "_", stem) or "spec"
    if name[0].isdigit():
        name = "_" + name
    return text, name


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


def _complete(entry, name):
    """Whether the entry has its manifest, library and JSON (it may still
    fail to load: compile() then compiles it again)."""
    return bool(_manifest(entry)) and all(
        os.path.isfile(os.path.join(entry, f))
        for f in (f"lib{name}.so", f"{name}.json"))


def _discard(entry, cache_dir, key):
    """Moves a cache entry out of the way and removes it; a library loaded
    from it stays mapped."""
    old = tempfile.mkdtemp(prefix=f".old.{key}.", dir=cache_dir)
    os.rename(entry, os.path.join(old, "entry"))
    shutil.rmtree(old, ignore_errors=True)
    _loaded.pop(entry, None)


def _check_output(out, name, result):
    """Raises CompileError unless attn-compile (exit 0) wrote lib<name>.so
    and a <name>.json that reads as its metadata into `out`."""
    said = (result.stderr or result.stdout or "").strip()
    said = f"; it said:\n{said}" if said else ""
    missing = [f for f in (f"lib{name}.so", f"{name}.json")
               if not os.path.isfile(os.path.join(out, f))]
    if missing:
        raise CompileError(
            f"attn-compile exited 0 but did not write {' and '.join(missing)} "
            f"into the -o folder it was given (another -o in extra_args, or "
            f"not attn-compile?); nothing was cached{said}")
    try:
        read_metadata(os.path.join(out, f"{name}.json"))
    except LibraryError as e:
        raise CompileError(f"attn-compile exited 0 but wrote unusable "
                           f"output: {e}; nothing was cached{said}") from e


def _manifest(entry):
    try:
        with open(os.path.join(entry, "manifest.json")) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def lookup(spec, targets=DEFAULT_TARGETS, cache_dir=None, name=None,
           prefix="attn", extra_args=()):
    """The cache folder holding the spec's library, or None (also for an
    entry without its manifest, library or JSON)."""
    text, default_name = _read_spec(spec)
    name = name or default_name
    cache_dir = cache_dir or default_cache_dir()
    entry = os.path.join(cache_dir, cache_key(text, targets, name, prefix,
                                              extra_args))
    return entry if _complete(entry, name) else None


def kernel_set_dirs():
    """The prebuilt kernel sets attn.compile reads after its cache misses:
    each folder of $ATTN_KERNEL_SETS (os.pathsep-separated), then the
    installed package's own (attn/_kernels; python -m attn.kernel_set)."""
    folders = [d for d in os.environ.get("ATTN_KERNEL_SETS", "").split(
        os.pathsep) if d]
    own = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                       "_kernels")
    return folders + ([own] if os.path.isdir(own) else [])


def _save_missing(cache_dir, key, request):
    """Saves a compile the cache could not serve (no attn-compile here) as
    cache_dir/missing/<key>.json, so that prefill_cache.py --missing can
    compile it where attn-compile runs. Returns the path, or None when the
    folder cannot be written (the error says what is missing anyway)."""
    path = os.path.join(cache_dir, "missing", f"{key}.json")
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as f:
            json.dump(request, f, indent=1)
    except OSError:
        return None
    return path


def compile(spec, targets=DEFAULT_TARGETS, cache_dir=None, compiler=None,
            name=None, prefix="attn", extra_args=(), force=False):
    """Compiles a spec with attn-compile --shared and returns the loaded
    Library, one callable per kernel. `spec` is a path (an os.PathLike
    always; a str without a line break that does not start with
    `func.func`, `module` or `builtin.module`) or spec text (a str with a
    line break, or one starting with those keywords): see is_spec_text. A
    spec file must be UTF-8. The result is cached under `cache_dir`
    (default: default_cache_dir()) by content hash; a hit loads the cached
    library without attn-compile, and an entry whose files are missing or
    do not load is compiled again.
    Raises CompileError (attn's own, with the original exception chained)
    with attn-compile's message when it refuses the spec, when the spec is
    not cached (or its entry is broken) and attn-compile is not found, when
    attn-compile exits 0 without writing the library, and when the spec
    file cannot be read or the cache folder written; nothing is cached for
    a failed compile."""
    text, default_name = _read_spec(spec)
    name = name or default_name
    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
        raise ValueError(f"attn.compile: name {name!r} is not a C identifier")
    targets = _targets_list(targets)
    cache_dir = os.path.abspath(cache_dir or default_cache_dir())
    key = cache_key(text, targets, name, prefix, extra_args)
    entry = os.path.join(cache_dir, key)
    manifest = _manifest(entry)
    if not manifest and not force:
        for folder in kernel_set_dirs():
            shipped = os.path.join(folder, key)
            if _manifest(shipped):
                try:
                    return _load(shipped, name)
                except LibraryError:
                    pass  # a broken set entry: compile as if it were not
    tool = find_compiler(compiler)
    broken = None
    if manifest and not force:
        if tool is None or manifest.get("compiler_sha256") in (
                None, _file_sha256(tool)):
            try:
                return _load(entry, name)
            except LibraryError as e:
                broken = e  # files missing or corrupt: compile it again
    if tool is None:
        if broken is not None:
            raise CompileError(
                f"the cache entry {entry} for this spec is broken ({broken}), "
                f"and attn-compile is not found (pass compiler=, set "
                f"ATTN_COMPILE, or put it on PATH) to compile it again; "
                f"remove the entry, or fill the cache again where "
                f"attn-compile runs (python/tools/prefill_cache.py) and copy "
                f"it here") from broken
        saved = _save_missing(cache_dir, key, dict(
            name=name, targets=list(targets), prefix=prefix,
            extra_args=list(extra_args), text=text))
        raise CompileError(
            f"attn-compile not found (pass compiler=, set ATTN_COMPILE, or "
            f"put it on PATH), and the cache {cache_dir} has no entry {key} "
            f"for this spec and targets {','.join(targets)} (attn "
            f"{__version__}); fill the cache where attn-compile runs "
            f"(python/tools/prefill_cache.py) and copy it here" +
            (f"; the request is saved as {saved} (prefill_cache.py "
             f"--missing compiles every saved one)" if saved else ""))
    try:
        os.makedirs(cache_dir, exist_ok=True)
        tmp = tempfile.mkdtemp(prefix=f".{key}.", dir=cache_dir)
    except OSError as e:
        problem = ("it is not a folder" if os.path.exists(cache_dir) and
                   not os.path.isdir(cache_dir) else why(e))
        raise CompileError(
            f"attn.compile: cannot write to the cache folder {cache_dir!r}: "
            f"{problem} (pass cache_dir= or set ATTN_CACHE_DIR to a writable "
            f"folder)") from e
    try:
        try:
            spec_path = os.path.join(tmp, f"{name}.mlir")
            with open(spec_path, "w", encoding="utf-8") as f:
                f.write(text)
            cmd = [tool, spec_path, f"--targets={','.join(targets)}",
                   "--shared", f"--name={name}", f"--prefix={prefix}", "-o",
                   tmp, *extra_args]
            try:
                result = subprocess.run(cmd, capture_output=True, text=True,
                                        errors="replace")
            except OSError as e:
                raise CompileError(f"cannot run attn-compile {tool!r}: "
                                   f"{why(e)}") from e
            if result.returncode != 0:
                message = (result.stderr or result.stdout).strip()
                how = f"exit {result.returncode}"
                if result.returncode < 0:
                    try:
                        how = (f"killed by "
                               f"{signal.Signals(-result.returncode).name}")
                    except ValueError:
                        how = f"killed by signal {-result.returncode}"
                raise CompileError(f"attn-compile failed ({how}) on "
                                   f"{name}:\n{message}")
            _check_output(tmp, name, result)
            with open(os.path.join(tmp, "manifest.json"), "w") as f:
                json.dump({"key": key, "name": name, "prefix": prefix,
                           "targets": targets, "version": __version__,
                           "compiler": tool,
                           "compiler_sha256": _file_sha256(tool),
                           "extra_args": list(extra_args)}, f, indent=1)
            with _lock:
                if os.path.isdir(entry):
                    # A stale or broken entry (or one another process just
                    # made): set it aside.
                    _discard(entry, cache_dir, key)
                try:
                    os.rename(tmp, entry)
                except OSError:
                    if not _manifest(entry):
                        raise
                    shutil.rmtree(tmp, ignore_errors=True)  # another won
        except OSError as e:
            raise CompileError(f"attn.compile: cannot write the cache entry "
                               f"{entry}: {why(e)}") from e
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    try:
        return _load(entry, name)
    except LibraryError as e:
        # Not left as a complete entry: the next call compiles again.
        try:
            with _lock:
                _discard(entry, cache_dir, key)
        except OSError:
            pass
        raise CompileError(f"attn-compile's library for {name} does not "
                           f"load: {e}; nothing was cached") from e
