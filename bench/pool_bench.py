"""MaxPool, MaxPoolGrad, AvgPool and AvgPoolGrad: gradrt's cpu kernels against TensorFlow 2.21's own CPU kernels.

    build-tf/venv/bin/python bench/pool_bench.py [--cli build/gradrt] [--threads=1,2] [--batch=1,8] [--rounds=5]
        [--out=bench/results_pool.txt]

gradrt_tf does not register the pooling ops (issue 20: TF keeps its own, oneDNN's MaxPoolGrad uses a
workspace), so gradrt runs through `gradrt run --backend cpu --threads T --repeat N` (median per call, the
output allocation included), and TensorFlow as bench/tf_bench.py times it (its worker processes, oneDNN
and Eigen: tf.raw_ops in a tf.while_loop less the cost of calling the loop). Rounds interleave every row
over the three, the order rotating; reported: the median over rounds. Ratio > 1: gradrt faster.
The shapes: ResNet's stem pool (3x3 s2 SAME on 112x112x64) and VGG's (2x2 s2 VALID on 56x56x128).
"""
import argparse
import os
import statistics
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cli_medians as cm  # noqa: E402
import tf_bench  # noqa: E402

SHAPES = [("3x3 s2 SAME 112x112x64", 112, 64, 3, 2, "SAME", 56), ("2x2 s2 VALID 56x56x128", 56, 128, 2, 2, "VALID", 28)]
OPS = ("MaxPool", "MaxPoolGrad", "AvgPool", "AvgPoolGrad")


def tf_cases(batches):
    """tf_bench's case format: (family, op, shape text, batch, inputs spec, attrs, work, unit)."""
    out = []
    for n in batches:
        for label, h, c, k, s, pad, oh in SHAPES:
            x, y = [n, h, h, c], [n, oh, oh, c]
            attrs = {"ksize": [1, k, k, 1], "strides": [1, s, s, 1], "padding": pad}
            specs = {"MaxPool": {"input": ("rand", x)},
                     "MaxPoolGrad": {"orig_input": ("rand", x), "orig_output": ("rand", y), "grad": ("rand", y)},
                     "AvgPool": {"value": ("rand", x)},
                     "AvgPoolGrad": {"orig_input_shape": ("sizes", x), "grad": ("rand", y)}}
            for op in OPS:
                out.append(("pool", op, label, n, specs[op], attrs, 4.0 * (n * h * h * c + n * oh * oh * c), "GB/s"))
    return out


def cli_cases(batch):
    """cli_medians' case format for the same rows at one batch."""
    rows = []
    for case in tf_cases([batch]):
        _, op, label, _, spec, attrs, _, _ = case
        inputs = {name: ([4], "<i4", shape) if kind == "sizes" else (shape, "<f4", None) for name, (kind, shape) in spec.items()}
        rows.append(("pool", op, label, inputs, attrs))
    return rows


class Worker(tf_bench.Worker):
    """tf_bench's TensorFlow worker, started through this file (so that it serves tf_cases)."""

    def __init__(self, config, threads, log):
        self.config, self.threads = config, threads
        self.proc = tf_bench.subprocess.Popen([sys.executable, os.path.abspath(__file__), "--worker", config, str(threads)],
                                              stdin=tf_bench.subprocess.PIPE, stdout=tf_bench.subprocess.PIPE,
                                              stderr=log, text=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cli", default=os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "build", "gradrt"))
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--batch", default="1,8")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--target-ms", type=float, default=100, help="time of each measurement (sets n and --repeat)")
    ap.add_argument("--out", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "results_pool.txt"))
    ap.add_argument("--log", default="/tmp/pool_bench_workers.log")
    ap.add_argument("--worker", nargs=2, help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.worker:
        tf_bench.cases = tf_cases
        return tf_bench.worker(a.worker[0], int(a.worker[1]))
    threads = [int(t) for t in a.threads.split(",")]
    batches = [int(b) for b in a.batch.split(",")]
    configs = ("oneDNN", "Eigen")
    all_cases = tf_cases(batches)
    cli = {(t, op, label, b): args for t, _, op, label, b, args in
           cm.cli_rows(threads, batches, tempfile.mkdtemp(prefix="gradrt-pool-"), cli_cases)}
    lines = []

    def emit(text=""):
        print(text, flush=True)
        lines.append(text)

    times = {}
    with open(a.log, "w") as log:
        workers = {(c, t): Worker(c, t, log) for t in threads for c in configs}
        try:
            hello = [w.ask(cmd="cases", batches=batches) for w in workers.values()][0]
            emit(f"pooling: gradrt {a.cli} (cpu backend, CLI --repeat median) vs TensorFlow {hello['tf']} CPU kernels "
                 f"(tf.while_loop, tf_bench.py); float32 NHWC; median of {a.rounds} interleaved rounds")
            emit(f"CPU: {cpu_name()}; load average at the start (1 min): {os.getloadavg()[0]:.2f} on {os.cpu_count()} cpus")
            n_calls, repeats = {}, {}
            for i, (_, op, label, b, _, _, _, _) in enumerate(all_cases):
                secs = max(w.ask(cmd="prepare", case=i)["seconds"] for w in workers.values())
                n_calls[i] = max(10, min(5000, round(a.target_ms / 1e3 / max(secs, 1e-6))))
                for t in threads:
                    ms = cm.cli_median_ms(a.cli, cli[t, op, label, b], 5)
                    repeats[t, i] = max(10, min(5000, round(a.target_ms / max(ms, 1e-3))))
            for r in range(a.rounds):
                for i, (_, op, label, b, _, _, _, _) in enumerate(all_cases):
                    for t in threads:
                        sides = [("gradrt", None)] + [(c, workers[c, t]) for c in configs]
                        rot = (r + i) % len(sides)
                        for name, w in sides[rot:] + sides[:rot]:
                            if w is None:
                                ms = cm.cli_median_ms(a.cli, cli[t, op, label, b], repeats[t, i])
                            else:
                                ms = w.ask(cmd="time", case=i, n=n_calls[i], reps=5, warm_s=0.03)["median"] * 1e3
                            times.setdefault((name, t, i), []).append(ms)
                print(f"  round {r + 1}/{a.rounds} done", file=sys.stderr, flush=True)
        finally:
            for w in workers.values():
                w.close()
    for t in threads:
        emit()
        emit(f"threads={t}")
        emit(f"{'op':<12} {'shape':<24} {'batch':>5} | {'gradrt ms':>9} {'oneDNN ms':>9} {'Eigen ms':>9} | "
             f"{'vs oneDNN':>9} {'vs Eigen':>9} | {'gradrt GB/s':>11}")
        for i, (_, op, label, b, _, _, work, _) in enumerate(all_cases):
            ms = {s: statistics.median(times[s, t, i]) for s in ("gradrt",) + configs}
            emit(f"{op:<12} {label:<24} {b:>5} | {ms['gradrt']:>9.3f} {ms['oneDNN']:>9.3f} {ms['Eigen']:>9.3f} | "
                 f"{ms['oneDNN'] / ms['gradrt']:>9.2f} {ms['Eigen'] / ms['gradrt']:>9.2f} | "
                 f"{work / (ms['gradrt'] * 1e-3) * 1e-9:>11.1f}")
    emit()
    emit("load average at the end (1 min, 5 min): %.2f, %.2f" % os.getloadavg()[:2])
    with open(a.out, "w") as f:
        f.write("\n".join(lines) + "\n")
    print(f"wrote {a.out}")


def cpu_name():
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return "unknown"


if __name__ == "__main__":
    sys.exit(main())
