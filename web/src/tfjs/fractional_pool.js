// FractionalAvgPool for TF.js (no tfjs backend has it): an op, its gradient through
// gradrt's FractionalAvgPoolGrad, and a layer. TensorFlow's semantics (pooling_ratio per
// NHWC dim with batch and channel ratios 1, pseudo_random, overlapping, deterministic,
// seed/seed2 with TF's Philox sequences; see shared/spec/ops.md section 5).
//
//   GradrtFractionalAvgPool      inputs { x } (NHWC), attrs { poolingRatio, pseudoRandom,
//                                overlapping, deterministic, seed, seed2 }
//                                -> [output, row sequence (int32), col sequence (int32)]
//   GradrtFractionalAvgPoolGrad  inputs { dy, rowSeq, colSeq }, attrs { inputShape,
//                                overlapping } -> dx
import { GradrtError } from '../errors.js';
import { f32 } from './io.js';

export const FAP_FORWARD = 'GradrtFractionalAvgPool';
export const FAP_GRAD = 'GradrtFractionalAvgPoolGrad';

// tfjs-style options -> the kernel's attrs (defaults filled in).
function normalized(o) {
  return {
    poolingRatio: o.poolingRatio,
    pseudoRandom: Boolean(o.pseudoRandom),
    overlapping: Boolean(o.overlapping),
    deterministic: Boolean(o.deterministic),
    seed: o.seed || 0,
    seed2: o.seed2 || 0,
  };
}

const tfAttrs = (a) => ({
  pooling_ratio: a.poolingRatio, pseudo_random: a.pseudoRandom, overlapping: a.overlapping,
  deterministic: a.deterministic, seed: a.seed, seed2: a.seed2,
});

// The output sizes are only known after the op ran (they depend on float32 division and
// the sequences come from the op), so it runs into fresh arrays and the results are copied
// into tfjs tensors (a pooled output is a fraction of the input's size).
function forwardKernel(ctx, backendName) {
  return {
    kernelName: FAP_FORWARD,
    backendName,
    kernelFunc: ({ inputs: { x }, backend, attrs }) => {
      if (x.dtype !== 'float32') throw new GradrtError('Unimplemented', `gradrt/tfjs: fractionalAvgPool of ${x.dtype}`);
      const io = ctx.io(backendName);
      const r = ctx.rt.runOp('FractionalAvgPool', { value: f32(x.shape, io.view(backend, x)) }, tfAttrs(normalized(attrs)));
      const outs = [
        [r.output.shape, 'float32', r.output.data],
        [r.row_pooling_sequence.shape, 'int32', Int32Array.from(r.row_pooling_sequence.data, Number)],
        [r.col_pooling_sequence.shape, 'int32', Int32Array.from(r.col_pooling_sequence.data, Number)],
      ];
      const infos = outs.map(([shape, dtype]) => io.alloc(backend, shape, dtype));
      infos.forEach((info, i) => io.view(backend, info).set(outs[i][2]));
      return infos.map((info) => io.finish(backend, info));
    },
  };
}

function gradKernel(ctx, backendName) {
  return {
    kernelName: FAP_GRAD,
    backendName,
    kernelFunc: ({ inputs: { dy, rowSeq, colSeq }, backend, attrs }) => {
      const io = ctx.io(backendName);
      const info = io.alloc(backend, attrs.inputShape, 'float32');
      try {
        const view = (t) => io.view(backend, t);
        ctx.rt.runOp('FractionalAvgPoolGrad', {
          orig_input_tensor_shape: attrs.inputShape,
          out_backprop: f32(dy.shape, view(dy)),
          row_pooling_sequence: view(rowSeq),
          col_pooling_sequence: view(colSeq),
        }, { overlapping: Boolean(attrs.overlapping) }, { outputs: { output: view(info) } });
      } catch (e) {
        io.drop(backend, info);
        throw e;
      }
      return io.finish(backend, info);
    },
  };
}

export function fractionalPoolKernels(ctx, backendName) {
  return [forwardKernel(ctx, backendName), gradKernel(ctx, backendName)];
}

export function fractionalPoolGradient(tf) {
  return {
    kernelName: FAP_FORWARD,
    inputsToSave: ['x'],
    outputsToSave: [false, true, true],
    gradFunc: (dys, saved, attrs) => {
      const [x, rowSeq, colSeq] = saved;
      const dy = dys[0];
      if (dy == null) return { x: () => tf.zerosLike(x) };
      return {
        x: () => tf.engine().runKernel(FAP_GRAD, { dy, rowSeq, colSeq },
          { inputShape: x.shape, overlapping: attrs.overlapping }),
      };
    },
  };
}

function checkKernel(tf) {
  const backend = tf.getBackend();
  if (!tf.getKernel(FAP_FORWARD, backend)) {
    throw new GradrtError('Unavailable', `gradrt/tfjs: fractionalAvgPool needs registerGradrtKernels(tf) for backend '${backend}' first`);
  }
}

// fractionalAvgPool(tf, x, { poolingRatio: [1, rh, rw, 1], pseudoRandom, overlapping,
// deterministic, seed, seed2 }) -> { output, rowPoolingSequence, colPoolingSequence }
// (x rank 4 NHWC, or rank 3 HWC; the sequences are int32 tensors).
export function fractionalAvgPool(tf, x, options = {}) {
  checkKernel(tf);
  const attrs = normalized(options);
  if (!Array.isArray(attrs.poolingRatio)) throw new GradrtError('InvalidArgument', 'gradrt/tfjs: fractionalAvgPool: poolingRatio must be an array of 4 numbers');
  return tf.tidy(() => {
    // Made inside the tidy: an array input leaves no tensor behind.
    const $x = x instanceof tf.Tensor ? x : tf.tensor(x);
    const x4 = $x.rank === 3 ? tf.expandDims($x, 0) : $x;
    const [output, row, col] = tf.engine().runKernel(FAP_FORWARD, { x: x4 }, attrs);
    return {
      output: $x.rank === 3 ? tf.squeeze(output, [0]) : output,
      rowPoolingSequence: row,
      colPoolingSequence: col,
    };
  });
}

// The output size of one dim: floor(in / ratio) computed in float32, as TensorFlow does.
const pooledSize = (n, ratio) => (n == null ? null : Math.floor(Math.fround(Math.fround(n) / Math.fround(ratio))));

// GradrtFractionalAvgPool layer: config { poolingRatio: [rh, rw] or [1, rh, rw, 1],
// pseudoRandom, overlapping, deterministic, seed, seed2 }; channels-last input.
export function fractionalAvgPoolLayer(tf) {
  class GradrtFractionalAvgPool extends tf.layers.Layer {
    constructor(config = {}) {
      super(config);
      const r = config.poolingRatio || [2, 2];
      this.poolingRatio = r.length === 2 ? [1, r[0], r[1], 1] : [...r];
      this.pseudoRandom = Boolean(config.pseudoRandom);
      this.overlapping = Boolean(config.overlapping);
      this.deterministic = Boolean(config.deterministic);
      this.seed = config.seed || 0;
      this.seed2 = config.seed2 || 0;
    }

    computeOutputShape(inputShape) {
      const [n, h, w, c] = inputShape;
      return [n, pooledSize(h, this.poolingRatio[1]), pooledSize(w, this.poolingRatio[2]), c];
    }

    call(inputs) {
      const x = Array.isArray(inputs) ? inputs[0] : inputs;
      return tf.tidy(() => fractionalAvgPool(tf, x, this).output); // drops the sequences
    }

    getConfig() {
      const { poolingRatio, pseudoRandom, overlapping, deterministic, seed, seed2 } = this;
      return { ...super.getConfig(), poolingRatio, pseudoRandom, overlapping, deterministic, seed, seed2 };
    }
  }
  GradrtFractionalAvgPool.className = 'GradrtFractionalAvgPool';
  return GradrtFractionalAvgPool;
}
