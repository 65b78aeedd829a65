#!/usr/bin/env python3
"""The issue-3 shapes through the command line: `gradrt run OP --backend cpu --threads T --repeat N`
(N >= --repeat, and enough runs to fill ~300 ms)
on .npy inputs written here (stdlib only), its median_ms next to the oneDNN times that
gradrt_bench wrote to bench/results.csv in the same session, and the geometric means per group.

    bench/cli_medians.py build/gradrt [--csv bench/results.csv] [--repeat 50] [--threads 1,2] [--rounds 3]
                         [--live build-bench/bench/gradrt_bench]

With --rounds R every row is run R times, the rounds interleaved over all rows (a noisy stretch
of the machine then hits one round of many rows, not every round of one row), and the median of
the R medians is reported.
With --live GRADRT_BENCH the oneDNN NHWC time is not taken from the csv but measured right after
each CLI median (`gradrt_bench --filter` for that row, one round): each round pairs the two
sides within seconds of each other, and the ratio is the median of the R paired ratios (on this
shared VM the 2-thread times drift by 10-40% over minutes, for both libraries).
"""
import argparse, csv, json, math, os, random, struct, subprocess, sys, tempfile
from collections import defaultdict


def write_npy(path, shape, dtype, values):
    """Version 1.0 .npy. values: int32 list, a float constant, or None: a random float block
    repeated (fast for tens of MB)."""
    n = math.prod(shape)
    if dtype in ("<i4", "<i8"):
        data = struct.pack("<%d%s" % (n, "i" if dtype == "<i4" else "q"), *values)
    elif values is not None:
        data = struct.pack("<f", values) * n
    else:
        rng = random.Random(n)
        block = struct.pack("<4096f", *(rng.uniform(-1, 1) for _ in range(4096)))
        data = (block * (n // 4096 + 1))[: 4 * n]
    header = "{'descr': '%s', 'fortran_order': False, 'shape': (%s), }" % (
        dtype, "".join("%d, " % d for d in shape) if len(shape) != 1 else "%d," % shape[0])
    header += " " * (63 - (10 + len(header)) % 64) + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode() + data)


def cases(batch):
    """(group, op, shape label as in results.csv, inputs {name: (shape, dtype, values)}, attrs)."""
    out = []
    for f, hw, ci, co, s in [(3, 56, 64, 64, 1), (3, 56, 64, 128, 2), (1, 28, 256, 512, 1)]:
        o = (hw + s - 1) // s
        x, w, dy = [batch, hw, hw, ci], [f, f, ci, co], [batch, o, o, co]
        label = "%dx%d %dx%dx%d->%d s%d" % (f, f, hw, hw, ci, co, s)
        attrs = {"strides": [1, s, s, 1], "padding": "SAME"}
        out.append(("conv", "Conv2DBackpropInput", label,
                    {"input_sizes": ([4], "<i4", x), "filter": (w, "<f4", None), "out_backprop": (dy, "<f4", None)}, attrs))
        out.append(("conv", "Conv2DBackpropFilter", label,
                    {"input": (x, "<f4", None), "filter_sizes": ([4], "<i4", w), "out_backprop": (dy, "<f4", None)}, attrs))
    for hw, c, s in [(112, 32, 1), (56, 144, 2)]:
        o = (hw + s - 1) // s
        x, w, dy = [batch, hw, hw, c], [3, 3, c, 1], [batch, o, o, c]
        label = "3x3 %dx%dx%d->%d s%d" % (hw, hw, c, c, s)
        attrs = {"strides": [1, s, s, 1], "padding": "SAME"}
        out.append(("depthwise", "DepthwiseConv2dNativeBackpropInput", label,
                    {"input_sizes": ([4], "<i4", x), "filter": (w, "<f4", None), "out_backprop": (dy, "<f4", None)}, attrs))
        out.append(("depthwise", "DepthwiseConv2dNativeBackpropFilter", label,
                    {"input": (x, "<f4", None), "filter_sizes": ([4], "<i4", w), "out_backprop": (dy, "<f4", None)}, attrs))
    x, c = [batch, 56, 56, 256], [256]
    # the variance must be positive: all ones.
    out.append(("batchnorm", "FusedBatchNormGrad", "56x56x256 train",
                {"y_backprop": (x, "<f4", None), "x": (x, "<f4", None), "scale": (c, "<f4", None),
                 "reserve_space_1": (c, "<f4", None), "reserve_space_2": (c, "<f4", 1.0)},
                {"is_training": True}))
    return out


# Conv2DBackpropInput shapes from the Keras step profile (bench/results_keras_step.txt: the input
# gradients furthest behind TF's oneDNN): (f, hw, ci, co, stride), ci = dx channels. Run them
# at the models' batch (32: `--batch 32`).
KERAS_INPUT_SHAPES = [(3, 32, 32, 64, 2), (3, 16, 32, 32, 1), (3, 16, 64, 128, 2),
                      (1, 32, 32, 32, 1), (1, 32, 8, 48, 1), (1, 32, 16, 8, 1), (1, 32, 16, 96, 1),
                      (1, 16, 24, 144, 1), (1, 16, 64, 64, 1)]


# The Keras step's filter gradients (gradrt_bench's group "keras_filter": small_cnn's and resnet's
# layers, the first layers on RGB input included), (filter, side, in, out, stride) as above.
KERAS_FILTER_SHAPES = [(7, 64, 3, 32, 2), (3, 32, 3, 32, 1), (3, 32, 32, 64, 2), (3, 16, 32, 32, 1),
                       (3, 16, 32, 64, 2), (3, 8, 64, 64, 1), (1, 32, 32, 32, 1), (1, 16, 32, 64, 2),
                       (1, 16, 64, 64, 1)]


def _keras_rows(group, op, shapes, batch):
    """cases()' format: `op` (a conv gradient) on each SAME-padded shape at `batch`."""
    out = []
    for f, hw, ci, co, s in shapes:
        o = (hw + s - 1) // s
        x, w, dy = [batch, hw, hw, ci], [f, f, ci, co], [batch, o, o, co]
        if op == "Conv2DBackpropInput":
            inputs = {"input_sizes": ([4], "<i4", x), "filter": (w, "<f4", None), "out_backprop": (dy, "<f4", None)}
        else:
            inputs = {"input": (x, "<f4", None), "filter_sizes": ([4], "<i4", w), "out_backprop": (dy, "<f4", None)}
        out.append((group, op, "%dx%d %dx%dx%d->%d s%d" % (f, f, hw, hw, ci, co, s), inputs,
                    {"strides": [1, s, s, 1], "padding": "SAME"}))
    return out


def keras_cases(batch):
    """The Conv2DBackpropInput rows of KERAS_INPUT_SHAPES."""
    return _keras_rows("keras", "Conv2DBackpropInput", KERAS_INPUT_SHAPES, batch)


def keras_filter_cases(batch):
    """The Conv2DBackpropFilter rows of KERAS_FILTER_SHAPES (use batch 32, the models')."""
    return _keras_rows("keras_filter", "Conv2DBackpropFilter", KERAS_FILTER_SHAPES, batch)


def cli_rows(threads, batches, workdir, case_list=cases):
    """(threads, group, op, label, batch, args) per row, args the `gradrt` arguments without the
    binary and --repeat; the inputs are written once as .npy files under workdir. case_list(batch)
    gives the rows' cases (default: the issue-3 shapes, cases())."""
    rows = []
    for t in threads:
        for b in batches:
            for i, (group, op, label, inputs, attrs) in enumerate(case_list(b)):
                d = os.path.join(workdir, "b%d_%d" % (b, i))
                os.makedirs(d, exist_ok=True)
                args = ["run", op, "--backend", "cpu", "--threads", str(t), "--out", os.path.join(d, "out")]
                for name, (shape, dtype, values) in inputs.items():
                    path = os.path.join(d, name + ".npy")
                    if not os.path.exists(path):
                        write_npy(path, shape, dtype, values)
                    args += ["--input", "%s=%s" % (name, path)]
                for k, v in attrs.items():
                    args += ["--attr", "%s=%s" % (k, json.dumps(v))]
                rows.append((t, group, op, label, b, args))
    return rows


def cli_median_ms(binary, args, repeat, env=None):
    """median_ms of `binary args --repeat repeat` (env: the process environment, default ours)."""
    r = subprocess.run([binary] + args + ["--repeat", str(repeat)], capture_output=True, text=True, env=env)
    if r.returncode != 0:
        sys.exit("%s %s failed: %s" % (binary, " ".join(args), r.stderr.strip()))
    return json.loads(r.stdout.strip().splitlines()[-1])["median_ms"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("gradrt")
    ap.add_argument("--csv", default=os.path.join(os.path.dirname(__file__), "results.csv"))
    ap.add_argument("--repeat", type=int, default=50)
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--batch", default="1,8")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--live", help="gradrt_bench binary: measure oneDNN NHWC next to each CLI median")
    a = ap.parse_args()
    onednn = {}
    if os.path.exists(a.csv):
        for r in csv.DictReader(open(a.csv)):
            onednn[(int(r["threads"]), r["op"], r["shape"], int(r["batch"]))] = float(r["onednn_nhwc_ms"])
    tmp = tempfile.mkdtemp(prefix="gradrt-cli-")
    rows = cli_rows([int(v) for v in a.threads.split(",")], [int(v) for v in a.batch.split(",")], tmp)

    def median_ms(args, repeat):
        return cli_median_ms(a.gradrt, args, repeat)

    def onednn_ms(t, op, label, b):
        """oneDNN NHWC ms of one row, measured now by gradrt_bench."""
        out = os.path.join(tmp, "live.csv")
        r = subprocess.run([a.live, "--threads=%d" % t, "--batch=%d" % b, "--filter=%s %s" % (op, label),
                            "--reps=11", "--csv=" + out], capture_output=True, text=True)
        if r.returncode != 0:
            sys.exit("%s failed: %s" % (a.live, r.stderr.strip()))
        found = [float(x["onednn_nhwc_ms"]) for x in csv.DictReader(open(out))
                 if x["op"] == op and x["shape"] == label and int(x["batch"]) == b]
        if len(found) != 1:
            sys.exit("%s: no single row for %s %s batch %d" % (a.live, op, label, b))
        return found[0]

    # --repeat N at least, and enough runs to fill ~300 ms: a 2 ms loop of small ops would be
    # timed on cores still waking up (the bench warms each side 100 ms).
    repeats = [max(a.repeat, min(20000, int(300 / max(median_ms(args, 5), 1e-3)))) for *_, args in rows]
    runs = [[] for _ in rows]
    live = [[] for _ in rows]  # --live: oneDNN NHWC ms per round, measured after that round's CLI median
    for _ in range(a.rounds):
        for i, (t, group, op, label, b, args) in enumerate(rows):
            runs[i].append(median_ms(args, repeats[i]))
            if a.live:
                live[i].append(onednn_ms(t, op, label, b))

    print("threads op                                   shape                  batch | cli median ms | oneDNN NHWC ms | ratio")
    ratios = defaultdict(list)
    for i, ((t, group, op, label, b, _), ms_list) in enumerate(zip(rows, runs)):
        ms = sorted(ms_list)[len(ms_list) // 2]
        ref = onednn.get((t, op, label, b))
        ratio = ref / ms if ref else None
        if a.live:
            ref = sorted(live[i])[len(live[i]) // 2]
            paired = sorted(o / g for o, g in zip(live[i], ms_list))
            ratio = paired[len(paired) // 2]
        if ratio:
            ratios[(t, group)].append(ratio)
        print("%7d %-36s %-22s %5d | %13.3f | %14s | %5s" % (
            t, op, label, b, ms, "%.3f" % ref if ref else "-", "%.2f" % ratio if ratio else "-"))
    for (t, g), v in sorted(ratios.items()):
        print("geomean oneDNN NHWC / gradrt CLI, %-9s threads=%d: %.2f (%d shapes)" % (
            g, t, math.exp(sum(map(math.log, v)) / len(v)), len(v)))

if __name__ == "__main__":
    main()
