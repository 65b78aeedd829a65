"""Running a case in TensorFlow, and the TF-computable equivalents of cases TF's CPU kernels refuse.

A case is an op, numpy inputs (float64 values for T-typed tensors, ints for shapes and sequences),
attributes and a dtype. `run` casts the inputs to the dtype and calls tf.raw_ops: before
gradrt_tf.load() that is TF's own kernel, after it gradrt's (the same call, the user's path).
A `via` transformation rewrites a case TF refuses into cases TF computes (transposes, a zero-inserted
filter, a per-group split) plus the function that assembles their outputs.
"""
import numpy as np
import tensorflow as tf

TF_DTYPES = {"float16": tf.float16, "bfloat16": tf.bfloat16, "float32": tf.float32, "float64": tf.float64,
             "int32": tf.int32, "int64": tf.int64}
FLOATS = ("float16", "bfloat16", "float32", "float64")


class Case:
    """kinds[name]: 'T' (the op's dtype), 'U' (float32; FusedBatchNorm's scale and statistics),
    'i32', 'i64'; shape_only: inputs of which only the shape is read (V2 conv ops)."""

    def __init__(self, op, inputs, kinds, attrs, dtype, via=()):
        self.op, self.inputs, self.kinds, self.attrs, self.dtype = op, inputs, kinds, dict(attrs), dtype
        self.via = tuple(via)  # names of the transformations used to reach TF's kernels

    def replace(self, **kw):
        c = Case(self.op, dict(self.inputs), dict(self.kinds), dict(self.attrs), self.dtype, self.via)
        for k, v in kw.items():
            setattr(c, k, v)
        return c


def rounded(case):
    """The case's float inputs rounded to its dtype (every comparison uses these exact values)."""
    out = {}
    for name, a in case.inputs.items():
        kind = case.kinds[name]
        if kind == "T" and case.dtype in FLOATS:
            a = tf.cast(tf.cast(tf.constant(a, tf.float64), TF_DTYPES[case.dtype]), tf.float64).numpy()
        elif kind == "U":
            a = np.asarray(a, np.float32).astype(np.float64)
        out[name] = a
    return out


def tensors(case, dtype=None, values=None):
    """TF tensors for a case; dtype overrides T (float64 for the reference run)."""
    dtype = dtype or case.dtype
    values = rounded(case) if values is None else values
    out = {}
    for name, a in values.items():
        kind = case.kinds[name]
        if kind == "T":
            out[name] = tf.cast(tf.constant(a, tf.float64 if dtype in FLOATS else TF_DTYPES[dtype]), TF_DTYPES[dtype])
        elif kind == "U":
            out[name] = tf.constant(a, tf.float64 if dtype == "float64" else tf.float32)
        else:
            out[name] = tf.constant(a, tf.int32 if kind == "i32" else tf.int64)
    return out


def call(op, ts, attrs):
    """One tf.raw_ops call on the CPU; outputs as numpy (floats widened to float64)."""
    with tf.device("/CPU:0"):
        r = getattr(tf.raw_ops, op)(**ts, **attrs)
    r = list(r) if isinstance(r, (tuple, list)) else [r]
    return [t.numpy() if t.dtype.is_integer else tf.cast(t, tf.float64).numpy() for t in r]


def run(case, dtype=None):
    """The case in TF (either kernel, whichever TF picks) in `dtype` (default: the case's)."""
    return call(case.op, tensors(case, dtype), case.attrs)


# ------------------------------------------------------------------ equivalents

def _nhwc(v):
    return np.transpose(v, (0, 2, 3, 1))


def _nchw(v):
    return np.transpose(v, (0, 3, 1, 2))


def _perm_attr(a):  # an NCHW-ordered 4-list in NHWC order
    return [a[0], a[2], a[3], a[1]]


def to_nhwc(case):
    """NCHW conv / depthwise / batch-norm case -> the NHWC case; outputs are transposed back."""
    c = case.replace(attrs=dict(case.attrs), inputs=dict(case.inputs))
    c.attrs["data_format"] = "NHWC"
    for k in ("strides", "dilations"):
        if k in c.attrs:
            c.attrs[k] = _perm_attr(c.attrs[k])
    if c.attrs.get("explicit_paddings"):
        p = c.attrs["explicit_paddings"]
        c.attrs["explicit_paddings"] = p[0:2] + p[4:6] + p[6:8] + p[2:4]
    for name in ("input", "out_backprop", "x", "y_backprop"):
        if name in c.inputs:
            c.inputs[name] = _nhwc(c.inputs[name])
    if "input_sizes" in c.inputs:
        c.inputs["input_sizes"] = np.array(_perm_attr(list(c.inputs["input_sizes"])))
    first_nchw = case.op in ("Conv2DBackpropInput", "DepthwiseConv2dNativeBackpropInput", "Conv2D",
                             "DepthwiseConv2dNative") or case.op.startswith("FusedBatchNorm")
    return c, (lambda outs: [_nchw(outs[0])] + outs[1:] if first_nchw else outs)


def _dilate(w, dh, dw):
    fh, fw = w.shape[:2]
    out = np.zeros(((fh - 1) * dh + 1, (fw - 1) * dw + 1) + w.shape[2:], w.dtype)
    out[::dh, ::dw] = w
    return out


def to_undilated(case):
    """Dilated NHWC conv -> the same conv with a zero-inserted filter (dilation 1)."""
    dh, dw = case.attrs["dilations"][1:3]
    c = case.replace(attrs=dict(case.attrs, dilations=[1, 1, 1, 1]), inputs=dict(case.inputs))
    if "filter" in c.inputs:
        c.inputs["filter"] = _dilate(c.inputs["filter"], dh, dw)
        return c, (lambda outs: outs)
    fs = list(c.inputs["filter_sizes"])
    c.inputs["filter_sizes"] = np.array([(fs[0] - 1) * dh + 1, (fs[1] - 1) * dw + 1] + fs[2:])
    return c, (lambda outs: [outs[0][::dh, ::dw]])


def split_groups(case):
    """Grouped NHWC Conv2D-family case -> one case per group; outputs concatenated."""
    op, x = case.op, case.inputs
    if op == "Conv2DBackpropFilter":
        cin, cpg, cout = x["input"].shape[3], int(x["filter_sizes"][2]), int(x["filter_sizes"][3])
    else:
        cin = x["input"].shape[3] if "input" in x else int(x["input_sizes"][3])
        cpg, cout = x["filter"].shape[2], x["filter"].shape[3]
    g = cin // cpg
    opg = cout // g
    parts = []
    for i in range(g):
        c = case.replace(inputs=dict(x))
        cs, os_ = slice(i * cpg, (i + 1) * cpg), slice(i * opg, (i + 1) * opg)
        if "input" in x:
            c.inputs["input"] = x["input"][..., cs]
        if "input_sizes" in x:
            c.inputs["input_sizes"] = np.array(list(x["input_sizes"][:3]) + [cpg])
        if "filter" in x:
            c.inputs["filter"] = x["filter"][..., os_]
        if "filter_sizes" in x:
            c.inputs["filter_sizes"] = np.array(list(x["filter_sizes"][:3]) + [opg])
        if "out_backprop" in x:
            c.inputs["out_backprop"] = x["out_backprop"][..., os_]
        parts.append(c)
    return parts, (lambda outs: [np.concatenate([o[0] for o in outs], axis=3)])


DEPTHWISE_TO_CONV = {"DepthwiseConv2dNative": "Conv2D", "DepthwiseConv2dNativeBackpropInput": "Conv2DBackpropInput",
                     "DepthwiseConv2dNativeBackpropFilter": "Conv2DBackpropFilter"}


def depthwise_as_grouped(case):
    """Depthwise (filter [FH,FW,C,M]) -> a grouped conv with C groups and filter [FH,FW,1,C*M]:
    output channel c*M+m is input channel c convolved with w[:,:,c,m] in both."""
    c = case.replace(op=DEPTHWISE_TO_CONV[case.op], inputs=dict(case.inputs))
    if "filter" in c.inputs:
        w = c.inputs["filter"]
        c.inputs["filter"] = w.reshape(w.shape[0], w.shape[1], 1, w.shape[2] * w.shape[3])
        return c, (lambda outs: outs)
    fh, fw, ch, m = (int(v) for v in c.inputs["filter_sizes"])
    c.inputs["filter_sizes"] = np.array([fh, fw, 1, ch * m])
    return c, (lambda outs: [outs[0].reshape(fh, fw, ch, m)])


def run_via(case, dtype=None):
    """Runs the case through its `via` chain (outermost first) in TF; plain `run` when empty."""
    return _run_chain(case, list(case.via), dtype)


def _run_chain(case, via, dtype):
    if not via:
        return run(case, dtype)
    step, rest = via[0], via[1:]
    if step == "per-group split":
        parts, post = split_groups(case)
        return post([_run_chain(p, rest, dtype) for p in parts])
    fn = {"nhwc transpose": to_nhwc, "zero-inserted filter": to_undilated, "depthwise as grouped": depthwise_as_grouped,
          "V1 op": to_v1}[step]
    c, post = fn(case)
    return post(_run_chain(c, rest, dtype))


def to_v1(case):
    """Conv2DBackpropInputV2 / FilterV2 -> the V1 op with the shape tensor as sizes."""
    c = case.replace(inputs=dict(case.inputs), kinds=dict(case.kinds))
    if case.op == "Conv2DBackpropInputV2":
        c.op = "Conv2DBackpropInput"
        c.inputs["input_sizes"] = np.array(c.inputs.pop("input").shape)
        c.kinds["input_sizes"] = "i32"
    else:
        c.op = "Conv2DBackpropFilter"
        c.inputs["filter_sizes"] = np.array(c.inputs.pop("filter").shape)
        c.kinds["filter_sizes"] = "i32"
    return c, (lambda outs: outs)


# ------------------------------------------------------------------ float64 references TF lacks

def batch_norm_grad64(x, dy, scale, mean, var, eps, is_training, nchw):
    """ops.md 6.10 in float64 (TF has no float64 FusedBatchNormGrad kernel)."""
    if nchw:
        x, dy = _nhwc(x), _nhwc(dy)
    axes = (0, 1, 2)
    r = x.size // x.shape[3]
    inv = 1.0 / np.sqrt(var + eps)
    xc = x - mean
    sum_dy = dy.sum(axes)
    sum_dy_xc = (dy * xc).sum(axes)
    if is_training:
        dx = scale * inv * (dy - sum_dy / r - xc * inv ** 2 * sum_dy_xc / r)
    else:
        dx = dy * scale * inv
    outs = [dx, sum_dy_xc * inv, sum_dy]
    if nchw:
        outs[0] = _nchw(outs[0])
    return outs


def batch_norm64(x, scale, offset, mean, var, eps, is_training, nchw, factor):
    """ops.md 6.4 in float64: y, batch_mean, batch_variance, reserve_space_1, reserve_space_2."""
    if nchw:
        x = _nhwc(x)
    r = x.size // x.shape[3]
    if is_training:
        m = x.mean((0, 1, 2))
        v = ((x - m) ** 2).mean((0, 1, 2))
        unbiased = v * r / max(r - 1, 1)
        bm, bv = m, unbiased
        if factor != 1.0:  # running averages (the mean and variance inputs are read only then)
            bm, bv = (1 - factor) * mean + factor * m, (1 - factor) * var + factor * unbiased
        rs = [m, v]
    else:
        m, v, bm, bv = mean, var, mean, var
        rs = [mean, var]
    y = (x - m) / np.sqrt(v + eps) * scale + offset
    return [_nchw(y) if nchw else y, bm, bv] + rs
