"""The model zoo of the `litert` stage, run with TensorFlow (never in the gradrt_litert process).

    python litert/tests/models.py OUT [--steps 10] [--only NAME,...]

For each model below it writes, into OUT:
  <name>.tflite   the SavedModel converted by TF's TFLite converter (SELECT_TF_OPS, resource
                  variables, allow_custom_ops), signatures `train(x, y) -> loss`, `infer(x) -> logits`,
                  `weights() -> every variable by name`
  <name>.npz      the data of every step (x_<i>, y_<i>, x_infer), TF's own float32 training of the same
                  SavedModel step by step (loss_<i>, and every variable after each step: w<i>/<var>),
                  infer's logits after the last step, and the same run in float64 (f64_...) from the
                  same initial values: the float32-vs-float64 spread bounds what float32 can promise
  <name>.json     the custom ops of each signature (Flex<Op> and plain custom ops), shapes, steps
A model whose conversion is cached (its three files exist and the script is unchanged) is skipped.
"""
import argparse
import hashlib
import json
import os
import sys
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

LR = 0.05


class Net(tf.Module):
    """A CNN as a list of layers over a dict of variables; `dtype` picks float32 (the converted
    model, TF's own ops) or float64 (the spread reference: fused batch norm has no float64 CPU
    kernel in TF, so float64 writes batch norm out as its formula, mathematically the same)."""

    def __init__(self, name, layers, in_shape, classes, dtype, init):
        super().__init__(name=name)
        self.layers, self.in_shape, self.classes, self.dt = layers, in_shape, classes, dtype
        self.vars = {k: tf.Variable(v.astype(dtype.as_numpy_dtype), name=k) for k, v in init.items()}
        self.trainable = sorted(k for k in self.vars if not k.endswith(("_mean", "_var")))
        n = in_shape[0]
        spec_x = tf.TensorSpec(in_shape, dtype, name="x")
        spec_y = tf.TensorSpec([n, classes], dtype, name="y")
        self.train = tf.function(self._train, input_signature=[spec_x, spec_y])
        self.infer = tf.function(self._infer, input_signature=[spec_x])
        self.weights = tf.function(self._weights, input_signature=[])

    def forward(self, x, training):
        for layer in self.layers:
            x = layer(self, x, training)
        return x

    def _train(self, x, y):
        with tf.GradientTape() as tape:
            logits = self.forward(x, True)
            loss = -tf.reduce_mean(tf.reduce_sum(y * tf.nn.log_softmax(logits), axis=-1))
        grads = tape.gradient(loss, [self.vars[k] for k in self.trainable])
        for k, g in zip(self.trainable, grads):
            self.vars[k].assign_sub(LR * g)
        return {"loss": loss}

    def _infer(self, x):
        return {"logits": self.forward(x, False)}

    def _weights(self):
        return {k: tf.identity(v) for k, v in self.vars.items()}


# ---- layers: functions of (net, x, training) built by the helpers below; each names its variables

def conv(name, ksize, cin, cout, stride=1, padding="SAME", bias=True):
    """tf.nn.conv2d (+ bias_add). padding may be TF's explicit list [[0,0],[t,b],[l,r],[0,0]]."""
    def f(net, x, training):
        y = tf.nn.conv2d(x, net.vars[name + "_w"], [1, stride, stride, 1], padding)
        return tf.nn.bias_add(y, net.vars[name + "_b"]) if bias else y
    shapes = {name + "_w": [ksize, ksize, cin, cout]}
    if bias:
        shapes[name + "_b"] = [cout]
    return f, shapes


def depthwise(name, ksize, c, stride=1, padding="SAME"):
    def f(net, x, training):
        return tf.nn.depthwise_conv2d(x, net.vars[name + "_w"], [1, stride, stride, 1], padding)
    return f, {name + "_w": [ksize, ksize, c, 1]}


def batch_norm(name, c, data_format="NHWC", momentum=0.9, eps=1e-3):
    """Training: FusedBatchNormV3 with batch statistics, moving averages updated; inference: the
    moving averages. NCHW transposes around the op (TF's CPU conv is NHWC only)."""
    def f(net, x, training):
        scale, offset = net.vars[name + "_scale"], net.vars[name + "_offset"]
        mm, mv = net.vars[name + "_mean"], net.vars[name + "_var"]
        if data_format == "NCHW":
            x = tf.transpose(x, [0, 3, 1, 2])
        axes = [0, 2, 3] if data_format == "NCHW" else [0, 1, 2]
        if net.dt == tf.float32:
            y, mean, var = tf.compat.v1.nn.fused_batch_norm(
                x, scale, offset, None if training else mm, None if training else mv, epsilon=eps,
                data_format=data_format, is_training=training)
        else:  # float64: the formula (TF's fused op has no float64 CPU kernel)
            if training:
                mean, var = tf.nn.moments(x, axes)
                n = tf.cast(tf.reduce_prod(tf.gather(tf.shape(x), axes)), x.dtype)
                var_unbiased = var * n / (n - 1)
            else:
                mean, var = tf.identity(mm), tf.identity(mv)
            shape = [1, c, 1, 1] if data_format == "NCHW" else [c]
            r = lambda t: tf.reshape(t, shape)  # noqa: E731
            y = (x - r(mean)) * tf.math.rsqrt(r(var) + eps) * r(scale) + r(offset)
            if training:
                var = var_unbiased  # what FusedBatchNormV3 returns as batch_variance (Bessel)
        if training:
            mm.assign(mm * momentum + tf.stop_gradient(mean) * (1 - momentum))
            mv.assign(mv * momentum + tf.stop_gradient(var) * (1 - momentum))
        if data_format == "NCHW":
            y = tf.transpose(y, [0, 2, 3, 1])
        return y
    return f, {name + "_scale": ("ones", [c]), name + "_offset": [c], name + "_mean": ("zeros", [c]),
               name + "_var": ("ones", [c])}


def act(fn):
    return (lambda net, x, training: fn(x)), {}


def max_pool(k, s, padding="VALID"):
    return (lambda net, x, training: tf.nn.max_pool2d(x, k, s, padding)), {}


def avg_pool(k, s, padding="VALID"):
    return (lambda net, x, training: tf.nn.avg_pool2d(x, k, s, padding)), {}


def fractional_avg_pool(ratio, seed, overlapping=False, pseudo_random=False):
    """tf.nn.fractional_avg_pool with a seed: deterministic=True, the same sequences every call."""
    def f(net, x, training):
        return tf.nn.fractional_avg_pool(x, [1.0, ratio, ratio, 1.0], pseudo_random=pseudo_random,
                                         overlapping=overlapping, seed=seed)[0]
    return f, {}


def residual(*inner):
    """x + inner(x) (a MobileNet-v2 block with stride 1)."""
    fs = [f for f, _ in inner]
    shapes = {k: v for _, s in inner for k, v in s.items()}

    def f(net, x, training):
        y = x
        for g in fs:
            y = g(net, y, training)
        return x + y
    return f, shapes


def dense(name, cin, cout):
    def f(net, x, training):
        x = tf.reshape(x, [tf.shape(x)[0], cin])
        return tf.matmul(x, net.vars[name + "_w"]) + net.vars[name + "_b"]
    return f, {name + "_w": [cin, cout], name + "_b": [cout]}


def unsupported():
    """An op neither LiteRT's builtins nor gradrt run (Flex BesselI0e)."""
    return act(lambda x: tf.math.special.bessel_i0e(x))


# ---- the zoo: name -> (input shape NHWC, classes, layers)

def zoo(batch=4, hw=16):
    q = hw // 4  # spatial size after the two stride-2 stages of `mix`
    return {
        # every op of the op mix: conv+bias, fused batch norm, relu, max pool, depthwise, relu6,
        # explicitly padded strided conv, avg pool
        "mix": ([batch, hw, hw, 3], 5, [
            conv("c1", 3, 3, 8), batch_norm("bn1", 8), act(tf.nn.relu), max_pool(2, 2),
            depthwise("dw", 3, 8), act(tf.nn.relu6),
            conv("c2", 3, 8, 12, stride=2, padding=[[0, 0], [1, 0], [0, 1], [0, 0]]),
            act(tf.nn.relu), avg_pool(2, 1, "SAME"), dense("fc", q * q * 12, 5)]),
        # fractional pooling (a plain custom op pair: Flex's list has neither). This model and the next
        # have no activation, so they need none of the pooling/activation gradients that `mix` covers
        "fractional": ([batch, hw, hw, 3], 4, [
            conv("c1", 3, 3, 6), fractional_avg_pool(1.5, seed=7),
            conv("c2", 3, 6, 8, stride=2), fractional_avg_pool(1.4, seed=11, overlapping=True),
            dense("fc", _frac_out(-(-_frac_out(hw, 1.5) // 2), 1.4) ** 2 * 8, 4)]),
        # batch norm written in NCHW (transposes around the op; TF 2.21's converter makes it NHWC)
        "bn_nchw": ([batch, hw, hw, 3], 3, [
            conv("c1", 3, 3, 8, stride=2), batch_norm("bn1", 8, "NCHW"),
            dense("fc", (hw // 2) ** 2 * 8, 3)]),
        # a MobileNet-v2 block: expand 1x1 + bn + relu6, depthwise + bn + relu6, project 1x1 + bn, residual
        "mobilenet": ([batch, hw, hw, 3], 4, [
            conv("stem", 3, 3, 8, stride=2, bias=False), batch_norm("bn0", 8), act(tf.nn.relu6),
            residual(conv("exp", 1, 8, 24, bias=False), batch_norm("bn1", 24), act(tf.nn.relu6),
                     depthwise("dw", 3, 24), batch_norm("bn2", 24), act(tf.nn.relu6),
                     conv("proj", 1, 24, 8, bias=False), batch_norm("bn3", 8)),
            avg_pool(hw // 2, hw // 2), dense("fc", 8, 4)]),
        # an op nobody implements: prepare must name it
        "unsupported": ([batch, 8, 8, 3], 2, [conv("c1", 3, 3, 4), unsupported(), dense("fc", 8 * 8 * 4, 2)]),
    }


def _frac_out(n, ratio):
    """A fractional pool's output size: floor(float32(n) / float32(ratio)) (ops.md 5.2)."""
    return int(np.floor(np.float32(n) / np.float32(ratio)))


def initial_values(name, layers, seed):
    rng = np.random.default_rng(seed)
    out = {}
    for _, shapes in layers:
        for k, spec in shapes.items():
            if isinstance(spec, tuple):
                kind, shape = spec
                out[k] = (np.ones if kind == "ones" else np.zeros)(shape)
            else:
                fan_in = int(np.prod(spec[:-1])) if len(spec) > 1 else 1
                scale = 0.1 if len(spec) == 1 else np.sqrt(2.0 / fan_in)
                out[k] = rng.normal(0, scale, spec)
    return out


def make_data(in_shape, classes, steps, seed):
    rng = np.random.default_rng(seed + 1)
    d = {}
    for i in range(steps):
        d[f"x_{i}"] = rng.normal(0, 1, in_shape).astype(np.float32)
        d[f"y_{i}"] = np.eye(classes, dtype=np.float32)[rng.integers(0, classes, in_shape[0])]
    d["x_infer"] = rng.normal(0, 1, in_shape).astype(np.float32)
    return d


def build(name, spec, dtype, seed):
    in_shape, classes, layers = spec
    return Net(name, [f for f, _ in layers], in_shape, classes, dtype, initial_values(name, layers, seed))


def save(net, saved_dir):
    sigs = {k: getattr(net, k).get_concrete_function() for k in ("train", "infer", "weights")}
    tf.saved_model.save(net, str(saved_dir), signatures=sigs)


def convert(saved_dir):
    conv_ = tf.lite.TFLiteConverter.from_saved_model(str(saved_dir), signature_keys=["train", "infer", "weights"])
    conv_.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS, tf.lite.OpsSet.SELECT_TF_OPS]
    conv_.experimental_enable_resource_variables = True
    conv_.allow_custom_ops = True
    return conv_.convert()


def custom_ops(tflite_bytes):
    """{signature key: sorted custom codes of the ops in its subgraph} (TFLite's schema classes)."""
    from tensorflow.lite.python import schema_py_generated as schema
    m = schema.ModelT.InitFromObj(schema.Model.GetRootAsModel(tflite_bytes, 0))
    codes = [(c.customCode or b"").decode() for c in m.operatorCodes]
    out = {}
    for sig in m.signatureDefs:
        sg = m.subgraphs[sig.subgraphIndex]
        out[sig.signatureKey.decode()] = sorted({codes[op.opcodeIndex] for op in sg.operators or []} - {""})
    return out


def run_tf(net, data, steps, dtype):
    """TF's own training: `steps` calls of train, the variables after each, infer at the end."""
    out = {}
    cast = lambda a: tf.constant(a.astype(dtype.as_numpy_dtype))  # noqa: E731
    for i in range(steps):
        out[f"loss_{i}"] = net.train(x=cast(data[f"x_{i}"]), y=cast(data[f"y_{i}"]))["loss"].numpy()
        for k, v in net.weights().items():
            out[f"w{i}/{k}"] = v.numpy()
    out["logits"] = net.infer(x=cast(data["x_infer"]))["logits"].numpy()
    return out


def make_unsupported(spec, out_dir):
    """No training data: only prepare's refusal is tested."""
    save(build("unsupported", spec, tf.float32, 0), out_dir / "unsupported_saved")
    model = convert(out_dir / "unsupported_saved")
    (out_dir / "unsupported.tflite").write_bytes(model)
    np.savez(out_dir / "unsupported.npz")
    (out_dir / "unsupported.json").write_text(json.dumps({"custom_ops": custom_ops(model)}, indent=1))


def make(name, spec, out_dir, steps, seed=0):
    saved = out_dir / f"{name}_saved"
    save(build(name, spec, tf.float32, seed), saved)
    model = convert(saved)
    (out_dir / f"{name}.tflite").write_bytes(model)
    data = make_data(spec[0], spec[1], steps, seed)
    # TF's own training of the same SavedModel (a fresh load: its variables at their initial values)
    loaded = tf.saved_model.load(str(saved))
    ref = {}
    for i in range(steps):
        ref[f"loss_{i}"] = loaded.signatures["train"](x=tf.constant(data[f"x_{i}"]),
                                                      y=tf.constant(data[f"y_{i}"]))["loss"].numpy()
        for k, v in loaded.signatures["weights"]().items():
            ref[f"w{i}/{k}"] = v.numpy()
    ref["logits"] = loaded.signatures["infer"](x=tf.constant(data["x_infer"]))["logits"].numpy()
    f64 = run_tf(build(name, spec, tf.float64, seed), data, steps, tf.float64)
    np.savez(out_dir / f"{name}.npz", **data, **ref, **{f"f64_{k}": v for k, v in f64.items()})
    meta = {"custom_ops": custom_ops(model), "steps": steps, "input_shape": spec[0], "classes": spec[1]}
    (out_dir / f"{name}.json").write_text(json.dumps(meta, indent=1))
    return meta


class BadInput(tf.Module):
    """`pool_grad(out_backprop, rows, cols)`: FractionalAvgPoolGrad with the pooling sequences as
    signature inputs, so a test can hand gradrt's kernel a bad sequence at run time."""

    @tf.function(input_signature=[tf.TensorSpec([1, 2, 2, 1], tf.float32, name="out_backprop"),
                                  tf.TensorSpec([3], tf.int64, name="rows"), tf.TensorSpec([3], tf.int64, name="cols")])
    def pool_grad(self, out_backprop, rows, cols):
        return {"output": tf.raw_ops.FractionalAvgPoolGrad(
            orig_input_tensor_shape=tf.constant([1, 4, 4, 1], tf.int64), out_backprop=out_backprop,
            row_pooling_sequence=rows, col_pooling_sequence=cols)}


def make_bad_input(out_dir):
    saved = out_dir / "bad_input_saved"
    m = BadInput()
    tf.saved_model.save(m, str(saved), signatures={"pool_grad": m.pool_grad.get_concrete_function()})
    c = tf.lite.TFLiteConverter.from_saved_model(str(saved), signature_keys=["pool_grad"])
    c.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS, tf.lite.OpsSet.SELECT_TF_OPS]
    c.allow_custom_ops = True
    model = c.convert()
    (out_dir / "bad_input.tflite").write_bytes(model)
    dy = np.arange(1, 5, dtype=np.float32).reshape(1, 2, 2, 1)
    seq = np.array([0, 2, 4], np.int64)
    good = tf.raw_ops.FractionalAvgPoolGrad(orig_input_tensor_shape=[1, 4, 4, 1], out_backprop=dy,
                                            row_pooling_sequence=seq, col_pooling_sequence=seq).numpy()
    np.savez(out_dir / "bad_input.npz", out_backprop=dy, good_seq=seq, good_output=good)
    (out_dir / "bad_input.json").write_text(json.dumps({"custom_ops": custom_ops(model)}, indent=1))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--only", default="")
    ap.add_argument("--batch", type=int, default=4)
    ap.add_argument("--hw", type=int, default=16)
    a = ap.parse_args()
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    stamp = hashlib.sha256(Path(__file__).read_bytes() + f"{a.steps} {a.batch} {a.hw}".encode()).hexdigest()
    tf.config.threading.set_inter_op_parallelism_threads(1)
    makers = {name: (lambda n=name, s=spec: make(n, s, out, a.steps)) for name, spec in zoo(a.batch, a.hw).items()}
    makers["unsupported"] = lambda: make_unsupported(zoo(a.batch, a.hw)["unsupported"], out)
    makers["bad_input"] = lambda: make_bad_input(out)
    for name, maker in makers.items():
        if a.only and name not in a.only.split(","):
            continue
        files = [out / f"{name}.{e}" for e in ("tflite", "npz", "json")]
        stamp_file = out / f"{name}.stamp"
        if all(f.exists() for f in files) and stamp_file.exists() and stamp_file.read_text() == stamp:
            print(f"{name}: cached", flush=True)
            continue
        maker()
        stamp_file.write_text(stamp)
        print(f"{name}: {json.loads(files[2].read_text())['custom_ops']}", flush=True)


if __name__ == "__main__":
    sys.exit(main())
