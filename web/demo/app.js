// The demo page: pick an op and a shape, run it through gradrt, compare with the plain-JS
// reference (../test/reference.js) computed here, plot the time per op.
// window.gradrtDemo.run(config) is what the Chromium test drives.
import { init } from '../src/index.js';
import * as ref from '../test/reference.js';

const $ = (id) => document.getElementById(id);

function random(n, seed) {
  let s = seed >>> 0 || 1;
  const out = new Float32Array(n);
  for (let i = 0; i < n; i++) {
    s ^= s << 13; s >>>= 0; s ^= s >>> 17; s ^= s << 5; s >>>= 0;
    out[i] = (s / 4294967296) * 2 - 1;
  }
  return out;
}
const t32 = (shape, data) => ({ dtype: 'float32', shape, data });

// Each op: inputs, attrs, the output to check, its reference, and the flop count.
const OPS = {
  Conv2DBackpropInput: (p) => conv(p, false, 'input'),
  Conv2DBackpropFilter: (p) => conv(p, false, 'filter'),
  DepthwiseConv2dNativeBackpropInput: (p) => conv(p, true, 'input'),
  DepthwiseConv2dNativeBackpropFilter: (p) => conv(p, true, 'filter'),
  FusedBatchNormGrad: (p) => {
    const xs = [p.n, p.h, p.w, p.c];
    const count = p.n * p.h * p.w * p.c;
    const x = random(count, 1), dy = random(count, 2), scale = random(p.c, 3).map((v) => v + 1.5);
    const mean = random(p.c, 4).map((v) => v * 0.1), variance = random(p.c, 5).map((v) => v + 1.2);
    const attrs = { epsilon: 0.001, is_training: true };
    return {
      inputs: { y_backprop: t32(xs, dy), x: t32(xs, x), scale: t32([p.c], scale), reserve_space_1: t32([p.c], mean), reserve_space_2: t32([p.c], variance) },
      attrs, output: 'x_backprop', flops: 10 * count,
      reference: () => ref.fusedBatchNormGrad(dy, x, p.c, scale, mean, variance, attrs).x_backprop,
    };
  },
  FractionalAvgPoolGrad: (p) => {
    const oh = Math.max(1, Math.floor(p.h / 1.5)), ow = Math.max(1, Math.floor(p.w / 1.5));
    const seq = (size, out) => Array.from({ length: out + 1 }, (_, i) => Math.floor((i * size) / out));
    const rows = seq(p.h, oh), cols = seq(p.w, ow);
    const dyShape = [p.n, oh, ow, p.c];
    const dy = random(dyShape.reduce((a, b) => a * b), 6);
    return {
      inputs: { orig_input_tensor_shape: [p.n, p.h, p.w, p.c], out_backprop: t32(dyShape, dy), row_pooling_sequence: rows, col_pooling_sequence: cols },
      attrs: { overlapping: true }, output: 'output', flops: 2 * p.n * p.h * p.w * p.c,
      reference: () => ref.fractionalAvgPoolGrad([p.n, p.h, p.w, p.c], dyShape, dy, rows, cols, true),
    };
  },
};

function conv(p, depthwise, which) {
  const xs = [p.n, p.h, p.w, p.c];
  const ws = [p.k, p.k, p.c, p.m];
  const attrs = { strides: [1, p.s, p.s, 1], padding: p.padding };
  const g = ref.convGeometry(xs, ws, attrs, depthwise);
  const ys = [g.N, g.OH, g.OW, g.OC];
  const x = random(xs.reduce((a, b) => a * b), 7), w = random(ws.reduce((a, b) => a * b), 8), dy = random(ys.reduce((a, b) => a * b), 9);
  const macs = g.N * g.OH * g.OW * g.OC * p.k * p.k * (depthwise ? 1 : p.c);
  if (which === 'input') {
    return {
      inputs: { input_sizes: xs, filter: t32(ws, w), out_backprop: t32(ys, dy) }, attrs, output: 'output', flops: 2 * macs,
      reference: () => (depthwise ? ref.depthwiseConv2dNativeBackpropInput : ref.conv2dBackpropInput)(g, w, dy),
    };
  }
  return {
    inputs: { input: t32(xs, x), filter_sizes: ws, out_backprop: t32(ys, dy) }, attrs, output: 'output', flops: 2 * macs,
    reference: () => (depthwise ? ref.depthwiseConv2dNativeBackpropFilter : ref.conv2dBackpropFilter)(g, x, dy),
  };
}

function stats(data) {
  let min = Infinity, max = -Infinity, sum = 0, sq = 0;
  for (const v of data) { min = Math.min(min, v); max = Math.max(max, v); sum += v; sq += v * v; }
  return { min, max, mean: data.length ? sum / data.length : 0, l2: Math.sqrt(sq) };
}

function agreement(got, want) {
  let maxErr = 0, maxRef = 0;
  for (let i = 0; i < want.length; i++) {
    maxErr = Math.max(maxErr, Math.abs(got[i] - want[i]));
    maxRef = Math.max(maxRef, Math.abs(want[i]));
  }
  const relErr = maxErr / (maxRef || 1);
  return { maxErr, relErr, agrees: got.length === want.length && relErr <= 1e-4 };
}

function median(a) {
  const s = [...a].sort((x, y) => x - y);
  return s[Math.floor(s.length / 2)];
}

const history = [];
const SHORT = {
  Conv2DBackpropInput: 'conv dx', Conv2DBackpropFilter: 'conv dw', DepthwiseConv2dNativeBackpropInput: 'depthwise dx',
  DepthwiseConv2dNativeBackpropFilter: 'depthwise dw', FusedBatchNormGrad: 'batch-norm grad', FractionalAvgPoolGrad: 'frac. pool grad',
};

function plot() {
  const canvas = $('plot');
  const ctx = canvas.getContext('2d');
  ctx.clearRect(0, 0, canvas.width, canvas.height);
  const bars = history.slice(-12);
  if (!bars.length) return;
  const top = Math.max(...bars.map((b) => b.ms)) * 1.15;
  const bw = canvas.width / bars.length;
  ctx.font = '11px system-ui, sans-serif';
  ctx.textAlign = 'center';
  bars.forEach((b, i) => {
    const h = ((canvas.height - 50) * b.ms) / top;
    const x = i * bw + bw * 0.15;
    ctx.fillStyle = b.agrees ? '#3b7dd8' : '#d83b3b';
    ctx.fillRect(x, canvas.height - 36 - h, bw * 0.7, h);
    ctx.fillStyle = '#222';
    ctx.fillText(`${b.ms < 1 ? b.ms.toFixed(3) : b.ms.toFixed(1)} ms`, x + bw * 0.35, canvas.height - 40 - h);
    ctx.fillText(b.label, x + bw * 0.35, canvas.height - 20);
    ctx.fillText(b.shape, x + bw * 0.35, canvas.height - 6);
  });
}

function show(r) {
  const f = (v) => (Math.abs(v) >= 1e4 || (Math.abs(v) < 1e-3 && v !== 0) ? v.toExponential(3) : v.toFixed(4));
  $('result').innerHTML = `
    <table>
      <tr><th>op</th><th>output shape</th><th>min</th><th>max</th><th>mean</th><th>L2</th></tr>
      <tr><td>${r.op}</td><td>[${r.shape.join(', ')}]</td><td>${f(r.stats.min)}</td><td>${f(r.stats.max)}</td><td>${f(r.stats.mean)}</td><td>${f(r.stats.l2)}</td></tr>
    </table>
    <table>
      <tr><th>gradrt (median)</th><th>GFLOP/s</th><th>JS reference</th><th>max |error|</th><th>relative</th><th>agreement</th></tr>
      <tr><td>${r.ms.toFixed(3)} ms</td><td>${r.gflops.toFixed(2)}</td><td>${r.refMs.toFixed(1)} ms</td><td>${r.maxErr.toExponential(2)}</td>
          <td>${r.relErr.toExponential(2)}</td><td class="${r.agrees ? 'ok' : 'bad'}" id="agreement">${r.agrees ? 'agrees' : 'DIFFERS'}</td></tr>
    </table>`;
}

// ?simd=false: the scalar build; ?threads=N: N threads where the page is cross-origin
// isolated (demo/serve.mjs sends COOP/COEP), else 1 (gradrt falls back silently).
const params = new URLSearchParams(location.search);
const rtPromise = init({ simd: params.get('simd') === 'false' ? false : 'auto', threads: Number(params.get('threads') || 1) });

async function run(config) {
  const rt = await rtPromise;
  const p = { n: 1, h: 28, w: 28, c: 32, k: 3, m: 32, s: 1, padding: 'SAME', op: 'Conv2DBackpropInput', ...config };
  const job = OPS[p.op](p);
  let out;
  for (let i = 0; i < 3; i++) out = rt.runOp(p.op, job.inputs, job.attrs)[job.output]; // warm-up (V8 tiers up)
  // Batches of reps calls lasting >= 5 ms each: browsers coarsen performance.now().
  const call = () => rt.runOp(p.op, job.inputs, job.attrs);
  let reps = 1;
  for (;;) {
    const t0 = performance.now();
    for (let i = 0; i < reps; i++) call();
    if (performance.now() - t0 >= 5 || reps >= 4096) break;
    reps *= 2;
  }
  const times = [];
  const until = performance.now() + 300;
  while (times.length < 5 || (times.length < 50 && performance.now() < until)) {
    const t0 = performance.now();
    for (let i = 0; i < reps; i++) call();
    times.push((performance.now() - t0) / reps);
  }
  const t0 = performance.now();
  const want = job.reference();
  const refMs = performance.now() - t0;
  const ms = median(times);
  const result = {
    op: p.op, shape: out.shape, stats: stats(out.data), ms, refMs, gflops: job.flops / ms / 1e6,
    simd: rt.simd, threads: rt.threads, ...agreement(out.data, want),
  };
  history.push({ label: SHORT[p.op], shape: `${p.h}x${p.w}x${p.c}`, ms, agrees: result.agrees });
  show(result);
  plot();
  return result;
}

function formConfig() {
  const n = (id) => Number($(id).value);
  return { op: $('op').value, n: n('n'), h: n('h'), w: n('w'), c: n('c'), k: n('k'), m: n('m'), s: n('s'), padding: $('padding').value };
}

for (const op of Object.keys(OPS)) $('op').add(new Option(op, op));
$('run').addEventListener('click', async () => {
  $('run').disabled = true;
  try {
    await run(formConfig());
  } catch (e) {
    $('result').innerHTML = `<p class="bad">${e.code || e.name}: ${e.message}</p>`;
  } finally {
    $('run').disabled = false;
  }
});

window.gradrtDemo = {
  ready: rtPromise.then((rt) => {
    $('flavour').textContent = `${rt.simd ? 'WASM SIMD128' : 'scalar (no SIMD)'}, ${rt.threads} thread${rt.threads > 1 ? 's' : ''}, gradrt ${rt.version}`;
    $('run').disabled = false;
    return { simd: rt.simd, threads: rt.threads, version: rt.version, crossOriginIsolated: globalThis.crossOriginIsolated === true };
  }),
  run,
  ops: Object.keys(OPS),
};
