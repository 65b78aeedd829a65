"""gradrt_litert on stock LiteRT against TensorFlow's own training (pytest; no TensorFlow here).

The models and TF's expected values come from litert/tests/models.py, run beforehand in another
environment (tests/run_all.sh litert): GRADRT_LITERT_MODELS names their folder.

Tolerance: every loss, variable and logit is compared relative to the largest magnitude of its
tensor, within 1e-5. TF's own float32 run of these models is within 1e-6 of its float64 run
(models.py stores both; test_tf_float32_spread checks it), so 1e-5 leaves room for a different
summation order and no more.
"""
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import gradrt_litert

MODELS = Path(os.environ.get("GRADRT_LITERT_MODELS", Path(__file__).resolve().parents[2] / "build-litert" / "models"))
TRAINED = ["mix", "fractional", "bn_nchw", "mobilenet"]
RTOL = 1e-5
SPREAD = 1e-6  # the largest float32-vs-float64 difference of TF's own run this file relies on


def load(name):
    return ((MODELS / f"{name}.tflite").read_bytes(), np.load(MODELS / f"{name}.npz"),
            json.loads((MODELS / f"{name}.json").read_text()))


def rel_err(got, want):
    return float(np.max(np.abs(got.astype(np.float64) - want)) / max(float(np.max(np.abs(want))), 1e-30))


def assert_close(got, want, what):
    assert got.shape == want.shape, f"{what}: shape {got.shape} != {want.shape}"
    err = rel_err(got, want)
    assert err <= RTOL, f"{what}: relative error {err:.3g} > {RTOL}"


def op_name(custom_code):
    """Flex<Op> or a plain custom op -> TF's op name (what kernel_calls() counts)."""
    return custom_code[4:] if custom_code.startswith("Flex") else custom_code


def test_no_tensorflow_in_process():
    gradrt_litert.CompiledModel(load("bn_nchw")[0]).run("weights")  # both libraries loaded and running
    maps = Path("/proc/self/maps").read_text()
    assert "libgradrt_litert.so" in maps and "libLiteRt.so" in maps
    assert "tensorflow" not in sys.modules and "libtensorflow" not in maps and "flex" not in maps.lower()


@pytest.mark.parametrize("name", TRAINED)
def test_tf_float32_spread(name):
    """TF's own float32 training vs its float64 training, the spread that justifies RTOL."""
    _, ref, meta = load(name)
    for i in range(meta["steps"]):
        assert rel_err(ref[f"loss_{i}"], ref[f"f64_loss_{i}"]) <= SPREAD
    last = meta["steps"] - 1
    for key in (k for k in ref.files if k.startswith(f"w{last}/")):
        assert rel_err(ref[key], ref["f64_" + key]) <= SPREAD, key


@pytest.mark.parametrize("name", TRAINED)
def test_train_matches_tf(name):
    tflite, ref, meta = load(name)
    gradrt_litert.reset_kernel_calls()
    cm = gradrt_litert.CompiledModel(gradrt_litert.prepare(tflite))
    assert {"train", "infer", "weights"} <= set(cm.signatures)
    steps = meta["steps"]
    assert steps >= 10
    for i in range(steps):
        # keyword order y, x: binding is by name, whatever LiteRT's input order
        loss = cm.run("train", y=ref[f"y_{i}"], x=ref[f"x_{i}"])["loss"]
        assert_close(loss, ref[f"loss_{i}"], f"{name} step {i} loss")
        weights = cm.run("weights")
        for key in (k for k in ref.files if k.startswith(f"w{i}/")):
            assert_close(weights[key.split("/", 1)[1]], ref[key], f"{name} step {i} variable {key}")
    assert_close(cm.run("infer", x=ref["x_infer"])["logits"], ref["logits"], f"{name} infer logits")
    calls = gradrt_litert.kernel_calls()
    for code in meta["custom_ops"]["train"]:
        assert calls.get(op_name(code), 0) >= steps, f"{name}: {code} ran {calls.get(op_name(code), 0)} times in gradrt"


def test_unsupported_op_named_at_prepare():
    tflite, _, meta = load("unsupported")
    with pytest.raises(gradrt_litert.UnsupportedOpError) as e:
        gradrt_litert.prepare(tflite)
    assert e.value.code == "UnsupportedOp"
    for op in ("BesselI0e", "BesselI1e"):  # every op nobody runs, once each
        assert op in e.value.message and op in e.value.ops
    assert "Conv2DBackpropFilter" not in e.value.ops


def test_kernel_bad_input_raises_gradrt_error():
    tflite, ref, _ = load("bad_input")
    cm = gradrt_litert.CompiledModel(tflite)
    good = ref["good_seq"]
    out = cm.run("pool_grad", out_backprop=ref["out_backprop"], rows=good, cols=good)["output"]
    assert_close(out, ref["good_output"], "FractionalAvgPoolGrad")
    with pytest.raises(gradrt_litert.GradrtError) as e:  # a row sequence past the input's 4 rows
        cm.run("pool_grad", out_backprop=ref["out_backprop"], rows=np.array([0, 2, 9]), cols=good)
    assert e.value.code == "InvalidArgument" and "FractionalAvgPoolGrad" in e.value.message, str(e.value)
    # the model still runs afterwards
    out = cm.run("pool_grad", out_backprop=ref["out_backprop"], rows=good, cols=good)["output"]
    assert_close(out, ref["good_output"], "FractionalAvgPoolGrad after an error")


def test_python_side_errors():
    tflite, ref, _ = load("bn_nchw")
    with gradrt_litert.CompiledModel(tflite) as cm:
        with pytest.raises(gradrt_litert.GradrtError, match="NotFound: signature 'fit'"):
            cm.run("fit", x=ref["x_0"])
        with pytest.raises(gradrt_litert.GradrtError, match="missing \\['y'\\]"):
            cm.run("train", x=ref["x_0"])
        with pytest.raises(gradrt_litert.GradrtError, match="input 'x' must have shape"):
            cm.run("train", x=ref["x_0"][:1], y=ref["y_0"])
    with pytest.raises(gradrt_litert.GradrtError) as e:
        gradrt_litert.prepare(b"not a tflite model")
    assert e.value.code == "InvalidArgument"


# ---- litert/examples/train_on_device.c: x86-64 here, aarch64 under qemu (tests/run_all.sh litert)

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE_MODEL = os.environ.get("GRADRT_LITERT_EXAMPLE_MODEL", "mix")  # every op of the mix


def example_x86_64(tmp):
    """Compiled here against the installed package's libgradrt_litert.so, as a user would."""
    libdir = Path(gradrt_litert.__file__).parent
    exe = tmp / "train_on_device"
    subprocess.run(["cc", "-O2", "-std=c11", "-Wall", "-Wextra", "-Werror", str(ROOT / "litert/examples/train_on_device.c"),
                    "-I", str(ROOT / "litert/include"), "-L", str(libdir), "-lgradrt_litert",
                    f"-Wl,-rpath,{libdir}", "-o", str(exe)], check=True)
    return [str(exe)], gradrt_litert.litert_library()


def example_aarch64(tmp):
    """Built by litert/tests/build_aarch64.sh into GRADRT_LITERT_AARCH64_DIR, run under qemu."""
    d = os.environ.get("GRADRT_LITERT_AARCH64_DIR")
    if not d:
        if os.environ.get("GRADRT_LITERT_REQUIRE_AARCH64"):
            pytest.fail("GRADRT_LITERT_AARCH64_DIR is not set (litert/tests/build_aarch64.sh)")
        pytest.skip("GRADRT_LITERT_AARCH64_DIR not set: run litert/tests/build_aarch64.sh")
    d = Path(d).resolve()
    # sysroot: the cross libraries and an Arm /proc/cpuinfo (build_aarch64.sh says why)
    return ["qemu-aarch64", "-L", str(d / "sysroot"), str(d / "train_on_device")], str(d / "libLiteRt.so")


@pytest.mark.parametrize("arch", ["x86_64", "aarch64"])
def test_example_trains_like_tf(arch, tmp_path):
    """The C example prepares TF's converter output on the device, trains 10 steps from .npy files and
    writes the variables: losses and variables as TF's own training (the same bound as above)."""
    tflite, ref, meta = load(EXAMPLE_MODEL)
    cmd, litert_so = (example_x86_64 if arch == "x86_64" else example_aarch64)(tmp_path)
    data, out = tmp_path / "data", tmp_path / "out"
    data.mkdir()
    out.mkdir()
    steps = meta["steps"]
    for i in range(steps):
        np.save(data / f"x_{i}.npy", ref[f"x_{i}"])
        np.save(data / f"y_{i}.npy", ref[f"y_{i}"])
    model = tmp_path / "model.tflite"
    model.write_bytes(tflite)  # not prepared: the example prepares it
    r = subprocess.run([*cmd, str(model), str(data), str(steps), str(out), litert_so], capture_output=True,
                       text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    losses = [float(line.split()[3]) for line in r.stdout.splitlines() if line.startswith("step ")]
    assert len(losses) == steps, r.stdout
    for i, loss in enumerate(losses):
        assert_close(np.float32(loss), ref[f"loss_{i}"], f"{arch} example step {i} loss")
    last = [k for k in ref.files if k.startswith(f"w{steps - 1}/")]
    assert last and len(list(out.glob("*.npy"))) == len(last)
    for key in last:
        assert_close(np.load(out / (key.split("/", 1)[1] + ".npy")), ref[key], f"{arch} example {key}")
