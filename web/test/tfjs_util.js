// Shared setup of the gradrt/tfjs tests: one TF.js (core + layers + cpu + wasm backends)
// as a single `tf` namespace, the way a user of @tensorflow/tfjs sees it, plus helpers.
import assert from 'node:assert/strict';
import * as tfc from '@tensorflow/tfjs-core';
import * as tfl from '@tensorflow/tfjs-layers';
import '@tensorflow/tfjs-backend-cpu';
import '@tensorflow/tfjs-backend-wasm';
import { registerGradrtKernels } from 'gradrt/tfjs';
import { count, random, rng } from './util.js';

export const tf = { ...tfc, ...tfl };

// |got - want| <= tol * max|want| everywhere; returns the largest error relative to max|want|.
export function assertAgree(got, want, label, tol = 2e-4) {
  assert.equal(got.length, want.length, `${label}: length ${got.length} vs ${want.length}`);
  let scale = 0;
  for (const v of want) scale = Math.max(scale, Math.abs(v));
  scale = Math.max(scale, 1e-30);
  let worst = 0;
  let at = -1;
  for (let i = 0; i < want.length; i++) {
    const e = Math.abs(got[i] - want[i]) / scale;
    if (!(e <= worst)) {
      worst = e;
      at = i;
    }
  }
  assert.ok(worst <= tol, `${label}: element ${at}: got ${got[at]}, want ${want[at]} (error ${worst.toExponential(2)} of max |want| ${scale.toExponential(2)})`);
  return worst;
}

// model.fit's History shows learning: the last epoch's loss under half the first's, accuracy >= 0.9.
export function assertLearned({ history: { loss, acc } }) {
  assert.ok(loss[loss.length - 1] < 0.5 * loss[0], `loss ${loss[0]} -> ${loss[loss.length - 1]}`);
  assert.ok(acc[acc.length - 1] >= 0.9, `accuracy ${acc}`);
}

// A deterministic float32 tensor with values in [-1, 1).
export function randomTensor(shape, seed) {
  return tf.tensor(random(count(shape), rng(seed)), shape, 'float32');
}

// Runs fn(handle, backend) with gradrt's kernels registered (handle = registerGradrtKernels(tf, options)), once per
// backend in `backends` (a name or a list, in that order), each set with tf.setBackend first. Afterwards, whether fn
// threw or not: tfjs's registry as before (handle.restore()) and the backend that was active before, if there was one.
export async function withGradrt(backends, fn, options) {
  const previous = tf.engine().backendName;
  const handle = await registerGradrtKernels(tf, options);
  try {
    for (const backend of [backends].flat()) {
      await tf.setBackend(backend);
      await fn(handle, backend);
    }
  } finally {
    handle.restore();
    if (previous) await tf.setBackend(previous);
  }
}

// The CNN of issue 14: conv3x3(16) (no bias: batch norm follows) + batch norm + relu + depthwise3x3 + global average
// pool + dense(10), on [h, w, 1] images. `bn` makes the batch-norm layer (tfjs's by default).
export function issueCnn({ bn = (c) => tf.layers.batchNormalization(c), size = 28, seed = 1 } = {}) {
  const init = (s) => tf.initializers.glorotUniform({ seed: seed + s });
  const model = tf.sequential();
  model.add(tf.layers.conv2d({ inputShape: [size, size, 1], filters: 16, kernelSize: 3, padding: 'same', useBias: false, kernelInitializer: init(0) }));
  model.add(bn({}));
  model.add(tf.layers.reLU());
  model.add(tf.layers.depthwiseConv2d({ kernelSize: 3, padding: 'same', depthwiseInitializer: init(1) }));
  model.add(tf.layers.globalAveragePooling2d({}));
  model.add(tf.layers.dense({ units: 10, activation: 'softmax', kernelInitializer: init(2) }));
  return model;
}

// A batch of images whose class (0-3) a small CNN learns quickly: horizontal stripes,
// vertical stripes, a checkerboard, or none (stripes `period` pixels wide), over noise.
export function toyBatch(n, size, seed, period = 1) {
  const labels = Array.from({ length: n }, (_, i) => (i + seed) % 4);
  const noiseTensor = randomTensor([n, size, size, 1], seed);
  const noise = noiseTensor.dataSync();
  noiseTensor.dispose();
  const data = new Float32Array(n * size * size);
  for (let b = 0; b < n; b++) {
    for (let r = 0; r < size; r++) {
      for (let c = 0; c < size; c++) {
        const i = (b * size + r) * size + c;
        const [pr, pc] = [Math.floor(r / period), Math.floor(c / period)];
        const pattern = [pr % 2, pc % 2, (pr + pc) % 2, 0][labels[b]];
        data[i] = pattern + 0.3 * noise[i];
      }
    }
  }
  const xs = tf.tensor(data, [n, size, size, 1]);
  const ys = tf.tidy(() => tf.cast(tf.oneHot(tf.tensor(labels, [n], 'int32'), 10), 'float32'));
  return { xs, ys };
}

// d(sum(model(x, training) * r)) / d(each trainable weight), as Float32Arrays.
export function weightGradients(model, x, seed) {
  return tf.tidy(() => {
    const vars = model.trainableWeights.map((w) => w.val);
    const r = randomTensor(model.outputs[0].shape.map((d) => d ?? x.shape[0]), seed);
    const { grads } = tf.variableGrads(() => tf.sum(tf.mul(model.apply(x, { training: true }), r)), vars);
    return vars.map((v) => grads[v.name].dataSync().slice());
  });
}
