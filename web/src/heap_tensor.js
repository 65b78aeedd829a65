// HeapTensor: a tensor whose data lives in the wasm memory of one Runtime (rt.tensor(), or
// runOp's outputs with { heap: true }). runOp reads a HeapTensor input in place (no copy
// into the heap) and hands heap outputs back without copying them out, which for the
// bandwidth-bound ops (depthwise, batch norm) costs as much as the kernel itself.
//
// `data` is a fresh view of the heap on every read: a later runOp may grow the wasm memory,
// which detaches views taken before it. dispose() frees the memory (idempotent); a tensor
// that is garbage collected undisposed is freed then too.
import { GradrtError } from './errors.js';
import { DTYPES } from './tensor.js';

const registry = typeof FinalizationRegistry === 'function'
  ? new FinalizationRegistry((free) => {
    try {
      free();
    } catch {
      // the runtime trapped or was torn down: nothing left to free
    }
  })
  : null;

let stateOf; // (value) -> the state of a HeapTensor, else undefined (set in the class's static block)

export class HeapTensor {
  // { owner: the Runtime, ptr, bytes, buffer(): the current heap buffer, free: releases ptr
  // (or null), alive }. Private fields, not a WeakMap: a small op's runOp makes one per output.
  #s;
  #dtype;
  #shape;

  static {
    stateOf = (value) => (value !== null && typeof value === 'object' && #s in value ? value.#s : undefined);
  }

  constructor(owner, dtype, shape, ptr, bytes, buffer, free) {
    this.#dtype = dtype;
    this.#shape = Object.freeze([...shape]);
    this.#s = { owner, ptr, bytes, buffer, free, alive: true };
    if (registry && free) registry.register(this, free, this);
  }

  get dtype() {
    return this.#dtype;
  }

  get shape() {
    return this.#shape;
  }

  get data() {
    const s = this.#s;
    if (!s.alive) throw new GradrtError('InvalidArgument', 'HeapTensor: data read after dispose()');
    const Ctor = DTYPES[this.#dtype];
    return new Ctor(s.buffer(), s.ptr, s.bytes / Ctor.BYTES_PER_ELEMENT);
  }

  get disposed() {
    return !this.#s.alive;
  }

  dispose() {
    const s = this.#s;
    if (!s.alive) return;
    s.alive = false;
    if (s.free) {
      if (registry) registry.unregister(this);
      try {
        s.free();
      } catch {
        // as in the registry
      }
    }
  }
}

// { owner, ptr, bytes, alive } of a HeapTensor, or undefined for anything else.
export function heapState(value) {
  return stateOf(value);
}
