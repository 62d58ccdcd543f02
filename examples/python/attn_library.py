"""The ctypes layer moved to the attn package (python/attn/library.py);
this shim keeps `from attn_library import AttnLibrary` working for the
examples, bench/autotune.py and a GPU bundle (gpu-bundle/python)."""
import os
import sys

_here = os.path.dirname(os.path.abspath(__file__))
for _path in (os.path.join(_here, "..", "..", "python"),
              os.path.join(_here, "python")):
    if os.path.isdir(os.path.join(_path, "attn")):
        sys.path.insert(0, os.path.abspath(_path))
        break

import torch  # noqa: E402,F401  (AttnLibrary's callers use CUDA tensors)

from attn.library import AttnError, Library  # noqa: E402,F401

DTYPES = {"f16": torch.float16, "bf16": torch.bfloat16, "f32": torch.float32,
          "i32": torch.int32}


class AttnLibrary(Library):
    """attn.Library after initializing CUDA in PyTorch (the library runs on
    the CUDA context PyTorch makes current)."""

    def __init__(self, so_path, json_path=None):
        torch.cuda.init()
        super().__init__(so_path, json_path)
