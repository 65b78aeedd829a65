// Kernel-level timing of the depthwise gradients (and the forward op) inside wasm (no runOp
// JS copies): each op is staged in the heap once and _gradrt_run is called many times, as
// bench.mjs's "run ms" column, but with fastest-of-N and median per call, and interleaved over
// one or more builds so that a busy machine affects every build alike (A/B).
//   node dwmicro.mjs [--dist DIR]... [--only TEXT] [--shape H,W,C,S]... [--rounds N] [--ms MS] [--cpu]
// --dist DIR: a folder holding gradrt-simd.{mjs,wasm} (default web/dist; repeat for A/B).
// Per round and build, each case runs for MS ms (after a warm-up in round 0); the table gives,
// per case and build, the fastest call, the median of the per-round medians, and GFLOP/s of both.
// `node --no-liftoff dwmicro.mjs` skips the baseline tier (the optimized-code ceiling).
import { pathToFileURL } from 'node:url';
import { resolve } from 'node:path';
import { stagedRun } from './staged.mjs';
import { random } from './random.mjs';

const args = process.argv.slice(2);
const multi = (name) => args.flatMap((a, i) => (a === name && args[i + 1] ? [args[i + 1]] : []));
const one = (name, fallback) => (args.includes(name) ? args[args.indexOf(name) + 1] : fallback);
const dists = multi('--dist');
if (!dists.length) dists.push(new URL('../../web/dist/', import.meta.url).pathname);
const only = multi('--only');
const rounds = Number(one('--rounds', 5));
const roundMs = Number(one('--ms', 300));

const t = (shape, data) => ({ dtype: 'float32', shape, data });
const count = (shape) => shape.reduce((a, b) => a * b, 1);
const CASES = [];
// --shape H,W,C,S (repeatable): other shapes than bench.mjs's two.
const shapes = multi('--shape').map((v) => v.split(',').map(Number)).map(([h, w, c, s]) => [`s${s} ${h}x${w}x${c}`, [1, h, w, c], s]);
if (!shapes.length) shapes.push(['s1 112x112x32', [1, 112, 112, 32], 1], ['s2 56x56x144', [1, 56, 56, 144], 2]);
for (const [label, xs, s] of shapes) {
  const ws = [3, 3, xs[3], 1];
  const ys = [1, Math.ceil(xs[1] / s), Math.ceil(xs[2] / s), xs[3]];
  const attrs = { strides: [1, s, s, 1], padding: 'SAME' };
  const flops = 2 * count(ys) * 9;
  CASES.push([`input ${label}`, flops, ['DepthwiseConv2dNativeBackpropInput', { input_sizes: xs, filter: t(ws, random(count(ws), 6)), out_backprop: t(ys, random(count(ys), 7)) }, attrs]]);
  CASES.push([`filter ${label}`, flops, ['DepthwiseConv2dNativeBackpropFilter', { input: t(xs, random(count(xs), 1)), filter_sizes: ws, out_backprop: t(ys, random(count(ys), 7)) }, attrs]]);
  // The forward op: at stride 2 its rows have 9 taps that are not consecutive-offset groups,
  // so their interior runs dw_interior_wasm (simd/wasm/depthwise.h).
  CASES.push([`forward ${label}`, flops, ['DepthwiseConv2dNative', { input: t(xs, random(count(xs), 1)), filter: t(ws, random(count(ws), 6)) }, attrs]]);
}
const cases = CASES.filter(([label]) => !only.length || only.some((o) => label.includes(o)));

const builds = [];
for (const d of dists) {
  const dir = resolve(d);
  const glue = await import(pathToFileURL(`${dir}/gradrt-simd.mjs`).href);
  const { readFile } = await import('node:fs/promises');
  const wasmModule = await WebAssembly.compile(await readFile(`${dir}/gradrt-simd.wasm`));
  const m = await glue.default({ instantiateWasm: (imports, ok) => { WebAssembly.instantiate(wasmModule, imports).then((i) => ok(i, wasmModule)); return {}; } });
  builds.push({ dir: d, runs: cases.map(([, , call]) => stagedRun(m, call)) });
}

// Per-call times (ms) of run() for about ms milliseconds: wall, or with --cpu the process's
// CPU time (getrusage: microseconds; the usable measure on a shared host).
const cpu = args.includes('--cpu');
function sample(run, ms) {
  const times = [];
  const end = performance.now() + ms;
  while (times.length < 5 || performance.now() < end) {
    if (cpu) {
      const c0 = process.cpuUsage();
      run();
      const c = process.cpuUsage(c0);
      times.push((c.user + c.system) / 1000);
      continue;
    }
    const t0 = performance.now();
    run();
    times.push(performance.now() - t0);
  }
  return times.sort((a, b) => a - b);
}
const med = (a) => [...a].sort((x, y) => x - y)[Math.floor(a.length / 2)];
const stats = builds.map(() => cases.map(() => ({ min: Infinity, meds: [] })));
for (const b of builds) for (const run of b.runs) sample(run, 400); // warm-up: tier up
for (let r = 0; r < rounds; r++)
  for (let ci = 0; ci < cases.length; ci++)
    for (let bi = 0; bi < builds.length; bi++) {
      const times = sample(builds[bi].runs[ci], roundMs);
      const s = stats[bi][ci];
      s.min = Math.min(s.min, times[0]);
      s.meds.push(times[Math.floor(times.length / 2)]);
    }
console.log(`Node ${process.version} ${process.execArgv.join(' ')}; ${rounds} rounds x ${roundMs} ms; per call (${cpu ? 'CPU' : 'wall'} time): fastest, median of round medians (GFLOP/s)`);
for (let ci = 0; ci < cases.length; ci++) {
  const [label, flops] = cases[ci];
  const cells = builds.map((b, bi) => {
    const s = stats[bi][ci], m = med(s.meds);
    return `${b.dir}: min ${(s.min * 1e3).toFixed(1)} us (${(flops / s.min / 1e6).toFixed(1)}) med ${(m * 1e3).toFixed(1)} us (${(flops / m / 1e6).toFixed(1)})`;
  });
  console.log(`${label.padEnd(20)} ${cells.join(' | ')}`);
}
