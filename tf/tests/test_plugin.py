"""gradrt_tf's contract: load() is idempotent and serves TF with oneDNN on or off, kernel_calls()
counts, every path (eager, tf.function, GradientTape) reaches gradrt, errors are TF's classes with
gradrt's message, TF's intra-op setting is the thread count."""
import os
import subprocess
import sys

import numpy as np
import pytest
import tensorflow as tf

import gradrt_tf

HERE = os.path.dirname(os.path.abspath(__file__))


def test_load_is_idempotent_and_counts():
    gradrt_tf.load()
    gradrt_tf.load()
    gradrt_tf.reset_kernel_calls()
    x = tf.random.stateless_normal([2, 5, 5, 3], seed=[1, 2])
    dy = tf.random.stateless_normal([2, 5, 5, 4], seed=[3, 4])
    for _ in range(3):
        tf.raw_ops.Conv2DBackpropFilter(input=x, filter_sizes=[3, 3, 3, 4], out_backprop=dy, strides=[1, 1, 1, 1],
                                        padding="SAME")
    assert gradrt_tf.kernel_calls() == {"Conv2DBackpropFilter": 3}


def test_tape_and_tf_function_run_in_gradrt():
    gradrt_tf.reset_kernel_calls()
    x = tf.random.stateless_normal([2, 6, 6, 3], seed=[5, 6])
    w = tf.Variable(tf.random.stateless_normal([3, 3, 3, 4], seed=[7, 8]))
    dw_ = tf.Variable(tf.random.stateless_normal([3, 3, 4, 2], seed=[9, 1]))
    scale, offset = tf.Variable(tf.ones([8])), tf.Variable(tf.zeros([8]))

    @tf.function
    def step(x):
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = tf.nn.conv2d(x, w, strides=2, padding="SAME")
            y = tf.nn.depthwise_conv2d(y, dw_, strides=[1, 1, 1, 1], padding="SAME")
            y, _, _ = tf.compat.v1.nn.fused_batch_norm(y, scale, offset, is_training=True)
            y, rows, cols = tf.nn.fractional_avg_pool(y, [1.0, 1.4, 1.4, 1.0], seed=1)
            loss = tf.reduce_sum(y * y)
        return tape.gradient(loss, [x, w, dw_, scale, offset])

    grads = step(x)
    assert all(g is not None for g in grads)
    calls = gradrt_tf.kernel_calls()
    forward = ("Conv2D", "DepthwiseConv2dNative", "FusedBatchNormV3")  # oneDNN's when it is on
    for op in ("Conv2D", "Conv2DBackpropInput", "Conv2DBackpropFilter", "DepthwiseConv2dNative",
               "DepthwiseConv2dNativeBackpropInput", "DepthwiseConv2dNativeBackpropFilter", "FusedBatchNormV3",
               "FusedBatchNormGradV3", "FractionalAvgPool", "FractionalAvgPoolGrad"):
        if gradrt_tf.onednn_enabled() and op in forward:
            continue
        assert calls.get(op, 0) >= 1, f"{op} did not run in gradrt: {calls}"


def test_errors_are_tf_classes_with_gradrt_messages():
    x = tf.zeros([1, 4, 4, 1])
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"Conv2DBackpropInput: strides\[1\] must be > 0"):
        tf.raw_ops.Conv2DBackpropInput(input_sizes=[1, 4, 4, 1], filter=tf.zeros([1, 1, 1, 1]), out_backprop=x,
                                       strides=[1, 0, 1, 1], padding="SAME")
    with pytest.raises(tf.errors.InvalidArgumentError, match="DepthwiseConv2dNativeBackpropFilter"):
        tf.raw_ops.DepthwiseConv2dNativeBackpropFilter(input=x, filter_sizes=[1, 1, 2, 1], out_backprop=x,
                                                       strides=[1, 1, 1, 1], padding="VALID")


def test_intra_op_threads_reach_gradrt_and_do_not_change_bits():
    # The thread count gradrt receives is TF's intra-op setting; gradrt's results do not depend on it
    # (deterministic chunking), so 1 and 2 threads must give the same bits. Run in fresh processes:
    # TF fixes its thread pools at start-up.
    outs = []
    for threads in (1, 2):
        code = (f"import gradrt_tf, tensorflow as tf, numpy as np, sys\n"
                f"tf.config.threading.set_intra_op_parallelism_threads({threads})\n"
                f"gradrt_tf.load()\n"
                f"x = tf.random.stateless_normal([4, 32, 32, 16], seed=[1, 2])\n"
                f"dy = tf.random.stateless_normal([4, 32, 32, 32], seed=[3, 4])\n"
                f"r = tf.raw_ops.Conv2DBackpropFilter(input=x, filter_sizes=[3, 3, 16, 32], out_backprop=dy,"
                f" strides=[1, 1, 1, 1], padding='SAME')\n"
                f"print(gradrt_tf._threads_used()); sys.stdout.flush()\n"
                f"np.save(sys.argv[1], r.numpy())\n")
        path = os.path.join(os.environ.get("TMPDIR", "/tmp"), f"gradrt_tf_threads_{os.getpid()}_{threads}.npy")
        r = subprocess.run([sys.executable, "-c", code, path], capture_output=True, text=True, timeout=120)
        assert r.returncode == 0, r.stderr[-2000:]
        assert int(r.stdout.split()[-1]) == threads
        outs.append(np.load(path))
        os.remove(path)
    np.testing.assert_array_equal(outs[0], outs[1])


def test_two_threads_many_calls_from_concurrent_callers_match_tf():
    # gradrt's parallel loops on TF's intra-op pool (2 threads), entered from two inter-op threads at
    # once: many short calls, each result against TF's own kernel computed before load(). Both ways of
    # splitting a call's workers over the pool (GRADRT_TF_SPLIT: the caller runs worker 0, or every
    # worker on a pool thread while the caller sleeps) give TF's results, and the same bits.
    code = ("import gradrt_tf, tensorflow as tf, numpy as np, sys, threading, hashlib\n"
            "tf.config.threading.set_intra_op_parallelism_threads(2)\n"
            "tf.config.threading.set_inter_op_parallelism_threads(2)\n"
            "x = tf.random.stateless_normal([2, 24, 24, 16], seed=[1, 2])\n"
            "dy = tf.random.stateless_normal([2, 24, 24, 32], seed=[3, 4])\n"
            "w = tf.random.stateless_normal([3, 3, 16, 32], seed=[5, 6])\n"
            "def ops(x, dy, w):\n"
            "    return (tf.raw_ops.Conv2DBackpropFilter(input=x, filter_sizes=[3, 3, 16, 32], out_backprop=dy,"
            " strides=[1, 1, 1, 1], padding='SAME'),\n"
            "            tf.raw_ops.Conv2DBackpropInput(input_sizes=[2, 24, 24, 16], filter=w, out_backprop=dy,"
            " strides=[1, 1, 1, 1], padding='SAME'))\n"
            "want = [t.numpy() for t in ops(x, dy, w)]\n"
            "gradrt_tf.load()\n"
            "f = tf.function(ops)\n"
            "bad = []\n"
            "digests = set()\n"
            "def loop():\n"
            "    for i in range(60):\n"
            "        got = f(x, dy, w) if i % 2 else ops(x, dy, w)\n"
            "        digests.add(hashlib.sha256(b''.join(g.numpy().tobytes() for g in got)).hexdigest())\n"
            "        for g, e in zip(got, want):\n"
            "            if not np.allclose(g.numpy(), e, rtol=1e-4, atol=1e-3): bad.append(i)\n"
            "ts = [threading.Thread(target=loop) for _ in range(2)]\n"
            "[t.start() for t in ts]; [t.join() for t in ts]\n"
            "print(gradrt_tf._threads_used(), len(bad), sum(gradrt_tf.kernel_calls().values()), len(digests),"
            " min(digests))\n")
    digest = {}
    for split in ("caller", "pool"):
        r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300,
                           env={**os.environ, "GRADRT_TF_SPLIT": split})
        assert r.returncode == 0, r.stderr[-2000:]
        threads, bad, calls, distinct = map(int, r.stdout.split()[-5:-1])
        assert (threads, bad, distinct) == (2, 0, 1), split
        assert calls >= 2 * 60 * 2
        digest[split] = r.stdout.split()[-1]
    assert digest["caller"] == digest["pool"]


def test_a_node_keeps_plans_per_shape_and_shape_values():
    # gradrt_tf keeps prepared plans per kernel (graph node), keyed by the input shapes and the values of
    # shape inputs: one traced node runs six signatures twice (more than the plans it keeps), two of
    # them with the same tensor shapes and other input_sizes (1x1 VALID stride 2: rows 5 and 6 both
    # give 3 output rows), then concurrently (a second call of a busy node goes through run_op).
    # Reference: the 1x1 gradients as float64 sums.
    @tf.function(input_signature=[tf.TensorSpec([4], tf.int32), tf.TensorSpec([1, 1, None, None]),
                                  tf.TensorSpec([None, None, None, None])])
    def grads(sizes, w, dy):
        dx = tf.raw_ops.Conv2DBackpropInput(input_sizes=sizes, filter=w, out_backprop=dy, strides=[1, 2, 2, 1],
                                            padding="VALID")
        x = tf.ones_like(dx) * tf.reshape(tf.range(tf.size(dx), dtype=tf.float32) % 7.0 - 3.0, tf.shape(dx))
        dw = tf.raw_ops.Conv2DBackpropFilter(input=x, filter_sizes=tf.shape(w), out_backprop=dy,
                                             strides=[1, 2, 2, 1], padding="VALID")
        return x, dx, dw

    def check(n, h, ci, co):
        rng = np.random.default_rng(n * 100 + h * 10 + ci)
        oh = (h - 1) // 2 + 1
        w = rng.standard_normal((1, 1, ci, co)).astype(np.float32)
        dy = rng.standard_normal((n, oh, oh, co)).astype(np.float32)
        x, dx, dw = (t.numpy().astype(np.float64) for t in grads(tf.constant([n, h, h, ci]), w, dy))
        want_dx = np.zeros((n, h, h, ci))
        want_dx[:, ::2, ::2, :] = np.einsum("nhwo,io->nhwi", dy.astype(np.float64), w[0, 0].astype(np.float64))
        want_dw = np.einsum("nhwi,nhwo->io", x[:, ::2, ::2, :], dy.astype(np.float64))[None, None]
        np.testing.assert_allclose(dx, want_dx, rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(dw, want_dw, rtol=1e-5, atol=1e-4)

    gradrt_tf.reset_kernel_calls()
    signatures = [(1, 5, 3, 4), (1, 6, 3, 4), (2, 7, 2, 5), (3, 4, 4, 2), (1, 9, 1, 3), (2, 5, 3, 4)]
    for _ in range(2):
        for sig in signatures:
            check(*sig)
    import concurrent.futures
    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        list(pool.map(lambda sig: check(*sig), signatures * 3))
    calls = gradrt_tf.kernel_calls()
    assert calls.get("Conv2DBackpropInput", 0) == 30 and calls.get("Conv2DBackpropFilter", 0) == 30, calls


def _python(code, onednn):
    env = dict(os.environ, TF_ENABLE_ONEDNN_OPTS=onednn, TF_CPP_MIN_LOG_LEVEL="2")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=180)
    assert r.returncode == 0, r.stderr[-2000:]
    return r.stdout


def test_load_serves_both_onednn_modes_and_any_import_order():
    # tensorflow imported first, either oneDNN setting: load()'s probes (eager and tf.function) reach
    # gradrt, as the _MklNative form when oneDNN is on.
    code = ("import tensorflow as tf, gradrt_tf\n"
            "gradrt_tf.load()\n"
            "x = tf.ones([1, 3, 3, 2])\n"
            "tf.raw_ops.Conv2DBackpropFilter(input=x, filter_sizes=[1, 1, 2, 2], out_backprop=x,"
            " strides=[1, 1, 1, 1], padding='VALID')\n"
            "print(gradrt_tf.onednn_enabled(), sorted(gradrt_tf.kernel_calls(forms=True).items()),"
            " sorted(gradrt_tf.kernel_calls().items()))\n")
    assert _python(code, "1").split("\n")[0] == (
        "True [('_MklNativeConv2DBackpropFilter', 1)] [('Conv2DBackpropFilter', 1)]")
    assert _python(code, "0").split("\n")[0] == "False [('Conv2DBackpropFilter', 1)] [('Conv2DBackpropFilter', 1)]"


def test_import_leaves_onednn_setting_alone():
    env = {k: v for k, v in os.environ.items() if k != "TF_ENABLE_ONEDNN_OPTS"}
    r = subprocess.run([sys.executable, "-c", "import os, gradrt_tf; print(os.environ.get('TF_ENABLE_ONEDNN_OPTS'))"],
                       capture_output=True, text=True, env=env, timeout=60)
    assert r.stdout.strip() == "None"
