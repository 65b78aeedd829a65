"""Differential conformance: gradrt (through the plugin: the same tf.raw_ops call after load()) against
TensorFlow 2.21's own CPU kernels, for every case of cases.py.

Accuracy rule, per output: with ref64 TF's float64 result (numpy's float64 formula for the batch-norm
ops, which TF has no float64 kernel for), gradrt's error max|gradrt - ref64| must be at most
4x TF's own error max|tf - ref64| in the same dtype, plus one rounding of the result (2 ulp of the
dtype at the output's scale). float64 cases: within 1e-10 relative. Integer dtypes: equal.

GRADRT_TF_CASE_STRIDE=k runs every k-th case only (CI's second pass, with oneDNN on). With oneDNN on,
the forward ops in oneDNN's dtypes stay oneDNN's (gradrt_tf serves the gradient forms only): skipped."""
import os

import numpy as np
import pytest

import gradrt_tf
import tfops
from cases import all_cases
from conftest import before_load

CASES = all_cases()[:: int(os.environ.get("GRADRT_TF_CASE_STRIDE", "1"))]
FORWARD = ("Conv2D", "DepthwiseConv2dNative", "FusedBatchNorm", "FusedBatchNormV2", "FusedBatchNormV3")
ONEDNN_TYPES = ("float32", "bfloat16", "float16")
ULP = {"float16": 2.0 ** -10, "bfloat16": 2.0 ** -7, "float32": 2.0 ** -23, "float64": 2.0 ** -52}
NUMPY_REF = ("FusedBatchNormGrad", "FusedBatchNormGradV2", "FusedBatchNormGradV3", "FusedBatchNorm",
             "FusedBatchNormV2", "FusedBatchNormV3")


def _numpy64(case):
    v = tfops.rounded(case)
    a = case.attrs
    nchw = a["data_format"] == "NCHW"
    if case.op.startswith("FusedBatchNormGrad"):
        return tfops.batch_norm_grad64(v["x"], v["y_backprop"], v["scale"], v["reserve_space_1"],
                                       v["reserve_space_2"], np.float32(a["epsilon"]), a["is_training"], nchw)
    return tfops.batch_norm64(v["x"], v["scale"], v["offset"], v["mean"], v["variance"], np.float32(a["epsilon"]),
                              a["is_training"], nchw, np.float32(a.get("exponential_avg_factor", 1.0)))


def _tf_side(case):
    """TF's result in the case's dtype, and the float64 reference (None for integer dtypes)."""
    try:
        got = tfops.run_via(case)
    except Exception as e:  # noqa: BLE001  (recorded; the test reports it)
        return {"error": f"{type(e).__name__}: {e}"}
    if case.dtype not in tfops.FLOATS or case.op == "FractionalAvgPool":
        ref = None
    elif case.op in NUMPY_REF:
        ref = _numpy64(case)
    else:
        ref = tfops.run_via(case, "float64")
    return {"tf": got, "ref64": ref}


@before_load("conformance")
def _all_tf():
    return {cid: _tf_side(c) for cid, c in CASES}


def _operand_scale(case, i, r):
    """The scale a rounding error is measured against: the output's, or for FusedBatchNormGrad's
    x_backprop = scale*inv*(dy - mean(dy) - ...) the size of its terms (with one value per channel the
    terms cancel to 0 exactly in TF's order; gradrt's leaves a residue of their rounding)."""
    s = np.abs(r).max()
    if case.op.startswith("FusedBatchNormGrad") and i == 0:
        v = tfops.rounded(case)
        inv = 1.0 / np.sqrt(v["reserve_space_2"] + case.attrs["epsilon"])
        s = max(s, np.abs(v["y_backprop"]).max() * np.abs(v["scale"] * inv).max())
    return max(s, 1e-30)


def check_outputs(case, got, tf_out, ref64):
    assert len(got) == len(tf_out), f"{len(got)} outputs, TF gives {len(tf_out)}"
    for i, (g, t) in enumerate(zip(got, tf_out)):
        if case.op.startswith("FusedBatchNormGrad") and i >= 3 and gradrt_tf.onednn_enabled():
            continue  # reserve_space_3/4 (5): dummies nothing reads; TF's oneDNN kernel makes them scalars
        assert g.shape == t.shape, f"output {i}: shape {g.shape}, TF {t.shape}"
        if g.size == 0:
            continue
        if case.op.startswith("FusedBatchNormV") or case.op == "FusedBatchNorm":
            if i in (3, 4) and not case.attrs["is_training"]:
                continue  # TF's CPU kernel leaves reserve_space_1/2 unwritten in inference mode
        if ref64 is None or i >= len(ref64):
            if case.dtype in tfops.FLOATS and ref64 is None and case.op != "FractionalAvgPool":
                continue  # reserve_space_3: a dummy TF leaves uninitialised
            np.testing.assert_array_equal(g, t, err_msg=f"output {i}")
            continue
        r = np.broadcast_to(ref64[i], t.shape)
        if case.dtype == "float64":
            np.testing.assert_allclose(g, r, rtol=1e-10, atol=1e-12 * max(1.0, np.abs(r).max()),
                                       err_msg=f"output {i}")
            continue
        err_gr, err_tf = np.abs(g - r).max(), np.abs(t - r).max()
        allowed = 4 * err_tf + 2 * ULP[case.dtype] * _operand_scale(case, i, r)
        assert err_gr <= allowed, (f"output {i}: gradrt error {err_gr:.3g} vs float64, TF's own {err_tf:.3g} "
                                   f"(allowed {allowed:.3g})")


@pytest.mark.parametrize("cid,case", CASES, ids=[cid for cid, _ in CASES])
def test_against_tf(cid, case, tf_results):
    if gradrt_tf.onednn_enabled() and case.op in FORWARD and case.dtype in ONEDNN_TYPES:
        pytest.skip("oneDNN is on: its forward kernel serves this op")
    side = tf_results["conformance"][cid]
    assert "error" not in side, f"TF refused a case gradrt is tested on: {side['error']}"
    before = gradrt_tf.kernel_calls().get(case.op, 0)
    got = tfops.run(case)
    assert gradrt_tf.kernel_calls().get(case.op, 0) == before + 1, "the op did not run in gradrt"
    check_outputs(case, got, side["tf"], side["ref64"])
