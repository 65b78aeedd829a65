// The four convolution gradient kernels (Conv2DBackpropInput, Conv2DBackpropFilter,
// DepthwiseConv2dNativeBackpropInput, DepthwiseConv2dNativeBackpropFilter) as TF.js kernels
// over gradrt, and the Conv2D / DepthwiseConv2dNative gradient configs that pass dilations.
//
// TF.js attrs -> TensorFlow attrs: strides/dilations as a number or [h, w]; pad 'same' /
// 'valid' (TensorFlow's SAME / VALID: same output sizes and leading pads), a number (that
// many rows/columns on every side) or an explicit list [[0,0],[t,b],[l,r],[0,0]] (NCHW:
// [[0,0],[0,0],[t,b],[l,r]]), with dimRoundingMode choosing how tfjs rounded the output
// size. The last two become EXPLICIT paddings: the leading pads as given, the trailing pad
// whichever one yields the output size that dy actually has (see trailingPad).
import { GradrtError } from '../errors.js';
import { f32, runInto } from './io.js';

const unsupported = (msg) => new GradrtError('Unimplemented', `gradrt/tfjs: ${msg}`);

function pair(v, label) {
  const p = v === undefined || v === null ? [1, 1] : typeof v === 'number' ? [v, v] : [v[0], v[1]];
  if (!p.every((x) => Number.isInteger(x) && x > 0)) throw unsupported(`${label} ${JSON.stringify(v)}`);
  return p;
}

// TensorFlow's EXPLICIT output size is floor((size + before + after - eff) / stride) + 1.
// tfjs rounds its own formula (floor, round or ceil); every trailing pad that reproduces
// dy's size computes the same numbers (rows past the input are zero padding either way).
// Returns the given `after` when it fits, else the smallest non-negative one that does.
function trailingPad(size, before, eff, stride, out, after) {
  const fits = (a) => Math.floor((size + before + a - eff) / stride) + 1 === out;
  if (Number.isInteger(after) && after >= 0 && fits(after)) return after;
  const a = Math.max(0, (out - 1) * stride + eff - size - before);
  if (!fits(a)) throw unsupported(`no padding gives output size ${out} for input ${size}, filter ${eff}, stride ${stride}`);
  return a;
}

// -> TensorFlow attrs for a conv-like op whose input has xShape, filter filterShape (HWIO)
// and output (dy) dyShape.
export function tfAttrs(attrs, xShape, filterShape, dyShape) {
  const nchw = attrs.dataFormat === 'NCHW';
  if (attrs.dataFormat !== undefined && attrs.dataFormat !== null && !nchw && attrs.dataFormat !== 'NHWC') {
    throw unsupported(`dataFormat ${attrs.dataFormat}`);
  }
  if ([xShape, filterShape, dyShape].some((s) => s.length !== 4)) throw unsupported('tensors must be rank 4');
  const [sh, sw] = pair(attrs.strides, 'strides');
  const [dh, dw] = pair(attrs.dilations, 'dilations');
  const hi = nchw ? 2 : 1;
  const spatial = (a, b) => (nchw ? [1, 1, a, b] : [1, a, b, 1]);
  const out = {
    strides: spatial(sh, sw),
    dilations: spatial(dh, dw),
    data_format: nchw ? 'NCHW' : 'NHWC',
  };
  const { pad } = attrs;
  if (pad === 'same' || pad === 'valid') {
    out.padding = pad.toUpperCase();
    return out;
  }
  let rows;
  let cols;
  if (typeof pad === 'number') {
    rows = [pad, pad];
    cols = [pad, pad];
  } else if (Array.isArray(pad) && pad.length === 4 && pad.every((p) => Array.isArray(p) && p.length === 2)) {
    rows = pad[hi];
    cols = pad[hi + 1];
  } else {
    throw unsupported(`pad ${JSON.stringify(pad)}`);
  }
  if (![...rows, ...cols].every((p) => Number.isInteger(p) && p >= 0)) throw unsupported(`pad ${JSON.stringify(pad)}`);
  const [fh, fw] = filterShape;
  const top = rows[0];
  const left = cols[0];
  const bottom = trailingPad(xShape[hi], top, (fh - 1) * dh + 1, sh, dyShape[hi], rows[1]);
  const right = trailingPad(xShape[hi + 1], left, (fw - 1) * dw + 1, sw, dyShape[hi + 1], cols[1]);
  out.padding = 'EXPLICIT';
  out.explicit_paddings = nchw ? [0, 0, 0, 0, top, bottom, left, right] : [0, 0, top, bottom, left, right, 0, 0];
  return out;
}

const dilated = (attrs) => pair(attrs.dilations, 'dilations').some((d) => d !== 1);

// The kernel bodies: (args) -> { out: output shape, tensors, attrs: TensorFlow's, inputs(view) }.
// Depthwise kernels have no dataFormat attr (tfjs's depthwise ops are NHWC only).
const format = (attrs, depthwise) => (depthwise ? { ...attrs, dataFormat: 'NHWC' } : attrs);

const backpropInput = (depthwise) => ({ inputs: { dy, filter }, attrs }) => ({
  out: attrs.inputShape,
  tensors: [dy, filter],
  attrs: tfAttrs(format(attrs, depthwise), attrs.inputShape, filter.shape, dy.shape),
  inputs: (view) => ({ input_sizes: attrs.inputShape, filter: f32(filter.shape, view(filter)), out_backprop: f32(dy.shape, view(dy)) }),
});

const backpropFilter = (depthwise) => ({ inputs: { x, dy }, attrs }) => ({
  out: attrs.filterShape,
  tensors: [x, dy],
  attrs: tfAttrs(format(attrs, depthwise), x.shape, attrs.filterShape, dy.shape),
  inputs: (view) => ({ input: f32(x.shape, view(x)), filter_sizes: attrs.filterShape, out_backprop: f32(dy.shape, view(dy)) }),
});

const BODIES = {
  Conv2DBackpropInput: backpropInput(false),
  Conv2DBackpropFilter: backpropFilter(false),
  DepthwiseConv2dNativeBackpropInput: backpropInput(true),
  DepthwiseConv2dNativeBackpropFilter: backpropFilter(true),
};

export const CONV_KERNELS = Object.keys(BODIES);

// A KernelConfig for kernelName on backendName running gradrt, falling back to `previous`
// (tfjs's own kernel config, or undefined) for a case gradrt does not take. tfjs's own
// kernels ignore dilations, so a dilated call never falls back: it throws instead.
export function convKernel(ctx, kernelName, backendName, previous) {
  const body = BODIES[kernelName];
  return {
    kernelName,
    backendName,
    kernelFunc: (args) => {
      try {
        const plan = body(args);
        if (!plan.tensors.every((t) => t.dtype === 'float32')) throw unsupported(`${kernelName}: dtype ${plan.tensors.map((t) => t.dtype)}`);
        return runInto(ctx.rt, ctx.io(backendName), args.backend, kernelName,
          [{ name: 'output', shape: plan.out, dtype: 'float32' }], plan.inputs, plan.attrs)[0];
      } catch (e) {
        if (!(e instanceof GradrtError) || !previous || dilated(args.attrs)) throw e;
        ctx.fellBack(kernelName, e);
        return previous.kernelFunc(args);
      }
    },
  };
}

// Conv2D's and DepthwiseConv2dNative's gradients, like tfjs's own but passing dilations
// (and dimRoundingMode) to the gradient kernels, where tfjs's assert that they are 1.
// On a backend without gradrt's kernels tfjs's original config runs (its kernels ignore
// dilations).
export function convGradient(ctx, tf, original, depthwise) {
  const [inputKernel, filterKernel] = depthwise
    ? ['DepthwiseConv2dNativeBackpropInput', 'DepthwiseConv2dNativeBackpropFilter']
    : ['Conv2DBackpropInput', 'Conv2DBackpropFilter'];
  return {
    kernelName: depthwise ? 'DepthwiseConv2dNative' : 'Conv2D',
    inputsToSave: ['x', 'filter'],
    gradFunc: (dy, saved, attrs) => {
      if (!ctx.active(tf.getBackend())) return original.gradFunc(dy, saved, attrs);
      const [x, filter] = saved;
      const common = {
        strides: attrs.strides,
        pad: attrs.pad,
        dimRoundingMode: attrs.dimRoundingMode,
        dilations: attrs.dilations,
        ...(depthwise ? {} : { dataFormat: attrs.dataFormat }),
      };
      const run = (name, inputs, extra) => tf.engine().runKernel(name, inputs, { ...common, ...extra });
      return {
        x: () => run(inputKernel, { dy, filter }, { inputShape: x.shape }),
        filter: () => run(filterKernel, { x, dy }, { filterShape: filter.shape }),
      };
    },
  };
}
