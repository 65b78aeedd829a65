"""Running one gradrt op through the command-line tool (`gradrt run`, .npy files, cpu backend), for the
ops gradrt_tf does not register as TensorFlow kernels (test_relu_bias.py, test_hostile_tf.py).
GRADRT_CLI names the tool (default build/gradrt)."""
import json
import os
import subprocess
import tempfile

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CLI = os.environ.get("GRADRT_CLI", os.path.join(ROOT, "build", "gradrt"))
MISSING = not os.path.exists(CLI) and not os.environ.get("GRADRT_TF_REQUIRE_CLI")
# A gradrt status code (stderr "Code: message") -> the TensorFlow exception class of the same name.
TF_CLASS = {"InvalidArgument": "InvalidArgumentError", "ResourceExhausted": "ResourceExhaustedError",
            "Unimplemented": "UnimplementedError", "NotFound": "NotFoundError", "Internal": "InternalError",
            "Unavailable": "UnavailableError"}


def run(op, inputs, attrs, bfloat16=False):
    """inputs: name -> numpy array (float16/float32/float64/int32/int64; with bfloat16, float32 arrays
    holding bfloat16 values). Returns (None, {output name: array}) or ("Code", message)."""
    with tempfile.TemporaryDirectory() as d:
        cmd = [CLI, "run", op, "--backend", "cpu", "--out", os.path.join(d, "out")]
        for k, v in attrs.items():
            cmd += ["--attr", f"{k}={json.dumps(v)}"]
        if bfloat16:
            cmd += ["--attr", 'T="bfloat16"']
        for name, a in inputs.items():
            path = os.path.join(d, f"in_{name}.npy")
            np.save(path, a)
            cmd += ["--input", f"{name}={path}"]
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
        if r.returncode == 1:
            code, _, message = r.stderr.strip().partition(": ")
            return code, message
        assert r.returncode == 0, f"{' '.join(cmd)}\n{r.stderr}"
        out = os.path.join(d, "out")
        return None, {f[:-4]: np.load(os.path.join(out, f)) for f in os.listdir(out)}
