// Moving tensors between TF.js backends and gradrt's runOp, without extra copies.
//
// wasm: a tensor lives at backend.dataIdMap.get(dataId).memoryOffset in backend.wasm's
// heap. gradrt reads an input through a typed-array view of that heap (runOp copies it
// into gradrt's own instance) and writes an output straight into the view of a tensor
// made by backend.makeOutput. makeOutput may grow tfjs's memory, which detaches every
// view taken before it: all outputs of a call are allocated first, then views are taken.
// cpu: a tensor is backend.data.get(dataId).values; outputs are fresh typed arrays handed
// to backend.makeTensorInfo.
import { GradrtError } from '../errors.js';

const CTORS = { float32: Float32Array, int32: Int32Array };

const size = (shape) => shape.reduce((a, b) => a * b, 1);

function ctorOf(dtype) {
  const Ctor = CTORS[dtype];
  if (!Ctor) throw new GradrtError('Unimplemented', `gradrt/tfjs: dtype ${dtype} is not supported`);
  return Ctor;
}

const wasmIO = {
  // -> a TensorInfo whose memory is reserved in tfjs's heap (contents unset).
  alloc(backend, shape, dtype) {
    return backend.makeOutput(shape, dtype);
  },
  // A view of a tensor's data; valid until tfjs's heap next grows.
  view(backend, info) {
    const Ctor = ctorOf(info.dtype);
    const { memoryOffset } = backend.dataIdMap.get(info.dataId);
    return new Ctor(backend.wasm.HEAPU8.buffer, memoryOffset, size(info.shape));
  },
  finish(backend, info) {
    return info;
  },
  // Releases an output allocated by alloc() when the call fails.
  drop(backend, info) {
    backend.disposeData(info.dataId, true);
  },
  heapBytes(backend) {
    return backend.wasm.HEAPU8.length;
  },
};

const cpuIO = {
  alloc(backend, shape, dtype) {
    return { shape: [...shape], dtype, values: new (ctorOf(dtype))(size(shape)), pending: true };
  },
  view(backend, info) {
    if (info.pending) return info.values;
    const Ctor = ctorOf(info.dtype);
    const { values } = backend.data.get(info.dataId);
    // A float32 tensor made by cast(int32) shares the Int32Array of its source: convert.
    return values instanceof Ctor ? values : Ctor.from(values);
  },
  finish(backend, info) {
    return backend.makeTensorInfo(info.shape, info.dtype, info.values);
  },
  drop() {},
  heapBytes() {
    return 0;
  },
};

// The adapter for a backend registered under `name` ('wasm' or 'cpu').
export function ioFor(name) {
  if (name === 'wasm') return wasmIO;
  if (name === 'cpu') return cpuIO;
  throw new GradrtError('InvalidArgument', `gradrt/tfjs: backend '${name}' is not supported (wasm, cpu)`);
}

// Prepared plans per runtime, keyed by op, attrs and input shapes (and the values of shape
// inputs): a training step calls each kernel with the same few shapes over and over, so the
// validation, attribute parsing and output description happen once per (op, shape), not per
// call. At most MAX_PLANS per runtime; the oldest is freed first.
const PLANS = new WeakMap();
const MAX_PLANS = 64;

const isValues = (t) => Array.isArray(t) || ArrayBuffer.isView(t);

export function planFor(rt, op, inputs, attrs) {
  let cache = PLANS.get(rt);
  if (!cache) PLANS.set(rt, (cache = new Map()));
  let key = op + JSON.stringify(attrs);
  for (const name in inputs) {
    const t = inputs[name];
    key += isValues(t) ? `|${name}=${Array.prototype.join.call(t, ',')}` : `|${name}:${t.dtype}[${t.shape.join(',')}]`;
  }
  let plan = cache.get(key);
  if (plan) return plan;
  if (cache.size >= MAX_PLANS) {
    const [oldest, old] = cache.entries().next().value;
    old.dispose();
    cache.delete(oldest);
  }
  const specs = {};
  for (const name in inputs) {
    const t = inputs[name];
    specs[name] = isValues(t) ? t : { dtype: t.dtype, shape: t.shape };
  }
  plan = rt.prepare(op, specs, attrs);
  cache.set(key, plan);
  return plan;
}

// Runs a gradrt op as the body of a tfjs kernel (through its plan, see planFor):
//   outs: [{ name, shape, dtype }] the op's outputs that become tfjs tensors, in order;
//   inputs(view) -> runOp's inputs, where view(info) gives a tensor's data;
//   extra: further runOp outputs options (e.g. { reserve_space_3: null }).
// Returns the TensorInfos of outs. Outputs are allocated before any view is taken.
export function runInto(rt, io, backend, op, outs, inputs, attrs, extra = {}) {
  const infos = [];
  try {
    for (const o of outs) infos.push(io.alloc(backend, o.shape, o.dtype));
    const view = (info) => io.view(backend, info);
    const outputs = { ...extra };
    outs.forEach((o, i) => {
      outputs[o.name] = view(infos[i]);
    });
    const ins = inputs(view);
    // (a runtime without prepare, e.g. a wrapper of an older one: one runOp per call)
    if (typeof rt.prepare === 'function') planFor(rt, op, ins, attrs).run(ins, { outputs });
    else rt.runOp(op, ins, attrs, { outputs });
  } catch (e) {
    for (const info of infos) io.drop(backend, info);
    throw e;
  }
  return infos.map((info) => io.finish(backend, info));
}

export function f32(shape, data) {
  return { dtype: 'float32', shape, data };
}
