#!/usr/bin/env python3
"""NCHW, float16 and bfloat16 calls of the conv gradients against NHWC float32, through the command line.

    bench/layout_dtype.py build/gradrt [OTHER_GRADRT ...] [--rounds 5] [--repeat 300] [--threads 1]

Conv2DBackpropInput and Conv2DBackpropFilter at 3x3 s1 56x56x64->64, batch 1, each as NHWC / NCHW x
float32 / float16 / bfloat16 (T=bfloat16 on float32 tensors: the form the CLI's .npy files carry), run
with `gradrt run OP --backend cpu --threads T --repeat N`. Each round runs every row of every binary
back to back (order reversed every other round); a row's ratio is its median_ms over the NHWC float32
median_ms of the same op and binary in the same round, and the table prints the median of the per-round
ratios with their quartiles (on a shared host the speed drifts between rounds; paired ratios do not).
Several binaries (a build before and after a change) are columns of one table.

--cpu times CPU instead of the wall clock: the process's user+system time of `--repeat N` minus that of
`--repeat 1` (start-up, .npy reading) in the same round, over N-1. On a host whose cores are shared with
other jobs a wall-clock median also counts the time the process waited for a core; CPU time does not.
"""
import argparse, json, os, statistics, struct, subprocess, sys, tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cli_medians as cm

HW, CI, CO, F = 56, 64, 64, 3
VARIANTS = [(layout, dtype) for dtype in ("float32", "float16", "bfloat16") for layout in ("NHWC", "NCHW")]


def write_f16(path, shape, seed):
    """A float16 .npy of values in [-1, 1) (what cm.write_npy does for float32)."""
    n = 1
    for d in shape:
        n *= d
    block = struct.pack("<4096e", *((((i * 2654435761 + seed) % 65536) / 32768.0 - 1) for i in range(4096)))
    data = (block * (n // 4096 + 1))[: 2 * n]
    header = "{'descr': '<f2', 'fortran_order': False, 'shape': (%s), }" % "".join("%d, " % d for d in shape)
    header += " " * (63 - (10 + len(header)) % 64) + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode() + data)


def rows(workdir, threads):
    """(op, layout, dtype, gradrt args without --repeat) for every row."""
    out = []
    for op in ("Conv2DBackpropInput", "Conv2DBackpropFilter"):
        for layout, dtype in VARIANTS:
            def dims(n, h, w, c):
                return [n, h, w, c] if layout == "NHWC" else [n, c, h, w]
            x, dy, w = dims(1, HW, HW, CI), dims(1, HW, HW, CO), [F, F, CI, CO]
            d = os.path.join(workdir, "%s_%s_%s" % (op, layout, dtype))
            os.makedirs(d, exist_ok=True)
            store = "<f2" if dtype == "float16" else "<f4"
            if op == "Conv2DBackpropInput":
                inputs = {"input_sizes": ([4], "<i4", x), "filter": (w, store, None), "out_backprop": (dy, store, None)}
            else:
                inputs = {"input": (x, store, None), "filter_sizes": ([4], "<i4", w), "out_backprop": (dy, store, None)}
            args = ["run", op, "--backend", "cpu", "--threads", str(threads), "--out", os.path.join(d, "out")]
            for seed, (name, (shape, kind, values)) in enumerate(inputs.items()):
                path = os.path.join(d, name + ".npy")
                if kind == "<f2":
                    write_f16(path, shape, seed)
                else:
                    cm.write_npy(path, shape, kind, values)
                args += ["--input", "%s=%s" % (name, path)]
            strides = [1, 1, 1, 1]
            args += ["--attr", "strides=" + json.dumps(strides), "--attr", "padding=SAME",
                     "--attr", "data_format=" + layout]
            if dtype == "bfloat16":
                args += ["--attr", "T=bfloat16"]
            out.append((op, layout, dtype, args))
    return out


def cpu_ms(binary, args, repeat):
    """User+system CPU ms of one `binary args --repeat repeat` process."""
    p = subprocess.Popen([binary] + args + ["--repeat", str(repeat)], stdout=subprocess.DEVNULL,
                         stderr=subprocess.PIPE)
    err = p.stderr.read()
    _, status, usage = os.wait4(p.pid, 0)
    p.returncode = status
    if status != 0:
        sys.exit("%s %s failed: %s" % (binary, " ".join(args), err.decode().strip()))
    return 1000.0 * (usage.ru_utime + usage.ru_stime)


def per_call_ms(binary, args, repeat, cpu):
    if not cpu:
        return cm.cli_median_ms(binary, args, repeat)
    return (cpu_ms(binary, args, repeat) - cpu_ms(binary, args, 1)) / (repeat - 1)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("gradrt", nargs="+")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--repeat", type=int, default=300)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--cpu", action="store_true", help="CPU time per call instead of the wall-clock median")
    a = ap.parse_args()
    table = rows(tempfile.mkdtemp(prefix="gradrt-layout-"), a.threads)
    ms = {(b, i): [] for b in a.gradrt for i in range(len(table))}
    for r in range(a.rounds):
        order = list(range(len(table))) if r % 2 == 0 else list(reversed(range(len(table))))
        for i in order:
            for b in (a.gradrt if r % 2 == 0 else a.gradrt[::-1]):
                ms[(b, i)].append(per_call_ms(b, table[i][3], a.repeat, a.cpu))
    base_of = {op: i for i, (op, layout, dtype, _) in enumerate(table) if (layout, dtype) == ("NHWC", "float32")}
    print("3x3 s1 %dx%dx%d->%d, batch 1, %d thread(s), gradrt run --repeat %d, %d paired rounds, %s; "
          "ratio = median over rounds of ms / NHWC float32 ms [quartiles]" % (
              HW, HW, CI, CO, a.threads, a.repeat, a.rounds, "CPU ms per call" if a.cpu else "wall-clock median ms"))
    print("%-22s %-5s %-9s | %s" % ("op", "", "dtype", " | ".join("%-30s" % b for b in a.gradrt)))
    for i, (op, layout, dtype, _) in enumerate(table):
        cells = []
        for b in a.gradrt:
            ratios = sorted(x / y for x, y in zip(ms[(b, i)], ms[(b, base_of[op])]))
            q = len(ratios)
            cells.append("%7.3f ms %5.2fx [%.2f..%.2f]" % (statistics.median(ms[(b, i)]), statistics.median(ratios),
                                                          ratios[q // 4], ratios[(3 * q) // 4]))
        print("%-22s %-5s %-9s | %s" % (op, layout, dtype, " | ".join("%-30s" % c for c in cells)))


if __name__ == "__main__":
    main()
