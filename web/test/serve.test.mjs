// The demo's static server: correct MIME types (application/wasm, text/css), no escape from web/.
import { it } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { start } from '../demo/serve.mjs';

function get(port, path) {
  return new Promise((ok, fail) => {
    request({ host: '127.0.0.1', port, path }, (res) => {
      res.resume();
      res.on('end', () => ok({ status: res.statusCode, type: res.headers['content-type'], headers: res.headers }));
    }).on('error', fail).end();
  });
}

it('serves the demo with the right MIME types, COOP/COEP, and nothing outside web/', async () => {
  const server = await start(0);
  const { port } = server.address();
  try {
    const wasm = await get(port, '/dist/gradrt-simd.wasm');
    assert.deepEqual([wasm.status, wasm.type], [200, 'application/wasm']);
    // cross-origin isolation, for the threaded build (SharedArrayBuffer)
    for (const path of ['/demo/', '/dist/gradrt-simd.wasm', '/nope.js']) {
      const { headers } = await get(port, path);
      assert.equal(headers['cross-origin-opener-policy'], 'same-origin', path);
      assert.equal(headers['cross-origin-embedder-policy'], 'require-corp', path);
    }
    assert.equal((await get(port, '/demo/')).type, 'text/html; charset=utf-8');
    assert.equal((await get(port, '/demo/demo.css')).type, 'text/css; charset=utf-8');
    assert.equal((await get(port, '/src/index.js')).type, 'text/javascript; charset=utf-8');
    assert.equal((await get(port, '/dist/gradrt-scalar.mjs')).type, 'text/javascript; charset=utf-8');
    assert.equal((await get(port, '/nope.js')).status, 404);
    assert.equal((await get(port, '/..%2f..%2f..%2fetc%2fpasswd')).status, 403);
    assert.notEqual((await get(port, '/%2e%2e/%2e%2e/etc/passwd')).status, 200);
  } finally {
    server.close();
  }
});
