// What runOp's default path pays over outputs= for a large output, without wasm: copying a
// hot source of `bytes` (default: the depthwise s2 input gradient's 56x56x144 float32
// output, 1.8 MiB) into
//   fixed       one destination allocated once (outputs=: it stays in cache between calls)
//   fresh       a new Buffer.allocUnsafeSlow each call (web/src/fresh_arrays.js), dropped
//               at once: V8 frees it at a later scavenge, so malloc hands out memory last
//               written ~16 calls (~30 MiB) ago, cold in cache
//   slice       ArrayBuffer.prototype.slice (zero fill, then the copy)
// and, with the source rewritten before each copy (the kernel's output, just written):
//   written, fixed / fresh         the whole source written, then copied
//   banded 64K, fixed / fresh      written and copied 64 KiB at a time (banded execution: each
//                                  band copied out while it is in L1/L2)
//   ring K      K destinations allocated once, used in turn: memory last written K copies
//               ago (fresh memory is such a ring with K ~ 16: V8 runs a scavenge when the young
//               generation's array buffers reach 2 x 16 MiB, and only then are dropped ones freed)
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
let v = 0;
const write = (a, b) => src.fill(++v & 255, a, b); // the kernel's stores, as cheap as they come
const whole = (dst) => {
  write(0, n);
  dst.set(src);
};
const banded = (dst, band) => {
  for (let a = 0; a < n; a += band) {
    const b = Math.min(n, a + band);
    write(a, b);
    dst.set(src.subarray(a, b), a);
  }
};
const ring = (k) => {
  const dsts = Array.from({ length: k }, () => new Uint8Array(n));
  let i = 0;
  return () => whole(dsts[i++ % k]);
};
const variants = {
  fixed: () => fixed.set(src),
  fresh: () => Buffer.allocUnsafeSlow(n).set(src),
  slice: () => src.buffer.slice(0, n),
  'written, fixed': () => whole(fixed),
  'written, fresh': () => whole(Buffer.allocUnsafeSlow(n)),
  'banded 64K, fixed': () => banded(fixed, 64 << 10),
  'banded 64K, fresh': () => banded(Buffer.allocUnsafeSlow(n), 64 << 10),
  'ring 2': ring(2),
  'ring 4': ring(4),
  'ring 8': ring(8),
  'ring 16': ring(16),
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
// The first three against fixed, the rest (source rewritten each time) against 'written, fixed'.
const base = (name) => median(['fixed', 'fresh', 'slice'].includes(name) ? times.fixed : times['written, fixed']);
console.log(`copy of ${(n / 1048576).toFixed(2)} MiB, Node ${process.version}: CPU us per copy (median of ${rounds} rounds), ratio to fixed / written, fixed`);
for (const [name, t] of Object.entries(times)) console.log(`  ${name.padEnd(18)} ${median(t).toFixed(0).padStart(6)} us  ${(median(t) / base(name)).toFixed(2)}`);
