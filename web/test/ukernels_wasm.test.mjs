// The cpu micro-kernel testers of tests/ (test_ukernels*.cpp, ukernels_dwf.cpp, ukernels_wasm.cpp) built
// for WebAssembly: wasm/CMakeLists.txt's gradrt_ukernel_tests, which scripts/build.mjs builds in
// build-wasm-simd/ (not part of dist/). It calls every micro-kernel of the SIMD flavour's units,
// wasm_simd128 and scalar, on edge sizes against a plain loop or the reference, and the conv
// drivers with each unit's tiles; here it runs in Node and must exit 0.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const program = fileURLToPath(new URL('../../build-wasm-simd/wasm/gradrt_ukernel_tests.js', import.meta.url));
// Built wherever doctest is installed (scripts/build.mjs): missing there is a failure, not a skip.
const DOCTEST_HEADER = '/usr/include/doctest/doctest.h';
const only = process.env.GRADRT_TEST_FLAVOURS;
const skip = only && !only.split(',').includes('simd') ? 'GRADRT_TEST_FLAVOURS leaves out simd'
  : !existsSync(program) && !existsSync(DOCTEST_HEADER) ? `${DOCTEST_HEADER} not found: gradrt_ukernel_tests not built`
  : false;

test('cpu micro-kernel testers (doctest) on the SIMD flavour\'s units', { skip }, (t) => {
  assert.ok(existsSync(program), `${program} not found: npm run build builds it`);
  const r = spawnSync(process.execPath, [program, '--no-colors', '--no-version'],
    { encoding: 'utf8', timeout: 300_000, maxBuffer: 64 << 20 });
  const output = `${r.stdout ?? ''}${r.stderr ?? ''}${r.error ? `\n${r.error}` : ''}`;
  assert.equal(r.status, 0, `gradrt_ukernel_tests exited with ${r.status ?? r.signal}:\n${output}`);
  const cases = /test cases:\s*(\d+)\s*\|\s*(\d+) passed\s*\|\s*(\d+) failed/.exec(output);
  assert.ok(cases && Number(cases[2]) > 0 && cases[3] === '0', `no doctest summary with passed cases:\n${output}`);
  for (const line of output.split('\n')) if (/^\[doctest\] (test cases|assertions):/.test(line)) t.diagnostic(line);
});
