// wasm (Node, SIMD128 build, 1 thread) against the same kernels run natively at the same
// 128-bit width (`GRADRT_CPU_ISA=sse4_2 gradrt run ... --threads 1 --repeat N`), every conv
// and depthwise gradient of runop.mjs's shapes, in five separate Node processes (placement,
// history and allocation differ per process), native and wasm paired round by round.
//   node bench/node/wasm_native.mjs --lock /tmp/gradrt-bench.lock [--gradrt build/gradrt]
//        [--procs 5] [--rounds 3] [--secs 0.2] [--only TEXT] [--out FILE] [--paired [--blocks 9]]
//   --paired pairs each process's kernel with native blocks adjacent in time (wall ms), in place of
//   the native rounds between the processes: use it on a host whose speed moves (child(), below).
//   (needs build/gradrt and web/dist: npm run build in web/; no npm install here)
// Per process and case: >= 300 ms of warm-up calls (V8 runs wasm in its baseline tier until a
// function is hot), then `rounds` rounds (each over every case in turn) of, one after the other:
//   native     `gradrt run` CPU ms per call: (CPU of 2N runs - CPU of N runs) / N, N ~ secs
//   kernel     one _gradrt_run on inputs staged in the heap once (what `gradrt run` times
//              natively): the median CPU ms per call over ~secs
//   outputs=   rt.runOp(op, inputs, attrs, { outputs }): copies in and out, arrays allocated once
//   default    rt.runOp(op, inputs, attrs): every output a fresh typed array
//   (these two in alternating blocks of ~secs/2, each the process's CPU over its calls, so that
//   V8's GC work for the fresh arrays, helper threads included, falls into the default blocks)
// CPU time, not wall time: the machine is shared. Table: per process the median over rounds of
// native/kernel (goal >= 0.8, issue 21 item 4) and default/outputs= (goal <= 1.25).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { random } from './random.mjs';
import { cpuMedianMs, median, stagedRun, wallMedianMs } from './staged.mjs';
import { convGradShapes, count } from './conv_shapes.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const root = resolve(here, '../..');
const args = process.argv.slice(2);
const opt = (name, fallback) => (args.includes(name) ? args[args.indexOf(name) + 1] : fallback);

// [label, op, inputs { name: [shape, data] | int vector }, attrs]: runop.mjs's conv and depthwise cases.
function cases() {
  const out = [];
  for (const { label, xs, ws, ys, attrs, bpi, bpf } of convGradShapes()) {
    out.push([label, bpi, { input_sizes: xs, filter: [ws, random(count(ws), 6)], out_backprop: [ys, random(count(ys), 7)] }, attrs]);
    out.push([label, bpf, { input: [xs, random(count(xs), 1)], filter_sizes: ws, out_backprop: [ys, random(count(ys), 7)] }, attrs]);
  }
  const only = opt('--only', '');
  return out.filter(([label, op]) => !only || label.includes(only) || op.includes(only));
}


const f2 = (v) => v.toFixed(2);

// The native side: `gradrt run` argument lists with the inputs written once as .npy files.
function nativeRows(dir) {
  return cases().map(([label, op, spec, attrs], i) => {
    const argv = ['run', op, '--backend', 'cpu', '--threads', '1', '--out', join(dir, `out${i}`)];
    for (const [name, v] of Object.entries(spec)) {
      const path = join(dir, `${i}_${name}.npy`);
      if (Array.isArray(v[0])) writeNpy(path, v[0], v[1]);
      else writeNpy(path, [v.length], Int32Array.from(v));
      argv.push('--input', `${name}=${path}`);
    }
    for (const [k, v] of Object.entries(attrs)) argv.push('--attr', `${k}=${JSON.stringify(v)}`);
    return argv;
  });
}

// `gradrt run ... --repeat N` at 128-bit width, 1 thread, through python3 for the child's CPU
// time (getrusage(RUSAGE_CHILDREN): exact, unlike a tick-based /usr/bin/time) -> CPU seconds,
// wall median ms.
const RUSAGE = 'import json,resource,subprocess,sys\n' +
  'r = subprocess.run(sys.argv[1:], capture_output=True, text=True)\n' +
  'u = resource.getrusage(resource.RUSAGE_CHILDREN)\n' +
  'print(json.dumps({"rc": r.returncode, "out": r.stdout, "err": r.stderr, "cpu": u.ru_utime + u.ru_stime}))';
function nativeRun(gradrt, argv, repeat) {
  const env = { ...process.env, GRADRT_CPU_ISA: 'sse4_2' };
  const r = spawnSync('python3', ['-c', RUSAGE, gradrt, ...argv, '--repeat', String(repeat)], { env, encoding: 'utf8' });
  const res = r.status === 0 ? JSON.parse(r.stdout) : { rc: -1, err: r.stderr };
  if (res.rc !== 0) throw new Error(`${gradrt} ${argv.join(' ')}: ${res.err}`);
  return { cpu: res.cpu, wall: JSON.parse(res.out.trim().split('\n').pop()).median_ms };
}
const gradrtPath = () => resolve(opt('--gradrt', join(root, 'build/gradrt')));
// Native calls that fill ~secs (10..5000), from a 3-call run's median.
const nativeRepeat = (gradrt, argv, secs) =>
  Math.max(10, Math.min(5000, Math.round((secs * 1000) / Math.max(nativeRun(gradrt, argv, 3).wall, 1e-3))));
// CPU ms per native call: the difference of a run with 2N repeats and one with N (the start,
// the input files and the first run cancel out); wall: the median of the longer run.
function native(gradrt, argv, repeat) {
  const a = nativeRun(gradrt, argv, repeat);
  const b = nativeRun(gradrt, argv, 2 * repeat);
  return ((b.cpu - a.cpu) * 1000) / repeat;
}

// ---------------------------------------------------------------- a Node process (--child DIR)
// Per case: >= 300 ms of warm-up calls, then `rounds` rounds over every case of the wasm paths. No child
// process is started during the rounds: a fork marks every page of this process copy-on-write, and
// the next writes to the wasm heap and to recycled array memory fault (measured: ~200 faults
// per default call after each `gradrt run`). --paired's native blocks run before the rounds; a
// wasm block's per-call median drops the calls that take those faults.
async function child() {
  const { init } = await import('../../web/src/index.js');
  const { load } = await import('../../web/src/loader.js');
  const secs = Number(opt('--secs', 0.2));
  const rounds = Number(opt('--rounds', 3));
  const rt = await init({ simd: true });
  const { module: m } = await load({ simd: true }); // a second instance for the staged kernel calls
  // Every case staged and warmed first, then the rounds go round-robin over the cases: a
  // neighbour's burst on the shared host (one 0.2 s window at +25% CPU time was seen in a
  // placement scan, bench/node/placement.mjs) then spoils one round of several cases, which
  // the median over rounds drops, instead of every round of one case.
  const staged = cases().map(([label, op, spec, attrs]) => {
    const inputs = Object.fromEntries(Object.entries(spec).map(([k, v]) => [k, Array.isArray(v[0])
      ? { dtype: 'float32', shape: v[0], data: v[1] } : { dtype: 'int32', shape: [v.length], data: Int32Array.from(v) }]));
    const call = [op, inputs, attrs];
    const outputs = Object.fromEntries(Object.entries(rt.runOp(...call)).map(([k, v]) => [k, new v.data.constructor(v.data.length)]));
    const kernel = stagedRun(m, call);
    const fns = { kernel, 'outputs=': () => rt.runOp(op, inputs, attrs, { outputs }), default: () => rt.runOp(...call) };
    const warm = performance.now() + 300;
    while (performance.now() < warm) Object.values(fns).forEach((f) => f());
    return { key: `${label}|${op}`, fns, rows: [] };
  });
  // --paired: per case, `blocks` pairs of a native block (`gradrt run --repeat N`, its median wall
  // ms per call) and a wasm block (the kernel's median wall ms per call), adjacent in time, order
  // alternating. This host's speed moves in phases of seconds (a plain L2-resident loop ran 50
  // then 30 ms per pass in one process, session 19), so native rounds tens of seconds before
  // and after a process are not its pair; adjacent blocks are.
  if (args.includes('--paired')) {
    const gradrt = gradrtPath();
    const argvs = nativeRows(opt('--child'));
    const blocks = Number(opt('--blocks', 9));
    staged.forEach((st, i) => {
      const repeat = nativeRepeat(gradrt, argvs[i], secs);
      st.pairs = [];
      for (let b = 0; b < blocks; b++) {
        const pair = {};
        for (const side of b % 2 ? ['wasm', 'native'] : ['native', 'wasm'])
          pair[side] = side === 'native' ? nativeRun(gradrt, argvs[i], repeat).wall : wallMedianMs(st.fns.kernel, secs);
        st.pairs.push(pair);
      }
    });
  }
  for (let r = 0; r < rounds; r++) {
    for (const { fns, rows } of staged) {
      const row = {};
      row.kernel = cpuMedianMs(fns.kernel, secs);  // the kernel alone
      // outputs= and default in alternating blocks, each the process's CPU time over the
      // block's calls: V8's GC work for the default path's arrays (on helper threads too)
      // falls into the default blocks.
      for (const name of ['outputs=', 'default', 'outputs=', 'default']) {
        const c0 = process.cpuUsage();
        let n = 0;
        for (const end = performance.now() + (secs * 1000) / 2; performance.now() < end || n < 3; n++) fns[name]();
        const c = process.cpuUsage(c0);
        row[name] = (row[name] || 0) + (c.user + c.system) / 1000 / n / 2;
      }
      rows.push(row);
    }
  }
  const result = {};
  for (const { key, fns, rows, pairs } of staged) {
    fns.kernel.free();
    result[key] = {
      pairs,
      kernel: median(rows.map((r) => r.kernel)),
      outputsOverKernel: median(rows.map((r) => r['outputs='] / r.kernel)),
      defaultOverOutputs: median(rows.map((r) => r.default / r['outputs='])),
    };
  }
  process.stdout.write(JSON.stringify(result));
}

// ---------------------------------------------------------------- a native round (--native DIR)
// Per case: the median over `rounds` of `gradrt run` CPU ms per call, N runs ~ secs.
function nativeRound(dir) {
  const gradrt = gradrtPath();
  const secs = Number(opt('--secs', 0.2));
  const rounds = Number(opt('--rounds', 3));
  const out = nativeRows(dir).map((argv) => {
    const repeat = nativeRepeat(gradrt, argv, secs);
    return median(Array.from({ length: rounds }, () => native(gradrt, argv, repeat)));
  });
  process.stdout.write(JSON.stringify(out));
}

// ---------------------------------------------------------------- the driver
function writeNpy(path, shape, data) {
  const descr = data instanceof Int32Array ? '<i4' : '<f4';
  let header = `{'descr': '${descr}', 'fortran_order': False, 'shape': (${shape.join(', ')}${shape.length === 1 ? ',' : ''}), }`;
  header += ' '.repeat(63 - ((10 + header.length) % 64)) + '\n'; // magic + version + length + header: a multiple of 64
  const head = Buffer.alloc(10);
  head.write('\x93NUMPY', 0, 'latin1');
  head[6] = 1;
  head[7] = 0;
  head.writeUInt16LE(header.length, 8);
  writeFileSync(path, Buffer.concat([head, Buffer.from(header, 'latin1'), Buffer.from(data.buffer, data.byteOffset, data.byteLength)]));
}

function cpuName() {
  try {
    const m = readFileSync('/proc/cpuinfo', 'utf8').match(/model name\s*:\s*(.*)/);
    if (m) return m[1].trim();
  } catch {}
  return cpus()[0].model;
}

function driver() {
  const procs = Number(opt('--procs', 5));
  const dir = mkdtempSync(join(tmpdir(), 'gradrt-wasm-native-'));
  nativeRows(dir); // the .npy inputs, once for every process
  const keys = cases().map(([label, op]) => [`${label}|${op}`, `${label} ${op}`]);
  // --lock FILE: each native round and each Node process (a process of its own each) takes
  // the benchmark lock for itself (flock), so that it is held a minute at a time.
  const lock = opt('--lock', null);
  const sub = (mode) => {
    const cmd = [process.execPath, fileURLToPath(import.meta.url), mode, dir, ...args];
    const r = spawnSync(lock ? 'flock' : cmd[0], lock ? [lock, ...cmd] : cmd.slice(1), { encoding: 'utf8', maxBuffer: 1 << 24 });
    if (r.status !== 0) throw new Error(`${mode}: ${r.stderr}`);
    return JSON.parse(r.stdout);
  };
  const load0 = loadavg()[0];
  const t0 = performance.now();
  const paired = args.includes('--paired');
  const nat = paired ? [] : [sub('--native')];
  const res = [];
  for (let p = 0; p < procs; p++) {
    res.push(sub('--child'));
    if (!paired) nat.push(sub('--native'));
  }
  const spread = (v) => Math.max(...v) / Math.min(...v);
  keys.forEach(([key], i) => res.forEach((r, p) => {
    const row = r[key];
    if (paired) {  // the process's blocks: median of the pairs' ratios, wall ms
      row.native = median(row.pairs.map((q) => q.native));
      row.kernel = median(row.pairs.map((q) => q.wasm));
      row.nativeOverKernel = median(row.pairs.map((q) => q.native / q.wasm));
      row.spreads = [spread(row.pairs.map((q) => q.native)), spread(row.pairs.map((q) => q.wasm))];
    } else {  // against the mean of the native rounds just before and just after the process
      row.native = (nat[p][i] + nat[p + 1][i]) / 2;
      row.nativeOverKernel = row.native / row.kernel;
      row.spreads = [spread([nat[p][i], nat[p + 1][i]]), 1];
    }
  }));
  const lines = [];
  lines.push(`gradrt wasm (Node ${process.version}, SIMD128 build, 1 thread) vs the same kernels native at 128-bit (GRADRT_CPU_ISA=sse4_2, 1 thread)`);
  lines.push(`CPU: ${cpuName()} (${cpus().length} vCPUs); ${procs} separate Node processes; load average ${load0.toFixed(1)} -> ${loadavg()[0].toFixed(1)}; ${((performance.now() - t0) / 1000).toFixed(0)} s`);
  if (paired) {
    lines.push(`--paired: wall ms per call; per process and case ${opt('--blocks', 9)} pairs of adjacent blocks (native: \`gradrt run --repeat N\`'s median,`);
    lines.push('  wasm: one staged _gradrt_run, median per call); native/kernel: per process, the median of the pairs\' ratios (goal >= 0.8);');
    lines.push('  spread: within a process, max/min of its native blocks | of its wasm blocks (the larger over the processes);');
  } else {
    lines.push('CPU ms per call (the machine is shared: wall time is not usable). native: `gradrt run` (CPU of 2N runs - N runs) / N, median of');
    lines.push(`  ${opt('--rounds', 3)}, in native rounds before, between and after the Node processes; kernel: one staged _gradrt_run, median per call;`);
    lines.push('  native/kernel: per process, against the mean of the native rounds before and after it (goal >= 0.8);');
    lines.push('  spread: the larger over the processes of max/min of the native rounds before and after it;');
  }
  lines.push('out=/kernel: runOp with outputs= (copies in and out) over the kernel, range over the processes;');
  lines.push('default/out=: runOp with fresh output arrays over outputs=, CPU per call in alternating blocks (GC included; goal <= 1.25)');
  lines.push('');
  lines.push(`${'case'.padEnd(62)}     native ms |     wasm kernel ms | native/kernel, per process   | out=/kernel | default/out=, per process    | spread nat, wasm`);
  let worstK = Infinity, worstD = 0;
  for (const [key, name] of keys) {
    const rows = res.map((r) => r[key]);
    const kr = rows.map((r) => r.nativeOverKernel);
    const orr = rows.map((r) => r.outputsOverKernel);
    const dr = rows.map((r) => r.defaultOverOutputs);
    worstK = Math.min(worstK, ...kr);
    worstD = Math.max(worstD, ...dr);
    const sp = [0, 1].map((j) => f2(Math.max(...rows.map((r) => r.spreads[j]))));
    lines.push(`${name.padEnd(62)} ${median(rows.map((r) => r.native)).toFixed(3).padStart(13)} | ${median(rows.map((r) => r.kernel)).toFixed(3).padStart(18)} | ${kr.map(f2).join(' ').padEnd(28)} | ${f2(Math.min(...orr))}-${f2(Math.max(...orr))}   | ${dr.map(f2).join(' ').padEnd(28)} | ${sp.join(', ')}`);
  }
  lines.push('');
  lines.push(`worst native/kernel ${f2(worstK)} (goal >= 0.8); worst default/outputs= ${f2(worstD)} (goal <= 1.25)`);
  const text = lines.join('\n') + '\n';
  process.stdout.write(text);
  if (opt('--out', null)) writeFileSync(opt('--out'), text);
}

if (args.includes('--child')) await child();
else if (args.includes('--native')) nativeRound(opt('--native'));
else driver();
