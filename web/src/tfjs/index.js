// gradrt/tfjs: gradrt's kernels under TensorFlow.js's model.fit.
//
//   import * as tf from '@tensorflow/tfjs';
//   import '@tensorflow/tfjs-backend-wasm';           // backends first
//   import { registerGradrtKernels } from 'gradrt/tfjs';
//   const handle = await registerGradrtKernels(tf);   // wasm and cpu, where registered
//   ...                                               // model.fit: gradients in gradrt
//   handle.restore();                                 // tfjs's registry, exactly as before
//
// The package imports no tfjs: everything goes through the `tf` the caller passes.
import { init } from '../index.js';
import { GradrtError } from '../errors.js';
import { Registration } from './registry.js';
import { ioFor } from './io.js';
import { CONV_KERNELS, convGradient, convKernel } from './conv.js';
import { convLayers } from './conv_layers.js';
import {
  BN_FORWARD, batchNormKernels, batchNormTrainingGradient, batchNormalizationLayer, fusedBatchNormGradient,
} from './batch_norm.js';
import {
  fractionalAvgPool as fractionalAvgPoolOp, fractionalAvgPoolLayer, fractionalPoolGradient, fractionalPoolKernels,
} from './fractional_pool.js';

export { GradrtError };

const SUPPORTED = ['wasm', 'cpu'];

function checkTf(tf) {
  const need = ['registerKernel', 'getKernel', 'registerGradient', 'getGradient', 'unregisterKernel', 'unregisterGradient', 'engine', 'getBackend'];
  if (!tf || need.some((k) => typeof tf[k] !== 'function')) {
    throw new GradrtError('InvalidArgument', 'gradrt/tfjs: pass the TensorFlow.js module (import * as tf from \'@tensorflow/tfjs\'), version 4.x');
  }
}

function registeredBackends(tf) {
  const factories = typeof tf.findBackendFactory === 'function'
    ? (name) => tf.findBackendFactory(name) != null
    : (name) => name in tf.engine().registryFactory;
  return SUPPORTED.filter(factories);
}

// registerGradrtKernels(tf, { backends?, runtime?, ...init() options }) -> handle
//   { restore(), runtime, backends, fallbacks }.
// fallbacks counts, per kernel name, the calls that gradrt did not take and tfjs's own
// kernel ran instead.
export async function registerGradrtKernels(tf, options = {}) {
  checkTf(tf);
  const { backends: wanted, runtime, ...initOptions } = options || {};
  const backends = wanted === undefined ? registeredBackends(tf) : [...wanted];
  for (const b of backends) {
    if (!SUPPORTED.includes(b)) throw new GradrtError('InvalidArgument', `gradrt/tfjs: backend '${b}' is not supported (one of ${SUPPORTED.join(', ')})`);
  }
  const rt = runtime || await init(initOptions);
  const reg = new Registration(tf);
  const fallbacks = {};
  const ctx = {
    rt,
    io: ioFor,
    active: (backendName) => !reg.restored && backends.includes(backendName),
    fellBack: (kernelName) => {
      fallbacks[kernelName] = (fallbacks[kernelName] || 0) + 1;
    },
  };
  try {
    for (const b of backends) {
      for (const name of CONV_KERNELS) {
        const previous = tf.getKernel(name, b);
        reg.kernel(convKernel(ctx, name, b, previous));
      }
      for (const k of [...batchNormKernels(ctx, b), ...fractionalPoolKernels(ctx, b)]) reg.kernel(k);
    }
    reg.gradient(convGradient(ctx, tf, tf.getGradient('Conv2D'), false));
    reg.gradient(convGradient(ctx, tf, tf.getGradient('DepthwiseConv2dNative'), true));
    reg.gradient(fusedBatchNormGradient(ctx, tf, tf.getGradient('FusedBatchNorm')));
    reg.gradient(batchNormTrainingGradient(tf));
    reg.gradient(fractionalPoolGradient(tf));
  } catch (e) {
    reg.restore();
    throw e;
  }
  return {
    runtime: rt,
    backends,
    fallbacks,
    restore: () => reg.restore(),
  };
}

// fractionalAvgPool(tf, x, { poolingRatio, pseudoRandom, overlapping, deterministic, seed,
// seed2 }) -> { output, rowPoolingSequence, colPoolingSequence }; differentiable.
export function fractionalAvgPool(tf, x, options) {
  return fractionalAvgPoolOp(tf, x, options);
}

const layerClasses = new WeakMap(); // tf.layers.Layer -> { classes }

// gradrtLayers(tf) -> { batchNormalization, fractionalAvgPool, conv2d, depthwiseConv2d }:
// layer factories (config as tfjs's) whose classes derive from tf's own and are registered
// for serialization as 'GradrtBatchNormalization', 'GradrtFractionalAvgPool',
// 'GradrtConv2D', 'GradrtDepthwiseConv2D'.
export function gradrtLayers(tf) {
  if (!tf || !tf.layers || typeof tf.layers.Layer !== 'function') {
    throw new GradrtError('InvalidArgument', 'gradrt/tfjs: gradrtLayers needs a tf with tf.layers (@tensorflow/tfjs or tfjs-layers)');
  }
  let classes = layerClasses.get(tf.layers.Layer);
  if (!classes) {
    const usable = () => tf.getKernel(BN_FORWARD, tf.getBackend()) != null;
    classes = {
      BatchNormalization: batchNormalizationLayer(tf, usable),
      FractionalAvgPool: fractionalAvgPoolLayer(tf),
      ...convLayers(tf),
    };
    for (const c of Object.values(classes)) tf.serialization.registerClass(c);
    layerClasses.set(tf.layers.Layer, classes);
  }
  return {
    batchNormalization: (config) => new classes.BatchNormalization(config),
    fractionalAvgPool: (config) => new classes.FractionalAvgPool(config),
    conv2d: (config) => new classes.Conv2D(config),
    depthwiseConv2d: (config) => new classes.DepthwiseConv2D(config),
    classes,
  };
}
