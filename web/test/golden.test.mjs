// TensorFlow's own test numbers (shared/spec/ops.md 2.5, 3.5, 4.4, 5.7, 5.10, 6.5, 6.12),
// run through the npm package on both wasm flavours.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FLAVOURS, runtime, iota, f32, count, assertClose } from './util.js';

const S1 = [1, 1, 1, 1];
const pads = (t, b, l, r) => ({ padding: 'EXPLICIT', explicit_paddings: [0, 0, t, b, l, r, 0, 0] });

// [input_sizes, filter shape, out_backprop shape, attrs, expected]
const BACKPROP_INPUT = [
  ['Depth1Valid', [1, 2, 3, 1], [2, 2, 1, 1], [1, 1, 2, 1], { strides: S1, padding: 'VALID' }, [1, 4, 4, 3, 10, 8]],
  ['Empty', [0, 2, 3, 1], [2, 2, 1, 1], [0, 1, 2, 1], { strides: S1, padding: 'VALID' }, []],
  ['Depth3Valid', [1, 2, 3, 3], [2, 2, 3, 3], [1, 1, 2, 3], { strides: S1, padding: 'VALID' },
    [14, 32, 50, 100, 163, 226, 167, 212, 257, 122, 140, 158, 478, 541, 604, 437, 482, 527]],
  ['Stride1x2', [1, 3, 6, 1], [2, 2, 1, 1], [1, 2, 3, 1], { strides: [1, 1, 2, 1], padding: 'VALID' },
    [1, 2, 2, 4, 3, 6, 7, 12, 11, 18, 15, 24, 12, 16, 15, 20, 18, 24]],
  ['StrideTwoFilterOneSame', [1, 4, 4, 1], [1, 1, 1, 1], [1, 2, 2, 1], { strides: [1, 2, 2, 1], padding: 'SAME' },
    [1, 0, 2, 0, 0, 0, 0, 0, 3, 0, 4, 0, 0, 0, 0, 0]],
  ['KernelSizeMatchesInputSize', [1, 2, 2, 1], [2, 2, 1, 2], [1, 1, 1, 2], { strides: S1, padding: 'VALID' }, [5, 11, 17, 23]],
  ['InputSizesOnlySpatial', [2, 2], [2, 2, 1, 2], [1, 1, 1, 2], { strides: S1, padding: 'VALID' }, [5, 11, 17, 23]],
  ['Degenerate', [3, 1, 1, 2], [1, 3, 2, 3], [3, 1, 0, 3], { strides: [1, 1, 2, 1], padding: 'VALID' }, [0, 0, 0, 0, 0, 0]],
  ['Padding1x1', [1, 2, 3, 1], [2, 2, 1, 2], [1, 3, 4, 2], { strides: S1, ...pads(1, 1, 1, 1) }, [164, 236, 308, 452, 524, 596]],
  ['Padding1_8_4_2', [1, 5, 3, 1], [3, 2, 1, 1], [1, 4, 8, 1], { strides: [1, 3, 1, 1], ...pads(1, 8, 4, 2) },
    [31, 38, 45, 49, 60, 71, 37, 40, 43, 87, 94, 101, 137, 148, 159]],
  ['SameOddPadding', [1, 3, 3, 1], [2, 2, 1, 1], [1, 3, 3, 1], { strides: S1, padding: 'SAME' }, [1, 4, 7, 7, 23, 33, 19, 53, 63]],
  ['SameStride2', [1, 5, 5, 1], [3, 3, 1, 1], [1, 3, 3, 1], { strides: [1, 2, 2, 1], padding: 'SAME' },
    [5, 14, 10, 24, 15, 16, 40, 26, 60, 36, 20, 44, 25, 54, 30, 46, 100, 56, 120, 66, 35, 74, 40, 84, 45]],
  ['Dilation2x1', [1, 3, 6, 1], [2, 2, 1, 1], [1, 1, 5, 1], { strides: S1, padding: 'VALID', dilations: [1, 2, 1, 1] },
    [1, 4, 7, 10, 13, 10, 0, 0, 0, 0, 0, 0, 3, 10, 17, 24, 31, 20]],
];

// [input shape, filter_sizes, out_backprop shape, attrs, expected]
const BACKPROP_FILTER = [
  ['Depth1Valid', [1, 2, 3, 1], [2, 2, 1, 1], [1, 1, 2, 1], { strides: S1, padding: 'VALID' }, [5, 8, 14, 17]],
  ['Empty', [1, 2, 3, 1], [2, 2, 1, 0], [1, 1, 2, 0], { strides: S1, padding: 'VALID' }, []],
  ['EmptyInput', [0, 2, 3, 1], [2, 2, 1, 1], [0, 1, 2, 1], { strides: S1, padding: 'VALID' }, [0, 0, 0, 0]],
  ['Depth3Valid', [1, 2, 3, 3], [2, 2, 3, 3], [1, 1, 2, 3], { strides: S1, padding: 'VALID' },
    [17, 22, 27, 22, 29, 36, 27, 36, 45, 32, 43, 54, 37, 50, 63, 42, 57, 72, 62, 85, 108, 67, 92, 117, 72, 99, 126, 77, 106, 135, 82, 113, 144, 87, 120, 153]],
  ['Stride1x2', [1, 3, 6, 1], [2, 2, 1, 1], [1, 2, 3, 1], { strides: [1, 1, 2, 1], padding: 'VALID' }, [161, 182, 287, 308]],
  ['StrideTwoFilterOneSame', [1, 4, 4, 1], [1, 1, 1, 1], [1, 2, 2, 1], { strides: [1, 2, 2, 1], padding: 'SAME' }, [78]],
  ['KernelSizeMatchesInputSize', [1, 2, 2, 1], [2, 2, 1, 2], [1, 1, 1, 2], { strides: S1, padding: 'VALID' }, [1, 2, 2, 4, 3, 6, 4, 8]],
  ['Padding1x1', [1, 2, 3, 1], [2, 2, 1, 2], [1, 3, 4, 2], { strides: S1, ...pads(1, 1, 1, 1) }, [401, 422, 359, 380, 233, 254, 191, 212]],
  ['SameOddPadding', [1, 3, 3, 1], [2, 2, 1, 1], [1, 3, 3, 1], { strides: S1, padding: 'SAME' }, [285, 186, 154, 94]],
  ['Dilation2x1', [1, 3, 6, 1], [2, 2, 1, 1], [1, 1, 5, 1], { strides: S1, padding: 'VALID', dilations: [1, 2, 1, 1] }, [55, 70, 235, 250]],
];

// [input shape, filter shape, out_backprop shape, attrs, dx, dw]
const DEPTHWISE = [
  ['DW-A', [1, 2, 3, 2], [2, 2, 2, 2], [1, 1, 2, 4], { strides: S1, padding: 'VALID' },
    [5, 25, 34, 106, 61, 113, 29, 81, 146, 282, 149, 233],
    [16, 20, 34, 40, 28, 36, 54, 64, 52, 68, 94, 112, 64, 84, 114, 136]],
  ['DW-B', [1, 4, 4, 2], [3, 3, 2, 1], [1, 2, 2, 2], { strides: [1, 2, 2, 1], padding: 'SAME' },
    [1, 4, 3, 8, 8, 20, 9, 16, 7, 16, 9, 20, 32, 56, 27, 40, 18, 40, 30, 56, 88, 144, 66, 96, 35, 48, 45, 60, 104, 136, 63, 80],
    [248, 312, 280, 352, 110, 144, 376, 472, 408, 512, 158, 208, 80, 124, 88, 136, 21, 44]],
  ['DW-C', [1, 2, 2, 1], [2, 2, 1, 2], [1, 2, 2, 2], { strides: S1, ...pads(1, 0, 0, 1) }, [34, 124, 61, 166], [19, 22, 10, 12, 50, 60, 22, 28]],
];

// [seeds, H, W, ratio, pseudo_random, rows, cols] (5.7; sequences of gradrt's Philox generator)
const R2 = Math.SQRT2, R3 = Math.sqrt(3);
const SEQUENCES = [
  [[87654321, 341261001], 7, 13, [1, R2, R3, 1], true, [0, 1, 3, 5, 7], [0, 2, 4, 6, 7, 9, 11, 13]],
  [[87654321, 341261001], 7, 13, [1, R2, R3, 1], false, [0, 2, 3, 5, 7], [0, 2, 4, 6, 7, 9, 11, 13]],
  [[87654321, 341261005], 7, 13, [1, R2, R3, 1], false, [0, 2, 4, 6, 7], [0, 2, 4, 6, 8, 10, 12, 13]],
  [[1, 0], 10, 10, [1, 1.5, 1.5, 1], true, [0, 2, 4, 5, 7, 9, 10], [0, 2, 4, 5, 7, 9, 10]],
  [[1, 0], 10, 10, [1, 1.5, 1.5, 1], false, [0, 1, 3, 5, 7, 8, 10], [0, 2, 4, 5, 6, 8, 10]],
  [[0, 1], 10, 10, [1, 1.5, 1.5, 1], true, [0, 2, 3, 5, 7, 8, 10], [0, 2, 4, 6, 7, 9, 10]],
  [[1, 1], 10, 10, [1, 1.5, 1.5, 1], false, [0, 2, 3, 4, 6, 8, 10], [0, 2, 4, 5, 7, 8, 10]],
  [[12345, 67890], 10, 10, [1, 1.5, 1.5, 1], false, [0, 2, 3, 5, 7, 9, 10], [0, 1, 3, 5, 7, 8, 10]],
  [[87654321, 341261001], 20, 30, [1, R3, R2, 1], true, [0, 1, 3, 5, 7, 9, 11, 12, 14, 16, 18, 20],
    [0, 2, 3, 4, 6, 7, 9, 10, 12, 13, 14, 16, 17, 19, 20, 22, 23, 24, 26, 27, 29, 30]],
  [[87654321, 341261005], 17, 23, [1, Math.sqrt(13), Math.sqrt(7), 1], false, [0, 4, 9, 13, 17], [0, 3, 6, 9, 12, 15, 18, 20, 23]],
  [[87654321, 341261005], 17, 23, [1, Math.sqrt(13), Math.sqrt(7), 1], true, [0, 4, 8, 12, 17], [0, 3, 6, 9, 11, 14, 17, 20, 23]],
];

const X8 = [1, 2, 3, 4, 5, 6, 7, 8];
const DY8 = [1, 0, 2, -1, 0, 3, -1, 1];

for (const [flavour, options] of FLAVOURS) {
  describe(`goldens (${flavour})`, async () => {
    const rt = await runtime(options);

    for (const [name, sizes, wShape, dyShape, attrs, want] of BACKPROP_INPUT) {
      it(`Conv2DBackpropInput ${name}`, () => {
        const { output } = rt.runOp('Conv2DBackpropInput', {
          input_sizes: sizes, filter: f32(wShape, iota(count(wShape))), out_backprop: f32(dyShape, iota(count(dyShape))),
        }, attrs);
        assert.equal(output.dtype, 'float32');
        if (sizes.length === 4) assert.deepEqual(output.shape, sizes);
        assertClose(output.data, want, { rtol: 1e-6, label: name });
      });
    }

    for (const [name, xShape, sizes, dyShape, attrs, want] of BACKPROP_FILTER) {
      it(`Conv2DBackpropFilter ${name}`, () => {
        const { output } = rt.conv2dBackpropFilter(f32(xShape, iota(count(xShape))), Int32Array.from(sizes), f32(dyShape, iota(count(dyShape))), attrs);
        assert.deepEqual(output.shape, sizes);
        assertClose(output.data, want, { rtol: 1e-6, label: name });
      });
    }

    it('DepthwiseConv2dNative testConv2D2x2Filter (layout)', () => {
      const { output } = rt.runOp('DepthwiseConv2dNative', { input: f32([1, 2, 3, 2], iota(12)), filter: f32([2, 2, 2, 2], iota(16)) },
        { strides: S1, padding: 'VALID' });
      assert.deepEqual(output.shape, [1, 1, 2, 4]);
      assertClose(output.data, [196, 216, 272, 296, 252, 280, 344, 376], { label: 'forward' });
    });

    for (const [name, xShape, wShape, dyShape, attrs, dx, dw] of DEPTHWISE) {
      it(`DepthwiseConv2dNativeBackpropInput/Filter ${name}`, () => {
        const dy = f32(dyShape, iota(count(dyShape)));
        const a = rt.depthwiseConv2dNativeBackpropInput(xShape, f32(wShape, iota(count(wShape))), dy, attrs).output;
        assert.deepEqual(a.shape, xShape);
        assertClose(a.data, dx, { label: `${name} dx` });
        const b = rt.depthwiseConv2dNativeBackpropFilter(f32(xShape, iota(count(xShape))), wShape, dy, attrs).output;
        assert.deepEqual(b.shape, wShape);
        assertClose(b.data, dw, { label: `${name} dw` });
      });
    }

    for (const [[seed, seed2], H, W, ratio, pseudo, rows, cols] of SEQUENCES) {
      it(`FractionalAvgPool sequences seeds (${seed}, ${seed2}) ${H}x${W} ${pseudo ? 'pseudo' : 'random'}`, () => {
        const out = rt.fractionalAvgPool(f32([1, H, W, 1], iota(H * W)), {
          pooling_ratio: ratio, pseudo_random: pseudo, overlapping: false, deterministic: true, seed, seed2,
        });
        assert.deepEqual(Array.from(out.row_pooling_sequence.data, Number), rows);
        assert.deepEqual(Array.from(out.col_pooling_sequence.data, Number), cols);
        assert.deepEqual(out.output.shape, [1, rows.length - 1, cols.length - 1, 1]);
      });
    }

    it('FractionalAvgPool 30x50 ratio 2 pseudo: all gaps 2', () => {
      const out = rt.fractionalAvgPool(f32([1, 30, 50, 1], iota(1500)), { pooling_ratio: [1, 2, 2, 1], pseudo_random: true, deterministic: true, seed: 7, seed2: 9 });
      assert.deepEqual(Array.from(out.row_pooling_sequence.data, Number), Array.from({ length: 16 }, (_, i) => 2 * i));
      assert.deepEqual(Array.from(out.col_pooling_sequence.data, Number), Array.from({ length: 26 }, (_, i) => 2 * i));
    });

    it('FractionalAvgPool testIntegerTensorInput matrix (float), overlapping', () => {
      const v = [2, 6, 4, 1, 3, 6, 8, 9, 1, 6, 6, 8, 3, 9, 8, 2, 5, 6, 2, 7, 9, 5, 4, 5, 8, 5, 0, 5, 7, 4, 4, 4, 5, 9, 7, 2];
      const out = rt.fractionalAvgPool(f32([1, 6, 6, 1], v), {
        pooling_ratio: [1, R3, R2, 1], pseudo_random: true, overlapping: true, deterministic: true, seed: 87654321, seed2: 341261001,
      });
      assert.deepEqual(Array.from(out.row_pooling_sequence.data, Number), [0, 2, 4, 6]);
      assert.deepEqual(Array.from(out.col_pooling_sequence.data, Number), [0, 2, 3, 5, 6]);
      assertClose(out.output.data, [5.555556, 3.666667, 4.777778, 6.666667, 5.666667, 4.833333, 4.777778, 5.0, 4.333333, 4.75, 5.666667, 3.0],
        { atol: 1e-5 });
    });

    it('FractionalAvgPoolGrad doc example', () => {
      const args = [[1, 1, 5, 1], f32([1, 1, 2, 1], [3, 6]), [0, 1], [0, 2, 4]];
      assertClose(rt.fractionalAvgPoolGrad(...args, { overlapping: true }).output.data, [1, 1, 3, 2, 2]);
      assertClose(rt.fractionalAvgPoolGrad(...args, { overlapping: false }).output.data, [1.5, 1.5, 3, 3, 0]);
    });

    it('FusedBatchNorm forward (6.5)', () => {
      const C2 = (v) => f32([2], v);
      const nhwc = rt.fusedBatchNormV3(f32([1, 2, 2, 2], X8), C2([1, 2]), C2([0.5, -0.5]), f32([0], []), f32([0], []), { epsilon: 0.001 });
      assertClose(nhwc.y.data, [-0.841507, -3.183013, 0.052831, -1.394338, 0.947169, 0.394338, 1.841507, 2.183013], { atol: 2e-6 });
      assertClose(nhwc.batch_mean.data, [4, 5]);
      assertClose(nhwc.reserve_space_2.data, [5, 5]);
      assertClose(nhwc.batch_variance.data, [6.666667, 6.666667], { atol: 2e-6 });
      const f = rt.fusedBatchNormV3(f32([1, 2, 2, 2], X8), C2([1, 2]), C2([0.5, -0.5]), C2([1, 1]), C2([2, 2]), { epsilon: 0.001, exponential_avg_factor: 0.5 });
      assertClose(f.batch_mean.data, [2.5, 3.0]);
      assertClose(f.batch_variance.data, [4.333333, 4.333333], { atol: 2e-6 });
      const nchw = rt.fusedBatchNormV3(f32([1, 2, 2, 2], X8), C2([1, 2]), C2([0.5, -0.5]), f32([0], []), f32([0], []), { epsilon: 0.001, data_format: 'NCHW' });
      assertClose(nchw.y.data, [-0.841104, 0.052965, 0.947035, 1.841104, -3.182209, -1.394070, 0.394070, 2.182209], { atol: 2e-6 });
      assertClose(nchw.batch_mean.data, [2.5, 6.5]);
      assertClose(nchw.batch_variance.data, [1.666667, 1.666667], { atol: 2e-6 });
      const inf = rt.fusedBatchNorm(f32([1, 2, 2, 2], X8), C2([1, 2]), C2([0.5, -0.5]), C2([3, 6]), C2([4, 1]), { epsilon: 0.001, is_training: false });
      assertClose(inf.y.data, [-0.499875, -8.496003, 0.5, -4.498001, 1.499875, -0.5, 2.49975, 3.498001], { atol: 2e-6 });
      const one = rt.fusedBatchNorm(f32([1, 1, 1, 1], [5]), f32([1], [1]), f32([1], [0]), f32([0], []), f32([0], []), {});
      assertClose(one.y.data, [0]);
      assertClose(one.batch_variance.data, [0]);
    });

    for (const op of ['FusedBatchNormGrad', 'FusedBatchNormGradV2', 'FusedBatchNormGradV3']) {
      it(`${op} (6.12)`, () => {
        const C2 = (v) => f32([2], v);
        const extra = op === 'FusedBatchNormGradV3' ? { reserve_space_3: f32([0], []) } : {};
        const run = (rs1, rs2, attrs) => rt.runOp(op, {
          y_backprop: f32([1, 2, 2, 2], DY8), x: f32([1, 2, 2, 2], X8), scale: C2([1, 2]), reserve_space_1: C2(rs1), reserve_space_2: C2(rs2), ...extra,
        }, { epsilon: 0.001, ...attrs });
        let g = run([4, 5], [5, 5], {});
        assertClose(g.x_backprop.data, [-0.312911, 0.268114, 0.491922, -1.252135, -0.044753, 1.699304, -0.134258, -0.715282], { atol: 2e-6 });
        assertClose(g.scale_backprop.data, [-3.577351, 3.130182], { atol: 2e-6 });
        assertClose(g.offset_backprop.data, [2, 3]);
        const names = Object.keys(g);
        assert.equal(names.length, 5);
        for (const n of names.slice(3)) assert.deepEqual(g[n].shape, [0]);
        g = run([3, 6], [4, 1], { is_training: false });
        assertClose(g.x_backprop.data, [0.499938, 0, 0.999875, -1.999001, 0, 5.997002, -0.499938, 1.999001], { atol: 2e-6 });
        assertClose(g.scale_backprop.data, [-2.999625, 3.998001], { atol: 2e-6 });
        g = run([2.5, 6.5], [1.25, 1.25], { data_format: 'NCHW' });
        assertClose(g.x_backprop.data, [-0.088978, -0.625706, 1.519775, -0.805091, -1.609111, 3.933978, -3.039908, 0.715041], { atol: 2e-6 });
        assertClose(g.scale_backprop.data, [-1.788139, -0.447035], { atol: 2e-6 });
        assertClose(g.offset_backprop.data, [2, 3]);
      });
    }
  });
}
