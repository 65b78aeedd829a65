"""The malformed and hostile inputs of tests/data/hostile/*.json (the cases the C++ and Node suites
run), replayed in TensorFlow 2.21.

TF's outcome for each comes from a child process without gradrt (one TF CHECK failure must not end the run; a child that dies is restarted after the case it died on). Then,
in this process, the same tf.raw_ops call runs on gradrt's kernels: where TF refuses an input, gradrt
must refuse it with the same exception class. Cases TF accepts, or cannot express (a tensor given only a
huge shape, an attribute its Python API rejects), are skipped with the reason, both outcomes named.
The ops gradrt_tf does not register (CLI_OPS) run through the command-line tool instead (gradrt_cli.py),
their status code read as the TF exception class of the same name."""
import glob
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import pytest

import gradrt_cli
from conftest import before_load

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DATA = os.path.join(ROOT, "tests", "data", "hostile")
V2_OPS = ("Conv2DBackpropInputV2", "Conv2DBackpropFilterV2")
# TF refuses these for a limitation of its CPU kernels that gradrt does not have: gradrt judges the
# input on its merits (and may refuse it for another reason, with another class).
TF_LIMITATIONS = ("only supports NHWC", "does not support dilations",
                  "only support NHWC tensor format")
# Deliberate differences (tf/DIFFERENCES.md): TF's message -> why gradrt answers otherwise.
DELIBERATE = {
    "filter must not have zero elements": "gradrt policy 3 (ops.md 8): an empty operand gives the defined "
                                          "empty or zero result",
    "filter_size does not have enough elements, requested 0": "gradrt policy 3: empty filter_sizes product, "
                                                              "a zero-size result",
}
MAX_ELEMENTS = 1 << 22  # a shape-only tensor up to this size is filled with zeros for TF
# gradrt's ops that gradrt_tf leaves to TF (they would replace TF's fused elementwise kernels in every
# Keras step): gradrt's side of their cases comes from `gradrt run`.
CLI_OPS = ("Relu", "Relu6", "ReluGrad", "Relu6Grad", "BiasAdd", "BiasAddGrad")


def _np(dtype):
    return {"float16": np.float16, "float32": np.float32, "float64": np.float64, "int32": np.int32,
            "int64": np.int64}[dtype]


def _tensor_hex(t):
    """A data file's tensor (tests/data/README.md) as the raw bytes TF gets, hex; None: shape only."""
    shape = [int(d) for d in t["shape"]]
    n = int(np.prod(shape, dtype=object))
    if not any(k in t for k in ("values", "fill", "iota")):
        return shape, (None if n else "")
    if n > MAX_ELEMENTS:
        return shape, None
    if "values" in t:
        vals = [float(v) if isinstance(v, str) and not v.lstrip("-").isdigit() else
                (int(v) if isinstance(v, str) else v) for v in t["values"]]
    elif "fill" in t:
        vals = [t["fill"]] * n
    else:
        vals = [t["iota"] + i for i in range(n)]
    if t["dtype"] == "bfloat16":  # float32 bits rounded to the upper half, ties to even
        b = np.array(vals, np.float32).view(np.uint32).astype(np.uint64)
        return shape, ((b + 0x7FFF + ((b >> 16) & 1)) >> 16).astype(np.uint16).tobytes().hex()
    return shape, np.array(vals, dtype=_np(t["dtype"])).tobytes().hex()


def _attr(v):
    if isinstance(v, dict):  # {"float": "NaN"}: a non-finite float
        return float(v["float"])
    return [_attr(x) for x in v] if isinstance(v, list) else v


def _dump():
    """Every case of tests/data/hostile/*.json (the C++ and Node suites read the same files)."""
    out = []
    for path in sorted(glob.glob(os.path.join(DATA, "*.json"))):
        with open(path) as f:
            cases = json.load(f)["cases"]
        for c in cases:
            if "max_tensor_elements" in c:  # a lowered element limit: no such knob through TF
                continue
            inputs = []
            for name, t in c["inputs"].items():
                shape, hexed = _tensor_hex(t)
                inputs.append({"name": name, "dtype": t["dtype"], "shape": shape, "hex": hexed})
            err = c.get("error")
            out.append({"test": c["name"], "op": c["op"], "inputs": inputs,
                        "attrs": {k: _attr(v) for k, v in c.get("attrs", {}).items()},
                        "code": err["code"] if err else "OK",
                        "message": " / ".join(err["message"]) if err else ""})
    return out


CASES = _dump() if __name__ != "__main__" else []


def make_inputs(case):
    """TF tensors for a dumped case, or a string saying why TF cannot hold them."""
    import tensorflow as tf
    out = {}
    for t in case["inputs"]:
        shape, dtype = t["shape"], t["dtype"]
        if any(d < 0 for d in shape):
            return f"input '{t['name']}' has a negative dimension {shape}"
        n = int(np.prod(shape, dtype=object))
        if t["hex"] is None:
            if n > MAX_ELEMENTS:
                return f"input '{t['name']}' is shape-only {shape}: too large to build in TF"
            raw = bytes(n * (2 if dtype in ("float16", "bfloat16") else np.dtype(_np(dtype)).itemsize))
        else:
            raw = bytes.fromhex(t["hex"])
        if dtype == "bfloat16":
            out[t["name"]] = tf.bitcast(tf.constant(np.frombuffer(raw, np.uint16).reshape(shape)), tf.bfloat16)
        else:
            out[t["name"]] = tf.constant(np.frombuffer(raw, _np(dtype)).reshape(shape))
    return out


def outcome(case):
    """'ok', 'OpError:<Class>: <message>', or 'skip:<reason>' for one tf.raw_ops call."""
    import tensorflow as tf
    try:
        inputs = make_inputs(case)
    except Exception as e:  # noqa: BLE001  (numpy / TF cannot hold such a tensor)
        return f"skip:numpy or TF cannot build the input ({type(e).__name__}: {str(e)[:100]})"
    if isinstance(inputs, str):
        return "skip:" + inputs
    try:
        with tf.device("/CPU:0"):
            getattr(tf.raw_ops, case["op"])(**inputs, **case["attrs"])
        return "ok"
    except tf.errors.OpError as e:
        return f"OpError:{type(e).__name__}: {e.message.split(' [Op:')[0].split('}} ')[-1][:300]}"
    except Exception as e:  # noqa: BLE001  (TF's Python layer, before any kernel)
        return f"skip:TF's Python API refuses it ({type(e).__name__}: {str(e)[:120]})"


def cli_outcome(case):
    """outcome() of gradrt's own status through `gradrt run`: 'ok', 'OpError:<TF class>: <message>'."""
    arrays, bfloat16 = {}, False
    for t in case["inputs"]:
        if t["hex"] is None:
            return "skip:a shape-only tensor cannot be an .npy file"
        raw = bytes.fromhex(t["hex"])
        if t["dtype"] == "bfloat16":  # the bits as float32 values; T=bfloat16 keeps them
            bfloat16 = True
            bits = np.frombuffer(raw, np.uint16).astype(np.uint32) << 16
            arrays[t["name"]] = bits.view(np.float32).reshape(t["shape"])
        else:
            arrays[t["name"]] = np.frombuffer(raw, _np(t["dtype"])).reshape(t["shape"])
    code, message = gradrt_cli.run(case["op"], arrays, case["attrs"], bfloat16)
    return "ok" if code is None else f"OpError:{gradrt_cli.TF_CLASS.get(code, code)}: {message}"


def _child(path):
    """Child mode: TF's outcome of each case in `path`, one line each, flushed."""
    import tensorflow  # noqa: F401
    with open(path) as f:
        cases = json.load(f)
    for i, c in enumerate(cases):
        print(json.dumps([i, outcome(c)]), flush=True)


@before_load("hostile")
def _tf_outcomes():
    results, start = {}, 0
    with tempfile.TemporaryDirectory() as d:
        while start < len(CASES):
            path = os.path.join(d, "cases.json")
            with open(path, "w") as f:
                json.dump(CASES[start:], f)
            env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")
            r = subprocess.run([sys.executable, __file__, path], capture_output=True, text=True, env=env,
                               timeout=600)
            done = [json.loads(line) for line in r.stdout.splitlines() if line.startswith("[")]
            for i, o in done:
                results[start + i] = o
            start += len(done)
            if r.returncode != 0 and start < len(CASES):
                results[start] = f"skip:TF crashed on it (exit {r.returncode})"
                start += 1
    return results


@pytest.mark.skipif(not CASES, reason=f"no hostile cases under {DATA}")
@pytest.mark.parametrize("i", range(len(CASES)), ids=[f"{i:03d} {c['test'][:60]} {c['op']}" for i, c in
                                                       enumerate(CASES)])
def test_same_error_class_as_tf(i, tf_results):
    case = CASES[i]
    tf_side = tf_results["hostile"][i]
    ours = f"gradrt {case['code']} [{case['test']}: {case['op']}]"
    if tf_side.startswith("skip:"):
        pytest.skip(f"{tf_side[5:]}; {ours}")
    if tf_side == "ok":
        pytest.skip(f"TF accepts it; {ours}")
    if tf_side.startswith("OpError:NotFoundError") and case["op"] in V2_OPS:
        pytest.skip(f"TF has no CPU kernel for {case['op']}; {ours}")
    for m in TF_LIMITATIONS:
        if m in tf_side:
            pytest.skip(f"TF's limitation ({tf_side[8:]}); {ours}")
    for m, why in DELIBERATE.items():
        if m in tf_side:
            pytest.skip(f"deliberate: {why} ({tf_side[8:]}); {ours}")
    if case["op"] in CLI_OPS:
        if gradrt_cli.MISSING:
            pytest.skip(f"no gradrt CLI at {gradrt_cli.CLI}; {ours}")
        got = cli_outcome(case)
    else:
        got = outcome(case)
    assert got.split(":")[:2] == tf_side.split(":")[:2], \
        f"TF: {tf_side} | gradrt through TF: {got} | gradrt's own status: {case['code']}: {case['message']}"


if __name__ == "__main__":
    _child(sys.argv[1])
