// gradrt/tfjs: the four convolution gradient kernels, called the way tfjs calls them
// (runKernel with tfjs's attrs: pad 'same' / 'valid' / number / explicit list,
// dimRoundingMode, NHWC and NCHW, dilations), on the wasm and cpu backends, against
// tfjs cpu's own kernels (computed before registration) and the plain-loop reference
// (test/reference.js) with the geometry that tfjs's own computeConv2DInfo gives.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as ref from './reference.js';
import { assertAgree, randomTensor, tf, withGradrt } from './tfjs_util.js';

const pads = ['same', 'valid', 1, 2, 'explicit'];
const rounding = [undefined, 'floor', 'round', 'ceil'];

// Generated cases: sizes, strides, filters, batches, channel multipliers, pads.
function cases() {
  const out = [];
  let k = 0;
  for (const depthwise of [false, true]) {
    for (let i = 0; i < 24; i++, k++) {
      const sh = 1 + (k % 3);
      const sw = 1 + ((k + i) % 3);
      const fh = [1, 2, 3, 3, 5][k % 5];
      const fw = [3, 1, 2, 3, 4][(k + 2) % 5];
      const n = 1 + (k % 3);
      const h = 5 + ((k * 7) % 8);
      const w = 4 + ((k * 5) % 9);
      const c = 1 + (k % 4);
      const m = depthwise ? 1 + ((k >> 1) % 3) : 1 + ((k * 3) % 5);
      const nchw = !depthwise && k % 2 === 1;
      let pad = pads[k % pads.length];
      if (pad === 'explicit') {
        const t = k % 3;
        const b = (k + 1) % 2;
        const l = (k + 2) % 3;
        const r = k % 2;
        pad = nchw ? [[0, 0], [0, 0], [t, b], [l, r]] : [[0, 0], [t, b], [l, r], [0, 0]];
      }
      const dimRoundingMode = typeof pad === 'number' || typeof pad === 'object' ? rounding[k % 4] : undefined;
      // Depthwise: tfjs needs equal strides; dilations on some cases (reference only).
      const strides = depthwise ? [sh, sh] : [sh, sw];
      const dil = depthwise && k % 4 === 3 ? [2, 1 + (k % 2)] : !depthwise && k % 6 === 5 ? [2, 2] : [1, 1];
      const strides2 = dil.some((d) => d > 1) ? [1, 1] : strides;
      if (Math.max(fh, fw) * Math.max(...dil) > Math.min(h, w) + 2) continue;
      out.push({ depthwise, n, h, w, c, m, fh, fw, strides: strides2, dilations: dil, pad, dimRoundingMode, nchw, seed: 100 + k });
    }
  }
  return out;
}

// tfjs's own geometry for the case (computeConv2DInfo, as its kernels use).
function info(cs) {
  const xShape = cs.nchw ? [cs.n, cs.c, cs.h, cs.w] : [cs.n, cs.h, cs.w, cs.c];
  const fShape = [cs.fh, cs.fw, cs.c, cs.m];
  const ci = tf.backend_util.computeConv2DInfo(xShape, fShape, cs.strides, cs.dilations, cs.pad, cs.dimRoundingMode,
    cs.depthwise, cs.nchw ? 'channelsFirst' : 'channelsLast');
  return { xShape, fShape, ci };
}

function attrsOf(cs, extra) {
  const a = { strides: cs.strides, pad: cs.pad, dimRoundingMode: cs.dimRoundingMode, dilations: cs.dilations, ...extra };
  if (!cs.depthwise) a.dataFormat = cs.nchw ? 'NCHW' : 'NHWC';
  return a;
}

// Runs both gradient kernels for a case on the current backend -> { dx, dw } Float32Arrays.
function gradients(cs) {
  const { xShape, fShape, ci } = info(cs);
  const [inName, fName] = cs.depthwise
    ? ['DepthwiseConv2dNativeBackpropInput', 'DepthwiseConv2dNativeBackpropFilter']
    : ['Conv2DBackpropInput', 'Conv2DBackpropFilter'];
  return tf.tidy(() => {
    const x = randomTensor(xShape, cs.seed);
    const filter = randomTensor(fShape, cs.seed + 1);
    const dy = randomTensor(ci.outShape, cs.seed + 2);
    const dx = tf.engine().runKernel(inName, { dy, filter }, attrsOf(cs, { inputShape: xShape }));
    const dw = tf.engine().runKernel(fName, { x, dy }, attrsOf(cs, { filterShape: fShape }));
    return { dx: dx.dataSync().slice(), dw: dw.dataSync().slice() };
  });
}

// The reference, in NHWC with tfjs's leading pads and output size.
function reference(cs) {
  const { xShape, fShape, ci } = info(cs);
  const data = (shape, seed) => randomTensor(shape, seed).dataSync();
  let x = data(xShape, cs.seed);
  const w = data(fShape, cs.seed + 1);
  let dy = data(ci.outShape, cs.seed + 2);
  if (cs.nchw) {
    x = ref.toNHWC(xShape, x);
    dy = ref.toNHWC(ci.outShape, dy);
  }
  const g = {
    N: cs.n, H: cs.h, W: cs.w, C: cs.c, FH: cs.fh, FW: cs.fw, FI: cs.c, M: cs.m,
    OH: ci.outHeight, OW: ci.outWidth, OC: cs.depthwise ? cs.c * cs.m : cs.m,
    sh: ci.strideHeight, sw: ci.strideWidth, dh: ci.dilationHeight, dw: ci.dilationWidth, pt: ci.padInfo.top, pl: ci.padInfo.left,
  };
  let dx = cs.depthwise ? ref.depthwiseConv2dNativeBackpropInput(g, w, dy) : ref.conv2dBackpropInput(g, w, dy);
  const dw = cs.depthwise ? ref.depthwiseConv2dNativeBackpropFilter(g, x, dy) : ref.conv2dBackpropFilter(g, x, dy);
  if (cs.nchw) dx = ref.toNCHW([cs.n, cs.h, cs.w, cs.c], dx);
  return { dx, dw };
}

const label = (cs) => `${cs.depthwise ? 'depthwise' : 'conv'} ${cs.nchw ? 'NCHW' : 'NHWC'} n${cs.n} ${cs.h}x${cs.w}x${cs.c} f${cs.fh}x${cs.fw}x${cs.m} s${cs.strides} d${cs.dilations} pad ${JSON.stringify(cs.pad)} ${cs.dimRoundingMode || ''}`;

test('conv and depthwise gradient kernels: gradrt on wasm and cpu = tfjs cpu = reference', async () => {
  const all = cases().filter((cs) => info(cs).ci.outHeight > 0 && info(cs).ci.outWidth > 0);
  assert.ok(all.length >= 40, `${all.length} cases`);
  await tf.setBackend('cpu');
  // tfjs's own cpu kernels ignore dilations: undilated cases only.
  const tfjsCpu = all.map((cs) => (cs.dilations.some((d) => d > 1) ? null : gradients(cs)));
  let worst = 0;
  await withGradrt(['cpu', 'wasm'], (handle, backend) => {
    all.forEach((cs, i) => {
      const got = gradients(cs);
      const want = reference(cs);
      const l = `${backend} ${label(cs)}`;
      worst = Math.max(worst, assertAgree(got.dx, want.dx, `${l}: dx vs reference`), assertAgree(got.dw, want.dw, `${l}: dw vs reference`));
      if (tfjsCpu[i]) {
        worst = Math.max(worst, assertAgree(got.dx, tfjsCpu[i].dx, `${l}: dx vs tfjs cpu`), assertAgree(got.dw, tfjsCpu[i].dw, `${l}: dw vs tfjs cpu`));
      }
    });
    assert.deepEqual(handle.fallbacks, {}, `${backend}: every case ran in gradrt`);
  }, { backends: ['wasm', 'cpu'] });
  console.log(`# gradrt/tfjs conv gradients: ${all.length} cases x 2 backends, largest error ${worst.toExponential(2)} of max |want|`);
});
