// gradrt/tfjs batch norm: tfjs's FusedBatchNorm gradient through gradrt's
// FusedBatchNormGrad (all five input gradients, against tfjs cpu's own), and the
// GradrtBatchNormalization layer against tfjs's BatchNormalization (outputs, gradients,
// moving statistics, inference, serialization).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { gradrtLayers } from 'gradrt/tfjs';
import { batchNormTraining } from '../src/tfjs/batch_norm.js';
import { assertAgree, randomTensor, tf, withGradrt } from './tfjs_util.js';

const CASES = [
  // (tfjs 4.22 cannot differentiate batchNorm without a scale: its gradient config saves
  // the missing input. GradrtBatchNormalization with scale: false passes ones.)
  { x: [2, 5, 3, 4] },
  { x: [3, 7] }, // batchNorm2d: tfjs reshapes x to [3, 1, 1, 7]
  { x: [1, 4, 6, 3] },
  { x: [2, 3, 3, 2], broadcast: true }, // [1] vectors over 2 channels: tfjs's own gradient
];

function bnGrads(c, seed) {
  return tf.tidy(() => {
    const ch = c.x[c.x.length - 1];
    const vshape = c.broadcast ? [1] : [ch];
    const x = randomTensor(c.x, seed);
    const mean = tf.mul(randomTensor(vshape, seed + 1), 0.3);
    const variance = tf.add(tf.abs(randomTensor(vshape, seed + 2)), 0.5);
    const offset = randomTensor(vshape, seed + 3);
    const scale = randomTensor(vshape, seed + 4);
    const r = randomTensor(c.x, seed + 5);
    const f = (xx, m, v, o, s) => tf.sum(tf.mul(tf.batchNorm(xx, m, v, o, s, 1e-3), r));
    return tf.grads(f)([x, mean, variance, offset, scale]).map((g) => g.dataSync().slice());
  });
}

test('FusedBatchNorm gradient through gradrt = tfjs cpu\'s own (x, mean, variance, offset, scale)', async () => {
  await tf.setBackend('cpu');
  const want = CASES.map((c, i) => bnGrads(c, 10 * i + 1));
  await withGradrt(['wasm', 'cpu'], (_, backend) => {
    CASES.forEach((c, i) => {
      const got = bnGrads(c, 10 * i + 1);
      ['x', 'mean', 'variance', 'offset', 'scale'].forEach((name, j) => {
        assertAgree(got[j], want[i][j], `${backend} ${JSON.stringify(c)} d${name}`);
      });
    });
  });
});

// Builds a tfjs BatchNormalization and a GradrtBatchNormalization with the same config and
// weights (non-trivial gamma, beta and moving statistics).
function pair(config, inputShape) {
  const layers = gradrtLayers(tf);
  const a = tf.layers.batchNormalization(config);
  const b = layers.batchNormalization(config);
  a.build(inputShape);
  b.build(inputShape);
  const weights = a.getWeights().map((w, i) => tf.tidy(() => (i < 2 ? randomTensor(w.shape, 70 + i) : tf.add(tf.abs(randomTensor(w.shape, 70 + i)), 0.2))));
  a.setWeights(weights);
  b.setWeights(weights);
  tf.dispose(weights);
  return [a, b];
}

function trainStep(layer, x, r) {
  return tf.tidy(() => {
    const vars = layer.trainableWeights.map((w) => w.val);
    const f = () => tf.sum(tf.mul(layer.apply(x, { training: true }), r));
    const { value, grads } = tf.variableGrads(f, vars);
    const dx = tf.grad((xx) => tf.sum(tf.mul(layer.apply(xx, { training: true }), r)))(x);
    return {
      loss: value.dataSync()[0],
      grads: [dx, ...vars.map((v) => grads[v.name])].map((g) => g.dataSync().slice()),
      moving: layer.getWeights().slice(2).map((w) => w.dataSync().slice()),
      inference: layer.apply(x, { training: false }).dataSync().slice(),
    };
  });
}

test('GradrtBatchNormalization = tfjs BatchNormalization: training output, gradients, moving stats, inference', async () => {
  await withGradrt(['wasm', 'cpu'], (_, backend) => {
    for (const [shape, config] of [
      [[4, 5, 6, 3], { momentum: 0.9, epsilon: 1e-3 }],
      [[6, 5], { momentum: 0.5, epsilon: 1e-2 }],
      [[2, 3, 4], {}],
    ]) {
      const [a, b] = pair(config, shape);
      const x = randomTensor(shape, 3);
      const r = randomTensor(shape, 4);
      const want = trainStep(a, x, r);
      const got = trainStep(b, x, r);
      const l = `${backend} ${JSON.stringify(shape)}`;
      assert.ok(Math.abs(got.loss - want.loss) <= 1e-4 * Math.max(1, Math.abs(want.loss)), `${l}: loss ${got.loss} vs ${want.loss}`);
      got.grads.forEach((g, i) => assertAgree(g, want.grads[i], `${l}: gradient ${i}`));
      got.moving.forEach((m, i) => assertAgree(m, want.moving[i], `${l}: moving statistic ${i}`, 1e-6));
      assertAgree(got.inference, want.inference, `${l}: inference`, 1e-6);
      tf.dispose([x, r]);
    }
  });
  const layers = gradrtLayers(tf);
  const layer = layers.batchNormalization({ momentum: 0.8 });
  assert.equal(layer.getClassName(), 'GradrtBatchNormalization');
  assert.equal(layer.getConfig().momentum, 0.8);
  const copy = tf.serialization.SerializationMap.getMap().classNameMap.GradrtBatchNormalization;
  assert.ok(copy, 'registered for serialization');
});

test('gradients reaching the batch mean and variance outputs of the training batch norm = tfjs moments\'', async () => {
  await withGradrt(['wasm', 'cpu'], (_, backend) => {
    const x = randomTensor([3, 4, 5, 2], 41);
    const [ry, rm, rv] = [randomTensor([3, 4, 5, 2], 42), randomTensor([2], 43), randomTensor([2], 44)];
    const loss = (y, m, v) => tf.add(tf.add(tf.sum(tf.mul(y, ry)), tf.sum(tf.mul(m, rm))), tf.sum(tf.mul(v, rv)));
    const got = tf.grad((xx) => loss(...batchNormTraining(tf, xx, null, null, 1e-3)))(x);
    const want = tf.grad((xx) => {
      const { mean, variance } = tf.moments(xx, [0, 1, 2]);
      return loss(tf.batchNorm(xx, mean, variance, tf.zeros([2]), tf.ones([2]), 1e-3), mean, variance);
    })(x);
    assertAgree(got.dataSync(), want.dataSync(), `${backend}: dx`);
    tf.dispose([x, ry, rm, rv, got, want]);
  });
});
