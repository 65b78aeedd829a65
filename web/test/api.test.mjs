// The package's API: init and flavour choice, ops() from the op list, helpers, no heap
// growth over 10,000 calls, and a smoke fuzz of the raw C ABI (wasm/bindings.cpp).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { init, hasWasmSimd, GradrtError } from '../src/index.js';
import { load } from '../src/loader.js';
import { helperName } from '../src/runtime.js';
import { FLAVOURS, runtime, iota, f32, rng, random, assertClose, assertCode, assertNoHeapGrowth } from './util.js';
import { convGeometry, depthwiseConv2dNativeBackpropInput } from './reference.js';

// GRADRT_OP(Name, stem, "inputs", "outputs") lines of core/include/gradrt/ops.inc
const OPS_INC = readFileSync(new URL('../../core/include/gradrt/ops.inc', import.meta.url), 'utf8');
const OP_LIST = [...OPS_INC.matchAll(/^GRADRT_OP\((\w+),\s*\w+,\s*"([^"]*)",\s*"([^"]*)"\)/gm)].map(([, name, i, o]) => ({
  name, inputs: i.split(','), outputs: o.split(','),
}));

describe('init', () => {
  it("simd: 'auto' follows feature detection", async () => {
    assert.equal((await init()).simd, hasWasmSimd());
  });
  it("simd: 'auto' picks the scalar build when the SIMD probe fails", async () => {
    const validate = WebAssembly.validate;
    WebAssembly.validate = () => false;
    try {
      assert.equal(hasWasmSimd(), false);
      const rt = await init({ simd: 'auto' });
      assert.equal(rt.simd, false);
      await assert.rejects(init({ simd: true }), (e) => e instanceof GradrtError && e.code === 'Unavailable');
    } finally {
      WebAssembly.validate = validate;
    }
  });
  it('wasmPath (string path and URL) and wasmBinary', async () => {
    const dist = new URL('../dist/', import.meta.url);
    assert.equal((await init({ wasmPath: dist, simd: false })).simd, false);
    assert.equal((await init({ wasmPath: dist.pathname, simd: true })).simd, true);
    const bytes = readFileSync(new URL('gradrt-scalar.wasm', dist));
    assert.equal((await init({ wasmBinary: bytes, simd: false })).ops().length, OP_LIST.length);
  });
});

for (const [flavour, options] of FLAVOURS) {
  describe(`api (${flavour})`, async () => {
    const rt = await runtime(options);

    it('the cpu backend runs the kernels of this flavour', () => {
      const cpu = rt.backends().find((b) => b.name === 'cpu');
      assert.ok(cpu && cpu.available);
      assert.equal(/scalar/.test(cpu.detail), flavour === 'scalar', cpu.detail);
    });

    it('ops() is the op list of ops.inc', () => {
      assert.deepEqual(rt.ops(), OP_LIST);
    });

    it('a camelCase helper for every op', () => {
      assert.equal(helperName('Conv2DBackpropInput'), 'conv2dBackpropInput');
      assert.equal(helperName('DepthwiseConv2dNativeBackpropFilter'), 'depthwiseConv2dNativeBackpropFilter');
      assert.equal(helperName('FusedBatchNormGradV3'), 'fusedBatchNormGradV3');
      for (const op of OP_LIST) assert.equal(typeof rt[helperName(op.name)], 'function', op.name);
    });

    // Outputs of >= 128 KiB take fresh_arrays.js's path (Node: Buffer.allocUnsafeSlow, no zero
    // fill): every element written, each call its own exactly sized buffer, plans too.
    it('large fresh outputs: values, own buffers, after many calls', () => {
      const xs = [1, 40, 40, 24], ws = [3, 3, 24, 1];
      const attrs = { strides: [1, 1, 1, 1], padding: 'SAME' };
      const w = random(216, rng(11)), dy = random(40 * 40 * 24, rng(12));
      const want = depthwiseConv2dNativeBackpropInput(convGeometry(xs, ws, attrs, true), w, dy);
      const inputs = { input_sizes: xs, filter: f32(ws, w), out_backprop: f32(xs, dy) };
      const plan = rt.prepare('DepthwiseConv2dNativeBackpropInput', { input_sizes: xs, filter: { dtype: 'float32', shape: ws },
        out_backprop: { dtype: 'float32', shape: xs } }, attrs);
      const seen = [];
      for (let i = 0; i < 40; i++) {
        const out = (i % 2 ? plan.run(inputs) : rt.runOp('DepthwiseConv2dNativeBackpropInput', inputs, attrs)).output.data;
        assert.ok(out instanceof Float32Array);
        assert.equal(out.byteOffset, 0);
        assert.equal(out.buffer.byteLength, 40 * 40 * 24 * 4);
        assert.ok(!seen.includes(out.buffer));
        seen.push(out.buffer);
      }
      seen.forEach((b, i) => assertClose(new Float32Array(b), want, { rtol: 1e-5, atol: 1e-5, label: `call ${i}` }));
      plan.dispose();
    });

    it('the contract example', () => {
      const w = new Float32Array(3 * 3 * 3 * 16).fill(0.5);
      const dy = new Float32Array(8 * 8 * 16).fill(1);
      const out = rt.runOp('Conv2DBackpropInput',
        { input_sizes: { dtype: 'int32', shape: [4], data: Int32Array.of(1, 8, 8, 3) },
          filter: { dtype: 'float32', shape: [3, 3, 3, 16], data: w },
          out_backprop: { dtype: 'float32', shape: [1, 8, 8, 16], data: dy } },
        { strides: [1, 1, 1, 1], padding: 'SAME' });
      assert.equal(out.output.dtype, 'float32');
      assert.deepEqual(out.output.shape, [1, 8, 8, 3]);
      assert.ok(out.output.data instanceof Float32Array);
      assert.equal(out.output.data[9 * 3], 72); // an interior pixel: 9 taps * 16 channels * 0.5
      const viaHelper = rt.conv2dBackpropInput(Int32Array.of(1, 8, 8, 3), { dtype: 'float32', shape: [3, 3, 3, 16], data: w },
        { dtype: 'float32', shape: [1, 8, 8, 16], data: dy }, { strides: Int32Array.of(1, 1, 1, 1), padding: 'SAME' });
      assert.deepEqual(viaHelper.output.data, out.output.data);
    });

    it('outputs are copies that survive later calls', () => {
      const a = rt.conv2dBackpropFilter(f32([1, 2, 3, 1], iota(6)), [2, 2, 1, 1], f32([1, 1, 2, 1], iota(2)), { strides: [1, 1, 1, 1], padding: 'VALID' }).output;
      for (let i = 0; i < 20; i++) rt.conv2dBackpropFilter(f32([1, 2, 3, 1], iota(6)), [2, 2, 1, 1], f32([1, 1, 2, 1], [9, 9]), { strides: [1, 1, 1, 1], padding: 'VALID' });
      assert.deepEqual(Array.from(a.data), [5, 8, 14, 17]);
    });

    it('no heap growth over 10,000 calls (successes and failures)', () => {
      const inputs = { input_sizes: [1, 8, 8, 3], filter: f32([3, 3, 3, 4], iota(108)), out_backprop: f32([1, 8, 8, 4], iota(256)) };
      const attrs = { strides: [1, 1, 1, 1], padding: 'SAME' };
      const call = (i) => {
        if (i % 10 === 9) {
          assert.throws(() => rt.runOp('Conv2DBackpropInput', inputs, { ...attrs, strides: [1, 0, 1, 1] }), GradrtError);
        } else {
          rt.runOp('Conv2DBackpropInput', inputs, attrs);
        }
      };
      assertNoHeapGrowth(rt, call);
    });

    // runOp(op, inputs, attrs, { outputs }): results written into the caller's arrays.
    const convInputs = { input_sizes: [1, 8, 8, 3], filter: f32([3, 3, 3, 4], iota(108)), out_backprop: f32([1, 8, 8, 4], iota(256)) };
    const convAttrs = { strides: [1, 1, 1, 1], padding: 'SAME' };

    it('options.outputs: a typed array or a tensor receives the output, same values as by default', () => {
      const want = rt.runOp('Conv2DBackpropInput', convInputs, convAttrs).output;
      const buffer = new Float32Array(192).fill(NaN);
      const got = rt.runOp('Conv2DBackpropInput', convInputs, convAttrs, { outputs: { output: buffer } }).output;
      assert.equal(got.data, buffer);
      assert.equal(got.dtype, 'float32');
      assert.deepEqual(got.shape, [1, 8, 8, 3]);
      assert.deepEqual(buffer, want.data);
      // a tensor, and a view at an offset into a larger buffer
      const big = new Float32Array(200).fill(-1);
      const view = big.subarray(4, 196);
      const t = { dtype: 'float32', shape: [1, 8, 8, 3], data: view };
      assert.equal(rt.conv2dBackpropInput(convInputs.input_sizes, convInputs.filter, convInputs.out_backprop, convAttrs, { outputs: { output: t } }).output.data, view);
      assert.deepEqual(view, want.data);
      assert.deepEqual(Array.from(big.subarray(0, 4)), [-1, -1, -1, -1]);
      assert.deepEqual(Array.from(big.subarray(196)), [-1, -1, -1, -1]);
    });

    it('options.outputs: several outputs, null drops one, others stay fresh copies', () => {
      const next = rng(5);
      const x = f32([1, 4, 4, 3], random(48, next)), dy = f32([1, 4, 4, 3], random(48, next));
      const c = (v) => f32([3], v);
      const inputs = { y_backprop: dy, x, scale: c([1, 2, 3]), reserve_space_1: c([0.1, 0.2, 0.3]), reserve_space_2: c([1, 2, 0.5]) };
      const attrs = { epsilon: 0.001, is_training: true };
      const want = rt.runOp('FusedBatchNormGrad', inputs, attrs);
      const xb = new Float32Array(48), sb = new Float32Array(3);
      const got = rt.runOp('FusedBatchNormGrad', inputs, attrs, { outputs: { x_backprop: xb, scale_backprop: sb, offset_backprop: null } });
      assert.deepEqual(Object.keys(got), Object.keys(want).filter((k) => k !== 'offset_backprop'));
      assert.equal(got.x_backprop.data, xb);
      assert.equal(got.scale_backprop.data, sb);
      for (const k of Object.keys(got)) assert.deepEqual(got[k], want[k], k);
    });

    it('options.outputs: a wrong destination is InvalidArgument and nothing is written', () => {
      const buffer = new Float32Array(192).fill(7);
      const run = (outputs) => rt.runOp('Conv2DBackpropInput', convInputs, convAttrs, { outputs });
      assertCode(() => run({ output: new Float32Array(191) }), 'InvalidArgument', /needs a Float32Array\(192\)/);
      assertCode(() => run({ output: new Float64Array(192) }), 'InvalidArgument', /Float64Array/);
      assertCode(() => run({ output: { dtype: 'float64', shape: [192], data: buffer } }), 'InvalidArgument', /dtype float64/);
      assertCode(() => run({ nope: buffer }), 'InvalidArgument', /no output 'nope'/);
      assertCode(() => run({ output: [1, 2] }), 'InvalidArgument', /typed array/);
      assertCode(() => run([buffer]), 'InvalidArgument');
      assert.ok(buffer.every((v) => v === 7));
      // the default path still works after the failures
      assert.equal(run({}).output.data.length, 192);
    });

    it('no heap growth over 10,000 calls into caller-owned outputs', () => {
      const out = new Float32Array(192);
      const filterOut = new Float32Array(108);
      const x = f32([1, 8, 8, 3], iota(192));
      const call = (i) => {
        if (i % 2) rt.runOp('Conv2DBackpropInput', convInputs, convAttrs, { outputs: { output: out } });
        else rt.runOp('Conv2DBackpropFilter', { input: x, filter_sizes: [3, 3, 3, 4], out_backprop: convInputs.out_backprop }, convAttrs, { outputs: { output: filterOut } });
      };
      assertNoHeapGrowth(rt, call);
      assert.deepEqual(out, rt.runOp('Conv2DBackpropInput', convInputs, convAttrs).output.data);
    });

    it('dispose() ends the runtime', async () => {
      const own = await init(options);
      own.dispose();
      assertCode(() => own.runOp('Conv2DBackpropInput', convInputs, convAttrs), 'Unavailable', /disposed/);
      own.dispose();
    });
  });

  describe(`C ABI smoke fuzz (${flavour})`, async () => {
    const { module: m } = await load(options);
    const codes = new Set([0, 1, 2, 3, 4, 5, 6]);
    const cstr = (s) => {
      const b = new TextEncoder().encode(s);
      const p = m._gradrt_alloc(b.length + 1);
      m.HEAPU8.set(b, p);
      m.HEAPU8[p + b.length] = 0;
      return p;
    };

    it('random tables, counts, pointers and attrs never trap', () => {
      const next = rng(1234);
      const pick = (a) => a[Math.floor(((next() + 1) / 2) * a.length)];
      const heap = () => m.HEAPU8.length;
      const ops = OP_LIST.map((o) => o.name).concat(['', 'X']);
      const names = ['input_sizes', 'filter', 'out_backprop', 'x', 'input', 'y_backprop', 'scale', 'reserve_space_1', 'reserve_space_2', 'out', ''];
      const attrs = ['{}', '{"strides":[1,1,1,1],"padding":"SAME"}', '{"strides":[1,2,2,1],"padding":"VALID","data_format":"NCHW"}',
        '{"a":', '{"strides":[1,1,1,1],"strides":[1,1,1,1]}', '[1]', '{"padding":"EXPLICIT","explicit_paddings":[0,0,1,1,1,1,0,0],"strides":[1,1,1,1]}',
        '{"pooling_ratio":[1,1.5,1.5,1],"deterministic":true,"seed":1,"seed2":2}', '{"epsilon":1e400}', '{"x":"\\u0000"}', '{"\\"":[[[[[[]]]]]]}'];
      const data = m._gradrt_alloc(4096);
      for (let iter = 0; iter < 3000; iter++) {
        const table = [];
        const strings = [];
        const n = Math.floor(((next() + 1) / 2) * 6);
        for (let k = 0; k < n; k++) {
          const rank = pick([0, 1, 2, 4, 4, 4, 9]);
          const dims = Array.from({ length: Math.min(rank, 8) }, () => pick([0, 1, 2, 3, 4, 7]));
          const dtype = pick([0, 1, 2, 2, 2, 3, 4, 5, 6, -1, 2.5]);
          const elems = dims.reduce((a, b) => a * b, 1);
          const size = [2, 2, 4, 8, 4, 8][dtype] || 4;
          const bytes = pick([elems * size, elems * size, 3, 0, 2 ** 32]);
          const name = cstr(pick(names));
          strings.push(name);
          table.push(name, dtype, rank, pick([data, data, data + 1, 0, heap() - 8, heap() + 64, 2 ** 33]), bytes, ...dims);
        }
        if (next() < -0.9) table.push(1, 2); // trailing garbage
        const tp = table.length ? m._gradrt_alloc(table.length * 8) : 0;
        if (tp) new Float64Array(m.HEAPU8.buffer, tp, table.length).set(table);
        const op = cstr(pick(ops)), at = cstr(pick(attrs));
        const len = pick([table.length, table.length, table.length + 5, 1e6]);
        const code = m._gradrt_run(op, pick([at, at, 0]), pick([tp, tp, tp + 4, heap() - 4]), len, pick([0, 0, op]));
        assert.ok(codes.has(code), `status ${code}`);
        m._gradrt_release_outputs();
        m._gradrt_dealloc(op);
        m._gradrt_dealloc(at);
        if (tp) m._gradrt_dealloc(tp);
        strings.forEach((p) => m._gradrt_dealloc(p));
      }
      assert.equal(m._gradrt_alloc(-1), 0);
      assert.equal(m._gradrt_alloc(2 ** 40), 0);
    });

    it('gradrt_alloc returns 128-byte aligned blocks', () => {
      // Odd sizes in between, so that a malloc that aligns to 8 or 16 only would show.
      const blocks = [0, 1, 3, 8, 13, 60, 64, 65, 100, 1000, 4097, 70000].map((n) => m._gradrt_alloc(n));
      for (const p of blocks) {
        assert.ok(p > 0);
        assert.equal(p % 128, 0, `block at ${p}`);
      }
      blocks.forEach((p) => m._gradrt_dealloc(p));
    });
  });
}
