#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Draw the throughput of each flow over time, from sroce_cc_flows
timelines, as an SVG line chart: one panel per timeline, one above the
other, on the same scales (the cc group's fair_two with congestion control
on and off, by default).

usage: cc-plot.py CSV [CSV...] [-o OUT.svg] [--label TEXT ...] [--title TEXT]

Each CSV is what sroce_cc_flows -o writes: a header "time_s,flow,bytes",
then one line per flow and interval: the interval's end in seconds, the
flow, the bytes delivered (and checked) in the interval.  Each panel is
titled with its label (default: the file's name), the flows' mean rates
and Jain's fairness index over the last half of the run, as
sroce_cc_flows computes them.  Python's standard library only.
"""

import argparse
import csv
import os
import sys
from xml.sax.saxutils import escape

COLOURS = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b",
           "#e377c2", "#17becf", "#7f7f7f", "#bcbd22", "#393b79", "#637939",
           "#8c6d31", "#843c39", "#7b4173", "#3182bd"]

WIDTH = 860
PANEL_H = 280
LEFT, RIGHT, TOP, BOTTOM = 70, 150, 40, 45


def load(path):
    """{flow: [(t, mbps), ...]} and the interval, from one timeline."""
    rows = []
    with open(path, newline="") as f:
        rd = csv.reader(f)
        head = next(rd, None)
        if head != ["time_s", "flow", "bytes"]:
            sys.exit(f"{path}: not a sroce_cc_flows timeline (header {head})")
        for r in rd:
            if len(r) != 3:
                sys.exit(f"{path}: bad line {r}")
            rows.append((float(r[0]), int(r[1]), int(r[2])))
    if not rows:
        sys.exit(f"{path}: no data")
    times = sorted({t for t, _, _ in rows})
    step = times[0] if len(times) == 1 else times[1] - times[0]
    flows = {}
    for t, fl, b in rows:
        flows.setdefault(fl, []).append((t, b * 8 / step / 1e6))
    for pts in flows.values():
        pts.sort()
    return flows, step


def summary(flows):
    """Each flow's mean Mb/s, and Jain's index over the last half."""
    n = len(next(iter(flows.values())))
    half = {fl: sum(v for _, v in pts[n // 2:]) for fl, pts in flows.items()}
    s, s2 = sum(half.values()), sum(x * x for x in half.values())
    jain = s * s / (len(half) * s2) if s2 else 0.0
    means = {fl: sum(v for _, v in pts) / len(pts) for fl, pts in flows.items()}
    return means, jain


def nice_step(span, ticks=5):
    """A round tick step that cuts span into about ticks pieces."""
    raw = span / ticks if span > 0 else 1
    mag = 10 ** len(str(int(raw))) / 10 if raw >= 1 else 1
    while mag > raw:
        mag /= 10
    for m in (1, 2, 2.5, 5, 10):
        if m * mag >= raw:
            return m * mag
    return 10 * mag


def fmt(v):
    return f"{v:g}"


def panel(out, y0, label, flows, tmax, ymax):
    """Draw one panel whose top is at y0."""
    x_left, x_right = LEFT, WIDTH - RIGHT
    y_top, y_bot = y0 + TOP, y0 + PANEL_H - BOTTOM
    sx = (x_right - x_left) / tmax
    sy = (y_bot - y_top) / ymax

    def px(t, v):
        return x_left + t * sx, y_bot - v * sy

    means, jain = summary(flows)
    title = f"{label}: " + ", ".join(
        f"flow {fl} {means[fl]:.1f}" for fl in sorted(means)) + \
        f" Mb/s mean; Jain's index {jain:.3f} over the last half"
    out.append(f'<text x="{x_left}" y="{y0 + 24}" font-size="14">{escape(title)}</text>')
    ystep = nice_step(ymax)
    v = 0.0
    while v <= ymax + 1e-9:
        _, y = px(0, v)
        out.append(f'<line x1="{x_left}" y1="{y:.1f}" x2="{x_right}" y2="{y:.1f}" '
                   'stroke="#ddd"/>')
        out.append(f'<text x="{x_left - 6}" y="{y + 4:.1f}" font-size="11" '
                   f'text-anchor="end">{fmt(v)}</text>')
        v += ystep
    tstep = nice_step(tmax, 10)
    t = 0.0
    while t <= tmax + 1e-9:
        x, _ = px(t, 0)
        out.append(f'<line x1="{x:.1f}" y1="{y_bot}" x2="{x:.1f}" y2="{y_bot + 4}" '
                   'stroke="#000"/>')
        out.append(f'<text x="{x:.1f}" y="{y_bot + 17}" font-size="11" '
                   f'text-anchor="middle">{fmt(t)}</text>')
        t += tstep
    out.append(f'<rect x="{x_left}" y="{y_top}" width="{x_right - x_left}" '
               f'height="{y_bot - y_top}" fill="none" stroke="#000"/>')
    out.append(f'<text x="{(x_left + x_right) / 2}" y="{y_bot + 35}" font-size="12" '
               'text-anchor="middle">time (s)</text>')
    out.append(f'<text x="18" y="{(y_top + y_bot) / 2}" font-size="12" text-anchor="middle" '
               f'transform="rotate(-90 18 {(y_top + y_bot) / 2})">Mb/s delivered</text>')
    # The flows' sum: what crossed the bottleneck.
    total = {}
    for pts in flows.values():
        for tt, vv in pts:
            total[tt] = total.get(tt, 0) + vv
    series = [("all flows", "#888", "5,4", sorted(total.items()))] if len(flows) > 1 else []
    series += [(f"flow {fl}", COLOURS[i % len(COLOURS)], None, flows[fl])
               for i, fl in enumerate(sorted(flows))]
    for i, (name, colour, dash, pts) in enumerate(series):
        path = " ".join(f"{x:.1f},{y:.1f}" for x, y in (px(tt, vv) for tt, vv in pts))
        extra = f' stroke-dasharray="{dash}"' if dash else ""
        out.append(f'<polyline points="{path}" fill="none" stroke="{colour}" '
                   f'stroke-width="1.6"{extra}/>')
        ly = y_top + 12 + 18 * i
        out.append(f'<line x1="{x_right + 12}" y1="{ly}" x2="{x_right + 36}" y2="{ly}" '
                   f'stroke="{colour}" stroke-width="2"{extra}/>')
        out.append(f'<text x="{x_right + 42}" y="{ly + 4}" font-size="12">{escape(name)}</text>')


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("csv", nargs="+", help="sroce_cc_flows -o timelines")
    ap.add_argument("-o", "--output", default="-", help="the SVG file (default: stdout)")
    ap.add_argument("--label", action="append", default=[],
                    help="a panel's label, once per CSV (default: the file name)")
    ap.add_argument("--title", default="Throughput per flow through the bottleneck")
    args = ap.parse_args()
    if args.label and len(args.label) != len(args.csv):
        sys.exit("--label: give one per CSV, or none")
    data = [load(p) for p in args.csv]
    tmax = max(t for flows, _ in data for pts in flows.values() for t, _ in pts)
    ymax = max(v for flows, _ in data for pts in flows.values() for _, v in pts)
    ymax = max(ymax, max(sum(v for _, v in pts) / len(pts)
                         for flows, _ in data for pts in flows.values()))
    # Room for the flows' sum, drawn when there are several.
    for flows, _ in data:
        if len(flows) > 1:
            tot = {}
            for pts in flows.values():
                for t, v in pts:
                    tot[t] = tot.get(t, 0) + v
            ymax = max(ymax, max(tot.values()))
    ymax = ymax * 1.05 or 1.0
    step = nice_step(ymax)
    ymax = step * -(-ymax // step)
    height = 40 + PANEL_H * len(data)
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" '
           f'viewBox="0 0 {WIDTH} {height}" font-family="sans-serif">',
           f'<rect width="{WIDTH}" height="{height}" fill="#fff"/>',
           f'<text x="{WIDTH / 2}" y="26" font-size="16" text-anchor="middle">'
           f'{escape(args.title)}</text>']
    for i, (flows, _) in enumerate(data):
        label = args.label[i] if args.label else os.path.basename(args.csv[i])
        panel(out, 40 + PANEL_H * i, label, flows, tmax, ymax)
    out.append("</svg>")
    svg = "\n".join(out) + "\n"
    if args.output == "-":
        sys.stdout.write(svg)
    else:
        with open(args.output, "w") as f:
            f.write(svg)


if __name__ == "__main__":
    main()
