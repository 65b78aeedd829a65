// The WASM SIMD filter-gradient path of DepthwiseConv2dNativeBackpropFilter (3x3, M == 1,
// dilation 1, column stride 1 or 2, channels a multiple of 4: simd/kernels/depthwise_wasm.h,
// dwf_wasm_chunks): runs of output rows per kernel call, rows with ky outside x, image
// boundaries inside a chunk, more than 16 chunks' worth of rows, pad_left > 0, channel counts
// with a partial 16-channel group; against the plain-JS reference. Also that a non-finite x
// value reaches only the taps that read it (the edge steps skip taps, never multiply by 0).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as ref from './reference.js';
import { FLAVOURS, runtime, rng, random, f32, count, assertClose } from './util.js';

const abs = (a) => Float64Array.from(a, Math.abs);
const CASES = [
  { x: [1, 12, 12, 8], strides: [1, 2, 2, 1], padding: 'SAME' },
  { x: [1, 13, 11, 20], strides: [1, 2, 2, 1], padding: 'SAME' }, // odd sizes: pad_left 1
  { x: [2, 9, 10, 4], strides: [1, 1, 1, 1], padding: 'SAME' },
  { x: [3, 8, 7, 12], strides: [1, 1, 2, 1], padding: 'VALID' },
  { x: [2, 11, 9, 16], strides: [1, 2, 1, 1], padding: 'SAME' },
  { x: [1, 40, 6, 4], strides: [1, 1, 1, 1], padding: 'SAME' }, // 40 rows: 16 chunks
  { x: [1, 9, 9, 8], strides: [1, 2, 2, 1], padding: 'EXPLICIT', explicit_paddings: [0, 0, 2, 1, 1, 2, 0, 0] },
  { x: [1, 2, 3, 4], strides: [1, 1, 1, 1], padding: 'SAME' },
  // Rows past dwf2_wasm's 32 KiB L1 part size: 1-row parts with the sums carried between them
  // (and the 4-channel tail), 2-row parts at stride 2.
  { x: [1, 9, 120, 12], strides: [1, 1, 1, 1], padding: 'SAME' },
  { x: [2, 11, 200, 20], strides: [1, 2, 2, 1], padding: 'SAME' },
];

for (const [flavour, options] of FLAVOURS) {
  describe(`depthwise filter gradient, wasm row kernels (${flavour})`, async () => {
    const rt = await runtime(options);
    CASES.forEach((c, i) => {
      it(`case ${i}: x ${c.x} strides ${c.strides} ${c.padding}`, () => {
        const w = [3, 3, c.x[3], 1];
        const attrs = { strides: c.strides, padding: c.padding, ...(c.explicit_paddings ? { explicit_paddings: c.explicit_paddings } : {}) };
        const g = ref.convGeometry(c.x, w, attrs, true);
        const next = rng(300 + i);
        const x = random(count(c.x), next), dy = random(g.N * g.OH * g.OW * g.OC, next);
        const dw = rt.runOp('DepthwiseConv2dNativeBackpropFilter', { input: f32(c.x, x), filter_sizes: w, out_backprop: f32([g.N, g.OH, g.OW, g.OC], dy) }, attrs).output;
        assert.deepEqual(dw.shape, w);
        assertClose(dw.data, ref.depthwiseConv2dNativeBackpropFilter(g, x, dy), { rtol: 3e-5, atol: 1e-6, scale: ref.depthwiseConv2dNativeBackpropFilter(g, abs(x), abs(dy)) });
      });
    });

    // The forward rows with more than 4 taps not in consecutive-offset groups (stride 2,
    // dilation 2, 5x5): dw_row's interior runs dw_interior_wasm (simd/wasm/depthwise.h), which
    // offsets the caller's tap tables to the first interior pixel itself. Widths give 8-,
    // 4- and 1-pixel blocks; channel counts give the scalar channel tail; against the reference.
    const FORWARD = [
      { x: [1, 9, 41, 8], w: 3, strides: [1, 2, 2, 1], padding: 'SAME' },
      { x: [2, 7, 30, 6], w: 3, strides: [1, 2, 2, 1], padding: 'VALID' },
      { x: [1, 11, 27, 12], w: 3, strides: [1, 1, 1, 1], padding: 'SAME', dilations: [1, 2, 2, 1] },
      { x: [1, 12, 45, 4], w: 5, strides: [1, 2, 2, 1], padding: 'SAME' },
      { x: [1, 10, 23, 9], w: 5, strides: [1, 1, 1, 1], padding: 'SAME', dilations: [1, 1, 2, 1] },
    ];
    FORWARD.forEach((c, i) => {
      it(`forward, more than 4 taps a row ${i}: x ${c.x} ${c.w}x${c.w} strides ${c.strides}${c.dilations ? ` dilations ${c.dilations}` : ''}`, () => {
        const w = [c.w, c.w, c.x[3], 1];
        const attrs = { strides: c.strides, padding: c.padding, ...(c.dilations ? { dilations: c.dilations } : {}) };
        const g = ref.convGeometry(c.x, w, attrs, true);
        const next = rng(500 + i);
        const x = random(count(c.x), next), wt = random(count(w), next);
        const y = rt.runOp('DepthwiseConv2dNative', { input: f32(c.x, x), filter: f32(w, wt) }, attrs).output;
        assert.deepEqual(y.shape, [g.N, g.OH, g.OW, g.OC]);
        assertClose(y.data, ref.depthwiseConv2dNative(g, x, wt), { rtol: 3e-5, atol: 1e-6, scale: ref.depthwiseConv2dNative(g, abs(x), abs(wt)) });
      });
    });

    // The input gradient's stride-2 rows (in_w == 2*out_w, 3 taps: dwx2_wasm, simd/wasm/
    // depthwise.h) go in blocks of 8 dy pixels, each block starting from the sum carried over
    // its first pixel's left neighbour: widths with whole and partial blocks (17, 19, 8, 41 dy
    // pixels), 1-3 filter rows per dx row (row stride 2 and 1), channel counts with a scalar
    // tail; against the reference.
    const STRIDE2_ROWS = [
      { x: [1, 6, 38, 12], strides: [1, 2, 2, 1] },
      { x: [2, 5, 34, 6], strides: [1, 1, 2, 1] },
      { x: [1, 4, 16, 8], strides: [1, 1, 2, 1] },
      { x: [1, 3, 82, 4], strides: [1, 2, 2, 1] },
    ];
    STRIDE2_ROWS.forEach((c, i) => {
      it(`input gradient, stride-2 rows ${i}: x ${c.x} strides ${c.strides}`, () => {
        const w = [3, 3, c.x[3], 1];
        const attrs = { strides: c.strides, padding: 'SAME' };
        const g = ref.convGeometry(c.x, w, attrs, true);
        const next = rng(700 + i);
        const wt = random(count(w), next), dy = random(g.N * g.OH * g.OW * g.OC, next);
        const dx = rt.runOp('DepthwiseConv2dNativeBackpropInput', { input_sizes: c.x, filter: f32(w, wt), out_backprop: f32([g.N, g.OH, g.OW, g.OC], dy) }, attrs).output;
        assert.deepEqual(dx.shape, c.x);
        assertClose(dx.data, ref.depthwiseConv2dNativeBackpropInput(g, wt, dy), { rtol: 3e-5, atol: 1e-6, scale: ref.depthwiseConv2dNativeBackpropInput(g, abs(wt), abs(dy)) });
      });
    });

    it('an infinite x value reaches only the taps that read it', () => {
      for (const [xs, strides] of [[[1, 8, 8, 4], [1, 2, 2, 1]], [[1, 7, 7, 8], [1, 1, 1, 1]], [[1, 9, 9, 4], [1, 2, 2, 1]]]) {
        const w = [3, 3, xs[3], 1];
        const attrs = { strides, padding: 'SAME' };
        const g = ref.convGeometry(xs, w, attrs, true);
        const next = rng(7);
        const x = random(count(xs), next), dy = random(g.N * g.OH * g.OW * g.OC, next);
        // Pixel (0, 0) and the last pixel of the first row, channel 0.
        x[0] = Infinity;
        x[(xs[2] - 1) * xs[3]] = -Infinity;
        const dw = rt.runOp('DepthwiseConv2dNativeBackpropFilter', { input: f32(xs, x), filter_sizes: w, out_backprop: f32([g.N, g.OH, g.OW, g.OC], dy) }, attrs).output;
        const want = ref.depthwiseConv2dNativeBackpropFilter(g, Float64Array.from(x), Float64Array.from(dy));
        for (let t = 0; t < dw.data.length; t++) {
          const label = `${xs} strides ${strides}: tap ${Math.floor(t / xs[3])} channel ${t % xs[3]}`;
          assert.equal(Number.isFinite(dw.data[t]), Number.isFinite(want[t]), `${label}: got ${dw.data[t]}, want ${want[t]}`);
          if (!Number.isFinite(want[t])) assert.ok(Object.is(dw.data[t], want[t]) || (Number.isNaN(dw.data[t]) && Number.isNaN(want[t])), `${label}: got ${dw.data[t]}, want ${want[t]}`);
        }
      }
    });
  });
}
