"""attn from Python: compile kernel specs with attn-compile (cached on
disk) and call the kernels through their C ABI with ctypes.

    import attn
    lib = attn.compile("examples/llama3_8b_prefill.mlir")
    lib.llama3_8b_prefill(q=q, k=k, v=v, o=o, lse=lse)

Needs only the standard library; `attn.torch` (imported on its own) adds
PyTorch custom ops and attn.torch.attention(q, k, v, ...).
"""
from .compiler import (DEFAULT_TARGETS, CompileError, __version__,
                       cache_key, compile, default_cache_dir, find_compiler,
                       lookup)
from .errors import LibraryError
from .library import STATUS_NAMES, AttnError, Kernel, Library
from .spec import AttentionFacts

__all__ = ["AttentionFacts", "AttnError", "CompileError", "DEFAULT_TARGETS",
           "Kernel", "Library", "LibraryError", "STATUS_NAMES", "__version__",
           "cache_key", "compile", "default_cache_dir", "find_compiler",
           "lookup"]
