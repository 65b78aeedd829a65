// Emscripten 3.1.6's Node shell reads __dirname, which ES modules do not have. gradrt
// always hands the glue its wasm (web/src/loader.js), so the value is never used.
var __dirname = typeof __dirname == 'string' ? __dirname : '';
