// The optional threaded flavour (gradrt-simd-threads: Emscripten pthreads over
// worker_threads): init({ threads }) chooses it on Node, results are bit-identical to one
// thread (core's fixed chunking), the fallbacks are silent, workers never keep Node alive.
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { init, canUseThreads } from '../src/index.js';
import { f32, rng, random, count, assertCode, assertNoHeapGrowth } from './util.js';

const built = existsSync(new URL('../dist/gradrt-simd-threads.wasm', import.meta.url));
const skip = !built ? 'no threaded build in dist/ (npm run build)' : false;

// Cases big enough for several chunks per thread.
function cases() {
  const next = rng(77);
  const t = (shape) => f32(shape, random(count(shape), next));
  const conv = { strides: [1, 2, 2, 1], padding: 'SAME' };
  const dw = { strides: [1, 1, 1, 1], padding: 'SAME' };
  return [
    ['Conv2DBackpropInput', { input_sizes: [2, 20, 20, 16], filter: t([3, 3, 16, 24]), out_backprop: t([2, 10, 10, 24]) }, conv],
    ['Conv2DBackpropFilter', { input: t([2, 20, 20, 16]), filter_sizes: [3, 3, 16, 24], out_backprop: t([2, 10, 10, 24]) }, conv],
    ['DepthwiseConv2dNativeBackpropInput', { input_sizes: [2, 28, 28, 32], filter: t([3, 3, 32, 2]), out_backprop: t([2, 28, 28, 64]) }, dw],
    ['DepthwiseConv2dNativeBackpropFilter', { input: t([2, 28, 28, 32]), filter_sizes: [3, 3, 32, 2], out_backprop: t([2, 28, 28, 64]) }, dw],
    ['FusedBatchNormGrad', { y_backprop: t([2, 28, 28, 32]), x: t([2, 28, 28, 32]), scale: t([32]), reserve_space_1: t([32]), reserve_space_2: f32([32], random(32, next).map((v) => v + 2)) },
      { epsilon: 0.001, is_training: true }],
  ];
}

describe('threads', { skip }, () => {
  const runtimes = [];
  const make = async (options) => {
    const rt = await init(options);
    runtimes.push(rt);
    return rt;
  };
  after(() => runtimes.forEach((rt) => rt.dispose()));

  it('Node can use them; init({ threads: 2 }) loads the pthread flavour', async () => {
    assert.equal(canUseThreads(), true);
    const rt = await make({ threads: 2 });
    assert.equal(rt.threads, 2);
    assert.equal(rt.simd, true);
    assert.equal((await make({})).threads, 1);
  });

  it('results are bit-identical to one thread, for 2 and 3 threads', async () => {
    const one = await make({ simd: true });
    for (const threads of [2, 3]) {
      // minThreadWorkNs 0: these cases are below the default minimum and would run on one thread.
      const rt = await make({ threads, minThreadWorkNs: 0 });
      assert.equal(rt.threads, threads);
      for (const [op, inputs, attrs] of cases()) {
        const want = one.runOp(op, inputs, attrs);
        const got = rt.runOp(op, inputs, attrs);
        for (const name of Object.keys(want)) {
          assert.ok(!(got[name].data.buffer instanceof SharedArrayBuffer), `${op}.${name}: output on shared memory`);
          assert.deepEqual(got[name], want[name], `${op}.${name} with ${threads} threads`);
        }
      }
    }
  });

  it('options.outputs and no heap growth over 2,000 threaded calls', async () => {
    const rt = await make({ threads: 2 });
    const [op, inputs, attrs] = cases()[2];
    const want = rt.runOp(op, inputs, attrs).output.data;
    const out = new Float32Array(want.length);
    assertNoHeapGrowth(rt, () => rt.runOp(op, inputs, attrs, { outputs: { output: out } }), { warmup: 100, calls: 2000 });
    assert.deepEqual(out, want);
  });

  it('falls back to one thread, silently: scalar build, or no SharedArrayBuffer', async () => {
    const scalar = await make({ threads: 4, simd: false });
    assert.deepEqual([scalar.simd, scalar.threads], [false, 1]);
    const sab = globalThis.SharedArrayBuffer;
    globalThis.SharedArrayBuffer = undefined;
    try {
      assert.equal(canUseThreads(), false);
      const rt = await make({ threads: 4 });
      assert.deepEqual([rt.simd, rt.threads], [true, 1]);
    } finally {
      globalThis.SharedArrayBuffer = sab;
    }
  });

  it('threads must be an integer from 1 to 64', async () => {
    for (const threads of [0, -1, 1.5, 65, '2', null]) {
      await assert.rejects(init({ threads }), (e) => e.name === 'GradrtError' && e.code === 'InvalidArgument', String(threads));
    }
    for (const minThreadWorkNs of [-1, NaN, '0', Infinity]) {
      await assert.rejects(init({ threads: 2, minThreadWorkNs }), (e) => e.code === 'InvalidArgument', String(minThreadWorkNs));
    }
  });

  it('idle workers do not keep Node alive', { timeout: 60000 }, () => {
    const script = `
      import { init } from ${JSON.stringify(new URL('../src/index.js', import.meta.url).href)};
      const rt = await init({ threads: 2 });
      const { output } = rt.runOp('Conv2DBackpropInput', { input_sizes: [1, 2, 3, 1],
        filter: { dtype: 'float32', shape: [2, 2, 1, 1], data: Float32Array.of(1, 2, 3, 4) },
        out_backprop: { dtype: 'float32', shape: [1, 1, 2, 1], data: Float32Array.of(1, 2) } }, { strides: [1, 1, 1, 1], padding: 'VALID' });
      console.log(JSON.stringify({ threads: rt.threads, out: Array.from(output.data) }));`;
    const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8', timeout: 30000 });
    assert.deepEqual(JSON.parse(out), { threads: 2, out: [1, 4, 4, 3, 10, 8] });
  });

  it('a disposed threaded runtime refuses calls', async () => {
    const rt = await init({ threads: 2 });
    rt.dispose();
    assertCode(() => rt.runOp(...cases()[0]), 'Unavailable', /disposed/);
  });
});
