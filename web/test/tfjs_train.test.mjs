// gradrt/tfjs under tfjs-layers: the CNN of issue 14 (conv, batch norm, relu, depthwise,
// global average pool, dense) gets the same weight gradients on wasm + gradrt and on
// cpu + gradrt as on tfjs cpu alone; model.fit trains it on wasm; 1,000 training steps
// leave no tensor, tfjs heap or gradrt heap growth behind.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { gradrtLayers } from 'gradrt/tfjs';
import { assertAgree, assertLearned, issueCnn, tf, toyBatch, weightGradients, withGradrt } from './tfjs_util.js';

test('issue CNN: weight gradients with gradrt (wasm, cpu) = tfjs cpu alone, tfjs and gradrt batch norm', async () => {
  await tf.setBackend('cpu');
  const layers = gradrtLayers(tf);
  const variants = [['tfjs batchNormalization', undefined], ['GradrtBatchNormalization', (c) => layers.batchNormalization(c)]];
  const models = variants.map(([, bn]) => issueCnn({ bn, seed: 3 }));
  const { xs } = toyBatch(8, 28, 5);
  // The reference: tfjs's own cpu kernels and tfjs's own batch norm math (the gradrt layer
  // runs tfjs's code where its kernel is not registered).
  const want = weightGradients(models[0], xs, 9);
  let worst = 0;
  await withGradrt(['wasm', 'cpu'], (handle, backend) => {
    assert.deepEqual(handle.backends, ['wasm', 'cpu']);
    models.forEach((model, v) => {
      const got = weightGradients(model, xs, 9);
      got.forEach((g, i) => {
        worst = Math.max(worst, assertAgree(g, want[i], `${backend}, ${variants[v][0]}: ${model.trainableWeights[i].name}`));
      });
    });
    assert.deepEqual(handle.fallbacks, {});
  });
  xs.dispose();
  console.log(`# issue CNN weight gradients, gradrt vs tfjs cpu: largest error ${worst.toExponential(2)} of max |want|`);
});

test('model.fit of the issue CNN on wasm with gradrt', async () => {
  await withGradrt('wasm', async () => {
    const model = issueCnn({ seed: 7 });
    model.compile({ optimizer: tf.train.adam(0.01), loss: 'categoricalCrossentropy', metrics: ['accuracy'] });
    const { xs, ys } = toyBatch(64, 28, 11);
    assertLearned(await model.fit(xs, ys, { epochs: 10, batchSize: 32, verbose: 0 }));
    tf.dispose([xs, ys]);
    model.dispose?.();
  });
});

test('1,000 training steps on wasm: no tensor, tfjs heap or gradrt heap growth', async () => {
  await withGradrt('wasm', async (handle) => {
    const layers = gradrtLayers(tf);
    const model = issueCnn({ bn: (c) => layers.batchNormalization(c), size: 6, seed: 2 });
    model.compile({ optimizer: tf.train.sgd(0.01), loss: 'categoricalCrossentropy' });
    const { xs, ys } = toyBatch(2, 6, 3);
    const wasm = tf.backend().wasm;
    const snapshot = () => ({ tensors: tf.memory().numTensors, bytes: tf.memory().numBytes, tfjsHeap: wasm.HEAPU8.length, gradrtHeap: handle.runtime.heapBytes() });
    for (let i = 0; i < 20; i++) await model.trainOnBatch(xs, ys);
    const before = snapshot();
    for (let i = 0; i < 1000; i++) await model.trainOnBatch(xs, ys);
    assert.deepEqual(snapshot(), before);
    tf.dispose([xs, ys]);
  });
});
