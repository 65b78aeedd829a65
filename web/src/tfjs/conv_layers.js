// Conv2D / DepthwiseConv2D layers whose dilations train.
//
// Registration alone makes dilated convolutions differentiable (Conv2D's and
// DepthwiseConv2dNative's gradient configs pass dilations to gradrt), but two tfjs-layers
// paths never reach them: a Conv2D layer with a linear activation runs tfjs-core's fused
// conv2d under a gradient tape, whose own gradient function asserts dilation 1; and the
// DepthwiseConv2D layer drops dilationRate altogether (its call passes null). These
// subclasses keep tfjs's config, weights and serialization, and compute with the plain
// tf.conv2d / tf.depthwiseConv2d ops (channels-last; channels-first stays tfjs's code).

function applyBiasActivation(tf, layer, y) {
  let out = y;
  if (layer.bias) out = tf.add(out, layer.bias.read());
  if (layer.activation) out = layer.activation.apply(out);
  return out;
}

const one = (inputs) => (Array.isArray(inputs) ? inputs[0] : inputs);

// Output length of a dilated window (Keras' conv_output_length).
function outLength(n, k, padding, stride, dilation) {
  if (n == null) return null;
  const eff = (k - 1) * dilation + 1;
  const len = padding === 'same' ? n : n - eff + 1;
  return Math.floor((len + stride - 1) / stride);
}

export function convLayers(tf) {
  const Conv2D = tf.layers.conv2d({ filters: 1, kernelSize: 1 }).constructor;
  const DepthwiseConv2D = tf.layers.depthwiseConv2d({ kernelSize: 1 }).constructor;

  class GradrtConv2D extends Conv2D {
    call(inputs, kwargs) {
      if (this.dataFormat === 'channelsFirst') return super.call(inputs, kwargs);
      return tf.tidy(() => applyBiasActivation(tf, this,
        tf.conv2d(one(inputs), this.kernel.read(), this.strides, this.padding, 'NHWC', this.dilationRate)));
    }
  }
  GradrtConv2D.className = 'GradrtConv2D';

  class GradrtDepthwiseConv2D extends DepthwiseConv2D {
    call(inputs, kwargs) {
      if (this.dataFormat === 'channelsFirst') return super.call(inputs, kwargs);
      return tf.tidy(() => applyBiasActivation(tf, this,
        tf.depthwiseConv2d(one(inputs), this.depthwiseKernel.read(), this.strides, this.padding, 'NHWC', this.dilationRate)));
    }

    computeOutputShape(inputShape) {
      if (this.dataFormat === 'channelsFirst') return super.computeOutputShape(inputShape);
      const shape = Array.isArray(inputShape[0]) ? inputShape[0] : inputShape;
      const [n, h, w, c] = shape;
      return [n,
        outLength(h, this.kernelSize[0], this.padding, this.strides[0], this.dilationRate[0]),
        outLength(w, this.kernelSize[1], this.padding, this.strides[1], this.dilationRate[1]),
        c * this.depthMultiplier];
    }
  }
  GradrtDepthwiseConv2D.className = 'GradrtDepthwiseConv2D';

  return { Conv2D: GradrtConv2D, DepthwiseConv2D: GradrtDepthwiseConv2D };
}
