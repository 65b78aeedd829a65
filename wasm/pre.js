// Emscripten 3.1.6's Node shell reads __dirname, which ES modules do not have. gradrt
// always hands the glue its wasm (web/src/loader.js), so the value is never used.
var __dirname = typeof __dirname == 'string' ? __dirname : '';
// The pthread flavour's Node path calls require('worker_threads') (and the glue may call
// require('path')); an ES module has no require, so web/src/loader.js passes one as
// Module.gradrtRequire. In a pool worker, Emscripten's worker script (CommonJS) has put
// its own require on the global object.
var require = Module['gradrtRequire'] || (typeof globalThis.require == 'function' ? globalThis.require : undefined);
