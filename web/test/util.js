// Shared test helpers: both wasm flavours, deterministic fills, tolerance checks.
import assert from 'node:assert/strict';
import { init } from '../src/index.js';

// GRADRT_TEST_FLAVOURS=simd (or scalar) restricts the tests to one build.
const only = process.env.GRADRT_TEST_FLAVOURS;
export const FLAVOURS = [
  ['simd', { simd: true }],
  ['scalar', { simd: false }],
].filter(([name]) => !only || only.split(',').includes(name));

const runtimes = new Map();
export function runtime(options) {
  const key = JSON.stringify(options);
  if (!runtimes.has(key)) runtimes.set(key, init(options));
  return runtimes.get(key);
}

// 1, 2, 3, ... (TF's _CreateNumpyTensor fill)
export function iota(n, Ctor = Float32Array) {
  return Ctor.from({ length: n }, (_, i) => i + 1);
}

// Deterministic uniform values in [-1, 1), rounded to float32.
export function rng(seed) {
  let s = seed >>> 0 || 1;
  return () => {
    s ^= s << 13;
    s >>>= 0;
    s ^= s >>> 17;
    s ^= s << 5;
    s >>>= 0;
    return Math.fround((s / 4294967296) * 2 - 1);
  };
}

export function random(n, next, Ctor = Float32Array) {
  return Ctor.from({ length: n }, next);
}

export function f32(shape, data) {
  return { dtype: 'float32', shape, data: data instanceof Float32Array ? data : Float32Array.from(data) };
}

export const count = (shape) => shape.reduce((a, b) => a * b, 1);

// |got - want| <= atol + rtol * scale, elementwise; scale defaults to |want|.
export function assertClose(got, want, { rtol = 1e-5, atol = 1e-6, scale, label = '' } = {}) {
  assert.equal(got.length, want.length, `${label}: length ${got.length} vs ${want.length}`);
  for (let i = 0; i < want.length; i++) {
    const s = scale ? scale[i] : Math.abs(want[i]);
    const err = Math.abs(got[i] - want[i]);
    if (!(err <= atol + rtol * s)) {
      assert.fail(`${label}: element ${i}: got ${got[i]}, want ${want[i]} (|err| ${err.toExponential(2)} > ${(atol + rtol * s).toExponential(2)})`);
    }
  }
}

// Calls call(0 .. warmup-1), then call(0 .. calls-1): rt's heap must not grow over the latter.
export function assertNoHeapGrowth(rt, call, { warmup = 200, calls = 10000 } = {}) {
  for (let i = 0; i < warmup; i++) call(i);
  const before = rt.heapBytes();
  for (let i = 0; i < calls; i++) call(i);
  assert.equal(rt.heapBytes(), before, `heap grew over ${calls} calls`);
}

// Expects fn to throw a GradrtError with this code (and message matching re, if given).
export function assertCode(fn, code, re) {
  assert.throws(fn, (e) => {
    assert.equal(e.name, 'GradrtError', `not a GradrtError: ${e}`);
    assert.equal(e.code, code, `code ${e.code} (${e.message}), want ${code}`);
    if (re) assert.match(e.message, re);
    return true;
  });
}
