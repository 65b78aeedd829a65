// Does the time of a gradrt call depend on what ran before it in the process? (issue 14,
// item 6). DepthwiseConv2dNativeBackpropInput 112x112x32 3x3 s1 SAME (1.6 MB in, 1.6 MB
// out), timed per call along every path, in fresh Node processes and in processes that
// first ran conv gradients of other sizes, paired and interleaved (fresh, history,
// history, fresh, ...) so that a busy machine affects both alike.
//   node history.mjs [--pairs N] [--calls N]   (npm ci here; needs web/dist: npm run build in web/)
// Paths, per call:
//   kernel   one _gradrt_run on inputs staged in the heap once (no JS, no copies)
//   heap     runOp on HeapTensor inputs, output kept in the heap ({ heap: true })
//   outputs  runOp with a typed-array input and { outputs }: copy in, kernel, copy out
//   default  runOp: copy in, kernel, output copied into a fresh typed array
//   tfjs     tfjs-backend-wasm's runKernel through gradrt/tfjs (reads tfjs's heap, writes
//            into a tensor makeOutput allocated there): copy in, kernel, copy out
// Per path: the fastest call and the median call (ms), minor page faults per call; the
// table gives the median over processes of each, and the ratio of the fastest calls to the
// kernel's.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const args = process.argv.slice(2);
const opt = (name, fallback) => (args.includes(name) ? args[args.indexOf(name) + 1] : fallback);
const PATHS = ['kernel', 'heap', 'outputs', 'default', 'tfjs'];

async function child(mode, calls) {
  const { load } = await import('../../web/src/loader.js');
  const { Runtime } = await import('../../web/src/runtime.js');
  const { stagedRun } = await import('./staged.mjs');
  const { random } = await import('./random.mjs');
  const tf = await import('@tensorflow/tfjs-core');
  await import('@tensorflow/tfjs-backend-wasm');
  const { registerGradrtKernels } = await import('gradrt/tfjs');

  const { module: m } = await load({ simd: true });
  const rt = new Runtime(m, true);
  const t = (shape, data) => ({ dtype: 'float32', shape, data });
  const count = (s) => s.reduce((a, b) => a * b, 1);
  const same = (s) => ({ strides: [1, s, s, 1], padding: 'SAME' });
  if (mode === 'history') {
    for (const [xs, ws, s] of [[[1, 56, 56, 64], [3, 3, 64, 64], 1], [[1, 56, 56, 64], [3, 3, 64, 128], 2], [[1, 28, 28, 256], [1, 1, 256, 512], 1]]) {
      const o = Math.ceil(xs[1] / s);
      const ys = [1, o, o, ws[3]];
      rt.runOp('Conv2DBackpropInput', { input_sizes: xs, filter: t(ws, random(count(ws), 1)), out_backprop: t(ys, random(count(ys), 2)) }, same(s));
      rt.runOp('Conv2DBackpropFilter', { input: t(xs, random(count(xs), 3)), filter_sizes: ws, out_backprop: t(ys, random(count(ys), 2)) }, same(s));
    }
  }
  const xs = [1, 112, 112, 32];
  const ws = [3, 3, 32, 1];
  const w = random(count(ws), 6);
  const dy = random(count(xs), 7);
  const op = ['DepthwiseConv2dNativeBackpropInput', { input_sizes: xs, filter: t(ws, w), out_backprop: t(xs, dy) }, same(1)];
  const dest = new Float32Array(count(xs));
  const hw = rt.tensor('float32', ws, w);
  const hdy = rt.tensor('float32', xs, dy);
  await tf.setBackend('wasm');
  const handle = await registerGradrtKernels(tf, { backends: ['wasm'], runtime: rt });
  const tw = tf.tensor(w, ws);
  const tdy = tf.tensor(dy, xs);
  const tattrs = { strides: 1, pad: 'same', dilations: 1, inputShape: xs };
  const kernel = stagedRun(m, op);
  const fns = {
    kernel,
    heap: () => rt.runOp(op[0], { input_sizes: xs, filter: hw, out_backprop: hdy }, op[2], { heap: true }).output.dispose(),
    outputs: () => rt.runOp(op[0], op[1], op[2], { outputs: { output: dest } }),
    default: () => rt.runOp(op[0], op[1], op[2]),
    tfjs: () => tf.engine().runKernel(op[0], { dy: tdy, filter: tw }, tattrs).dispose(),
  };
  const result = {};
  // Round-robin over the paths, so that each sees the same moments of a busy machine.
  const times = Object.fromEntries(PATHS.map((p) => [p, []]));
  const faults = Object.fromEntries(PATHS.map((p) => [p, 0]));
  for (let i = 0; i < 20; i++) for (const p of PATHS) fns[p]();
  for (let i = 0; i < calls; i++) {
    for (const p of PATHS) {
      const f0 = process.resourceUsage().minorPageFault;
      const t0 = performance.now();
      fns[p]();
      times[p].push(performance.now() - t0);
      faults[p] += process.resourceUsage().minorPageFault - f0;
    }
  }
  for (const p of PATHS) {
    const s = times[p].sort((a, b) => a - b);
    result[p] = { min: s[0], median: s[s.length >> 1], faults: faults[p] / calls };
  }
  handle.restore();
  console.log(JSON.stringify(result));
}

function median(values) {
  const s = [...values].sort((a, b) => a - b);
  return s.length % 2 ? s[s.length >> 1] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
}

if (args[0] === '--child') {
  await child(args[1], Number(args[2]));
} else {
  const pairs = Number(opt('--pairs', 4));
  const calls = Number(opt('--calls', 200));
  const runs = { fresh: [], history: [] };
  for (let i = 0; i < pairs; i++) {
    for (const mode of i % 2 ? ['history', 'fresh'] : ['fresh', 'history']) {
      const r = spawnSync(process.execPath, [fileURLToPath(import.meta.url), '--child', mode, String(calls)], { encoding: 'utf8' });
      if (r.status !== 0) throw new Error(r.stderr);
      runs[mode].push(JSON.parse(r.stdout.trim().split('\n').pop()));
    }
  }
  const row = (cells) => `| ${cells.join(' | ')} |`;
  console.log(`DepthwiseConv2dNativeBackpropInput 112x112x32 3x3 s1, SIMD build, ${pairs} fresh + ${pairs} history processes x ${calls} calls per path`);
  console.log(row(['path', 'fastest ms fresh', 'fastest ms history', 'median ms fresh', 'median ms history', 'faults/call', 'fastest / kernel']));
  console.log(row(['---', '---:', '---:', '---:', '---:', '---:', '---:']));
  const m = (mode, p, k) => median(runs[mode].map((r) => r[p][k]));
  for (const p of PATHS) {
    const ratio = (mode) => (m(mode, p, 'min') / m(mode, 'kernel', 'min')).toFixed(2);
    console.log(row([p, m('fresh', p, 'min').toFixed(3), m('history', p, 'min').toFixed(3), m('fresh', p, 'median').toFixed(3),
      m('history', p, 'median').toFixed(3), `${m('fresh', p, 'faults').toFixed(0)} / ${m('history', p, 'faults').toFixed(0)}`,
      `${ratio('fresh')} / ${ratio('history')}`]));
  }
}
