#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
"""Checks that every ibat_* metric name a monitoring file uses is one `ibat stats --prometheus`
emits. The names emitted: the quoted "ibat_..." names and "# TYPE ibat_..." lines of the renderer
(src/cli/render.cpp) and of packaging/ibat-textfile (its timestamp series).
Files: a Grafana dashboard (.json: must parse; every panel but a row has targets, and every
target's expr, like every templating query, names at least one ibat_ series) or Prometheus rules
(.yml: every expr). Prints each unknown name with where it is used; exit 1 if any, 2 on bad input.
  usage: metric_names.py RENDER_CPP TEXTFILE_SCRIPT FILE...
"""
import json
import re
import sys

NAME = re.compile(r"(?<![A-Za-z0-9_:])ibat_[a-z0-9_]+")


def emitted(render_cpp, textfile):
    names = set()
    for path in (render_cpp, textfile):
        text = open(path, encoding="utf-8").read()
        names |= set(re.findall(r'"(ibat_[a-z0-9_]+)"', text))
        names |= set(re.findall(r"# TYPE (ibat_[a-z0-9_]+) ", text))
    return names


def dashboard_exprs(path, problems):
    """(where, expression) of every target and templating query; layout problems appended."""
    try:
        doc = json.load(open(path, encoding="utf-8"))
    except ValueError as e:
        raise SystemExit(f"{path}: not valid JSON: {e}")
    out = []
    panels = list(doc.get("panels", []))
    for p in list(panels):
        panels += p.get("panels", [])  # a collapsed row's panels
    if not panels:
        problems.append(f"{path}: no panels")
    for p in panels:
        if p.get("type") == "row":
            continue
        where = f"{path}: panel {p.get('id')} '{p.get('title')}'"
        targets = p.get("targets") or []
        if not targets:
            problems.append(f"{where}: no targets")
        for t in targets:
            out.append((f"{where} target {t.get('refId')}", t.get("expr", "")))
    for v in doc.get("templating", {}).get("list", []):
        if v.get("type") != "query":
            continue
        q = v.get("query")
        q = q.get("query", "") if isinstance(q, dict) else (q or "")
        out.append((f"{path}: variable ${v.get('name')}", q))
    return out


def rules_exprs(path):
    """(where, expression) of every expr of a rule file; PyYAML if present, else the lines."""
    text = open(path, encoding="utf-8").read()
    try:
        import yaml
    except ImportError:
        yaml = None
    if yaml is None:
        body = "\n".join(l for l in text.splitlines() if not l.lstrip().startswith("#"))
        return [(path, body)]
    doc = yaml.safe_load(text)
    return [(f"{path}: {r.get('alert') or r.get('record')}", r["expr"])
            for g in doc["groups"] for r in g["rules"]]


def main(argv):
    if len(argv) < 4:
        print(__doc__.strip().splitlines()[-1].strip(), file=sys.stderr)
        return 2
    known = emitted(argv[1], argv[2])
    if len(known) < 10:
        print(f"found only {len(known)} metric names in {argv[1]} and {argv[2]}: is the renderer still there?",
              file=sys.stderr)
        return 2
    problems = []
    checked = 0
    for path in argv[3:]:
        exprs = dashboard_exprs(path, problems) if path.endswith(".json") else rules_exprs(path)
        for where, expr in exprs:
            used = NAME.findall(expr)
            if not used:
                problems.append(f"{where}: names no ibat_ series: {expr!r}")
            for name in used:
                checked += 1
                if name not in known:
                    problems.append(f"{where}: {name} is not a series of ibat stats --prometheus")
    for p in problems:
        print(p, file=sys.stderr)
    if problems:
        return 1
    print(f"{checked} metric name uses in {len(argv) - 3} file(s), all among the {len(known)} names ibat emits")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
