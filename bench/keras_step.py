"""A tf-keras training step (`train_on_batch`) with gradrt_tf against stock TensorFlow, oneDNN on in both.

    build-tf/venv/bin/python bench/keras_step.py [--threads=1,2] [--rounds=5] [--steps=5]
        [--models=small_cnn,mobilenet_v2,resnet,cnn_nchw,efficientnet_b0] [--configs=stock,gradrt]
        [--step=train_on_batch|fit] [--profile] [--profile-steps=10] [--out=FILE]

Configurations (each at every --threads value, TensorFlow's intra-op setting; inter-op 1):
  stock         TensorFlow 2.21 as installed: its default here, oneDNN on
  gradrt        the same, plus gradrt_tf.load(): gradrt's kernels serve the _MklNative* gradient forms
  eigen         oneDNN off (TF_ENABLE_ONEDNN_OPTS=0), TensorFlow's Eigen kernels (for reference)
  gradrt-eigen  oneDNN off plus gradrt_tf.load() (what gradrt_tf needed before)
  gradrt-pool   gradrt with GRADRT_TF_POOL=gradrt: gradrt's parallel loops on its own thread pool instead
                of TF's intra-op pool (the A/B of that choice)
  CONFIG@PATH   a gradrt configuration with another build of the kernel library (GRADRT_TF_LIBRARY=PATH),
                e.g. gradrt@/tmp/base.so against gradrt: an A/B of two builds in one run
  CONFIG+VAR=VALUE[+...]  a configuration with environment variables set (an A/B of env knobs, e.g.
                gradrt+GRADRT_MIN_THREAD_WORK_NS=100000); combines with @PATH (which comes last)
TensorFlow reads its oneDNN switch and thread counts once, so every (configuration, threads) pair is its own
worker process; all workers build the same seeded models (tf-keras, TF_USE_LEGACY_KERAS=1, Adam, sparse
cross-entropy) on the same batch. The coordinator interleaves: each round times every model in every
worker, the workers' order rotating, so outside load hits every configuration alike. A measurement is
`--steps` calls of train_on_batch after one warm-up call; reported are the median over rounds of each
round's median step (wall ms) and of the worker's CPU time per step (all its threads: TF's pools and
gradrt's). A gradrt worker checks gradrt_tf.kernel_calls() moved on every step (else it fails). A second table
splits each step's wall time into CPU + preempted + idle (per-thread schedstat; see sched_totals).

--step=fit: a step is model.fit's per-step train_function on one iterator that lives across steps, instead of
train_on_batch, which makes a new tf.data iterator per call: on this VM its wall time snaps to a grid of timer
wake-ups (~78, ~161, ~320 ms) whatever the kernels cost (NOTES, "Where a train_on_batch step waits").

--profile: one more pass with TensorFlow's profiler (tf.profiler.experimental) around `--profile-steps`
steps of every model in the workers of every --threads value; per TF op type, the time its kernels
took per step (each node's fastest op event of those steps, summed over the type's nodes: preemption
only lengthens events), the largest rows of any configuration. --rounds=0 skips the timed rounds. With two
or more --threads values, a table per model puts each gradrt node's time at the first and the last thread
count side by side for the first and the last configuration (which kernels scale worse than TF's).
"""
import argparse
import glob
import json
import os
import sys
import time

from bench_workers import Lines, add_common_arguments, geomean, median, start_workers

# name: (environment set before TensorFlow starts, load gradrt); TF_ENABLE_ONEDNN_OPTS unset: TF's default
CONFIGS = {"stock": ({}, False), "gradrt": ({}, True), "eigen": ({"TF_ENABLE_ONEDNN_OPTS": "0"}, False),
           "gradrt-eigen": ({"TF_ENABLE_ONEDNN_OPTS": "0"}, True), "gradrt-pool": ({"GRADRT_TF_POOL": "gradrt"}, True)}
# name: (batch, input shape (channels last), classes)
MODELS = {"small_cnn": (64, (32, 32, 3), 10), "mobilenet_v2": (32, (64, 64, 3), 10), "resnet": (32, (64, 64, 3), 10),
          "cnn_nchw": (64, (32, 32, 3), 10), "efficientnet_b0": (16, (64, 64, 3), 10)}


def config_of(name):
    """(environment, load gradrt) of a configuration name: CONFIG[+VAR=VALUE...][@PATH]."""
    head, _, lib = name.partition("@")
    base, *settings = head.split("+")
    env, use_gradrt = CONFIGS[base]
    env = {**env, **dict(s.split("=", 1) for s in settings)}
    return ({**env, "GRADRT_TF_LIBRARY": lib} if lib else env), use_gradrt


def cpu_name():
    """The model name, with the vector extensions oneDNN may use (the name alone can be generic)."""
    info = open("/proc/cpuinfo").read()
    name = next((l.split(":", 1)[1].strip() for l in info.splitlines() if l.startswith("model name")), "unknown CPU")
    flags = next((l.split(":", 1)[1].split() for l in info.splitlines() if l.startswith("flags")), [])
    wide = (("avx512f", "AVX-512"), ("avx512_bf16", "AVX512-BF16"), ("amx_tile", "AMX"))
    isa = [n for f, n in (wide if "avx512f" in flags else (("avx2", "AVX2"),)) if f in flags]
    return f"{name} ({', '.join(isa) or 'no AVX2'})"


def sched_totals():
    """{thread id: (ns on a CPU, ns runnable but waiting for one)} of this process's threads, from
    /proc/self/task/*/schedstat. Waiting = preempted by other processes (or by this one's own threads
    beyond the CPUs); a step's wall time less its CPU time and those waits is time no thread ran or
    waited: sleeping on a lock, a condition or a wake-up (exact while at most one thread is active at a
    time, as at 1 intra-op thread; a lower bound otherwise). A thread that ends within a step drops out."""
    out = {}
    for tid in os.listdir("/proc/self/task"):
        try:
            with open(f"/proc/self/task/{tid}/schedstat") as f:
                run, wait, _ = f.read().split()
        except (OSError, ValueError):
            continue  # the thread ended
        out[tid] = (int(run), int(wait))
    return out


# ------------------------------------------------------------------------------------------ models
def build(keras, name):
    L = keras.layers
    batch, shape, classes = MODELS[name]
    if name == "mobilenet_v2":
        return keras.applications.MobileNetV2(input_shape=shape, alpha=0.35, weights=None, classes=classes)
    if name == "efficientnet_b0":
        return keras.applications.EfficientNetB0(input_shape=shape, weights=None, classes=classes)
    if name in ("small_cnn", "cnn_nchw"):
        # The small CNN: conv, batch norm, depthwise, 1x1 and strided convs.
        fmt = "channels_first" if name == "cnn_nchw" else "channels_last"
        axis = 1 if name == "cnn_nchw" else -1
        inp = keras.Input(shape[2:] + shape[:2] if name == "cnn_nchw" else shape)
        y = inp
        for filters, stride in ((32, 1), (64, 2), (128, 2)):
            y = L.Conv2D(filters, 3, strides=stride, padding="same", use_bias=False, data_format=fmt)(y)
            y = L.BatchNormalization(axis=axis)(y)
            y = L.ReLU()(y)
            y = L.DepthwiseConv2D(3, padding="same", use_bias=False, data_format=fmt)(y)
            y = L.BatchNormalization(axis=axis)(y)
            y = L.ReLU()(y)
            y = L.Conv2D(filters, 1, padding="same", data_format=fmt)(y)
            y = L.ReLU()(y)
        y = L.GlobalAveragePooling2D(data_format=fmt)(y)
        return keras.Model(inp, L.Dense(classes)(y))
    if name == "resnet":
        # ResNet-18-style at 64x64: 7x7/2 stem, max pool, two basic blocks per stage, 1x1/2 shortcuts.
        inp = keras.Input(shape)
        y = L.Conv2D(32, 7, strides=2, padding="same", use_bias=False)(inp)
        y = L.ReLU()(L.BatchNormalization()(y))
        y = L.MaxPooling2D(3, strides=2, padding="same")(y)
        for filters, stride in ((32, 1), (64, 2), (128, 2), (256, 2)):
            for block in range(2):
                s = stride if block == 0 else 1
                shortcut = y
                if s != 1 or y.shape[-1] != filters:
                    shortcut = L.BatchNormalization()(L.Conv2D(filters, 1, strides=s, use_bias=False)(y))
                y = L.ReLU()(L.BatchNormalization()(L.Conv2D(filters, 3, strides=s, padding="same",
                                                             use_bias=False)(y)))
                y = L.BatchNormalization()(L.Conv2D(filters, 3, padding="same", use_bias=False)(y))
                y = L.ReLU()(L.Add()([y, shortcut]))
        y = L.GlobalAveragePooling2D()(y)
        return keras.Model(inp, L.Dense(classes)(y))
    raise ValueError(name)


# ------------------------------------------------------------------------------------------ profile
def node_times(logdir, steps):
    """{node:Type: ms per step} from the newest trace under logdir: the executor's op events
    ('node:Type'). A node runs once per step, so its time per step is the shortest of its `steps`
    events (preemption on a shared host only ever lengthens one); a type's time is its nodes' sum."""
    from tensorflow.python.framework import op_def_registry
    from tensorflow.tsl.profiler.protobuf import xplane_pb2
    files = sorted(glob.glob(os.path.join(logdir, "**", "*.xplane.pb"), recursive=True), key=os.path.getmtime)
    space = xplane_pb2.XSpace()
    space.ParseFromString(open(files[-1], "rb").read())
    nodes = {}  # node:Type -> its events' durations (ms)
    for plane in space.planes:
        names = {k: v.name for k, v in plane.event_metadata.items()}
        for line in plane.lines:
            for e in line.events:
                name = names.get(e.metadata_id, "")
                if ":" not in name or op_def_registry.get(name.rsplit(":", 1)[1]) is None:
                    continue  # the executor's and tf.data's own events (Run, Process, ...)
                nodes.setdefault(name, []).append(e.duration_ps / 1e9)
    # a node with more events than steps (one inside a loop) keeps its total per step
    return {name: min(ms) if len(ms) <= steps else sum(ms) / steps for name, ms in nodes.items()}


def by_type(node_ms):
    """{TF op type: ms} from {node:Type: ms}."""
    out = {}
    for name, ms in node_ms.items():
        kind = name.rsplit(":", 1)[1]
        out[kind] = out.get(kind, 0.0) + ms
    return out


# ------------------------------------------------------------------------------------------ worker
def worker(config, threads, step_kind):
    """Serves requests (JSON lines on stdin, answers on the original stdout)."""
    reply_stream = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)  # anything TensorFlow prints goes to stderr, not into the answers
    env, use_gradrt = config_of(config)
    os.environ.update(env)
    os.environ["TF_USE_LEGACY_KERAS"] = "1"
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    import numpy as np
    import tensorflow as tf
    import tf_keras as keras
    gradrt_tf = None
    tf.config.threading.set_intra_op_parallelism_threads(threads)
    tf.config.threading.set_inter_op_parallelism_threads(1)
    if use_gradrt:
        import gradrt_tf
        gradrt_tf.load()
    from tensorflow.python.util import _pywrap_util_port
    onednn_on = bool(_pywrap_util_port.IsMklEnabled())

    def reply(obj):
        reply_stream.write(json.dumps(obj) + "\n")
        reply_stream.flush()

    models = {}

    def prepare(name):
        batch, shape, classes = MODELS[name]
        keras.utils.set_random_seed(1)
        model = build(keras, name)
        model.compile(keras.optimizers.Adam(1e-3), keras.losses.SparseCategoricalCrossentropy(from_logits=True))
        rng = np.random.default_rng(7)
        x = rng.standard_normal((batch,) + shape).astype(np.float32)
        if name == "cnn_nchw":
            x = np.ascontiguousarray(x.transpose(0, 3, 1, 2))
        x, y = tf.constant(x), tf.constant(rng.integers(0, classes, batch).astype(np.int32))
        loss = float(model.train_on_batch(x, y))  # builds and traces the step
        if step_kind == "fit":  # model.fit's step: its train_function on an iterator that lives on
            iterator = iter(tf.data.Dataset.from_tensors((x, y)).repeat())
            train_function = model.make_train_function()
            step = lambda: train_function(iterator)  # noqa: E731
        else:
            step = lambda: model.train_on_batch(x, y)  # noqa: E731
        models[name] = (model, x, y, step)
        return loss

    def steps(name, n):
        """n steps; wall and CPU seconds of each, the seconds its threads waited in a run queue
        (preempted) and those no thread ran or waited (idle); gradrt's kernel calls of each."""
        model, x, y, step = models[name]
        walls, cpus, waits, idles, calls = [], [], [], [], []
        for _ in range(n):
            before = sum(gradrt_tf.kernel_calls().values()) if gradrt_tf else 0
            s0 = sched_totals()
            c0, t0 = time.process_time(), time.perf_counter()
            step()
            walls.append(time.perf_counter() - t0)
            cpus.append(time.process_time() - c0)
            s1 = sched_totals()
            waits.append(sum(w - s0.get(t, (0, 0))[1] for t, (_, w) in s1.items()) / 1e9)
            idles.append(max(0.0, walls[-1] - cpus[-1] - waits[-1]))
            calls.append(sum(gradrt_tf.kernel_calls().values()) - before if gradrt_tf else None)
        return walls, cpus, waits, idles, calls

    for line in sys.stdin:
        req = json.loads(line)
        if req["cmd"] == "hello":
            reply({"config": config, "threads": threads, "tf": tf.__version__, "onednn": onednn_on})
        elif req["cmd"] == "prepare":
            try:
                reply({"loss": prepare(req["model"])})
            except Exception as e:  # noqa: BLE001  (e.g. a layout this TF cannot run on CPU)
                reply({"error": f"{type(e).__name__}: {str(e).splitlines()[0][:200]}"})
        elif req["cmd"] == "time":
            steps(req["model"], 1)  # warm
            walls, cpus, waits, idles, calls = steps(req["model"], req["steps"])
            reply({"wall": median(walls), "cpu": median(cpus), "wait": median(waits), "idle": median(idles),
                   "calls": calls})
        elif req["cmd"] == "profile":
            logdir = f"/tmp/keras_step_profile_{os.getpid()}_{req['model']}"
            steps(req["model"], 1)
            tf.profiler.experimental.start(logdir)
            steps(req["model"], req["steps"])
            tf.profiler.experimental.stop()
            kinds = gradrt_tf.kernel_calls(forms=True) if gradrt_tf else {}
            nodes = node_times(logdir, req["steps"])
            layers = {l.name: f"{l.__class__.__name__} {tuple(l.input_shape)} -> {tuple(l.output_shape)}"
                      + (f" k{l.kernel_size} s{l.strides}" if hasattr(l, "kernel_size") else "")
                      for l in models[req["model"]][0].layers if not isinstance(l.input_shape, list)}
            reply({"ops": by_type(nodes), "nodes": nodes, "forms": kinds, "layers": layers})
        elif req["cmd"] == "quit":
            return


# ------------------------------------------------------------------------------------------ coordinator
def layer_of(profile, node):
    """The Keras layer (class, shapes) a node belongs to, from the first name scope that is a layer."""
    layers = profile["layers"]
    return layers.get(next((p for p in node.split(":")[0].split("/") if p in layers), ""), "")


def emit_profile(emit, per_config, configs, m, t, steps):
    """By TF op type, then gradrt's nodes furthest behind the first configuration, at t threads."""
    base, last = configs[0], configs[-1]
    emit()
    emit(f"### where a step's time goes: {m}, {t} thread(s), ms per step by TF op type "
         f"(profiler op events: each node's fastest of {steps} steps, summed by type)")
    per = {c: per_config[c]["ops"] for c in configs}
    kinds = sorted({k for c in configs for k in per[c]}, key=lambda k: -max(per[c].get(k, 0) for c in configs))
    emit("| op type | " + " | ".join(configs) + " |")
    emit("|---|" + "---|" * len(configs))
    for k in kinds[:14]:
        emit(f"| {k} | " + " | ".join(f"{per[c].get(k, 0):.2f}" for c in configs) + " |")
    emit("| all ops | " + " | ".join(f"{sum(per[c].values()):.2f}" for c in configs) + " |")
    served = {k for c in configs for k in per_config[c]["forms"]}
    nodes = {c: per_config[c]["nodes"] for c in configs}
    mine = [n for n in nodes[last] if n.rsplit(":", 1)[1] in served and n in nodes[base]]
    mine.sort(key=lambda n: nodes[base][n] - nodes[last][n])
    if len(configs) > 1 and mine:
        emit(f"{last}'s nodes furthest behind {base} (ms per step; layer: input -> output shape):")
        emit("| node | layer | " + " | ".join(configs) + f" | {base}/{last} |")
        emit("|---|---|" + "---|" * (len(configs) + 1))
        for n in mine[:8]:
            emit(f"| {n} | {layer_of(per_config[last], n)} | " + " | ".join(f"{nodes[c].get(n, 0):.2f}" for c in configs)
                 + f" | {nodes[base][n] / nodes[last][n]:.2f}x |")
    for c in configs:
        if per_config[c]["forms"]:
            emit(f"{c}: gradrt kernel calls by TF op (whole run): "
                 + ", ".join(f"{k} {v}" for k, v in sorted(per_config[c]["forms"].items())))


def emit_scaling(emit, profiles, configs, t1, t2, m):
    """Per node gradrt serves: its time at t1 and t2 threads in the first and the last configuration,
    each one's speedup t1 -> t2, sorted by how far the last configuration is behind the first at t2."""
    base, last = configs[0], configs[-1]
    if base == last:
        return
    nodes = {(c, t): profiles[c, t, m]["nodes"] for c in (base, last) for t in (t1, t2)}
    served = {k for t in (t1, t2) for k in profiles[last, t, m]["forms"]}
    mine = [n for n in nodes[last, t2] if n.rsplit(":", 1)[1] in served and all(n in v for v in nodes.values())]
    if not mine:
        return
    mine.sort(key=lambda n: nodes[base, t2][n] - nodes[last, t2][n])
    emit()
    emit(f"### {m}: gradrt's nodes at {t1} and {t2} threads (ms per step; speedup = {t1}-thread / {t2}-thread time; "
         f"sorted by {last}'s loss against {base} at {t2})")
    emit(f"| node | layer | {base} {t1}t | {base} {t2}t | {base} speedup | {last} {t1}t | {last} {t2}t | "
         f"{last} speedup | {base}/{last} at {t2}t |")
    emit("|---|---|---|---|---|---|---|---|---|")
    for n in mine[:12]:
        b1, b2, g1, g2 = nodes[base, t1][n], nodes[base, t2][n], nodes[last, t1][n], nodes[last, t2][n]
        emit(f"| {n} | {layer_of(profiles[last, t2, m], n)} | {b1:.2f} | {b2:.2f} | {b1 / b2:.2f}x | {g1:.2f} | "
             f"{g2:.2f} | {g1 / g2:.2f}x | {b2 / g2:.2f}x |")
    tot = {k: sum(v[n] for n in mine) for k, v in nodes.items()}
    emit(f"| all {len(mine)} gradrt nodes | | {tot[base, t1]:.2f} | {tot[base, t2]:.2f} | "
         f"{tot[base, t1] / tot[base, t2]:.2f}x | {tot[last, t1]:.2f} | {tot[last, t2]:.2f} | "
         f"{tot[last, t1] / tot[last, t2]:.2f}x | {tot[base, t2] / tot[last, t2]:.2f}x |")



def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_common_arguments(ap, __file__, "stock,gradrt")
    ap.add_argument("--steps", type=int, default=5, help="timed train_on_batch calls per measurement (median)")
    ap.add_argument("--models", default=",".join(MODELS))
    ap.add_argument("--step", choices=("train_on_batch", "fit"), default="train_on_batch",
                    help="what a step is: a train_on_batch call, or model.fit's step (its train_function "
                         "on one iterator over the batch repeated)")
    ap.add_argument("--profile", action="store_true")
    ap.add_argument("--profile-steps", type=int, default=10, help="profiled steps per model (each node's fastest counts)")
    args = ap.parse_args()
    if args.worker:
        return worker(args.worker[0], int(args.worker[1]), os.environ.get("KERAS_STEP_KIND", "train_on_batch"))

    os.environ["KERAS_STEP_KIND"] = args.step  # the workers inherit it
    thread_list = [int(t) for t in args.threads.split(",")]
    configs = args.configs.split(",")
    models = args.models.split(",")
    base = configs[0]
    lines = Lines()
    emit = lines.emit

    with open(args.log, "w") as log:
        workers = start_workers(__file__, configs, thread_list, log)
        try:
            hello = {k: w.ask(cmd="hello") for k, w in workers.items()}
            emit(f"tf-keras training step ({args.step}), TensorFlow {next(iter(hello.values()))['tf']}, {cpu_name()}, "
                 f"{os.cpu_count()} cpus, load average at the start {os.getloadavg()[0]:.2f}")
            emit("configs: " + "; ".join(f"{c} (oneDNN {'on' if hello[c, thread_list[0]]['onednn'] else 'off'}"
                                         f"{', gradrt_tf.load()' if config_of(c)[1] else ''})" for c in configs))
            emit("step: " + ("model.fit's per-step train_function on one live iterator" if args.step == "fit"
                             else "train_on_batch (a new tf.data iterator per call)"))
            emit(f"median of {args.steps} steps per round, median of {args.rounds} interleaved rounds; "
                 f"wall ms per step (CPU ms per step, all threads); ratio = {base} / config, > 1: faster than {base}")
            emit("where the wall time went, per step (ms): CPU (all threads) + preempted (threads runnable, waiting "
                 "for a CPU: other load) + idle (no thread running or runnable: sleeping, waking)")
            skipped = {}
            for m in models:
                for k, w in workers.items():
                    a = w.ask(cmd="prepare", model=m)
                    if "error" in a:
                        skipped.setdefault(m, []).append(f"{k[0]}: {a['error']}")
            live = [m for m in models if m not in skipped]
            wall = {k: {m: [] for m in live} for k in workers}
            cpu = {k: {m: [] for m in live} for k in workers}
            wait = {k: {m: [] for m in live} for k in workers}
            idle = {k: {m: [] for m in live} for k in workers}
            keys = list(workers)
            for r in range(args.rounds):
                for j, m in enumerate(live):
                    rot = (r + j) % len(keys)
                    for k in keys[rot:] + keys[:rot]:
                        a = workers[k].ask(cmd="time", model=m, steps=args.steps)
                        if config_of(k[0])[1] and not all(c > 0 for c in a["calls"]):
                            raise RuntimeError(f"{m} in {k}: a step ran no gradrt kernel ({a['calls']})")
                        wall[k][m].append(a["wall"])
                        cpu[k][m].append(a["cpu"])
                        wait[k][m].append(a["wait"])
                        idle[k][m].append(a["idle"])
                print(f"  round {r + 1}/{args.rounds} done", file=sys.stderr, flush=True)
            profiles = {}  # (config, threads, model) -> the worker's profile
            if args.profile:
                for t in thread_list:
                    for m in live:
                        for c in configs:
                            profiles[c, t, m] = workers[c, t].ask(cmd="profile", model=m, steps=args.profile_steps)
        finally:
            for w in workers.values():
                w.close()

    for t in thread_list if args.rounds > 0 else []:  # --rounds=0: the profile alone
        emit()
        emit(f"### {t} intra-op thread{'s' if t > 1 else ''}")
        others = configs[1:]
        emit("| model | batch | " + " | ".join(configs) + " | " + " | ".join(f"{base}/{c} wall (CPU)" for c in others)
             + " |")
        emit("|---|---|" + "---|" * (len(configs) + len(others)))
        ratios = {(c, kind): [] for c in others for kind in ("wall", "cpu")}
        for m in live:
            row = [f"{median(wall[c, t][m]) * 1e3:.1f} ({median(cpu[c, t][m]) * 1e3:.0f})" for c in configs]
            for c in others:
                ratios[c, "wall"].append(median(wall[base, t][m]) / median(wall[c, t][m]))
                ratios[c, "cpu"].append(median(cpu[base, t][m]) / median(cpu[c, t][m]))
            emit(f"| {m} | {MODELS[m][0]} | " + " | ".join(row) + " | "
                 + " | ".join(f"{ratios[c, 'wall'][-1]:.2f}x ({ratios[c, 'cpu'][-1]:.2f}x)" for c in others) + " |")
        if live:
            emit("| geomean | | " + " | ".join("" for _ in configs) + " | "
                 + " | ".join(f"{geomean(ratios[c, 'wall']):.2f}x ({geomean(ratios[c, 'cpu']):.2f}x)" for c in others)
                 + " |")
    for t in thread_list if args.rounds > 0 else []:
        emit()
        emit(f"### {t} intra-op thread{'s' if t > 1 else ''}: CPU + preempted + idle = wall, ms per step (medians)")
        emit("| model | " + " | ".join(configs) + " |")
        emit("|---|" + "---|" * len(configs))
        for m in live:
            emit(f"| {m} | " + " | ".join(f"{median(cpu[c, t][m]) * 1e3:.0f} + {median(wait[c, t][m]) * 1e3:.0f} + "
                                           f"{median(idle[c, t][m]) * 1e3:.0f} = {median(wall[c, t][m]) * 1e3:.0f}"
                                           for c in configs) + " |")
    for m, why in skipped.items():
        emit(f"skipped {m}: " + "; ".join(why))
    for t in thread_list if profiles else []:
        for m in live:
            emit_profile(emit, {c: profiles[c, t, m] for c in configs}, configs, m, t, args.profile_steps)
    if profiles and len(thread_list) > 1:
        for m in live:
            emit_scaling(emit, profiles, configs, thread_list[0], thread_list[-1], m)
    if args.out:
        with open(args.out, "w") as f:
            f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
