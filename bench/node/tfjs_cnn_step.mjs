// Issue 14's headline: ms per model.trainOnBatch step of its CNN (conv3x3(16) + batch norm
// + relu + depthwise3x3 + global average pool + dense(10), 28x28x1, batch 32) on tfjs's cpu
// backend alone vs tfjs's wasm backend with gradrt/tfjs, in one Node process, interleaved
// round by round (registration on for the wasm rounds, restore() for the cpu ones).
//   node tfjs_cnn_step.mjs [--rounds N] [--cpu-steps N] [--wasm-steps N]
// Uses web/'s node_modules (npm ci in web/) and web/dist (npm run build in web/); the model
// and data are those of web/test/tfjs_util.js. CPU ms is process CPU time per step (the
// figure to trust on a busy machine), wall ms the elapsed time.
import { gradrtLayers, registerGradrtKernels } from '../../web/src/tfjs/index.js';
import { issueCnn, tf, toyBatch } from '../../web/test/tfjs_util.js';

const args = process.argv.slice(2);
const opt = (name, fallback) => Number(args.includes(name) ? args[args.indexOf(name) + 1] : fallback);
const rounds = opt('--rounds', 3);
const cpuSteps = opt('--cpu-steps', 3);
const wasmSteps = opt('--wasm-steps', 20);

function model(bn) {
  const m = issueCnn({ bn, seed: 1 });
  m.compile({ optimizer: tf.train.sgd(0.01), loss: 'categoricalCrossentropy' });
  return m;
}

async function time(m, data, steps) {
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  for (let i = 0; i < steps; i++) await m.trainOnBatch(data.xs, data.ys);
  const c = process.cpuUsage(c0);
  return { cpu: (c.user + c.system) / 1000 / steps, wall: (performance.now() - t0) / steps };
}

const median = (v) => [...v].sort((a, b) => a - b)[v.length >> 1];
const variants = [
  ['tfjs cpu alone (tfjs batchNormalization)', 'cpu', false, undefined],
  ['tfjs wasm + gradrt (tfjs batchNormalization)', 'wasm', true, undefined],
  ['tfjs wasm + gradrt (GradrtBatchNormalization)', 'wasm', true, 'gradrt'],
];
await tf.setBackend('cpu');
const data = toyBatch(32, 28, 1);
const layers = gradrtLayers(tf);
const models = variants.map(([, , , bn]) => model(bn === 'gradrt' ? (c) => layers.batchNormalization(c) : undefined));
const results = variants.map(() => []);
for (let r = 0; r < rounds; r++) {
  for (const [i, [, backend, withGradrt]] of variants.entries()) {
    const handle = withGradrt ? await registerGradrtKernels(tf, { backends: ['wasm'] }) : null;
    await tf.setBackend(backend);
    const steps = backend === 'cpu' ? cpuSteps : wasmSteps;
    if (r === 0) await time(models[i], data, backend === 'cpu' ? 1 : 3); // warm-up
    results[i].push(await time(models[i], data, steps));
    if (handle) handle.restore();
  }
}
const row = (cells) => `| ${cells.join(' | ')} |`;
console.log(`issue 14 CNN, 28x28x1, batch 32, trainOnBatch (SGD); medians of ${rounds} interleaved rounds`);
console.log(row(['variant', 'CPU ms/step', 'wall ms/step', 'CPU ratio to cpu alone']));
console.log(row(['---', '---:', '---:', '---:']));
const base = median(results[0].map((x) => x.cpu));
variants.forEach(([label], i) => {
  const cpu = median(results[i].map((x) => x.cpu));
  console.log(row([label, cpu.toFixed(1), median(results[i].map((x) => x.wall)).toFixed(1), `${(base / cpu).toFixed(1)}x`]));
});
