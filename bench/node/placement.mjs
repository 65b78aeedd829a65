// Does where the inputs sit in the wasm heap change a kernel's speed? One Node process, one
// module per placement: a padding block of `pad` bytes is taken from the heap before the
// op's inputs are staged, so every input (and the blocks the kernel allocates after them)
// moves by that much. Placements are run round-robin (a neighbour's burst hits all alike),
// each round the median CPU ms of ~secs of staged _gradrt_run calls.
//   node bench/node/placement.mjs [--only TEXT] [--pads 0,64,...] [--rounds 5] [--secs 0.2]
// Prints per case and placement the median over rounds and its ratio to the fastest
// placement (1.00 everywhere: placement does not matter). (needs web/dist: npm run build)
import { cpuMedianMs, median, stagedRun } from './staged.mjs';
import { random } from './random.mjs';
import { convGradShapes, count } from './conv_shapes.mjs';

const args = process.argv.slice(2);
const opt = (name, fallback) => (args.includes(name) ? args[args.indexOf(name) + 1] : fallback);
// Sub-page (cache-line sets, 4K aliasing) and page-sized shifts.
const pads = opt('--pads', '0,64,128,512,1024,2048,3072,4096,8192,16384,65536,1048576').split(',').map(Number);
const rounds = Number(opt('--rounds', 5));
const secs = Number(opt('--secs', 0.2));
const only = opt('--only', 'conv 1x1');

const { load } = await import('../../web/src/loader.js');
const t = (shape, data) => ({ dtype: 'float32', shape, data });
const CASES = [];
for (const { label, xs, ws, ys, attrs, bpi, bpf } of convGradShapes()) {
  const iv = (v) => ({ dtype: 'int32', shape: [v.length], data: Int32Array.from(v) });
  CASES.push([`${label} ${bpi}`, [bpi, { input_sizes: iv(xs), filter: t(ws, random(count(ws), 6)), out_backprop: t(ys, random(count(ys), 7)) }, attrs]]);
  CASES.push([`${label} ${bpf}`, [bpf, { input: t(xs, random(count(xs), 1)), filter_sizes: iv(ws), out_backprop: t(ys, random(count(ys), 7)) }, attrs]]);
}

for (const [name, call] of CASES.filter(([n]) => n.includes(only))) {
  const runs = [];
  for (const pad of pads) {
    const { module: m } = await load({ simd: true });
    if (pad) m._gradrt_alloc(pad); // kept for the process's life
    const run = stagedRun(m, call);
    for (let end = performance.now() + 300; performance.now() < end;) run(); // V8 tiers up
    runs.push({ pad, run, times: [] });
  }
  for (let r = 0; r < rounds; r++) {
    for (const p of runs) {
      p.times.push(cpuMedianMs(p.run, secs));
    }
  }
  const meds = runs.map((p) => median(p.times));
  const best = Math.min(...meds);
  console.log(`${name}: CPU ms per call by padding (bytes), median of ${rounds} rounds; ratio to the fastest`);
  runs.forEach((p, i) => console.log(`  pad ${String(p.pad).padStart(8)}  ${meds[i].toFixed(3)} ms  ${(meds[i] / best).toFixed(2)}  rounds ${p.times.map((v) => v.toFixed(2)).join(' ')}`));
}
