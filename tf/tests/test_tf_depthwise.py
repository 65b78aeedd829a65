"""Item 3: TensorFlow's own depthwise test class (tensorflow/python/kernel_tests/nn_ops/
depthwise_conv_op_base.py, shipped in the wheel) run with gradrt's kernels loaded.

Runs in a child process per mode: "v2" (TF 2 behaviour, how TF's own test target runs it; the
@run_v1_only tests skip themselves) and "v1" (tf.compat.v1.disable_v2_behavior(), which runs those
too: graph mode, sessions). Four tests (the NCHW ones and the unknown-shape one) return at once when
no GPU is found, because TF's CPU kernels take no NCHW depthwise; gradrt's do, so mode "v1-nchw"
runs just those four with the class's GPU check answering yes (the ops still run on the CPU, in
gradrt; TF's own numbers: a numpy reference and the gradient checker). Each test's outcome and gradrt's depthwise counters come back as JSON;
every test that passes must have run depthwise ops in gradrt, and nothing may fail or error. The
skips (GPU-only, v1-only) are printed with their reasons (pytest -s, or the report in the failure)."""
import json
import os
import subprocess
import sys

import pytest

GPU_RETURNS = ("testDepthwiseConv2DFormat", "testDepthwiseConv2DInputGradFormat", "testDepthwiseConv2DFilterGradFormat",
               "testDepthwiseConv2DWithUnknownShape")
DEPTHWISE_OPS = ("DepthwiseConv2dNative", "DepthwiseConv2dNativeBackpropInput", "DepthwiseConv2dNativeBackpropFilter")


def _child(mode):
    import unittest

    import gradrt_tf
    import tensorflow as tf
    if mode.startswith("v1"):
        tf.compat.v1.disable_v2_behavior()
    gradrt_tf.load()
    from tensorflow.python.kernel_tests.nn_ops import depthwise_conv_op_base as base
    if mode == "v1-nchw":
        base.test.is_gpu_available = lambda *a, **k: True

    report = {}

    class Result(unittest.TestResult):
        def startTest(self, test):
            super().startTest(test)
            self._before = gradrt_tf.kernel_calls()

        def _record(self, test, outcome, detail=""):
            after = gradrt_tf.kernel_calls()
            calls = {op: after.get(op, 0) - self._before.get(op, 0) for op in DEPTHWISE_OPS}
            report[test._testMethodName] = {"outcome": outcome, "detail": detail[-1500:], "calls": calls}

        def addSuccess(self, test):
            self._record(test, "passed")

        def addSkip(self, test, reason):
            self._record(test, "skipped", reason)

        def addFailure(self, test, err):
            self._record(test, "failed", self._exc_info_to_string(err, test))

        def addError(self, test, err):
            self._record(test, "error", self._exc_info_to_string(err, test))

    class DepthwiseWithGradrt(base.DepthwiseConv2DBase):
        pass

    suite = unittest.defaultTestLoader.loadTestsFromTestCase(DepthwiseWithGradrt)
    if mode == "v1-nchw":
        suite = unittest.TestSuite(DepthwiseWithGradrt(n) for n in GPU_RETURNS)
    suite.run(Result())
    print("REPORT " + json.dumps(report), flush=True)


@pytest.mark.parametrize("mode", ["v2", "v1", "v1-nchw"])
def test_tf_depthwise_class_with_gradrt(mode):
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2")
    r = subprocess.run([sys.executable, __file__, mode], capture_output=True, text=True, env=env, timeout=900)
    lines = [line for line in r.stdout.splitlines() if line.startswith("REPORT ")]
    assert r.returncode == 0 and lines, r.stderr[-3000:]
    report = json.loads(lines[-1][len("REPORT "):])
    summary = []
    problems = []
    for name, t in sorted(report.items()):
        summary.append(f"{mode} {name}: {t['outcome']} {t['detail'][:100] if t['outcome'] == 'skipped' else ''}"
                       f" gradrt calls {sum(t['calls'].values())}")
        if t["outcome"] in ("failed", "error"):
            problems.append(f"{name}: {t['outcome']}\n{t['detail']}")
        elif t["outcome"] == "passed" and sum(t["calls"].values()) == 0:
            if mode == "v1" and name in GPU_RETURNS:
                continue  # returned at once (no GPU); mode v1-nchw runs it
            problems.append(f"{name}: passed without running a depthwise op in gradrt")
    print("\n".join(summary))
    assert report, "no tests ran"
    assert not problems, "\n".join(problems) + "\n\n" + "\n".join(summary)


if __name__ == "__main__":
    _child(sys.argv[1])
