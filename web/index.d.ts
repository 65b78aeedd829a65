// Types of the gradrt npm package (see the JavaScript / TypeScript section of the contract).

export type DType = 'float16' | 'bfloat16' | 'float32' | 'float64' | 'int32' | 'int64';

export interface DataOf {
  float16: Uint16Array; // IEEE half bits
  bfloat16: Uint16Array; // bfloat16 bits
  float32: Float32Array;
  float64: Float64Array;
  int32: Int32Array;
  int64: BigInt64Array;
}

/** A dense row-major tensor. */
export interface Tensor<D extends DType = DType> {
  dtype: D;
  shape: number[];
  data: DataOf[D];
}

/** What an input accepts: a tensor, or for shape and sequence inputs (input_sizes,
 * filter_sizes, orig_input_tensor_shape, row/col_pooling_sequence) a plain vector. */
export type TensorLike =
  | Tensor
  | { dtype: 'float32' | 'float64' | 'int32' | 'int64'; shape: number[]; data: number[] | DataOf[DType] }
  | Int32Array
  | BigInt64Array
  | Array<number | bigint>;

export type AttrValue = boolean | number | string | Array<number | string | boolean> | Int32Array | Float64Array;
export type Attrs = Record<string, AttrValue>;

/** A tensor in a runtime's wasm memory (Runtime.tensor(), or runOp with { heap: true }):
 * runOp reads it in place as an input and writes heap outputs without copying them out.
 * `data` is a fresh view on every read (a later runOp may grow the wasm memory, which
 * detaches older views). dispose() frees it; a tensor garbage collected undisposed is freed
 * then. Using it after dispose(), or with another runtime, throws InvalidArgument. */
export class HeapTensor<D extends DType = DType> {
  readonly dtype: D;
  readonly shape: readonly number[];
  readonly data: DataOf[D];
  readonly disposed: boolean;
  dispose(): void;
  private constructor();
}

export type Inputs = Record<string, TensorLike | HeapTensor>;
/** Outputs by TensorFlow name, in the op's output order. */
export type Outputs = Record<string, Tensor>;

/** Where an output goes instead of a fresh typed array: a typed array of the output's
 * dtype (DataOf) with exactly its element count (any offset into any buffer), or a tensor
 * whose data is one (its dtype, if given, must match; its shape is not read). null drops
 * the output: no copy, and no key in the result. */
export type OutputDestination = DataOf[DType] | { dtype?: DType; shape?: number[]; data: DataOf[DType] } | HeapTensor | null;

export interface RunOptions {
  /** 'auto' (default), 'cpu' or 'reference'. */
  backend?: string;
  /** Per output name (TensorFlow's): write it into this caller-owned array. The result's
   * tensor for that output then has `data ===` the given array. A destination of the wrong
   * type or size, or an unknown output name, throws InvalidArgument before anything is
   * written. Outputs not named here are fresh arrays, as without the option. */
  outputs?: Record<string, OutputDestination>;
  /** Return the outputs not named in `outputs` as HeapTensors (their buffers stay in the
   * wasm memory: no copy; dispose() each). */
  heap?: boolean;
}

export interface OpInfo {
  name: string;
  inputs: string[];
  outputs: string[];
}

export interface BackendInfo {
  name: string;
  available: boolean;
  detail: string;
}

export type StatusCode =
  | 'InvalidArgument'
  | 'ResourceExhausted'
  | 'Unimplemented'
  | 'NotFound'
  | 'Unavailable'
  | 'Internal';

export class GradrtError extends Error {
  readonly name: 'GradrtError';
  readonly code: StatusCode;
  constructor(code: StatusCode, message: string);
}

export interface InitOptions {
  /** Folder (path or URL) holding gradrt-simd.wasm, gradrt-scalar.wasm (and gradrt-simd-threads.wasm); default: the package's dist/. */
  wasmPath?: string | URL;
  /** true: the SIMD build (Unavailable where the engine lacks WASM SIMD); false: the scalar build; 'auto' (default): feature detection. */
  simd?: boolean | 'auto';
  /** The bytes of the chosen flavour's .wasm, instead of reading it from wasmPath
   * (gradrt-simd-threads.wasm when threads are used). */
  wasmBinary?: ArrayBuffer | Uint8Array;
  /** Threads per op, 1 (default) to 64. Above 1, the SIMD + pthreads build is loaded where
   * the environment allows it (canUseThreads(): Node; browsers on cross-origin isolated
   * pages, i.e. served with COOP: same-origin and COEP: require-corp) and SIMD is used;
   * anywhere else the runtime falls back to one thread without an error (see
   * Runtime.threads). threads - 1 workers are started by init() and sleep between ops. */
  threads?: number;
  /** With threads: an op whose estimated work per extra thread is below this many
   * nanoseconds runs on fewer threads (default 200000: a job start on the workers costs about
   * 0.1 ms); 0 makes every op use all threads. Results are the same bits either way. */
  minThreadWorkNs?: number;
}

/** A spec for Runtime.prepare: dtype and shape (data only for the shape and sequence inputs,
 * whose values the plan keeps), or a tensor / HeapTensor whose dtype and shape are taken. */
export type TensorSpec = { dtype: DType; shape: number[]; data?: DataOf[DType] | number[] } | TensorLike | HeapTensor;

/** A prepared op: validated once; each run passes its tensors in one binary call. */
export interface Plan {
  readonly op: string;
  /** Where the kernel runs, which kernel and instruction set ("cpu", "conv2d_backprop_input", "wasm_simd128"). */
  readonly backend: string;
  readonly kernel: string;
  readonly isa: string;
  /** The cpu backend's tile choice for this kernel where it reports one (Conv2DBackpropInput: "stream RxCV" or "gemm MRxNRV"), else "". */
  readonly tiles: string;
  /** The outputs' names, dtypes and shapes, in the op's order (known at prepare). */
  readonly outputs: Array<{ name: string; dtype: DType; shape: number[] }>;
  /** Same bits as runOp; inputs must have the prepared dtypes and shapes. Throws GradrtError. */
  run(inputs: Inputs, options: { outputs?: Record<string, OutputDestination>; heap: true }): Record<string, HeapTensor | Tensor>;
  run(inputs: Inputs, options?: { outputs?: Record<string, OutputDestination>; heap?: boolean }): Outputs;
  /** Frees the plan in the wasm heap; later runs throw. */
  dispose(): void;
}

export interface Runtime {
  /** Whether the SIMD build was loaded. */
  readonly simd: boolean;
  /** Threads each op uses: init's threads where the threaded build was loaded, else 1. */
  readonly threads: number;
  readonly version: string;
  /** Runs an op by its TensorFlow name; throws GradrtError. With { heap: true } the outputs
   * are HeapTensors (except those written into typed-array destinations). */
  runOp(op: string, inputs: Inputs, attrs: Attrs | undefined, options: RunOptions & { heap: true }): Record<string, HeapTensor | Tensor>;
  runOp(op: string, inputs: Inputs, attrs?: Attrs, options?: RunOptions): Outputs;
  /** Validates op once on input specs and attrs (throws GradrtError as runOp would). */
  prepare(op: string, specs: Record<string, TensorSpec>, attrs?: Attrs, options?: { backend?: string }): Plan;
  ops(): OpInfo[];
  backends(): BackendInfo[];
  /** Size of the wasm linear memory in bytes (diagnostic). */
  heapBytes(): number;
  /** A tensor in this runtime's wasm memory, a copy of `data` if given, else zeros. */
  tensor<D extends DType>(dtype: D, shape: number[], data?: DataOf[D] | number[]): HeapTensor<D>;
  /** Ends the runtime (terminates the threaded build's workers); later runOp calls throw
   * GradrtError 'Unavailable'. Not needed for Node to exit: idle workers do not hold it. */
  dispose(): void;

  // camelCase helpers: inputs in TensorFlow's order, then attrs, then options.
  // BEGIN generated from core/include/gradrt/ops.inc by scripts/gen_types.mjs: do not edit
  conv2dBackpropInput(input_sizes: TensorLike, filter: TensorLike, out_backprop: TensorLike, attrs: Attrs, options?: RunOptions): { output: Tensor };
  conv2dBackpropInputV2(input: TensorLike, filter: TensorLike, out_backprop: TensorLike, attrs: Attrs, options?: RunOptions): { output: Tensor };
  conv2dBackpropFilter(input: TensorLike, filter_sizes: TensorLike, out_backprop: TensorLike, attrs: Attrs, options?: RunOptions): { output: Tensor };
  conv2dBackpropFilterV2(input: TensorLike, filter: TensorLike, out_backprop: TensorLike, attrs: Attrs, options?: RunOptions): { output: Tensor };
  depthwiseConv2dNativeBackpropInput(input_sizes: TensorLike, filter: TensorLike, out_backprop: TensorLike, attrs: Attrs, options?: RunOptions): { output: Tensor };
  depthwiseConv2dNativeBackpropFilter(input: TensorLike, filter_sizes: TensorLike, out_backprop: TensorLike, attrs: Attrs, options?: RunOptions): { output: Tensor };
  fractionalAvgPoolGrad(orig_input_tensor_shape: TensorLike, out_backprop: TensorLike, row_pooling_sequence: TensorLike, col_pooling_sequence: TensorLike, attrs?: Attrs, options?: RunOptions): { output: Tensor };
  fusedBatchNormGrad(y_backprop: TensorLike, x: TensorLike, scale: TensorLike, reserve_space_1: TensorLike, reserve_space_2: TensorLike, attrs?: Attrs, options?: RunOptions): { x_backprop: Tensor; scale_backprop: Tensor; offset_backprop: Tensor; reserve_space_3: Tensor; reserve_space_4: Tensor };
  fusedBatchNormGradV2(y_backprop: TensorLike, x: TensorLike, scale: TensorLike, reserve_space_1: TensorLike, reserve_space_2: TensorLike, attrs?: Attrs, options?: RunOptions): { x_backprop: Tensor; scale_backprop: Tensor; offset_backprop: Tensor; reserve_space_3: Tensor; reserve_space_4: Tensor };
  fusedBatchNormGradV3(y_backprop: TensorLike, x: TensorLike, scale: TensorLike, reserve_space_1: TensorLike, reserve_space_2: TensorLike, reserve_space_3: TensorLike, attrs?: Attrs, options?: RunOptions): { x_backprop: Tensor; scale_backprop: Tensor; offset_backprop: Tensor; reserve_space_4: Tensor; reserve_space_5: Tensor };
  conv2d(input: TensorLike, filter: TensorLike, attrs: Attrs, options?: RunOptions): { output: Tensor };
  depthwiseConv2dNative(input: TensorLike, filter: TensorLike, attrs: Attrs, options?: RunOptions): { output: Tensor };
  fusedBatchNorm(x: TensorLike, scale: TensorLike, offset: TensorLike, mean: TensorLike, variance: TensorLike, attrs?: Attrs, options?: RunOptions): Outputs;
  fusedBatchNormV2(x: TensorLike, scale: TensorLike, offset: TensorLike, mean: TensorLike, variance: TensorLike, attrs?: Attrs, options?: RunOptions): Outputs;
  fusedBatchNormV3(x: TensorLike, scale: TensorLike, offset: TensorLike, mean: TensorLike, variance: TensorLike, attrs?: Attrs, options?: RunOptions): Outputs;
  fractionalAvgPool(value: TensorLike, attrs: Attrs, options?: RunOptions): { output: Tensor; row_pooling_sequence: Tensor<'int64'>; col_pooling_sequence: Tensor<'int64'> };
  maxPoolGrad(orig_input: TensorLike, orig_output: TensorLike, grad: TensorLike, attrs: Attrs, options?: RunOptions): { output: Tensor };
  avgPoolGrad(orig_input_shape: TensorLike, grad: TensorLike, attrs: Attrs, options?: RunOptions): { output: Tensor };
  maxPool(input: TensorLike, attrs: Attrs, options?: RunOptions): { output: Tensor };
  avgPool(value: TensorLike, attrs: Attrs, options?: RunOptions): { output: Tensor };
  relu(features: TensorLike, attrs?: Attrs, options?: RunOptions): { activations: Tensor };
  relu6(features: TensorLike, attrs?: Attrs, options?: RunOptions): { activations: Tensor };
  reluGrad(gradients: TensorLike, features: TensorLike, attrs?: Attrs, options?: RunOptions): { backprops: Tensor };
  relu6Grad(gradients: TensorLike, features: TensorLike, attrs?: Attrs, options?: RunOptions): { backprops: Tensor };
  biasAdd(value: TensorLike, bias: TensorLike, attrs?: Attrs, options?: RunOptions): { output: Tensor };
  biasAddGrad(out_backprop: TensorLike, attrs?: Attrs, options?: RunOptions): { output: Tensor };
  // END generated
  [helper: string]: unknown;
}

/** Loads the wasm build (SIMD where the engine has it) and returns a Runtime. */
export function init(options?: InitOptions): Promise<Runtime>;

/** Whether this engine validates WASM SIMD128 code. */
export function hasWasmSimd(): boolean;

/** Whether init({ threads }) can load the threaded build here: shared WebAssembly memory,
 * and in a browser a cross-origin isolated page with Web Workers. */
export function canUseThreads(): boolean;
