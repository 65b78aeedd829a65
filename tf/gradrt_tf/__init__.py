"""gradrt's cpu kernels inside TensorFlow.

    import gradrt_tf            # before tensorflow
    import tensorflow as tf
    gradrt_tf.load()            # gradrt now runs its ops for TF's dtypes, everywhere in this process
    gradrt_tf.kernel_calls()    # {'Conv2DBackpropFilter': 12, ...}

Importing this module sets TF_ENABLE_ONEDNN_OPTS=0 when it is unset: on CPUs where TensorFlow turns
oneDNN on, its graph rewrite replaces the conv / depthwise / batch-norm ops by _MklNative* ops before
any kernel is looked up, and a kernel library would never run.
"""
import ctypes
import os

os.environ.setdefault("TF_ENABLE_ONEDNN_OPTS", "0")

__all__ = ["load", "kernel_calls", "reset_kernel_calls", "library_path", "OneDNNActiveError"]

_LIB = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_gradrt_tf_kernels.so")
_handle = None


class OneDNNActiveError(RuntimeError):
    """TensorFlow's oneDNN graph rewrite is on, so gradrt's kernels would never run."""


def library_path():
    """The kernel library (for tf.load_library in another process or a TF_CONFIG worker)."""
    return _LIB


def _probe(handle, tf):
    """Runs one tiny Conv2DBackpropFilter eagerly; True when it ran in gradrt. TF decides once per
    process whether oneDNN is on (and exposes no API for it); its eager rewrite then sends the op to
    _MklNativeConv2DBackpropFilter, and gradrt's counter stays put."""
    from tensorflow.python.eager import context
    before = _calls(handle).get("Conv2DBackpropFilter", 0)
    with context.eager_mode(), tf.device("/CPU:0"):  # eager even under disable_v2_behavior()
        x = tf.ones([1, 2, 2, 1])
        tf.raw_ops.Conv2DBackpropFilter(input=x, filter_sizes=[1, 1, 1, 1], out_backprop=x,
                                        strides=[1, 1, 1, 1], padding="VALID")
    ran = _calls(handle).get("Conv2DBackpropFilter", 0) > before
    handle.gradrt_tf_add_kernel_calls(b"Conv2DBackpropFilter", -1 if ran else 0)
    return ran


def load():
    """Registers gradrt's kernels in TensorFlow (idempotent). Call it before running ops: kernels that
    TensorFlow already instantiated (the eager cache is cleared here; a tf.function traced and run before
    load() keeps its kernels) stay TF's."""
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
    if not _probe(handle, tf):
        raise OneDNNActiveError(
            "TensorFlow's oneDNN rewrite is active in this process (TF_ENABLE_ONEDNN_OPTS="
            f"{os.environ.get('TF_ENABLE_ONEDNN_OPTS', '<unset>')}): it replaces the conv, depthwise and "
            "batch-norm ops by _MklNative* ops, so gradrt's kernels would never run. Import gradrt_tf before "
            "tensorflow, or set TF_ENABLE_ONEDNN_OPTS=0 before TensorFlow starts.")
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


def kernel_calls():
    """{op name: number of calls that ran in gradrt} since load() (or reset_kernel_calls())."""
    return {} if _handle is None else _calls(_handle)


def _threads_used():
    """The thread count the last gradrt kernel call got from TF (its intra-op setting); for tests."""
    return 0 if _handle is None else _handle.gradrt_tf_last_threads()


def reset_kernel_calls():
    if _handle is not None:
        _handle.gradrt_tf_add_kernel_calls(None, 0)

