// Line charts on a canvas, no chart library: axes with a few ticks, one polyline (or dots)
// per series, a legend. plot(canvas, { title, xLabel, yMin, yMax, xMax, series: [{ label,
// color, points: [[x, y], ...], dots }] }). yMin / yMax default to the data's range.
const PAD = { left: 46, right: 10, top: 24, bottom: 30 };

function ticks(lo, hi, n) {
  const span = hi - lo || 1;
  const raw = span / n, mag = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((m) => m * mag).find((s) => s >= raw);
  const out = [];
  for (let v = Math.ceil(lo / step) * step; v <= hi + step * 1e-9; v += step) out.push(Number(v.toPrecision(12)));
  return out;
}

export function plot(canvas, { title, xLabel = '', yMin, yMax, xMax, series }) {
  const ctx = canvas.getContext('2d');
  const { width: W, height: H } = canvas;
  ctx.clearRect(0, 0, W, H);
  ctx.fillStyle = '#fff';
  ctx.fillRect(0, 0, W, H);
  const all = series.flatMap((s) => s.points);
  const x1 = Math.max(xMax ?? 0, ...all.map((p) => p[0]), 1);
  let y0 = yMin ?? Math.min(...all.map((p) => p[1]));
  let y1 = yMax ?? Math.max(...all.map((p) => p[1]));
  if (!Number.isFinite(y0) || !Number.isFinite(y1)) [y0, y1] = [0, 1];
  if (y1 <= y0) y1 = y0 + 1;
  const px = (x) => PAD.left + (x / x1) * (W - PAD.left - PAD.right);
  const py = (y) => H - PAD.bottom - ((Math.min(Math.max(y, y0), y1) - y0) / (y1 - y0)) * (H - PAD.top - PAD.bottom);

  ctx.font = '11px system-ui, sans-serif';
  ctx.strokeStyle = '#e6e6e6';
  ctx.fillStyle = '#555';
  ctx.lineWidth = 1;
  ctx.textAlign = 'right';
  for (const t of ticks(y0, y1, 4)) {
    ctx.beginPath(); ctx.moveTo(PAD.left, py(t)); ctx.lineTo(W - PAD.right, py(t)); ctx.stroke();
    ctx.fillText(String(t), PAD.left - 4, py(t) + 4);
  }
  ctx.textAlign = 'center';
  for (const t of ticks(0, x1, 5)) ctx.fillText(String(t), px(t), H - PAD.bottom + 14);
  ctx.fillText(xLabel, (PAD.left + W - PAD.right) / 2, H - 3);
  ctx.strokeStyle = '#999';
  ctx.strokeRect(PAD.left, PAD.top, W - PAD.left - PAD.right, H - PAD.top - PAD.bottom);
  ctx.textAlign = 'left';
  ctx.fillStyle = '#222';
  ctx.font = '600 12px system-ui, sans-serif';
  ctx.fillText(title, PAD.left, 15);

  let legendX = W - PAD.right;
  ctx.font = '11px system-ui, sans-serif';
  for (const s of [...series].reverse()) {
    const w = ctx.measureText(s.label).width;
    legendX -= w + 22;
    ctx.fillStyle = s.color;
    ctx.fillRect(legendX, 8, 12, 3);
    ctx.fillStyle = '#333';
    ctx.fillText(s.label, legendX + 15, 13);
  }
  for (const s of series) {
    ctx.strokeStyle = ctx.fillStyle = s.color;
    ctx.lineWidth = s.width ?? 1.5;
    if (s.dots) {
      for (const [x, y] of s.points) { ctx.beginPath(); ctx.arc(px(x), py(y), 3, 0, 2 * Math.PI); ctx.fill(); }
    }
    if (s.points.length > 1 || !s.dots) {
      ctx.beginPath();
      s.points.forEach(([x, y], i) => (i ? ctx.lineTo(px(x), py(y)) : ctx.moveTo(px(x), py(y))));
      ctx.stroke();
    }
  }
}
