// Plain-JS reference implementations of the ops' math (shared/spec/ops.md 1.3, 1.5, 2.4,
// 3.3, 4.3, 5.5, 5.10, 6.4, 6.10): obvious loops, double accumulation. Used by the tests
// and by the demo page. Tensors are { shape, data } with NHWC data and HWIO filters;
// `layoutNHWC` / `layoutNCHW` convert for NCHW cases.

// 1.3: output size and leading pad of one spatial dimension.
export function windowed(size, filter, dilation, stride, padding, before = 0, after = 0) {
  const eff = (filter - 1) * dilation + 1;
  if (padding === 'SAME') {
    const out = Math.trunc((size + stride - 1) / stride);
    const need = Math.max(0, (out - 1) * stride + eff - size);
    return { out, pad: Math.floor(need / 2) };
  }
  if (padding === 'VALID') return { out: Math.trunc((size - eff + stride) / stride), pad: 0 };
  return { out: Math.trunc((size + before + after - eff + stride) / stride), pad: before };
}

// Geometry of a conv-like op from NHWC input shape, HWIO filter shape and TF attrs.
export function convGeometry(xShape, wShape, attrs, depthwise = false) {
  const nchw = attrs.data_format === 'NCHW';
  const [hi, wi] = nchw ? [2, 3] : [1, 2];
  const strides = attrs.strides;
  const dil = attrs.dilations || [1, 1, 1, 1];
  const ep = attrs.explicit_paddings || [];
  const [N, H, W, C] = xShape;
  const [FH, FW, FI, M] = wShape;
  const rows = windowed(H, FH, dil[hi], strides[hi], attrs.padding, ep[2 * hi], ep[2 * hi + 1]);
  const cols = windowed(W, FW, dil[wi], strides[wi], attrs.padding, ep[2 * wi], ep[2 * wi + 1]);
  return {
    N, H, W, C, FH, FW, FI, OH: rows.out, OW: cols.out, OC: depthwise ? C * M : M, M,
    sh: strides[hi], sw: strides[wi], dh: dil[hi], dw: dil[wi], pt: rows.pad, pl: cols.pad,
  };
}

// Calls fn(n, oy, ox, ky, kx, iy, ix) for every in-range tap.
function taps(g, fn) {
  for (let n = 0; n < g.N; n++)
    for (let oy = 0; oy < g.OH; oy++)
      for (let ox = 0; ox < g.OW; ox++)
        for (let ky = 0; ky < g.FH; ky++) {
          const iy = oy * g.sh - g.pt + ky * g.dh;
          if (iy < 0 || iy >= g.H) continue;
          for (let kx = 0; kx < g.FW; kx++) {
            const ix = ox * g.sw - g.pl + kx * g.dw;
            if (ix >= 0 && ix < g.W) fn(n, oy, ox, ky, kx, iy, ix);
          }
        }
}

// 1.5 (grouped), 2.4, 3.3. x/dy: NHWC data, w: HWIO data.
export function conv2d(g, x, w) {
  const y = new Float64Array(g.N * g.OH * g.OW * g.OC);
  const perGroup = g.OC / (g.C / g.FI);
  taps(g, (n, oy, ox, ky, kx, iy, ix) => {
    for (let oc = 0; oc < g.OC; oc++) {
      const c0 = Math.floor(oc / perGroup) * g.FI;
      let s = 0;
      for (let f = 0; f < g.FI; f++) s += x[((n * g.H + iy) * g.W + ix) * g.C + c0 + f] * w[((ky * g.FW + kx) * g.FI + f) * g.OC + oc];
      y[((n * g.OH + oy) * g.OW + ox) * g.OC + oc] += s;
    }
  });
  return y;
}

// Calls fn(xi, wi, d) for every product of the conv gradients: d = dy[n, oy, ox, oc] times
// w[ky, kx, f, oc] (dx) or x[n, iy, ix, c0 + f] (dw).
function convGradientProducts(g, dy, fn) {
  const perGroup = g.OC / (g.C / g.FI);
  taps(g, (n, oy, ox, ky, kx, iy, ix) => {
    for (let oc = 0; oc < g.OC; oc++) {
      const d = dy[((n * g.OH + oy) * g.OW + ox) * g.OC + oc];
      const c0 = Math.floor(oc / perGroup) * g.FI;
      for (let f = 0; f < g.FI; f++) fn(((n * g.H + iy) * g.W + ix) * g.C + c0 + f, ((ky * g.FW + kx) * g.FI + f) * g.OC + oc, d);
    }
  });
}

export function conv2dBackpropInput(g, w, dy) {
  const dx = new Float64Array(g.N * g.H * g.W * g.C);
  convGradientProducts(g, dy, (xi, wi, d) => { dx[xi] += d * w[wi]; });
  return dx;
}

export function conv2dBackpropFilter(g, x, dy) {
  const dw = new Float64Array(g.FH * g.FW * g.FI * g.OC);
  convGradientProducts(g, dy, (xi, wi, d) => { dw[wi] += d * x[xi]; });
  return dw;
}

// 4.3 (with dilation, gradrt policy 1). w: [FH, FW, C, M], output channel c*M + m.
// Calls fn(xi, wi, yi) for every product x[xi] * w[wi] that output y[yi] sums.
function depthwiseProducts(g, fn) {
  taps(g, (n, oy, ox, ky, kx, iy, ix) => {
    for (let c = 0; c < g.C; c++)
      for (let m = 0; m < g.M; m++)
        fn(((n * g.H + iy) * g.W + ix) * g.C + c, ((ky * g.FW + kx) * g.C + c) * g.M + m, ((n * g.OH + oy) * g.OW + ox) * g.OC + c * g.M + m);
  });
}

export function depthwiseConv2dNative(g, x, w) {
  const y = new Float64Array(g.N * g.OH * g.OW * g.OC);
  depthwiseProducts(g, (xi, wi, yi) => { y[yi] += x[xi] * w[wi]; });
  return y;
}

export function depthwiseConv2dNativeBackpropInput(g, w, dy) {
  const dx = new Float64Array(g.N * g.H * g.W * g.C);
  depthwiseProducts(g, (xi, wi, yi) => { dx[xi] += dy[yi] * w[wi]; });
  return dx;
}

export function depthwiseConv2dNativeBackpropFilter(g, x, dy) {
  const dw = new Float64Array(g.FH * g.FW * g.C * g.M);
  depthwiseProducts(g, (xi, wi, yi) => { dw[wi] += dy[yi] * x[xi]; });
  return dw;
}

// 5.5 / 5.10: cells of fractional pooling from the sequences.
function cells(seq, size, count, overlapping) {
  const out = [];
  for (let i = 0; i < count; i++) {
    const start = Number(seq[i]);
    const end = Math.min(overlapping ? Number(seq[i + 1]) : Number(seq[i + 1]) - 1, size - 1);
    out.push([start, end]);
  }
  return out;
}

// value [N, H, W, C] -> output [N, OH, OW, C]
export function fractionalAvgPool(shape, value, rowSeq, colSeq, overlapping) {
  const [N, H, W, C] = shape;
  const rows = cells(rowSeq, H, rowSeq.length - 1, overlapping);
  const cols = cells(colSeq, W, colSeq.length - 1, overlapping);
  const out = new Float64Array(N * rows.length * cols.length * C);
  let k = 0;
  for (let n = 0; n < N; n++)
    for (const [r0, r1] of rows)
      for (const [c0, c1] of cols)
        for (let ch = 0; ch < C; ch++, k++) {
          let s = 0;
          for (let i = r0; i <= r1; i++) for (let j = c0; j <= c1; j++) s += value[((n * H + i) * W + j) * C + ch];
          out[k] = s / ((r1 - r0 + 1) * (c1 - c0 + 1));
        }
  return out;
}

// origShape [N, H, W, C]; dy [N, OH, OW, C]
export function fractionalAvgPoolGrad(origShape, dyShape, dy, rowSeq, colSeq, overlapping) {
  const [N, H, W, C] = origShape;
  const [, OH, OW] = dyShape;
  const rows = cells(rowSeq, H, OH, overlapping);
  const cols = cells(colSeq, W, OW, overlapping);
  const dx = new Float64Array(N * H * W * C);
  for (let n = 0; n < N; n++)
    for (let r = 0; r < OH; r++)
      for (let c = 0; c < OW; c++) {
        const [r0, r1] = rows[r];
        const [c0, c1] = cols[c];
        const count = (r1 - r0 + 1) * (c1 - c0 + 1);
        for (let ch = 0; ch < C; ch++) {
          const v = dy[((n * OH + r) * OW + c) * C + ch] / count;
          for (let i = r0; i <= r1; i++) for (let j = c0; j <= c1; j++) dx[((n * H + i) * W + j) * C + ch] += v;
        }
      }
  return dx;
}

// 6.4: x as [rows, C] (NHWC). Returns y, batch mean/var (running), reserve spaces.
export function fusedBatchNorm(x, C, scale, offset, mean, variance, { epsilon = 1e-4, is_training = true, exponential_avg_factor = 1 } = {}) {
  const R = x.length / C;
  const y = new Float64Array(x.length);
  const m = new Float64Array(C), v = new Float64Array(C), runM = new Float64Array(C), runV = new Float64Array(C);
  for (let c = 0; c < C; c++) {
    if (is_training) {
      let s = 0;
      for (let r = 0; r < R; r++) s += x[r * C + c];
      m[c] = s / R;
      let q = 0;
      for (let r = 0; r < R; r++) q += (x[r * C + c] - m[c]) ** 2;
      v[c] = q / R;
      const f = exponential_avg_factor;
      const unbiased = (v[c] * R) / Math.max(R - 1, 1);
      runM[c] = f === 1 ? m[c] : (1 - f) * mean[c] + f * m[c];
      runV[c] = f === 1 ? unbiased : (1 - f) * variance[c] + f * unbiased;
    } else {
      m[c] = mean[c];
      v[c] = variance[c];
      runM[c] = mean[c];
      runV[c] = variance[c];
    }
    const inv = 1 / Math.sqrt(v[c] + epsilon);
    for (let r = 0; r < R; r++) y[r * C + c] = (x[r * C + c] - m[c]) * inv * scale[c] + offset[c];
  }
  return { y, batch_mean: runM, batch_variance: runV, reserve_space_1: m, reserve_space_2: v };
}

// 6.10: dy, x as [rows, C] (NHWC); mu, sigma2 = reserve_space_1/2.
export function fusedBatchNormGrad(dy, x, C, scale, mu, sigma2, { epsilon = 1e-4, is_training = true } = {}) {
  const R = x.length / C;
  const dx = new Float64Array(x.length), dscale = new Float64Array(C), doffset = new Float64Array(C);
  for (let c = 0; c < C; c++) {
    const inv = 1 / Math.sqrt(sigma2[c] + epsilon);
    let sdy = 0, sdyxc = 0;
    for (let r = 0; r < R; r++) {
      sdy += dy[r * C + c];
      sdyxc += dy[r * C + c] * (x[r * C + c] - mu[c]);
    }
    doffset[c] = sdy;
    dscale[c] = sdyxc * inv;
    for (let r = 0; r < R; r++) {
      const i = r * C + c;
      dx[i] = is_training
        ? scale[c] * inv * (dy[i] - sdy / R - (x[i] - mu[c]) * inv * inv * (sdyxc / R))
        : dy[i] * scale[c] * inv;
    }
  }
  return { x_backprop: dx, scale_backprop: dscale, offset_backprop: doffset };
}

// NCHW <-> NHWC data permutations.
export function toNHWC([N, C, H, W], data) {
  const out = new Float64Array(data.length);
  for (let n = 0; n < N; n++) for (let c = 0; c < C; c++) for (let h = 0; h < H; h++) for (let w = 0; w < W; w++)
    out[((n * H + h) * W + w) * C + c] = data[((n * C + c) * H + h) * W + w];
  return out;
}

export function toNCHW([N, H, W, C], data) {
  const out = new Float64Array(data.length);
  for (let n = 0; n < N; n++) for (let c = 0; c < C; c++) for (let h = 0; h < H; h++) for (let w = 0; w < W; w++)
    out[((n * C + c) * H + h) * W + w] = data[((n * H + h) * W + w) * C + c];
  return out;
}
