"""Item 3: TensorFlow's own depthwise test class (tensorflow/python/kernel_tests/nn_ops/
depthwise_conv_op_base.py, shipped in the wheel) run with gradrt's kernels loaded.

The conftest's session fixture has loaded gradrt before any test runs, so every depthwise op these
tests make (eager, graph, gradient checker) runs in gradrt; each test that runs a depthwise op
must show it in gradrt's counters. GPU-only tests skip themselves (@run_gpu_only / cuDNN)."""
import gradrt_tf
from tensorflow.python.kernel_tests.nn_ops import depthwise_conv_op_base as base

DEPTHWISE_OPS = ("DepthwiseConv2dNative", "DepthwiseConv2dNativeBackpropInput", "DepthwiseConv2dNativeBackpropFilter")


class TestTFDepthwiseWithGradrt(base.DepthwiseConv2DBase):
    def setUp(self):
        super().setUp()
        gradrt_tf.load()
        self._before = gradrt_tf.kernel_calls()

    def tearDown(self):
        after = gradrt_tf.kernel_calls()
        ran = {op: after.get(op, 0) - self._before.get(op, 0) for op in DEPTHWISE_OPS}
        # Tests that make depthwise ops must have run them in gradrt; the class's own
        # testConv2D2x2Filter checks a numpy helper only.
        if self._testMethodName != "testConv2D2x2Filter":
            assert sum(ran.values()) > 0, f"{self._testMethodName}: no depthwise op ran in gradrt"
        super().tearDown()
