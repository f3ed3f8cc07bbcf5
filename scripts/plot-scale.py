#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
# Draws docs/scale.md's figures as SVG from ibat-sim's JSON and CSV output, with the Python
# standard library only:
#   docs/scale/sa-busy-default.svg  the SA's work and busy fraction against N, default config
#       (docs/scale/defaults.jsonl, from scripts/scale-defaults.sh; plus the prefetch = "subnet"
#       rows of docs/scale/prefetch.jsonl at sizes defaults.jsonl lacks, drawn hollow: older commits)
#   docs/scale/lid-change-N.svg     SA arrivals per second and longest queue wait over time, SM
#       restart with new LIDs, default config (docs/scale/defaults-lid-change-N.csv), for each N
#       whose CSV exists
# Usage: scripts/plot-scale.py [DATA_DIR]   (default docs/scale; writes there)
import csv
import json
import math
import os
import sys

DATA = os.path.normpath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "docs", "scale"))
COLORS = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b"]
RUNS = ["job-start cold", "boot", "sm-restart --lid-change", "sm-restart, same LIDs", "idle 1 h"]


def esc(text):
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


class Panel:
    """One plot area of an SVG: axes, ticks, polylines and markers in data coordinates."""

    def __init__(self, x0, y0, w, h, xr, yr, xlog=False, ylog=False):
        self.x0, self.y0, self.w, self.h = x0, y0, w, h
        self.xr, self.yr, self.xlog, self.ylog = xr, yr, xlog, ylog
        self.out = []

    def _t(self, v, r, log):
        if log:
            return (math.log10(v) - math.log10(r[0])) / (math.log10(r[1]) - math.log10(r[0]))
        return (v - r[0]) / (r[1] - r[0])

    def px(self, x, y):
        return (self.x0 + self.w * self._t(x, self.xr, self.xlog),
                self.y0 + self.h * (1 - self._t(y, self.yr, self.ylog)))

    def axes(self, xticks, yticks, xlabel, ylabel, title):
        o = self.out
        o.append(f'<rect x="{self.x0}" y="{self.y0}" width="{self.w}" height="{self.h}" fill="none" stroke="#444"/>')
        for v, label in xticks:
            x, _ = self.px(v, self.yr[0])
            o.append(f'<line x1="{x:.1f}" y1="{self.y0}" x2="{x:.1f}" y2="{self.y0 + self.h}" stroke="#ddd"/>')
            o.append(f'<text x="{x:.1f}" y="{self.y0 + self.h + 16}" text-anchor="middle">{esc(label)}</text>')
        for v, label in yticks:
            _, y = self.px(self.xr[0], v)
            o.append(f'<line x1="{self.x0}" y1="{y:.1f}" x2="{self.x0 + self.w}" y2="{y:.1f}" stroke="#ddd"/>')
            o.append(f'<text x="{self.x0 - 6}" y="{y + 4:.1f}" text-anchor="end">{esc(label)}</text>')
        o.append(f'<text x="{self.x0 + self.w / 2}" y="{self.y0 + self.h + 36}" text-anchor="middle">{esc(xlabel)}</text>')
        o.append(f'<text transform="translate({self.x0 - 66},{self.y0 + self.h / 2}) rotate(-90)" '
                 f'text-anchor="middle">{esc(ylabel)}</text>')
        o.append(f'<text x="{self.x0 + self.w / 2}" y="{self.y0 - 10}" text-anchor="middle" '
                 f'font-weight="bold">{esc(title)}</text>')

    def line(self, points, color, dash=None, width=2):
        if len(points) < 2:
            return
        d = " ".join("{:.1f},{:.1f}".format(*self.px(x, y)) for x, y in points)
        extra = f' stroke-dasharray="{dash}"' if dash else ""
        self.out.append(f'<polyline points="{d}" fill="none" stroke="{color}" stroke-width="{width}"{extra}/>')

    def marker(self, x, y, color, hollow=False):
        cx, cy = self.px(x, y)
        fill = "white" if hollow else color
        self.out.append(f'<circle cx="{cx:.1f}" cy="{cy:.1f}" r="4" fill="{fill}" stroke="{color}" stroke-width="1.5"/>')


def svg(width, height, body):
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
            f'font-family="sans-serif" font-size="12">\n<rect width="100%" height="100%" fill="white"/>\n'
            + "\n".join(body) + "\n</svg>\n")


def legend(x, y, items):
    out = []
    for i, (label, color, dash) in enumerate(items):
        yy = y + 16 * i
        extra = f' stroke-dasharray="{dash}"' if dash else ""
        out.append(f'<line x1="{x}" y1="{yy}" x2="{x + 24}" y2="{yy}" stroke="{color}" stroke-width="2"{extra}/>')
        out.append(f'<text x="{x + 30}" y="{yy + 4}">{esc(label)}</text>')
    return out


def load_rows():
    rows = {}  # (run, n) -> (json, hollow)
    own = os.path.join(DATA, "defaults.jsonl")
    if os.path.exists(own):
        for line in open(own):
            if line.strip():
                j = json.loads(line)
                rows[(j["run"], j["nodes"])] = (j, False)
    older = os.path.join(DATA, "prefetch.jsonl")
    if os.path.exists(older):
        for line in open(older):
            if not line.strip():
                continue
            j = json.loads(line)
            if j.get("prefetch") == "subnet" and (j["run"], j["nodes"]) not in rows and j["run"] in RUNS:
                rows[(j["run"], j["nodes"])] = (j, True)
    return rows


def ticks_log(lo, hi, fmt):
    out, d = [], 10 ** math.floor(math.log10(lo))
    while d <= hi:
        for m in (1, 2, 5):
            if lo <= m * d <= hi:
                out.append((m * d, fmt(m * d)))
        d *= 10
    return out


def plot_sa_busy(rows):
    ns = sorted({n for (_, n) in rows})
    if not ns:
        return None
    xr = (min(ns) / 1.3, max(ns) * 1.3)
    work = [j["sa_busy_s"] for (j, _) in rows.values() if j["sa_busy_s"] > 0]
    floor = lambda n: n * (n - 1) * 3.33e-6
    ylo = min(work + [floor(min(ns))]) / 2
    yhi = max(work + [floor(max(ns))]) * 2
    nfmt = lambda v: f"{v:,.0f}"
    left = Panel(90, 80, 370, 300, xr, (ylo, yhi), xlog=True, ylog=True)
    left.axes(ticks_log(xr[0], xr[1], nfmt), ticks_log(ylo, yhi, lambda v: f"{v:g}"), "nodes N",
              "SA work, s (one worker thread)", "The SA's work per event")
    right = Panel(560, 80, 380, 300, xr, (0, 100), xlog=True)
    right.axes(ticks_log(xr[0], xr[1], nfmt), [(v, f"{v} %") for v in range(0, 101, 20)], "nodes N",
               "SA busy over the run", "SA busy fraction")
    items = []
    for i, run in enumerate(RUNS):
        color = COLORS[i % len(COLORS)]
        pts = sorted((n, j, hollow) for (r, n), (j, hollow) in rows.items() if r == run)
        if not pts:
            continue
        w = [(n, j["sa_busy_s"]) for n, j, _ in pts if j["sa_busy_s"] > 0]
        left.line(w, color)
        right.line([(n, 100 * j["sa_busy_fraction"]) for n, j, _ in pts], color)
        for n, j, hollow in pts:
            if j["sa_busy_s"] > 0:
                left.marker(n, j["sa_busy_s"], color, hollow)
            right.marker(n, 100 * j["sa_busy_fraction"], color, hollow)
        items.append((run + ("" if run != "idle 1 h" else " (0 at every N: no SA query)"), color, None))
    left.line([(n, floor(n)) for n in (xr[0] * 1.05, xr[1] / 1.05)], "#000", dash="5,4", width=1)
    items.append(("floor: every path once by GetTables, N(N-1) x 3.33 us", "#000", "5,4"))
    body = ['<text x="500" y="22" text-anchor="middle" font-size="15" font-weight="bold">'
            'ibat-sim, DEFAULT configuration (prefetch = subnet, R = 16, one SA thread)</text>',
            '<text x="500" y="40" text-anchor="middle">filled: docs/scale/defaults.jsonl (scripts/scale-defaults.sh); '
            'hollow: docs/scale/prefetch.jsonl (older commits, docs/scale.md)</text>']
    body += left.out + right.out + legend(90, 440, items)
    return svg(1000, 440 + 16 * len(items) + 20, body)


def plot_lid_change(path, n):
    rows = list(csv.DictReader(open(path)))
    if not rows:
        return None
    t = [float(r["time_s"]) for r in rows]
    qps = [float(r["sa_qps"]) for r in rows]
    wait = [float(r["sa_max_wait_ms"]) for r in rows]
    xr = (0, max(t) + (t[1] - t[0] if len(t) > 1 else 1))
    top = Panel(100, 80, 810, 200, xr, (0, max(qps) * 1.1 or 1))
    step = 10 if xr[1] <= 200 else 60
    xt = [(v, f"{v:g}") for v in range(0, int(xr[1]) + 1, step)]
    top.axes(xt, [(v, f"{v:,.0f}") for v in nice_ticks(max(qps) * 1.1 or 1)], "time, s",
             "SA arrivals / s", "SA arrivals per second (GETs, GetTables, monitor MADs)")
    top.line(list(zip(t, qps)), COLORS[0])
    bottom = Panel(100, 360, 810, 160, xr, (0, max(wait) * 1.1 or 1))
    bottom.axes(xt, [(v, f"{v:,.0f}") for v in nice_ticks(max(wait) * 1.1 or 1)], "time, s",
                "ms", "Longest wait in the SA's queue per bucket")
    bottom.line(list(zip(t, wait)), COLORS[1])
    body = [f'<text x="500" y="22" text-anchor="middle" font-size="15" font-weight="bold">'
            f'SM restart with new LIDs, N = {n:,}, DEFAULT configuration (ibat-sim)</text>',
            '<text x="500" y="40" text-anchor="middle">SM restart at 20 s, SA down 2 s; '
            f'docs/scale/defaults-lid-change-{n}.csv (scripts/scale-defaults.sh)</text>']
    return svg(1000, 560, body + top.out + bottom.out)


def nice_ticks(hi):
    step = 10 ** math.floor(math.log10(hi))
    for m in (1, 2, 5, 10):
        if hi / (m * step) <= 6:
            step *= m
            break
    return [i * step for i in range(int(hi / step) + 1)]


def main():
    wrote = []
    out = plot_sa_busy(load_rows())
    if out:
        open(os.path.join(DATA, "sa-busy-default.svg"), "w").write(out)
        wrote.append("sa-busy-default.svg")
    for name in sorted(os.listdir(DATA)):
        if name.startswith("defaults-lid-change-") and name.endswith(".csv"):
            n = int(name[len("defaults-lid-change-"):-4])
            out = plot_lid_change(os.path.join(DATA, name), n)
            if out:
                open(os.path.join(DATA, f"lid-change-{n}.svg"), "w").write(out)
                wrote.append(f"lid-change-{n}.svg")
    print("plot-scale: wrote " + (", ".join(wrote) if wrote else "nothing (no data)") + " in " + DATA)


if __name__ == "__main__":
    main()
