"""The ctypes layer over an attn-compile shared library (lib<name>.so and
its <name>.json). It needs no PyTorch: a kernel takes duck-typed tensors
(anything with .shape, .stride(), .data_ptr() and .dtype) or raw pointers
(Kernel.run). With PyTorch CUDA tensors it also allocates the workspace
and launches on the tensors' device and current stream.

    lib = Library("out/libspec.so")           # reads out/spec.json
    lib.my_kernel(q=q, k=k, v=v, o=o)         # tensors by operand name

A nonzero status from the C ABI raises AttnError with the library's
message; the library checks pointers, strides, alignment and sizes itself
and writes nothing when it refuses a call.

Packed (varlen) kernels take their offsets (cu_seqlens_q / cu_seqlens_k,
int32 device tensors of batch + 1 entries) like any other operand; a
packed Q without a fixed max_q_len also takes the size `max_q_len` (the
most queries a sequence has; 0: not known), which no tensor's shape
gives: pass sizes={"max_q_len": n}.
"""
import contextlib
import ctypes
import json
import os
import re
import sys

from .errors import LibraryError, why

# The C ABI's status codes (attn-compile's header, ATTN_*).
STATUS_NAMES = {
    0: "ATTN_SUCCESS",
    1: "ATTN_ERROR_NULL_POINTER",
    2: "ATTN_ERROR_MISALIGNED",
    3: "ATTN_ERROR_UNSUPPORTED_SIZE",
    4: "ATTN_ERROR_UNSUPPORTED_STRIDE",
    5: "ATTN_ERROR_WORKSPACE_TOO_SMALL",
    6: "ATTN_ERROR_NO_DRIVER",
    7: "ATTN_ERROR_NO_DEVICE",
    8: "ATTN_ERROR_UNSUPPORTED_DEVICE",
    9: "ATTN_ERROR_LAUNCH_FAILED",
    10: "ATTN_ERROR_RUNTIME",
}

# Operands the kernel writes; the others it reads (an append writes its
# caches in place).
OUTPUTS = ("o", "lse", "k_cache", "v_cache")

_TORCH_DTYPES = {"torch.float16": "f16", "torch.bfloat16": "bf16",
                 "torch.float32": "f32", "torch.int32": "i32",
                 "torch.float8_e4m3fn": "f8E4M3FN",
                 "torch.float8_e5m2": "f8E5M2", "torch.int8": "i8"}
ELEMENT_BYTES = {"f16": 2, "bf16": 2, "f32": 4, "i32": 4, "f8E4M3FN": 1,
                 "f8E5M2": 1, "i8": 1}


class AttnError(RuntimeError):
    """A call the library refused or that failed: `code` is the ATTN_*
    status, `status` its name, `message` the library's attn_last_error()."""

    def __init__(self, code, status, message):
        super().__init__(f"{status} ({code}): {message}")
        self.code = code
        self.status = status
        self.message = message
        # Older name of `status`, kept for examples/python.
        self.name = status


def dtype_name(dtype):
    """'f16', 'bf16', 'f32', 'i32' or a quantized cache's 'f8E4M3FN', 'f8E5M2',
    'i8' for a torch dtype or such a name."""
    text = str(dtype)
    if text in ELEMENT_BYTES:
        return text
    return _TORCH_DTYPES.get(text, text)


# A dimension the JSON writes as "batch + 1": its size name and offset.
_OFFSET_SIZE = re.compile(r"(\w+) \+ (\d+)")

# Sizes no tensor's shape gives, and their values when not passed.
SIZE_DEFAULTS = {"max_q_len": 0}


def _size_of_dim(name):
    """(size name, offset) of a dimension the JSON names, e.g.
    ("batch", 1) for "batch + 1"."""
    match = _OFFSET_SIZE.fullmatch(name)
    return (match.group(1), int(match.group(2))) if match else (name, 0)


def _on_device(device):
    """`device` made current for a block: libattnrt works in the calling
    thread's current context. Entered only where it is not current already
    (torch.cuda.device costs host time on every call)."""
    import torch
    if torch.cuda.current_device() == device.index:
        return contextlib.nullcontext()
    return torch.cuda.device(device)


def _is_torch_tensor(t):
    torch = sys.modules.get("torch")
    return torch is not None and isinstance(t, torch.Tensor)


class Kernel:
    """One kernel of a library: call it with tensors by operand name."""

    def __init__(self, library, spec):
        self.library = library
        self.name = spec["name"]
        self.tier = spec["tier"]
        self.operands = spec["operands"]
        self.sizes = spec["sizes"]
        self.inputs = [o for o in self.operands if o["name"] not in OUTPUTS]
        self.outputs = [o for o in self.operands if o["name"] in OUTPUTS]
        # Each operand's dims parsed once (size_values runs every call):
        # a static int, or the (size name, offset) it reads.
        self._dims = {o["name"]: [d if isinstance(d, int) else
                                  _size_of_dim(d) for d in o["shape"]]
                      for o in self.operands}
        lib, symbol = library.lib, f"{library.prefix}_{self.name}"
        i64, ptr = ctypes.c_int64, ctypes.c_void_p
        # The _splits entry points: _run and _workspace_bytes with the count
        # of K/V splits (0: the runtime chooses) as one more argument.
        self._run = getattr(lib, symbol + "_run_splits")
        self._run.restype = ctypes.c_int
        self._run.argtypes = ([ptr, ctypes.POINTER(i64)] * len(self.operands) +
                              [i64] * len(self.sizes) + [i64] +
                              [ptr, ctypes.c_size_t, ptr])
        self._can_implement = getattr(lib, symbol + "_can_implement")
        self._can_implement.restype = ctypes.c_int
        self._can_implement.argtypes = [i64] * len(self.sizes)
        self._workspace_bytes = getattr(lib,
                                        symbol + "_workspace_bytes_splits")
        # A mask_mod's block mask (FlexAttention's BlockMask): computed into
        # the workspace alone, then reused by calls with the same sizes and
        # captures (_run computes it every call).
        self.has_block_mask = bool(spec.get("block_mask"))
        self._block_mask = self._run_block_masked = None
        if self.has_block_mask:
            argtypes = ([ptr, ctypes.POINTER(i64)] * len(self.operands) +
                        [i64] * len(self.sizes) + [ptr, ctypes.c_size_t, ptr])
            for attr, suffix in (("_block_mask", "_block_mask"),
                                 ("_run_block_masked", "_run_block_masked")):
                fn = getattr(lib, symbol + suffix)
                fn.restype = ctypes.c_int
                fn.argtypes = argtypes
                setattr(self, attr, fn)
        self._workspace_bytes.restype = ctypes.c_int
        self._workspace_bytes.argtypes = ([i64] * len(self.sizes) + [i64] +
                                          [ctypes.POINTER(ctypes.c_size_t)])

    def __repr__(self):
        shapes = ", ".join(f"{o['name']}{o['shape']} {o['dtype']}"
                           for o in self.operands)
        return f"<attn kernel {self.name} ({self.tier}): {shapes}>"

    # -- sizes ------------------------------------------------------------
    def size_values(self, tensors):
        """The dynamic sizes by name, read off the tensors' shapes (which
        may be symbolic); checks ranks, static dims and dtypes."""
        values = {}
        for operand in self.operands:
            name = operand["name"]
            if name not in tensors:
                continue
            t, shape = tensors[name], operand["shape"]
            if len(t.shape) != len(shape):
                raise ValueError(f"{self.name}: {name} has {len(t.shape)} "
                                 f"dims, the kernel takes {shape}")
            if dtype_name(t.dtype) != operand["dtype"]:
                raise ValueError(f"{self.name}: {name} is {t.dtype}, the "
                                 f"kernel takes {operand['dtype']}")
            for dim, size in enumerate(self._dims[name]):
                actual = t.shape[dim]
                if isinstance(size, int):
                    if actual != size:
                        raise ValueError(
                            f"{self.name}: {name} dim {dim} is {actual}, "
                            f"the kernel is built for {size}")
                    continue
                # The offsets: [batch + 1].
                size, offset = size
                if size not in values:
                    values[size] = actual - offset
                elif values[size] != actual - offset:
                    implied = (f" ({size} + {offset})" if offset else "")
                    raise ValueError(f"{self.name}: {name} dim {dim} is "
                                     f"{actual}{implied}, but {size} is "
                                     f"{values[size]} elsewhere")
        return values

    def output_shapes(self, sizes):
        """{output name: (shape, dtype name)} for sizes by name."""
        def dim(d):
            if not isinstance(d, str):
                return d
            size, offset = _size_of_dim(d)
            return sizes[size] + offset
        return {o["name"]: ([dim(d) for d in o["shape"]], o["dtype"])
                for o in self.outputs}

    def _size_list(self, sizes):
        if isinstance(sizes, dict):
            missing = [n for n in self.sizes if n not in sizes]
            if missing:
                raise ValueError(f"{self.name}: sizes {missing} not given")
            return [int(sizes[n]) for n in self.sizes]
        sizes = [int(s) for s in sizes]
        if len(sizes) != len(self.sizes):
            raise ValueError(f"{self.name}: takes sizes {self.sizes}, got "
                             f"{len(sizes)} values")
        return sizes

    # -- the C functions ----------------------------------------------------
    def check(self, code):
        if code != 0:
            self.library.raise_error(code)

    def can_implement(self, *sizes, **named):
        """Whether the kernel can do these sizes (positional in the order
        of `self.sizes`, or by name)."""
        values = self._size_list(named if named else sizes)
        return self._can_implement(*values) == 0

    def workspace_bytes(self, sizes, num_splits=0):
        """The workspace _run needs for these sizes (a list in the order of
        `self.sizes`, or a dict by name) and count of K/V splits (0: the
        runtime's choice for this GPU)."""
        nbytes = ctypes.c_size_t(0)
        self.check(self._workspace_bytes(*self._size_list(sizes),
                                         int(num_splits),
                                         ctypes.byref(nbytes)))
        return nbytes.value

    def run(self, pointers, strides, sizes, workspace=0, workspace_bytes=0,
            stream=0, num_splits=0):
        """The raw C call: pointers {operand: int}, strides {operand:
        sequence of ints or None for row-major}, sizes (list or dict),
        workspace pointer and size, stream (a CUstream as an int; 0: the
        default stream), the count of K/V splits (0: the runtime chooses;
        a fixed count makes each sequence's result independent of the
        batch). Raises AttnError on a nonzero status."""
        args = []
        for operand in self.operands:
            name = operand["name"]
            st = strides.get(name) if strides else None
            args.append(ctypes.c_void_p(int(pointers.get(name) or 0)))
            args.append(None if st is None else
                        (ctypes.c_int64 * len(st))(*[int(s) for s in st]))
        args += self._size_list(sizes)
        args += [int(num_splits)]
        args += [ctypes.c_void_p(int(workspace or 0)), int(workspace_bytes),
                 ctypes.c_void_p(int(stream or 0))]
        self.check(self._run(*args))

    # -- tensors ------------------------------------------------------------
    def block_mask(self, stream=None, sizes=None, **tensors):
        """Classifies the mask_mod's tiles for these tensors (their sizes and
        captures; o is not written) into a new workspace tensor, which
        `prepare(..., block_mask=it)` then reuses (PyTorch tensors)."""
        if not self.has_block_mask:
            raise ValueError(f"{self.name}: has no block mask (no mask_mod, "
                             "or a form without one)")
        call = self.prepare(stream=stream, sizes=sizes, _mode="only",
                            **tensors)
        call()
        return call.keep[0]

    def prepare(self, stream=None, workspace=None, num_splits=0, sizes=None,
                block_mask=None, _mode=None, **tensors):
        """The ctypes arguments of one call, checked; calling the result
        launches. Reusable for timing loops. With PyTorch tensors the
        workspace is allocated on their device and the launch goes to the
        device's current stream at call time; otherwise pass
        `workspace=(pointer, bytes)` where the kernel needs one, and
        `stream` (an int CUstream; default 0). `sizes`: those no tensor's
        shape gives (a packed Q's max_q_len hint; default 0, not
        known)."""
        names = {o["name"] for o in self.operands}
        missing = names - tensors.keys()
        if missing:
            raise ValueError(f"{self.name}: missing {sorted(missing)}")
        unknown = tensors.keys() - names
        if unknown:
            raise ValueError(f"{self.name}: no operand {sorted(unknown)}; "
                             f"it takes {[o['name'] for o in self.operands]}")
        first = tensors[self.operands[0]["name"]]
        use_torch = _is_torch_tensor(first)
        mode = _mode
        if block_mask is not None:
            if not self.has_block_mask:
                raise ValueError(f"{self.name}: has no block mask")
            if workspace is not None:
                raise ValueError(f"{self.name}: the block mask is the "
                                 "workspace; pass one or the other")
            mode = "reuse"
            workspace = ((block_mask.data_ptr(), block_mask.numel())
                         if _is_torch_tensor(block_mask) else block_mask)
        given = dict(sizes or {})
        sizes = self.size_values(tensors)
        for name in given:
            if name in sizes:
                raise ValueError(f"{self.name}: size {name} comes from the "
                                 f"tensors' shapes")
            if name not in self.sizes:
                raise ValueError(f"{self.name}: takes no size {name}; its "
                                 f"sizes are {self.sizes}")
        for name in self.sizes:
            if name in sizes:
                continue
            if name not in given and name not in SIZE_DEFAULTS:
                raise ValueError(f"{self.name}: no tensor gives size {name}")
            sizes[name] = given.get(name, SIZE_DEFAULTS.get(name))
        size_list = [int(sizes[n]) for n in self.sizes]
        keep = []
        if use_torch:
            import torch
            device = first.device
            if device.type != "cuda":
                raise ValueError(f"{self.name}: tensors are on {device}; the "
                                 "kernel runs on a CUDA device")
            for operand in self.operands:
                t = tensors[operand["name"]]
                if t.device != device:
                    raise ValueError(f"{self.name}: {operand['name']} is on "
                                     f"{t.device}, {self.operands[0]['name']} "
                                     f"on {device}")
            with _on_device(device):
                nbytes = self.workspace_bytes(size_list, num_splits)
                ws = (torch.empty(nbytes, dtype=torch.uint8, device=device)
                      if nbytes and workspace is None else None)
            keep.append(ws)
            if ws is not None:
                workspace = (ws.data_ptr(), nbytes)
        else:
            device = None
            nbytes = (self.workspace_bytes(size_list, num_splits)
                      if workspace is None else None)
            if workspace is None and nbytes:
                raise ValueError(f"{self.name}: needs a workspace of {nbytes} "
                                 "bytes; pass workspace=(pointer, bytes)")
        args = []
        for operand in self.operands:
            t = tensors[operand["name"]]
            contiguous = getattr(t, "is_contiguous", None)
            if contiguous is not None and contiguous():
                strides = None  # row-major: NULL
            else:
                strides = (ctypes.c_int64 * len(t.shape))(*t.stride())
                keep.append(strides)
            args += [ctypes.c_void_p(t.data_ptr()), strides]
        ws_ptr, ws_bytes = workspace if workspace else (0, 0)
        tail = [ctypes.c_void_p(int(ws_ptr)), int(ws_bytes)]
        if mode is not None:
            # _block_mask / _run_block_masked: _run's arguments, no splits.
            fn = self._block_mask if mode == "only" else self._run_block_masked
            return Call(self, device, args + size_list + tail, keep, stream,
                        fn)
        args += size_list + [int(num_splits)] + tail
        return Call(self, device, args, keep, stream)

    def __call__(self, stream=None, workspace=None, num_splits=0, sizes=None,
                 **tensors):
        self.prepare(stream=stream, workspace=workspace, num_splits=num_splits,
                     sizes=sizes, **tensors)()


class Call:
    """A prepared launch; each call queues the kernel once."""

    def __init__(self, kernel, device, args, keep, stream=None, fn=None):
        self.kernel, self.device, self.args, self.keep = (kernel, device, args,
                                                          keep)
        self.stream = stream
        self.fn = fn or kernel._run

    def __call__(self):
        if self.device is None:
            self.kernel.check(self.fn(
                *self.args, ctypes.c_void_p(int(self.stream or 0))))
            return
        import torch
        with _on_device(self.device):
            stream = (self.stream if self.stream is not None else
                      torch.cuda.current_stream(self.device).cuda_stream)
            self.kernel.check(
                self.fn(*self.args, ctypes.c_void_p(int(stream))))


def read_metadata(json_path):
    """The <name>.json attn-compile writes beside lib<name>.so, as a dict
    with at least "library", "prefix" and "kernels". Raises LibraryError
    (naming the path) when it is missing, unreadable, not JSON or lacks
    those."""
    try:
        with open(json_path, "rb") as f:
            data = f.read()
    except OSError as e:
        raise LibraryError(f"cannot read the library metadata "
                           f"{json_path!r}: {why(e)}") from e
    try:
        meta = json.loads(data.decode("utf-8"))
    except ValueError as e:  # JSONDecodeError, UnicodeDecodeError
        raise LibraryError(f"the library metadata {json_path!r} is not "
                           f"JSON: {e}") from e
    if not isinstance(meta, dict):
        raise LibraryError(f"the library metadata {json_path!r} is a JSON "
                           f"{type(meta).__name__}, not an object")
    try:
        name, prefix, kernels = meta["library"], meta["prefix"], \
            meta["kernels"]
    except KeyError as e:
        raise LibraryError(f"{json_path!r} is not attn-compile library "
                           f"metadata: it has no {e} key") from e
    if not (isinstance(name, str) and isinstance(prefix, str) and
            isinstance(kernels, list)):
        raise LibraryError(f"{json_path!r} is not attn-compile library "
                           f"metadata: \"library\" and \"prefix\" must be "
                           f"strings and \"kernels\" a list")
    return meta


class Library:
    """A loaded attn-compile shared library: `kernels` by name, and each
    kernel as an attribute. Raises LibraryError (an attn.CompileError)
    naming the file when lib<name>.so does not load or <name>.json is
    missing, not JSON, or not what attn-compile writes."""

    def __init__(self, so_path, json_path=None):
        if json_path is None:
            base = os.path.basename(so_path)
            if not (base.startswith("lib") and base.endswith(".so")):
                raise ValueError(f"{so_path}: expected lib<name>.so, or pass "
                                 "json_path")
            json_path = os.path.join(os.path.dirname(so_path),
                                     base[3:-3] + ".json")
        meta = read_metadata(json_path)
        self.path = os.path.abspath(so_path)
        self.name = meta["library"]
        self.meta = meta
        try:
            self.lib = ctypes.CDLL(self.path)
        except OSError as e:
            raise LibraryError(f"cannot load the library {so_path!r}: "
                               f"{e}") from e
        self.prefix = meta["prefix"]
        try:
            self._status_string = getattr(self.lib,
                                          f"{self.prefix}_status_string")
            self._last_error = getattr(self.lib, f"{self.prefix}_last_error")
        except AttributeError as e:
            raise LibraryError(
                f"{so_path!r} is not an attn-compile library with prefix "
                f"{self.prefix!r} (as {json_path!r} says): {e}") from e
        self._status_string.restype = ctypes.c_char_p
        self._status_string.argtypes = [ctypes.c_int]
        self._last_error.restype = ctypes.c_char_p
        self._last_error.argtypes = []
        self.kernels = {}
        for i, spec in enumerate(meta["kernels"]):
            try:
                kernel = Kernel(self, spec)
            except AttributeError as e:  # a symbol the library lacks
                raise LibraryError(
                    f"{so_path!r} does not match {json_path!r}: {e}") from e
            except (KeyError, TypeError, ValueError) as e:
                raise LibraryError(
                    f"{json_path!r}: kernel {i} is not attn-compile kernel "
                    f"metadata ({type(e).__name__}: {e})") from e
            self.kernels[kernel.name] = kernel
            if not hasattr(self, kernel.name):
                setattr(self, kernel.name, kernel)

    def __repr__(self):
        return f"<attn library {self.name} {sorted(self.kernels)}>"

    def __getitem__(self, name):
        return self.kernels[name]

    def status_string(self, code):
        return (self._status_string(code) or b"").decode()

    def last_error(self):
        return (self._last_error() or b"").decode()

    def raise_error(self, code):
        """Raises AttnError for a nonzero status, with the calling thread's
        last error message."""
        status = STATUS_NAMES.get(code, f"ATTN_STATUS_{code}")
        message = self.last_error() or self.status_string(code)
        raise AttnError(code, status, message)
