// gradrt (wasm, SIMD128 and scalar builds) vs @tensorflow/tfjs-backend-wasm 4.22 (SIMD,
// 1 thread) and @tensorflow/tfjs-backend-cpu on NHWC float32, batch 1, SAME padding.
// A benchmark, not a test:   cd bench/node && npm install && node bench.mjs [--quick] [--no-tfjs-cpu]
//   [--no-tfjs] [--only TEXT]... [--dist DIR]   (options: see below)
// (needs web/dist, i.e. `npm run build` in web/ first).
import * as tf from '@tensorflow/tfjs-core';
import '@tensorflow/tfjs-backend-cpu';
import { setWasmPaths } from '@tensorflow/tfjs-backend-wasm';
import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import { init, HeapTensor } from 'gradrt';
// The package's own loader and tensor helpers (by path: the package exports only "."), for
// the in-wasm timing below.
import { load } from '../../web/src/loader.js';
import { stagedRun } from './staged.mjs';
import { random } from './random.mjs';

const quick = process.argv.includes('--quick'); // shorter timing windows
const noTfjsCpu = process.argv.includes('--no-tfjs-cpu'); // its filter gradients take about a minute per call
const MIN_MS = quick ? 200 : 1000;
// --only TEXT: just the cases whose label or op name contains TEXT (repeatable);
// --no-tfjs: gradrt only (no tfjs timings, no ratio).
const only = process.argv.flatMap((a, i, v) => (a === '--only' && v[i + 1] ? [v[i + 1]] : []));
const noTfjs = process.argv.includes('--no-tfjs');
// --dist DIR: the gradrt-{simd,scalar}.wasm to time (default web/dist), e.g. a saved build
// of an earlier commit; the .mjs glue still comes from web/dist, so it must match.
// --threads N: also time the threaded build (SIMD + pthreads, N threads) through runOp with
// outputs=, by wall time (CPU time adds up over the threads), against 1 thread.
const threadsIdx = process.argv.indexOf('--threads');
const threads = threadsIdx > 0 ? Number(process.argv[threadsIdx + 1]) : 1;
const distIdx = process.argv.indexOf('--dist');
const wasmPath = distIdx > 0 ? new URL(`file://${process.argv[distIdx + 1].replace(/\/?$/, '/')}`) : undefined;

// [label, op, input shape NHWC, filter HWIO (depthwise: H, W, C, multiplier), stride]
const CASES = [
  ['conv 3x3 s1 56x56x64->64', 'conv', [1, 56, 56, 64], [3, 3, 64, 64], 1],
  ['conv 3x3 s2 56x56x64->128', 'conv', [1, 56, 56, 64], [3, 3, 64, 128], 2],
  ['conv 1x1 28x28x256->512', 'conv', [1, 28, 28, 256], [1, 1, 256, 512], 1],
  ['depthwise 3x3 s1 112x112x32', 'depthwise', [1, 112, 112, 32], [3, 3, 32, 1], 1],
  ['depthwise 3x3 s2 56x56x144', 'depthwise', [1, 56, 56, 144], [3, 3, 144, 1], 2],
  ['batchnorm 56x56x256', 'batchnorm', [1, 56, 56, 256]],
];


// Median wall ms and median CPU ms (process.cpuUsage: this single-threaded work's own
// time, robust when other processes share the cores) of fn(), after a warm-up long
// enough for V8 to tier the wasm up. A first call slower than 2 s (tfjs-cpu's filter
// gradients take about a minute) is reported from that single run.
// result: what the first call returned.
function time(fn) {
  const once = () => {
    const c0 = process.cpuUsage(), t0 = performance.now();
    const r = fn();
    const c = process.cpuUsage(c0);
    return { wall: performance.now() - t0, cpu: (c.user + c.system) / 1000, r };
  };
  const first = once();
  if (first.wall > 2000) return { ms: first.wall, cpu: first.cpu, runs: 1, result: first.r };
  const warm = performance.now() + MIN_MS / 2;
  for (let i = 0; i < 2 || performance.now() < warm; i++) fn();
  const runs = [];
  const end = performance.now() + MIN_MS;
  while (runs.length < 5 || (performance.now() < end && runs.length < 200)) runs.push(once());
  const median = (key) => runs.map((r) => r[key]).sort((a, b) => a - b)[Math.floor(runs.length / 2)];
  return { ms: median('wall'), cpu: median('cpu'), runs: runs.length, result: first.r };
}

function maxRelErr(a, b) {
  let err = 0, mag = 0;
  for (let i = 0; i < a.length; i++) {
    err = Math.max(err, Math.abs(a[i] - b[i]));
    mag = Math.max(mag, Math.abs(b[i]));
  }
  return err / (mag || 1);
}

// The op runs of one case: { name, flops, gradrt(rt) -> data, tfjs() -> data | null (not registered) }
function jobs([, kind, xs, ws, s]) {
  const count = (sh) => sh.reduce((a, b) => a * b, 1);
  const x = random(count(xs), 1);
  if (kind === 'batchnorm') {
    const C = xs[3];
    const dy = random(count(xs), 2), scale = random(C, 3).map((v) => v + 1), mean = random(C, 4), variance = random(C, 5).map((v) => v + 1);
    const t = (shape, data) => ({ dtype: 'float32', shape, data });
    const call = ['FusedBatchNormGrad', { y_backprop: t(xs, dy), x: t(xs, x), scale: t([C], scale), reserve_space_1: t([C], mean), reserve_space_2: t([C], variance) },
      { epsilon: 0.001, is_training: true }];
    return [{
      name: 'FusedBatchNormGrad', flops: 8 * count(xs), // 2 reductions (3 flops) + x_backprop (5 flops) per element
      call, gradrt: (rt) => rt.runOp(...call).x_backprop.data,
      tfjs: () => null, tfjsKernel: 'FusedBatchNormGrad',
    }];
  }
  const depthwise = kind === 'depthwise';
  const out = Math.ceil(xs[1] / s);
  const oc = depthwise ? ws[2] * ws[3] : ws[3];
  const ys = [1, out, out, oc];
  const w = random(count(ws), 6), dy = random(count(ys), 7);
  const flops = 2 * count(ys) * ws[0] * ws[1] * (depthwise ? 1 : ws[2]);
  const attrs = { strides: [1, s, s, 1], padding: 'SAME' };
  const t = (shape, data) => ({ dtype: 'float32', shape, data });
  const tfAttrs = { strides: [s, s], pad: 'same', dataFormat: 'NHWC', dilations: [1, 1] };
  const names = depthwise ? ['DepthwiseConv2dNativeBackpropInput', 'DepthwiseConv2dNativeBackpropFilter'] : ['Conv2DBackpropInput', 'Conv2DBackpropFilter'];
  const tfRun = (kernel, inputs, extra) => () => {
    const r = tf.engine().runKernel(kernel, inputs(), { ...tfAttrs, ...extra });
    const d = r.dataSync();
    r.dispose();
    return d;
  };
  let tx, tw, tdy;
  const tensors = () => {
    tx ??= tf.tensor(x, xs);
    tw ??= tf.tensor(w, ws);
    tdy ??= tf.tensor(dy, ys);
  };
  const calls = [
    [names[0], { input_sizes: xs, filter: t(ws, w), out_backprop: t(ys, dy) }, attrs],
    [names[1], { input: t(xs, x), filter_sizes: ws, out_backprop: t(ys, dy) }, attrs],
  ];
  return [
    {
      name: names[0], flops, tfjsKernel: names[0], call: calls[0],
      gradrt: (rt) => rt.runOp(...calls[0]).output.data,
      tfjs: tfRun(names[0], () => (tensors(), { dy: tdy, filter: tw }), { inputShape: xs }),
      reset: () => { tx?.dispose(); tw?.dispose(); tdy?.dispose(); tx = tw = tdy = undefined; },
    },
    {
      name: names[1], flops, tfjsKernel: names[1], call: calls[1],
      gradrt: (rt) => rt.runOp(...calls[1]).output.data,
      tfjs: tfRun(names[1], () => (tensors(), { x: tx, dy: tdy }), { filterShape: ws }),
      reset: () => { tx?.dispose(); tw?.dispose(); tdy?.dispose(); tx = tw = tdy = undefined; },
    },
  ];
}

const require = createRequire(import.meta.url);
setWasmPaths(dirname(require.resolve('@tensorflow/tfjs-backend-wasm/wasm-out/tfjs-backend-wasm.wasm')) + '/');
tf.env().set('WASM_HAS_MULTITHREAD_SUPPORT', false); // 1 thread
tf.env().set('WASM_HAS_SIMD_SUPPORT', true);

const simd = await init({ simd: true, wasmPath });
const scalar = await init({ simd: false, wasmPath });
const threaded = threads > 1 ? await init({ simd: true, threads, wasmPath }) : null;
if (threaded && threaded.threads !== threads) throw new Error(`asked for ${threads} threads, got ${threaded.threads}`);

// In-wasm timing: runOp's JS side (copying inputs into the wasm heap, and above all
// ArrayBuffer.slice of each output, a fresh allocation that page-faults) costs about as
// much as a depthwise or batch-norm kernel, and it swings between runs. So each case is also
// timed as one _gradrt_run call on inputs staged in the heap once (core's output allocation
// and the kernel; the outputs are released, not copied): the "run" columns.
const modules = { simd: (await load({ simd: true, wasmPath })).module, scalar: (await load({ simd: false, wasmPath })).module };
const runTime = (m, call) => {
  const run = stagedRun(m, call);
  const t = time(run);
  run.free();
  return t.cpu;
};
// runOp with options.outputs: the outputs written into arrays allocated once by the caller.
function intoRun(rt, call) {
  const outputs = Object.fromEntries(Object.entries(rt.runOp(...call)).map(([k, t]) => [k, new t.data.constructor(t.data.length)]));
  const options = { outputs };
  return () => rt.runOp(call[0], call[1], call[2], options);
}
// runOp on HeapTensors: float inputs put in the wasm heap once, outputs kept there ({ heap:
// true }) and disposed: the public API without its JS copies.
function heapRun(rt, call) {
  const [op, inputs, attrs] = call;
  const held = Object.fromEntries(Object.entries(inputs).map(([k, v]) => [k, v && v.data && v.dtype ? rt.tensor(v.dtype, v.shape, v.data) : v]));
  const options = { heap: true };
  const fn = () => {
    for (const t of Object.values(rt.runOp(op, held, attrs, options))) t.dispose();
  };
  fn.free = () => Object.values(held).forEach((t) => t instanceof HeapTensor && t.dispose());
  return fn;
}
const rows = [];
for (const c of CASES) {
  for (const job of jobs(c)) {
    if (only.length && !only.some((o) => c[0].includes(o) || job.name.includes(o))) continue;
    const row = { shape: c[0], op: job.name, flops: job.flops };
    const want = job.gradrt(simd);
    const ts = time(() => job.gradrt(simd));
    row.wall = ts.ms;
    row.simd = ts.cpu;
    const ti = time(intoRun(simd, job.call));
    row.intoWall = ti.ms;
    row.into = ti.cpu;
    const heapFn = heapRun(simd, job.call);
    row.heap = time(heapFn).cpu;
    heapFn.free();
    if (threaded) {
      const tt = time(intoRun(threaded, job.call));
      row.threadedWall = tt.ms;
      row.err = maxRelErr(Object.values(threaded.runOp(...job.call))[0].data, want); // the first output, as gradrt() gives
    }
    row.scalar = time(() => job.gradrt(scalar)).cpu;
    row.simdRun = runTime(modules.simd, job.call);
    row.scalarRun = runTime(modules.scalar, job.call);
    row.err = Math.max(row.err ?? 0, maxRelErr(job.gradrt(scalar), want));
    for (const backend of noTfjs ? [] : noTfjsCpu ? ['wasm'] : ['wasm', 'cpu']) {
      await tf.setBackend(backend);
      if (!tf.getKernel(job.tfjsKernel, backend)) {
        row[backend] = 'not registered';
        continue;
      }
      const t = time(job.tfjs);
      row[backend] = t.cpu;
      row[`${backend}Wall`] = t.ms;
      if (t.runs === 1) row.note = `${row.note ? `${row.note}, ` : ''}tfjs-${backend}: 1 run`;
      row.err = Math.max(row.err, maxRelErr(t.result, want));
      job.reset();
    }
    rows.push(row);
    console.error(`done: ${row.op} ${row.shape}`);
  }
}

const ms = (v) => (typeof v === 'number' ? v.toFixed(3) : v ?? 'skipped');
const gf = (r, v) => (typeof v === 'number' ? (r.flops / v / 1e6).toFixed(1) : '-');
const ratio = (r, v) => (typeof v === 'number' ? `${(v / r.simd).toFixed(1)}x` : '-');
const head = ['shape', 'op', 'gradrt-simd wall ms', 'cpu ms', 'GFLOP/s', 'outputs= wall ms', 'cpu ms', 'GFLOP/s', 'heap cpu ms', 'GFLOP/s', ...(threaded ? [`${threads} threads wall ms`, 'speedup'] : []), 'run ms', 'GFLOP/s', 'gradrt-scalar cpu ms', 'GFLOP/s', 'run ms', 'GFLOP/s', 'tfjs-wasm cpu ms', 'GFLOP/s',
  'tfjs-cpu cpu ms', 'GFLOP/s', 'vs wasm', 'vs cpu', 'max rel err', 'note'];
const table = rows.map((r) => [r.shape, r.op, ms(r.wall), ms(r.simd), gf(r, r.simd), ms(r.intoWall), ms(r.into), gf(r, r.into), ms(r.heap), gf(r, r.heap),
  ...(threaded ? [ms(r.threadedWall), `${(r.intoWall / r.threadedWall).toFixed(2)}x`] : []), ms(r.simdRun), gf(r, r.simdRun), ms(r.scalar), gf(r, r.scalar),
  ms(r.scalarRun), gf(r, r.scalarRun), ms(r.wasm), gf(r, r.wasm),
  ms(r.cpu), gf(r, r.cpu), ratio(r, r.wasm), ratio(r, r.cpu), r.err.toExponential(1), r.note || '']);
const widths = head.map((h, i) => Math.max(h.length, ...table.map((t) => String(t[i]).length)));
const line = (cells) => `| ${cells.map((c, i) => String(c).padEnd(widths[i])).join(' | ')} |`;
const os = await import('node:os');
console.log(`gradrt ${simd.version} (Node ${process.version}); tfjs ${tf.version_core} wasm (SIMD, 1 thread) and cpu; float32 NHWC batch 1 SAME.`);
console.log(`Medians; "cpu ms" is the process CPU time of a run (robust under load; load average now ${os.loadavg()[0].toFixed(1)} on ${os.cpus().length} cores); GFLOP/s and ratios from it.`);
console.log('"outputs=": runOp(op, inputs, attrs, { outputs }) writing into arrays allocated once (the steady state of a training loop).');
console.log('"heap": runOp on HeapTensors (rt.tensor() inputs read in place, outputs kept in the heap with { heap: true }, then disposed): no JS copies.');
console.log('"run ms": CPU time of the _gradrt_run call alone (inputs staged in the wasm heap once, outputs not copied out): core + kernel, without runOp\'s JS copies.');
console.log(line(head));
console.log(line(widths.map((w) => '-'.repeat(w))));
for (const t of table) console.log(line(t));

const geomean = (a) => Math.exp(a.reduce((s, v) => s + Math.log(v), 0) / a.length);
const bpi = rows.filter((r) => r.op === 'Conv2DBackpropInput' && typeof r.wasm === 'number');
const speedup = geomean(bpi.map((r) => r.wasm / r.simd));
const wallSpeedup = geomean(bpi.map((r) => r.wasmWall / r.wall));
if (bpi.length) console.log(`\nConv2DBackpropInput vs tfjs-wasm, geomean of ${bpi.length} conv shapes: ${speedup.toFixed(1)}x CPU time, ${wallSpeedup.toFixed(1)}x wall (target >= 10x: ${speedup >= 10 ? 'met' : 'NOT met'})`);
for (const r of rows.filter((r) => r.op !== 'Conv2DBackpropInput' && r.op !== 'FusedBatchNormGrad')) {
  const g = r.flops / r.simd / 1e6, gh = r.flops / r.heap / 1e6, gr = r.flops / r.simdRun / 1e6;
  const verdict = g >= 30 ? 'met' : gh >= 30 ? 'met with HeapTensors' : gr >= 30 ? 'met in wasm only' : 'NOT met';
  console.log(`${r.op} ${r.shape}: ${g.toFixed(1)} GFLOP/s runOp, ${gh.toFixed(1)} with HeapTensors, ${gr.toFixed(1)} in wasm (target >= 30: ${verdict})`);
}
