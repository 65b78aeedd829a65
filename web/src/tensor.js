// Checks and normalises the tensors handed to runOp: { dtype, shape, data }, plus the
// plain vectors (number arrays, Int32Array, BigInt64Array) accepted for shape and
// sequence inputs.
import { invalid } from './errors.js';
import { freshArray } from './fresh_arrays.js';

export const DTYPES = Object.freeze({
  float16: Uint16Array, // IEEE half bits
  bfloat16: Uint16Array, // bfloat16 bits
  float32: Float32Array,
  float64: Float64Array,
  int32: Int32Array,
  int64: BigInt64Array,
});

// The inputs that are shape or sequence vectors, with TensorFlow's dtype for them.
const VECTOR_INPUTS = Object.freeze({
  input_sizes: 'int32',
  filter_sizes: 'int32',
  orig_input_tensor_shape: 'int64',
  row_pooling_sequence: 'int64',
  col_pooling_sequence: 'int64',
});

function isVector(v) {
  return Array.isArray(v) || v instanceof Int32Array || v instanceof BigInt64Array;
}

// values (numbers or bigints) -> a typed array of dtype int32 or int64, exactly.
function integers(label, values, dtype) {
  const out = new DTYPES[dtype](values.length);
  for (let i = 0; i < values.length; i++) {
    const v = values[i];
    if (dtype === 'int64') {
      if (typeof v === 'bigint') {
        if (v < -(2n ** 63n) || v >= 2n ** 63n) throw invalid(`${label}: entry ${i} does not fit in int64`);
        out[i] = v;
      } else if (Number.isSafeInteger(v)) out[i] = BigInt(v);
      else throw invalid(`${label}: entry ${i} must be an integer (a safe integer number or a bigint), got ${String(v)}`);
    } else {
      const n = typeof v === 'bigint' ? Number(v) : v;
      if (!Number.isInteger(n) || n < -2147483648 || n > 2147483647) {
        throw invalid(`${label}: entry ${i} must be an int32 integer, got ${String(v)}`);
      }
      out[i] = n;
    }
  }
  return out;
}

function checkShape(label, shape) {
  if (!Array.isArray(shape) && !ArrayBuffer.isView(shape)) throw invalid(`${label}: shape must be an array of integers`);
  const dims = Array.from(shape, (d) => (typeof d === 'bigint' ? Number(d) : d));
  let count = 1;
  for (let i = 0; i < dims.length; i++) {
    const d = dims[i];
    if (!Number.isSafeInteger(d) || d < 0) throw invalid(`${label}: shape[${i}] must be an integer >= 0, got ${String(shape[i])}`);
    count *= d;
  }
  if (dims.length > 8) throw invalid(`${label}: rank ${dims.length} is more than 8`);
  return { dims, count };
}

// -> { Ctor: the dtype's typed array class, dims: number[], count }
export function checkDtypeShape(label, dtype, shape) {
  const Ctor = Object.prototype.hasOwnProperty.call(DTYPES, dtype) ? DTYPES[dtype] : null;
  if (!Ctor) throw invalid(`${label}: unknown dtype ${JSON.stringify(dtype)} (one of ${Object.keys(DTYPES).join(', ')})`);
  return { Ctor, ...checkShape(label, shape) };
}

// -> { dtype, shape: number[], data: typed array of the dtype }
export function toTensor(name, value) {
  const label = `input '${name}'`;
  const vectorDtype = VECTOR_INPUTS[name];
  if (isVector(value)) {
    const dtype = vectorDtype || (value instanceof Int32Array ? 'int32' : value instanceof BigInt64Array ? 'int64' : null);
    if (!dtype) throw invalid(`${label}: a plain array is accepted only for shape and sequence inputs; give { dtype, shape, data }`);
    const data = integers(label, value, dtype);
    return { dtype, shape: [data.length], data };
  }
  if (value === null || typeof value !== 'object') throw invalid(`${label}: expected a tensor { dtype, shape, data }`);
  const { dtype } = value;
  const { Ctor, dims, count } = checkDtypeShape(label, dtype, value.shape);
  let { data } = value;
  if (Array.isArray(data) && (dtype === 'int32' || dtype === 'int64')) data = integers(label, data, dtype);
  else if (Array.isArray(data) && (dtype === 'float32' || dtype === 'float64')) data = Ctor.from(data);
  else if (!(data instanceof Ctor)) throw invalid(`${label}: data must be a ${Ctor.name} for dtype ${dtype}`);
  if (data.length !== count) {
    throw invalid(`${label}: data has ${data.length} elements, shape [${dims.join(', ')}] needs ${count}`);
  }
  return { dtype, shape: dims, data };
}

// Attrs that plain JSON.stringify writes exactly (a replacer function made it several times
// slower): strings, booleans, finite numbers, and arrays of those, on a plain object.
const plainValue = (v) => typeof v === 'string' || typeof v === 'boolean' || (typeof v === 'number' && Number.isFinite(v));
function plainAttrs(attrs) {
  if (Object.getPrototypeOf(attrs) !== Object.prototype) return false;
  for (const key in attrs) {
    if (!Object.prototype.hasOwnProperty.call(attrs, key)) return false;
    const v = attrs[key];
    if (plainValue(v)) continue;
    if (!Array.isArray(v) || !v.every(plainValue)) return false;
  }
  return true;
}

// JSON for the attrs; typed arrays become lists, bigints numbers.
export function attrsJson(attrs) {
  if (attrs === undefined || attrs === null) return '{}';
  if (typeof attrs !== 'object' || Array.isArray(attrs)) throw invalid('attrs must be an object { name: value }');
  if (plainAttrs(attrs)) return JSON.stringify(attrs);
  try {
    return JSON.stringify(attrs, (key, v) => {
      if (ArrayBuffer.isView(v)) return Array.from(v, (x) => (typeof x === 'bigint' ? Number(x) : x));
      if (typeof v === 'bigint') return Number(v);
      if (typeof v === 'number' && !Number.isFinite(v)) throw invalid(`attr '${key}': ${v} is not a JSON number`);
      return v;
    });
  } catch (e) {
    throw e.code ? e : invalid(`attrs: ${e.message}`);
  }
}

// An output's bytes at heap[ptr] into `into` (a typed array of its length) or, without one, a
// fresh typed array of Ctor (fresh_arrays.js: one copy, and why large fresh arrays
// page-faulted in Node), except from a SharedArrayBuffer (the threaded build), whose slice()
// would be shared too.
export function copyOut(heap, ptr, bytes, Ctor, into) {
  if (into) {
    new Uint8Array(into.buffer, into.byteOffset, bytes).set(heap.subarray(ptr, ptr + bytes));
    return into;
  }
  if (heap.buffer instanceof ArrayBuffer) return freshArray(heap, ptr, bytes, Ctor);
  const data = new Ctor(bytes / Ctor.BYTES_PER_ELEMENT);
  new Uint8Array(data.buffer).set(heap.subarray(ptr, ptr + bytes));
  return data;
}
