"""The coordinator's side of bench/tf_bench.py and bench/keras_step.py: one worker process per
(configuration, threads), spoken to in JSON lines, and the statistics both report."""
import argparse
import json
import math
import os
import subprocess
import sys


def add_common_arguments(ap, script, configs):
    """--threads, --rounds, --configs, --out, --log and the hidden --worker."""
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--configs", default=configs)
    # No default file: bench/results_*.txt are curated histories of runs (a run that wrote over one
    # lost its earlier runs); paste a run's table into its own section there.
    ap.add_argument("--out", help="also write the printed tables to this file (replaces it)")
    ap.add_argument("--log", default=f"/tmp/{os.path.splitext(os.path.basename(script))[0]}_workers.log")
    ap.add_argument("--worker", nargs=2, help=argparse.SUPPRESS)


class Worker:
    """`script --worker CONFIG THREADS`: answers one JSON line per request line."""

    def __init__(self, script, config, threads, log):
        self.config, self.threads = config, threads
        self.proc = subprocess.Popen([sys.executable, script, "--worker", config, str(threads)],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log, text=True)

    def ask(self, **req):
        self.proc.stdin.write(json.dumps(req) + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError(f"worker {self.config} threads={self.threads} died (see its log)")
        return json.loads(line)

    def close(self):
        if self.proc.poll() is None:
            # "quit" has no answer: waiting for one (ask) hangs on a worker that never exits (seen:
            # 2-thread gradrt_tf workers stuck in TensorFlow's shutdown, session 13); kill after 10 s.
            try:
                self.proc.stdin.write(json.dumps({"cmd": "quit"}) + "\n")
                self.proc.stdin.flush()
            except (BrokenPipeError, OSError):
                pass
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def start_workers(script, configs, thread_list, log):
    """One worker per (configuration, threads), keyed so."""
    return {(c, t): Worker(os.path.abspath(script), c, t, log) for t in thread_list for c in configs}


class Lines(list):
    """What a benchmark prints, kept for its --out file."""

    def emit(self, text=""):
        print(text, flush=True)
        self.append(text)


def geomean(values):
    return math.exp(sum(math.log(v) for v in values) / len(values))


def median(values):
    values = sorted(values)
    return values[len(values) // 2]
