// Every op of core/include/gradrt/ops.inc on random cases, against the plain-JS
// references of ./reference.js, on both wasm flavours and both wasm backends (cpu, reference).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as ref from './reference.js';
import { FLAVOURS, runtime, rng, random, f32, count, assertClose } from './util.js';
import { fromBf16, bf16Bits, fromHalf, halfBits } from './half.js';

const abs = (a) => Float64Array.from(a, Math.abs);
const nhwc = (shape, fmt) => (fmt === 'NCHW' ? [shape[0], shape[2], shape[3], shape[1]] : shape);
const toFmt = (fmt, shape, data) => (fmt === 'NCHW' ? ref.toNCHW(shape, data) : data);
const fromFmt = (fmt, shape, data) => (fmt === 'NCHW' ? ref.toNHWC(shape, data) : data);
const inFmt = (fmt, [n, h, w, c]) => (fmt === 'NCHW' ? [n, c, h, w] : [n, h, w, c]);

// x shape NHWC, w HWIO, attrs in TF's form (strides etc. in data_format order).
const CONV_CASES = [
  { x: [1, 5, 5, 3], w: [3, 3, 3, 4], attrs: { strides: [1, 1, 1, 1], padding: 'SAME' } },
  { x: [2, 7, 6, 5], w: [3, 2, 5, 6], attrs: { strides: [1, 2, 1, 1], padding: 'VALID' } },
  { x: [1, 9, 9, 8], w: [3, 3, 8, 17], attrs: { strides: [1, 2, 2, 1], padding: 'SAME' } },
  { x: [1, 6, 6, 4], w: [3, 3, 2, 6], attrs: { strides: [1, 1, 1, 1], padding: 'SAME' } }, // 2 groups
  { x: [1, 8, 8, 3], w: [3, 3, 3, 5], attrs: { strides: [1, 1, 1, 1], padding: 'SAME', dilations: [1, 2, 2, 1] } },
  { x: [1, 5, 7, 2], w: [2, 3, 2, 3], attrs: { strides: [1, 2, 3, 1], padding: 'EXPLICIT', explicit_paddings: [0, 0, 1, 2, 0, 3, 0, 0] } },
  { x: [1, 6, 5, 3], w: [3, 3, 3, 4], attrs: { strides: [1, 1, 2, 2], padding: 'SAME', data_format: 'NCHW' } },
  { x: [1, 4, 4, 33], w: [1, 1, 33, 19], attrs: { strides: [1, 1, 1, 1], padding: 'VALID' } },
  { x: [1, 14, 14, 32], w: [3, 3, 32, 40], attrs: { strides: [1, 1, 1, 1], padding: 'SAME' } },
];

const DEPTHWISE_CASES = [
  { x: [1, 7, 7, 5], w: [3, 3, 5, 2], attrs: { strides: [1, 1, 1, 1], padding: 'SAME' } },
  { x: [2, 9, 8, 16], w: [3, 3, 16, 1], attrs: { strides: [1, 2, 2, 1], padding: 'SAME' } },
  { x: [1, 6, 6, 3], w: [2, 2, 3, 3], attrs: { strides: [1, 1, 1, 1], padding: 'VALID', dilations: [1, 2, 2, 1] } },
  { x: [1, 7, 9, 4], w: [3, 3, 4, 1], attrs: { strides: [1, 1, 2, 1], padding: 'SAME' } },
  { x: [1, 6, 5, 3], w: [3, 3, 3, 2], attrs: { strides: [1, 1, 2, 2], padding: 'SAME', data_format: 'NCHW' } },
  { x: [1, 5, 5, 19], w: [3, 3, 19, 1], attrs: { strides: [1, 1, 1, 1], padding: 'EXPLICIT', explicit_paddings: [0, 0, 2, 0, 1, 1, 0, 0] } },
];

// Runs the three conv-like ops of one case and checks them; fmt order handled here.
function checkConvCase(rt, c, depthwise, backend, next) {
  const fmt = c.attrs.data_format || 'NHWC';
  const g = ref.convGeometry(c.x, c.w, c.attrs, depthwise);
  const yShape = [g.N, g.OH, g.OW, g.OC];
  const x = random(count(c.x), next), w = random(count(c.w), next), dy = random(count(yShape), next);
  const xF = toFmt(fmt, c.x, x), dyF = toFmt(fmt, yShape, dy);
  const opts = { backend };
  const tol = (bound) => ({ rtol: 3e-5, atol: 1e-6, scale: bound });
  const names = depthwise
    ? ['DepthwiseConv2dNative', 'DepthwiseConv2dNativeBackpropInput', 'DepthwiseConv2dNativeBackpropFilter']
    : ['Conv2D', 'Conv2DBackpropInput', 'Conv2DBackpropFilter'];
  const fwd = depthwise ? ref.depthwiseConv2dNative : ref.conv2d;
  const bin = depthwise ? ref.depthwiseConv2dNativeBackpropInput : ref.conv2dBackpropInput;
  const bfl = depthwise ? ref.depthwiseConv2dNativeBackpropFilter : ref.conv2dBackpropFilter;

  const y = rt.runOp(names[0], { input: f32(inFmt(fmt, c.x), xF), filter: f32(c.w, w) }, c.attrs, opts).output;
  assert.deepEqual(y.shape, inFmt(fmt, yShape));
  assertClose(fromFmt(fmt, y.shape, y.data), fwd(g, x, w), { label: names[0], ...tol(fwd(g, abs(x), abs(w))) });

  const dx = rt.runOp(names[1], { input_sizes: inFmt(fmt, c.x), filter: f32(c.w, w), out_backprop: f32(inFmt(fmt, yShape), dyF) }, c.attrs, opts).output;
  assert.deepEqual(dx.shape, inFmt(fmt, c.x));
  assertClose(fromFmt(fmt, dx.shape, dx.data), bin(g, w, dy), { label: names[1], ...tol(bin(g, abs(w), abs(dy))) });

  const dw = rt.runOp(names[2], { input: f32(inFmt(fmt, c.x), xF), filter_sizes: c.w, out_backprop: f32(inFmt(fmt, yShape), dyF) }, c.attrs, opts).output;
  assert.deepEqual(dw.shape, c.w);
  assertClose(dw.data, bfl(g, x, dy), { label: names[2], ...tol(bfl(g, abs(x), abs(dy))) });

  if (!depthwise) {
    // V2: sizes from the shape of a tensor whose values are never read.
    const dx2 = rt.runOp('Conv2DBackpropInputV2', { input: f32(inFmt(fmt, c.x), new Float32Array(count(c.x)).fill(NaN)), filter: f32(c.w, w), out_backprop: f32(inFmt(fmt, yShape), dyF) }, c.attrs, opts).output;
    assert.deepEqual(dx2.data, dx.data);
    const dw2 = rt.runOp('Conv2DBackpropFilterV2', { input: f32(inFmt(fmt, c.x), xF), filter: f32(c.w, new Float32Array(count(c.w)).fill(NaN)), out_backprop: f32(inFmt(fmt, yShape), dyF) }, c.attrs, opts).output;
    assert.deepEqual(dw2.data, dw.data);
  }
}

// A random non-decreasing pooling sequence 0 = s[0] <= ... <= s[out] = size with gaps >= 1.
function sequence(size, out, next) {
  const cuts = new Set();
  while (cuts.size < out - 1) cuts.add(1 + Math.floor(((next() + 1) / 2) * (size - 1)));
  return [0, ...[...cuts].sort((a, b) => a - b), size];
}

for (const [flavour, options] of FLAVOURS) {
  describe(`ops vs JS reference (${flavour})`, async () => {
    const rt = await runtime(options);
    for (const backend of ['auto', 'reference']) {
      CONV_CASES.forEach((c, i) => {
        it(`Conv2D/Conv2DBackpropInput(V2)/Conv2DBackpropFilter(V2) case ${i} [${backend}]`, () => checkConvCase(rt, c, false, backend, rng(100 + i)));
      });
      DEPTHWISE_CASES.forEach((c, i) => {
        it(`DepthwiseConv2dNative(BackpropInput|BackpropFilter) case ${i} [${backend}]`, () => checkConvCase(rt, c, true, backend, rng(200 + i)));
      });

      for (const [shape, fmt, training] of [[[2, 3, 4, 5], 'NHWC', true], [[2, 3, 4, 5], 'NCHW', true], [[2, 3, 4, 5], 'NHWC', false],
        [[1, 7, 11, 37], 'NHWC', true], [[2, 5, 3, 4], 'NCHW', false]]) {
        it(`FusedBatchNorm(V2,V3) + FusedBatchNormGrad(V2,V3) ${shape} ${fmt} training=${training} [${backend}]`, () => {
          const next = rng(shape.reduce((a, b) => a * 31 + b, 7));
          const C = fmt === 'NCHW' ? shape[1] : shape[3];
          const xs = fmt === 'NCHW' ? [shape[0], shape[2], shape[3], shape[1]] : shape;
          const x = random(count(shape), () => 3 * next() + 1), dy = random(count(shape), next);
          const scale = random(C, () => next() + 1.5), offset = random(C, next);
          const mean = random(C, next), variance = random(C, () => next() + 1.2);
          const attrs = { epsilon: 0.001, is_training: training, data_format: fmt };
          const xN = fromFmt(fmt, shape, x), dyN = fromFmt(fmt, shape, dy);
          const want = ref.fusedBatchNorm(xN, C, scale, offset, mean, variance, attrs);
          for (const op of ['FusedBatchNorm', 'FusedBatchNormV2', 'FusedBatchNormV3']) {
            const out = rt.runOp(op, { x: f32(shape, x), scale: f32([C], scale), offset: f32([C], offset), mean: f32([C], mean), variance: f32([C], variance) }, attrs, { backend });
            assertClose(fromFmt(fmt, shape, out.y.data), want.y, { rtol: 1e-4, atol: 1e-4, label: `${op} y` });
            assertClose(out.batch_mean.data, want.batch_mean, { rtol: 1e-5, atol: 1e-5, label: `${op} batch_mean` });
            assertClose(out.batch_variance.data, want.batch_variance, { rtol: 1e-4, atol: 1e-5, label: `${op} batch_variance` });
            if (training) assertClose(out.reserve_space_2.data, want.reserve_space_2, { rtol: 1e-4, atol: 1e-5, label: `${op} reserve_space_2` });
          }
          const [rs1, rs2] = training ? [Float32Array.from(want.reserve_space_1), Float32Array.from(want.reserve_space_2)] : [mean, variance];
          const g = ref.fusedBatchNormGrad(dyN, xN, C, scale, rs1, rs2, attrs);
          for (const op of ['FusedBatchNormGrad', 'FusedBatchNormGradV2', 'FusedBatchNormGradV3']) {
            const inputs = { y_backprop: f32(shape, dy), x: f32(shape, x), scale: f32([C], scale), reserve_space_1: f32([C], rs1), reserve_space_2: f32([C], rs2) };
            if (op === 'FusedBatchNormGradV3') inputs.reserve_space_3 = f32([0], []);
            const out = rt.runOp(op, inputs, attrs, { backend });
            const R = count(xs) / C;
            assertClose(fromFmt(fmt, shape, out.x_backprop.data), g.x_backprop, { rtol: 1e-4, atol: 1e-5 * Math.sqrt(R), label: `${op} x_backprop` });
            assertClose(out.scale_backprop.data, g.scale_backprop, { rtol: 1e-4, atol: 1e-5 * R, label: `${op} scale_backprop` });
            assertClose(out.offset_backprop.data, g.offset_backprop, { rtol: 1e-4, atol: 1e-5 * R, label: `${op} offset_backprop` });
          }
        });
      }

      for (const overlapping of [false, true]) {
        it(`FractionalAvgPool + FractionalAvgPoolGrad overlapping=${overlapping} [${backend}]`, () => {
          const next = rng(overlapping ? 11 : 12);
          const shape = [2, 9, 11, 3];
          const value = random(count(shape), next);
          const fwd = rt.fractionalAvgPool(f32(shape, value), { pooling_ratio: [1, 1.5, 1.7, 1], overlapping, deterministic: true, seed: 3, seed2: 4 }, { backend });
          const rows = Array.from(fwd.row_pooling_sequence.data, Number), cols = Array.from(fwd.col_pooling_sequence.data, Number);
          assertClose(fwd.output.data, ref.fractionalAvgPool(shape, value, rows, cols, overlapping), { label: 'FractionalAvgPool' });
          const rs = sequence(9, 5, next), cs = sequence(11, 4, next);
          const dyShape = [2, 5, 4, 3];
          const dy = random(count(dyShape), next);
          const out = rt.fractionalAvgPoolGrad(BigInt64Array.from(shape.map(BigInt)), f32(dyShape, dy), rs, cs, { overlapping }, { backend }).output;
          assert.deepEqual(out.shape, shape);
          assertClose(out.data, ref.fractionalAvgPoolGrad(shape, dyShape, dy, rs, cs, overlapping), { label: 'FractionalAvgPoolGrad' });
        });
      }
    }

    it('AvgPoolGrad equivalences (5.10): 7x7 window 3 stride 2, 10x10 window 2', () => {
      const dy = random(9, rng(5));
      const a = rt.fractionalAvgPoolGrad([1, 7, 7, 1], f32([1, 3, 3, 1], dy), [0, 2, 4, 7], [0, 2, 4, 7], { overlapping: true }).output;
      assertClose(a.data, ref.fractionalAvgPoolGrad([1, 7, 7, 1], [1, 3, 3, 1], dy, [0, 2, 4, 7], [0, 2, 4, 7], true));
      const dy2 = random(25, rng(6));
      const b = rt.fractionalAvgPoolGrad([1, 10, 10, 1], f32([1, 5, 5, 1], dy2), [0, 2, 4, 6, 8, 10], [0, 2, 4, 6, 8, 10], {}).output;
      for (let i = 0; i < 10; i++) for (let j = 0; j < 10; j++) assert.ok(Math.abs(b.data[i * 10 + j] - dy2[Math.floor(i / 2) * 5 + Math.floor(j / 2)] / 4) < 1e-7);
    });

    it("attr T=bfloat16 on float32 tensors: inputs rounded to bfloat16, float32 outputs (contract)", () => {
      const args = [[1, 2, 3, 1], f32([2, 2, 1, 1], [1.001, 2, 3, 4]), f32([1, 1, 2, 1], [1, 2])];
      const attrs = { strides: [1, 1, 1, 1], padding: 'VALID' };
      assert.equal(rt.conv2dBackpropInput(...args, attrs).output.data[0], Math.fround(1.001));
      const out = rt.conv2dBackpropInput(...args, { ...attrs, T: 'bfloat16' }).output;
      assert.equal(out.dtype, 'float32');
      assert.deepEqual(Array.from(out.data), [1, 4, 4, 3, 10, 8]);
    });

    it('float64 Conv2DBackpropInput and Conv2DBackpropFilter (tight tolerance)', () => {
      const c = CONV_CASES[2];
      const g = ref.convGeometry(c.x, c.w, c.attrs);
      const next = rng(77);
      const w = random(count(c.w), next, Float64Array), dy = random(g.N * g.OH * g.OW * g.OC, next, Float64Array), x = random(count(c.x), next, Float64Array);
      const yShape = [g.N, g.OH, g.OW, g.OC];
      const dx = rt.conv2dBackpropInput(c.x, { dtype: 'float64', shape: c.w, data: w }, { dtype: 'float64', shape: yShape, data: dy }, c.attrs).output;
      assert.equal(dx.dtype, 'float64');
      assertClose(dx.data, ref.conv2dBackpropInput(g, w, dy), { rtol: 1e-12, atol: 1e-12 });
      const dw = rt.conv2dBackpropFilter({ dtype: 'float64', shape: c.x, data: x }, c.w, { dtype: 'float64', shape: yShape, data: dy }, c.attrs).output;
      assertClose(dw.data, ref.conv2dBackpropFilter(g, x, dy), { rtol: 1e-12, atol: 1e-12 });
    });

    it('bfloat16 and float16 Conv2DBackpropInput and DepthwiseConv2dNativeBackpropFilter (float32 accumulation)', () => {
      const next = rng(9);
      const k64 = () => Math.round(next() * 64) / 64; // exact in half and bfloat16
      const c = CONV_CASES[0], d = DEPTHWISE_CASES[0];
      for (const [dtype, toBits, fromBits, rtol] of [['bfloat16', bf16Bits, fromBf16, 1e-2], ['float16', halfBits, fromHalf, 2e-3]]) {
        const g = ref.convGeometry(c.x, c.w, c.attrs);
        const w = Float64Array.from({ length: count(c.w) }, k64), dy = Float64Array.from({ length: g.N * g.OH * g.OW * g.OC }, k64);
        const t = (shape, v) => ({ dtype, shape, data: Uint16Array.from(v, toBits) });
        const dx = rt.conv2dBackpropInput(c.x, t(c.w, w), t([g.N, g.OH, g.OW, g.OC], dy), c.attrs).output;
        assert.equal(dx.dtype, dtype);
        assertClose(Float64Array.from(dx.data, fromBits), ref.conv2dBackpropInput(g, w, dy), { rtol, atol: 1e-3, scale: ref.conv2dBackpropInput(g, abs(w), abs(dy)), label: dtype });
        const gd = ref.convGeometry(d.x, d.w, d.attrs, true);
        const x = Float64Array.from({ length: count(d.x) }, k64), dyd = Float64Array.from({ length: gd.N * gd.OH * gd.OW * gd.OC }, k64);
        const dw = rt.depthwiseConv2dNativeBackpropFilter(t(d.x, x), d.w, t([gd.N, gd.OH, gd.OW, gd.OC], dyd), d.attrs).output;
        assertClose(Float64Array.from(dw.data, fromBits), ref.depthwiseConv2dNativeBackpropFilter(gd, x, dyd), { rtol, atol: 1e-3, scale: ref.depthwiseConv2dNativeBackpropFilter(gd, abs(x), abs(dyd)), label: `${dtype} depthwise` });
      }
    });
  });
}
