// Deterministic benchmark data shared by bench.mjs and runop.mjs: n floats in [-0.5, 0.5)
// from a 32-bit LCG seeded with `seed`.
export function random(n, seed) {
  let s = seed;
  const a = new Float32Array(n);
  for (let i = 0; i < n; i++) {
    s = (s * 1664525 + 1013904223) >>> 0;
    a[i] = s / 2 ** 32 - 0.5;
  }
  return a;
}
