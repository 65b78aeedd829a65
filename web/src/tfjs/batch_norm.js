// Batch norm on gradrt: FusedBatchNorm's gradient (tfjs's inference-form batchNorm op,
// which tfjs-layers also trains through) via FusedBatchNormGrad(is_training=false), and
// a training-mode batch norm that is one op each way (FusedBatchNorm / FusedBatchNormGrad
// with is_training=true) for the GradrtBatchNormalization layer.
//
// Kernels of our own (tfjs's 'FusedBatchNorm' is its inference batchNorm):
//   GradrtFusedBatchNorm      inputs { x, scale, offset } (x NHWC rank 4), attrs { epsilon }
//                             -> [y, batch mean, biased batch variance]
//   GradrtFusedBatchNormGrad  inputs { dy, x, scale, mean, variance }, attrs { epsilon,
//                             isTraining } -> [dx, dscale, doffset]
import { GradrtError } from '../errors.js';
import { f32, runInto } from './io.js';

export const BN_FORWARD = 'GradrtFusedBatchNorm';
export const BN_GRAD = 'GradrtFusedBatchNormGrad';

// Both ops' outputs as tfjs tensors: the first shaped like x (NHWC), the other two [C] vectors.
function bnOutputs(xShape, names) {
  const c = xShape[3];
  return names.map((name, i) => ({ name, shape: i === 0 ? xShape : [c], dtype: 'float32' }));
}

function batchNormKernel(ctx, backendName) {
  return {
    kernelName: BN_FORWARD,
    backendName,
    kernelFunc: ({ inputs: { x, scale, offset }, backend, attrs }) => {
      if (x.shape.length !== 4) {
        throw new GradrtError('InvalidArgument', `${BN_FORWARD}: x must be 4-dimensional, got shape [${x.shape}]`);
      }
      const c = x.shape[3];
      const outs = bnOutputs(x.shape, ['y', 'reserve_space_1', 'reserve_space_2']);
      return runInto(ctx.rt, ctx.io(backendName), backend, 'FusedBatchNorm', outs, (view) => ({
        x: f32(x.shape, view(x)),
        scale: f32([c], view(scale)),
        offset: f32([c], view(offset)),
        mean: f32([0], new Float32Array(0)),
        variance: f32([0], new Float32Array(0)),
      }), { epsilon: attrs.epsilon, is_training: true, data_format: 'NHWC' },
      { batch_mean: null, batch_variance: null });
    },
  };
}

function batchNormGradKernel(ctx, backendName) {
  return {
    kernelName: BN_GRAD,
    backendName,
    kernelFunc: ({ inputs: { dy, x, scale, mean, variance }, backend, attrs }) => {
      const c = x.shape[3];
      const outs = bnOutputs(x.shape, ['x_backprop', 'scale_backprop', 'offset_backprop']);
      return runInto(ctx.rt, ctx.io(backendName), backend, 'FusedBatchNormGrad', outs, (view) => ({
        y_backprop: f32(dy.shape, view(dy)),
        x: f32(x.shape, view(x)),
        scale: f32([c], view(scale)),
        reserve_space_1: f32([c], view(mean)),
        reserve_space_2: f32([c], view(variance)),
      }), { epsilon: attrs.epsilon, is_training: attrs.isTraining, data_format: 'NHWC' },
      { reserve_space_3: null, reserve_space_4: null });
    },
  };
}

export function batchNormKernels(ctx, backendName) {
  return [batchNormKernel(ctx, backendName), batchNormGradKernel(ctx, backendName)];
}

const isVector = (t, c) => t && t.rank === 1 && t.shape[0] === c && t.dtype === 'float32';

// tfjs's FusedBatchNorm gradient, computed by FusedBatchNormGrad(is_training=false) where
// x is rank 4 and mean, variance (and scale) are [C] vectors; tfjs's own config otherwise.
// The inference gradient gives dx, dscale, doffset; the mean and variance gradients follow
// from the last two per channel (inv = rsqrt(var + eps)):
//   dmean = -scale * inv * sum(dy) = -scale * inv * doffset
//   dvar  = -0.5 * scale * inv^3 * sum(dy * (x - mean)) = -0.5 * scale * dscale / (var + eps)
export function fusedBatchNormGradient(ctx, tf, original) {
  return {
    kernelName: 'FusedBatchNorm',
    inputsToSave: ['x', 'mean', 'variance', 'scale'],
    gradFunc: (dy, saved, attrs) => {
      const [x, mean, variance, scale] = saved;
      const c = x.shape[3];
      const ok = ctx.active(tf.getBackend()) && x.rank === 4 && x.dtype === 'float32' && dy.dtype === 'float32'
        && isVector(mean, c) && isVector(variance, c) && (scale == null || isVector(scale, c));
      if (!ok) return original.gradFunc(dy, saved, attrs);
      const eps = attrs.varianceEpsilon;
      const s = scale == null ? tf.ones([c]) : scale;
      const [dx, dscale, doffset] = tf.engine().runKernel(BN_GRAD, { dy, x, scale: s, mean, variance },
        { epsilon: eps, isTraining: false });
      const varEps = tf.add(variance, tf.scalar(eps));
      return {
        x: () => dx,
        mean: () => tf.neg(tf.mul(tf.mul(s, tf.rsqrt(varEps)), doffset)),
        variance: () => tf.mul(tf.scalar(-0.5), tf.div(tf.mul(s, dscale), varEps)),
        scale: () => dscale,
        offset: () => doffset,
      };
    },
  };
}

// The gradient of GradrtFusedBatchNorm: FusedBatchNormGrad(is_training=true) for y's
// gradient. Gradients reaching the batch statistics (rare: tfjs-layers only reads them for
// the moving averages) are added through their derivatives d mean/dx = 1/R and
// d var/dx = 2 (x - mean) / R.
export function batchNormTrainingGradient(tf) {
  return {
    kernelName: BN_FORWARD,
    inputsToSave: ['x', 'scale'],
    outputsToSave: [false, true, true],
    gradFunc: (dys, saved, attrs) => {
      const [x, scale, mean, variance] = saved;
      const [dy, dmean, dvar] = dys;
      const c = x.shape[3];
      const zero = dy == null ? tf.zerosLike(x) : dy;
      let [dx, dscale, doffset] = tf.engine().runKernel(BN_GRAD, { dy: zero, x, scale, mean, variance },
        { epsilon: attrs.epsilon, isTraining: true });
      const r = x.size / c;
      if (dmean != null) dx = tf.add(dx, tf.div(dmean, tf.scalar(r)));
      if (dvar != null) dx = tf.add(dx, tf.mul(tf.sub(x, mean), tf.mul(dvar, tf.scalar(2 / r))));
      return { x: () => dx, scale: () => dscale, offset: () => doffset };
    },
  };
}

// Training-mode batch norm over the last axis of x (any rank >= 2): one gradrt op
// forward, one backward. -> [y, batch mean, biased batch variance] (tfjs's moments).
export function batchNormTraining(tf, x, scale, offset, epsilon) {
  return tf.tidy(() => {
    if (x.rank < 2) throw new GradrtError('InvalidArgument', `gradrt/tfjs: batch norm needs rank >= 2, got ${x.rank}`);
    const c = x.shape[x.rank - 1];
    const x4 = x.rank === 4 ? x : tf.reshape(x, [-1, 1, 1, c]);
    const s = scale == null ? tf.ones([c]) : scale;
    const o = offset == null ? tf.zeros([c]) : offset;
    const [y, mean, variance] = tf.engine().runKernel(BN_FORWARD, { x: x4, scale: s, offset: o }, { epsilon });
    return [x.rank === 4 ? y : tf.reshape(y, x.shape), mean, variance];
  });
}

// GradrtBatchNormalization: tfjs's BatchNormalization layer (same config, weights and
// moving statistics: moving = moving - (moving - batch) * (1 - momentum), with the biased
// batch variance, as tfjs-layers does; Keras' fused path would use the Bessel-corrected
// one) whose training pass over the last axis is GradrtFusedBatchNorm. Inference, other
// axes and backends without gradrt's kernels run tfjs's own code.
export function batchNormalizationLayer(tf, usable) {
  const Base = tf.layers.batchNormalization({}).constructor;
  class GradrtBatchNormalization extends Base {
    call(inputs, kwargs) {
      const training = kwargs && kwargs.training;
      const x = Array.isArray(inputs) ? inputs[0] : inputs;
      const axis = this.axis >= 0 ? this.axis : this.axis + x.rank;
      if (!training || axis !== x.rank - 1 || x.rank < 2 || !usable()) return super.call(inputs, kwargs);
      return tf.tidy(() => {
        const [y, mean, variance] = batchNormTraining(tf, x, this.scale ? this.gamma.read() : null,
          this.center ? this.beta.read() : null, this.epsilon);
        const decay = tf.scalar(1 - this.momentum);
        for (const [v, batch] of [[this.movingMean, mean], [this.movingVariance, variance]]) {
          const old = v.read();
          v.write(tf.sub(old, tf.mul(tf.sub(old, batch), decay)));
        }
        return y;
      });
    }
  }
  GradrtBatchNormalization.className = 'GradrtBatchNormalization';
  return GradrtBatchNormalization;
}
