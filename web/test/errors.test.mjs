// Bad inputs give a GradrtError with TensorFlow's code name, never a crash: argument
// checks, the security-advisory PoCs of shared/spec/ops.md section 7, heap limits.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { init } from '../src/index.js';
import { FLAVOURS, runtime, iota, f32, assertCode } from './util.js';

const S1 = [1, 1, 1, 1];
const ones = (shape) => f32(shape, new Float32Array(shape.reduce((a, b) => a * b, 1)).fill(1));
const i64 = (v) => ({ dtype: 'int64', shape: [v.length], data: BigInt64Array.from(v.map(BigInt)) });

for (const [flavour, options] of FLAVOURS) {
  describe(`errors (${flavour})`, async () => {
    const rt = await runtime(options);
    const dxArgs = { input_sizes: [1, 4, 4, 1], filter: ones([2, 2, 1, 1]), out_backprop: ones([1, 4, 4, 1]) };
    const bpi = (attrs, inputs = dxArgs) => () => rt.runOp('Conv2DBackpropInput', inputs, attrs);

    it('unknown op -> NotFound', () => assertCode(() => rt.runOp('Conv3DBackpropInput', {}, {}), 'NotFound'));
    it('unknown backend -> NotFound', () => assertCode(() => rt.runOp('Conv2DBackpropInput', dxArgs, { strides: S1, padding: 'SAME' }, { backend: 'tpu' }), 'NotFound'));
    it('strides [1,0,1,1] -> InvalidArgument naming strides', () => assertCode(bpi({ strides: [1, 0, 1, 1], padding: 'SAME' }), 'InvalidArgument', /stride/i));
    it('strides of length 3 -> InvalidArgument', () => assertCode(bpi({ strides: [1, 1, 1], padding: 'SAME' }), 'InvalidArgument'));
    it('missing strides -> InvalidArgument', () => assertCode(bpi({ padding: 'SAME' }), 'InvalidArgument', /strides/));
    it('padding FOO -> InvalidArgument', () => assertCode(bpi({ strides: S1, padding: 'FOO' }), 'InvalidArgument', /padding/));
    it('data_format NDHWC -> InvalidArgument', () => assertCode(bpi({ strides: S1, padding: 'SAME', data_format: 'NDHWC' }), 'InvalidArgument'));
    it('strides of the wrong JSON type -> InvalidArgument', () => assertCode(bpi({ strides: 'abc', padding: 'SAME' }), 'InvalidArgument'));
    it('negative explicit padding (testOpEdgeCases) -> InvalidArgument', () =>
      assertCode(() => rt.conv2dBackpropInput([32, 20, 20, 3], ones([18, 18, 3, 2]), ones([32, 3, 2, 2]),
        { strides: S1, padding: 'EXPLICIT', explicit_paddings: [0, 0, -1, 0, 0, 0, 0, 0] }), 'InvalidArgument', /nonnegative|negative|>= 0/));
    it('missing input -> InvalidArgument', () => assertCode(bpi({ strides: S1, padding: 'SAME' }, { input_sizes: [1, 4, 4, 1], filter: ones([2, 2, 1, 1]) }), 'InvalidArgument', /out_backprop/));
    it('float32 input_sizes -> InvalidArgument', () =>
      assertCode(bpi({ strides: S1, padding: 'SAME' }, { ...dxArgs, input_sizes: f32([4], [1, 4, 4, 1]) }), 'InvalidArgument'));
    it('negative input_sizes entry -> InvalidArgument', () =>
      assertCode(bpi({ strides: S1, padding: 'SAME' }, { ...dxArgs, input_sizes: [1, -4, 4, 1] }), 'InvalidArgument'));
    it('filter of rank 2 with 2-value input_sizes -> InvalidArgument', () =>
      assertCode(bpi({ strides: S1, padding: 'SAME' }, { input_sizes: [4, 4], filter: ones([2, 2]), out_backprop: ones([1, 4, 4, 1]) }), 'InvalidArgument'));
    it('mismatched out_backprop size -> InvalidArgument', () =>
      assertCode(bpi({ strides: S1, padding: 'VALID' }), 'InvalidArgument'));
    it('float16 filter with float32 out_backprop -> InvalidArgument', () =>
      assertCode(bpi({ strides: S1, padding: 'SAME' }, { ...dxArgs, filter: { dtype: 'float16', shape: [2, 2, 1, 1], data: new Uint16Array(4) } }), 'InvalidArgument'));

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

    // shared/spec/ops.md section 7: every PoC is a clean error or the documented result.
    it('#1 CVE-2021-29524 Conv2DBackpropFilter division by zero', () => {
      try {
        const out = rt.conv2dBackpropFilter(ones([0, 0, 1, 0]), [1, 1, 1, 1], ones([0, 0, 1, 1]), { strides: [1, 66, 18, 1], padding: 'SAME' }).output;
        assert.deepEqual(Array.from(out.data), [0]);
      } catch (e) {
        assert.equal(e.code, 'InvalidArgument');
      }
    });
    it('#2 CVE-2021-29525 Conv2DBackpropInput filter [0,1,5,0]', () => {
      const out = rt.conv2dBackpropInput([52, 1, 1, 5], ones([0, 1, 5, 0]), ones([52, 1, 1, 0]), { strides: S1, padding: 'SAME' }).output;
      assert.deepEqual(out.shape, [52, 1, 1, 5]);
      assert.ok(out.data.every((v) => v === 0));
    });
    it('#4 CVE-2021-29538 Conv2DBackpropFilter all-zero shapes', () => {
      try {
        const out = rt.conv2dBackpropFilter(ones([0, 0, 0, 0]), [0, 0, 0, 0], ones([0, 0, 0, 0]), { strides: S1, padding: 'SAME', use_cudnn_on_gpu: false }).output;
        assert.equal(out.data.length, 0);
      } catch (e) {
        assert.equal(e.code, 'InvalidArgument');
      }
    });
    it('#5 CVE-2021-29540 Conv2DBackpropFilter overflow -> InvalidArgument', () => {
      assertCode(() => rt.conv2dBackpropFilter(f32([1, 1, 1, 2], [1, 2]), [1, 1, 1, 1], ones([1, 1, 1, 1]), { strides: [1, 66, 49, 1], padding: 'VALID' }), 'InvalidArgument');
      assertCode(() => rt.conv2dBackpropFilter(ones([0, 1, 1, 5]), [3, 8, 1, 1], ones([0, 1, 1, 1]), { strides: S1, padding: 'VALID' }), 'InvalidArgument');
    });
    it('#6 CVE-2021-29550 FractionalAvgPool ratio just above 1 -> InvalidArgument', () =>
      assertCode(() => rt.fractionalAvgPool(f32([1, 1, 1, 1], [60]), { pooling_ratio: [1, 1.0000014345305555, 1, 1] }), 'InvalidArgument', /[Pp]ooling ratio/));
    it('#7 CVE-2021-29578 FractionalAvgPoolGrad short sequences -> InvalidArgument', () =>
      assertCode(() => rt.fractionalAvgPoolGrad([1, 3, 2, 3], f32([1, 1, 1, 1], [2]), [1], [1], { overlapping: false }), 'InvalidArgument'));
    it('#8 CVE-2021-29583 FusedBatchNorm scale size -> InvalidArgument', () =>
      assertCode(() => rt.fusedBatchNorm(ones([10, 10, 10, 6]), ones([1]), ones([1]), ones([1]), ones([1]), { epsilon: 0, exponential_avg_factor: 0, is_training: false }), 'InvalidArgument', /scale/));
    it('#9 CVE-2021-37651 FractionalAvgPoolGrad zero batch -> InvalidArgument', () =>
      assertCode(() => rt.fractionalAvgPoolGrad([0, 1, 2, 3], f32([1, 2, 2, 1], [541, 541, 541, 541]), [0, 0, 0, 0, 0], [-2, 0, 0, 2, 0], { overlapping: true }), 'InvalidArgument'));
    it('#10 CVE-2021-41223 FusedBatchNormGrad shape mismatch -> InvalidArgument', () =>
      assertCode(() => rt.fusedBatchNormGrad(f32([1, 1, 3, 3], iota(9).map((v) => v - 1)), f32([1, 1, 1, 2], [0, 1]), ones([2]), ones([2]), ones([3]),
        { epsilon: 1, data_format: 'NCHW', is_training: true }), 'InvalidArgument', /same shape/));
    it('#11 CVE-2022-21730 negative sequence values -> InvalidArgument', () =>
      assertCode(() => rt.fractionalAvgPoolGrad([2, 2, 2, 2], f32([1, 2, 3, 2], iota(12)), [-10, 1, 2, 3], [1, 2, 3, 4], { overlapping: true }), 'InvalidArgument'));
    it('#12 CVE-2022-35963 huge negative orig shape -> InvalidArgument', () =>
      assertCode(() => rt.fractionalAvgPoolGrad(i64([-1879048192, -1879048192, -1879048192, -1879048192]),
        { dtype: 'float64', shape: [0, 0, 0, 0], data: new Float64Array(0) }, [1, 1, 1, 1], [1, 1, 1, 1], { overlapping: true }), 'InvalidArgument'));
    it('#13 CVE-2022-35999 empty out_backprop -> zeros', () => {
      const out = rt.conv2dBackpropInput([3, 1, 1, 2], ones([1, 3, 2, 3]), ones([3, 1, 0, 3]), { strides: [1, 1, 2, 1], padding: 'VALID' }).output;
      assert.deepEqual(Array.from(out.data), [0, 0, 0, 0, 0, 0]);
    });
    it('#14 CVE-2022-35969 scalar out_backprop -> InvalidArgument', () =>
      assertCode(() => rt.conv2dBackpropInput([65534, 65534], f32([3, 3, 2, 2], new Float32Array(36).fill(0.159749106)), f32([], [0]), { strides: S1, padding: 'SAME' }), 'InvalidArgument'));
    it('#15 CVE-2023-25801 FractionalAvgPool batch ratio -> Unimplemented', () =>
      assertCode(() => rt.fractionalAvgPool(ones([3, 30, 50, 3]), { pooling_ratio: [2, 1.5, 1.5, 1], pseudo_random: true, overlapping: true }), 'Unimplemented'));
    it('DepthwiseConv2dNativeBackpropFilter with empty out_backprop -> zeros', () => {
      const out = rt.depthwiseConv2dNativeBackpropFilter(ones([0, 3, 3, 2]), [2, 2, 2, 1], ones([0, 2, 2, 2]), { strides: S1, padding: 'VALID' });
      assert.deepEqual(out.output.shape, [2, 2, 2, 1]);
      assert.ok(out.output.data.every((v) => v === 0));
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
