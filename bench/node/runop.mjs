// runOp overhead and threads, interleaved so that a busy machine affects every variant alike.
//   node runop.mjs [--baseline WEBDIR] [--threads N] [--only TEXT] [--secs S]
// Per case, median CPU ms and wall ms of:
//   default      rt.runOp(op, inputs, attrs): every output a fresh typed array
//   outputs=     rt.runOp(op, inputs, attrs, { outputs }): into arrays allocated once
//   plan / plan outputs=  the same through rt.prepare(...).run(inputs[, { outputs }])
//   baseline     --baseline WEBDIR: the default call through another copy of web/ (its src/
//                and dist/, e.g. a checkout of an earlier commit after npm run build)
//   N threads    --threads N: outputs= on init({ threads: N }) (wall time is what counts:
//                CPU time adds up over the threads)
// (needs web/dist: npm run build in web/ first)
import { init } from 'gradrt';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { random } from './random.mjs';
import { convGradShapes, count } from './conv_shapes.mjs';

const arg = (name, fallback) => (process.argv.includes(name) ? process.argv[process.argv.indexOf(name) + 1] : fallback);
const baselineDir = arg('--baseline', null);
const threads = Number(arg('--threads', 1));
const only = arg('--only', '');
const secs = Number(arg('--secs', 2));

const t = (shape, data) => ({ dtype: 'float32', shape, data });

// The conv and depthwise shapes of bench.mjs, both gradients, and its batch norm.
const CASES = [];
for (const { label, xs, ws, ys, attrs, bpi, bpf } of convGradShapes()) {
  CASES.push([label, [bpi, { input_sizes: xs, filter: t(ws, random(count(ws), 6)), out_backprop: t(ys, random(count(ys), 7)) }, attrs]]);
  CASES.push([label, [bpf, { input: t(xs, random(count(xs), 1)), filter_sizes: ws, out_backprop: t(ys, random(count(ys), 7)) }, attrs]]);
}
{
  const xs = [1, 56, 56, 256], C = 256;
  CASES.push(['batchnorm 56x56x256', ['FusedBatchNormGrad', { y_backprop: t(xs, random(count(xs), 2)), x: t(xs, random(count(xs), 1)),
    scale: t([C], random(C, 3).map((v) => v + 1)), reserve_space_1: t([C], random(C, 4)), reserve_space_2: t([C], random(C, 5).map((v) => v + 1)) },
  { epsilon: 0.001, is_training: true }]]);
}

const rt = await init({ simd: true });
const baseline = baselineDir ? await (await import(pathToFileURL(resolve(baselineDir, 'src/index.js')).href)).init({ simd: true }) : null;
const threaded = threads > 1 ? await init({ simd: true, threads }) : null;
if (threaded && threaded.threads !== threads) throw new Error(`asked for ${threads} threads, got ${threaded.threads}`);

const into = (r, call) => {
  const outputs = Object.fromEntries(Object.entries(r.runOp(...call)).map(([k, v]) => [k, new v.data.constructor(v.data.length)]));
  return () => r.runOp(call[0], call[1], call[2], { outputs });
};
const median = (a) => a.slice().sort((x, y) => x - y)[a.length >> 1];
const os = await import('node:os');
console.log(`gradrt ${rt.version}, Node ${process.version}, SIMD build; load average ${os.loadavg()[0].toFixed(1)} on ${os.cpus().length} cores; medians, CPU ms / wall ms`);
for (const [label, call] of CASES) {
  if (only && !label.includes(only) && !call[0].includes(only)) continue;
  const specs = Object.fromEntries(Object.entries(call[1]).map(([k, v]) => [k, Array.isArray(v) ? v : { dtype: v.dtype, shape: v.shape }]));
  const plan = rt.prepare(call[0], specs, call[2]);
  const planOut = Object.fromEntries(plan.outputs.map((o) => [o.name, new Float32Array(o.shape.reduce((a, b) => a * b, 1))]));
  const variants = {
    default: () => rt.runOp(...call),
    'outputs=': into(rt, call),
    plan: () => plan.run(call[1]),
    'plan outputs=': () => plan.run(call[1], { outputs: planOut }),
  };
  if (baseline) variants.baseline = () => baseline.runOp(...call);
  if (threaded) variants[`${threads} threads`] = into(threaded, call);
  const samples = Object.fromEntries(Object.keys(variants).map((k) => [k, { cpu: [], wall: [] }]));
  for (let i = 0; i < 3; i++) Object.values(variants).forEach((f) => f());
  const end = performance.now() + secs * 1000;
  while (performance.now() < end) {
    for (const [k, f] of Object.entries(variants)) {
      const c0 = process.cpuUsage(), w0 = performance.now();
      f();
      const c = process.cpuUsage(c0);
      samples[k].wall.push(performance.now() - w0);
      samples[k].cpu.push((c.user + c.system) / 1000);
    }
  }
  const cells = Object.entries(samples).map(([k, v]) => `${k} ${median(v.cpu).toFixed(3)}/${median(v.wall).toFixed(3)}`);
  console.log(`${`${label} ${call[0]}`.padEnd(64)} ${cells.join(' | ')} (${samples.default.wall.length} runs)`);
}
process.exit(0); // the threaded runtime's workers are unref'd; exit at once anyway
