"""gradrt's cpu kernels inside TensorFlow.

    import gradrt_tf
    import tensorflow as tf
    gradrt_tf.load()            # gradrt now runs its ops for TF's dtypes, everywhere in this process
    gradrt_tf.kernel_calls()    # {'Conv2DBackpropFilter': 12, ...}

With TensorFlow's oneDNN on (its default on x86), its rewrite renames the gradient ops to _MklNative*
forms before any kernel is looked up; the library registers kernels for those forms too (TF's label,
a higher priority), so gradrt runs the gradients and oneDNN every other op. With oneDNN off
(TF_ENABLE_ONEDNN_OPTS=0) gradrt's kernels serve the plain ops. TensorFlow's setting is left alone.
"""
import ctypes
import os

__all__ = ["load", "kernel_calls", "reset_kernel_calls", "library_path", "onednn_enabled",
           "KernelsNotServedError", "OneDNNActiveError"]

# GRADRT_TF_LIBRARY: another build of the kernel library (A/B of builds in bench/keras_step.py).
_LIB = os.environ.get("GRADRT_TF_LIBRARY") or os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                           "_gradrt_tf_kernels.so")
_handle = None
_PROBE_OP = "Conv2DBackpropFilter"
_MKL_PREFIX = "_MklNative"


class KernelsNotServedError(RuntimeError):
    """load()'s probe did not reach gradrt: in this process TensorFlow would run its own kernels."""


OneDNNActiveError = KernelsNotServedError  # its name before oneDNN's forms were served


def library_path():
    """The kernel library (for tf.load_library in another process or a TF_CONFIG worker)."""
    return _LIB


def onednn_enabled():
    """True when TensorFlow's oneDNN rewrite is on in this process (TF decides once, at start)."""
    from tensorflow.python.util import _pywrap_util_port
    return bool(_pywrap_util_port.IsMklEnabled())


def _op_of(tf_name):
    """gradrt's op for a TF op name: _MklNativeConv2DBackpropFilterWithBias -> Conv2DBackpropFilter."""
    if tf_name.startswith(_MKL_PREFIX):
        tf_name = tf_name[len(_MKL_PREFIX):]
        if tf_name.endswith("WithBias"):
            tf_name = tf_name[:-len("WithBias")]
    return tf_name


def _probe(handle, tf):
    """Runs one tiny Conv2DBackpropFilter eagerly and in a tf.function (TF's eager rewrite and its graph
    pass are separate code); returns the TF op names that ran in gradrt, one per mode, or None for a
    mode that did not reach gradrt. With oneDNN on, both should be _MklNativeConv2DBackpropFilter."""
    from tensorflow.python.eager import context

    def conv(x):  # x an argument: Grappler would fold a constant's gradient in the tf.function
        return tf.raw_ops.Conv2DBackpropFilter(input=x, filter_sizes=[1, 1, 1, 1], out_backprop=x,
                                               strides=[1, 1, 1, 1], padding="VALID")

    ran = []
    with context.eager_mode(), tf.device("/CPU:0"):  # eager even under disable_v2_behavior()
        x = tf.ones([1, 2, 2, 1])
        for run in (conv, tf.function(conv)):
            before = _calls(handle)
            run(x)
            after = _calls(handle)
            moved = [n for n in after if _op_of(n) == _PROBE_OP and after[n] > before.get(n, 0)]
            for n in moved:
                handle.gradrt_tf_add_kernel_calls(n.encode(), before.get(n, 0) - after[n])
            ran.append(moved[0] if moved else None)
    return ran


def load():
    """Registers gradrt's kernels in TensorFlow (idempotent) and proves they run: a probe op, eagerly and
    in a tf.function, must reach gradrt (as the _MklNative form when oneDNN is on), else
    KernelsNotServedError. Call it before running ops: kernels that TensorFlow already instantiated (the
    eager cache is cleared here; a tf.function traced and run before load() keeps its kernels) stay TF's."""
    global _handle
    if _handle is not None:
        return
    import tensorflow as tf
    tf.load_library(_LIB)
    # The same dlopen handle tf.load_library got: counters are shared.
    handle = ctypes.CDLL(_LIB)
    handle.gradrt_tf_kernel_calls.restype = ctypes.c_int
    handle.gradrt_tf_kernel_calls.argtypes = [ctypes.c_char_p, ctypes.c_int]
    handle.gradrt_tf_add_kernel_calls.argtypes = [ctypes.c_char_p, ctypes.c_longlong]
    from tensorflow.python.eager import context
    context.context().clear_kernel_cache()  # eager kernels TF made before: look them up again
    ran = _probe(handle, tf)
    if None in ran:
        onednn = onednn_enabled()
        raise KernelsNotServedError(
            f"gradrt_tf: a {_PROBE_OP} probe did not run in gradrt ({'eager' if ran[0] is None else 'tf.function'}"
            f"; TensorFlow's oneDNN is {'on' if onednn else 'off'}, TF_ENABLE_ONEDNN_OPTS="
            f"{os.environ.get('TF_ENABLE_ONEDNN_OPTS', '<unset>')}): this TensorFlow "
            f"{'rewrites the op to a form gradrt does not serve' if onednn else 'chose another kernel'}, so "
            "gradrt's kernels would never run. TF_ENABLE_ONEDNN_OPTS=0 before TensorFlow starts turns the "
            "rewrite off.")
    _handle = handle


def _calls(handle):
    # Kernels on other threads may lengthen the text between the sizing call and the copy (a
    # count gaining a digit, a first call of an op): a truncated copy would cut a count short
    # ("Conv2D 12" -> "Conv2D 1"), so copy again until the whole text fitted.
    need = handle.gradrt_tf_kernel_calls(None, 0)
    while True:
        buf = ctypes.create_string_buffer(need + 64)
        got = handle.gradrt_tf_kernel_calls(buf, need + 64)
        if got < need + 64:
            break
        need = got
    out = {}
    for line in buf.value.decode().splitlines():
        name, count = line.split()
        out[name] = int(count)
    return out


def kernel_calls(forms=False):
    """{op name: number of calls that ran in gradrt} since load() (or reset_kernel_calls()). Calls of
    oneDNN's forms count for gradrt's op (_MklNativeConv2DBackpropFilterWithBias for
    Conv2DBackpropFilter); forms=True keys them by the TF op name that ran instead."""
    calls = {} if _handle is None else _calls(_handle)
    if forms:
        return calls
    out = {}
    for name, n in calls.items():
        out[_op_of(name)] = out.get(_op_of(name), 0) + n
    return out


def _threads_used():
    """The thread count the last gradrt kernel call got from TF (its intra-op setting); for tests."""
    return 0 if _handle is None else _handle.gradrt_tf_last_threads()


def reset_kernel_calls():
    if _handle is not None:
        _handle.gradrt_tf_add_kernel_calls(None, 0)

