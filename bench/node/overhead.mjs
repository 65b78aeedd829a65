// A small op's call cost in Node (issue 22 item 5), SIMD build, 1 thread: 8x8x16 conv
// gradients (3x3, SAME, 16 -> 16 channels) through
//   runOp / runOp outputs=       one call with attrs as JSON, the outputs described as JSON
//   plan.run / plan.run outputs= rt.prepare once, then one binary call per run
//   plan.run heap                inputs and output as HeapTensors: no copies, the floor of a
//                                call (core + kernel in wasm + the binary call)
//   tfjs before / tfjs after     tf.engine().runKernel on tfjs's wasm backend with gradrt/tfjs,
//                                before: through runOp per call (a runtime without prepare),
//                                after: through the kernel's plan (the package's default)
// Interleaved rounds; medians of the per-call mean over rounds, CPU us and wall us.
//   node overhead.mjs [--rounds N]
import * as tf from '@tensorflow/tfjs-core';
import '@tensorflow/tfjs-backend-wasm';
import { init } from 'gradrt';
import { registerGradrtKernels } from 'gradrt/tfjs';
import os from 'node:os';
import { random } from './random.mjs';

const arg = (name, fallback) => (process.argv.includes(name) ? process.argv[process.argv.indexOf(name) + 1] : fallback);
const rounds = Number(arg('--rounds', 15));
const t = (shape, data) => ({ dtype: 'float32', shape, data });
const xs = [1, 8, 8, 16];
const ws = [3, 3, 16, 16];
const attrs = { strides: [1, 1, 1, 1], padding: 'SAME' };
const x = t(xs, random(1024, 1));
const w = t(ws, random(2304, 2));
const dy = t(xs, random(1024, 3));
const spec = (v) => ({ dtype: v.dtype, shape: v.shape });

const rt = await init({ simd: true });
await tf.setBackend('wasm');
const tfx = tf.tensor(x.data, xs);
const tfw = tf.tensor(w.data, ws);
const tfdy = tf.tensor(dy.data, xs);
const tfAttrs = { strides: 1, pad: 'same', dataFormat: 'NHWC', dilations: 1 };
// tfjs with gradrt through runOp (before plans) and through plans (after): two registrations
// in turn (restore() puts tfjs's registry back in between).
const before = { runOp: (...a) => rt.runOp(...a) };

const CASES = [
  ['Conv2DBackpropInput', { input_sizes: xs, filter: w, out_backprop: dy }, { input_sizes: xs, filter: spec(w), out_backprop: spec(dy) },
    () => tf.engine().runKernel('Conv2DBackpropInput', { dy: tfdy, filter: tfw }, { ...tfAttrs, inputShape: xs })],
  ['Conv2DBackpropFilter', { input: x, filter_sizes: ws, out_backprop: dy }, { input: spec(x), filter_sizes: ws, out_backprop: spec(dy) },
    () => tf.engine().runKernel('Conv2DBackpropFilter', { x: tfx, dy: tfdy }, { ...tfAttrs, filterShape: ws })],
];

const median = (a) => a.slice().sort((p, q) => p - q)[a.length >> 1];
function time(f, calls) {
  const c0 = process.cpuUsage();
  const w0 = performance.now();
  for (let i = 0; i < calls; i++) f();
  const c = process.cpuUsage(c0);
  return [((c.user + c.system) / calls), ((performance.now() - w0) * 1000) / calls];
}

console.log(`gradrt ${rt.version}, Node ${process.version}, ${os.cpus()[0].model}, load ${os.loadavg()[0].toFixed(1)}; us per call, median of ${rounds} rounds, CPU / wall`);
for (const [op, inputs, specs, tfCall] of CASES) {
  const plan = rt.prepare(op, specs, attrs);
  const heapIn = Object.fromEntries(Object.entries(inputs).map(([k, v]) => [k, Array.isArray(v) ? v : rt.tensor(v.dtype, v.shape, v.data)]));
  const heapOut = Object.fromEntries(plan.outputs.map((o) => [o.name, rt.tensor(o.dtype, o.shape)]));
  const out = Object.fromEntries(plan.outputs.map((o) => [o.name, new Float32Array(o.shape.reduce((a, b) => a * b, 1))]));
  // tfjs: registered and restored per round and variant, so each runs its own kernels.
  const variants = {
    runOp: () => rt.runOp(op, inputs, attrs),
    'runOp outputs=': () => rt.runOp(op, inputs, attrs, { outputs: out }),
    'plan.run': () => plan.run(inputs),
    'plan.run outputs=': () => plan.run(inputs, { outputs: out }),
    'plan.run heap': () => plan.run(heapIn, { outputs: heapOut }),
  };
  const samples = Object.fromEntries([...Object.keys(variants), 'tfjs before', 'tfjs after'].map((k) => [k, { cpu: [], wall: [] }]));
  const calls = 2000;
  for (let r = 0; r < rounds; r++) {
    for (const [k, f] of Object.entries(variants)) {
      const [c, wl] = time(f, calls);
      samples[k].cpu.push(c);
      samples[k].wall.push(wl);
    }
    for (const [k, runtime] of [['tfjs before', before], ['tfjs after', rt]]) {
      const handle = await registerGradrtKernels(tf, { backends: ['wasm'], runtime });
      const f = () => tf.dispose(tfCall());
      time(f, 50);
      const [c, wl] = time(f, calls);
      samples[k].cpu.push(c);
      samples[k].wall.push(wl);
      handle.restore();
    }
  }
  console.log(op);
  for (const [k, v] of Object.entries(samples)) console.log(`  ${k.padEnd(20)} ${median(v.cpu).toFixed(2).padStart(8)} / ${median(v.wall).toFixed(2).padStart(8)}`);
  plan.dispose();
}
process.exit(0);
