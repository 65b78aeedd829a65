// What runOp's default path pays over outputs= for a large output, without wasm: copying a
// hot source of `bytes` (default: the depthwise s2 input gradient's 56x56x144 float32
// output, 1.8 MiB) into
//   fixed       one destination allocated once (outputs=: it stays in cache between calls)
//   fresh       a new Buffer.allocUnsafeSlow each call (web/src/fresh_arrays.js), dropped
//               at once: V8 frees it at a later scavenge, so malloc hands out memory last
//               written ~16 calls (~30 MiB) ago, cold in cache
//   slice       ArrayBuffer.prototype.slice (zero fill, then the copy)
// Rounds alternate the variants; CPU us per copy, median over rounds.
//   node bench/node/fresh_copy.mjs [--bytes N] [--rounds 7]
import { cpuUsage } from 'node:process';

const args = process.argv.slice(2);
const opt = (name, fallback) => (args.includes(name) ? args[args.indexOf(name) + 1] : fallback);
const n = Number(opt('--bytes', 56 * 56 * 144 * 4));
const rounds = Number(opt('--rounds', 7));
const median = (a) => a.slice().sort((x, y) => x - y)[a.length >> 1];

const src = new Uint8Array(n);
for (let i = 0; i < n; i += 64) src[i] = i & 255;
const fixed = new Uint8Array(n);
new ArrayBuffer(30 << 20); // as fresh_arrays.js: glibc's thresholds raised once (no page faults per call)
const variants = {
  fixed: () => fixed.set(src),
  fresh: () => Buffer.allocUnsafeSlow(n).set(src),
  slice: () => src.buffer.slice(0, n),
};
const times = Object.fromEntries(Object.keys(variants).map((k) => [k, []]));
for (const f of Object.values(variants)) for (let i = 0; i < 100; i++) f();
for (let r = 0; r < rounds; r++) {
  for (const [name, f] of Object.entries(variants)) {
    const c0 = cpuUsage();
    let k = 0;
    for (const end = performance.now() + 100; performance.now() < end || k < 20; k++) f();
    const c = cpuUsage(c0);
    times[name].push((c.user + c.system) / k);
  }
}
const base = median(times.fixed);
console.log(`copy of ${(n / 1048576).toFixed(2)} MiB, Node ${process.version}: CPU us per copy (median of ${rounds} rounds), ratio to fixed`);
for (const [name, t] of Object.entries(times)) console.log(`  ${name.padEnd(6)} ${median(t).toFixed(0).padStart(6)} us  ${(median(t) / base).toFixed(2)}`);
