#!/usr/bin/env python3
"""PyTorch's cuDNN on the shapes of gradrt_step's chains, and the table of both.

    python3 bench/cudnn_step.py STEP.jsonl [--out cudnn.json] [--reps N] [--reuse EARLIER.json]

STEP.jsonl holds gradrt_step --json lines (any backends, models, batches); each line's "ops"
list names the kernels of one backward step with their shapes. For every (model, batch) this
times the same kernels in PyTorch on the GPU, each with CUDA events (median of --reps after
warm-up), in float32 with TF32 off (cuDNN's float32 speed) and with TF32 on (for reference):
  Conv2DBackpropInput / Filter           torch.nn.grad.conv2d_input / conv2d_weight
  DepthwiseConv2dNativeBackprop*         the same as grouped convs (groups = channels)
  FusedBatchNormGrad                     torch.ops.aten.native_batch_norm_backward (training)
each in NCHW and in channels_last (gradrt's NHWC), keeping the faster; plus the whole chain back
to back, and the device's copy bandwidth. Without torch or CUDA the cuDNN columns are empty
(a dry run on a machine without a GPU still prints gradrt's side). Then one table per (model,
batch) and the step summary are printed; --out gets everything as JSON.
"""
import argparse
import json
import statistics
import sys


def load_steps(path):
    steps = []
    with open(path) as f:
        for line in f:
            line = line.strip()
            if line.startswith("{"):
                steps.append(json.loads(line))
    return steps


def torch_cuda():
    try:
        import torch
    except ImportError as e:
        return None, f"torch not importable ({e})"
    if not torch.cuda.is_available():
        return None, "torch has no CUDA device"
    return torch, torch.cuda.get_device_name(0)


def timer(torch, reps):
    def time_ms(fn):
        for _ in range(3):
            fn()
        torch.cuda.synchronize()
        times = []
        for _ in range(reps):
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            fn()
            end.record()
            end.synchronize()
            times.append(start.elapsed_time(end))
        return statistics.median(times)
    return time_ms


def make_op(torch, op, channels_last):
    """A closure running `op` (one entry of gradrt_step's "ops") in PyTorch, inputs made once."""
    dev, f32 = "cuda", torch.float32
    fmt = torch.channels_last if channels_last else torch.contiguous_format
    g = torch.Generator(device=dev).manual_seed(1)

    def rand(*shape):
        return torch.rand(*shape, generator=g, device=dev, dtype=f32).contiguous(memory_format=fmt) \
            if len(shape) == 4 else torch.rand(*shape, generator=g, device=dev, dtype=f32)

    name = op["op"]
    if name == "FusedBatchNormGrad":
        c, rows = op["channels"], op["rows"]
        hw = 56 if rows % (56 * 56) == 0 else 1
        n = rows // (hw * hw)
        dy, x = rand(n, c, hw, hw), rand(n, c, hw, hw)
        scale, mean, invstd = rand(c), rand(c), rand(c) + 0.5
        return lambda: torch.ops.aten.native_batch_norm_backward(
            dy, x, scale, None, None, mean, invstd, True, 1e-3, [True, True, True])
    n, h, w, ci, co, k, s = (op[key] for key in ("n", "h", "w", "ci", "co", "k", "stride"))
    depthwise = name.startswith("Depthwise")
    groups = ci if depthwise else 1
    oh, ow = (h + s - 1) // s, (w + s - 1) // s
    pad = (k - 1) // 2  # SAME at stride 1 (the chains' convs); odd k
    weight = rand(co, ci // groups, k, k)
    dy = rand(n, co, oh, ow)
    if name.endswith("BackpropInput"):
        return lambda: torch.nn.grad.conv2d_input((n, ci, h, w), weight, dy, stride=s, padding=pad, groups=groups)
    x = rand(n, ci, h, w)
    return lambda: torch.nn.grad.conv2d_weight(x, weight.shape, dy, stride=s, padding=pad, groups=groups)


def time_chain(torch, ops, reps, tf32):
    torch.backends.cudnn.allow_tf32 = tf32
    torch.backends.cuda.matmul.allow_tf32 = tf32
    time_ms = timer(torch, reps)
    per_op, best_fns = [], []
    for op in ops:
        best, best_fn = None, None
        for channels_last in (False, True):
            fn = make_op(torch, op, channels_last)
            t = time_ms(fn)
            if best is None or t < best:
                best, best_fn = t, fn
        per_op.append(best)
        best_fns.append(best_fn)

    def chain():
        for fn in best_fns:
            fn()
    return per_op, time_ms(chain)


def copy_bandwidth_gbs(torch, time_ms):
    a = torch.empty(256 << 20, dtype=torch.float32, device="cuda")  # 1 GiB
    b = torch.empty_like(a)
    ms = time_ms(lambda: b.copy_(a))
    return 2 * a.numel() * 4 / ms / 1e6


def measure(steps, reps):
    torch, device = torch_cuda()
    result = {"device": device, "torch": None, "copy_gbs": None, "chains": {}}
    if torch is None:
        return result
    result["torch"] = torch.__version__
    result["cudnn"] = torch.backends.cudnn.version()
    result["copy_gbs"] = copy_bandwidth_gbs(torch, timer(torch, reps))
    for step in steps:
        key = f'{step["model"]} b{step["batch"]}'
        if key in result["chains"]:
            continue
        fp32, chain32 = time_chain(torch, step["ops"], reps, tf32=False)
        tf32, chain_tf = time_chain(torch, step["ops"], reps, tf32=True)
        result["chains"][key] = {"fp32_ms": fp32, "tf32_ms": tf32, "chain_fp32_ms": chain32, "chain_tf32_ms": chain_tf}
        torch.cuda.empty_cache()
    return result


def fmt(v, spec=".3f"):
    return "-" if v is None else format(v, spec)


def fmt_rate(v):  # GFLOP/s, GB/s: whole numbers, small ones (CPU drivers) with 3 digits
    return "-" if v is None else format(v, ".0f" if v >= 100 else ".3g")


def print_tables(steps, torch_result, peak_gbs):
    by_key = {}
    for s in steps:
        by_key.setdefault(f'{s["model"]} b{s["batch"]}', {})[s["backend"]] = s
    print(f'cuDNN side: {torch_result["device"]}, torch {torch_result.get("torch")}, cuDNN {torch_result.get("cudnn")}, '
          f'copy bandwidth {fmt(torch_result.get("copy_gbs"), ".0f")} GB/s; % of peak against {peak_gbs:.0f} GB/s')
    for key, runs in by_key.items():
        vk, cpu = runs.get("vulkan"), runs.get("cpu")
        ref = vk or cpu
        chain = torch_result["chains"].get(key, {})
        print(f"\n## {key}  (gradrt device: {vk['device'] if vk else '-'}; cpu: {cpu['device'] if cpu else '-'})")
        print(f'{"op":36} {"shape":26} {"gradrt ms":>9} {"GFLOP/s":>8} {"GB/s":>7} {"%peak":>6} '
              f'{"cuDNN fp32":>10} {"cuDNN/gradrt":>12} {"cuDNN tf32":>10}')
        for i, op in enumerate(ref["ops"]):
            g = vk["ops"][i]["gpu_ms"] if vk else None
            c32 = chain["fp32_ms"][i] if chain else None
            ctf = chain["tf32_ms"][i] if chain else None
            gflops = op["flops"] / g / 1e6 if g else None
            gbs = op["bytes"] / g / 1e6 if g else None
            ratio = c32 / g if (g and c32) else None
            print(f'{op["op"]:36} {op["shape"]:26} {fmt(g):>9} {fmt_rate(gflops):>8} {fmt_rate(gbs):>7} '
                  f'{fmt_rate(gbs and 100 * gbs / peak_gbs):>6} {fmt(c32):>10} {fmt(ratio, ".2f"):>12} {fmt(ctf):>10}')
        if vk:
            ratio = vk["wall_ms"] / vk["gpu_ms"] if vk["gpu_ms"] else None
            print(f'step on {vk["device"]}: sequence gpu {vk["gpu_ms"]:.3f} ms, wall {vk["wall_ms"]:.3f} ms '
                  f'(wall/gpu {fmt(ratio, ".2f")}), {vk["submissions_per_step"]:g} submission(s), '
                  f'{vk["bytes_to_device_per_step"]:.0f} B to device, {vk["bytes_to_host_per_step"]:.0f} B to host per '
                  f'step, {vk["dispatches_per_step"]} dispatches; max |sequence - op by op| = {vk["max_abs_diff_vs_op_by_op"]:g}; '
                  f'op by op: gpu {vk["op_by_op_gpu_ms"]:.3f} ms, wall {vk["op_by_op_wall_ms"]:.3f} ms')
        if cpu:
            print(f'step on cpu ({cpu["device"]}, {cpu.get("cpu", "?")}): wall {cpu["wall_ms"]:.3f} ms')
        if chain:
            print(f'cuDNN chain back to back: fp32 {chain["chain_fp32_ms"]:.3f} ms, tf32 {chain["chain_tf32_ms"]:.3f} ms '
                  f'(sum of kernels fp32 {sum(chain["fp32_ms"]):.3f} ms)')


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("steps", help="gradrt_step --json lines")
    ap.add_argument("--out", help="write the results as JSON here")
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--reuse", help="take the torch results from this earlier --out file instead of measuring")
    ap.add_argument("--peak-gbs", type=float, default=3350.0, help="memory bandwidth the %%peak column uses")
    args = ap.parse_args()
    steps = load_steps(args.steps)
    if not steps:
        sys.exit(f"no gradrt_step JSON lines in {args.steps}")
    if args.reuse:
        with open(args.reuse) as f:
            torch_result = json.load(f)["torch"]
    else:
        torch_result = measure(steps, args.reps)
    print_tables(steps, torch_result, args.peak_gbs)
    if args.out:
        with open(args.out, "w") as f:
            json.dump({"gradrt_step": steps, "torch": torch_result}, f, indent=1)


if __name__ == "__main__":
    main()
