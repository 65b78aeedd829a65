"""Seeded random cases: every gradrt op x attribute x dtype that TF's CPU kernels accept, plus the
cases TF refuses and gradrt takes (reached through a TF-computable equivalent, named in the id).
Small shapes: thousands of cases run in about a minute."""
import itertools
import random

import numpy as np

from tfops import Case

CONV_DTYPES = ("float32", "float64", "float16", "bfloat16")
BN_DTYPES = ("float32", "float16", "bfloat16")
POOL_DTYPES = ("float32", "float64", "int32", "int64")


def _rand(rng, shape):
    return np.asarray(rng.uniform(-1, 1, size=shape), np.float64)


def _conv_geometry(rng, strides, padding, fh, fw, dil=(1, 1), depthwise=False, groups=1):
    """Input and output shapes for a conv with these attributes (TF's output-size rules)."""
    n = rng.randint(1, 2)
    h, w = rng.randint(max(fh, 3), 7), rng.randint(max(fw, 3), 7)
    cin = rng.randint(1, 3) * groups
    cout = rng.randint(1, 3) * groups if not depthwise else None
    eh, ew = (fh - 1) * dil[0] + 1, (fw - 1) * dil[1] + 1
    pads = [0, 0, 0, 0]
    if padding == "EXPLICIT":
        pads = [rng.randint(0, 2) for _ in range(4)]
    sh, sw = strides
    if padding == "SAME":
        oh, ow = -(-h // sh), -(-w // sw)
    else:
        oh = (h + pads[0] + pads[1] - eh) // sh + 1
        ow = (w + pads[2] + pads[3] - ew) // sw + 1
    return n, h, w, cin, cout, oh, ow, pads


def conv_cases(seed=1):
    """Conv2D, Conv2DBackpropInput/Filter (+V2), DepthwiseConv2dNative (+BackpropInput/Filter)."""
    rng = random.Random(seed)
    nrng = np.random.default_rng(seed)
    out = []
    stride_set = [(1, 1), (2, 2), (1, 2), (3, 3)]
    filters = [(1, 1), (3, 3), (3, 2)]
    for kind in ("conv", "depthwise"):
        for (sh, sw), (fh, fw), padding in itertools.product(stride_set, filters, ("SAME", "VALID", "EXPLICIT")):
            for fmt, dil, groups in (("NHWC", (1, 1), 1), ("NCHW", (1, 1), 1), ("NHWC", (2, 1), 1),
                                     ("NHWC", (1, 1), 2)):
                if kind == "depthwise" and groups > 1:
                    continue
                # TF's own kernels: NHWC, dilation 1, no groups, equal depthwise strides.
                for dtype in CONV_DTYPES:
                    geo = _conv_geometry(rng, (sh, sw), padding, fh, fw, dil, kind == "depthwise", groups)
                    n, h, w, cin, cout, oh, ow, pads = geo
                    if oh <= 0 or ow <= 0:
                        continue
                    if kind == "depthwise":
                        m = rng.randint(1, 2)
                        wshape, cout = (fh, fw, cin, m), cin * m
                    else:
                        wshape = (fh, fw, cin // groups, cout)
                    x, wt, dy = _rand(nrng, (n, h, w, cin)), _rand(nrng, wshape), _rand(nrng, (n, oh, ow, cout))
                    attrs = {"strides": [1, sh, sw, 1], "padding": padding, "data_format": "NHWC",
                             "dilations": [1, dil[0], dil[1], 1]}
                    if padding == "EXPLICIT":
                        attrs["explicit_paddings"] = [0, 0, pads[0], pads[1], pads[2], pads[3], 0, 0]
                    out += _conv_family(kind, x, wt, dy, attrs, dtype, fmt, groups)
    return out


def _conv_family(kind, x, wt, dy, attrs, dtype, fmt, groups):
    from tfops import _nchw
    if fmt == "NCHW":
        x, dy = _nchw(x), _nchw(dy)
        p = attrs.get("explicit_paddings")
        attrs = dict(attrs, data_format="NCHW", strides=[1, 1] + attrs["strides"][1:3],
                     dilations=[1, 1] + attrs["dilations"][1:3])
        if p:
            attrs["explicit_paddings"] = p[0:2] + p[6:8] + p[2:6]
    via = []
    if fmt == "NCHW":
        via.append("nhwc transpose")
    dilated = (attrs["dilations"][1:3] if fmt == "NHWC" else attrs["dilations"][2:4]) != [1, 1]
    strides = attrs["strides"][1:3] if fmt == "NHWC" else attrs["strides"][2:4]
    if kind == "depthwise" and (dilated or strides[0] != strides[1]):
        via += ["depthwise as grouped", "per-group split"]
    if groups > 1:
        via.append("per-group split")
    if dilated:
        via.append("zero-inserted filter")
    T, I = "T", "i32"
    if kind == "conv":
        conv_attrs = dict(attrs, use_cudnn_on_gpu=True)
        ops = [Case("Conv2D", {"input": x, "filter": wt}, {"input": T, "filter": T}, conv_attrs, dtype),
               Case("Conv2DBackpropInput", {"input_sizes": np.array(x.shape), "filter": wt, "out_backprop": dy},
                    {"input_sizes": I, "filter": T, "out_backprop": T}, conv_attrs, dtype),
               Case("Conv2DBackpropFilter", {"input": x, "filter_sizes": np.array(wt.shape), "out_backprop": dy},
                    {"input": T, "filter_sizes": I, "out_backprop": T}, conv_attrs, dtype),
               Case("Conv2DBackpropInputV2", {"input": x, "filter": wt, "out_backprop": dy},
                    {"input": T, "filter": T, "out_backprop": T}, conv_attrs, dtype, ["V1 op"]),
               Case("Conv2DBackpropFilterV2", {"input": x, "filter": wt, "out_backprop": dy},
                    {"input": T, "filter": T, "out_backprop": T}, conv_attrs, dtype, ["V1 op"])]
    else:
        ops = [Case("DepthwiseConv2dNative", {"input": x, "filter": wt}, {"input": T, "filter": T}, attrs, dtype),
               Case("DepthwiseConv2dNativeBackpropInput",
                    {"input_sizes": np.array(x.shape), "filter": wt, "out_backprop": dy},
                    {"input_sizes": I, "filter": T, "out_backprop": T}, attrs, dtype),
               Case("DepthwiseConv2dNativeBackpropFilter",
                    {"input": x, "filter_sizes": np.array(wt.shape), "out_backprop": dy},
                    {"input": T, "filter_sizes": I, "out_backprop": T}, attrs, dtype)]
    for c in ops:
        c.via = tuple(c.via) + tuple(via)
    return ops


def batch_norm_cases(seed=2):
    rng = np.random.default_rng(seed)
    out = []
    for op in ("FusedBatchNormGrad", "FusedBatchNormGradV2", "FusedBatchNormGradV3",
               "FusedBatchNorm", "FusedBatchNormV2", "FusedBatchNormV3"):
        for dtype, is_training, fmt, eps, shape in itertools.product(
                BN_DTYPES, (True, False), ("NHWC", "NCHW"), (1e-3, 0.1),
                ((1, 1, 1, 1), (2, 3, 3, 2), (1, 4, 5, 3), (3, 2, 2, 5))):
            if op in ("FusedBatchNormGrad", "FusedBatchNorm") and dtype != "float32":
                continue  # the V1 ops define T = float only
            c = shape[3]
            x = rng.uniform(-2, 2, shape) + rng.uniform(-1, 1, (c,))
            if fmt == "NCHW":
                x = np.transpose(x, (0, 3, 1, 2))
            scale, offset = rng.uniform(0.5, 1.5, c), rng.uniform(-1, 1, c)
            mean, var = rng.uniform(-0.5, 0.5, c), rng.uniform(0.2, 2, c)
            attrs = {"epsilon": eps, "data_format": fmt, "is_training": is_training}
            if op.startswith("FusedBatchNormGrad"):
                if is_training:  # TF's CPU meaning: batch mean and biased batch variance
                    xs = np.transpose(x, (0, 2, 3, 1)) if fmt == "NCHW" else x
                    mean, var = xs.mean((0, 1, 2)), xs.var((0, 1, 2))
                ins = {"y_backprop": rng.uniform(-1, 1, x.shape), "x": x, "scale": scale,
                       "reserve_space_1": mean, "reserve_space_2": var}
                kinds = {"y_backprop": "T", "x": "T", "scale": "U", "reserve_space_1": "U", "reserve_space_2": "U"}
                if op == "FusedBatchNormGradV3":
                    ins["reserve_space_3"] = np.zeros([0])
                    kinds["reserve_space_3"] = "U"
                # TF's CPU grad refuses NCHW in inference mode ("only support NHWC").
                via = ["nhwc transpose"] if fmt == "NCHW" and not is_training else []
                out.append(Case(op, ins, kinds, attrs, dtype, via))
            else:
                for factor in ((1.0, 0.3) if is_training else (1.0,)):
                    if op == "FusedBatchNorm" and factor != 1.0:
                        continue
                    a = dict(attrs, exponential_avg_factor=factor)
                    # Training with factor 1 reads no statistics: empty ones, as Keras passes them.
                    ins = {"x": x, "scale": scale, "offset": offset,
                           "mean": mean if (not is_training or factor != 1.0) else np.zeros([0]),
                           "variance": var if (not is_training or factor != 1.0) else np.zeros([0])}
                    kinds = {"x": "T", "scale": "U", "offset": "U", "mean": "U", "variance": "U"}
                    out.append(Case(op, ins, kinds, a, dtype))
    return out


def _sequence(rng, size, out):
    """A valid pooling sequence: 0 = s0 < s1 < ... < s_out = size."""
    cuts = sorted(rng.sample(range(1, size), out - 1)) if out > 1 else []
    return np.array([0] + cuts + [size])


def pool_cases(seed=3):
    rng = random.Random(seed)
    nrng = np.random.default_rng(seed)
    out = []
    for dtype, overlapping in itertools.product(POOL_DTYPES, (False, True)):
        for _ in range(12):
            n, h, w, c = rng.randint(1, 2), rng.randint(2, 8), rng.randint(2, 8), rng.randint(1, 3)
            oh, ow = rng.randint(1, h - 1) if h > 2 else 1, rng.randint(1, w - 1) if w > 2 else 1
            rows, cols = _sequence(rng, h, oh), _sequence(rng, w, ow)
            dy = nrng.uniform(-1, 1, (n, oh, ow, c)) if dtype.startswith("float") else \
                nrng.integers(-50, 50, (n, oh, ow, c)).astype(np.float64)
            out.append(Case("FractionalAvgPoolGrad",
                            {"orig_input_tensor_shape": np.array([n, h, w, c]), "out_backprop": dy,
                             "row_pooling_sequence": rows, "col_pooling_sequence": cols},
                            {"orig_input_tensor_shape": "i64", "out_backprop": "T", "row_pooling_sequence": "i64",
                             "col_pooling_sequence": "i64"}, {"overlapping": overlapping}, dtype))
        for pseudo_random in (False, True):
            for ratio in (1.3, 1.5, 2.0):
                shape = (rng.randint(1, 2), rng.randint(3, 9), rng.randint(3, 9), rng.randint(1, 3))
                value = nrng.uniform(-1, 1, shape) if dtype.startswith("float") else \
                    nrng.integers(-50, 50, shape).astype(np.float64)
                attrs = {"pooling_ratio": [1.0, ratio, ratio, 1.0], "pseudo_random": pseudo_random,
                         "overlapping": overlapping, "deterministic": True, "seed": rng.randint(1, 1000),
                         "seed2": rng.randint(1, 1000)}
                out.append(Case("FractionalAvgPool", {"value": value}, {"value": "T"}, attrs, dtype))
    return out


def case_id(i, c):
    fmt = c.attrs.get("data_format", "")
    parts = [f"{i:04d}", c.op, c.dtype]
    for k in ("padding", "overlapping", "is_training", "pseudo_random"):
        if k in c.attrs:
            parts.append(f"{k}={c.attrs[k]}")
    if "strides" in c.attrs:
        parts.append("s" + "x".join(map(str, c.attrs["strides"])))
    if "dilations" in c.attrs and set(c.attrs["dilations"]) != {1}:
        parts.append("d" + "x".join(map(str, c.attrs["dilations"])))
    if fmt:
        parts.append(fmt)
    if c.via:
        parts.append("vs TF via " + " + ".join(c.via))
    return " ".join(parts)


def all_cases():
    cases = conv_cases() + batch_norm_cases() + pool_cases()
    return [(case_id(i, c), c) for i, c in enumerate(cases)]
