"""attn's own exceptions for getting a compiled library (AttnError, for
calls the C ABI refuses, is in attn.library)."""


class CompileError(RuntimeError):
    """attn could not give a compiled library: attn-compile refused the spec
    (its message is the text) or is not there when the cache does not have
    the spec, or the spec file, the cache folder or attn-compile's output
    cannot be read, written or used (the text names the path and why; the
    OSError or other cause is chained as __cause__)."""


class LibraryError(CompileError):
    """Library files that cannot be used: a lib<name>.so that does not load,
    or a <name>.json that is missing, not JSON, or lacks what attn-compile
    writes ("library", "prefix", "kernels"), or that does not match the
    library. A CompileError, so `except attn.CompileError` around
    attn.compile catches it too."""


def why(e):
    """An OSError's reason without its repeated file name."""
    return getattr(e, "strerror", None) or str(e)
