#!/usr/bin/env python3
"""A/B of Vulkan shader sets (and fence waits) from sets of gradrt_step runs, as one table.

    python3 bench/shader_ab.py NAME=STEP.jsonl [NAME=STEP.jsonl ...] [--base NAME]
                               [--cudnn GPU_STEP.json] [--bandwidth GBPS]

Each STEP.jsonl holds gradrt_step --backend vulkan --json lines of one configuration, e.g.
v1 (GRADRT_VULKAN_SHADERS=v1: the scalar session-9 shaders), v4 (session 10's vec4 shaders), v5
(the default: session 11's variants), v5+spin (and GRADRT_VULKAN_WAIT=spin: the polling fence wait,
the default on a real GPU). bench/gpu_step.sh writes them, rounds
interleaved. For every (model, batch) and every kernel of the chain: the median per-op GPU time
of each configuration's rounds, its share of --bandwidth (the bytes the kernel must move,
gradrt_step's "bytes", over the time; default 3350 GB/s: H100 SXM), base/x for every other
configuration (> 1: x is faster than the base, default the first), and, with --cudnn
(bench/cudnn_step.py's JSON), cuDNN float32's time for the same kernel and cuDNN/x of the
fastest configuration (>= 0.5 is issue 22's goal for the conv gradients). Then the whole step:
GPU ms, wall ms and wall/GPU (goal <= 1.2) per configuration.
"""
import argparse
import json
import statistics
from collections import defaultdict


def load(path):
    runs = defaultdict(list)  # (model, batch) -> [step dict]
    with open(path) as f:
        for line in f:
            line = line.strip()
            if line.startswith("{"):
                s = json.loads(line)
                if s.get("backend") == "vulkan":
                    runs[(s["model"], s["batch"])].append(s)
    return runs


def per_op_medians(steps):
    return [statistics.median(s["ops"][i]["gpu_ms"] for s in steps) for i in range(len(steps[0]["ops"]))]


def cudnn_times(path):
    """(model, batch) -> [cuDNN fp32 ms per kernel of the chain], from cudnn_step.py's --out JSON."""
    if not path:
        return {}
    try:
        with open(path) as f:
            chains = json.load(f).get("torch", {}).get("chains", {})
    except (OSError, ValueError):
        return {}
    out = {}
    for name, c in chains.items():
        model, _, b = name.rpartition(" b")
        if b.isdigit() and c.get("fp32_ms"):
            out[(model, int(b))] = c["fp32_ms"]
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("sets", nargs="+", help="NAME=STEP.jsonl")
    ap.add_argument("--base", help="the configuration the ratios divide (default, or when absent: the first)")
    ap.add_argument("--cudnn", help="bench/cudnn_step.py's JSON (gpu_step.json)")
    ap.add_argument("--bandwidth", type=float, default=3350.0)
    a = ap.parse_args()
    names, runs = [], {}
    for arg in a.sets:
        name, _, path = arg.partition("=")
        names.append(name)
        runs[name] = load(path)
    base = a.base if a.base in names else names[0]
    cudnn = cudnn_times(a.cudnn)
    keys = set.intersection(*(set(r) for r in runs.values()))
    for key in sorted(keys):
        model, batch = key
        steps = {n: runs[n][key] for n in names}
        rounds = " / ".join(str(len(steps[n])) for n in names)
        print(f"\n{model} batch {batch} ({steps[base][0]['device']}; rounds {rounds}; ratios {base}/x)")
        med = {n: per_op_medians(steps[n]) for n in names}
        others = [n for n in names if n != base]
        head = f"{'op':36} {'shape':26} {'MB':>6}"
        head += "".join(f" {n + ' ms':>9}" for n in names) + "".join(f" {n + ' %bw':>9}" for n in names)
        head += "".join(f" {base + '/' + n:>9}" for n in others)
        if key in cudnn:
            head += f" {'cuDNN ms':>9} {'cuDNN/best':>10}"
        print(head)
        for i, o in enumerate(steps[base][0]["ops"]):
            t = {n: med[n][i] for n in names}
            bw = lambda ms: 100.0 * o["bytes"] / (ms * 1e-3) / 1e9 / a.bandwidth if ms > 0 else 0.0
            row = f"{o['op']:36} {o['shape'][:26]:26} {o['bytes'] / 1e6:6.1f}"
            row += "".join(f" {t[n]:9.4f}" for n in names) + "".join(f" {bw(t[n]):8.1f}%" for n in names)
            row += "".join(f" {t[base] / t[n] if t[n] > 0 else 0:9.2f}" for n in others)
            if key in cudnn and i < len(cudnn[key]):
                best = min(t.values())
                row += f" {cudnn[key][i]:9.4f} {cudnn[key][i] / best if best > 0 else 0:10.2f}"
            print(row)
        for what in ("gpu_ms", "wall_ms"):
            v = {n: statistics.median(s[what] for s in steps[n]) for n in names}
            row = f"{'whole step (one Sequence), ' + what.replace('_', ' '):70}"
            row += "".join(f" {v[n]:9.4f}" for n in names) + " " * (10 * len(names))
            row += "".join(f" {v[base] / v[n] if v[n] > 0 else 0:9.2f}" for n in others)
            print(row)
        ratio = {n: statistics.median(s["wall_ms"] / s["gpu_ms"] for s in steps[n] if s["gpu_ms"] > 0) for n in names}
        print(f"{'whole step, wall/GPU (goal <= 1.2)':70}" + "".join(f" {ratio[n]:9.2f}" for n in names))


if __name__ == "__main__":
    main()
