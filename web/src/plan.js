// A prepared op (rt.prepare): validated once by the core (gradrt_prepare), then each run is
// one gradrt_plan_run call with a binary argument block: per input its data address and
// byte count, per output a destination address or 0 (the call writes where each output is).
// The output dtypes and shapes come once, at prepare, so a run parses no JSON.
import { GradrtError, invalid } from './errors.js';
import { DTYPES, checkDtypeShape, copyOut, toTensor } from './tensor.js';

const align128 = (n) => Math.ceil(n / 128) * 128;

// A spec for prepare: a HeapTensor, a tensor with data (the shape and sequence inputs need
// theirs), a plain integer array (shape inputs), or { dtype, shape } without data.
export function toSpec(name, value, own) {
  const h = own(value, `spec '${name}'`);
  if (h) return { dtype: value.dtype, shape: value.shape, ptr: h.ptr, bytes: h.bytes };
  if (value && typeof value === 'object' && !ArrayBuffer.isView(value) && !Array.isArray(value) && value.data === undefined) {
    const { Ctor, dims, count } = checkDtypeShape(`spec '${name}'`, value.dtype, value.shape);
    return { dtype: value.dtype, shape: dims, bytes: count * Ctor.BYTES_PER_ELEMENT };
  }
  return toTensor(name, value);
}

const sameShape = (a, b) => a.length === b.length && a.every((d, i) => d === b[i]);

export class Plan {
  #port;
  #id;
  #inputs; // [{ name, dtype, shape, bytes }] in the order of the argument words
  #outputs; // [{ name, dtype, shape, bytes, Ctor }]

  constructor(op, id, info, port) {
    this.op = op;
    this.#id = id;
    this.#port = port;
    const dtype = (code) => port.dtypes[code];
    const bytesOf = (code, shape) => shape.reduce((a, b) => a * b, 1) * DTYPES[dtype(code)].BYTES_PER_ELEMENT;
    this.#inputs = info.inputs.map(([name, code, shape]) => ({ name, dtype: dtype(code), shape, bytes: bytesOf(code, shape) }));
    this.#outputs = info.outputs.map(([name, code, shape, bytes]) => ({ name, dtype: dtype(code), shape, bytes, Ctor: DTYPES[dtype(code)] }));
    this.backend = info.backend;
    this.kernel = info.kernel;
    this.isa = info.isa;
    this.tiles = info.tiles; // the cpu backend's tile choice where it reports one ("stream 8x4"), else ""
  }

  // [{ name, dtype, shape }] of the outputs, in the op's order.
  get outputs() {
    return this.#outputs.map(({ name, dtype, shape }) => ({ name, dtype, shape: [...shape] }));
  }

  dispose() {
    if (this.#id === 0) return;
    this.#port.m._gradrt_plan_free(this.#id);
    this.#id = 0;
  }

  // inputs and options as runOp's (options.outputs, options.heap); inputs must have the
  // prepared dtypes and shapes (and values, for shape inputs).
  run(inputs, options = {}) {
    const port = this.#port;
    port.usable();
    if (this.#id === 0) throw invalid(`${this.op}: the plan was disposed`);
    if (inputs === null || typeof inputs !== 'object' || Array.isArray(inputs)) throw invalid('inputs must be an object { name: tensor }');
    const nIn = this.#inputs.length;
    for (const name of Object.keys(inputs)) {
      if (!this.#inputs.some((s) => s.name === name)) throw invalid(`${this.op}: input '${name}' was not given at prepare`);
    }
    // The argument block: 2 words per input and 1 per output, then the inputs' data.
    let size = (2 * nIn + this.#outputs.length) * 4;
    const staged = this.#inputs.map((spec) => {
      const value = inputs[spec.name];
      if (value === undefined) throw invalid(`${this.op}: missing input '${spec.name}'`);
      const h = port.own(value, `input '${spec.name}'`);
      const t = h ? { dtype: value.dtype, shape: value.shape, ptr: h.ptr } : toTensor(spec.name, value);
      if (t.dtype !== spec.dtype || !sameShape(t.shape, spec.shape)) {
        throw invalid(`${this.op}: input '${spec.name}' is ${t.dtype} [${t.shape.join(', ')}]; the plan was prepared for ${spec.dtype} [${spec.shape.join(', ')}]`);
      }
      if (h || !spec.bytes) return { t, at: -1 };
      const at = align128(size);
      size = at + spec.bytes;
      return { t, at };
    });
    const dest = this.#destinations(options && options.outputs);
    const heapOut = Boolean(options && options.heap);

    const m = port.m;
    const base = port.reserve(this.op, size);
    const heap = port.heap();
    const words = new Uint32Array(heap.buffer, base, 2 * nIn + this.#outputs.length);
    staged.forEach(({ t, at }, i) => {
      const { bytes } = this.#inputs[i];
      const addr = !bytes ? 0 : at < 0 ? t.ptr : base + at;
      words[2 * i] = addr;
      words[2 * i + 1] = bytes;
      if (at >= 0) heap.set(new Uint8Array(t.data.buffer, t.data.byteOffset, bytes), addr);
    });
    this.#outputs.forEach((o, j) => {
      const d = dest[j];
      words[2 * nIn + j] = d && d.ptr !== undefined && o.bytes ? d.ptr : 0;
    });
    const code = port.call(() => m._gradrt_plan_run(this.#id, base));
    if (code !== 0) throw port.error(code);
    try {
      return this.#results(port.heap(), base + 8 * nIn, dest, heapOut); // (the run may have grown the memory)
    } finally {
      m._gradrt_plan_release(this.#id);
    }
  }

  // The outputs of the last run, whose addresses are the u32 words at `at`.
  #results(heap, wordsAt, dest, heapOut) {
    const port = this.#port;
    const m = port.m;
    const at = new Uint32Array(heap.buffer, wordsAt, this.#outputs.length);
    const result = {};
    this.#outputs.forEach((o, j) => {
      const d = dest[j];
      if (d === null) return;
      const ptr = at[j];
      const { bytes, Ctor } = o;
      if (d && d.heap) {
        if (bytes && ptr !== d.ptr) heap.copyWithin(d.ptr, ptr, ptr + bytes);
        result[o.name] = d.heap;
        return;
      }
      const shape = [...o.shape];
      if (heapOut && !d) {
        if (bytes > 0 && m._gradrt_plan_hold_output(this.#id, j) !== 1) throw new GradrtError('Internal', `${this.op}: cannot keep output '${o.name}'`);
        result[o.name] = port.heapTensor(o.dtype, shape, bytes ? ptr : 0, bytes, bytes ? () => m._gradrt_free_held(ptr) : null);
        return;
      }
      result[o.name] = { dtype: o.dtype, shape, data: copyOut(heap, ptr, bytes, Ctor, d && d.data) };
    });
    return result;
  }

  // options.outputs -> per output: undefined (a fresh array), null (dropped), { data } (a
  // typed array of the dtype and length) or { heap, ptr } (a HeapTensor of the runtime).
  #destinations(outputs) {
    if (outputs === undefined) return [];
    if (outputs === null || typeof outputs !== 'object' || Array.isArray(outputs)) {
      throw invalid('options.outputs must be an object { outputName: typedArray | tensor | HeapTensor | null }');
    }
    for (const name of Object.keys(outputs)) {
      if (!this.#outputs.some((o) => o.name === name)) throw invalid(`options.outputs: ${this.op} has no output '${name}'`);
    }
    return this.#outputs.map((o) => {
      const dest = outputs[o.name];
      if (dest === undefined || dest === null) return dest;
      const label = `options.outputs.${o.name}`;
      const want = `${o.dtype} [${o.shape.join(', ')}]`;
      const h = this.#port.own(dest, label);
      if (h) {
        if (dest.dtype !== o.dtype || h.bytes !== o.bytes) throw invalid(`${label}: ${this.op} gives ${want}, got a HeapTensor ${dest.dtype} [${dest.shape.join(', ')}]`);
        return { heap: dest, ptr: h.ptr };
      }
      const data = ArrayBuffer.isView(dest) ? dest : dest && dest.data;
      if (!(data instanceof o.Ctor) || data.length * o.Ctor.BYTES_PER_ELEMENT !== o.bytes || (dest.dtype !== undefined && dest.dtype !== o.dtype)) {
        throw invalid(`${label}: ${this.op} gives ${want}, which needs a ${o.Ctor.name}(${o.bytes / o.Ctor.BYTES_PER_ELEMENT})`);
      }
      return { data };
    });
  }
}
