# SPDX-License-Identifier: GPL-2.0-only
"""stack_cache per memory model (issue 20): distinct states at the default sweep's four points.

    python benchmarks/stack_cache_weak.py [--out FILE]

The points are ``python -m checker verify stack_cache``'s (2 CPUs, 2 tasks, one migration, failures on;
``nr_cached`` 1 and 2, ``hotplug`` 0 and 1). Columns: sc with CPU symmetry (what ``verify`` reports), sc
without it (tso and lkmm turn symmetry off, so this is their baseline), tso with store buffers of 1 on the
compiled engine, lkmm with histories of 2 (interpreted: lkmm has no compiled form). Each cell: states, the
factor over sc without symmetry, seconds (compiled: including generating and compiling the C). Every
property holds in every cell (asserted: a figure from a run with a failing property is no baseline).
Figures are measured, not asserted: tests pin verdicts and counts, never times.
Since issue 28 ``stack_cache`` is the process-function port (fewer states: it resets the loop index the
hand-written pc machine kept); stack_cache_weak.txt was measured on the port (2026-12-06, load about 1.3).
"""
from __future__ import annotations

import argparse
import platform
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from checker.explore import explore  # noqa: E402
from checker.ordering.declare import MEMORY  # noqa: E402
from checker.specs.stack_cache import StackCache  # noqa: E402

POINTS = [(nr, hp) for nr in (1, 2) for hp in (0, 1)]
RUNS = [("sc (symmetry)", {"memory": MEMORY.sc}, True, "auto"), ("sc", {"memory": MEMORY.sc}, False, "auto"),
        ("tso d=1 compiled", {"memory": MEMORY.tso, "sb_depth": 1}, False, "compiled"),
        ("lkmm h=2", {"memory": MEMORY.lkmm, "lkmm_history": 2}, False, "interpreted")]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "stack_cache_weak.txt"))
    args = ap.parse_args()
    lines = [f"# stack_cache_weak: distinct states per memory model; python {platform.python_version()}, "
             f"{platform.machine()}", ""]
    head = f"{'point':<24}" + "".join(f"{name:>26}" for name, *_ in RUNS)
    lines += [head, "-" * len(head)]
    for nr, hp in POINTS:
        row = f"{f'nr_cached={nr} hotplug={hp}':<24}"
        base = None
        for name, params, symmetry, engine in RUNS:
            t0 = time.perf_counter()
            r = explore(StackCache(nr_cached=nr, hotplug=hp, **params), symmetry=symmetry, engine=engine)
            dt = time.perf_counter() - t0
            assert r.complete and set(r.verdicts.values()) == {"holds"}, (nr, hp, name, r.verdicts)
            if not symmetry:
                base = base or r.states
            cell = f"{r.states:,} x{r.states / base:.1f} {dt:.1f}s" if base else f"{r.states:,} {dt:.1f}s"
            row += f"{cell:>26}"
        lines.append(row)
        print(row, flush=True)
    lines += ["", "cells: distinct states, factor over sc without symmetry, seconds"]
    Path(args.out).write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
