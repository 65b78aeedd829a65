// gradrt/tfjs: what no tfjs backend has. FractionalAvgPool (op, gradient, layer) against
// the reference's cells over the sequences the op returns; dilated conv and depthwise
// gradients against the reference; dilated layers and fractional pooling train on wasm.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fractionalAvgPool, gradrtLayers } from 'gradrt/tfjs';
import * as ref from './reference.js';
import { assertAgree, assertLearned, randomTensor, tf, toyBatch, withGradrt } from './tfjs_util.js';

// Sequences start at 0, end at the input size, and step by floor(in/out) or one more.
function checkSequence(seq, n, out, label) {
  assert.equal(seq.length, out + 1, `${label}: length`);
  assert.equal(seq[0], 0, label);
  assert.equal(seq[out], n, label);
  const k = Math.floor(n / out);
  for (let i = 0; i < out; i++) assert.ok(seq[i + 1] - seq[i] === k || seq[i + 1] - seq[i] === k + 1, `${label}: step ${i}`);
}

test('fractionalAvgPool op and gradient (wasm, cpu) = reference over the returned sequences', async () => {
  await withGradrt(['wasm', 'cpu'], (_, backend) => {
    for (const [shape, ratio, pseudoRandom, overlapping, seeds] of [
      [[2, 10, 10, 3], [1, 1.5, 1.5, 1], true, false, [1, 0]],
      [[1, 7, 13, 2], [1, Math.SQRT2, Math.sqrt(3), 1], false, true, [87654321, 341261005]],
      [[3, 9, 6, 1], [1, 2, 1.3, 1], false, false, [5, 6]],
    ]) {
      const l = `${backend} ${JSON.stringify(shape)} ${ratio} pseudo ${pseudoRandom} overlapping ${overlapping}`;
      const opts = { poolingRatio: ratio, pseudoRandom, overlapping, deterministic: true, seed: seeds[0], seed2: seeds[1] };
      const x = randomTensor(shape, 21);
      const r = tf.tidy(() => fractionalAvgPool(tf, x, opts));
      const [n, h, w, c] = shape;
      const oh = Math.floor(Math.fround(h / Math.fround(ratio[1])));
      const ow = Math.floor(Math.fround(w / Math.fround(ratio[2])));
      assert.deepEqual(r.output.shape, [n, oh, ow, c], l);
      const rows = Array.from(r.rowPoolingSequence.dataSync());
      const cols = Array.from(r.colPoolingSequence.dataSync());
      checkSequence(rows, h, oh, `${l} rows`);
      checkSequence(cols, w, ow, `${l} cols`);
      assertAgree(r.output.dataSync(), ref.fractionalAvgPool(shape, x.dataSync(), rows, cols, overlapping), `${l}: output`, 1e-6);
      // deterministic with the same seeds: the same sequences again
      const again = tf.tidy(() => Array.from(fractionalAvgPool(tf, x, opts).rowPoolingSequence.dataSync()));
      assert.deepEqual(again, rows, `${l}: deterministic`);
      // gradient: a fresh call, with its own sequences (deterministic: the same ones)
      const dyw = randomTensor([n, oh, ow, c], 22);
      const dx = tf.grad((xx) => tf.sum(tf.mul(fractionalAvgPool(tf, xx, opts).output, dyw)))(x);
      assertAgree(dx.dataSync(), ref.fractionalAvgPoolGrad(shape, [n, oh, ow, c], dyw.dataSync(), rows, cols, overlapping), `${l}: gradient`);
      // a plain array input: the tensor made from it does not outlive the call
      const before = tf.memory().numTensors;
      const fromArray = fractionalAvgPool(tf, x.arraySync(), opts);
      assert.deepEqual(Array.from(fromArray.output.dataSync()), Array.from(r.output.dataSync()), `${l}: array input`);
      tf.dispose([fromArray.output, fromArray.rowPoolingSequence, fromArray.colPoolingSequence]);
      assert.equal(tf.memory().numTensors, before, `${l}: array input leaves no tensor`);
      tf.dispose([x, dyw, dx, r.output, r.rowPoolingSequence, r.colPoolingSequence]);
    }
  });
});

test('dilated conv2d / depthwiseConv2d gradients through tfjs ops (wasm, cpu) = reference', async () => {
  await withGradrt(['wasm', 'cpu'], (_, backend) => {
    for (const depthwise of [false, true]) {
      for (const [pad, dil] of [['same', [2, 2]], ['valid', [2, 3]]]) {
        const [n, h, w, c, m] = [2, 9, 10, 3, 2];
        const x = randomTensor([n, h, w, c], 31);
        const f = randomTensor([3, 3, c, m], 32);
        const op = (xx, ff) => (depthwise ? tf.depthwiseConv2d(xx, ff, 1, pad, 'NHWC', dil) : tf.conv2d(xx, ff, 1, pad, 'NHWC', dil));
        const yShape = tf.tidy(() => op(x, f).shape);
        const r = randomTensor(yShape, 33);
        const [dx, df] = tf.grads((xx, ff) => tf.sum(tf.mul(op(xx, ff), r)))([x, f]);
        const ci = tf.backend_util.computeConv2DInfo(x.shape, f.shape, 1, dil, pad, undefined, depthwise);
        const g = { N: n, H: h, W: w, C: c, FH: 3, FW: 3, FI: c, M: m, OH: ci.outHeight, OW: ci.outWidth, OC: depthwise ? c * m : m,
          sh: 1, sw: 1, dh: dil[0], dw: dil[1], pt: ci.padInfo.top, pl: ci.padInfo.left };
        const l = `${backend} ${depthwise ? 'depthwise' : 'conv'} ${pad} dilations ${dil}`;
        const wantDx = depthwise ? ref.depthwiseConv2dNativeBackpropInput(g, f.dataSync(), r.dataSync()) : ref.conv2dBackpropInput(g, f.dataSync(), r.dataSync());
        const wantDf = depthwise ? ref.depthwiseConv2dNativeBackpropFilter(g, x.dataSync(), r.dataSync()) : ref.conv2dBackpropFilter(g, x.dataSync(), r.dataSync());
        assertAgree(dx.dataSync(), wantDx, `${l}: dx`);
        assertAgree(df.dataSync(), wantDf, `${l}: dfilter`);
        tf.dispose([x, f, r, dx, df]);
      }
    }
  });
});

test('dilated conv, dilated depthwise and fractional pooling layers train on wasm', async () => {
  await withGradrt('wasm', async (handle) => {
    const layers = gradrtLayers(tf);
    const model = tf.sequential();
    model.add(layers.conv2d({ inputShape: [16, 16, 1], filters: 8, kernelSize: 3, dilationRate: 2, padding: 'same', activation: 'relu' }));
    model.add(layers.fractionalAvgPool({ poolingRatio: [1.5, 1.5], pseudoRandom: true }));
    model.add(layers.depthwiseConv2d({ kernelSize: 3, dilationRate: 2, padding: 'valid' }));
    // tfjs's own conv layer, dilated, with a non-linear activation: Conv2D's gradient config.
    model.add(tf.layers.conv2d({ filters: 8, kernelSize: 2, dilationRate: 2, activation: 'relu' }));
    model.add(tf.layers.globalAveragePooling2d({}));
    model.add(tf.layers.dense({ units: 10, activation: 'softmax' }));
    assert.deepEqual(model.layers[2].outputShape, [null, 10 - 4, 10 - 4, 8]);
    model.compile({ optimizer: tf.train.adam(0.02), loss: 'categoricalCrossentropy', metrics: ['accuracy'] });
    const { xs, ys } = toyBatch(32, 16, 4, 2); // 2-pixel stripes: visible through dilation 2
    assertLearned(await model.fit(xs, ys, { epochs: 25, batchSize: 16, verbose: 0 }));
    assert.deepEqual(handle.fallbacks, {});
    // The layers serialize under their own names.
    const names = model.toJSON(null, false).config.layers.map((l) => l.class_name);
    assert.deepEqual(names.slice(0, 3), ['GradrtConv2D', 'GradrtFractionalAvgPool', 'GradrtDepthwiseConv2D']);
    tf.dispose([xs, ys]);
  });
});
