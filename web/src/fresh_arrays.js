// The cost of runOp's fresh output arrays in Node on Linux (glibc malloc), and what we do
// about it. Measured in Node 20 (bench/node/wasm_native.mjs, NOTES.md "wasm/ + web/"):
//
// A typed array's memory comes from malloc. A block above the mmap threshold (128 KiB at
// first) is mmapped; once such a block is freed, glibc raises the threshold to its size and
// the trim threshold to twice that, so later blocks of that size come from the heap. But
// V8 frees dropped arrays only at a GC, and it runs one (a scavenge, "external memory
// pressure") about every 32 MiB of new array memory: ~16 dropped 1.6 MiB outputs are freed
// together, the free top of the heap is then far above the trim threshold and goes back to
// the OS, and the next 16 arrays fault every page in again (375 faults per 1.6 MiB: 0.7 ms
// on a 2-vCPU VM, more than the depthwise input gradient's kernel).
//
// glibc raises the thresholds up to a 32 MiB block (DEFAULT_MMAP_THRESHOLD_MAX on 64-bit;
// mallopt(3), "M_MMAP_THRESHOLD"). So before the first large fresh output we allocate and
// drop one 30 MiB ArrayBuffer: calloc mmaps it without touching a page (fresh pages are
// zero), the next GC frees it, and from then on the process keeps up to 60 MiB of freed heap
// instead of returning it, so fresh outputs reuse memory that is already mapped (4-5 faults
// per call). The process's only cost: freed malloc memory up to that size stays mapped.
// A no-op where the thresholds are fixed (MALLOC_MMAP_THRESHOLD_ set: glibc then never
// adjusts them) and outside Node on Linux (browsers and other C libraries allocate otherwise).
const PRIME_BYTES = 30 << 20;
// Blocks below glibc's initial mmap threshold (128 KiB) come from the heap anyway.
const LARGE_OUTPUT = 128 << 10;

const isNodeLinux = typeof process === 'object' && typeof process.versions === 'object' && !!process.versions.node &&
  process.platform === 'linux';
let primed = !isNodeLinux;
const hasUnsafeBuffer = isNodeLinux && typeof globalThis.Buffer === 'function' && typeof globalThis.Buffer.allocUnsafeSlow === 'function';

// A fresh typed array of Ctor holding heap[ptr, ptr + bytes) (heap: a Uint8Array over an
// ArrayBuffer). ArrayBuffer.prototype.slice zero-fills its new buffer before copying into it;
// in Node, Buffer.allocUnsafeSlow gives an unpooled ArrayBuffer of exactly `bytes` without the
// fill (the copy writes every byte): 0.14 instead of 0.20 ms CPU for a 1.6 MiB output.
export function freshArray(heap, ptr, bytes, Ctor) {
  if (bytes < LARGE_OUTPUT) return new Ctor(heap.buffer.slice(ptr, ptr + bytes));
  prime();
  if (!hasUnsafeBuffer) return new Ctor(heap.buffer.slice(ptr, ptr + bytes));
  const b = globalThis.Buffer.allocUnsafeSlow(bytes);
  b.set(heap.subarray(ptr, ptr + bytes));
  return new Ctor(b.buffer, 0, bytes / Ctor.BYTES_PER_ELEMENT);
}

function prime() {
  if (primed) return;
  primed = true;
  try {
    new ArrayBuffer(PRIME_BYTES); // dropped at once: freed by V8's next GC
  } catch {
    // out of memory for it: nothing lost but the speed-up
  }
}
