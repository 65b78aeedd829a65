"""The coordinator's side of bench/tf_bench.py and bench/keras_step.py: one worker process per
(configuration, threads), spoken to in JSON lines, and the statistics both report."""
import json
import math
import subprocess
import sys


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
            try:
                self.ask(cmd="quit")
            except (RuntimeError, BrokenPipeError):
                pass
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def geomean(values):
    return math.exp(sum(math.log(v) for v in values) / len(values))


def median(values):
    values = sorted(values)
    return values[len(values) // 2]
