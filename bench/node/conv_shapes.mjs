// The conv and depthwise rows the Node benchmarks share (bench.mjs's shapes, batch 1, SAME): per row the
// label, x / filter / dy shapes, attributes and both gradients' op names. Each script builds its own inputs.
export const count = (shape) => shape.reduce((a, b) => a * b, 1);

export function convGradShapes() {
  return [
    ['conv 3x3 s1 56x56x64->64', [1, 56, 56, 64], [3, 3, 64, 64], 1],
    ['conv 3x3 s2 56x56x64->128', [1, 56, 56, 64], [3, 3, 64, 128], 2],
    ['conv 1x1 28x28x256->512', [1, 28, 28, 256], [1, 1, 256, 512], 1],
    // Session 12's paths: the 1x1 input gradient that streams dy in place (ci <= 4 vectors:
    // 16 channels at 128 bits) and the 3x3 input gradient on a small image (dy padded per image).
    ['conv 1x1 56x56x16->64', [1, 56, 56, 16], [1, 1, 16, 64], 1],
    ['conv 3x3 s1 16x16x32->32', [1, 16, 16, 32], [3, 3, 32, 32], 1],
    ['depthwise 3x3 s1 112x112x32', [1, 112, 112, 32], [3, 3, 32, 1], 1],
    ['depthwise 3x3 s2 56x56x144', [1, 56, 56, 144], [3, 3, 144, 1], 2],
  ].map(([label, xs, ws, s]) => {
    const dw = label.startsWith('depthwise');
    const o = Math.ceil(xs[1] / s);
    return {
      label, xs, ws, ys: [1, o, o, dw ? ws[2] * ws[3] : ws[3]], attrs: { strides: [1, s, s, 1], padding: 'SAME' },
      bpi: dw ? 'DepthwiseConv2dNativeBackpropInput' : 'Conv2DBackpropInput',
      bpf: dw ? 'DepthwiseConv2dNativeBackpropFilter' : 'Conv2DBackpropFilter',
    };
  });
}
