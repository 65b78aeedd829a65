// npm run build: the three Emscripten builds (SIMD128, scalar, SIMD128 + pthreads) -> web/dist/,
// the training page's digits (scripts/digits.mjs, from Debian's python3-sklearn) -> web/dist/digits.bin,
// and index.d.ts's op helpers regenerated from the op list (scripts/gen_types.mjs).
// The simd flavour's folder also gets gradrt_ukernel_tests (the cpu micro-kernel testers for Node,
// wasm/CMakeLists.txt; test/ukernels_wasm.test.mjs runs it; not part of dist/) where doctest is
// installed.
//   node scripts/build.mjs [--jobs N] [--only simd|scalar|simd-threads[,...]]
// Needs emcmake/emcc (Debian: apt-get install emscripten) and cmake.
import { execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { convertDigits, DIGITS_CSV } from './digits.mjs';
import { updateTypes } from './gen_types.mjs';

const web = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const root = resolve(web, '..');
const dist = join(web, 'dist');
const args = process.argv.slice(2);
const opt = (name, fallback) => (args.includes(name) ? args[args.indexOf(name) + 1] : fallback);
const jobs = opt('--jobs', '2');
const ALL = ['simd', 'scalar', 'simd-threads'];
const flavours = opt('--only', null) ? opt('--only').split(',') : ALL;
for (const f of flavours) if (!ALL.includes(f)) throw new Error(`unknown flavour ${f} (one of ${ALL.join(', ')})`);

// wasm/CMakeLists.txt's default GRADRT_DOCTEST_DIR (test/ukernels_wasm.test.mjs checks the same file).
const DOCTEST_HEADER = '/usr/include/doctest/doctest.h';
const env = { ...process.env };
// Debian's emcc needs Debian's acorn for its JS optimizer.
if (!env.NODE_PATH && existsSync('/usr/share/nodejs/acorn')) env.NODE_PATH = '/usr/share/nodejs';

function run(cmd, argv) {
  console.log(`$ ${cmd} ${argv.join(' ')}`);
  try {
    execFileSync(cmd, argv, { cwd: root, env, stdio: 'inherit' });
  } catch (e) {
    if (e.code === 'ENOENT') console.error(`${cmd} not found: install Emscripten and CMake (Debian: apt-get install emscripten binaryen cmake libxsimd-dev)`);
    process.exit(1);
  }
}

updateTypes();
mkdirSync(dist, { recursive: true });
if (existsSync(DIGITS_CSV)) {
  const d = convertDigits(DIGITS_CSV, join(dist, 'digits.bin'));
  console.log(`dist/digits.bin: ${d.train} train + ${d.held} held-out digits (${d.bytes} bytes)`);
} else {
  console.log(`(${DIGITS_CSV} not found: no dist/digits.bin for demo/train.html; apt-get install python3-sklearn)`);
}
for (const flavour of flavours) {
  const build = join(root, `build-wasm-${flavour}`);
  run('emcmake', ['cmake', '-S', root, '-B', build, '-C', join(root, 'wasm', 'preload.cmake'),
    `-DGRADRT_WASM_SIMD=${flavour === 'scalar' ? 'OFF' : 'ON'}`, `-DGRADRT_WASM_THREADS=${flavour === 'simd-threads' ? 'ON' : 'OFF'}`,
    '-DCMAKE_BUILD_TYPE=Release']);
  run('cmake', ['--build', build, '--target', 'gradrt_wasm', '-j', jobs]);
  if (flavour === 'simd') {
    if (existsSync(DOCTEST_HEADER)) run('cmake', ['--build', build, '--target', 'gradrt_ukernel_tests', '-j', jobs]);
    else console.log(`(${DOCTEST_HEADER} not found: no gradrt_ukernel_tests; apt-get install doctest-dev)`);
  }
  for (const ext of ['mjs', 'wasm']) copyFileSync(join(build, 'wasm', `gradrt-${flavour}.${ext}`), join(dist, `gradrt-${flavour}.${ext}`));
  // The pthread worker script is CommonJS (require, __filename): as .cjs it stays CommonJS
  // inside this "type": "module" package. It imports ./gradrt-<flavour>.mjs next to it.
  if (flavour.endsWith('-threads')) copyFileSync(join(build, 'wasm', `gradrt-${flavour}.worker.js`), join(dist, `gradrt-${flavour}.worker.cjs`));
}

// The scalar flavour must not contain a single SIMD instruction.
const scalar = join(dist, 'gradrt-scalar.wasm');
if (existsSync(scalar)) {
  let text = '';
  try {
    text = execFileSync('wasm-dis', [scalar], { encoding: 'utf8', maxBuffer: 1 << 30 });
  } catch {
    console.log('(wasm-dis not found: SIMD-free check of the scalar build skipped)');
  }
  if (/\bv128\b/.test(text)) throw new Error('gradrt-scalar.wasm contains SIMD (v128) code');
}

for (const flavour of ALL) {
  const file = join(dist, `gradrt-${flavour}.wasm`);
  if (!existsSync(file)) continue;
  const bytes = readFileSync(file);
  const gz = gzipSync(bytes, { level: 9 }).length;
  console.log(`gradrt-${flavour}.wasm: ${(bytes.length / 1024).toFixed(1)} KiB, gzip -9 ${(gz / 1024).toFixed(1)} KiB`);
}
