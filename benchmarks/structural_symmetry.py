# SPDX-License-Identifier: GPL-2.0-only
"""The counter tree at 8 CPUs under its declared structural symmetry (``Interchangeable``), issue 26's target:
``percpu_counter_tree`` and ``counter_tree_read_in_flight`` at ncpus=8 tasks=1 ops=2 large=0 migrations=0,
each design, every property decided in under 5 minutes.

    python benchmarks/structural_symmetry.py [--out FILE] [--timeout S]

Each point runs in its own process on the compiled engine (``explore()``, symmetry on), with a
per-exploration timeout; wall and CPU time include start-up and the C build. The machine's load
(``os.getloadavg``) is printed beside each run: other jobs share its two cores.
Figures are measured, not asserted: tests pin counts and verdicts at small points.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import sys
from pathlib import Path

from measure import ROOT, run_child

SPECS = ("percpu_counter_tree", "counter_tree_read_in_flight")
DESIGNS = ("latest", "noskip", "v6")
POINT = {"ncpus": 8, "tasks": 1, "ops": 2, "large": 0, "migrations": 0}


def child(arg: str) -> None:
    sys.path.insert(0, str(ROOT))
    from checker.explore import explore
    from checker.language.compile import Model
    from checker.language.model import resolve_params
    from checker.loader import builtin_specs
    from checker.specs.percpu_counter_tree import DESIGN

    name, design, timeout = json.loads(arg)
    cls = builtin_specs()[name]
    m = Model(cls, resolve_params(cls, {**POINT, "design": getattr(DESIGN, design)}))
    r = explore(m, symmetry=True, engine="compiled", timeout=timeout)
    print(json.dumps({"engine": r.engine, "states": r.states, "transitions": r.transitions, "depth": r.depth,
                      "complete": r.complete, "order": m.symmetry.structure.order,
                      "verdicts": {n: o.verdict for n, o in r.outcomes.items()}}))


def run(name: str, design: str, timeout: float) -> dict:
    return run_child(__file__, [name, design, timeout])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", help="also write the table to this file")
    ap.add_argument("--timeout", type=float, default=600.0, help="per exploration (default 600 s)")
    ap.add_argument("--only", help="SPEC:DESIGN,... (default: every spec and design)")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        child(args.child)
        return
    lines = [f"# {platform.node()} {platform.machine()}, {os.cpu_count()} cores, python {platform.python_version()}",
             f"# point: {' '.join(f'{k}={v}' for k, v in POINT.items())}; compiled engine, structural symmetry",
             "# spec                          design   order  states       transitions   depth  wall s  cpu s  "
             "peak MB  load1  verdicts"]
    print("\n".join(lines), flush=True)
    runs = [tuple(x.split(":")) for x in args.only.split(",")] if args.only else \
        [(name, design) for name in SPECS for design in DESIGNS]
    for name, design in runs:
        if True:
            r = run(name, design, args.timeout)
            counts: dict[str, int] = {}
            for v in r["verdicts"].values():
                counts[v] = counts.get(v, 0) + 1
            shown = ", ".join(f"{k} {n}" for k, n in sorted(counts.items()))
            if "violated" in counts:
                shown += " (" + ", ".join(k for k, v in r["verdicts"].items() if v == "violated") + ")"
            line = (f"{name:31s} {design:8s} {r['order']:5d}  {r['states']:<12,d} {r['transitions']:<13,d} "
                    f"{r['depth']:5d}  {r['wall']:6.1f}  {r['cpu']:5.1f}  {r['peak_mb']:7.0f}  {r['load']:5.2f}  "
                    f"{shown}{'' if r['complete'] else ' [incomplete]'}")
            lines.append(line)
            print(line, flush=True)
    if args.out:
        Path(args.out).write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
