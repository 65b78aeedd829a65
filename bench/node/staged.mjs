// One op staged in a gradrt module's heap once (inputs copied in, strings and the tensor
// table written): run() is one _gradrt_run call plus the release of its outputs, nothing
// copied; run.free() returns the staged blocks. Shared by bench.mjs and dwmicro.mjs.
import { attrsJson, toTensor } from '../../web/src/tensor.js';

export function stagedRun(m, [op, inputs, attrs]) {
  const info = JSON.parse(cString(m, m._gradrt_info_json()));
  const enc = new TextEncoder();
  const tensors = Object.entries(inputs).map(([name, value]) => [name, toTensor(name, value)]);
  const strings = [op, attrsJson(attrs), 'cpu', ...tensors.map(([name]) => name)].map((s) => enc.encode(s));
  const sp = strings.map((s) => m._gradrt_alloc(s.length + 1));
  const dp = tensors.map(([, tn]) => m._gradrt_alloc(Math.max(1, tn.data.byteLength)));
  const table = [];
  tensors.forEach(([, tn], i) => table.push(sp[3 + i], info.dtypes.indexOf(tn.dtype), tn.shape.length, dp[i], tn.data.byteLength, ...tn.shape));
  const tp = m._gradrt_alloc(table.length * 8);
  const heap = m.HEAPU8; // after every allocation (one may grow the heap and replace the view)
  strings.forEach((s, i) => { heap.set(s, sp[i]); heap[sp[i] + s.length] = 0; });
  tensors.forEach(([, tn], i) => heap.set(new Uint8Array(tn.data.buffer, tn.data.byteOffset, tn.data.byteLength), dp[i]));
  new Float64Array(heap.buffer, tp, table.length).set(table);
  const run = () => {
    if (m._gradrt_run(sp[0], sp[1], tp, table.length, sp[2]) !== 0) throw new Error(`${op}: ${cString(m, m._gradrt_error_message())}`);
    m._gradrt_release_outputs();
  };
  run.free = () => [...sp, ...dp, tp].forEach((p) => m._gradrt_dealloc(p));
  return run;
}
export function cString(m, ptr) {
  let end = ptr;
  while (m.HEAPU8[end] !== 0) end++;
  return new TextDecoder().decode(m.HEAPU8.subarray(ptr, end));
}

export const median = (a) => a.slice().sort((x, y) => x - y)[a.length >> 1];

// The median ms of single fn() calls over ~secs seconds (at least 5 calls), by clock() (ms).
function medianPerCall(fn, secs, clock) {
  const k = [];
  for (let end = performance.now() + secs * 1000, n = 0; performance.now() < end || n < 5; n++) {
    const t0 = clock();
    fn();
    k.push(clock() - t0);
  }
  return median(k);
}
const cpuMs = () => {
  const c = process.cpuUsage();
  return (c.user + c.system) / 1000;
};

// CPU time: robust to a neighbour's burst on a shared host.
export const cpuMedianMs = (fn, secs) => medianPerCall(fn, secs, cpuMs);
// Wall time: for sides paired within a second (wasm_native.mjs --paired).
export const wallMedianMs = (fn, secs) => medianPerCall(fn, secs, () => performance.now());
