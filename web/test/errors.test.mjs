// Bad inputs give a GradrtError with TensorFlow's code name, never a crash: every hostile case
// of ../tests/data/hostile (the C++ suite's too: advisories of shared/spec/ops.md section 7, TF
// crash reports, argument checks), then the checks of the JS layer itself and the heap limits.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { init } from '../src/index.js';
import { FLAVOURS, runtime, iota, f32, assertCode } from './util.js';
import { attrs, checkValues, elements, loadData, num, tensor } from './data.js';

const S1 = [1, 1, 1, 1];
const ones = (shape) => f32(shape, new Float32Array(shape.reduce((a, b) => a * b, 1)).fill(1));
const FILES = loadData('hostile');

// One hostile case through runOp: the error's code and message fragments, or the outputs'
// shapes, zeros, empties, values and single-element checks. A case's "web" note replaces its
// expectation where the npm package differs (it refuses some inputs in JS before the wasm core
// sees them) or skips it with the reason (what JS cannot express).
function runCase(rt, c) {
  const ins = Object.fromEntries(Object.entries(c.inputs).map(([k, t]) => [k, tensor(t)]));
  const call = () => rt.runOp(c.op, ins, attrs(c.attrs));
  const error = (c.web && c.web.error) || c.error;
  if (error) {
    assertCode(call, error.code);
    for (const fragment of error.message) assert.throws(call, (e) => e.message.includes(fragment), `message lacks ${JSON.stringify(fragment)}`);
    return;
  }
  const out = Object.values(call());
  c.ok.shapes.forEach((s, i) => assert.deepEqual(out[i].shape, s.map(num), `output ${i} shape`));
  for (const i of c.ok.zeros || []) {
    assert.ok(out[i].data.length > 0);
    assert.ok(elements(out[i]).every((v) => v === 0 && !Object.is(v, -0)), `output ${i} is not all +0`);
  }
  for (const i of c.ok.empty || []) assert.equal(out[i].data.length, 0);
  for (const v of c.ok.values || []) checkValues(assert, out[v.output], v.values, { rtol: v.rtol, atol: v.atol, label: `output ${v.output}` });
  for (const k of c.ok.checks || []) {
    const got = elements(out[k.output]);
    const want = num(k.value);
    got.forEach((g, j) => {
      if (k.index !== undefined && j !== k.index) return;
      if (Number.isNaN(want)) assert.ok(Number.isNaN(g), `output ${k.output} [${j}] is ${g}, want NaN`);
      else assert.ok(Math.abs(g - want) <= (k.tol || 0) * Math.max(1, Math.abs(want)), `output ${k.output} [${j}] is ${g}, want ${want}`);
    });
  }
}

for (const [flavour, options] of FLAVOURS) {
  describe(`errors (${flavour})`, async () => {
    const rt = await runtime(options);
    const dxArgs = { input_sizes: [1, 4, 4, 1], filter: ones([2, 2, 1, 1]), out_backprop: ones([1, 4, 4, 1]) };
    const bpi = (attrs, inputs = dxArgs) => () => rt.runOp('Conv2DBackpropInput', inputs, attrs);

    for (const { file, doc } of FILES) {
      for (const c of doc.cases) {
        const skip = c.web && c.web.skip;
        it(`${file}: ${c.name}`, skip ? { skip } : {}, () => runCase(rt, c));
      }
    }

    it('unknown backend -> NotFound', () => assertCode(() => rt.runOp('Conv2DBackpropInput', dxArgs, { strides: S1, padding: 'SAME' }, { backend: 'tpu' }), 'NotFound'));
    // JS-side checks of the tensors themselves.
    it('data length does not match shape -> InvalidArgument', () =>
      assertCode(bpi({ strides: S1, padding: 'SAME' }, { ...dxArgs, filter: f32([2, 2, 1, 2], iota(4)) }), 'InvalidArgument', /elements/));
    it('unknown dtype -> InvalidArgument', () =>
      assertCode(bpi({ strides: S1, padding: 'SAME' }, { ...dxArgs, filter: { dtype: 'float8', shape: [1], data: new Float32Array(1) } }), 'InvalidArgument', /dtype/));
    it('wrong typed array for dtype -> InvalidArgument', () =>
      assertCode(bpi({ strides: S1, padding: 'SAME' }, { ...dxArgs, filter: { dtype: 'float32', shape: [4], data: new Float64Array(4) } }), 'InvalidArgument'));
    it('negative or fractional shape -> InvalidArgument', () => {
      assertCode(bpi({ strides: S1, padding: 'SAME' }, { ...dxArgs, filter: { dtype: 'float32', shape: [-1], data: new Float32Array(0) } }), 'InvalidArgument');
      assertCode(bpi({ strides: S1, padding: 'SAME' }, { ...dxArgs, filter: { dtype: 'float32', shape: [1.5], data: new Float32Array(1) } }), 'InvalidArgument');
    });
    it('plain array for a data input -> InvalidArgument', () =>
      assertCode(bpi({ strides: S1, padding: 'SAME' }, { ...dxArgs, filter: [1, 2, 3, 4] }), 'InvalidArgument'));
    it('non-integer or out-of-range input_sizes -> InvalidArgument', () => {
      assertCode(bpi({ strides: S1, padding: 'SAME' }, { ...dxArgs, input_sizes: [1, 4.5, 4, 1] }), 'InvalidArgument');
      assertCode(bpi({ strides: S1, padding: 'SAME' }, { ...dxArgs, input_sizes: [1, 2 ** 31, 4, 1] }), 'InvalidArgument');
    });
    it('attrs that are not JSON -> InvalidArgument', () => {
      assertCode(bpi({ strides: S1, padding: 'SAME', epsilon: NaN }), 'InvalidArgument');
      assertCode(bpi([1, 2]), 'InvalidArgument');
      assertCode(() => rt.runOp(42, {}), 'InvalidArgument');
      assertCode(() => rt.runOp('Conv2D', null), 'InvalidArgument');
    });

    // ResourceExhausted: the 32-bit heap refuses what does not fit, with a status.
    it('output larger than the wasm heap -> ResourceExhausted', () => {
      // out_backprop has no elements, so the result is zeros of input_sizes' shape: 1 GiB and 2^40 bytes.
      for (const hw of [16384, 1 << 19]) {
        assertCode(() => rt.conv2dBackpropInput([1, hw, hw, 1], ones([1, 1, 1, 0]), ones([1, hw, hw, 0]), { strides: S1, padding: 'SAME' }), 'ResourceExhausted');
      }
    });
    it('still works after ResourceExhausted', () => {
      const { output } = rt.runOp('Conv2DBackpropInput', dxArgs, { strides: S1, padding: 'SAME' });
      assert.deepEqual(output.shape, [1, 4, 4, 1]);
    });

  });
}

describe('init options', () => {
  it('rejects a bad simd option', async () => {
    await assert.rejects(init({ simd: 'maybe' }), (e) => e.code === 'InvalidArgument');
  });
  it('wasmPath without the files -> NotFound', async () => {
    await assert.rejects(init({ wasmPath: '/nonexistent/gradrt/', simd: false }), (e) => e.code === 'NotFound');
  });
});
