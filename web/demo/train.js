// The training page (train.html): trains demo/digits.js's CNN with TensorFlow.js (the UMD
// scripts the page loads from node_modules set window.tf), on tfjs's own kernels or with
// gradrt's registered under them, and draws live loss / accuracy / time-per-step curves.
// window.gradrtTrain: { ready, train(config), result } is what the Chromium test drives
// (train() runs exactly what the Train button runs).
import { registerGradrtKernels, gradrtLayers } from '../src/tfjs/index.js';
import { parseDigits, buildModel, train, evaluate } from './digits.js';
import { plot } from './plot.js';

const tf = window.tf;
const $ = (id) => document.getElementById(id);
const params = new URLSearchParams(location.search);
const isolated = globalThis.crossOriginIsolated === true;
// Threads need a cross-origin isolated page (SharedArrayBuffer); elsewhere 1.
const threads = isolated ? Math.max(1, Number(params.get('threads')) || 1) : 1;

// tfjs-backend-wasm fetches its .wasm files from node_modules (no CDN).
tf.wasm.setWasmPaths(new URL('../node_modules/@tensorflow/tfjs-backend-wasm/dist/', location.href).href);
if (isolated) tf.wasm.setThreadsCount(threads);

const ENGINES = {
  'wasm+gradrt': { backend: 'wasm', gradrt: true },
  'cpu+gradrt': { backend: 'cpu', gradrt: true },
  cpu: { backend: 'cpu', gradrt: false },
  wasm: { backend: 'wasm', gradrt: false },
};

let handle = null; // the gradrt registration in force, if any
let runtime = null; // one gradrt runtime for the page (its threads are fixed at init)
let stopRequested = false;
let running = false;

// Puts the chosen engine in place: gradrt's kernels registered on its backend, or tfjs's own
// registry. The model's layers: gradrt's fused batch norm and fractional pooling with
// gradrt; tfjs alone has no fractional pooling, so there a 4x4/1 average pool takes its
// place (the same 8x8 -> 5x5 shape).
async function useEngine(name) {
  const engine = ENGINES[name];
  if (!engine) throw new Error(`unknown engine '${name}' (one of ${Object.keys(ENGINES).join(', ')})`);
  handle?.restore();
  handle = null;
  if (!(await tf.setBackend(engine.backend))) throw new Error(`tfjs backend '${engine.backend}' failed to start`);
  if (!engine.gradrt) {
    return { layers: { fractionalAvgPool: () => tf.layers.averagePooling2d({ poolSize: 4, strides: 1, padding: 'valid' }) } };
  }
  handle = await registerGradrtKernels(tf, { backends: [engine.backend], ...(runtime ? { runtime } : { threads }) });
  runtime = handle.runtime;
  const g = gradrtLayers(tf);
  return { layers: { batchNormalization: g.batchNormalization, fractionalAvgPool: g.fractionalAvgPool } };
}

const median = (v) => {
  if (!v.length) return NaN;
  const s = [...v].sort((a, b) => a - b);
  return s.length % 2 ? s[s.length >> 1] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const fmt = (v, d = 3) => (Number.isFinite(v) ? v.toFixed(d) : '-');

function drawSamples(model, held) {
  const canvas = $('samples'), ctx = canvas.getContext('2d');
  const n = 24, cols = 8, cell = 54, scale = 5;
  const pred = tf.tidy(() => tf.argMax(model.predict(tf.tensor4d(held.x.subarray(0, n * 64), [n, 8, 8, 1])), -1).dataSync());
  ctx.fillStyle = '#fff';
  ctx.fillRect(0, 0, canvas.width, canvas.height);
  ctx.fillStyle = '#222';
  ctx.font = '600 12px system-ui, sans-serif';
  ctx.fillText('First 24 held-out digits: prediction (green right, red wrong)', 8, 15);
  const img = ctx.createImageData(8 * scale, 8 * scale);
  for (let i = 0; i < n; i++) {
    for (let p = 0; p < 64 * scale * scale; p++) {
      const x = Math.floor((p % (8 * scale)) / scale), y = Math.floor(Math.floor(p / (8 * scale)) / scale);
      const v = 255 - Math.round(held.x[i * 64 + y * 8 + x] * 255);
      img.data.set([v, v, v, 255], p * 4);
    }
    const cx = 12 + (i % cols) * cell, cy = 24 + Math.floor(i / cols) * (cell + 12);
    ctx.putImageData(img, cx, cy);
    ctx.fillStyle = pred[i] === held.y[i] ? '#0a7d25' : '#b00020';
    ctx.font = '600 13px system-ui, sans-serif';
    ctx.fillText(String(pred[i]), cx + 8 * scale + 3, cy + 14);
  }
}

function makeView(engineName, epochs, stepsPerEpoch) {
  const loss = [], lossAvg = [], acc = [], held = [], heldLoss = [], ms = [], msMedian = [];
  let ema = null, accAvg = null;
  const last = (v, k) => v.slice(-k).map((p) => p[1]);
  const draw = () => {
    const xMax = epochs * stepsPerEpoch;
    plot($('plot-loss'), { title: 'loss (cross-entropy)', xLabel: 'step', yMin: 0, xMax, series: [
      { label: 'batch', color: '#b9c6e6', points: loss, width: 1 },
      { label: 'smoothed', color: '#1f4fb4', points: lossAvg },
      { label: 'held-out', color: '#d2691e', points: heldLoss, dots: true },
    ] });
    plot($('plot-acc'), { title: 'accuracy', xLabel: 'step', yMin: 0, yMax: 1, xMax, series: [
      { label: 'train (smoothed)', color: '#1f4fb4', points: acc },
      { label: 'held-out', color: '#d2691e', points: held, dots: true },
    ] });
    const cap = Math.max(1, 3 * median(last(ms, 200)));
    plot($('plot-ms'), { title: `time per step, ms (${engineName})`, xLabel: 'step', yMin: 0, yMax: cap, xMax, series: [
      { label: 'trainOnBatch', color: '#9fd4b5', points: ms, width: 1 },
      { label: 'median of 20', color: '#1d6b40', points: msMedian },
    ] });
  };
  return {
    ms,
    step(s) {
      ema = ema === null ? s.loss : 0.95 * ema + 0.05 * s.loss;
      accAvg = accAvg === null ? s.accuracy : 0.95 * accAvg + 0.05 * s.accuracy;
      loss.push([s.step, s.loss]); lossAvg.push([s.step, ema]); acc.push([s.step, accAvg]); ms.push([s.step, s.ms]);
      msMedian.push([s.step, median(last(ms, 20))]);
      $('s-epoch').textContent = `${s.epoch} / ${epochs}`;
      $('s-step').textContent = String(s.step);
      $('s-ms').textContent = fmt(median(last(ms, 20)), 2);
      $('s-msall').textContent = fmt(median(last(ms, Infinity)), 2);
      $('s-loss').textContent = fmt(ema);
      $('s-acc').textContent = fmt(median(last(acc, 1)));
    },
    held,
    epoch(e, steps) {
      held.push([steps, e.held.accuracy]); heldLoss.push([steps, e.held.loss]);
      $('s-held').textContent = fmt(e.held.accuracy);
      $('s-heldloss').textContent = fmt(e.held.loss);
    },
    draw,
  };
}

// One training run, as the Train button starts it. Resolves to a summary (also in
// window.gradrtTrain.result); a failure (e.g. tfjs wasm alone: no conv filter gradient)
// resolves to { error } and shows it.
async function runTraining(config) {
  if (running) throw new Error('a run is in progress');
  running = true;
  stopRequested = false;
  const { engine = 'wasm+gradrt', epochs = 12, batchSize = 32, learningRate = 0.01, seed = 1 } = config;
  for (const [id, v] of [['engine', engine], ['epochs', epochs], ['batch', batchSize], ['lr', learningRate], ['seed', seed]]) $(id).value = String(v);
  $('train').disabled = true;
  $('stop').disabled = false;
  $('status').className = '';
  $('s-engine').textContent = $('engine').selectedOptions[0]?.textContent ?? engine;
  for (const id of ['s-epoch', 's-step', 's-ms', 's-msall', 's-loss', 's-acc', 's-held', 's-heldloss']) $(id).textContent = '-';
  let model = null, result;
  try {
    const { layers } = await useEngine(engine);
    $('status').textContent = `training on tfjs ${tf.getBackend()}${handle ? ` + gradrt (${runtime.simd ? 'SIMD' : 'scalar'} build, ${runtime.threads} thread${runtime.threads > 1 ? 's' : ''})` : ' alone'}…`;
    const data = await dataReady;
    model = buildModel(tf, { layers, seed, learningRate });
    const view = makeView(engine, epochs, Math.floor(data.train.n / batchSize));
    let lastPaint = 0;
    const t0 = performance.now();
    const final = await train(tf, model, data, {
      epochs, batchSize, seed,
      onStep: (s) => view.step(s),
      onEpoch: (e) => { view.epoch(e, e.steps); drawSamples(model, data.held); },
      shouldStop: () => stopRequested,
      // Repaint about 10 times a second; a frame per step would time the page, not the step.
      yieldEvery: async () => {
        if (performance.now() - lastPaint < 100) return;
        view.draw();
        await new Promise((ok) => requestAnimationFrame(() => setTimeout(ok, 0)));
        lastPaint = performance.now();
      },
    });
    view.draw();
    const held = final ? final.held : evaluate(tf, model, data.held);
    result = {
      engine, backend: tf.getBackend(), gradrt: Boolean(handle), threads: handle ? runtime.threads : 1,
      epochs: final?.epoch ?? 0, steps: view.ms.length, heldOut: held,
      msPerStep: median(view.ms.map((p) => p[1])), heldOutByEpoch: view.held.map((p) => p[1]), seconds: (performance.now() - t0) / 1000,
      fallbacks: handle ? { ...handle.fallbacks } : {}, stopped: stopRequested,
    };
    $('status').textContent = `${stopRequested ? 'stopped' : 'done'}: held-out accuracy ${fmt(held.accuracy)} after ${result.steps} steps, ${fmt(result.msPerStep, 2)} ms per step (median), ${fmt(result.seconds, 1)} s`;
  } catch (e) {
    result = { engine, error: String(e?.message ?? e) };
    $('status').textContent = `error: ${result.error}`;
    $('status').className = 'error';
  } finally {
    // model.dispose() leaves the optimizer's slots (Adam's moments) alive.
    model?.optimizer?.dispose();
    model?.dispose();
    running = false;
    $('train').disabled = false;
    $('stop').disabled = true;
  }
  window.gradrtTrain.result = result;
  $('status').dataset.state = 'done';
  return result;
}

const dataReady = fetch('../dist/digits.bin').then((r) => {
  if (!r.ok) throw new Error('dist/digits.bin is missing: run npm run build (needs python3-sklearn)');
  return r.arrayBuffer();
}).then((b) => parseDigits(new Uint8Array(b)));

$('threads').value = String(threads);
$('threads').disabled = !isolated;
$('threads').addEventListener('change', () => {
  params.set('threads', $('threads').value);
  location.search = params.toString();
});
$('train').addEventListener('click', () => {
  delete $('status').dataset.state;
  runTraining({ engine: $('engine').value, epochs: Number($('epochs').value), batchSize: Number($('batch').value), learningRate: Number($('lr').value), seed: Number($('seed').value) });
});
$('stop').addEventListener('click', () => { stopRequested = true; });

window.gradrtTrain = {
  ready: dataReady.then((d) => {
    $('counts').textContent = `${d.train.n} training and ${d.held.n} held-out images`;
    $('status').textContent = `ready (${isolated ? `cross-origin isolated, ${threads} thread${threads > 1 ? 's' : ''}` : 'not cross-origin isolated: 1 thread'})`;
    $('train').disabled = false;
    return { crossOriginIsolated: isolated, threads, train: d.train.n, held: d.held.n };
  }),
  train: runTraining,
  result: null,
};
