// The plot of train.mjs as a standalone SVG (no plotting library): per model, one row per
// configuration with the step time on a log scale (left) and where the step goes as shares
// of it (right: gradrt ops, copies + glue, tfjs kernels, other).
const PARTS = [['gradrtOps', 'gradrt ops', '#1f4fb4'], ['copies', 'copies + glue', '#8fb3f0'], ['tfjs', 'tfjs kernels', '#e08a2c'], ['other', 'other (layers JS, optimizer, readback)', '#bbbbbb']];
const esc = (s) => String(s).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

export function svgBars(rows, modelLabels) {
  const W = 940, rowH = 24, labelW = 170, left0 = labelW + 10, left1 = 520, right0 = 600, right1 = W - 20;
  const models = [...new Set(rows.map((r) => r.model))];
  const lo = 10 ** Math.floor(Math.log10(Math.min(...rows.map((r) => r.step))));
  const max = Math.max(...rows.map((r) => r.step)), decade = 10 ** Math.floor(Math.log10(max));
  const hi = [1, 2, 5, 10].map((m) => m * decade).find((v) => v >= max);
  const lx = (ms) => left0 + ((Math.log10(ms) - Math.log10(lo)) / (Math.log10(hi) - Math.log10(lo))) * (left1 - left0);
  const out = [];
  let y = 50;
  out.push(`<text x="${left0}" y="20" font-weight="600">ms per training step (trainOnBatch, batch 32), log scale</text>`);
  out.push(`<text x="${right0}" y="20" font-weight="600">where the step goes</text>`);
  PARTS.forEach(([, label, color], i) => {
    const x = right0 + (i % 2) * 130, yy = 28 + Math.floor(i / 2) * 12;
    out.push(`<rect x="${x}" y="${yy}" width="10" height="8" fill="${color}"/><text x="${x + 14}" y="${yy + 8}" font-size="10">${esc(label)}</text>`);
  });
  y += 10;
  for (const model of models) {
    const mine = rows.filter((r) => r.model === model);
    out.push(`<text x="10" y="${y}" font-weight="600">${esc(modelLabels[model] ?? model)}</text>`);
    y += 8;
    const top = y;
    for (const r of mine) {
      out.push(`<text x="${labelW}" y="${y + 16}" text-anchor="end">${esc(r.config)}</text>`);
      out.push(`<rect x="${left0}" y="${y + 4}" width="${Math.max(1, lx(r.step) - left0).toFixed(1)}" height="${rowH - 8}" fill="#4a7bd0"/>`);
      out.push(`<text x="${(lx(r.step) + 4).toFixed(1)}" y="${y + 16}" font-size="11">${r.step < 10 ? `${r.step.toFixed(2)} ms` : r.step < 10000 ? `${r.step.toFixed(0)} ms` : `${(r.step / 1000).toFixed(1)} s`}${r.speedup > 1.05 ? ` (${r.speedup.toFixed(0)}x)` : ''}</text>`);
      let x = right0;
      const total = PARTS.reduce((a, [k]) => a + (r[k] || 0), 0) || 1;
      for (const [k, label, color] of PARTS) {
        const w = ((r[k] || 0) / total) * (right1 - right0);
        if (w > 0) out.push(`<rect x="${x.toFixed(1)}" y="${y + 4}" width="${w.toFixed(1)}" height="${rowH - 8}" fill="${color}"><title>${esc(label)}: ${(r[k] || 0).toFixed(2)} ms</title></rect>`);
        if (w > 26) out.push(`<text x="${(x + w / 2).toFixed(1)}" y="${y + 15}" font-size="9" text-anchor="middle" fill="${k === 'gradrtOps' ? '#fff' : '#222'}">${Math.round((100 * (r[k] || 0)) / total)}%</text>`);
        x += w;
      }
      y += rowH;
    }
    for (let t = lo; t <= hi; t *= 10) {
      out.push(`<line x1="${lx(t)}" x2="${lx(t)}" y1="${top}" y2="${y}" stroke="#ddd"/><text x="${lx(t)}" y="${y + 12}" font-size="10" text-anchor="middle">${t >= 1 ? t : t.toPrecision(1)}</text>`);
    }
    y += 34;
  }
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${y}" font-family="sans-serif" font-size="12">\n<rect width="100%" height="100%" fill="#fff"/>\n${out.join('\n')}\n</svg>\n`;
}
