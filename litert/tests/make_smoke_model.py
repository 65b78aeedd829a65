"""Writes litert/tests/data/smoke_cnn.tflite and smoke_cnn_losses.txt: a tiny CNN with a `train` and an `infer` signature,
converted by TF 2.21's TFLite converter (SELECT_TF_OPS, resource variables). Its train step has Flex
gradient ops (conv filter, depthwise input and filter, fused batch norm and its gradient) that gradrt runs. Needs tensorflow-cpu==2.21.0:
    python litert/tests/make_smoke_model.py litert/tests/data/smoke_cnn.tflite
Also fractional_avg_pool.tflite (+ _losses.txt): a train step through the plain custom ops
FractionalAvgPool / FractionalAvgPoolGrad (allow_custom_ops; not in Flex's list).
The losses file holds TF's own losses (tf.function, float32) of 3 train steps on smoke_inputs()
from a fresh copy of the module: the reference of the C++ smoke test (same inputs there).
"""
import sys

import numpy as np
import tensorflow as tf


class Cnn(tf.Module):
    def __init__(self):
        rng = np.random.default_rng(7)
        f32 = lambda *s: tf.Variable(rng.normal(0, 0.3, s).astype(np.float32))
        self.w1 = f32(3, 3, 2, 4)
        self.b1 = tf.Variable(np.zeros(4, np.float32))
        self.gamma = tf.Variable(np.ones(4, np.float32))
        self.beta = tf.Variable(np.zeros(4, np.float32))
        self.dw = f32(3, 3, 4, 1)
        self.w2 = f32(4, 3)

    def logits(self, x):
        h = tf.nn.conv2d(x, self.w1, strides=[1, 2, 2, 1], padding="VALID") + self.b1
        h, _, _ = tf.compat.v1.nn.fused_batch_norm(h, self.gamma, self.beta, epsilon=1e-3, is_training=True)
        h = h * h  # no relu: only ops gradrt had before issue 20 (litert-py's models cover relu and pooling)
        h = tf.nn.depthwise_conv2d(h, self.dw, strides=[1, 1, 1, 1], padding="SAME")
        h = tf.reduce_mean(h, axis=[1, 2])
        return tf.matmul(h, self.w2)

    @tf.function(input_signature=[tf.TensorSpec([2, 9, 9, 2], tf.float32), tf.TensorSpec([2, 3], tf.float32)])
    def train(self, x, y):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(self.logits(x) - y))
        vs = [self.w1, self.b1, self.gamma, self.beta, self.dw, self.w2]
        for v, g in zip(vs, tape.gradient(loss, vs)):
            v.assign_sub(0.1 * g)
        return {"loss": loss}

    @tf.function(input_signature=[tf.TensorSpec([2, 9, 9, 2], tf.float32)])
    def infer(self, x):
        return {"logits": self.logits(x)}


class FracPool(tf.Module):
    def __init__(self):
        self.w = tf.Variable(np.linspace(0.5, 1.5, 50, dtype=np.float32).reshape(1, 5, 5, 2))

    @tf.function(input_signature=[tf.TensorSpec([1, 5, 5, 2], tf.float32)])
    def train(self, x):
        with tf.GradientTape() as tape:
            y, _, _ = tf.nn.fractional_avg_pool(x * self.w, [1.0, 1.5, 1.5, 1.0], pseudo_random=True,
                                                overlapping=True, seed=3)
            loss = tf.reduce_sum(y * y)
        self.w.assign_sub(0.01 * tape.gradient(loss, self.w))
        return {"loss": loss}


def convert(module, fns, path):
    conv = tf.lite.TFLiteConverter.from_concrete_functions([f.get_concrete_function() for f in fns], module)
    conv.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS, tf.lite.OpsSet.SELECT_TF_OPS]
    conv.experimental_enable_resource_variables = True
    conv.allow_custom_ops = True
    open(path, "wb").write(conv.convert())


def write_losses(path, losses):
    open(path.replace(".tflite", "_losses.txt"), "w").write("".join("%.9g\n" % v for v in losses))


def smoke_inputs():
    # The same formulas as litert/tests/test_runtime.cpp: x[i] = ((37 i) mod 11) / 11 - 0.5, y[i] = i / 6.
    x = (((np.arange(2 * 9 * 9 * 2) * 37) % 11) / 11.0 - 0.5).astype(np.float32).reshape(2, 9, 9, 2)
    y = (np.arange(6) / 6.0).astype(np.float32).reshape(2, 3)
    return x, y


m = Cnn()
convert(m, [m.train, m.infer], sys.argv[1])
ref = Cnn()
x, y = smoke_inputs()
write_losses(sys.argv[1], [float(ref.train(x, y)["loss"]) for _ in range(3)])

frac_path = sys.argv[1].replace("smoke_cnn.tflite", "fractional_avg_pool.tflite")
f = FracPool()
convert(f, [f.train], frac_path)
ref = FracPool()
xf = x.reshape(-1)[:50].reshape(1, 5, 5, 2)  # the first 50 values of smoke_inputs()'s x
write_losses(frac_path, [float(ref.train(xf)["loss"]) for _ in range(3)])
