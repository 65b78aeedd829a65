// The training page's data and model, independent of the page (Node can import it too):
// parse dist/digits.bin (scripts/digits.mjs writes it), build the small CNN, train it.

// digits.bin -> { train, held }, each { x: Float32Array [n, 8, 8, 1] in [0, 1], y: Uint8Array labels, n }.
export function parseDigits(bytes) {
  const u8 = new Uint8Array(bytes.buffer ?? bytes, bytes.byteOffset ?? 0, bytes.byteLength);
  const magic = String.fromCharCode(...u8.subarray(0, 8));
  if (magic !== 'GRDIGIT1') throw new Error(`digits.bin: bad magic '${magic}' (rebuild with npm run build)`);
  const view = new DataView(u8.buffer, u8.byteOffset, u8.byteLength);
  const nTrain = view.getUint16(8, true), nHeld = view.getUint16(10, true);
  if (u8.byteLength !== 12 + 65 * (nTrain + nHeld)) throw new Error('digits.bin: truncated');
  const part = (first, n) => {
    const x = new Float32Array(n * 64), y = new Uint8Array(n);
    for (let i = 0; i < n; i++) {
      const r = 12 + 65 * (first + i);
      y[i] = u8[r];
      for (let p = 0; p < 64; p++) x[i * 64 + p] = u8[r + 1 + p] / 16;
    }
    return { x, y, n };
  };
  return { train: part(0, nTrain), held: part(nTrain, nHeld) };
}

// A small deterministic generator (mulberry32) for the shuffles: same seed, same batches.
export function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

// The CNN: conv 3x3 (16) + BN + relu, depthwise 3x3 + BN + relu, fractional average pooling
// 8x8 -> 5x5, strided conv 3x3 s2 (32) -> 3x3 + BN + relu, dense(10) softmax.
// layers: { batchNormalization, fractionalAvgPool } factories; batchNormalization defaults
// to tfjs's own; without fractionalAvgPool that layer is left out (8x8 reaches the strided
// conv, 4x4 after it). Seeded initializers: the same seed gives the same starting weights.
export function buildModel(tf, { layers = {}, seed = 1, learningRate = 0.01 } = {}) {
  const bn = layers.batchNormalization ?? ((c) => tf.layers.batchNormalization(c));
  const init = (k) => tf.initializers.glorotUniform({ seed: seed * 16 + k });
  const bnConfig = { momentum: 0.9, epsilon: 1e-3 };
  const model = tf.sequential();
  model.add(tf.layers.conv2d({ inputShape: [8, 8, 1], filters: 16, kernelSize: 3, padding: 'same', useBias: false, kernelInitializer: init(0) }));
  model.add(bn(bnConfig));
  model.add(tf.layers.reLU());
  model.add(tf.layers.depthwiseConv2d({ kernelSize: 3, padding: 'same', useBias: false, depthwiseInitializer: init(1) }));
  model.add(bn(bnConfig));
  model.add(tf.layers.reLU());
  if (layers.fractionalAvgPool) model.add(layers.fractionalAvgPool({ poolingRatio: [1, 1.6, 1.6, 1], pseudoRandom: true, overlapping: true, deterministic: true, seed: seed + 7, seed2: 3 }));
  model.add(tf.layers.conv2d({ filters: 32, kernelSize: 3, strides: 2, padding: 'same', useBias: false, kernelInitializer: init(2) }));
  model.add(bn(bnConfig));
  model.add(tf.layers.reLU());
  model.add(tf.layers.flatten());
  model.add(tf.layers.dense({ units: 10, activation: 'softmax', kernelInitializer: init(3) }));
  model.compile({ optimizer: tf.train.adam(learningRate), loss: 'categoricalCrossentropy', metrics: ['accuracy'] });
  return model;
}

// Held-out accuracy and loss: one predict over the whole split (inference-mode batch norm).
export function evaluate(tf, model, part) {
  return tf.tidy(() => {
    const x = tf.tensor4d(part.x, [part.n, 8, 8, 1]);
    const p = model.predict(x);
    const labels = tf.tensor1d(part.y, 'int32');
    // (functional ops, not chained ones: tfjs-core's chained methods need a side-effect import)
    const correct = tf.sum(tf.equal(tf.argMax(p, -1), labels)).dataSync()[0];
    const loss = tf.mean(tf.metrics.categoricalCrossentropy(tf.oneHot(labels, 10), p)).dataSync()[0];
    return { accuracy: correct / part.n, loss };
  });
}

// Trains epochs x floor(n / batchSize) steps (trainOnBatch; a fresh seeded shuffle per epoch,
// the last partial batch dropped). Calls onStep({ step, epoch, loss, accuracy, ms }) after each
// step (ms: trainOnBatch until its loss and accuracy are read back) and onEpoch({ epoch, held })
// after each epoch; awaits yieldEvery() between steps when given (the page repaints there).
// Stops early when shouldStop() returns true. Resolves to the last epoch's held-out figures.
export async function train(tf, model, data, { epochs = 10, batchSize = 32, seed = 1, onStep, onEpoch, shouldStop, yieldEvery } = {}) {
  const { train: tr, held } = data;
  const random = rng(seed);
  const order = Uint32Array.from({ length: tr.n }, (_, i) => i);
  const bx = new Float32Array(batchSize * 64), by = new Int32Array(batchSize);
  let step = 0, last = null;
  for (let epoch = 1; epoch <= epochs; epoch++) {
    for (let i = tr.n - 1; i > 0; i--) {
      const j = Math.floor(random() * (i + 1));
      [order[i], order[j]] = [order[j], order[i]];
    }
    for (let b = 0; b + batchSize <= tr.n; b += batchSize) {
      if (shouldStop?.()) return last;
      for (let k = 0; k < batchSize; k++) {
        const s = order[b + k];
        bx.set(tr.x.subarray(s * 64, s * 64 + 64), k * 64);
        by[k] = tr.y[s];
      }
      const x = tf.tensor4d(bx, [batchSize, 8, 8, 1]);
      const y = tf.tidy(() => tf.oneHot(tf.tensor1d(by, 'int32'), 10));
      const t0 = performance.now();
      const [loss, accuracy] = await model.trainOnBatch(x, y);
      const ms = performance.now() - t0;
      tf.dispose([x, y]);
      onStep?.({ step: ++step, epoch, loss, accuracy, ms });
      if (yieldEvery) await yieldEvery();
    }
    last = { epoch, steps: step, held: evaluate(tf, model, held) };
    onEpoch?.(last);
    if (yieldEvery) await yieldEvery();
  }
  return last;
}
