#!/usr/bin/env python3
"""A/B of the Vulkan depthwise and batch-norm-gradient shaders from two sets of gradrt_step runs.

    python3 bench/shader_ab.py STEP_V1.jsonl STEP_V4.jsonl [--bandwidth GBPS]

STEP_V1.jsonl: gradrt_step --backend vulkan --json lines run with GRADRT_VULKAN_SHADERS=v1 (the
scalar session-9 shaders), STEP_V4.jsonl: the same (model, batch) runs with the default (the
vec4 `_v4` shaders). bench/gpu_step.sh writes both, rounds interleaved. For every (model,
batch) and every kernel of the chain: the median per-op GPU time of each file's rounds, the
bytes the kernel must move (gradrt_step's "bytes") as GB/s and as a share of --bandwidth (the
card's memory bandwidth, default 3350 GB/s: H100 SXM), and v1/v4 (> 1: the vec4 shaders are
faster). Then the whole step's GPU time (sequence) both ways.
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
    ops = steps[0]["ops"]
    return [(o, statistics.median(s["ops"][i]["gpu_ms"] for s in steps)) for i, o in enumerate(ops)]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("v1")
    ap.add_argument("v4")
    ap.add_argument("--bandwidth", type=float, default=3350.0)
    a = ap.parse_args()
    v1, v4 = load(a.v1), load(a.v4)
    for key in sorted(set(v1) & set(v4)):
        model, batch = key
        print(f"\n{model} batch {batch} ({v4[key][0]['device']}; {len(v1[key])} / {len(v4[key])} rounds)")
        print(f"{'op':36} {'shape':28} {'MB':>7} {'v1 ms':>8} {'v4 ms':>8} {'v1 %bw':>7} {'v4 %bw':>7} {'v1/v4':>6}")
        for (o, t1), (_, t4) in zip(per_op_medians(v1[key]), per_op_medians(v4[key])):
            mb = o["bytes"] / 1e6
            bw = lambda t: 100.0 * o["bytes"] / (t * 1e-3) / 1e9 / a.bandwidth if t > 0 else 0.0
            ratio = t1 / t4 if t4 > 0 else 0.0
            print(f"{o['op']:36} {o['shape'][:28]:28} {mb:7.2f} {t1:8.4f} {t4:8.4f} {bw(t1):6.1f}% {bw(t4):6.1f}% {ratio:6.2f}")
        g1 = statistics.median(s["gpu_ms"] for s in v1[key])
        g4 = statistics.median(s["gpu_ms"] for s in v4[key])
        print(f"{'whole step (one Sequence), GPU ms':65} {'':7} {g1:8.4f} {g4:8.4f} {'':7} {'':7} {g1 / g4 if g4 else 0:6.2f}")


if __name__ == "__main__":
    main()
