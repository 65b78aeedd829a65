// gradrt: TensorFlow's gradient kernels with TensorFlow's semantics, in WebAssembly.
//
//   import { init } from 'gradrt';
//   const rt = await init();                 // SIMD build where the engine has WASM SIMD
//   const { output } = rt.runOp('Conv2DBackpropInput', { input_sizes, filter, out_backprop },
//                               { strides: [1, 1, 1, 1], padding: 'SAME' });
import { load, hasWasmSimd } from './loader.js';
import { Runtime } from './runtime.js';

export { GradrtError } from './errors.js';
export { hasWasmSimd };

// options: { wasmPath?: string | URL (folder with the .wasm files; default: the package's
// dist/), simd?: true | false | 'auto' (default), wasmBinary?: bytes of the chosen flavour }
export async function init(options = {}) {
  const { module, simd } = await load(options || {});
  return new Runtime(module, simd);
}
