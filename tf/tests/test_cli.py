"""The same cases through `gradrt run` (the command-line tool, .npy files, cpu backend) against
the plugin's result for the case, which test_conformance checks against TensorFlow: both run gradrt's
deterministic cpu kernels, so they must agree to the bit (bfloat16: the CLI writes float32 files
holding bfloat16 values). Every 10th case; GRADRT_CLI names the tool (default build/gradrt)."""
import json
import os
import subprocess
import tempfile

import numpy as np
import pytest

import tfops
from cases import all_cases

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CLI = os.environ.get("GRADRT_CLI", os.path.join(ROOT, "build", "gradrt"))
CASES = [(cid, c) for i, (cid, c) in enumerate(all_cases()) if i % 10 == 0]
NPY = {"float16": np.float16, "bfloat16": np.float32, "float32": np.float32, "float64": np.float64,
       "int32": np.int32, "int64": np.int64}


def run_cli(case, out_dir):
    cmd = [CLI, "run", case.op, "--backend", "cpu", "--out", out_dir]
    for k, v in case.attrs.items():
        cmd += ["--attr", f"{k}={json.dumps(v)}"]
    if case.dtype == "bfloat16":
        cmd += ["--attr", 'T="bfloat16"']
    for name, a in tfops.rounded(case).items():
        kind = case.kinds[name]
        dt = {"T": NPY[case.dtype], "U": np.float32, "i32": np.int32, "i64": np.int64}[kind]
        path = os.path.join(out_dir, f"in_{name}.npy")
        np.save(path, np.asarray(a).astype(dt))
        cmd += ["--input", f"{name}={path}"]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, f"{' '.join(cmd)}\n{r.stderr}"
    return r


@pytest.mark.skipif(not os.path.exists(CLI) and not os.environ.get("GRADRT_TF_REQUIRE_CLI"),
                    reason=f"no gradrt CLI at {CLI} (the native stage builds it)")
@pytest.mark.parametrize("cid,case", CASES, ids=[cid for cid, _ in CASES])
def test_cli_matches_plugin(cid, case):
    import gradrt_tf
    gradrt_tf.load()
    plugin = tfops.run(case)
    with tempfile.TemporaryDirectory() as d:
        run_cli(case, d)
        for i, name in enumerate(OUTPUTS[case.op]):
            if case.op == "FusedBatchNormV3" and name == "reserve_space_3":
                continue  # the plugin gives TF's scalar dummy, gradrt's API an empty tensor (DIFFERENCES.md 2)
            got = np.load(os.path.join(d, f"{name}.npy"))
            assert got.shape == plugin[i].shape, f"{name}: CLI shape {got.shape}, plugin {plugin[i].shape}"
            if got.size:
                np.testing.assert_array_equal(got.astype(plugin[i].dtype), plugin[i], err_msg=name)


OUTPUTS = {  # the files `gradrt run` writes, in the op's output order (contract.md)
    "Conv2D": ["output"], "Conv2DBackpropInput": ["output"], "Conv2DBackpropFilter": ["output"],
    "Conv2DBackpropInputV2": ["output"], "Conv2DBackpropFilterV2": ["output"], "DepthwiseConv2dNative": ["output"],
    "DepthwiseConv2dNativeBackpropInput": ["output"], "DepthwiseConv2dNativeBackpropFilter": ["output"],
    "FractionalAvgPool": ["output", "row_pooling_sequence", "col_pooling_sequence"],
    "FractionalAvgPoolGrad": ["output"],
    "FusedBatchNorm": ["y", "batch_mean", "batch_variance", "reserve_space_1", "reserve_space_2"],
    "FusedBatchNormV2": ["y", "batch_mean", "batch_variance", "reserve_space_1", "reserve_space_2"],
    "FusedBatchNormV3": ["y", "batch_mean", "batch_variance", "reserve_space_1", "reserve_space_2", "reserve_space_3"],
    "FusedBatchNormGrad": ["x_backprop", "scale_backprop", "offset_backprop", "reserve_space_3", "reserve_space_4"],
    "FusedBatchNormGradV2": ["x_backprop", "scale_backprop", "offset_backprop", "reserve_space_3",
                             "reserve_space_4"],
    "FusedBatchNormGradV3": ["x_backprop", "scale_backprop", "offset_backprop", "reserve_space_4",
                             "reserve_space_5"],
}
