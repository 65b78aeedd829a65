"""gradrt inside TensorFlow against TensorFlow's own CPU kernels, on bench/gradrt_bench.cpp's shapes.

    /work/.venv-tf/bin/python bench/tf_bench.py [--threads=1,2] [--batch=1,8] [--rounds=5] [--reps=5]
        [--filter=SUBSTRING] [--out=FILE]

Three configurations, each at every --threads value (TensorFlow's intra-op setting):
  oneDNN  TensorFlow's default here (TF_ENABLE_ONEDNN_OPTS=1: gradient ops rewritten to _MklNative*)
  Eigen   TensorFlow's own kernels with oneDNN off (TF_ENABLE_ONEDNN_OPTS=0)
  gradrt  oneDNN on (TF's default), gradrt_tf.load(): gradrt's cpu kernels serve the _MklNative* forms
  gradrt-eigen  oneDNN off, gradrt_tf.load(): gradrt's kernels serve the plain ops (not run by default)
The oneDNN switch is read once at `import tensorflow` and load() cannot be undone, and the thread count is
fixed when TensorFlow starts, so each (configuration, threads) pair is its own worker process. The
coordinator interleaves: every round times every case in every worker before the next round starts, the
workers' order rotating per case, so a burst of outside load hits one round of every configuration rather
than one configuration. Reported: the median over rounds of each round's median per-call time.

A call is timed inside one tf.function that runs the op n times in a tf.while_loop (n the same for all
configurations, chosen for ~20 ms per measurement), less the time of the same call with n = 0 (the cost of
calling the tf.function, ~1 ms), so the numbers are kernel time plus TensorFlow's per-op executor cost, the
same for all three, without Python's eager dispatch. Ratios > 1: gradrt faster.
The gradrt worker reports gradrt_tf.kernel_calls() per case; a case that did not run in gradrt is an error.
Outputs are compared across configurations (a setup that computes something else is an error).
"""
import argparse
import json
import math
import os
import sys
import time

from bench_workers import Lines, add_common_arguments, geomean, median, start_workers

# name: (TF_ENABLE_ONEDNN_OPTS, load gradrt)
CONFIGS = {"oneDNN": ("1", False), "Eigen": ("0", False), "gradrt": ("1", True), "gradrt-eigen": ("0", True)}


def same_out(size, stride):
    return (size + stride - 1) // stride


def cases(batches):
    """The shapes of gradrt_bench.cpp: (family, op, shape text, batch, inputs spec, attrs, work, unit)."""
    out = []
    for n in batches:
        for depthwise, h, c, oc, k, s in [(False, 56, 64, 64, 3, 1), (False, 56, 64, 128, 3, 2),
                                          (False, 28, 256, 512, 1, 1), (True, 112, 32, 32, 3, 1),
                                          (True, 56, 144, 144, 3, 2)]:
            oc = c if depthwise else oc
            oh = same_out(h, s)
            xs, ws, ys = [n, h, h, c], [k, k, c, 1 if depthwise else oc], [n, oh, oh, oc]
            flops = 2.0 * n * oh * oh * oc * k * k * (1 if depthwise else c)
            pre = "DepthwiseConv2dNative" if depthwise else "Conv2D"
            family = "depthwise" if depthwise else "conv"
            shape = f"{k}x{k} {h}x{h}x{c}->{oc} s{s}"
            attrs = {"strides": [1, s, s, 1], "padding": "SAME"}
            out.append((family, pre + "BackpropInput", shape, n,
                        {"input_sizes": ("sizes", xs), "filter": ("rand", ws), "out_backprop": ("rand", ys)},
                        attrs, flops, "GFLOP/s"))
            out.append((family, pre + "BackpropFilter", shape, n,
                        {"input": ("rand", xs), "filter_sizes": ("sizes", ws), "out_backprop": ("rand", ys)},
                        attrs, flops, "GFLOP/s"))
        xs = [n, 56, 56, 256]
        # FusedBatchNormGradV3 (what tf-keras runs; gradrt_bench times V1, the same computation). Bytes as
        # gradrt_bench counts them: dy and x read twice, dx written.
        out.append(("batchnorm", "FusedBatchNormGradV3", "56x56x256 train", n,
                    {"y_backprop": ("rand", xs), "x": ("rand", xs)}, {"epsilon": 0.001, "is_training": True},
                    5.0 * math.prod(xs) * 4, "GB/s"))
    return out


# The loop's own cost per iteration (executor, loop control, the element kept alive), with an op that
# does almost nothing: to read the small rows against.
OVERHEAD_CASE = ("overhead", "Neg", "1 element", 1, {"x": ("rand", [1])}, {}, 0, "")


# ------------------------------------------------------------------------------------------ worker
def worker(config, threads):
    """Serves timing requests (JSON lines on stdin, answers on the original stdout)."""
    reply_stream = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)  # anything TensorFlow prints to stdout goes to stderr, not into the answers
    onednn, use_gradrt = CONFIGS[config]
    os.environ["TF_ENABLE_ONEDNN_OPTS"] = onednn
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    gradrt_tf = None
    if use_gradrt:
        import gradrt_tf
    import numpy as np
    import tensorflow as tf
    tf.config.threading.set_intra_op_parallelism_threads(threads)  # before load(): its probe op starts TF
    tf.config.threading.set_inter_op_parallelism_threads(1)
    if gradrt_tf:
        gradrt_tf.load()

    def reply(obj):
        reply_stream.write(json.dumps(obj) + "\n")
        reply_stream.flush()

    prepared = {}

    def prepare(i, case):
        _, op, _, _, spec, attrs, _, _ = case
        rng = np.random.default_rng(1000 + (i if isinstance(i, int) else 999))
        args = {}
        for name, (kind, shape) in spec.items():
            args[name] = tf.constant(shape, tf.int32) if kind == "sizes" else tf.constant(
                rng.uniform(-0.5, 0.5, shape).astype(np.float32))
        if op.startswith("FusedBatchNormGrad"):
            c = args["x"].shape[-1]
            scale = tf.constant(rng.uniform(0.5, 1.5, c).astype(np.float32))
            empty = tf.constant([], tf.float32)
            # Reserve spaces from this configuration's own forward op (oneDNN's may carry its workspace).
            fwd = tf.function(lambda x: tf.raw_ops.FusedBatchNormV3(
                x=x, scale=scale, offset=scale, mean=empty, variance=empty, epsilon=attrs["epsilon"],
                is_training=True))(args["x"])
            args.update(scale=scale, reserve_space_1=fwd[3], reserve_space_2=fwd[4], reserve_space_3=fwd[5])
        op_fn = getattr(tf.raw_ops, op)

        @tf.function
        def loop(n):
            def body(j, acc):
                result = op_fn(**args, **attrs)
                first = result[0] if isinstance(result, (list, tuple)) else result
                # One element of every result keeps each iteration's op alive.
                return j + 1, acc + tf.reshape(first, [-1])[0]
            return tf.while_loop(lambda j, acc: j < n, body, (tf.constant(0), tf.constant(0.0)))[1]

        once = op_fn(**args, **attrs)
        once = once[0] if isinstance(once, (list, tuple)) else once
        prepared[i] = (loop, once.numpy())

    all_cases = None
    for line in sys.stdin:
        req = json.loads(line)
        if req["cmd"] == "cases":
            all_cases = cases(req["batches"])
            reply({"config": config, "threads": threads, "tf": tf.__version__})
        elif req["cmd"] == "prepare":
            prepare(req["case"], OVERHEAD_CASE if req["case"] == "overhead" else all_cases[req["case"]])
            loop, value = prepared[req["case"]]
            loop(tf.constant(1))  # trace
            # Seconds per iteration, without the cost of calling the tf.function (a few ms, which
            # sized n for loop(1) alone and then added itself, divided by that small n, to every
            # configuration's per-call time).
            took = {}
            for k in (1, 11):
                t0 = time.perf_counter()
                loop(tf.constant(k)).numpy()
                took[k] = time.perf_counter() - t0
            flat = value.ravel()
            reply({"seconds": max(took[11] - took[1], 1e-7) / 10, "checksum": float(np.abs(flat).astype(np.float64).sum()),
                   "probe": [float(v) for v in flat[:: max(1, flat.size // 64)]]})
        elif req["cmd"] == "time":
            loop, _ = prepared[req["case"]]
            n = tf.constant(req["n"])
            before = sum(gradrt_tf.kernel_calls().values()) if gradrt_tf else 0
            end = time.perf_counter() + req["warm_s"]
            while time.perf_counter() < end:
                loop(n)
            zero = tf.constant(0)
            times = []
            for _ in range(req["reps"]):
                # Less the cost of calling the tf.function itself (~1 ms here, loop(0)): with n sized
                # for the slowest configuration it was tens of us per iteration for the fast ones.
                t0 = time.perf_counter()
                loop(n).numpy()
                t1 = time.perf_counter()
                loop(zero).numpy()
                t2 = time.perf_counter()
                times.append(max(0.0, (t1 - t0) - (t2 - t1)) / req["n"])
            calls = (sum(gradrt_tf.kernel_calls().values()) - before) if gradrt_tf else None
            reply({"median": sorted(times)[len(times) // 2], "gradrt_calls": calls})
        elif req["cmd"] == "quit":
            return


# ------------------------------------------------------------------------------------------ coordinator
def check_same_outputs(case, answers):
    """Every configuration computed the same gradient (float32 sums in different orders: 1e-3 relative)."""
    import numpy as np
    name = "Eigen" if "Eigen" in answers else next(iter(answers))  # the reference: Eigen's, else the first
    ref = answers[name]
    for config, a in answers.items():
        if abs(a["checksum"] - ref["checksum"]) > 1e-3 * ref["checksum"] or not np.allclose(
                a["probe"], ref["probe"], rtol=1e-3, atol=1e-3 * max(1e-30, max(map(abs, ref["probe"])))):
            raise RuntimeError(f"{case[1]} {case[2]} batch {case[3]}: {config} output differs from {name}'s")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_common_arguments(ap, __file__, "oneDNN,Eigen,gradrt")
    ap.add_argument("--batch", default="1,8")
    ap.add_argument("--reps", type=int, default=5, help="timed calls of the loop per round (median)")
    ap.add_argument("--target-ms", type=float, default=20, help="time of the slowest configuration's n iterations (sets n)")
    ap.add_argument("--warm-ms", type=float, default=50, help="warm-up per case and worker, each round")
    ap.add_argument("--filter", default="")
    args = ap.parse_args()
    if args.worker:
        return worker(args.worker[0], int(args.worker[1]))

    thread_list = [int(t) for t in args.threads.split(",")]
    batches = [int(b) for b in args.batch.split(",")]
    configs = args.configs.split(",")
    all_cases = cases(batches)
    selected = [i for i, c in enumerate(all_cases) if args.filter in f"{c[1]} {c[2]}"]
    lines = Lines()
    emit = lines.emit

    with open(args.log, "w") as log:
        workers = start_workers(__file__, configs, thread_list, log)
        try:
            hello = {k: w.ask(cmd="cases", batches=batches) for k, w in workers.items()}
            emit(f"TensorFlow {next(iter(hello.values()))['tf']} CPU kernels vs gradrt_tf; float32 NHWC; "
                 f"median of {args.reps} loop calls per round, median of {args.rounds} interleaved rounds")
            emit("configs: " + "; ".join(f"{c} (TF_ENABLE_ONEDNN_OPTS={CONFIGS[c][0]}"
                                         f"{', gradrt_tf.load()' if CONFIGS[c][1] else ''})" for c in configs))
            emit("load average at the start (1 min): %.2f on %d cpus" % (os.getloadavg()[0], os.cpu_count()))
            overhead_config = next((c for c in configs if c != "gradrt"), configs[0])
            for t in thread_list:
                w = workers[overhead_config, t]
                w.ask(cmd="prepare", case="overhead")
                us = w.ask(cmd="time", case="overhead", n=2000, reps=5, warm_s=0.05)["median"] * 1e6
                emit(f"loop cost per iteration without the op (Neg of 1 element, {w.config}, threads={t}): {us:.1f} us")
            n_calls = {}
            for i in selected:
                answers = {}
                for (c, t), w in workers.items():
                    answers[c, t] = w.ask(cmd="prepare", case=i)
                for t in thread_list:
                    check_same_outputs(all_cases[i], {c: answers[c, t] for c in configs})
                slowest = max(a["seconds"] for a in answers.values())
                n_calls[i] = max(10, min(5000, round(args.target_ms / 1e3 / max(slowest, 1e-6))))
            times = {k: {i: [] for i in selected} for k in workers}
            keys = list(workers)
            for r in range(args.rounds):
                for j, i in enumerate(selected):
                    rot = (r + j) % len(keys)
                    for k in keys[rot:] + keys[:rot]:
                        a = workers[k].ask(cmd="time", case=i, n=n_calls[i], reps=args.reps,
                                           warm_s=args.warm_ms / 1e3)
                        if CONFIGS[k[0]][1] and a["gradrt_calls"] < n_calls[i] * args.reps:
                            raise RuntimeError(f"{all_cases[i][1]}: only {a['gradrt_calls']} calls ran in gradrt")
                        times[k][i].append(a["median"])
                print(f"  round {r + 1}/{args.rounds} done", file=sys.stderr, flush=True)
        finally:
            for w in workers.values():
                w.close()

    others = [c for c in configs if c != "gradrt"]
    for t in thread_list:
        emit()
        emit(f"threads={t}")
        head = f"{'op':<36} {'shape':<22} {'batch':>5} | " + " ".join(f"{c + ' ms':>10}" for c in configs)
        if "gradrt" in configs:
            head += " | " + " ".join(f"{'vs ' + c:>9}" for c in others) + f" | {'gradrt rate':>16}"
        emit(head)
        ratios = {}
        for i in selected:
            family, op, shape, n, _, _, work, unit = all_cases[i]
            ms = {c: median(times[c, t][i]) * 1e3 for c in configs}
            row = f"{op:<36} {shape:<22} {n:>5} | " + " ".join(f"{ms[c]:>10.3f}" for c in configs)
            if "gradrt" in configs:
                for c in others:
                    ratios.setdefault((family, c), []).append(ms[c] / ms["gradrt"])
                row += " | " + " ".join(f"{ms[c] / ms['gradrt']:>9.2f}" for c in others)
                row += f" | {work / (ms['gradrt'] * 1e-3) * 1e-9:>8.1f} {unit}"
            emit(row)
        for family in ("conv", "depthwise", "batchnorm"):
            vals = {c: ratios[family, c] for c in others if (family, c) in ratios}
            if vals:
                emit(f"geomean gradrt speed-up, {family:<10} threads={t}: " + ", ".join(
                    f"{geomean(v):.2f}x vs {c}" for c, v in vals.items()) + f"  ({len(next(iter(vals.values())))} shapes)")
    emit()
    emit("load average at the end (1 min, 5 min): %.2f, %.2f" % os.getloadavg()[:2])
    with open(args.out, "w") as f:
        f.write("\n".join(lines) + "\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    sys.exit(main())
