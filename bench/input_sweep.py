#!/usr/bin/env python3
"""Conv2DBackpropInput's Vulkan variants next to cuDNN: the table to pick the default per shape from.

    python3 bench/input_sweep.py SWEEP.jsonl [--reps N]

SWEEP.jsonl: `vulkan_bench --only input --json FILE` (GPU ms per variant and shape, base's bits
check). For each shape this times torch.nn.grad.conv2d_input on the GPU (cudnn_step.py's timer:
float32 with TF32 off, NCHW and channels_last, the faster), and prints per shape every variant's
GPU ms, the best, base/best, cuDNN ms and cuDNN/best (goal >= 0.5) and cuDNN/base. Stride 2 rows:
torch pads symmetrically (1 on each side), TF's SAME pads 0 on top and 1 at the bottom: same output
size and work. Without torch/CUDA the cuDNN columns say "-".
"""
import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cudnn_step  # noqa: E402  (timer, make_op, torch_cuda)


def cudnn_ms(torch, row, reps):
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cuda.matmul.allow_tf32 = False
    time_ms = cudnn_step.timer(torch, reps)
    op = {"op": "Conv2DBackpropInput", **{k: row[k] for k in ("n", "h", "w", "ci", "co", "k", "stride")}}
    best = None
    for channels_last in (False, True):
        t = time_ms(cudnn_step.make_op(torch, op, channels_last))
        best = t if best is None else min(best, t)
    return best


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("sweep")
    ap.add_argument("--reps", type=int, default=20)
    a = ap.parse_args()
    rows = [json.loads(l) for l in open(a.sweep) if l.strip().startswith("{")]
    if not rows:
        print("no rows in", a.sweep)
        return 1
    torch, device = cudnn_step.torch_cuda()
    print(f"cuDNN side: {device}" + (f", torch {torch.__version__}, cuDNN {torch.backends.cudnn.version()}" if torch else ""))
    names = list(rows[0]["ms"])
    head = f'{"Conv2DBackpropInput shape":28}' + "".join(f" {n:>10}" for n in names)
    print(head + f' {"best":>10} {"base/best":>9} {"TFLOP/s":>7} {"cuDNN ms":>8} {"cuDNN/best":>10} {"cuDNN/base":>10}  bits')
    for r in rows:
        ms = r["ms"]
        best = min(names, key=lambda n: ms[n] if ms[n] > 0 else 1e30)
        c = cudnn_ms(torch, r, a.reps) if torch else None
        torch and torch.cuda.empty_cache()
        base = ms.get("base", 0)
        fmt = lambda v: f"{v:.4f}" if v else "-"
        line = f'{r["shape"]:28}' + "".join(f" {ms[n]:10.4f}" for n in names)
        line += f" {best:>10} {base / ms[best] if base and ms[best] else 0:9.2f}"
        line += f" {r['flops'] / ms[best] / 1e9 if ms[best] else 0:7.1f} {fmt(c):>8}"
        line += f" {c / ms[best] if c and ms[best] else 0:10.2f} {c / base if c and base else 0:10.2f}  "
        line += " ".join("=" if d == 0 else f"{d:.0e}" for d in r["rel_diff_vs_base"].values())
        print(line)
    print("pick per shape the fastest variant whose bits column is '=' (split: a small relative difference is "
          "its other chunk order); goal cuDNN/best >= 0.5")
    return 0


if __name__ == "__main__":
    sys.exit(main())
