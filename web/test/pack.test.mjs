// `npm pack` then `npm install gradrt-<v>.tgz` in an empty project, offline: the package
// carries its .wasm files and runs from node_modules.
import { it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const web = fileURLToPath(new URL('..', import.meta.url));
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';

it('npm pack + offline npm install of the tarball, then the three builds run (and the process exits)', { timeout: 120000 }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'gradrt-pack-'));
  try {
    const { version } = JSON.parse(readFileSync(join(web, 'package.json'), 'utf8'));
    const packed = JSON.parse(execFileSync(npm, ['pack', '--json', '--pack-destination', dir], { cwd: web, encoding: 'utf8' }));
    const files = packed[0].files.map((f) => f.path);
    for (const f of ['dist/gradrt-simd.wasm', 'dist/gradrt-scalar.wasm', 'dist/gradrt-simd.mjs', 'dist/gradrt-scalar.mjs',
      'dist/gradrt-simd-threads.wasm', 'dist/gradrt-simd-threads.mjs', 'dist/gradrt-simd-threads.worker.cjs', 'src/index.js', 'index.d.ts', 'package.json']) {
      assert.ok(files.includes(f), `${f} is not in the tarball`);
    }
    assert.ok(!files.some((f) => f.startsWith('test/') || f.startsWith('demo/') || f.startsWith('node_modules/')), files.join(', '));
    const app = join(dir, 'app');
    execFileSync('mkdir', ['-p', app]);
    writeFileSync(join(app, 'package.json'), '{"name":"app","private":true,"type":"module"}');
    execFileSync(npm, ['install', '--offline', '--no-audit', '--no-fund', join(dir, `gradrt-${version}.tgz`)], { cwd: app, stdio: 'pipe' });
    writeFileSync(join(app, 'main.js'), `
      import { init, GradrtError } from 'gradrt';
      for (const [simd, threads] of [[true, 1], [false, 1], [true, 2]]) {
        const rt = await init({ simd, threads });
        const { output } = rt.conv2dBackpropInput([1, 2, 3, 1], { dtype: 'float32', shape: [2, 2, 1, 1], data: Float32Array.of(1, 2, 3, 4) },
          { dtype: 'float32', shape: [1, 1, 2, 1], data: Float32Array.of(1, 2) }, { strides: [1, 1, 1, 1], padding: 'VALID' });
        let code = null;
        try { rt.runOp('Nope', {}); } catch (e) { code = e instanceof GradrtError && e.code; }
        console.log(JSON.stringify({ simd: rt.simd, threads: rt.threads, out: Array.from(output.data), code }));
      }`);
    const lines = execFileSync(process.execPath, ['main.js'], { cwd: app, encoding: 'utf8' }).trim().split('\n').map((l) => JSON.parse(l));
    assert.deepEqual(lines, [
      { simd: true, threads: 1, out: [1, 4, 4, 3, 10, 8], code: 'NotFound' },
      { simd: false, threads: 1, out: [1, 4, 4, 3, 10, 8], code: 'NotFound' },
      { simd: true, threads: 2, out: [1, 4, 4, 3, 10, 8], code: 'NotFound' },
    ]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
