"""gradrt_tf with TensorFlow's oneDNN on: the gradients of a tf-keras model whose backward pass TF rewrites
into every _MklNative form gradrt serves (Conv2DBackpropFilterWithBias, the conv and depthwise input and
filter gradients, FusedBatchNormGradV3 after oneDNN's fused FusedBatchNormEx forward), eagerly, in a
tf.function and under tf.distribute, NHWC and NCHW, against stock TensorFlow with oneDNN on (its own oneDNN
kernels) in another process with the same seeds. Each side is a fresh process: TF reads the oneDNN switch
once, and load() cannot be undone."""
import json
import os
import subprocess
import sys

import numpy as np
import pytest

CHILD = r'''
import json, os, sys
import numpy as np
os.environ["TF_ENABLE_ONEDNN_OPTS"] = "1"
os.environ["TF_USE_LEGACY_KERAS"] = "1"
os.environ["TF_CPP_MIN_LOG_LEVEL"] = "2"
import tensorflow as tf
import tf_keras as keras
side, fmt, out = sys.argv[1:4]
tf.config.threading.set_intra_op_parallelism_threads(2)
gradrt_tf = None
if side == "gradrt":
    import gradrt_tf
    gradrt_tf.load()
L = keras.layers
axis = 1 if fmt == "channels_first" else -1


def model():
    keras.utils.set_random_seed(3)
    shape = (3, 12, 12) if fmt == "channels_first" else (12, 12, 3)
    inp = keras.Input(shape)
    y = L.Conv2D(8, 3, padding="same", data_format=fmt, use_bias=False)(inp)     # (a bias before BN: grad ~0)
    y = L.ReLU()(L.BatchNormalization(axis=axis)(y))                            # FusedBatchNormEx forward
    y = L.DepthwiseConv2D(3, strides=2, padding="same", data_format=fmt, use_bias=False)(y)  # input + filter
    y = L.ReLU()(L.BatchNormalization(axis=axis)(y))
    y = L.Conv2D(16, 1, data_format=fmt, use_bias=False)(y)                     # 1x1 input + filter
    y = L.Conv2D(16, 3, strides=2, padding="valid", data_format=fmt)(y)         # strided, filter + bias grad
    y = L.GlobalAveragePooling2D(data_format=fmt)(y)
    return keras.Model(inp, L.Dense(5)(y))


rng = np.random.default_rng(5)
x = rng.standard_normal((6, 12, 12, 3)).astype(np.float32)
if fmt == "channels_first":
    x = np.ascontiguousarray(x.transpose(0, 3, 1, 2))
labels = rng.integers(0, 5, 6)
loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True, reduction="sum")


def grads(m, x, y):
    with tf.GradientTape() as tape:
        loss = loss_fn(y, m(x, training=True))
    return tape.gradient(loss, m.trainable_variables)


results = {}
m = model()
results["eager"] = grads(m, tf.constant(x), tf.constant(labels))
results["function"] = tf.function(grads)(m, tf.constant(x), tf.constant(labels))
strategy = tf.distribute.MirroredStrategy(["/cpu:0"])
with strategy.scope():
    md = model()
results["distribute"] = strategy.run(tf.function(grads), args=(md, tf.constant(x), tf.constant(labels)))
np.savez(out, **{f"{k}_{i}": g.numpy() for k, gs in results.items() for i, g in enumerate(gs)})
print(json.dumps(gradrt_tf.kernel_calls(forms=True) if gradrt_tf else {}))
'''


def _run(side, fmt, tmp_path):
    out = str(tmp_path / f"{side}_{fmt}.npz")
    r = subprocess.run([sys.executable, "-c", CHILD, side, fmt, out], capture_output=True, text=True, timeout=300,
                       env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2"))
    assert r.returncode == 0, r.stderr[-3000:]
    return dict(np.load(out)), json.loads(r.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("fmt", ["channels_last", "channels_first"])
def test_keras_gradients_with_onednn_on(fmt, tmp_path):
    ref, _ = _run("stock", fmt, tmp_path)
    got, forms = _run("gradrt", fmt, tmp_path)
    for form, runs in (("_MklNativeConv2DBackpropFilterWithBias", 2), ("_MklNativeConv2DBackpropFilter", 3),
                       ("_MklNativeConv2DBackpropInput", 3), ("_MklNativeDepthwiseConv2dNativeBackpropInput", 3),
                       ("_MklNativeDepthwiseConv2dNativeBackpropFilter", 3), ("_MklNativeFusedBatchNormGradV3", 3)):
        # eager, tf.function and tf.distribute each ran every form at least once; the graph pass alone
        # fuses the bias gradient (eager runs the plain filter gradient and BiasAddGrad)
        assert forms.get(form, 0) >= runs, f"{form} ran in gradrt fewer than {runs} times: {forms}"
    assert set(got) == set(ref)
    for name in sorted(ref):
        scale = max(np.abs(ref[name]).max(), 1e-30)
        err = np.abs(got[name] - ref[name]).max()
        assert err <= 2e-5 * scale + 1e-7, f"{name}: max |gradrt - oneDNN| {err:.3g}, scale {scale:.3g}"


BIAS = r'''
import os, sys, json
os.environ["TF_ENABLE_ONEDNN_OPTS"] = "1"
import numpy as np, tensorflow as tf, gradrt_tf
gradrt_tf.load()
rng = np.random.default_rng(9)
out = {}
for fmt in ("NHWC", "NCHW"):
    for dtype in (tf.float32, tf.bfloat16):
        xs, ys = ([2, 9, 9, 3], [2, 9, 9, 70]) if fmt == "NHWC" else ([2, 3, 9, 9], [2, 70, 9, 9])
        x = tf.cast(rng.standard_normal(xs), dtype)
        dy = tf.cast(rng.standard_normal(ys), dtype)

        @tf.function
        def f(x, dy):
            dw = tf.raw_ops.Conv2DBackpropFilter(input=x, filter_sizes=[3, 3, 3, 70], out_backprop=dy,
                                                 strides=[1, 1, 1, 1], padding="SAME", data_format=fmt)
            return dw, tf.raw_ops.BiasAddGrad(out_backprop=dy, data_format=fmt)

        before = gradrt_tf.kernel_calls(forms=True).get("_MklNativeConv2DBackpropFilterWithBias", 0)
        dw, db = f(x, dy)
        fused = gradrt_tf.kernel_calls(forms=True).get("_MklNativeConv2DBackpropFilterWithBias", 0) - before
        axes = (0, 1, 2) if fmt == "NHWC" else (0, 2, 3)
        ref = np.sum(tf.cast(dy, tf.float64).numpy(), axis=axes)
        err = float(np.abs(tf.cast(db, tf.float64).numpy() - ref).max())
        out[f"{fmt} {dtype.name}"] = [fused, err, float(np.abs(ref).max())]
print(json.dumps(out))
'''


def test_filter_gradient_with_bias_gradient():
    # The graph pass fuses Conv2DBackpropFilter with the BiasAddGrad of the same out_backprop; gradrt
    # computes the bias gradient (each channel's sum) itself: against numpy's float64 sum of the same values.
    r = subprocess.run([sys.executable, "-c", BIAS], capture_output=True, text=True, timeout=300,
                       env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2"))
    assert r.returncode == 0, r.stderr[-3000:]
    for key, (fused, err, scale) in json.loads(r.stdout.strip().splitlines()[-1]).items():
        assert fused == 1, f"{key}: the WithBias form did not run in gradrt"
        ulp = 2.0 ** -7 if "bfloat16" in key else 2.0 ** -23
        assert err <= 2 * ulp * scale + 1e-5 * scale, f"{key}: bias gradient error {err:.3g} (scale {scale:.3g})"
