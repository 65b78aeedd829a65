"""One pytest process, both kernels: every test's TF results (TF's own CPU kernels, in the case's dtype
and in float64) are computed first, in a session fixture that runs before the first test; then
gradrt_tf.load() replaces the kernels (Priority(1)) and the tests run the same tf.raw_ops calls on
gradrt's. load() clears TF's eager kernel cache, so no TF kernel made before survives it.

TensorFlow's oneDNN setting is the environment's (TF_ENABLE_ONEDNN_OPTS; CI runs the suite once with
it off and once on): with it on, TF's side is oneDNN's kernels and gradrt serves the _MklNative forms."""
import os
import sys

import gradrt_tf  # noqa: F401

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import pytest  # noqa: E402
import tensorflow as tf  # noqa: E402

tf.config.threading.set_intra_op_parallelism_threads(int(os.environ.get("GRADRT_TF_TEST_THREADS", "2")))

# Collected by the modules at import: name -> function computing TF's side before load().
BEFORE_LOAD = {}
RESULTS = {}


def before_load(name):
    """Registers fn as something to compute with TF's own kernels, before gradrt is loaded."""
    def wrap(fn):
        BEFORE_LOAD[name] = fn
        return fn
    return wrap


@pytest.fixture(scope="session", autouse=True)
def tf_then_gradrt():
    for name, fn in BEFORE_LOAD.items():
        RESULTS[name] = fn()
    gradrt_tf.load()
    yield


@pytest.fixture(scope="session")
def tf_results():
    return RESULTS
