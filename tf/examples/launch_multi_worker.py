"""Starts N workers of multi_worker_cnn.py on 127.0.0.1 and checks how they ended.

    python tf/examples/launch_multi_worker.py --out-dir=/tmp/mw            # 2 workers, gradrt's kernels
    python tf/examples/launch_multi_worker.py --kernels=tf --workers=3 ...
    python tf/examples/launch_multi_worker.py --check-only --workers=N --out-dir=DIR   # results from N machines

Picks free ports, gives each worker its TF_CONFIG, stops every worker (by its own pid) when one fails or
the --timeout passes, then checks that all workers ended with bit-identical weights and, with gradrt's
kernels, that every gradient op ran in gradrt in every worker. Exit status 0 when all of that holds.
"""
import argparse
import json
import os
import signal
import socket
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from digits_cnn import GRADIENT_OPS  # noqa: E402  (numpy only: no TensorFlow in the launcher)


def free_ports(n):
    """n distinct ports the kernel had free a moment ago (held together, so they differ)."""
    socks = []
    try:
        for _ in range(n):
            s = socket.socket()
            s.bind(("127.0.0.1", 0))
            socks.append(s)
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


def stop(procs):
    """SIGTERM, then SIGKILL after 5 s, to each worker that still runs: by its own pid only."""
    for p in procs:
        if p.poll() is None:
            os.kill(p.pid, signal.SIGTERM)
    deadline = time.monotonic() + 5
    for p in procs:
        try:
            p.wait(max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            os.kill(p.pid, signal.SIGKILL)
            p.wait()


def run_workers(n, out_dir, timeout, worker_args):
    """Runs the workers; returns None when all exited 0, else a message. Logs in out_dir/worker<i>.log."""
    os.makedirs(out_dir, exist_ok=True)
    cluster = {"worker": [f"127.0.0.1:{p}" for p in free_ports(n)]}
    procs, logs = [], []
    try:
        for i in range(n):
            env = dict(os.environ, TF_CONFIG=json.dumps({"cluster": cluster, "task": {"type": "worker", "index": i}}))
            env["no_proxy"] = env["NO_PROXY"] = "127.0.0.1,localhost"  # gRPC would honour a proxy
            logs.append(open(os.path.join(out_dir, f"worker{i}.log"), "w"))
            procs.append(subprocess.Popen(
                [sys.executable, os.path.join(HERE, "multi_worker_cnn.py"), f"--out-dir={out_dir}", *worker_args],
                env=env, stdout=logs[-1], stderr=subprocess.STDOUT))
            print(f"worker {i}: pid {procs[-1].pid}, {cluster['worker'][i]}", flush=True)
        deadline = time.monotonic() + timeout
        while True:
            codes = [p.poll() for p in procs]
            failed = [i for i, c in enumerate(codes) if c not in (None, 0)]
            if failed:
                return f"worker {failed[0]} exited with status {codes[failed[0]]}"
            if all(c == 0 for c in codes):
                return None
            if time.monotonic() > deadline:
                return f"timeout after {timeout} s (workers still running: " \
                       f"{[i for i, c in enumerate(codes) if c is None]})"
            time.sleep(0.2)
    finally:
        stop(procs)
        for f in logs:
            f.close()


def check_results(n, out_dir, kernels):
    """Problems with the workers' saved results (empty list: all good)."""
    problems = []
    weights = [np.load(os.path.join(out_dir, f"worker{i}.npz")) for i in range(n)]
    reports = [json.load(open(os.path.join(out_dir, f"worker{i}.json"))) for i in range(n)]
    names = weights[0].files
    for i in range(1, n):
        if weights[i].files != names:
            problems.append(f"worker {i} saved {len(weights[i].files)} arrays, worker 0 {len(names)}")
            continue
        for k in names:
            if not np.array_equal(weights[0][k], weights[i][k]):
                diff = np.max(np.abs(weights[0][k] - weights[i][k]))
                problems.append(f"weights {k} differ between worker 0 and worker {i} (max |diff| {diff:g})")
    for r in reports:
        if r["workers"] != n:
            problems.append(f"worker {r['index']} saw {r['workers']} replicas, expected {n}")
        if kernels == "gradrt":
            missing = [op for op in GRADIENT_OPS if not r["kernel_calls"].get(op)]
            if missing:
                problems.append(f"worker {r['index']}: no gradrt calls of {', '.join(missing)}")
    return problems


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--out-dir", required=True)
    ap.add_argument("--timeout", type=float, default=300, help="seconds before every worker is stopped")
    ap.add_argument("--kernels", choices=("gradrt", "tf"), default="gradrt")
    ap.add_argument("--epochs", type=int, default=2)
    ap.add_argument("--check-only", action="store_true",
                    help="start nothing; check worker<i>.npz/.json already in --out-dir (gathered from N machines)")
    args = ap.parse_args()

    error = None if args.check_only else run_workers(args.workers, args.out_dir, args.timeout,
                        [f"--kernels={args.kernels}", f"--epochs={args.epochs}"])
    if error:
        print(f"FAILED: {error}; logs in {args.out_dir}/worker*.log", file=sys.stderr)
        return 1
    problems = check_results(args.workers, args.out_dir, args.kernels)
    for p in problems:
        print("FAILED: " + p, file=sys.stderr)
    for i in range(args.workers):
        r = json.load(open(os.path.join(args.out_dir, f"worker{i}.json")))
        calls = ", ".join(f"{k} {v}" for k, v in sorted(r["kernel_calls"].items())) or "-"
        print(f"worker {i}: epoch losses {' '.join(f'{v:.6f}' for v in r['epoch_losses'])}; gradrt calls: {calls}")
    if not problems:
        print(f"{args.workers} workers ended with identical weights")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
