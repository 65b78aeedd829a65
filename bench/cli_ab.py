#!/usr/bin/env python3
"""Paired A/B of gradrt builds or environment settings on the issue-3 rows, through the command line.

    bench/cli_ab.py VARIANT [VARIANT ...] [--rounds 9] [--threads 1,2] [--batch 1,8] [--only SUBSTRING ...]
                    [--all-kernels] [--one-by-one] [--small-c] [--keras] [--keras-filter] [--cpu]

A VARIANT is a gradrt binary ("build/gradrt", "/tmp/old/gradrt"), or a binary and environment settings
after a colon ("build/gradrt:GRADRT_CPU_ISA=avx2"). The first is the base. Each round runs every row on
every variant back to back (order reversed every other round), `gradrt run --repeat N` with N filling
~300 ms; per variant it prints the median of the round medians and the median and quartiles of the
per-round ratios to the base. On a shared host whose speed drifts by 10-40% over minutes, only these
paired ratios separate a 1-2% change from the drift. --all-kernels adds a row for each cpu kernel the
issue-3 rows do not run (forward ops, batch-norm statistics and inference gradient, fractional, max and
average pooling, the relu and bias kernels); --one-by-one adds 1x1 gradients with few channels (NHWC) and
NCHW 1x1 gradients (select them with --only 1x1). --small-c runs only the 3-channel first-layer filter
gradients (e.g. build/gradrt against build/gradrt:GRADRT_CPU_TILES=filter_few_c=0). --cpu compares CPU
time per call (user + system, all threads; two processes of 1 and 1+N calls, their difference) instead
of the median wall time: on a host loaded by other jobs wall time moved 2-5x within minutes, CPU time by
a few percent (it still counts a thread pool's waiting, so compare variants at the same thread count).
"""
import argparse, os, resource, statistics, sys, tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cli_medians as cm


def other_kernels(batch):
    """Rows (cli_medians.cases' format) for the kernels the issue-3 rows leave out."""
    x, c = [batch, 56, 56, 256], [256]
    conv = {"strides": [1, 1, 1, 1], "padding": "SAME"}
    n = 38  # FractionalAvgPool of 56 by 1.44: cells [seq[i], seq[i+1]) of 56
    seq = [i * 56 // n for i in range(n + 1)]
    return [
        ("forward", "Conv2D", "3x3 56x56x64->64 s1",
         {"input": ([batch, 56, 56, 64], "<f4", None), "filter": ([3, 3, 64, 64], "<f4", None)}, conv),
        ("forward", "DepthwiseConv2dNative", "3x3 112x112x32 s1",
         {"input": ([batch, 112, 112, 32], "<f4", None), "filter": ([3, 3, 32, 1], "<f4", None)}, conv),
        ("batchnorm", "FusedBatchNorm", "56x56x256 train",
         {"x": (x, "<f4", None), "scale": (c, "<f4", None), "offset": (c, "<f4", None), "mean": ([0], "<f4", None),
          "variance": ([0], "<f4", None)}, {"is_training": True}),
        ("batchnorm", "FusedBatchNormGrad", "56x56x256 inference",
         {"y_backprop": (x, "<f4", None), "x": (x, "<f4", None), "scale": (c, "<f4", None),
          "reserve_space_1": (c, "<f4", None), "reserve_space_2": (c, "<f4", 1.0)}, {"is_training": False}),
        ("pool", "FractionalAvgPool", "56x56x64 1.44",
         {"value": ([batch, 56, 56, 64], "<f4", None)},
         {"pooling_ratio": [1.0, 1.44, 1.44, 1.0], "pseudo_random": True, "deterministic": True, "seed": 1,
          "seed2": 2}),
        ("pool", "FractionalAvgPoolGrad", "56x56x64 1.44",
         {"orig_input_tensor_shape": ([4], "<i8", [batch, 56, 56, 64]), "out_backprop": ([batch, n, n, 64], "<f4", None),
          "row_pooling_sequence": ([n + 1], "<i8", seq), "col_pooling_sequence": ([n + 1], "<i8", seq)}, {}),
    ] + pool_kernels(batch) + relu_bias_kernels(batch)


def pool_kernels(batch):
    """MaxPool / AvgPool and their gradients: ResNet's 3x3 s2 SAME stem pool on 112x112x64."""
    x, y = [batch, 112, 112, 64], [batch, 56, 56, 64]
    attrs = {"ksize": [1, 3, 3, 1], "strides": [1, 2, 2, 1], "padding": "SAME"}
    return [
        ("pool", "MaxPool", "3x3 s2 112x112x64", {"input": (x, "<f4", None)}, attrs),
        ("pool", "MaxPoolGrad", "3x3 s2 112x112x64",
         {"orig_input": (x, "<f4", None), "orig_output": (y, "<f4", None), "grad": (y, "<f4", None)}, attrs),
        ("pool", "AvgPool", "3x3 s2 112x112x64", {"value": (x, "<f4", None)}, attrs),
        ("pool", "AvgPoolGrad", "3x3 s2 112x112x64", {"orig_input_shape": ([4], "<i4", x), "grad": (y, "<f4", None)}, attrs),
    ]


def relu_bias_kernels(batch):
    """Rows for the relu and bias kernels (relu, relu_grad, bias_add, bias_add_grad)."""
    a = [batch, 56, 56, 144]
    return [
        ("eltwise", "Relu6", "56x56x144", {"features": (a, "<f4", None)}, {}),
        ("eltwise", "ReluGrad", "56x56x144", {"gradients": (a, "<f4", None), "features": (a, "<f4", None)}, {}),
        ("bias", "BiasAdd", "56x56x144", {"value": (a, "<f4", None), "bias": ([144], "<f4", None)}, {}),
        ("bias", "BiasAddGrad", "56x56x144", {"out_backprop": (a, "<f4", None)}, {}),
    ]


def small_c_kernels(batch):
    """Filter gradients of first layers with 3 input channels (issue 21, the Keras step's models;
    the batch there is 32 or 64; 3x3 s2 ->32 and 7x7 s2 ->64: other common stems)."""
    out = []
    for f, hw, co, s in [(7, 64, 32, 2), (3, 32, 32, 1), (3, 64, 16, 2), (3, 64, 32, 2), (7, 64, 64, 2)]:
        o = (hw + s - 1) // s
        x, w, dy = [batch, hw, hw, 3], [f, f, 3, co], [batch, o, o, co]
        out.append(("conv", "Conv2DBackpropFilter", "%dx%d %dx%dx3->%d s%d" % (f, f, hw, hw, co, s),
                    {"input": (x, "<f4", None), "filter_sizes": ([4], "<i4", w), "out_backprop": (dy, "<f4", None)},
                    {"strides": [1, s, s, 1], "padding": "SAME"}))
    return out
def onebyone_kernels(batch):
    """1x1 conv gradient rows (issue 21 items 2-3): small channel counts of the Keras models'
    1x1 layers (NHWC filter gradient), and NCHW 1x1 gradients (per-image GEMMs, no transposes)."""
    rows = []
    attrs = {"strides": [1, 1, 1, 1], "padding": "SAME"}
    for hw, ci, co in [(32, 16, 8), (16, 48, 8), (32, 8, 48), (32, 32, 16), (16, 144, 24)]:
        x, w, dy = [batch, hw, hw, ci], [1, 1, ci, co], [batch, hw, hw, co]
        rows.append(("conv", "Conv2DBackpropFilter", "1x1 %dx%dx%d->%d" % (hw, hw, ci, co),
                     {"input": (x, "<f4", None), "filter_sizes": ([4], "<i4", w), "out_backprop": (dy, "<f4", None)}, attrs))
    nchw = dict(attrs, data_format="NCHW")
    for hw, ci, co in [(32, 32, 32), (16, 64, 64), (28, 256, 512), (7, 512, 512)]:
        x, w, dy = [batch, ci, hw, hw], [1, 1, ci, co], [batch, co, hw, hw]
        label = "1x1 NCHW %dx%dx%d->%d" % (hw, hw, ci, co)
        rows.append(("conv", "Conv2DBackpropFilter", label,
                     {"input": (x, "<f4", None), "filter_sizes": ([4], "<i4", w), "out_backprop": (dy, "<f4", None)}, nchw))
        rows.append(("conv", "Conv2DBackpropInput", label,
                     {"input_sizes": ([4], "<i4", x), "filter": (w, "<f4", None), "out_backprop": (dy, "<f4", None)}, nchw))
    return rows


def median_ms(variant, args, repeat, cpu=False):
    """The call's median wall ms, or with cpu its CPU ms (user + system, all threads) per call."""
    binary, _, settings = variant.partition(":")
    env = dict(os.environ)
    env.update(kv.split("=", 1) for kv in settings.split() if kv)
    if not cpu:
        return cm.cli_median_ms(binary, args, repeat, env)
    # Two processes, 1 and 1 + repeat calls: the difference of their CPU times cancels the
    # start-up and the .npy reads (the child's rusage, read around each run).
    def cpu_ms(n):
        r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        cm.cli_median_ms(binary, args, n, env)
        r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        return 1000.0 * (r1.ru_utime + r1.ru_stime - r0.ru_utime - r0.ru_stime)
    return (cpu_ms(1 + repeat) - cpu_ms(1)) / repeat


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("variants", nargs="+")
    ap.add_argument("--rounds", type=int, default=9)
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--batch", default="1,8")
    ap.add_argument("--only", nargs="*", default=[], help="substrings a row name must contain")
    ap.add_argument("--all-kernels", action="store_true", help="also the kernels outside the issue-3 rows")
    ap.add_argument("--one-by-one", action="store_true", help="also small-channel and NCHW 1x1 gradient rows")
    ap.add_argument("--small-c", action="store_true", help="only the 3-channel first-layer filter gradients")
    ap.add_argument("--keras", action="store_true", help="the Keras-step input-gradient rows only (cli_medians)")
    ap.add_argument("--keras-filter", action="store_true",
                    help="the Keras step's filter-gradient rows only (gradrt_bench's keras_filter; use --batch 32)")
    ap.add_argument("--cpu", action="store_true",
                    help="compare CPU time per call (all threads) instead of wall time: on a host loaded by other "
                         "jobs wall time moves 2-5x while CPU time moves by a few percent")
    a = ap.parse_args()
    extra = lambda batch: (other_kernels(batch) if a.all_kernels else []) + (onebyone_kernels(batch) if a.one_by_one else [])
    case_list = small_c_kernels if a.small_c else cm.keras_cases if a.keras else cm.keras_filter_cases if a.keras_filter else (lambda batch: cm.cases(batch) + extra(batch))
    workdir = tempfile.mkdtemp(prefix="gradrt-ab-")
    selected = [("%s %s b%d t%d" % (op, label, b, t), args)
                for t, _, op, label, b, args in cm.cli_rows([int(t) for t in a.threads.split(",")],
                                                             [int(b) for b in a.batch.split(",")], workdir, case_list)
                if all(s in "%s %s b%d t%d" % (op, label, b, t) for s in a.only)]
    base = a.variants[0]
    repeats = [max(50, int(300 / max(median_ms(base, args, 5), 1e-3))) for _, args in selected]
    ms = {(n, v): [] for n, _ in selected for v in a.variants}
    for r in range(a.rounds):
        order = a.variants if r % 2 == 0 else a.variants[::-1]
        for (name, args), repeat in zip(selected, repeats):
            for v in order:
                ms[(name, v)].append(median_ms(v, args, repeat, a.cpu))
    for name, _ in selected:
        cells = []
        for v in a.variants:
            ratios = sorted(x / y for x, y in zip(ms[(name, v)], ms[(name, base)]))
            q = len(ratios)
            cells.append("%s: %.3f ms, %.3f [%.2f..%.2f]" % (v, statistics.median(ms[(name, v)]),
                                                           statistics.median(ratios), ratios[q // 4], ratios[3 * q // 4]))
        print("%-48s %s%s" % (name, "cpu " if a.cpu else "", " | ".join(cells)))


if __name__ == "__main__":
    main()
