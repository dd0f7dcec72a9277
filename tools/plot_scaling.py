#!/usr/bin/env python3
"""Draws bench/scaling.sh's jobs.csv and size.csv as one SVG: audit wall time against worker processes, and
against the synthesized tensors' size, with the ideal 1/j line for the first. Plain SVG, no plotting library,
so that it runs wherever python3 does.

usage: tools/plot_scaling.py OUT.svg TITLE JOBS.csv SIZE.csv"""
import csv
import math
import sys


def rows(path):
    with open(path) as f:
        return [r for r in csv.DictReader(f) if r.get("wall_s")]


def panel(x0, title, xs, ys, xlabel, ideal=None, log_x=True):
    w, h, left, bottom = 380, 260, 50, 40
    px = lambda x: x0 + left + (math.log(x) - math.log(xs[0])) / max(1e-9, math.log(xs[-1]) - math.log(xs[0])) * (w - left - 10) if log_x else 0
    top = max(ys + (ideal or [])) * 1.1 or 1
    py = lambda y: 20 + (h - bottom - 20) * (1 - y / top)
    out = [f'<text x="{x0 + w / 2}" y="14" text-anchor="middle" font-size="13">{title}</text>',
           f'<line x1="{x0 + left}" y1="{py(0)}" x2="{x0 + w - 10}" y2="{py(0)}" stroke="black"/>',
           f'<line x1="{x0 + left}" y1="{py(0)}" x2="{x0 + left}" y2="20" stroke="black"/>',
           f'<text x="{x0 + w / 2}" y="{h - 5}" text-anchor="middle" font-size="11">{xlabel}</text>',
           f'<text x="{x0 + 12}" y="{h / 2}" font-size="11" transform="rotate(-90 {x0 + 12} {h / 2})" '
           f'text-anchor="middle">wall s</text>']
    for frac in (0.25, 0.5, 0.75, 1.0):
        y = top / 1.1 * frac
        out.append(f'<text x="{x0 + left - 4}" y="{py(y) + 4}" text-anchor="end" font-size="10">{y:.0f}</text>')
    for x in xs:
        out.append(f'<text x="{px(x)}" y="{py(0) + 14}" text-anchor="middle" font-size="10">{x:g}</text>')
    if ideal:
        pts = " ".join(f"{px(x)},{py(y)}" for x, y in zip(xs, ideal))
        out.append(f'<polyline points="{pts}" fill="none" stroke="gray" stroke-dasharray="4 3"/>')
    pts = " ".join(f"{px(x)},{py(y)}" for x, y in zip(xs, ys))
    out.append(f'<polyline points="{pts}" fill="none" stroke="#1f77b4" stroke-width="2"/>')
    out += [f'<circle cx="{px(x)}" cy="{py(y)}" r="3" fill="#1f77b4"/>' for x, y in zip(xs, ys)]
    return out


def main(argv):
    if len(argv) != 4:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    svg, title, jobs_csv, size_csv = argv
    jobs, sizes = rows(jobs_csv), rows(size_csv)
    body = [f'<text x="390" y="290" text-anchor="middle" font-size="11">{title}</text>']
    if jobs:
        xs = [float(r["jobs"]) for r in jobs]
        ys = [float(r["wall_s"]) for r in jobs]
        body += panel(0, "audit time against -j (dashed: ideal)", xs, ys, "worker processes",
                      ideal=[ys[0] * xs[0] / x for x in xs])
    if sizes:
        xs = [float(r["size"]) for r in sizes]
        body += panel(400, "audit time against tensor size", xs, [float(r["wall_s"]) for r in sizes],
                      "synthesized tensors: N x N")
    with open(svg, "w") as f:
        f.write('<svg xmlns="http://www.w3.org/2000/svg" width="790" height="300" font-family="sans-serif">\n'
                '<rect width="100%" height="100%" fill="white"/>\n' + "\n".join(body) + "\n</svg>\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
