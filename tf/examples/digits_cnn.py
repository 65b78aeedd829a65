"""The example CNN shared by train_cnn.py and multi_worker_cnn.py: data, model, seeded fit.

Call import_tensorflow() before anything else touches TensorFlow: the environment it sets
(tf-keras, oneDNN off) is read once, at `import tensorflow`.
"""
import gzip
import os

import numpy as np

DIGITS_CSV = "/usr/lib/python3/dist-packages/sklearn/datasets/data/digits.csv.gz"  # Debian's python3-sklearn
SEED = 1234
# Every gradient op gradrt has that this model's training step runs (float32: fused batch norm).
GRADIENT_OPS = ("Conv2DBackpropInput", "Conv2DBackpropFilter", "DepthwiseConv2dNativeBackpropInput",
                "DepthwiseConv2dNativeBackpropFilter", "FusedBatchNormGradV3", "FractionalAvgPoolGrad")
# Its forward ops that gradrt has. Grappler's remapper fuses the stride-2 Conv2D + BiasAdd + ReLU into
# _FusedConv2D, which is TensorFlow's kernel: only the first Conv2D's forward runs in gradrt.
FORWARD_OPS = ("Conv2D", "DepthwiseConv2dNative", "FusedBatchNormV3", "FractionalAvgPool")


def import_tensorflow(kernels, threads=1):
    """Imports TensorFlow for `kernels` = 'gradrt' (gradrt_tf imported first) or 'tf' (TF's own Eigen kernels).

    Both use tf-keras (Keras 3 has no fused batch norm and fails under MultiWorkerMirroredStrategy) and
    oneDNN off (its graph rewrite would hide gradrt's kernels; off in both runs so that they differ in the
    gradient kernels only). Returns (tf, gradrt_tf or None); the caller then calls gradrt_tf.load(),
    after anything that must precede TensorFlow's first op (load() runs one: a probe for oneDNN),
    such as creating a MultiWorkerMirroredStrategy.
    """
    os.environ["TF_USE_LEGACY_KERAS"] = "1"
    os.environ["TF_ENABLE_ONEDNN_OPTS"] = "0"
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    gradrt_tf = None
    if kernels == "gradrt":
        import gradrt_tf  # before tensorflow, as the package asks
    elif kernels != "tf":
        raise ValueError(f"kernels must be 'gradrt' or 'tf', got {kernels!r}")
    import tensorflow as tf
    tf.config.threading.set_intra_op_parallelism_threads(threads)
    tf.config.threading.set_inter_op_parallelism_threads(1)
    return tf, gradrt_tf


def load_digits():
    """The 1797 8x8 sklearn digits as ([N, 8, 8, 1] in [0, 1], labels), in a fixed shuffled order."""
    with gzip.open(DIGITS_CSV, "rt") as f:
        rows = np.loadtxt(f, delimiter=",", dtype=np.float64)
    x = (rows[:, :64] / 16.0).reshape(-1, 8, 8, 1)
    y = rows[:, 64].astype(np.int64)
    order = np.random.default_rng(SEED).permutation(len(y))
    return x[order], y[order]


def build_model(dtype="float32"):
    """Conv2D -> fused BN -> DepthwiseConv2D -> fused BN -> fractional avg pool -> strided Conv2D -> Dense.

    In float64 tf-keras computes batch norm without the fused op (it fuses float16/bfloat16/float32 only).
    """
    import tensorflow as tf
    keras = tf.keras
    keras.backend.set_floatx(dtype)

    @tf.custom_gradient
    def fractional_pool(x):
        # seed != 0: deterministic=True, the same (global seed, SEED) pooling regions on every call.
        y, rows, cols = tf.nn.fractional_avg_pool(x, [1.0, 1.44, 1.44, 1.0], pseudo_random=True, seed=SEED)

        # TF's registered gradient passes x's static shape as orig_input_tensor_shape and fails
        # when the batch size is unknown (None) at trace time, as in model.fit; same op, run-time shape.
        def grad(dy):
            return tf.raw_ops.FractionalAvgPoolGrad(orig_input_tensor_shape=tf.shape(x, out_type=tf.int64),
                                                    out_backprop=dy, row_pooling_sequence=rows,
                                                    col_pooling_sequence=cols, overlapping=False)

        return y, grad

    layers = keras.layers
    model = keras.Sequential([
        keras.Input((8, 8, 1), dtype=dtype),
        layers.Conv2D(16, 3, padding="same", use_bias=False),
        layers.BatchNormalization(momentum=0.9),
        layers.ReLU(),
        layers.DepthwiseConv2D(3, padding="same", use_bias=False),
        layers.BatchNormalization(momentum=0.9),
        layers.ReLU(),
        layers.Lambda(fractional_pool, name="fractional_avg_pool"),  # 8x8 -> 5x5
        layers.Conv2D(32, 3, strides=2, padding="same", activation="relu"),  # 5x5 -> 3x3
        layers.GlobalAveragePooling2D(),
        layers.Dense(10),
    ])
    set_seeded_weights(model)
    return model


def set_seeded_weights(model):
    """Initial weights from numpy's seeded generator, so float32 and float64 runs (and every worker)
    start from the same values: Keras' initializers draw different numbers per dtype."""
    rng = np.random.default_rng(SEED)
    values = []
    for w in model.weights:
        name, shape = w.name, tuple(w.shape)
        if "gamma" in name or "moving_variance" in name:
            v = np.ones(shape)
        elif "beta" in name or "bias" in name or "moving_mean" in name:
            v = np.zeros(shape)
        else:  # kernels: Glorot-style uniform, fans over the receptive field
            receptive = int(np.prod(shape[:-2])) if len(shape) > 2 else 1
            limit = np.sqrt(6.0 / (receptive * (shape[-2] + shape[-1])))
            v = rng.uniform(-limit, limit, shape)
        values.append(v.astype(w.dtype.as_numpy_dtype))
    model.set_weights(values)


def compile_model(model):
    import tensorflow as tf
    keras = tf.keras
    # SGD with momentum: a parameter's change is proportional to its gradient, so float32 rounding
    # differences in the gradients stay small (Adam's early steps are ~lr * sign(g) and would flip
    # whole steps on near-zero gradient components).
    model.compile(optimizer=keras.optimizers.SGD(learning_rate=0.02, momentum=0.9),
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))


def loss_recorder(losses):
    """A Keras callback appending logs['loss'] (the epoch's running mean) after every step to `losses`."""
    import tensorflow as tf
    return tf.keras.callbacks.LambdaCallback(on_train_batch_end=lambda batch, logs: losses.append(float(logs["loss"])))
