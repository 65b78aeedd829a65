// The training step (model.trainOnBatch, batch 32) of TF.js models with and without
// gradrt/tfjs, in one Node process: a benchmark, not a test.
//   cd bench/node && npm install && node train.mjs [--rounds R] [--steps S] [--expand E]
//     [--only cnn|mbconv] [--mbconv-cpu-rounds N] [--csv FILE] [--svg FILE]     (needs web/dist: npm run build in web/)
// Models (issue 14): "cnn" = conv3x3(16) + batchNormalization + relu + depthwise3x3 + global
// average pool + dense(10) on 28x28x1; "mbconv" = one MobileNet-style block on 56x56x32:
// 1x1 expand conv (32 -> 32E) + BN + relu6, depthwise 3x3 stride 2 + BN + relu6, 1x1 project
// conv (-> 32) + BN, mean squared error against a fixed target.
// Configurations: tfjs cpu alone (tfjs's kernels and batchNormalization layer), tfjs cpu +
// gradrt, tfjs wasm + gradrt with gradrt at 1 and 2 threads (tfjs's own wasm kernels run on
// one thread in Node). With gradrt the batch norm is gradrt's layer (FusedBatchNorm each way).
// Timing: a warm-up round, then R rounds; each round runs every configuration in turn (S
// steps each, 1 for tfjs cpu alone, which runs in the first --mbconv-cpu-rounds (default 1)
// rounds only for the MobileNet block); the figure is the median over all timed steps.
// Breakdown (per configuration, from tf.profile over 3 more steps (tfjs cpu alone: 1), medians): gradrt's kernels
// as tfjs sees them (wall time of the kernels gradrt registered), of which "gradrt ops" is the
// same runOp calls replayed on tensors already in gradrt's heap (no copies) and "copies + glue"
// the rest (moving data between tfjs's memory and gradrt's, the tfjs kernel wrappers); tfjs's
// own kernels; "other" = step minus all kernels (tfjs-layers' JS, optimizer bookkeeping,
// reading back the loss).
import * as tfc from '@tensorflow/tfjs-core';
import * as tfl from '@tensorflow/tfjs-layers';
import '@tensorflow/tfjs-backend-cpu';
import '@tensorflow/tfjs-backend-wasm';
import { writeFileSync } from 'node:fs';
import { init } from 'gradrt';
import { registerGradrtKernels, gradrtLayers } from 'gradrt/tfjs';
import { random } from './random.mjs';
import { svgBars } from './svg_bars.mjs';

const tf = { ...tfc, ...tfl };
const arg = (name, fallback) => {
  const i = process.argv.indexOf(name);
  return i > 0 ? process.argv[i + 1] : fallback;
};
const ROUNDS = Number(arg('--rounds', 3));
const STEPS = Number(arg('--steps', 5));
const EXPAND = Number(arg('--expand', 4));
const ONLY = arg('--only', null);
const CSV = arg('--csv', 'train_results.csv');
const SVG = arg('--svg', 'train_results.svg');
const BATCH = 32;
const GRADRT_KERNELS = new Set(['Conv2DBackpropInput', 'Conv2DBackpropFilter', 'DepthwiseConv2dNativeBackpropInput',
  'DepthwiseConv2dNativeBackpropFilter', 'GradrtFusedBatchNorm', 'GradrtFusedBatchNormGrad', 'FusedBatchNorm']);

const median = (v) => {
  const s = [...v].sort((a, b) => a - b);
  return s.length ? (s.length % 2 ? s[s.length >> 1] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2) : NaN;
};

function cnn(bn) {
  const init = (s) => tf.initializers.glorotUniform({ seed: 11 + s });
  const m = tf.sequential();
  m.add(tf.layers.conv2d({ inputShape: [28, 28, 1], filters: 16, kernelSize: 3, padding: 'same', useBias: false, kernelInitializer: init(0) }));
  m.add(bn({}));
  m.add(tf.layers.reLU());
  m.add(tf.layers.depthwiseConv2d({ kernelSize: 3, padding: 'same', depthwiseInitializer: init(1) }));
  m.add(tf.layers.globalAveragePooling2d({}));
  m.add(tf.layers.dense({ units: 10, activation: 'softmax', kernelInitializer: init(2) }));
  m.compile({ optimizer: tf.train.sgd(0.01), loss: 'categoricalCrossentropy' });
  const labels = Int32Array.from({ length: BATCH }, (_, i) => (i * 7) % 10);
  return { model: m, x: [BATCH, 28, 28, 1], y: () => tf.oneHot(tf.tensor1d(labels, 'int32'), 10) };
}

function mbconv(bn) {
  const init = (s) => tf.initializers.glorotUniform({ seed: 21 + s });
  const m = tf.sequential();
  m.add(tf.layers.conv2d({ inputShape: [56, 56, 32], filters: 32 * EXPAND, kernelSize: 1, useBias: false, kernelInitializer: init(0) }));
  m.add(bn({}));
  m.add(tf.layers.reLU({ maxValue: 6 }));
  m.add(tf.layers.depthwiseConv2d({ kernelSize: 3, strides: 2, padding: 'same', useBias: false, depthwiseInitializer: init(1) }));
  m.add(bn({}));
  m.add(tf.layers.reLU({ maxValue: 6 }));
  m.add(tf.layers.conv2d({ filters: 32, kernelSize: 1, useBias: false, kernelInitializer: init(2) }));
  m.add(bn({}));
  m.compile({ optimizer: tf.train.sgd(0.01), loss: 'meanSquaredError' });
  return { model: m, x: [BATCH, 56, 56, 32], y: () => tf.tensor(random(BATCH * 28 * 28 * 32, 5), [BATCH, 28, 28, 32]) };
}

// cpuRounds: rounds in which tfjs cpu alone runs (its MobileNet-block step takes about a minute).
const MODELS = { cnn: { make: cnn, cpuRounds: ROUNDS, label: `CNN 28x28x1 (conv3x3 16, BN, relu, depthwise3x3, GAP, dense 10)` },
  mbconv: { make: mbconv, cpuRounds: Number(arg('--mbconv-cpu-rounds', 1)), label: `MobileNet block 56x56x32 (1x1 -> ${32 * EXPAND}, BN, relu6, dw3x3 s2, BN, relu6, 1x1 -> 32, BN)` } };

const rt1 = await init({ threads: 1 });
const rt2 = await init({ threads: 2 });
const CONFIGS = [
  { name: 'tfjs cpu', backend: 'cpu', rt: null, steps: 1 },
  { name: 'tfjs cpu + gradrt', backend: 'cpu', rt: rt1, steps: STEPS },
  { name: 'tfjs wasm + gradrt 1t', backend: 'wasm', rt: rt1, steps: STEPS },
  { name: `tfjs wasm + gradrt 2t`, backend: 'wasm', rt: rt2, steps: STEPS },
];
if (rt2.threads !== 2) throw new Error(`gradrt's threaded build did not load (threads ${rt2.threads}): npm run build in web/ builds it`);

let handle = null;
async function use(config) {
  handle?.restore();
  handle = null;
  await tf.setBackend(config.backend);
  if (config.rt) handle = await registerGradrtKernels(tf, { backends: [config.backend], runtime: config.rt });
}

// One (model, configuration) pair: the model built on its backend with its batch norm,
// its input batch, a step function that resolves after the loss is read back.
async function setup(modelName, config) {
  await use(config);
  const layers = gradrtLayers(tf);
  const bn = config.rt ? (c) => layers.batchNormalization(c) : (c) => tf.layers.batchNormalization(c);
  const { model, x, y } = MODELS[modelName].make(bn);
  const xs = tf.tensor(random(x.reduce((a, b) => a * b), 3), x);
  const ys = y();
  return { modelName, config, model, xs, ys, times: [], cpu: [], profiles: [], step: () => model.trainOnBatch(xs, ys) };
}

// Kernel ms by name from one tf.profile of a step. Only registered kernels: a customGrad op
// (e.g. 'fusedConv2d__op') is profiled as a wrapper around the kernels it runs, which are
// profiled too.
async function profileStep(run) {
  const prof = await tf.profile(() => run.step());
  const byKernel = {};
  for (const k of prof.kernels) {
    if (tf.getKernel(k.name, run.config.backend)) byKernel[k.name] = (byKernel[k.name] || 0) + k.kernelTimeMs;
  }
  return byKernel;
}

// n timed steps. tfjs cpu alone (seconds to minutes a step) is profiled while timed, with no
// untimed step: tf.profile's cost is a few calls to performance.now() per kernel.
async function timeSteps(run, n) {
  await use(run.config);
  const slow = !run.config.rt;
  if (!slow) await run.step(); // untimed after the switch (caches, V8 tier-up)
  for (let i = 0; i < n; i++) {
    const c0 = process.cpuUsage(), t0 = performance.now();
    if (slow) run.profiles.push(await profileStep(run));
    else await run.step();
    run.times.push(performance.now() - t0);
    const c = process.cpuUsage(c0);
    run.cpu.push((c.user + c.system) / 1000);
  }
}

// The breakdown: kernels per step from tf.profile (3 more steps; tfjs cpu alone: its timed
// steps), and the gradrt ops replayed in-heap.
async function breakdown(run) {
  const rt = run.config.rt;
  const perStep = run.profiles;
  const calls = [];
  if (rt) {
    await use(run.config);
    await run.step();
    rt.runOp = (op, inputs, attrs, options) => {
      if (calls.recording) calls.push(snapshot(op, inputs, attrs, options));
      return Object.getPrototypeOf(rt).runOp.call(rt, op, inputs, attrs, options);
    };
    try {
      for (let p = 0; p < 3; p++) {
        calls.recording = p === 0;
        perStep.push(await profileStep(run));
      }
    } finally {
      delete rt.runOp;
    }
  }
  const names = [...new Set(perStep.flatMap(Object.keys))];
  const kernels = Object.fromEntries(names.map((n) => [n, median(perStep.map((s) => s[n] || 0))]));
  const isGradrt = (n) => rt && GRADRT_KERNELS.has(n);
  const sum = (pick) => Object.entries(kernels).filter(([n]) => pick(n)).reduce((a, [, v]) => a + v, 0);
  const gradrtWall = sum(isGradrt), tfjs = sum((n) => !isGradrt(n));
  const ops = rt ? replay(rt, calls) : 0;
  const step = median(run.times);
  return { kernels, gradrtWall, gradrtOps: ops, copies: Math.max(0, gradrtWall - ops), tfjs, other: Math.max(0, step - gradrtWall - tfjs), fallbacks: { ...(handle?.fallbacks ?? {}) } };
}

// A runOp call's arguments, with the data copied (tfjs's views are only valid now).
function snapshot(op, inputs, attrs, options) {
  const copy = {};
  for (const [k, v] of Object.entries(inputs)) copy[k] = v && ArrayBuffer.isView(v.data) ? { dtype: v.dtype, shape: [...v.shape], data: v.data.slice() } : v;
  const dropped = Object.entries(options?.outputs ?? {}).filter(([, d]) => d === null).map(([k]) => k);
  return { op, inputs: copy, attrs, dropped };
}

// Median ms per step of the recorded calls with inputs already in gradrt's heap and outputs
// left there: gradrt's kernels without the copies to and from tfjs.
function replay(rt, calls) {
  let total = 0;
  for (const c of calls) {
    const inputs = Object.fromEntries(Object.entries(c.inputs).map(([k, v]) => [k, v && v.data ? rt.tensor(v.dtype, v.shape, v.data) : v]));
    const outputs = Object.fromEntries(c.dropped.map((k) => [k, null]));
    const once = () => {
      const t0 = performance.now();
      const r = rt.runOp(c.op, inputs, c.attrs, { outputs, heap: true });
      const ms = performance.now() - t0;
      for (const t of Object.values(r)) t.dispose?.();
      return ms;
    };
    for (let i = 0; i < 3; i++) once();
    total += median(Array.from({ length: 7 }, once));
    for (const t of Object.values(inputs)) t?.dispose?.();
  }
  return total;
}

// tfjs wasm alone cannot train these models: show it once.
async function wasmAloneError() {
  await use({ backend: 'wasm', rt: null });
  const { model, x, y } = cnn((c) => tf.layers.batchNormalization(c));
  try {
    await model.trainOnBatch(tf.zeros(x), y());
    return 'trained (unexpected)';
  } catch (e) {
    return e.message.split('\n')[0];
  } finally {
    model.dispose();
  }
}

console.log(`# tfjs ${tf.version_core} (cpu, wasm ${tf.wasm?.getThreadsCount?.() ?? 1} thread), gradrt ${rt1.version} (${rt1.simd ? 'SIMD' : 'scalar'}), batch ${BATCH}, ${ROUNDS} rounds x ${STEPS} steps (tfjs cpu alone: 1 per round)`);
console.log(`# tfjs wasm alone: ${await wasmAloneError()}`);
const rows = [];
for (const modelName of Object.keys(MODELS).filter((m) => !ONLY || m === ONLY)) {
  const runs = [];
  for (const config of CONFIGS) runs.push(await setup(modelName, config));
  // A warm-up round (V8 tiers up, heaps grow), not for tfjs cpu alone.
  for (const run of runs.filter((x) => x.config.rt)) await timeSteps(run, 1);
  for (const run of runs) run.times.length = run.cpu.length = 0;
  for (let r = 0; r < ROUNDS; r++) {
    for (const run of runs) {
      if (!run.config.rt && r >= MODELS[modelName].cpuRounds) continue;
      await timeSteps(run, run.config.steps);
      process.stderr.write(`# ${modelName} round ${r + 1}/${ROUNDS}, ${run.config.name}: ${median(run.times.slice(-run.config.steps)).toFixed(1)} ms\n`);
    }
  }
  const base = median(runs[0].times);
  for (const run of runs) {
    const b = await breakdown(run);
    const step = median(run.times);
    rows.push({ model: modelName, config: run.config.name, step, cpu: median(run.cpu), q1: quantile(run.times, 0.25), q3: quantile(run.times, 0.75), n: run.times.length, speedup: base / step, ...b });
    const top = Object.entries(b.kernels).sort((a, c) => c[1] - a[1]).slice(0, 6).map(([n, v]) => `${n} ${v.toFixed(2)}`).join(', ');
    console.log(`# ${modelName} / ${run.config.name}: kernels (ms/step): ${top}${Object.keys(b.fallbacks).length ? `; FALLBACKS ${JSON.stringify(b.fallbacks)}` : ''}`);
  }
  handle?.restore();
  handle = null;
  for (const run of runs) { run.model.dispose(); tf.dispose([run.xs, run.ys]); }
}

function quantile(v, q) {
  const s = [...v].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))];
}

const f = (v, d = 2) => (Number.isFinite(v) ? v.toFixed(d) : '-');
const header = ['model', 'configuration', 'ms/step', 'IQR', 'CPU ms/step', 'steps', 'vs tfjs cpu', 'gradrt kernels', 'gradrt ops', 'copies+glue', 'tfjs kernels', 'other', 'gradrt share'];
const table = rows.map((r) => [r.model, r.config, f(r.step, r.step < 10 ? 2 : 0), `${f(r.q1, 1)}-${f(r.q3, 1)}`, f(r.cpu, r.cpu < 10 ? 2 : 0), String(r.n), `${f(r.speedup, 1)}x`,
  f(r.gradrtWall), f(r.gradrtOps), f(r.copies), f(r.tfjs), f(r.other), `${f((100 * r.gradrtWall) / r.step, 0)}%`]);
const widths = header.map((h, i) => Math.max(h.length, ...table.map((t) => t[i].length)));
const line = (cells) => `| ${cells.map((c, i) => (i < 2 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join(' | ')} |`;
console.log(line(header));
console.log(`|${widths.map((w, i) => (i < 2 ? ':' : '-') + '-'.repeat(w) + (i < 2 ? '-' : ':')).join('|')}|`);
for (const t of table) console.log(line(t));
console.log('# ms per step (wall); CPU ms: process CPU time per step (all threads: the 2t rows add both); gradrt kernels = gradrt ops (in-heap replay) + copies+glue; other = step - kernels (layers JS, optimizer, loss readback)');

writeFileSync(CSV, ['model,config,step_ms,q1_ms,q3_ms,cpu_ms,steps,speedup_vs_tfjs_cpu,gradrt_kernels_ms,gradrt_ops_ms,copies_ms,tfjs_kernels_ms,other_ms',
  ...rows.map((r) => [r.model, r.config, r.step, r.q1, r.q3, r.cpu, r.n, r.speedup, r.gradrtWall, r.gradrtOps, r.copies, r.tfjs, r.other].map((v) => (typeof v === 'number' ? v.toFixed(3) : v)).join(','))].join('\n') + '\n');
writeFileSync(SVG, svgBars(rows, Object.fromEntries(Object.entries(MODELS).map(([k, v]) => [k, v.label]))));
console.log(`# wrote ${CSV}, ${SVG}`);
for (const r of [rt1, rt2]) r.dispose?.();
process.exit(0);
