// --pre-js of gradrt_ukernel_tests (a plain Node program, wasm/CMakeLists.txt): Emscripten
// 3.1.6 loads its .wasm with fetch() whenever fetch exists, which Node 18+ has and which
// rejects a file path; handing the glue the bytes (read next to this script) skips that.
Module['wasmBinary'] = require('fs').readFileSync(require('path').join(__dirname, 'gradrt_ukernel_tests.wasm'));
