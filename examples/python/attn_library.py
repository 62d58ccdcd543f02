"""Calls the kernels of an attn-compile library on PyTorch CUDA tensors.

    attn-compile spec.mlir --shared -o out/      # lib<name>.so, <name>.json
    lib = AttnLibrary("out/lib<name>.so")        # reads out/<name>.json
    lib.my_kernel(q=q, k=k, v=v, o=o)            # tensors by operand name

Each call reads the dynamic sizes off the tensors' shapes (and checks the
static ones and the dtypes), passes the tensors' strides, allocates the
workspace the kernel asks for, and launches on the current PyTorch stream of
the tensors' device. A nonzero status raises AttnError with the library's
message; the library checks pointers, strides, alignment and sizes itself
and writes nothing when it refuses a call.
"""
import ctypes
import json
import os

import torch

DTYPES = {"f16": torch.float16, "bf16": torch.bfloat16, "f32": torch.float32,
          "i32": torch.int32}


class AttnError(RuntimeError):
    def __init__(self, code, name, message):
        super().__init__(f"{name} ({code}): {message}")
        self.code = code
        self.name = name


class Kernel:
    def __init__(self, library, spec):
        self.library = library
        self.name = spec["name"]
        self.tier = spec["tier"]
        self.operands = spec["operands"]
        self.sizes = spec["sizes"]
        lib, symbol = library.lib, f"{library.prefix}_{self.name}"
        i64, ptr = ctypes.c_int64, ctypes.c_void_p
        self._run = getattr(lib, symbol + "_run")
        self._run.restype = ctypes.c_int
        self._run.argtypes = ([ptr, ctypes.POINTER(i64)] * len(self.operands) +
                              [i64] * len(self.sizes) +
                              [ptr, ctypes.c_size_t, ptr])
        self._can_implement = getattr(lib, symbol + "_can_implement")
        self._can_implement.restype = ctypes.c_int
        self._can_implement.argtypes = [i64] * len(self.sizes)
        self._workspace_bytes = getattr(lib, symbol + "_workspace_bytes")
        self._workspace_bytes.restype = ctypes.c_int
        self._workspace_bytes.argtypes = ([i64] * len(self.sizes) +
                                          [ctypes.POINTER(ctypes.c_size_t)])

    def size_values(self, tensors):
        """The dynamic sizes, read off the tensors' shapes."""
        values = {}
        for operand in self.operands:
            t = tensors[operand["name"]]
            shape = operand["shape"]
            if t.dim() != len(shape):
                raise ValueError(f"{self.name}: {operand['name']} has "
                                 f"{t.dim()} dims, the kernel takes {shape}")
            if t.dtype != DTYPES[operand["dtype"]]:
                raise ValueError(f"{self.name}: {operand['name']} is "
                                 f"{t.dtype}, the kernel takes "
                                 f"{operand['dtype']}")
            for dim, size in enumerate(shape):
                if isinstance(size, int):
                    if t.shape[dim] != size:
                        raise ValueError(
                            f"{self.name}: {operand['name']} dim {dim} is "
                            f"{t.shape[dim]}, the kernel is built for {size}")
                elif values.setdefault(size, t.shape[dim]) != t.shape[dim]:
                    raise ValueError(f"{self.name}: {operand['name']} dim "
                                     f"{dim} is {t.shape[dim]}, but {size} "
                                     f"is {values[size]} elsewhere")
        return [values[name] for name in self.sizes]

    def check(self, code):
        if code != 0:
            raise AttnError(code, self.library.status_string(code),
                            self.library.last_error())

    def can_implement(self, *sizes):
        return self._can_implement(*sizes) == 0

    def workspace_bytes(self, sizes):
        nbytes = ctypes.c_size_t(0)
        self.check(self._workspace_bytes(*sizes, ctypes.byref(nbytes)))
        return nbytes.value

    def prepare(self, **tensors):
        """The ctypes arguments of one call; reusable for timing loops."""
        missing = {o["name"] for o in self.operands} - tensors.keys()
        if missing:
            raise ValueError(f"{self.name}: missing {sorted(missing)}")
        device = tensors[self.operands[0]["name"]].device
        with torch.cuda.device(device):
            sizes = self.size_values(tensors)
            nbytes = self.workspace_bytes(sizes)
            workspace = (torch.empty(nbytes, dtype=torch.uint8, device=device)
                         if nbytes else None)
            args, keep = [], [workspace]
            for operand in self.operands:
                t = tensors[operand["name"]]
                strides = (ctypes.c_int64 * t.dim())(*t.stride())
                keep.append(strides)
                args += [ctypes.c_void_p(t.data_ptr()), strides]
            args += sizes
            args += [ctypes.c_void_p(workspace.data_ptr() if nbytes else 0),
                     nbytes]
        return Call(self, device, args, keep)

    def __call__(self, **tensors):
        self.prepare(**tensors)()


class Call:
    def __init__(self, kernel, device, args, keep):
        self.kernel, self.device, self.args, self.keep = (kernel, device, args,
                                                          keep)

    def __call__(self):
        with torch.cuda.device(self.device):
            stream = torch.cuda.current_stream(self.device).cuda_stream
            self.kernel.check(
                self.kernel._run(*self.args, ctypes.c_void_p(stream)))


class AttnLibrary:
    def __init__(self, so_path, json_path=None):
        if json_path is None:
            name = os.path.basename(so_path)[3:-3]  # lib<name>.so
            json_path = os.path.join(os.path.dirname(so_path), name + ".json")
        with open(json_path) as f:
            meta = json.load(f)
        # PyTorch made the CUDA context current; the library uses it.
        torch.cuda.init()
        self.lib = ctypes.CDLL(os.path.abspath(so_path))
        self.prefix = meta["prefix"]
        self._status_string = getattr(self.lib, f"{self.prefix}_status_string")
        self._status_string.restype = ctypes.c_char_p
        self._status_string.argtypes = [ctypes.c_int]
        self._last_error = getattr(self.lib, f"{self.prefix}_last_error")
        self._last_error.restype = ctypes.c_char_p
        self._last_error.argtypes = []
        self.kernels = {}
        for spec in meta["kernels"]:
            self.kernels[spec["name"]] = Kernel(self, spec)
            setattr(self, spec["name"], self.kernels[spec["name"]])

    def status_string(self, code):
        return self._status_string(code).decode()

    def last_error(self):
        return self._last_error().decode()
