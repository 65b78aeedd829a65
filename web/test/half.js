// float16 / bfloat16 bit patterns <-> numbers, for tests of the half dtypes.
const f = new Float32Array(1);
const u = new Uint32Array(f.buffer);

export function fromBf16(bits) {
  u[0] = bits << 16;
  return f[0];
}

// Truncates a float32 to bfloat16 bits (tests only feed values that are exact anyway).
export function bf16Bits(x) {
  f[0] = x;
  return u[0] >>> 16;
}

export function fromHalf(h) {
  const sign = h & 0x8000 ? -1 : 1;
  const exp = (h >> 10) & 0x1f;
  const man = h & 0x3ff;
  if (exp === 0) return sign * man * 2 ** -24;
  if (exp === 31) return man ? NaN : sign * Infinity;
  return sign * (1 + man / 1024) * 2 ** (exp - 15);
}

// Half bits of a value that is exact in half: k / 64 for integer |k| <= 2048, +-0, +-Infinity, NaN.
export function halfBits(x) {
  if (Number.isNaN(x)) return 0x7e00;
  const sign = x < 0 || Object.is(x, -0) ? 0x8000 : 0;
  if (x === 0) return sign;
  if (!Number.isFinite(x)) return sign | 0x7c00;
  const a = Math.abs(x);
  const e = Math.floor(Math.log2(a));
  const man = Math.round((a / 2 ** e - 1) * 1024);
  return sign | ((e + 15) << 10) | man;
}
