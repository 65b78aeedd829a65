#!/usr/bin/env python3
"""Paired A/B of gradrt builds or environment settings on the issue-3 rows, through the command line.

    bench/cli_ab.py VARIANT [VARIANT ...] [--rounds 9] [--threads 1,2] [--batch 1,8] [--only SUBSTRING ...]
                    [--all-kernels] [--keras]

A VARIANT is a gradrt binary ("build/gradrt", "/tmp/old/gradrt"), or a binary and environment settings
after a colon ("build/gradrt:GRADRT_CPU_ISA=avx2"). The first is the base. Each round runs every row on
every variant back to back (order reversed every other round), `gradrt run --repeat N` with N filling
~300 ms; per variant it prints the median of the round medians and the median and quartiles of the
per-round ratios to the base. On a shared host whose speed drifts by 10-40% over minutes, only these
paired ratios separate a 1-2% change from the drift. --all-kernels adds a row for each cpu kernel the
issue-3 rows do not run (forward ops, batch-norm statistics and inference gradient, fractional, max and
average pooling, the relu and bias kernels).
"""
import argparse, os, statistics, sys, tempfile

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


def median_ms(variant, args, repeat):
    binary, _, settings = variant.partition(":")
    env = dict(os.environ)
    env.update(kv.split("=", 1) for kv in settings.split() if kv)
    return cm.cli_median_ms(binary, args, repeat, env)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("variants", nargs="+")
    ap.add_argument("--rounds", type=int, default=9)
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--batch", default="1,8")
    ap.add_argument("--only", nargs="*", default=[], help="substrings a row name must contain")
    ap.add_argument("--all-kernels", action="store_true", help="also the kernels outside the issue-3 rows")
    ap.add_argument("--keras", action="store_true", help="the Keras-step input-gradient rows only (cli_medians)")
    a = ap.parse_args()
    case_list = (lambda batch: cm.cases(batch) + other_kernels(batch)) if a.all_kernels else cm.cases
    if a.keras:
        case_list = cm.keras_cases
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
                ms[(name, v)].append(median_ms(v, args, repeat))
    for name, _ in selected:
        cells = []
        for v in a.variants:
            ratios = sorted(x / y for x, y in zip(ms[(name, v)], ms[(name, base)]))
            q = len(ratios)
            cells.append("%s: %.3f ms, %.3f [%.2f..%.2f]" % (v, statistics.median(ms[(name, v)]),
                                                           statistics.median(ratios), ratios[q // 4], ratios[3 * q // 4]))
        print("%-48s %s" % (name, " | ".join(cells)))


if __name__ == "__main__":
    main()
