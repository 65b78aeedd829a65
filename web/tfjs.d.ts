// Types of gradrt/tfjs (see "TensorFlow.js: gradrt/tfjs" in the contract). `tf` is the
// caller's TensorFlow.js 4.x module; the package itself imports none of it.
import type { GradrtError, InitOptions, Runtime } from './index';

export { GradrtError };

/** The TensorFlow.js module (import * as tf from '@tensorflow/tfjs'). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type TF = any;
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Tensor = any;

export interface RegisterOptions extends InitOptions {
  /** Backends to register on, among 'wasm' and 'cpu'; default: those registered in tf. */
  backends?: Array<'wasm' | 'cpu'>;
  /** A runtime from gradrt's init() to use instead of a new one. */
  runtime?: Runtime;
}

export interface GradrtHandle {
  /** The gradrt runtime the kernels run on. */
  readonly runtime: Runtime;
  readonly backends: string[];
  /** Per kernel name, the calls that gradrt did not take and tfjs's own kernel ran. */
  readonly fallbacks: Record<string, number>;
  /** Puts tfjs's kernel and gradient registries back exactly as before; idempotent. */
  restore(): void;
}

/** Registers gradrt's kernels (Conv2DBackpropInput/Filter, DepthwiseConv2dNativeBackpropInput/
 * Filter), the gradients of FusedBatchNorm, Conv2D and DepthwiseConv2dNative (with dilations),
 * and gradrt's own batch-norm and fractional-pooling kernels into tf. */
export function registerGradrtKernels(tf: TF, options?: RegisterOptions): Promise<GradrtHandle>;

export interface FractionalAvgPoolOptions {
  /** [1, rows, cols, 1], each >= 1. */
  poolingRatio: number[];
  pseudoRandom?: boolean;
  overlapping?: boolean;
  deterministic?: boolean;
  seed?: number;
  seed2?: number;
}

/** TensorFlow's FractionalAvgPool on an NHWC (or HWC) tensor; differentiable. The sequences
 * are int32 tensors of length rows+1 / cols+1. Needs registerGradrtKernels first. */
export function fractionalAvgPool(tf: TF, x: Tensor, options: FractionalAvgPoolOptions):
  { output: Tensor; rowPoolingSequence: Tensor; colPoolingSequence: Tensor };

export interface FractionalAvgPoolLayerConfig extends Partial<FractionalAvgPoolOptions> {
  /** [rows, cols] or [1, rows, cols, 1]; default [2, 2]. */
  poolingRatio?: number[];
  name?: string;
  inputShape?: number[];
}

/** Layer factories; the classes derive from tf.layers' own and are registered for
 * serialization ('GradrtBatchNormalization', 'GradrtFractionalAvgPool', 'GradrtConv2D',
 * 'GradrtDepthwiseConv2D'). Config as tf.layers.batchNormalization / conv2d / depthwiseConv2d. */
export function gradrtLayers(tf: TF): {
  batchNormalization(config?: object): Tensor;
  fractionalAvgPool(config?: FractionalAvgPoolLayerConfig): Tensor;
  conv2d(config: object): Tensor;
  depthwiseConv2d(config: object): Tensor;
  classes: Record<string, unknown>;
};
