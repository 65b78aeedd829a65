"""MaxPool, MaxPoolGrad, AvgPool and AvgPoolGrad against TensorFlow 2.21's own CPU kernels, through
`gradrt run` (the command-line tool, .npy files): gradrt_tf does not register these ops by default (TF's
oneDNN MaxPoolGrad keeps a workspace; TF's own kernels stay in charge inside TF), so the CLI is the
path under test. TF's side is computed before gradrt_tf.load(), as everywhere in tf/tests.

MaxPoolGrad must equal TF to the bit in float32 and float64 (which input of a window receives the
gradient: ties, NaN, -inf, padding; the sums in TF's order). NCHW runs in gradrt and is compared with
TF's NHWC result transposed (TF's CPU pools take NHWC only). The hostile cases of
tests/data/hostile/<stem>.json get the same error class from the CLI as from TF where TF refuses them.
GRADRT_CLI names the tool (default build/gradrt)."""
import json
import os
import random
import subprocess
import tempfile

import numpy as np
import pytest

from conftest import before_load

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CLI = os.environ.get("GRADRT_CLI", os.path.join(ROOT, "build", "gradrt"))
HAVE_CLI = os.path.exists(CLI) or os.environ.get("GRADRT_TF_REQUIRE_CLI")
DTYPES = ("float32", "float64", "float16", "bfloat16")
STEMS = {"MaxPool": "max_pool", "MaxPoolGrad": "max_pool_grad", "AvgPool": "avg_pool", "AvgPoolGrad": "avg_pool_grad"}


def _out_size(n, k, s, padding, pads):
    if padding == "SAME":
        o = -(-n // s)
        return o, max((o - 1) * s + k - n, 0) // 2
    if padding == "EXPLICIT":
        n += pads[0] + pads[1]
    return (n - k) // s + 1 if n >= k else 0, pads[0] if padding == "EXPLICIT" else 0


def _cases(seed=20):
    """(id, op, dtype, inputs NHWC (float64 / int arrays), attrs NHWC, nchw) tuples."""
    rng = random.Random(seed)
    nrng = np.random.default_rng(seed)
    out = []
    for i in range(160):
        dtype = DTYPES[i % 4]
        special = i % 3 == 0 and dtype in ("float32", "float64")  # NaN and -inf among ties
        n, h, w, c = rng.randint(1, 2), rng.randint(1, 8), rng.randint(1, 8), rng.randint(1, 5)
        kh, kw, sh, sw = rng.randint(1, 4), rng.randint(1, 4), rng.randint(1, 3), rng.randint(1, 3)
        padding = ("VALID", "SAME", "EXPLICIT")[i % 3 if i % 2 == 0 else (i // 2) % 2]
        pads = [rng.randint(0, kh - 1), rng.randint(0, kh - 1), rng.randint(0, kw - 1), rng.randint(0, kw - 1)]
        oh, _ = _out_size(h, kh, sh, padding, pads[:2])
        ow, _ = _out_size(w, kw, sw, padding, pads[2:])
        if oh <= 0 or ow <= 0:
            continue
        x = nrng.integers(0, 3, (n, h, w, c)).astype(np.float64) if i % 2 else nrng.uniform(-2, 2, (n, h, w, c))
        if special:
            x[nrng.random(x.shape) < 0.1] = np.nan
            x[nrng.random(x.shape) < 0.1] = -np.inf
        dy = nrng.uniform(-1, 1, (n, oh, ow, c))
        attrs = {"ksize": [1, kh, kw, 1], "strides": [1, sh, sw, 1], "padding": padding}
        if padding == "EXPLICIT":
            attrs["explicit_paddings"] = [0, 0, pads[0], pads[1], pads[2], pads[3], 0, 0]
        nchw = i % 4 == 1
        tag = f"{i:03d} {dtype} k{kh}x{kw} s{sh}x{sw} {padding}{' NCHW' if nchw else ''}{' nan/-inf' if special else ''}"
        out.append((tag + " MaxPool", "MaxPool", dtype, {"input": x}, attrs, nchw))
        out.append((tag + " MaxPoolGrad", "MaxPoolGrad", dtype, {"orig_input": x, "grad": dy}, attrs, nchw))
        # TF's Eigen AvgPoolGrad counts a SAME window larger than the input that starts in the
        # padding as the whole input (tf/DIFFERENCES.md): only shapes where it counts real cells.
        if padding != "EXPLICIT" and not special and not (padding == "SAME" and (kh > h or kw > w)):
            a = {k: v for k, v in attrs.items()}
            out.append((tag + " AvgPool", "AvgPool", dtype, {"value": x}, a, nchw))
            out.append((tag + " AvgPoolGrad", "AvgPoolGrad", dtype, {"orig_input_shape": np.array([n, h, w, c]), "grad": dy},
                        a, nchw))
    return out


CASES = _cases()


def _tf_dtype(dtype):
    import tensorflow as tf
    return {"float16": tf.float16, "bfloat16": tf.bfloat16, "float32": tf.float32, "float64": tf.float64}[dtype]


def _rounded(a, dtype):
    """a rounded to dtype, as float64 (both sides get exactly these values)."""
    import tensorflow as tf
    return tf.cast(tf.cast(tf.constant(a, tf.float64), _tf_dtype(dtype)), tf.float64).numpy()


def _tf_run(op, dtype, inputs, attrs):
    """TF's result as float64; MaxPoolGrad's orig_output is TF's MaxPool of orig_input."""
    import tensorflow as tf
    t = {k: (tf.constant(v, tf.int32) if k == "orig_input_shape" else tf.cast(tf.constant(_rounded(v, dtype)), _tf_dtype(dtype)))
         for k, v in inputs.items()}
    with tf.device("/CPU:0"):
        if op == "MaxPoolGrad":
            t["orig_output"] = tf.raw_ops.MaxPool(input=t["orig_input"], **attrs)
        y = getattr(tf.raw_ops, op)(**t, **attrs)
    return tf.cast(y, tf.float64).numpy(), (tf.cast(t["orig_output"], tf.float64).numpy() if op == "MaxPoolGrad" else None)


@before_load("pool_cli")
def _tf_side():
    return {cid: _tf_run(op, dtype, inputs, attrs) for cid, op, dtype, inputs, attrs, _ in CASES}


def _nchw(a):
    return np.transpose(a, (0, 3, 1, 2))


def run_cli(op, dtype, inputs, attrs, out_dir, check=True):
    """`gradrt run` on .npy inputs (bfloat16: float32 files holding bfloat16 values, T=bfloat16)."""
    cmd = [CLI, "run", op, "--backend", "cpu", "--out", out_dir]
    for k, v in attrs.items():
        cmd += ["--attr", f"{k}={json.dumps(v)}"]
    if dtype == "bfloat16":
        cmd += ["--attr", 'T="bfloat16"']
    for name, a in inputs.items():
        path = os.path.join(out_dir, f"in_{name}.npy")
        if name == "orig_input_shape":
            np.save(path, np.asarray(a, np.int32))
        else:
            np.save(path, np.ascontiguousarray(a).astype({"float16": np.float16, "bfloat16": np.float32,
                                                "float32": np.float32, "float64": np.float64}[dtype]))
        cmd += ["--input", f"{name}={path}"]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    if check:
        assert r.returncode == 0, f"{' '.join(cmd)}\n{r.stderr}"
    return r


def _to_nchw_attrs(attrs):
    a = dict(attrs, data_format="NCHW")
    for k in ("ksize", "strides"):
        v = attrs[k]
        a[k] = [v[0], v[3], v[1], v[2]]
    if "explicit_paddings" in attrs:
        e = attrs["explicit_paddings"]
        a["explicit_paddings"] = [0, 0, 0, 0, e[2], e[3], e[4], e[5]]
    return a


@pytest.mark.skipif(not HAVE_CLI, reason=f"no gradrt CLI at {CLI} (the native stage builds it)")
@pytest.mark.parametrize("i", range(len(CASES)), ids=[c[0] for c in CASES])
def test_pool_matches_tf(i, tf_results):
    cid, op, dtype, inputs, attrs, nchw = CASES[i]
    want, orig_output = tf_results["pool_cli"][cid]
    ins = {k: (v if k == "orig_input_shape" else _rounded(v, dtype)) for k, v in inputs.items()}
    if op == "MaxPoolGrad":
        ins = {"orig_input": ins["orig_input"], "orig_output": orig_output, "grad": ins["grad"]}
    if nchw:
        ins = {k: (np.asarray(v)[[0, 3, 1, 2]] if k == "orig_input_shape" else _nchw(v)) for k, v in ins.items()}
        attrs = _to_nchw_attrs(attrs)
    with tempfile.TemporaryDirectory() as d:
        run_cli(op, dtype, ins, attrs, d)
        got = np.load(os.path.join(d, "output.npy")).astype(np.float64)
    if nchw:
        got = np.transpose(got, (0, 2, 3, 1))
    assert got.shape == want.shape
    if op.startswith("Max") and (dtype in ("float32", "float64") or op == "MaxPool"):
        # Bit for bit: the same winner, the same sums in the same order (half types: gradrt sums in float).
        np.testing.assert_array_equal(got, want)
    else:
        rtol = {"float32": 1e-5, "float64": 1e-12, "float16": 2e-3, "bfloat16": 1.6e-2}[dtype]
        np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol)


def _hostile():
    out = []
    for stem in STEMS.values():
        with open(os.path.join(ROOT, "tests", "data", "hostile", f"{stem}.json")) as f:
            out += [c for c in json.load(f)["cases"] if "max_tensor_elements" not in c]
    return out


HOSTILE = _hostile()


def _hostile_inputs(c):
    """numpy inputs of a hostile case, or None when .npy / TF cannot hold them (shape-only tensors)."""
    out = {}
    for name, t in c["inputs"].items():
        shape = [int(d) for d in t["shape"]]
        n = int(np.prod(shape, dtype=object))
        if "values" in t:
            a = np.array(t["values"], np.float64)
        elif "fill" in t:
            a = np.full(n, float(t["fill"]))
        elif n == 0:
            a = np.zeros(0)
        else:
            return None
        if n > (1 << 22) or any(d < 0 for d in shape):
            return None
        out[name] = (a.reshape(shape), t["dtype"])
    return out


@before_load("pool_hostile")
def _tf_hostile():
    import tensorflow as tf
    res = []
    for c in HOSTILE:
        ins = _hostile_inputs(c)
        if ins is None:
            res.append("skip")
            continue
        try:
            t = {k: tf.constant(a.astype({"float32": np.float32, "float64": np.float64, "int32": np.int32,
                                           "int64": np.int64}[dt])) for k, (a, dt) in ins.items()}
            with tf.device("/CPU:0"):
                getattr(tf.raw_ops, c["op"])(**t, **c["attrs"])
            res.append("ok")
        except tf.errors.OpError as e:
            res.append(type(e).__name__.replace("Error", ""))
        except Exception:  # noqa: BLE001  (TF's Python layer refuses the attributes before any kernel)
            res.append("skip")
    return res


@pytest.mark.skipif(not HAVE_CLI, reason=f"no gradrt CLI at {CLI} (the native stage builds it)")
@pytest.mark.parametrize("i", range(len(HOSTILE)), ids=[f"{c['op']}: {c['name'][:60]}" for c in HOSTILE])
def test_hostile_same_class_as_tf(i, tf_results):
    c = HOSTILE[i]
    tf_side = tf_results["pool_hostile"][i]
    ins = _hostile_inputs(c)
    if tf_side == "skip" or ins is None:
        pytest.skip("TF or .npy cannot express the case")
    with tempfile.TemporaryDirectory() as d:
        cmd = [CLI, "run", c["op"], "--backend", "cpu", "--out", d]
        for k, v in c["attrs"].items():
            cmd += ["--attr", f"{k}={json.dumps(v)}"]
        for name, (a, dt) in ins.items():
            path = os.path.join(d, f"in_{name}.npy")
            np.save(path, a.astype({"float32": np.float32, "float64": np.float64, "int32": np.int32, "int64": np.int64}[dt]))
            cmd += ["--input", f"{name}={path}"]
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    ours = "ok" if r.returncode == 0 else r.stderr.strip().split(":")[0]
    expected = c["error"]["code"] if "error" in c else "ok"
    assert ours == expected, r.stderr
    if tf_side == "ok":
        pytest.skip(f"TF accepts it; gradrt: {ours} (tf/DIFFERENCES.md)")
    if ours == "ok":
        pytest.skip(f"TF refuses it ({tf_side}), gradrt computes it (tf/DIFFERENCES.md P3)")
    if "NCHW" in json.dumps(c["attrs"]):
        pytest.skip("TF's CPU pools take NHWC only")
    assert ours == tf_side, f"TF: {tf_side}, gradrt: {r.stderr.strip()}"
