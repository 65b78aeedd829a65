// gradrt: TensorFlow's gradient kernels with TensorFlow's semantics, in WebAssembly.
//
//   import { init } from 'gradrt';
//   const rt = await init();                 // SIMD build where the engine has WASM SIMD
//   const { output } = rt.runOp('Conv2DBackpropInput', { input_sizes, filter, out_backprop },
//                               { strides: [1, 1, 1, 1], padding: 'SAME' });
import { load, hasWasmSimd, canUseThreads } from './loader.js';
import { Runtime } from './runtime.js';

export { GradrtError } from './errors.js';
export { HeapTensor } from './heap_tensor.js';
export { hasWasmSimd, canUseThreads };

// options: { wasmPath?: string | URL (folder with the .wasm files; default: the package's
// dist/), simd?: true | false | 'auto' (default), wasmBinary?: bytes of the chosen flavour,
// threads?: 1 (default) .. 64: the SIMD + pthreads flavour where the environment allows it
// (Node; browsers: crossOriginIsolated pages), else silently 1 (see rt.threads) }
export async function init(options = {}) {
  const { module, simd, threads } = await load(options || {});
  return new Runtime(module, simd, threads);
}
