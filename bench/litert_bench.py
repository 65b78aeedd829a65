"""On-device training with LiteRT: library sizes, and a training step on LiteRT + gradrt against
TensorFlow's own tf.function step of the same SavedModel on this CPU.

    # models: litert/tests/models.py in a TF venv (larger shapes than the tests), e.g.
    build-tf/venv/bin/python litert/tests/models.py build-litert/bench-models --only mix,mobilenet \\
        --batch 16 --hw 32 --steps 1
    flock /tmp/gradrt-bench.lock python3 bench/litert_bench.py --models build-litert/bench-models \\
        --tf-python build-tf/venv/bin/python --litert-python build-litert/venv/bin/python \\
        --threads 1,2 --rounds 5 [--aarch64-lib build-litert/aarch64/run/libgradrt_litert.so]

Each side runs in its own process (TF never shares a process with gradrt_litert): per round and
thread count, `--side tf` and `--side litert` alternate, each timing `--reps` train steps after
warm-up (median ms per step); the table gives the median over rounds and the ratio TF / LiteRT+gradrt
(> 1: LiteRT + gradrt faster), for wall time and for process CPU time. Sizes: each library stripped (strip --strip-unneeded) into a temp file.
"""
import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def cpu_name():
    """The model name and the vector ISA flags that tell generations apart (the VM may hide the name)."""
    name, flags = platform.processor() or "unknown CPU", []
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            name = line.split(":", 1)[1].strip()
        elif line.startswith("flags") and not flags:
            have = set(line.split(":", 1)[1].split())
            flags = [f for f in ("avx2", "avx512f", "avx512_bf16", "avx512_fp16", "amx_tile") if f in have]
    return f"{name} ({' '.join(flags)})" if flags else name


def time_steps(step, reps):
    """{"ms": median wall ms, "cpu_ms": mean process CPU ms (every thread)} of `reps` calls of step()
    after 3 warm-up calls. On a shared, loaded machine the CPU time is the steadier figure."""
    for _ in range(3):
        step()
    times = []
    cpu = time.process_time()
    for _ in range(reps):
        t = time.perf_counter()
        step()
        times.append((time.perf_counter() - t) * 1e3)
    return {"ms": statistics.median(times), "cpu_ms": (time.process_time() - cpu) * 1e3 / reps}


def side_tf(model_dir, name, threads, reps):
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    import numpy as np
    import tensorflow as tf
    tf.config.threading.set_intra_op_parallelism_threads(threads)
    tf.config.threading.set_inter_op_parallelism_threads(1)
    ref = np.load(model_dir / f"{name}.npz")
    train = tf.saved_model.load(str(model_dir / f"{name}_saved")).signatures["train"]
    x, y = tf.constant(ref["x_0"]), tf.constant(ref["y_0"])
    return time_steps(lambda: train(x=x, y=y)["loss"].numpy(), reps)


def side_litert(model_dir, name, threads, reps):
    import numpy as np
    import gradrt_litert
    ref = np.load(model_dir / f"{name}.npz")
    cm = gradrt_litert.CompiledModel((model_dir / f"{name}.tflite").read_bytes(), threads=threads)
    x, y = ref["x_0"], ref["y_0"]
    return time_steps(lambda: cm.run("train", x=x, y=y)["loss"], reps)


def stripped_size(lib, strip="strip"):
    with tempfile.TemporaryDirectory() as d:
        out = Path(d) / "lib.so"
        subprocess.run([strip, "--strip-unneeded", "-o", str(out), str(lib)], check=True)
        return out.stat().st_size


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--side", choices=["tf", "litert"])
    ap.add_argument("--models", default="build-litert/bench-models")
    ap.add_argument("--names", default="mix,mobilenet")
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--reps", type=int, default=30)
    ap.add_argument("--tf-python", default="build-tf/venv/bin/python")
    ap.add_argument("--litert-python", default="build-litert/venv/bin/python")
    ap.add_argument("--aarch64-lib", default="build-litert/aarch64/run/libgradrt_litert.so")
    a = ap.parse_args()
    models = Path(a.models)
    if a.side:  # one measurement in this process: prints the median ms
        fn = side_tf if a.side == "tf" else side_litert
        print(json.dumps(fn(models, a.names, int(a.threads), a.reps)))
        return 0

    print(f"# CPU: {cpu_name()}, {os.cpu_count()} logical cores; {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}")
    print("\n## libgradrt_litert.so, stripped (strip --strip-unneeded)\n")
    print("| arch | bytes | MB |\n|---|---|---|")
    code = (f"import gradrt_litert, pathlib; print(pathlib.Path(gradrt_litert.__file__).with_name("
            f"'libgradrt_litert.so'))")
    x86 = subprocess.run([a.litert_python, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    for arch, lib, strip in (("x86-64", x86, "strip"), ("aarch64", a.aarch64_lib, "aarch64-linux-gnu-strip")):
        if Path(lib).exists() and shutil.which(strip):
            n = stripped_size(lib, strip)
            print(f"| {arch} | {n} | {n / 1e6:.2f} |")
        else:
            print(f"| {arch} | (not built: {lib}) | |")

    print(f"\n## train step, ms (wall: median of {a.reps} steps per process; CPU: process CPU time per step, "
          f"all threads; each the median over {a.rounds} alternating rounds)\n")
    print("| model | threads | TF wall | LiteRT+gradrt wall | ratio | TF CPU | LiteRT+gradrt CPU | ratio |\n"
          "|---|---|---|---|---|---|---|---|")
    me = str(Path(__file__).resolve())
    for name in a.names.split(","):
        for threads in (int(t) for t in a.threads.split(",")):
            got = {"tf": [], "litert": []}
            for r in range(a.rounds):
                order = ("tf", "litert") if r % 2 == 0 else ("litert", "tf")
                for side in order:
                    py = a.tf_python if side == "tf" else a.litert_python
                    out = subprocess.run([py, me, "--side", side, "--models", str(models), "--names", name,
                                          "--threads", str(threads), "--reps", str(a.reps)],
                                         capture_output=True, text=True)
                    if out.returncode != 0:
                        sys.exit(f"{side} {name} failed:\n{out.stderr[-3000:]}")
                    got[side].append(json.loads(out.stdout.strip().splitlines()[-1]))
            row = [name, str(threads)]
            for key in ("ms", "cpu_ms"):
                t, g = (statistics.median(r[key] for r in got[s]) for s in ("tf", "litert"))
                row += [f"{t:.2f}", f"{g:.2f}", f"{t / g:.2f}"]
            print("| " + " | ".join(row) + " |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
