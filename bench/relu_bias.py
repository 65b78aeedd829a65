#!/usr/bin/env python3
"""The relu family and the bias ops: gradrt's cpu backend (through `gradrt run`) against TensorFlow 2.21's
own CPU kernels, on the activation shapes of a MobileNet block and of a small CNN (float32).

    build-tf/venv/bin/python bench/relu_bias.py build/gradrt [--threads 1,2] [--rounds 5] [--out FILE]

One child process per (TensorFlow configuration, thread count): TF_ENABLE_ONEDNN_OPTS=0 (TF's Eigen
kernels) and =1 (TF's default here), intra-op threads T. The child times every row each round, both
sides back to back (the order swapped every other round), so each ratio pairs measurements seconds
apart on this shared host; reported: the median over rounds of each side's time, and the median of
the per-round ratios TF / gradrt (> 1: gradrt faster).
  gradrt: median_ms of `gradrt run OP --backend cpu --threads T --repeat N` (N for ~200 ms): the call
          as the C++ API makes it (validation, output allocation, kernel), in its own process.
  TF:     tf.raw_ops.OP run n times in a tf.while_loop inside one tf.function, less the same call with
          n = 0 (tf_bench.py's method), per iteration: the kernel plus TF's per-op executor cost, which
          the header line prints (the loop around a 1-element Neg).
"""
import argparse, json, os, platform, subprocess, sys, tempfile, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cli_medians as cm
from tf_bench import geomean, median

CONFIGS = {"Eigen": "0", "oneDNN": "1"}


def rows():
    """(op, label, inputs {name: shape}, attrs): the activation and bias gradients of a MobileNet
    block (112x112x32 in, expand 6 to 56x56x144) and of a CNN's conv layers, NHWC unless said."""
    out = []
    for op, shape in [("ReluGrad", [1, 112, 112, 32]), ("Relu6Grad", [1, 56, 56, 144]),
                      ("Relu6Grad", [8, 56, 56, 144]), ("ReluGrad", [8, 28, 28, 128])]:
        out.append((op, "x".join(map(str, shape)), {"gradients": shape, "features": shape}, {}))
    for op, shape in [("Relu", [8, 28, 28, 128]), ("Relu6", [1, 56, 56, 144])]:
        out.append((op, "x".join(map(str, shape)), {"features": shape}, {}))
    for shape, fmt in [([1, 112, 112, 32], "NHWC"), ([8, 28, 28, 128], "NHWC"), ([8, 128, 28, 28], "NCHW"),
                       ([32, 10], "NHWC")]:
        label = "x".join(map(str, shape)) + " " + fmt
        out.append(("BiasAddGrad", label, {"out_backprop": shape}, {"data_format": fmt}))
    out.append(("BiasAdd", "8x28x28x128 NHWC", {"value": [8, 28, 28, 128], "bias": [128]}, {"data_format": "NHWC"}))
    return out


def child(binary, config, threads, rounds, workdir):
    """Times every row, both sides, `rounds` times; prints one JSON line."""
    os.environ["TF_ENABLE_ONEDNN_OPTS"] = CONFIGS[config]
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    import numpy as np
    import tensorflow as tf
    tf.config.threading.set_intra_op_parallelism_threads(threads)
    tf.config.threading.set_inter_op_parallelism_threads(1)

    def tf_loop(op, args, attrs):
        fn = getattr(tf.raw_ops, op)

        @tf.function
        def loop(n):
            def body(j, acc):  # one element of each result keeps every iteration's op alive
                return j + 1, acc + tf.reshape(fn(**args, **attrs), [-1])[0]
            return tf.while_loop(lambda j, acc: j < n, body, (tf.constant(0), tf.constant(0.0)))[1]
        return loop

    def tf_ms(loop, n, reps=5):
        times = []
        for _ in range(reps):
            t0 = time.perf_counter()
            loop(tf.constant(n)).numpy()
            t1 = time.perf_counter()
            loop(tf.constant(0)).numpy()
            times.append(max(0.0, (t1 - t0) - (time.perf_counter() - t1)) / n * 1e3)
        return sorted(times)[reps // 2]

    rng = np.random.default_rng(7)
    prepared = []
    for i, (op, label, inputs, attrs) in enumerate(rows()):
        args, cli = {}, ["run", op, "--backend", "cpu", "--threads", str(threads), "--out", os.path.join(workdir, "out")]
        for name, shape in inputs.items():
            a = rng.uniform(-1, 7, size=shape).astype(np.float32)
            path = os.path.join(workdir, f"{i}_{name}.npy")
            np.save(path, a)
            args[name] = tf.constant(a)
            cli += ["--input", f"{name}={path}"]
        for k, v in attrs.items():
            cli += ["--attr", f"{k}={json.dumps(v)}"]
        loop = tf_loop(op, args, attrs)
        loop(tf.constant(1))  # trace
        t = time.perf_counter()
        loop(tf.constant(20)).numpy()
        n = max(20, min(5000, int(0.1 / max((time.perf_counter() - t) / 20, 1e-7))))
        repeat = max(20, int(200 / max(cm.cli_median_ms(binary, cli, 5), 1e-3)))
        prepared.append((loop, n, cli, repeat))
    overhead = tf_loop("Neg", {"x": tf.constant([1.0])}, {})
    overhead(tf.constant(1))
    result = {"overhead_us": tf_ms(overhead, 2000) * 1e3, "tf": [[] for _ in prepared], "gradrt": [[] for _ in prepared]}
    for r in range(rounds):
        for i, (loop, n, cli, repeat) in enumerate(prepared):
            sides = [("tf", lambda: tf_ms(loop, n)), ("gradrt", lambda: cm.cli_median_ms(binary, cli, repeat))]
            for side, measure in (sides if r % 2 == 0 else sides[::-1]):
                result[side][i].append(measure())
    print(json.dumps(result))


def cpu_name():
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return platform.processor()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("binary")
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--configs", default=",".join(CONFIGS))
    ap.add_argument("--out", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "results_relu_bias.txt"))
    ap.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    a = ap.parse_args()
    binary = os.path.abspath(a.binary)
    if a.child:
        with tempfile.TemporaryDirectory() as d:
            return child(binary, a.child[0], int(a.child[1]), a.rounds, d)
    lines = []

    def emit(text=""):
        print(text, flush=True)
        lines.append(text)

    emit(f"gradrt cpu (`gradrt run`) vs TensorFlow 2.21 CPU kernels, float32; {cpu_name()}, {os.cpu_count()} cpus; "
         f"median of {a.rounds} interleaved rounds; ratio = TF ms / gradrt ms (> 1: gradrt faster)")
    emit("load average at the start (1 min): %.2f" % os.getloadavg()[0])
    for t in [int(x) for x in a.threads.split(",")]:
        res = {}
        for config in a.configs.split(","):
            r = subprocess.run([sys.executable, os.path.abspath(__file__), binary, "--child", config, str(t),
                                "--rounds", str(a.rounds)], capture_output=True, text=True)
            if r.returncode != 0:
                sys.exit(f"child {config} threads={t} failed:\n{r.stderr[-3000:]}")
            res[config] = json.loads(r.stdout.strip().splitlines()[-1])
        emit()
        emit(f"threads={t}; TF's loop cost per iteration without the op (Neg of 1 element): " +
             ", ".join(f"{c} {res[c]['overhead_us']:.1f} us" for c in res))
        emit(f"{'op':<12} {'shape':<20} {'gradrt ms':>9} | " + " | ".join(f"{c + ' ms':>9} {'ratio':>6}" for c in res))
        ratios = {c: [] for c in res}
        for i, (op, label, _, _) in enumerate(rows()):
            g = median(res[next(iter(res))]["gradrt"][i])
            cells = []
            for c in res:
                ratio = median([x / y for x, y in zip(res[c]["tf"][i], res[c]["gradrt"][i])])
                ratios[c].append(ratio)
                cells.append(f"{median(res[c]['tf'][i]):>9.3f} {ratio:>6.2f}")
            emit(f"{op:<12} {label:<20} {g:>9.3f} | " + " | ".join(cells))
        emit("geomean ratio: " + ", ".join(f"{c} {geomean(v):.2f}x" for c, v in ratios.items()))
    lines += ["", "load average at the end (1 min, 5 min): %.2f, %.2f" % os.getloadavg()[:2]]
    print(lines[-1])
    with open(a.out, "w") as f:
        print("\n".join(lines), file=f)
    print(f"wrote {a.out}")


if __name__ == "__main__":
    main()
