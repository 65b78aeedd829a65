// gradrt/tfjs: restore() puts tfjs's registries back exactly; fallbacks to tfjs's own
// kernels (or a GradrtError where tfjs has none); tfjs's wasm heap growing inside a kernel.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { GradrtError, fractionalAvgPool, registerGradrtKernels } from 'gradrt/tfjs';
import { assertAgree, randomTensor, tf, withGradrt } from './tfjs_util.js';

const GRADIENTS = ['Conv2D', 'DepthwiseConv2dNative', 'FusedBatchNorm', 'GradrtFusedBatchNorm', 'GradrtFractionalAvgPool'];

function snapshot() {
  const kernels = {};
  for (const b of ['cpu', 'wasm', 'webgl']) kernels[b] = tf.getKernelsForBackend(b).map((k) => [k.kernelName, k]);
  return { kernels, gradients: GRADIENTS.map((g) => tf.getGradient(g)) };
}

// Same names in the same order, each the same config object.
function assertSameRegistry(a, b) {
  for (const backend of Object.keys(a.kernels)) {
    assert.deepEqual(a.kernels[backend].map(([n]) => n), b.kernels[backend].map(([n]) => n), `${backend}: kernel names and order`);
    a.kernels[backend].forEach(([n, k], i) => assert.ok(k === b.kernels[backend][i][1], `${backend} ${n}: same config object`));
  }
  a.gradients.forEach((g, i) => assert.ok(g === b.gradients[i], `gradient of ${GRADIENTS[i]}: same config object`));
}

test('restore() puts the kernel and gradient registries back exactly; twice is harmless', async () => {
  const before = snapshot();
  assert.equal(tf.getKernel('Conv2DBackpropFilter', 'wasm'), undefined, 'tfjs wasm has no Conv2DBackpropFilter');
  const handle = await registerGradrtKernels(tf);
  const during = snapshot();
  assert.notEqual(tf.getKernel('Conv2DBackpropFilter', 'wasm'), undefined);
  assert.notEqual(tf.getKernel('Conv2DBackpropInput', 'cpu'), before.kernels.cpu.find(([n]) => n === 'Conv2DBackpropInput')[1]);
  // Replaced kernels keep their place in the registry's order.
  assert.deepEqual(during.kernels.cpu.slice(0, before.kernels.cpu.length).map(([n]) => n), before.kernels.cpu.map(([n]) => n));
  handle.restore();
  assertSameRegistry(before, snapshot());
  handle.restore();
  assertSameRegistry(before, snapshot());
  // Training a conv on wasm fails again as with tfjs alone.
  await tf.setBackend('wasm');
  const x = randomTensor([1, 5, 5, 2], 1);
  const w = randomTensor([3, 3, 2, 2], 2);
  assert.throws(() => tf.grad((f) => tf.sum(tf.conv2d(x, f, 1, 'same')))(w), /Conv2DBackpropFilter/);
  tf.dispose([x, w]);
});

test('a case gradrt does not take runs tfjs\'s own kernel; without one, a GradrtError', async () => {
  await withGradrt('cpu', async (handle) => {
    // int32 tensors: tfjs cpu's own Conv2DBackpropInput computes them.
    const dy = tf.tensor(Int32Array.from({ length: 2 * 4 * 4 * 3 }, (_, i) => (i % 5) - 2), [2, 4, 4, 3], 'int32');
    const filter = tf.tensor(Int32Array.from({ length: 3 * 3 * 2 * 3 }, (_, i) => (i % 3) - 1), [3, 3, 2, 3], 'int32');
    const attrs = { inputShape: [2, 4, 4, 2], strides: 1, pad: 'same', dataFormat: 'NHWC' };
    const got = tf.engine().runKernel('Conv2DBackpropInput', { dy, filter }, attrs).dataSync();
    assert.equal(handle.fallbacks.Conv2DBackpropInput, 1);
    handle.restore();
    const want = tf.engine().runKernel('Conv2DBackpropInput', { dy, filter }, attrs).dataSync();
    assert.deepEqual(Array.from(got), Array.from(want));

    // wasm has no Conv2DBackpropFilter of its own: the same kind of case is an error.
    await withGradrt('wasm', async () => {
      const x = tf.tensor(new Int32Array(2 * 4 * 4 * 2), [2, 4, 4, 2], 'int32');
      const dyw = tf.tensor(new Int32Array(2 * 4 * 4 * 3), [2, 4, 4, 3], 'int32');
      assert.throws(() => tf.engine().runKernel('Conv2DBackpropFilter', { x, dy: dyw }, { ...attrs, filterShape: [3, 3, 2, 3] }),
        (e) => e instanceof GradrtError && e.code === 'Unimplemented' && /int32/.test(e.message));
      // A dilated case never falls back (tfjs's kernels ignore dilations).
      await tf.setBackend('cpu');
      const dyc = tf.tensor(new Int32Array(2 * 4 * 4 * 3), [2, 4, 4, 3], 'int32');
      assert.throws(() => tf.engine().runKernel('Conv2DBackpropInput', { dy: dyc, filter }, { ...attrs, dilations: 2 }), GradrtError);
      tf.dispose([x, dyw, dyc]);
    });
    tf.dispose([dy, filter]);
    // Without registration the gradrt-only ops say so.
    assert.throws(() => fractionalAvgPool(tf, tf.zeros([1, 4, 4, 1]), { poolingRatio: [1, 2, 2, 1] }),
      (e) => e instanceof GradrtError && /registerGradrtKernels/.test(e.message));
  });
});

test('wasm: tfjs\'s heap grows while a kernel allocates its output; results unchanged', async () => {
  await withGradrt('wasm', () => {
    const backend = tf.backend();
    const x = randomTensor([2, 9, 9, 3], 4);
    const dy = randomTensor([2, 9, 9, 4], 5);
    const w = randomTensor([3, 3, 3, 4], 6);
    const run = () => tf.tidy(() => [
      tf.engine().runKernel('Conv2DBackpropFilter', { x, dy }, { strides: 1, pad: 'same', dataFormat: 'NHWC', filterShape: [3, 3, 3, 4] }).dataSync().slice(),
      tf.engine().runKernel('Conv2DBackpropInput', { dy, filter: w }, { strides: 1, pad: 'same', dataFormat: 'NHWC', inputShape: [2, 9, 9, 3] }).dataSync().slice(),
    ]);
    const want = run();
    // Every makeOutput first forces the wasm memory to grow (a large malloc kept until the
    // end), which detaches every view of the heap taken before it.
    const makeOutput = backend.makeOutput;
    const held = [];
    let grown = 0;
    backend.makeOutput = function (...args) {
      const bytes = backend.wasm.HEAPU8.length;
      held.push(backend.wasm._malloc(bytes));
      if (backend.wasm.HEAPU8.length > bytes) grown++;
      return makeOutput.apply(this, args);
    };
    let got;
    try {
      got = run();
    } finally {
      backend.makeOutput = makeOutput;
      for (const p of held) backend.wasm._free(p);
    }
    assert.ok(grown >= 2, `heap grew ${grown} times`);
    want.forEach((v, i) => assertAgree(got[i], v, `output ${i}`, 0));
    tf.dispose([x, dy, w]);
  });
});

test('init options reach the runtime: threads: 2 gives the same gradients', async () => {
  await tf.setBackend('wasm');
  const x = randomTensor([2, 12, 12, 8], 7);
  const dy = randomTensor([2, 6, 6, 16], 8);
  const attrs = { strides: 2, pad: 'same', dataFormat: 'NHWC', filterShape: [3, 3, 8, 16] };
  const results = [];
  for (const threads of [1, 2]) {
    await withGradrt('wasm', (handle) => {
      try {
        results.push([handle.runtime.threads, tf.tidy(() => tf.engine().runKernel('Conv2DBackpropFilter', { x, dy }, attrs).dataSync().slice())]);
      } finally {
        handle.runtime.dispose();
      }
    }, { backends: ['wasm'], threads, minThreadWorkNs: 0 });
  }
  assert.deepEqual(results.map(([t]) => t), [1, 2]);
  assert.deepEqual(Array.from(results[1][1]), Array.from(results[0][1]), 'bit-identical for any thread count');
  tf.dispose([x, dy]);
});

test('cpu: a float32 tensor made by cast(int32) (tfjs shares the Int32Array) is read as numbers', async () => {
  await tf.setBackend('cpu');
  const ints = tf.tensor(Int32Array.from({ length: 2 * 5 * 5 * 3 }, (_, i) => (i % 7) - 3), [2, 5, 5, 3], 'int32');
  const x = tf.cast(ints, 'float32');
  const dy = randomTensor([2, 5, 5, 4], 9);
  const attrs = { strides: 1, pad: 'same', dataFormat: 'NHWC', filterShape: [3, 3, 3, 4] };
  const want = tf.tidy(() => tf.engine().runKernel('Conv2DBackpropFilter', { x, dy }, attrs).dataSync().slice());
  await withGradrt('cpu', (handle) => {
    const got = tf.tidy(() => tf.engine().runKernel('Conv2DBackpropFilter', { x, dy }, attrs).dataSync().slice());
    assert.deepEqual(handle.fallbacks, {});
    assertAgree(got, want, 'dfilter');
  }, { backends: ['cpu'] });
  tf.dispose([ints, x, dy]);
});
