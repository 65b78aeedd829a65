// Picks the wasm flavour, fetches its bytes, instantiates the Emscripten glue.
// The glue's own fetch path is never used (Emscripten 3.1.6 breaks on Node 20's
// global fetch with a file path): we always hand it a compiled WebAssembly.Module.
import { GradrtError } from './errors.js';

// (func (result v128) v128.const 0): valid only where the engine has WASM SIMD.
const SIMD_PROBE = new Uint8Array([
  0, 97, 115, 109, 1, 0, 0, 0, // magic, version
  1, 5, 1, 96, 0, 1, 123, // type section: () -> v128
  3, 2, 1, 0, // function section
  10, 22, 1, 20, 0, 253, 12, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 11, // code: v128.const 0
]);

export function hasWasmSimd() {
  try {
    return WebAssembly.validate(SIMD_PROBE);
  } catch {
    return false;
  }
}

const isNode = typeof process === 'object' && typeof process.versions === 'object' && !!process.versions.node;
const DEFAULT_BASE = new URL('../dist/', import.meta.url);

// A folder as a URL ending in '/': URL objects and absolute URLs as given, other strings
// as paths (Node: from the working directory; browsers: from the page).
async function folderUrl(where) {
  if (where === undefined || where === null) return DEFAULT_BASE;
  let url;
  if (where instanceof URL) url = new URL(where.href);
  else if (typeof where !== 'string') throw new GradrtError('InvalidArgument', 'init: wasmPath must be a string or a URL');
  else if (/^[a-z][a-z0-9+.-]*:/i.test(where) && !/^[a-z]:[\\/]/i.test(where)) url = new URL(where);
  else if (isNode) {
    const { pathToFileURL } = await import(/* webpackIgnore: true */ 'node:url');
    const { resolve } = await import(/* webpackIgnore: true */ 'node:path');
    url = pathToFileURL(resolve(where));
  } else url = new URL(where, globalThis.location ? globalThis.location.href : undefined);
  if (!url.pathname.endsWith('/')) url.pathname += '/';
  return url;
}

async function readBytes(url) {
  try {
    if (url.protocol === 'file:' && isNode) {
      const { readFile } = await import(/* webpackIgnore: true */ 'node:fs/promises');
      return await readFile(url);
    }
    const response = await fetch(url);
    if (!response.ok) throw new Error(`HTTP ${response.status}`);
    return new Uint8Array(await response.arrayBuffer());
  } catch (e) {
    throw new GradrtError('NotFound', `init: cannot read ${url.href}: ${e.message}`);
  }
}

const compiled = new Map(); // url -> Promise<WebAssembly.Module>

function compile(url, bytes) {
  if (bytes) return WebAssembly.compile(bytes);
  const key = url.href;
  if (!compiled.has(key)) {
    const p = readBytes(url).then((b) => WebAssembly.compile(b));
    p.catch(() => compiled.delete(key));
    compiled.set(key, p);
  }
  return compiled.get(key);
}

export const MAX_THREADS = 64;

// Whether this environment can run the pthread flavour: shared wasm memory, and in a
// browser a cross-origin isolated page (COOP: same-origin + COEP: require-corp), without
// which SharedArrayBuffer is not available. Node (worker_threads) always can.
export function canUseThreads() {
  if (typeof SharedArrayBuffer !== 'function' || typeof Atomics !== 'object') return false;
  if (!isNode && globalThis.crossOriginIsolated !== true) return false;
  if (!isNode && typeof Worker !== 'function') return false;
  try {
    return new WebAssembly.Memory({ initial: 1, maximum: 1, shared: true }).buffer instanceof SharedArrayBuffer;
  } catch {
    return false;
  }
}

// Resolves to { module: the Emscripten Module, simd: boolean, threads: number }.
// threads > 1 loads the SIMD + pthreads flavour where canUseThreads() and the SIMD build
// are both possible; elsewhere it falls back, silently, to the single-threaded flavour
// that simd picks (threads: 1 in the result).
export async function load({ wasmPath, simd = 'auto', wasmBinary, threads = 1, minThreadWorkNs } = {}) {
  if (simd !== true && simd !== false && simd !== 'auto') {
    throw new GradrtError('InvalidArgument', "init: simd must be true, false or 'auto'");
  }
  if (!Number.isInteger(threads) || threads < 1 || threads > MAX_THREADS) {
    throw new GradrtError('InvalidArgument', `init: threads must be an integer from 1 to ${MAX_THREADS}`);
  }
  if (minThreadWorkNs !== undefined && !(Number.isFinite(minThreadWorkNs) && minThreadWorkNs >= 0)) {
    throw new GradrtError('InvalidArgument', 'init: minThreadWorkNs must be a number >= 0');
  }
  const useSimd = simd === 'auto' ? hasWasmSimd() : simd;
  if (useSimd && !hasWasmSimd()) {
    throw new GradrtError('Unavailable', 'init: this engine has no WebAssembly SIMD (use simd: false or "auto")');
  }
  const useThreads = threads > 1 && useSimd && canUseThreads();
  const flavour = useSimd ? (useThreads ? 'simd-threads' : 'simd') : 'scalar';
  const base = await folderUrl(wasmPath);
  const wasmModule = await compile(new URL(`gradrt-${flavour}.wasm`, base), wasmBinary).catch((e) => {
    throw e instanceof GradrtError ? e : new GradrtError('Internal', `init: cannot compile gradrt-${flavour}.wasm: ${e.message}`);
  });
  const { default: createGradrtModule } = await import(new URL(`gradrt-${flavour}.mjs`, DEFAULT_BASE).href);
  let reject; // the module promise's, for a failed instantiation
  const settings = {
    instantiateWasm(imports, receive) {
      WebAssembly.instantiate(wasmModule, imports).then((instance) => receive(instance, wasmModule), reject);
      return {};
    },
    print() {},
    printErr() {},
  };
  if (useThreads) Object.assign(settings, await threadSettings(flavour, threads));
  const module = await new Promise((resolve, fail) => {
    reject = fail;
    createGradrtModule(settings).then(resolve, fail);
  }).catch((e) => {
    throw new GradrtError('Internal', `init: cannot instantiate gradrt-${flavour}.wasm: ${e && e.message}`);
  });
  let effective = 1;
  if (useThreads) {
    if (isNode) module.gradrtUnrefWorkers();
    effective = module._gradrt_set_threads(threads);
    if (minThreadWorkNs !== undefined) module._gradrt_set_min_thread_work_ns(minThreadWorkNs);
  }
  return { module, simd: useSimd, threads: effective };
}

// Module settings of the pthread flavour: the size of the worker pool that the glue
// preloads before it resolves (core's pool uses threads - 1 helpers besides the calling
// thread), where the workers' script is (always the package's dist/, next to the .mjs that
// it imports; the workers get the compiled wasm from this thread, never from wasmPath),
// and on Node a require for the glue (an ES module has none).
async function threadSettings(flavour, threads) {
  const worker = new URL(`gradrt-${flavour}.worker.cjs`, DEFAULT_BASE);
  let location = worker.href;
  const settings = { gradrtPoolSize: threads - 1 };
  if (isNode) {
    const { fileURLToPath } = await import(/* webpackIgnore: true */ 'node:url');
    const { createRequire } = await import(/* webpackIgnore: true */ 'node:module');
    location = fileURLToPath(worker);
    settings.gradrtRequire = createRequire(import.meta.url);
  }
  settings.locateFile = (path, prefix) => (path.endsWith('.worker.js') ? location : prefix + path);
  return settings;
}
