// The shared test data of the repository (../tests/data/{golden,hostile}/*.json, also read by
// the C++ suite: tests/data.h; format in tests/data/README.md), turned into runOp arguments.
// Found next to the web/ folder of a checkout (`npm pack` does not ship them).
import { readFileSync, readdirSync } from 'node:fs';
import { fromBf16, bf16Bits, fromHalf, halfBits } from './half.js';

const DATA = new URL('../../tests/data/', import.meta.url);

// [{ file, doc }] for every *.json of tests/data/<sub>, sorted by name.
export function loadData(sub) {
  const dir = new URL(`${sub}/`, DATA);
  return readdirSync(dir).filter((f) => f.endsWith('.json')).sort()
    .map((file) => ({ file, doc: JSON.parse(readFileSync(new URL(file, dir), 'utf8')) }));
}

// A JSON number, or "NaN" / "Infinity" / "-Infinity" / a decimal string (integers beyond 2^53).
export const num = (v) => (typeof v === 'string' ? (v === 'NaN' ? NaN : Number(v)) : v);

const CTORS = { float32: Float32Array, float64: Float64Array, float16: Uint16Array, bfloat16: Uint16Array, int32: Int32Array, int64: BigInt64Array };
const ENCODE = { float16: halfBits, bfloat16: bf16Bits, int64: (v) => BigInt(v), int32: (v) => Number(v) };

// {dtype, shape, values | fill | iota} -> { dtype, shape, data }; dtype "T" takes `T`. A
// tensor without data (C++: a null pointer) has no typed array of its size here.
export function tensor(spec, T = 'float32') {
  const dtype = spec.dtype === 'T' ? T : spec.dtype;
  const shape = spec.shape.map(num);
  const count = shape.reduce((a, b) => a * b, 1);
  const Ctor = CTORS[dtype] || Float32Array;
  const enc = ENCODE[dtype] || ((v) => v);
  const isInt = dtype === 'int32' || dtype === 'int64';
  let values = [];
  if (spec.values) values = spec.values.map((v) => (isInt ? v : num(v)));
  else if (spec.fill !== undefined) values = Array.from({ length: count }, () => (isInt ? spec.fill : num(spec.fill)));
  else if (spec.iota !== undefined) values = Array.from({ length: count }, (_, i) => (isInt ? BigInt(spec.iota) + BigInt(i) : num(spec.iota) + i));
  return { dtype, shape, data: Ctor.from(values, enc) };
}

// Attributes: {"float": "NaN"} is a non-finite float (which the npm package refuses: not JSON).
export function attrs(json) {
  const conv = (v) => (Array.isArray(v) ? v.map(conv) : v !== null && typeof v === 'object' ? num(v.float) : v);
  return Object.fromEntries(Object.entries(json).map(([k, v]) => [k, conv(v)]));
}

// An output tensor's elements as numbers (half types decoded), or bigints for int64.
export function elements(t) {
  if (t.dtype === 'float16') return Array.from(t.data, fromHalf);
  if (t.dtype === 'bfloat16') return Array.from(t.data, fromBf16);
  return Array.from(t.data);
}

// got (an output tensor) against the JSON values: NaN matches NaN, int64 compares exactly.
export function checkValues(assert, t, want, { rtol = 0, atol = 0, label = '' } = {}) {
  const got = elements(t);
  assert.equal(got.length, want.length, `${label}: ${got.length} elements, want ${want.length}`);
  for (let i = 0; i < want.length; i++) {
    if (typeof got[i] === 'bigint') {
      assert.equal(got[i], BigInt(want[i]), `${label} [${i}]`);
      continue;
    }
    const w = num(want[i]);
    const ok = got[i] === w || (Number.isNaN(got[i]) && Number.isNaN(w)) || Math.abs(got[i] - w) <= atol + rtol * Math.abs(w);
    if (!ok) assert.fail(`${label}: element ${i}: got ${got[i]}, want ${w}`);
  }
}
