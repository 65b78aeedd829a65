"""MultiWorkerMirroredStrategy (ring collectives) with gradrt's kernels in 2 worker processes on 127.0.0.1,
through tf/examples/launch_multi_worker.py; the results are checked here again from the workers' files."""
import json
import os
import re
import subprocess
import sys

import numpy as np

EXAMPLES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples")
LAUNCHER = os.path.join(EXAMPLES, "launch_multi_worker.py")
sys.path.insert(0, EXAMPLES)
from digits_cnn import GRADIENT_OPS  # noqa: E402


def launch(out_dir, *args, timeout=330):
    return subprocess.run([sys.executable, LAUNCHER, f"--out-dir={out_dir}", *args], capture_output=True,
                          text=True, timeout=timeout)


def worker_pids(stdout):
    return [int(p) for p in re.findall(r"^worker \d+: pid (\d+)", stdout, re.M)]


def test_two_workers_train_on_gradrt_and_agree(tmp_path):
    r = launch(tmp_path, "--workers=2", "--kernels=gradrt", "--timeout=300")
    assert r.returncode == 0, r.stdout + r.stderr + "".join(
        (tmp_path / f"worker{i}.log").read_text()[-3000:] for i in range(2) if (tmp_path / f"worker{i}.log").exists())
    w0, w1 = (np.load(tmp_path / f"worker{i}.npz") for i in range(2))
    assert w0.files == w1.files and len(w0.files) == 14  # 4 kernels, 2 biases, 2 x 4 batch norm
    for k in w0.files:
        assert np.array_equal(w0[k], w1[k]), k  # all-reduced gradients: bit-identical
    reports = [json.loads((tmp_path / f"worker{i}.json").read_text()) for i in range(2)]
    steps = len(reports[0]["step_losses"])
    for rep in reports:
        assert rep["workers"] == 2
        for op in GRADIENT_OPS:
            assert rep["kernel_calls"].get(op, 0) >= steps, (rep["index"], op, rep["kernel_calls"])
    # Keras reports the loss all-reduced over both workers: the same curve on each, and it falls.
    assert reports[0]["step_losses"] == reports[1]["step_losses"]
    assert reports[0]["epoch_losses"][-1] < reports[0]["epoch_losses"][0]
    for pid in worker_pids(r.stdout):
        assert not os.path.exists(f"/proc/{pid}")


def test_hard_timeout_stops_both_workers(tmp_path):
    r = launch(tmp_path, "--workers=2", "--kernels=tf", "--timeout=1", timeout=60)
    assert r.returncode == 1 and "timeout after 1" in r.stderr, r.stdout + r.stderr
    pids = worker_pids(r.stdout)
    assert len(pids) == 2
    for pid in pids:  # stopped and reaped by the launcher
        assert not os.path.exists(f"/proc/{pid}")
