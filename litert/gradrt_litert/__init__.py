"""gradrt_litert: train TensorFlow-converted .tflite models on the stock LiteRT of `ai-edge-litert`
with gradrt's kernels: no Flex delegate, no TensorFlow in the process.

    import gradrt_litert
    model = gradrt_litert.prepare(open("cnn.tflite", "rb").read())   # bytes -> bytes (ship these)
    cm = gradrt_litert.CompiledModel(model)
    loss = cm.run("train", x=x_batch, y=y_batch)["loss"]             # inputs by name, dict of NumPy
    gradrt_litert.kernel_calls()                                     # {'Conv2DBackpropFilter': 24, ...}

A thin ctypes layer over libgradrt_litert.so (C API: gradrt/litert.h), which opens the libLiteRt.so
of the installed ai_edge_litert package (GRADRT_LITERT_LITERT_LIBRARY names another one).
"""
import ctypes
import importlib.util
import os
from pathlib import Path

import numpy as np

__all__ = ["prepare", "CompiledModel", "kernel_calls", "reset_kernel_calls", "GradrtError", "UnsupportedOpError",
           "litert_library", "version"]

# gradrt_litert_code values (gradrt/litert.h): 1..6 are gradrt's status codes (TF's names)
_CODES = {1: "InvalidArgument", 2: "ResourceExhausted", 3: "Unimplemented", 4: "NotFound", 5: "Unavailable",
          6: "Internal", 7: "UnsupportedOp"}


class GradrtError(RuntimeError):
    """A gradrt status: `.code` is TF's code name (`InvalidArgument`, ...), `.message` the text after it."""

    def __init__(self, code, message):
        super().__init__(f"{code}: {message}")
        self.code, self.message = code, message


class UnsupportedOpError(GradrtError):
    """prepare() found ops that neither LiteRT's builtins nor gradrt can run; `.ops` lists them."""

    def __init__(self, code, message):
        super().__init__(code, message)
        self.ops = [s.strip() for s in message.rsplit(":", 1)[-1].split(",") if s.strip()]


class _TensorInfo(ctypes.Structure):  # gradrt_litert_tensor_info
    _fields_ = [("name", ctypes.c_char_p), ("dtype", ctypes.c_char_p), ("tflite_type", ctypes.c_int),
                ("rank", ctypes.c_int), ("shape", ctypes.c_int64 * 8), ("bytes", ctypes.c_size_t)]


_P, _SZ, _I = ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int
_SIGNATURES = {  # name: (restype, argtypes): every function of gradrt/litert.h this package calls
    "gradrt_litert_last_error": (ctypes.c_char_p, []),
    "gradrt_litert_last_error_code": (_I, []),
    "gradrt_litert_version": (ctypes.c_char_p, []),
    "gradrt_litert_prepare": (_I, [_P, _SZ, ctypes.POINTER(_P), ctypes.POINTER(_SZ)]),
    "gradrt_litert_free": (None, [_P]),
    "gradrt_litert_model_create": (_I, [_P, _SZ, ctypes.c_char_p, _I, ctypes.POINTER(_P)]),
    "gradrt_litert_model_destroy": (None, [_P]),
    "gradrt_litert_num_signatures": (_SZ, [_P]),
    "gradrt_litert_signature_key": (ctypes.c_char_p, [_P, _SZ]),
    "gradrt_litert_num_io": (_I, [_P, ctypes.c_char_p, _I, ctypes.POINTER(_SZ)]),
    "gradrt_litert_io_info": (_I, [_P, ctypes.c_char_p, _I, _SZ, ctypes.POINTER(_TensorInfo)]),
    "gradrt_litert_run": (_I, [_P, ctypes.c_char_p, _SZ, ctypes.POINTER(ctypes.c_char_p), ctypes.POINTER(_P),
                               ctypes.POINTER(_SZ)]),
    "gradrt_litert_output": (_I, [_P, ctypes.c_char_p, ctypes.c_char_p, ctypes.POINTER(_P), ctypes.POINTER(_SZ)]),
    "gradrt_litert_kernel_calls": (_SZ, [ctypes.c_char_p, _SZ]),
    "gradrt_litert_reset_kernel_calls": (None, []),
}
_lib_handle = None


def _lib():
    global _lib_handle
    if _lib_handle is None:
        path = os.environ.get("GRADRT_LITERT_C_LIBRARY", str(Path(__file__).with_name("libgradrt_litert.so")))
        lib = ctypes.CDLL(path)
        for name, (res, args) in _SIGNATURES.items():
            fn = getattr(lib, name)  # AttributeError names a symbol the library lacks
            fn.restype, fn.argtypes = res, args
        _lib_handle = lib
    return _lib_handle


def litert_library():
    """The libLiteRt.so this package runs: GRADRT_LITERT_LITERT_LIBRARY, else the installed ai_edge_litert's.
    (Found without importing ai_edge_litert, whose own modules are not needed.)"""
    if os.environ.get("GRADRT_LITERT_LITERT_LIBRARY"):
        return os.environ["GRADRT_LITERT_LITERT_LIBRARY"]
    spec = importlib.util.find_spec("ai_edge_litert")
    if spec is None or not spec.submodule_search_locations:
        raise GradrtError("Unavailable", "ai_edge_litert is not installed: python -m pip install ai-edge-litert==2.3.0")
    path = Path(list(spec.submodule_search_locations)[0]) / "libLiteRt.so"
    if not path.exists():
        raise GradrtError("Unavailable", f"{path} not found (ai-edge-litert==2.3.0 ships it)")
    return str(path)


def _check(rc):
    if rc != 0:
        lib = _lib()
        text = (lib.gradrt_litert_last_error() or b"").decode(errors="replace")
        code = _CODES.get(lib.gradrt_litert_last_error_code(), "Internal")
        message = text.split(": ", 1)[1] if text.startswith(code + ": ") else text
        raise (UnsupportedOpError if code == "UnsupportedOp" else GradrtError)(code, message)


def version():
    return _lib().gradrt_litert_version().decode()


def prepare(model):
    """TF converter output (bytes) -> a model stock LiteRT runs with gradrt's kernels (bytes).
    Raises UnsupportedOpError naming every op that neither LiteRT's builtins nor gradrt can run."""
    model = bytes(model)
    out, size = _P(), _SZ()
    _check(_lib().gradrt_litert_prepare(model, len(model), ctypes.byref(out), ctypes.byref(size)))
    try:
        return ctypes.string_at(out, size.value)
    finally:
        _lib().gradrt_litert_free(out)


def kernel_calls():
    """{TF op name: calls} of gradrt's kernels in this process."""
    lib = _lib()
    need = lib.gradrt_litert_kernel_calls(None, 0)
    buf = ctypes.create_string_buffer(need + 1)
    lib.gradrt_litert_kernel_calls(buf, need + 1)
    rows = (line.rsplit(" ", 1) for line in buf.value.decode().splitlines() if line.strip())
    return {name: int(count) for name, count in rows}


def reset_kernel_calls():
    _lib().gradrt_litert_reset_kernel_calls()


class CompiledModel:
    """A model compiled by stock LiteRT (CPU) with gradrt's kernels. `model`: prepare()'s bytes (TF's
    converter output is prepared first). `threads`: gradrt's kernel threads (0: all cores).
    Not thread-safe: one run at a time per model."""

    def __init__(self, model, threads=0):
        self._handle = None
        prepared = prepare(model)
        h = _P()
        _check(_lib().gradrt_litert_model_create(prepared, len(prepared), litert_library().encode(), int(threads),
                                                 ctypes.byref(h)))
        self._handle = h
        lib = _lib()
        self.signatures = [lib.gradrt_litert_signature_key(h, i).decode()
                           for i in range(lib.gradrt_litert_num_signatures(h))]
        self._io = {s: (self._infos(s, 0), self._infos(s, 1)) for s in self.signatures}

    def _infos(self, sig, is_output):
        lib, n = _lib(), _SZ()
        _check(lib.gradrt_litert_num_io(self._handle, sig.encode(), is_output, ctypes.byref(n)))
        out = {}
        for i in range(n.value):
            t = _TensorInfo()
            _check(lib.gradrt_litert_io_info(self._handle, sig.encode(), is_output, i, ctypes.byref(t)))
            out[t.name.decode()] = (np.dtype(t.dtype.decode()), tuple(t.shape[:t.rank]))
        return out

    def inputs(self, signature):
        """{input name: (dtype, shape)} of a signature."""
        return dict(self._sig(signature)[0])

    def outputs(self, signature):
        """{output name: (dtype, shape)} of a signature."""
        return dict(self._sig(signature)[1])

    def _sig(self, signature):
        if self._handle is None:
            raise GradrtError("InvalidArgument", "the model is closed")
        if signature not in self._io:
            raise GradrtError("NotFound", f"signature '{signature}' not in the model (it has {self.signatures})")
        return self._io[signature]

    def run(self, signature, **inputs):
        """Runs a signature with its inputs by name (anything NumPy converts to the input's dtype and
        shape); returns {output name: NumPy array} (copies of LiteRT's buffers). A kernel's bad input raises GradrtError."""
        ins, outs = self._sig(signature)
        missing, unknown = sorted(set(ins) - set(inputs)), sorted(set(inputs) - set(ins))
        if missing or unknown:
            raise GradrtError("InvalidArgument", f"{signature}: inputs {sorted(ins)} expected; "
                              f"missing {missing}, unknown {unknown}")
        arrays = []
        for name, (dtype, shape) in ins.items():
            a = np.ascontiguousarray(inputs[name], dtype=dtype)
            if a.shape != shape:
                raise GradrtError("InvalidArgument", f"{signature}: input '{name}' must have shape {list(shape)}, "
                                  f"got {list(a.shape)}")
            arrays.append(a)
        n = len(arrays)
        names = (ctypes.c_char_p * n)(*[k.encode() for k in ins])
        data = (_P * n)(*[a.ctypes.data for a in arrays])
        sizes = (_SZ * n)(*[a.nbytes for a in arrays])
        lib, sig = _lib(), signature.encode()
        _check(lib.gradrt_litert_run(self._handle, sig, n, names, data, sizes))
        result = {}
        for name, (dtype, shape) in outs.items():
            ptr, size = _P(), _SZ()
            _check(lib.gradrt_litert_output(self._handle, sig, name.encode(), ctypes.byref(ptr), ctypes.byref(size)))
            a = np.empty(shape, dtype)
            if size.value != a.nbytes:
                raise GradrtError("Internal", f"{signature}: output '{name}' has {size.value} bytes, expected {a.nbytes}")
            ctypes.memmove(a.ctypes.data, ptr, a.nbytes)
            result[name] = a
        return result

    def close(self):
        if self._handle is not None:
            _lib().gradrt_litert_model_destroy(self._handle)
            self._handle = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        try:
            self.close()
        except Exception:  # interpreter shutdown: the library may be gone
            pass
