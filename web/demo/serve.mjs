// A tiny static file server for the demo (no dependencies): serves web/ so that the page
// can import ../src/index.js, ../dist/*.wasm and ../test/reference.js. Every response
// carries COOP/COEP (and CORP), so the page is cross-origin isolated and may use
// SharedArrayBuffer, i.e. gradrt's threaded build (demo/?threads=2).
//   node demo/serve.mjs [port]      then open http://localhost:<port>/demo/
import { createServer } from 'node:http';
import { readFile } from 'node:fs/promises';
import { extname, join, normalize, resolve, sep, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

const ISOLATION = {
  'Cross-Origin-Opener-Policy': 'same-origin',
  'Cross-Origin-Embedder-Policy': 'require-corp',
  'Cross-Origin-Resource-Policy': 'same-origin',
};
const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const MIME = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.cjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json',
  '.wasm': 'application/wasm',
  '.png': 'image/png',
  '.svg': 'image/svg+xml',
};

export function start(port = 8080, host = '127.0.0.1') {
  const server = createServer(async (req, res) => {
    let path = decodeURIComponent(new URL(req.url, 'http://x').pathname);
    if (path.endsWith('/')) path += 'index.html';
    const file = normalize(join(ROOT, path));
    if (file !== ROOT && !file.startsWith(ROOT + sep)) {
      res.writeHead(403, ISOLATION).end('forbidden');
      return;
    }
    try {
      const body = await readFile(file);
      res.writeHead(200, { 'Content-Type': MIME[extname(file)] || 'application/octet-stream', 'Cache-Control': 'no-store', ...ISOLATION });
      res.end(body);
    } catch {
      res.writeHead(404, { 'Content-Type': 'text/plain', ...ISOLATION }).end('not found');
    }
  });
  return new Promise((ok) => server.listen(port, host, () => ok(server)));
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const server = await start(Number(process.argv[2] || process.env.PORT || 8080));
  console.log(`gradrt demo: http://127.0.0.1:${server.address().port}/demo/`);
}
