"""Relu, Relu6, ReluGrad, Relu6Grad, BiasAdd and BiasAddGrad: gradrt through the command-line tool
(gradrt_cli.py: `gradrt run`, cpu backend) against TensorFlow 2.21's own CPU kernels, on seeded cases
over shapes (rank 0-6, empty ones), dtypes and data formats, with features at the kinks (0, -0, 6 and
their neighbours in the dtype), NaN and +-inf in features and gradients.

gradrt_tf does not register these ops: they would replace TF's fused elementwise kernels in every Keras
step (checked by the last test), so TF's results here are always TF's own kernels.

Rules: the elementwise ops and BiasAdd round nothing beyond TF's one operation: equal to TF, NaN where
TF has NaN (a zero's sign is not compared: TF's own Relu gives -0 or +0 for -0 depending on whether its
vector body or scalar tail ran). BiasAddGrad: with ref64 the float64 sum of the same inputs, gradrt's
error max|gradrt - ref64| is at most 4x TF's own error plus one rounding of the result (2 ulp at the
output's scale); float64 within 1e-12 relative. TF sums bfloat16 in bfloat16, gradrt in float32."""
import numpy as np
import pytest
import tensorflow as tf

import gradrt_cli

DTYPES = ("float32", "float64", "float16", "bfloat16")
TF_DTYPE = {"float16": tf.float16, "bfloat16": tf.bfloat16, "float32": tf.float32, "float64": tf.float64}
ULP = {"float16": 2.0 ** -10, "bfloat16": 2.0 ** -7, "float32": 2.0 ** -23, "float64": 2.0 ** -52}


def _round(a, dtype):
    """float64 values rounded to dtype (and back to float64): what both sides compute on."""
    return tf.cast(tf.cast(tf.constant(a, tf.float64), TF_DTYPE[dtype]), tf.float64).numpy()


def _specials(dtype):
    """Features on every branch of the relu rules: the kinks and their neighbours in dtype, NaN, +-inf."""
    up = 6 * ULP[dtype]  # the spacing of dtype's numbers at 6 is 4 ulp; +-ulp*6 lands next to 6 or on it
    return [0.0, -0.0, 6.0, 6.0 + up, 6.0 - up, 1e-30 if dtype != "float16" else 6e-8, -6e-8, np.nan, np.inf, -np.inf]


def _values(rng, shape, dtype, specials=True):
    v = rng.uniform(-8, 8, size=shape)
    if specials and v.size:
        s = np.array(_specials(dtype))
        mask = rng.random(size=shape) < 0.3
        v[mask] = s[rng.integers(0, len(s), size=int(mask.sum()))]
    return _round(v, dtype)


def _cases():
    rng = np.random.default_rng(2021)
    out = []
    relu_shapes = [[], [1], [7], [3, 5], [2, 4, 17], [2, 3, 5, 33], [1, 9, 9, 64], [0, 4], [2, 0, 3],
                   [2, 1, 3, 1, 2, 3]]
    for dtype in DTYPES:
        for shape in relu_shapes:
            x, g = _values(rng, shape, dtype), _values(rng, shape, dtype)
            for op in ("Relu", "Relu6"):
                out.append((op, {"features": x}, {}, dtype))
            for op in ("ReluGrad", "Relu6Grad"):
                out.append((op, {"gradients": g, "features": x}, {}, dtype))
    bias_shapes = [([3, 5], "NHWC"), ([3, 5], "NCHW"), ([2, 4, 7], "NHWC"), ([2, 7, 4], "NCHW"),
                   ([2, 5, 6, 17], "NHWC"), ([2, 17, 5, 6], "NCHW"), ([1, 2, 3, 4, 9], "NHWC"),
                   ([1, 9, 2, 3, 4], "NCHW"), ([8, 16, 16, 64], "NHWC"), ([8, 64, 16, 16], "NCHW"),
                   ([0, 4, 3], "NHWC"), ([4, 3, 0], "NCHW"), ([4, 0], "NHWC"), ([1, 2, 1, 1, 1, 3], "NCHW")]
    for dtype in DTYPES:
        for shape, fmt in bias_shapes:
            c = shape[1] if fmt == "NCHW" else shape[-1]
            x, dy = _values(rng, shape, dtype, False), _values(rng, shape, dtype, False)
            b = _values(rng, [c], dtype, False)
            out.append(("BiasAdd", {"value": x, "bias": b}, {"data_format": fmt}, dtype))
            out.append(("BiasAddGrad", {"out_backprop": dy}, {"data_format": fmt}, dtype))
    # NaN and +-inf in BiasAdd and BiasAddGrad data (IEEE sums: NaN, +-inf, inf - inf).
    for dtype in ("float32", "float16"):
        v = _round(np.array([[np.inf, 1, np.nan], [-np.inf, 2, 3], [np.inf, np.inf, 4]]), dtype)
        out.append(("BiasAdd", {"value": v, "bias": _round(np.array([1, -np.inf, 2]), dtype)}, {}, dtype))
        out.append(("BiasAddGrad", {"out_backprop": v}, {}, dtype))
    return out


CASES = _cases()


def _id(case):
    op, inputs, attrs, dtype = case
    shape = "x".join(map(str, next(iter(inputs.values())).shape)) or "scalar"
    return f"{op}-{shape}-{attrs.get('data_format', '')}-{dtype}".replace("--", "-")


def _tf(op, inputs, attrs, dtype):
    with tf.device("/CPU:0"):
        args = {k: tf.cast(tf.constant(v, tf.float64), TF_DTYPE[dtype]) for k, v in inputs.items()}
        return tf.cast(getattr(tf.raw_ops, op)(**args, **attrs), tf.float64).numpy()


def _gradrt(op, inputs, attrs, dtype):
    npy = np.float32 if dtype == "bfloat16" else np.dtype(dtype)
    code, out = gradrt_cli.run(op, {k: v.astype(npy) for k, v in inputs.items()}, attrs, dtype == "bfloat16")
    assert code is None, f"gradrt refused it: {code}: {out}"
    name = "backprops" if op.endswith("Grad") and op.startswith("Relu") else "activations" if op.startswith("Relu") \
        else "output"
    return out[name].astype(np.float64)


@pytest.mark.skipif(gradrt_cli.MISSING, reason=f"no gradrt CLI at {gradrt_cli.CLI} (the native stage builds it)")
@pytest.mark.parametrize("case", CASES, ids=[_id(c) for c in CASES])
def test_relu_bias_against_tf(case):
    op, inputs, attrs, dtype = case
    want = _tf(op, inputs, attrs, dtype)
    got = _gradrt(op, inputs, attrs, dtype)
    assert got.shape == want.shape
    if op != "BiasAddGrad":
        np.testing.assert_array_equal(got, want)  # NaN == NaN, -0 == +0
        return
    dy = inputs["out_backprop"]
    axes = tuple(i for i in range(dy.ndim) if i != (1 if attrs.get("data_format") == "NCHW" else dy.ndim - 1))
    with np.errstate(invalid="ignore"):
        ref = dy.sum(axis=axes)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(ref))
    finite = np.isfinite(ref)
    np.testing.assert_array_equal(got[~finite], ref[~finite])
    if dtype == "float64":
        np.testing.assert_allclose(got, ref, rtol=1e-12, atol=1e-12 * np.abs(dy).sum())
        return
    got, want, ref = got[finite], want[finite], ref[finite]
    scale = np.max(np.abs(ref), initial=0.0)
    err_tf = np.max(np.abs(want - ref), initial=0.0)
    err = np.max(np.abs(got - ref), initial=0.0)
    assert err <= 4 * err_tf + 2 * ULP[dtype] * scale, f"gradrt error {err}, TF's {err_tf}, scale {scale}"


def test_gradrt_tf_does_not_take_these_ops():
    import gradrt_tf
    gradrt_tf.load()
    x = tf.constant([[-1.0, 2.0]])
    tf.raw_ops.ReluGrad(gradients=x, features=x)
    tf.raw_ops.BiasAddGrad(out_backprop=x)
    calls = gradrt_tf.kernel_calls()
    assert not {"Relu", "Relu6", "ReluGrad", "Relu6Grad", "BiasAdd", "BiasAddGrad"} & set(calls), calls
