// Plans in JS (src/plan.js): rt.prepare once, plan.run many. A run must give runOp's bits
// (fresh arrays, outputs=, HeapTensors in and out), on changed data; bad specs fail at prepare
// and mismatched inputs at run, each with a GradrtError; runs leave no heap growth.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as ref from './reference.js';
import { FLAVOURS, runtime, f32, rng, random, count, assertClose, assertCode, assertNoHeapGrowth } from './util.js';

const bits = (a) => Buffer.from(a.buffer, a.byteOffset, a.byteLength);

for (const [flavour, options] of FLAVOURS) {
  describe(`plans (${flavour})`, async () => {
    const rt = await runtime(options);
    const next = rng(5);
    const attrs = { strides: [1, 2, 2, 1], padding: 'SAME' };
    const w = () => f32([3, 3, 8, 4], random(288, next));
    const dy = () => f32([2, 5, 6, 4], random(2 * 5 * 6 * 4, next));
    const specs = { input_sizes: [2, 9, 11, 8], filter: { dtype: 'float32', shape: [3, 3, 8, 4] }, out_backprop: { dtype: 'float32', shape: [2, 5, 6, 4] } };

    it('prepare reports the outputs, backend, kernel and ISA once', () => {
      const plan = rt.prepare('Conv2DBackpropInput', specs, attrs);
      assert.deepEqual(plan.outputs, [{ name: 'output', dtype: 'float32', shape: [2, 9, 11, 8] }]);
      assert.equal(plan.backend, 'cpu');
      assert.equal(plan.kernel, 'conv2d_backprop_input');
      assert.equal(plan.isa, rt.simd ? 'wasm_simd128' : 'scalar');
      plan.dispose();
    });

    // plan.tiles: the cpu backend's tile choice for Conv2DBackpropInput. The SIMD128 unit has the
    // native units' 1x1 streaming path (simd/kernels/conv2d_backprop_input_stream.h) for up to 4
    // vectors of dx channels (16 at 128 bits): 17 channels and 3x3 filters take the GEMM tiles.
    // Odd pixel counts (7x9: the 1-row kernel after the last full tile); values against the reference.
    it('tiles: the 1x1 streaming path up to 16 dx channels, GEMM tiles otherwise; values', () => {
      const cases = [[16, 'stream'], [5, 'stream'], [17, 'gemm']];
      for (const [ci, path] of cases) {
        const xs = [2, 7, 9, ci], ws = [1, 1, ci, 12], ys = [2, 7, 9, 12], a = { strides: [1, 1, 1, 1], padding: 'VALID' };
        const plan = rt.prepare('Conv2DBackpropInput', { input_sizes: xs, filter: { dtype: 'float32', shape: ws }, out_backprop: { dtype: 'float32', shape: ys } }, a);
        if (rt.simd) assert.match(plan.tiles, new RegExp(`^${path} \\d+x\\d+$`), `ci ${ci}`);
        else assert.equal(typeof plan.tiles, 'string');
        const w = random(count(ws), next), dy = random(count(ys), next);
        const got = plan.run({ input_sizes: xs, filter: f32(ws, w), out_backprop: f32(ys, dy) }).output.data;
        const want = ref.conv2dBackpropInput(ref.convGeometry(xs, ws, a), Float64Array.from(w), Float64Array.from(dy));
        assertClose(got, want, { rtol: 1e-5, atol: 1e-5 });
        plan.dispose();
      }
      const plan3 = rt.prepare('Conv2DBackpropInput', specs, attrs);
      if (rt.simd) assert.match(plan3.tiles, /^gemm \d+x\d+$/);
      plan3.dispose();
    });

    it('run gives runOp bits on changed data, into fresh arrays, outputs= and HeapTensors', () => {
      const plan = rt.prepare('Conv2DBackpropInput', specs, attrs);
      for (let round = 0; round < 3; round++) {
        const inputs = { input_sizes: [2, 9, 11, 8], filter: w(), out_backprop: dy() };
        const want = rt.runOp('Conv2DBackpropInput', inputs, attrs).output;
        const got = plan.run(inputs).output;
        assert.deepEqual(got.shape, want.shape);
        assert.ok(bits(got.data).equals(bits(want.data)), `round ${round}`);
        const into = new Float32Array(want.data.length);
        assert.equal(plan.run(inputs, { outputs: { output: into } }).output.data, into);
        assert.ok(bits(into).equals(bits(want.data)));
        const hw = rt.tensor('float32', [3, 3, 8, 4], inputs.filter.data);
        const heapOut = plan.run({ ...inputs, filter: hw }, { heap: true }).output;
        assert.ok(bits(heapOut.data).equals(bits(want.data)));
        const dest = rt.tensor('float32', want.shape);
        assert.equal(plan.run(inputs, { outputs: { output: dest } }).output, dest);
        assert.ok(bits(dest.data).equals(bits(want.data)));
        assert.deepEqual(Object.keys(plan.run(inputs, { outputs: { output: null } })), []);
        [hw, heapOut, dest].forEach((t) => t.dispose());
      }
      plan.dispose();
    });

    it('a batch-norm gradient plan (several outputs) gives runOp bits', () => {
      const x = f32([2, 3, 3, 5], random(90, next));
      const g = f32([2, 3, 3, 5], random(90, next));
      const v = (lo) => f32([5], random(5, next).map((a) => lo + Math.abs(a)));
      const inputs = { y_backprop: g, x, scale: v(0.5), reserve_space_1: v(0), reserve_space_2: v(0.5) };
      const bnAttrs = { epsilon: 0.001, is_training: true };
      const bnSpecs = Object.fromEntries(Object.entries(inputs).map(([k, t]) => [k, { dtype: t.dtype, shape: t.shape }]));
      const plan = rt.prepare('FusedBatchNormGradV2', bnSpecs, bnAttrs);
      const got = plan.run(inputs);
      const want = rt.runOp('FusedBatchNormGradV2', inputs, bnAttrs);
      assert.deepEqual(Object.keys(got), Object.keys(want));
      for (const k of Object.keys(want)) assert.ok(bits(got[k].data).equals(bits(want[k].data)), k);
      plan.dispose();
    });

    it('bad specs throw at prepare, mismatched inputs at run', () => {
      assertCode(() => rt.prepare('Conv2DBackpropInput', specs, { ...attrs, strides: [1, 0, 1, 1] }), 'InvalidArgument', /strides/);
      assertCode(() => rt.prepare('NoSuchOp', specs, attrs), 'NotFound', /NoSuchOp/);
      assertCode(() => rt.prepare('Conv2DBackpropInput', { ...specs, input_sizes: { dtype: 'int32', shape: [4] } }, attrs),
        'InvalidArgument', /input_sizes/);
      const plan = rt.prepare('Conv2DBackpropInput', specs, attrs);
      const inputs = { input_sizes: [2, 9, 11, 8], filter: w(), out_backprop: dy() };
      assertCode(() => plan.run({ ...inputs, filter: f32([3, 3, 8, 2], random(144, next)) }), 'InvalidArgument', /filter/);
      assertCode(() => plan.run({ ...inputs, input_sizes: [2, 9, 10, 8] }), 'InvalidArgument', /input_sizes/);
      assertCode(() => plan.run({ filter: inputs.filter, out_backprop: inputs.out_backprop }), 'InvalidArgument', /input_sizes/);
      assertCode(() => plan.run({ ...inputs, bias: inputs.filter }), 'InvalidArgument', /bias/);
      assertCode(() => plan.run(inputs, { outputs: { output: new Float32Array(3) } }), 'InvalidArgument', /output/);
      assert.ok(plan.run(inputs).output); // still usable
      plan.dispose();
      assertCode(() => plan.run(inputs), 'InvalidArgument', /disposed/);
    });

    it('runs leave no heap growth', () => {
      const plan = rt.prepare('Conv2DBackpropInput', specs, attrs);
      const inputs = { input_sizes: [2, 9, 11, 8], filter: w(), out_backprop: dy() };
      assertNoHeapGrowth(rt, () => plan.run(inputs), { calls: 2000 });
      plan.dispose();
    });
  });
}
