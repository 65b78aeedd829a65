// The Runtime that init() returns: runOp, ops(), tensor(), camelCase helpers, over the C ABI
// of wasm/bindings.cpp (tensor copies in, one gradrt_run call, tensor copies out: into fresh
// typed arrays, or into the caller's own with options.outputs; HeapTensors skip the copies).
import { CODES, GradrtError, invalid } from './errors.js';
import { HeapTensor, heapState } from './heap_tensor.js';
import { Plan, toSpec } from './plan.js';
import { DTYPES, attrsJson, checkDtypeShape, copyOut, toTensor } from './tensor.js';

const encoder = new TextEncoder();
const decoder = new TextDecoder();
const MAX_BYTES = 2 ** 31 - 1;
const DISPOSED = Symbol('disposed');
const align128 = (n) => Math.ceil(n / 128) * 128;

// 'Conv2DBackpropInput' -> 'conv2dBackpropInput', 'FusedBatchNormGradV3' -> 'fusedBatchNormGradV3'
export function helperName(op) {
  return op[0].toLowerCase() + op.slice(1).replace(/2D/g, '2d');
}

export class Runtime {
  #m;
  #info;
  #u8 = null;
  #broken = null;

  constructor(module, simd, threads = 1) {
    this.#m = module;
    this.#info = JSON.parse(this.#string(module._gradrt_info_json()));
    this.simd = simd;
    this.threads = threads;
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

  // Ends the runtime: the threaded flavour's workers are terminated; later calls throw.
  dispose() {
    if (this.#broken) return;
    this.#broken = DISPOSED;
    if (this.#m.gradrtTerminate) this.#m.gradrtTerminate();
  }

  // Bytes of wasm linear memory (it only grows; a diagnostic for leak tests).
  heapBytes() {
    return this.#heap().length;
  }

  // A tensor in this runtime's wasm memory (see heap_tensor.js): data copied from `data` (a
  // typed array of the dtype, or numbers) if given, else zeros.
  tensor(dtype, shape, data) {
    this.#usable();
    const label = 'tensor()';
    const { Ctor, dims, count } = checkDtypeShape(label, dtype, shape);
    const src = data === undefined ? null : toTensor('tensor() data', { dtype, shape: dims, data }).data;
    const bytes = count * Ctor.BYTES_PER_ELEMENT;
    const m = this.#m;
    const ptr = bytes && bytes <= MAX_BYTES ? m._gradrt_alloc(bytes) : 0;
    if (bytes && !ptr) throw new GradrtError('ResourceExhausted', `${label}: cannot allocate ${bytes} bytes in the wasm heap`);
    const heap = this.#heap(); // after the allocation, which may grow it
    if (src) heap.set(new Uint8Array(src.buffer, src.byteOffset, bytes), ptr);
    else heap.fill(0, ptr, ptr + bytes);
    return new HeapTensor(this, dtype, dims, ptr, bytes, () => this.#heap().buffer, bytes ? () => m._gradrt_dealloc(ptr) : null);
  }

  // The state of a HeapTensor of this runtime, undefined for anything else that is not one;
  // InvalidArgument for another runtime's or a disposed one.
  #own(value, label) {
    const h = heapState(value);
    if (h && h.owner !== this) throw invalid(`${label}: a HeapTensor of another runtime`);
    if (h && !h.alive) throw invalid(`${label}: the HeapTensor was disposed`);
    return h;
  }

  #usable() {
    if (this.#broken === DISPOSED) throw new GradrtError('Unavailable', 'gradrt runtime was disposed; call init() again');
    if (this.#broken) throw new GradrtError('Internal', `gradrt runtime is unusable after an earlier trap (${this.#broken}); call init() again`);
  }

  // options: { backend?: 'auto' | 'cpu' | 'reference', outputs?: { name: destination | null },
  //            heap?: boolean }
  // outputs: per output name, a typed array of the output's dtype and exact element count
  // (or a tensor { data }, or a HeapTensor of this runtime) that receives the result instead
  // of a fresh array, or null to drop that output (no copy, left out of the result). heap:
  // the other outputs come back as HeapTensors (no copy; the caller disposes them).
  runOp(op, inputs, attrs = {}, options = {}) {
    const backend = this.#callArgs(op, inputs, 'inputs must be an object { name: tensor }', options);
    const into = options && options.outputs !== undefined ? this.#destinations(op, options.outputs) : null;
    const heapOut = Boolean(options && options.heap);
    // A HeapTensor input is read in place: { dtype, shape, ptr, bytes } instead of data.
    const tensors = Object.entries(inputs).map(([name, value]) => {
      const h = this.#own(value, `input '${name}'`);
      return [name, h ? { dtype: value.dtype, shape: value.shape, ptr: h.ptr, bytes: h.bytes } : toTensor(name, value)];
    });
    const m = this.#m;
    const { base, ptrs, tableLen } = this.#stage(op, tensors, [op, attrsJson(attrs), backend]);
    try {
      const code = this.#call(() => m._gradrt_run(ptrs[0], ptrs[1], tableLen ? base : 0, tableLen, ptrs[2]));
      if (code !== 0) throw this.#lastError(code);
      return this.#outputs(op, into, heapOut);
    } finally {
      if (!this.#broken) m._gradrt_release_outputs();
    }
  }

  // A prepared op (plan.js): specs { name: { dtype, shape } } (data only for the shape and
  // sequence inputs, whose values the plan keeps), attrs as runOp's. Validated once here.
  prepare(op, specs, attrs = {}, options = {}) {
    const backend = this.#callArgs(op, specs, 'specs must be an object { name: { dtype, shape } }', options);
    const tensors = Object.entries(specs).map(([name, value]) => [name, toSpec(name, value, (v, l) => this.#own(v, l))]);
    const m = this.#m;
    const { base, ptrs, tableLen } = this.#stage(op, tensors, [op, attrsJson(attrs), backend]);
    const id = this.#call(() => m._gradrt_prepare(ptrs[0], ptrs[1], tableLen ? base : 0, tableLen, ptrs[2]));
    if (id <= 0) throw this.#lastError(-id);
    const info = JSON.parse(this.#string(m._gradrt_plan_info_json(id)));
    return new Plan(op, id, info, this.#planPort());
  }

  // The checks runOp and prepare share; -> the backend name.
  #callArgs(op, tensors, notObject, options) {
    this.#usable();
    if (typeof op !== 'string') throw invalid('op must be a string (a TensorFlow op name)');
    if (tensors === null || typeof tensors !== 'object' || Array.isArray(tensors)) throw invalid(notObject);
    const backend = options && options.backend !== undefined ? options.backend : 'auto';
    if (typeof backend !== 'string') throw invalid('options.backend must be a string');
    return backend;
  }

  // What a Plan reaches of its runtime: the module, the heap, the scratch block, checks.
  #planPort() {
    return {
      m: this.#m,
      dtypes: this.#info.dtypes,
      heap: () => this.#heap(),
      reserve: (op, bytes) => this.#reserve(op, bytes),
      own: (value, label) => this.#own(value, label),
      usable: () => this.#usable(),
      call: (fn) => this.#call(fn),
      error: (code) => this.#lastError(code),
      heapTensor: (dtype, shape, ptr, bytes, free) => new HeapTensor(this, dtype, shape, ptr, bytes, () => this.#heap().buffer, free),
    };
  }

  #lastError(code) {
    return new GradrtError(CODES[code] || 'Internal', this.#string(this.#m._gradrt_error_message()));
  }

  // One scratch block of the heap holds a call's arguments, kept across calls (see #reserve):
  // the input table (float64 records, see wasm/abi.h), then each input's data (128-byte
  // aligned, as the block and the op's outputs: see gradrt_alloc in wasm/bindings.cpp; not for
  // HeapTensors, nor for specs without data, whose address is 0), then the NUL-terminated UTF-8
  // strings (`strings`, then the input names), each given room for 3 bytes per UTF-16 unit.
  #stage(op, tensors, fixed) {
    const strings = [...fixed, ...tensors.map(([name]) => name)];
    let tableLen = 0;
    for (const [, t] of tensors) tableLen += 5 + t.shape.length;
    let size = tableLen * 8;
    const dataOff = tensors.map(([, t]) => {
      if (t.ptr !== undefined || t.data === undefined) return -1;
      const at = align128(size);
      size = at + t.data.byteLength;
      return at;
    });
    const stringOff = strings.map((s) => {
      const at = size;
      size += 3 * s.length + 1;
      return at;
    });
    if (size > MAX_BYTES) throw new GradrtError('ResourceExhausted', `${op}: cannot allocate ${size} bytes in the wasm heap`);

    const base = this.#reserve(op, size); // may grow the heap: views are taken after it
    const heap = this.#heap();
    const ptrs = stringOff.map((off, i) => writeCString(heap, base + off, strings[i]));
    const table = new Float64Array(heap.buffer, base, tableLen);
    let k = 0;
    tensors.forEach(([, t], i) => {
      const inHeap = t.ptr !== undefined;
      const bytes = inHeap ? t.bytes : t.data === undefined ? t.bytes : t.data.byteLength;
      const addr = !bytes || dataOff[i] < 0 ? (inHeap && bytes ? t.ptr : 0) : base + dataOff[i];
      table.set([ptrs[fixed.length + i], dtypeCode(this.#info, t.dtype), t.shape.length, addr, bytes], k);
      table.set(t.shape, k + 5);
      k += 5 + t.shape.length;
      if (bytes && dataOff[i] >= 0) heap.set(new Uint8Array(t.data.buffer, t.data.byteOffset, bytes), addr);
    });
    return { base, ptrs, tableLen };
  }

  // The scratch block: grown when a call needs more, replaced by a smaller one when a call
  // needs less than a quarter of it (so one large call does not pin a large block).
  #scratch = 0;
  #scratchBytes = 0;
  #reserve(op, bytes) {
    const m = this.#m;
    if (bytes <= this.#scratchBytes && (bytes * 4 >= this.#scratchBytes || this.#scratchBytes <= 65536)) return this.#scratch;
    if (this.#scratch) m._gradrt_dealloc(this.#scratch);
    this.#scratch = 0;
    this.#scratchBytes = 0;
    const want = Math.max(4096, bytes);
    const p = m._gradrt_alloc(want);
    if (!p) throw new GradrtError('ResourceExhausted', `${op}: cannot allocate ${bytes} bytes in the wasm heap`);
    this.#scratch = p;
    this.#scratchBytes = want;
    return p;
  }

  // options.outputs -> Map(name -> typed array | null), checked against the op's outputs.
  #destinations(op, outputs) {
    if (outputs === null || typeof outputs !== 'object' || Array.isArray(outputs)) {
      throw invalid('options.outputs must be an object { outputName: typedArray | tensor | HeapTensor | null }');
    }
    const info = this.#info.ops.find((o) => o.name === op);
    const map = new Map();
    for (const [name, dest] of Object.entries(outputs)) {
      if (dest === undefined) continue;
      if (info && !info.outputs.includes(name)) throw invalid(`options.outputs: ${op} has no output '${name}' (it has ${info.outputs.join(', ')})`);
      const h = this.#own(dest, `options.outputs.${name}`);
      if (dest === null) map.set(name, null);
      else if (h) map.set(name, { heap: dest, dtype: dest.dtype, ptr: h.ptr, bytes: h.bytes });
      else if (ArrayBuffer.isView(dest) && !(dest instanceof DataView)) map.set(name, { data: dest });
      else if (typeof dest === 'object' && ArrayBuffer.isView(dest.data) && !(dest.data instanceof DataView)) map.set(name, { data: dest.data, dtype: dest.dtype });
      else throw invalid(`options.outputs.${name}: expected a typed array, a tensor { dtype, shape, data } or null`);
    }
    return map;
  }

  #outputs(op, into, heapOut) {
    const m = this.#m;
    const described = JSON.parse(this.#string(m._gradrt_outputs_json()));
    // Check every destination before writing any (all or nothing).
    for (const [name, code, shape, , bytes] of described) {
      const dest = into && into.get(name);
      if (!dest) continue;
      const dtype = this.#info.dtypes[code];
      const Ctor = DTYPES[dtype];
      const count = bytes / Ctor.BYTES_PER_ELEMENT;
      if (dest.heap) {
        if (dest.dtype !== dtype || dest.bytes !== bytes) {
          throw invalid(`options.outputs.${name}: ${op} gives a ${dtype} tensor of shape [${shape.join(', ')}], which needs a HeapTensor of that dtype and ${count} elements, got ${dest.dtype} [${dest.heap.shape.join(', ')}]`);
        }
        continue;
      }
      if (!(dest.data instanceof Ctor) || (dest.dtype !== undefined && dest.dtype !== dtype) || dest.data.length !== count) {
        const got = `${dest.data.constructor.name}(${dest.data.length})${dest.dtype !== undefined ? ` of dtype ${dest.dtype}` : ''}`;
        throw invalid(`options.outputs.${name}: ${op} gives a ${dtype} tensor of shape [${shape.join(', ')}], which needs a ${Ctor.name}(${count}), got ${got}`);
      }
    }
    const heap = this.#heap();
    const result = {};
    described.forEach(([name, code, shape, ptr, bytes], index) => {
      const dtype = this.#info.dtypes[code];
      const Ctor = DTYPES[dtype];
      const dest = into ? into.get(name) : undefined;
      if (dest === null) return; // dropped by the caller
      if (dest && dest.heap) {
        heap.copyWithin(dest.ptr, ptr, ptr + bytes);
        result[name] = dest.heap;
        return;
      }
      if (heapOut && !dest) {
        // The output's own buffer, kept past gradrt_release_outputs until disposed.
        if (bytes > 0 && m._gradrt_hold_output(index) !== 1) throw new GradrtError('Internal', `${op}: cannot keep output '${name}'`);
        result[name] = new HeapTensor(this, dtype, shape, bytes ? ptr : 0, bytes, () => this.#heap().buffer,
          bytes ? () => m._gradrt_free_held(ptr) : null);
        return;
      }
      result[name] = { dtype, shape, data: copyOut(heap, ptr, bytes, Ctor, dest && dest.data) };
    });
    return result;
  }

  // The heap as bytes. With threads the memory is a SharedArrayBuffer that another thread
  // may grow: Emscripten's HEAPU8 then still views the old, shorter buffer.
  #heap() {
    const m = this.#m;
    const buffer = m.gradrtBuffer ? m.gradrtBuffer() : m.HEAPU8.buffer;
    if (!this.#u8 || this.#u8.buffer !== buffer) this.#u8 = new Uint8Array(buffer);
    return this.#u8;
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
    const heap = this.#heap();
    let end = ptr;
    while (end < heap.length && heap[end] !== 0) end++;
    return decoder.decode(heap.slice(ptr, end)); // a copy: TextDecoder may refuse shared memory
  }
}

// Writes s as NUL-terminated UTF-8 at heap[p]; returns p. ASCII (op and input names, most
// attrs) byte by byte: TextEncoder's call and allocation were a third of a small op's runOp.
// Not encodeInto: browsers refuse it on shared memory.
function writeCString(heap, p, s) {
  const n = s.length;
  let i = 0;
  for (; i < n; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0x80) break;
    heap[p + i] = c;
  }
  if (i < n) {
    const bytes = encoder.encode(s);
    heap.set(bytes, p);
    i = bytes.length;
  }
  heap[p + i] = 0;
  return p;
}

function dtypeCode(info, dtype) {
  const code = info.dtypes.indexOf(dtype);
  if (code < 0) throw invalid(`dtype ${dtype} is not known to this build`);
  return code;
}
