// The Runtime that init() returns: runOp, ops(), camelCase helpers, over the C ABI of
// wasm/bindings.cpp (tensor copies in, one gradrt_run call, tensor copies out).
import { CODES, GradrtError, invalid } from './errors.js';
import { DTYPES, attrsJson, toTensor } from './tensor.js';

const encoder = new TextEncoder();
const decoder = new TextDecoder();
const MAX_BYTES = 2 ** 31 - 1;

// 'Conv2DBackpropInput' -> 'conv2dBackpropInput', 'FusedBatchNormGradV3' -> 'fusedBatchNormGradV3'
export function helperName(op) {
  return op[0].toLowerCase() + op.slice(1).replace(/2D/g, '2d');
}

export class Runtime {
  #m;
  #info;
  #broken = null;

  constructor(module, simd) {
    this.#m = module;
    this.#info = JSON.parse(this.#string(module._gradrt_info_json()));
    this.simd = simd;
    this.version = this.#info.version;
    for (const op of this.#info.ops) {
      const name = helperName(op.name);
      Object.defineProperty(this, name, {
        enumerable: false,
        value: (...args) => {
          const inputs = {};
          op.inputs.forEach((input, i) => {
            if (args[i] !== undefined) inputs[input] = args[i];
          });
          return this.runOp(op.name, inputs, args[op.inputs.length], args[op.inputs.length + 1]);
        },
      });
    }
  }

  // [{ name, inputs, outputs }] in the op list's order.
  ops() {
    return this.#info.ops.map((op) => ({ name: op.name, inputs: [...op.inputs], outputs: [...op.outputs] }));
  }

  backends() {
    return this.#info.backends.map((b) => ({ ...b }));
  }

  // Bytes of wasm linear memory (it only grows; a diagnostic for leak tests).
  heapBytes() {
    return this.#m.HEAPU8.length;
  }

  runOp(op, inputs, attrs = {}, options = {}) {
    if (this.#broken) throw new GradrtError('Internal', `gradrt runtime is unusable after an earlier trap (${this.#broken}); call init() again`);
    if (typeof op !== 'string') throw invalid('op must be a string (a TensorFlow op name)');
    if (inputs === null || typeof inputs !== 'object' || Array.isArray(inputs)) throw invalid('inputs must be an object { name: tensor }');
    const backend = options && options.backend !== undefined ? options.backend : 'auto';
    if (typeof backend !== 'string') throw invalid('options.backend must be a string');
    const tensors = Object.entries(inputs).map(([name, value]) => [name, toTensor(name, value)]);
    const json = attrsJson(attrs);

    const m = this.#m;
    const owned = [];
    const alloc = (bytes) => {
      const p = bytes > MAX_BYTES ? 0 : m._gradrt_alloc(bytes);
      if (!p) throw new GradrtError('ResourceExhausted', `${op}: cannot allocate ${bytes} bytes in the wasm heap`);
      owned.push(p);
      return p;
    };
    try {
      // Allocate everything first: an allocation may grow (and so replace) the heap views.
      const strings = [op, json, backend, ...tensors.map(([name]) => name)].map((s) => encoder.encode(s));
      const stringPtrs = strings.map((s) => alloc(s.length + 1));
      const dataPtrs = tensors.map(([, t]) => (t.data.byteLength ? alloc(t.data.byteLength) : 0));
      const table = [];
      tensors.forEach(([, t], i) => {
        table.push(stringPtrs[3 + i], dtypeCode(this.#info, t.dtype), t.shape.length, dataPtrs[i], t.data.byteLength, ...t.shape);
      });
      const tablePtr = table.length ? alloc(table.length * 8) : 0;

      const heap = m.HEAPU8;
      strings.forEach((s, i) => {
        heap.set(s, stringPtrs[i]);
        heap[stringPtrs[i] + s.length] = 0;
      });
      tensors.forEach(([, t], i) => {
        if (dataPtrs[i]) heap.set(new Uint8Array(t.data.buffer, t.data.byteOffset, t.data.byteLength), dataPtrs[i]);
      });
      if (tablePtr) new Float64Array(heap.buffer, tablePtr, table.length).set(table);

      const code = this.#call(() => m._gradrt_run(stringPtrs[0], stringPtrs[1], tablePtr, table.length, stringPtrs[2]));
      if (code !== 0) {
        throw new GradrtError(CODES[code] || 'Internal', this.#string(m._gradrt_error_message()));
      }
      return this.#outputs();
    } finally {
      for (const p of owned) m._gradrt_dealloc(p);
      if (!this.#broken) m._gradrt_release_outputs();
    }
  }

  #outputs() {
    const m = this.#m;
    const result = {};
    for (const [name, code, shape, ptr, bytes] of JSON.parse(this.#string(m._gradrt_outputs_json()))) {
      const dtype = this.#info.dtypes[code];
      const Ctor = DTYPES[dtype];
      const data = new Ctor(m.HEAPU8.buffer.slice(ptr, ptr + bytes)); // one copy, no zero-fill
      result[name] = { dtype, shape, data };
    }
    return result;
  }

  // A trap (abort, out of bounds) leaves the wasm instance in an unknown state.
  #call(fn) {
    try {
      return fn();
    } catch (e) {
      this.#broken = e && e.message ? e.message : String(e);
      throw new GradrtError('Internal', `gradrt trapped: ${this.#broken}`);
    }
  }

  #string(ptr) {
    const heap = this.#m.HEAPU8;
    let end = ptr;
    while (end < heap.length && heap[end] !== 0) end++;
    return decoder.decode(heap.subarray(ptr, end));
  }
}

function dtypeCode(info, dtype) {
  const code = info.dtypes.indexOf(dtype);
  if (code < 0) throw invalid(`dtype ${dtype} is not known to this build`);
  return code;
}
