#!/usr/bin/env python3
"""Bar chart (SVG, no dependencies) of gradrt_bench --csv output: gradrt / oneDNN speed
ratio per shape, one bar per thread count. Usage: plot.py bench.csv out.svg"""
import csv
import sys


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    rows = list(csv.DictReader(open(sys.argv[1])))
    threads = sorted({int(r["threads"]) for r in rows})
    keys = []
    for r in rows:
        k = (r["op"], r["shape"], r["batch"])
        if k not in keys:
            keys.append(k)
    ratio = {(r["op"], r["shape"], r["batch"], int(r["threads"])): float(r["ratio"]) for r in rows}
    colors = ["#4e79a7", "#f28e2b", "#59a14f", "#e15759"]
    bar, gap, left, top, height = 12, 10, 330, 40, 360
    group_h = bar * len(threads) + gap
    width = left + height + 80
    total_h = top + group_h * len(keys) + 60
    vmax = max(2.0, max(ratio.values()) * 1.05)
    x = lambda v: left + v / vmax * height
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{total_h}" font-family="sans-serif" font-size="11">',
           f'<text x="{left}" y="20" font-size="13">gradrt cpu / oneDNN speed (&gt; 1: gradrt faster)</text>']
    for i, k in enumerate(keys):
        y0 = top + i * group_h
        label = f"{k[0]} {k[1]} n={k[2]}"
        out.append(f'<text x="{left - 6}" y="{y0 + group_h / 2}" text-anchor="end">{label}</text>')
        for j, t in enumerate(threads):
            v = ratio.get((k[0], k[1], k[2], t))
            if v is None:
                continue
            y = y0 + j * bar
            out.append(f'<rect x="{left}" y="{y}" width="{x(v) - left:.1f}" height="{bar - 2}" fill="{colors[j % 4]}"/>')
            out.append(f'<text x="{x(v) + 3:.1f}" y="{y + bar - 3}">{v:.2f}</text>')
    out.append(f'<line x1="{x(1):.1f}" y1="{top - 5}" x2="{x(1):.1f}" y2="{top + group_h * len(keys)}" stroke="black" stroke-dasharray="4 3"/>')
    ly = top + group_h * len(keys) + 20
    for j, t in enumerate(threads):
        out.append(f'<rect x="{left + j * 110}" y="{ly}" width="12" height="10" fill="{colors[j % 4]}"/>')
        out.append(f'<text x="{left + j * 110 + 16}" y="{ly + 9}">{t} thread{"s" if t > 1 else ""}</text>')
    out.append("</svg>")
    open(sys.argv[2], "w").write("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
