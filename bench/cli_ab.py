#!/usr/bin/env python3
"""Paired A/B of gradrt builds or environment settings on the issue-3 rows, through the command line.

    bench/cli_ab.py VARIANT [VARIANT ...] [--rounds 9] [--threads 1,2] [--batch 1,8] [--only SUBSTRING ...]

A VARIANT is a gradrt binary ("build/gradrt", "/tmp/old/gradrt"), or a binary and environment settings
after a colon ("build/gradrt:GRADRT_CPU_ISA=avx2"). The first is the base. Each round runs every row on
every variant back to back (order reversed every other round), `gradrt run --repeat N` with N filling
~300 ms; per variant it prints the median of the round medians and the median and quartiles of the
per-round ratios to the base. On a shared host whose speed drifts by 10-40% over minutes, only these
paired ratios separate a 1-2% change from the drift.
"""
import argparse, os, statistics, sys, tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cli_medians as cm


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
    a = ap.parse_args()
    workdir = tempfile.mkdtemp(prefix="gradrt-ab-")
    selected = [("%s %s b%d t%d" % (op, label, b, t), args)
                for t, _, op, label, b, args in cm.cli_rows([int(t) for t in a.threads.split(",")],
                                                             [int(b) for b in a.batch.split(",")], workdir)
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
