// HeapTensor (src/heap_tensor.js): tensors in the wasm memory. As inputs they are read in
// place, as outputs ({ heap: true } or a HeapTensor destination) they are not copied out;
// the values must be the bits of the copying path, disposing must give the memory back
// (no heap growth over 10,000 calls) and misuse must be InvalidArgument.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { init, HeapTensor } from '../src/index.js';
import { FLAVOURS, runtime, f32, rng, random, assertCode, assertNoHeapGrowth } from './util.js';

for (const [flavour, options] of FLAVOURS) {
  describe(`heap tensors (${flavour})`, async () => {
    const rt = await runtime(options);
    const next = rng(77);
    const x = f32([2, 9, 11, 8], random(2 * 9 * 11 * 8, next));
    const dy = f32([2, 5, 6, 8], random(2 * 5 * 6 * 8, next));
    const w = f32([3, 3, 8, 1], random(72, next));
    const attrs = { strides: [1, 2, 2, 1], padding: 'SAME' };
    const filterInputs = (input, outBackprop) => ({ input, filter_sizes: [3, 3, 8, 1], out_backprop: outBackprop });

    it('rt.tensor copies its data (or zeros) and data views the heap', () => {
      const t = rt.tensor('float32', [2, 3], Float32Array.of(1, 2, 3, 4, 5, 6));
      assert.ok(t instanceof HeapTensor);
      assert.equal(t.dtype, 'float32');
      assert.deepEqual(t.shape, [2, 3]);
      assert.deepEqual(Array.from(t.data), [1, 2, 3, 4, 5, 6]);
      t.data[0] = 9; // a view, not a copy
      assert.equal(t.data[0], 9);
      assert.deepEqual(Array.from(rt.tensor('int32', [3]).data), [0, 0, 0]);
      assert.deepEqual(Array.from(rt.tensor('float64', [2], [0.5, 1.5]).data), [0.5, 1.5]);
      assert.equal(rt.tensor('float32', [0, 4]).data.length, 0);
      t.dispose();
      assert.ok(t.disposed);
      t.dispose(); // idempotent
      assertCode(() => t.data, 'InvalidArgument', /dispose/);
    });

    it('rt.tensor data is 128-byte aligned', () => {
      const ts = [1, 3, 5, 17, 33].map((n) => rt.tensor('float32', [n]));
      for (const t of ts) assert.equal(t.data.byteOffset % 128, 0, `tensor of ${t.shape[0]} floats`);
      ts.forEach((t) => t.dispose());
    });

    it('a large output lies half a page from the largest input, mod 4096 (4K aliasing)', () => {
      // 1x64x64x8 float32: 128 KiB, above the 64 KiB from which outputs are placed (core/tensor.cpp).
      const shape = [1, 64, 64, 8];
      const filter = rt.tensor('float32', [3, 3, 8, 1]);
      for (const pad of [1, 7, 30]) {
        const spacer = rt.tensor('float32', [pad * 32]); // moves the next block's page offset
        const hdy = rt.tensor('float32', shape);
        const dx = rt.runOp('DepthwiseConv2dNativeBackpropInput', { input_sizes: shape, filter, out_backprop: hdy },
          { strides: [1, 1, 1, 1], padding: 'SAME' }, { heap: true }).output;
        assert.equal((((dx.data.byteOffset - hdy.data.byteOffset) % 4096) + 4096) % 4096, 2048 + 32);
        [spacer, hdy, dx].forEach((t) => t.dispose());
      }
      filter.dispose();
    });

    it('heap inputs and heap outputs give the bits of the copying path', () => {
      const want = rt.runOp('DepthwiseConv2dNativeBackpropFilter', filterInputs(x, dy), attrs).output;
      const hx = rt.tensor('float32', x.shape, x.data), hdy = rt.tensor('float32', dy.shape, dy.data);
      const got = rt.runOp('DepthwiseConv2dNativeBackpropFilter', filterInputs(hx, hdy), attrs, { heap: true }).output;
      assert.ok(got instanceof HeapTensor);
      assert.deepEqual(got.shape, want.shape);
      assert.deepEqual(got.data, want.data);
      // a heap output feeds the next op in place
      const back = rt.runOp('DepthwiseConv2dNativeBackpropInput', { input_sizes: x.shape, filter: got, out_backprop: hdy }, attrs);
      const backWant = rt.runOp('DepthwiseConv2dNativeBackpropInput', { input_sizes: x.shape, filter: want, out_backprop: dy }, attrs);
      assert.deepEqual(back.output.data, backWant.output.data);
      for (const t of [hx, hdy, got]) t.dispose();
    });

    it('a HeapTensor destination receives the output; several outputs mixed', () => {
      const c = (v) => f32([8], v);
      const inputs = { y_backprop: x, x: rt.tensor('float32', x.shape, x.data), scale: c(random(8, next)),
        reserve_space_1: c(random(8, next)), reserve_space_2: c(random(8, next).map((v) => 1.5 + v)) };
      const bnAttrs = { epsilon: 0.001, is_training: true };
      const want = rt.runOp('FusedBatchNormGrad', inputs, bnAttrs);
      const dest = rt.tensor('float32', x.shape);
      const sb = new Float32Array(8);
      const got = rt.runOp('FusedBatchNormGrad', inputs, bnAttrs, { outputs: { x_backprop: dest, scale_backprop: sb }, heap: true });
      assert.equal(got.x_backprop, dest);
      assert.deepEqual(dest.data, want.x_backprop.data);
      assert.equal(got.scale_backprop.data, sb);
      assert.deepEqual(sb, want.scale_backprop.data);
      assert.ok(got.offset_backprop instanceof HeapTensor);
      assert.deepEqual(got.offset_backprop.data, want.offset_backprop.data);
      for (const k of ['reserve_space_3', 'reserve_space_4']) {
        assert.ok(got[k] instanceof HeapTensor, k);
        assert.deepEqual(got[k].data, want[k].data, k);
        got[k].dispose();
      }
      got.offset_backprop.dispose();
      dest.dispose();
      inputs.x.dispose();
    });

    it('misuse is InvalidArgument', async () => {
      const t = rt.tensor('float32', dy.shape, dy.data);
      const other = await init(options);
      const foreign = other.tensor('float32', dy.shape, dy.data);
      assertCode(() => rt.runOp('DepthwiseConv2dNativeBackpropFilter', filterInputs(x, foreign), attrs), 'InvalidArgument', /another runtime/);
      const wrong = rt.tensor('float32', [5]);
      assertCode(() => rt.runOp('DepthwiseConv2dNativeBackpropFilter', filterInputs(x, t), attrs, { outputs: { output: wrong } }), 'InvalidArgument', /HeapTensor/);
      t.dispose();
      assertCode(() => rt.runOp('DepthwiseConv2dNativeBackpropFilter', filterInputs(x, t), attrs), 'InvalidArgument', /disposed/);
      assertCode(() => rt.tensor('float33', [1]), 'InvalidArgument', /dtype/);
      assertCode(() => rt.tensor('float32', [-1]), 'InvalidArgument', /shape/);
      assertCode(() => rt.tensor('float32', [2], Float32Array.of(1)), 'InvalidArgument', /elements/);
      assertCode(() => rt.tensor('float32', [2 ** 20, 2 ** 20]), 'ResourceExhausted');
      wrong.dispose();
      foreign.dispose();
      other.dispose();
    });

    it('no heap growth over 10,000 calls with heap inputs and outputs', () => {
      const hx = rt.tensor('float32', x.shape, x.data), hdy = rt.tensor('float32', dy.shape, dy.data);
      const call = (i) => {
        const out = rt.runOp('DepthwiseConv2dNativeBackpropFilter', filterInputs(hx, hdy), attrs, { heap: true }).output;
        if (i % 3 === 0) rt.tensor('float32', x.shape, x.data).dispose(); // 6 KB: a leak would grow the heap
        out.dispose();
      };
      assertNoHeapGrowth(rt, call);
      hx.dispose();
      hdy.dispose();
    });
  });
}
