"""State-space growth per memory model (issue 20): distinct states under sc, tso and lkmm.

    python benchmarks/weak_memory_growth.py [--out FILE]

Each spec is explored exhaustively under ``--memory sc``, ``tso`` (store
buffers of 1 and 2 entries; depth 2 also on the compiled engine, whose
seconds include generating and compiling the C, cached after the first
run) and ``lkmm`` (histories of 2 and 3 stores per location); each cell is
distinct states, the factor over sc and the seconds. Symmetry reduction is
off in every column (tso and lkmm turn it off). The specs are the litmus
shapes of tests/test_weak_memory.py and its small counters (an annotated
eager-style counter, a lock-protected plain counter, a cmpxchg race).
Figures are measured, not asserted: tests pin verdicts, never times.
"""
from __future__ import annotations

import argparse
import platform
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from checker.explore import explore  # noqa: E402
from checker.ordering.declare import MEMORY  # noqa: E402
import test_weak_memory as t  # noqa: E402

SPECS = [("SB", t.SB), ("SB+mbs", t.SB_MB), ("MP", t.MP), ("MP+wmb+rmb", t.MP_WMB_RMB), ("IRIW", t.IRIW),
         ("WRC+rel+acq", t.WRC_REL), ("2+2W+wmbs", t.TWO_TWO_W), ("counter (2 cpus)", t.Annotated),
         ("locked counter", t.Locked), ("cmpxchg race", t.Cas)]
RUNS = [("sc", {"memory": MEMORY.sc}), ("tso d=1", {"memory": MEMORY.tso, "sb_depth": 1}),
        ("tso d=2", {"memory": MEMORY.tso, "sb_depth": 2}),
        ("tso d=2 compiled", {"memory": MEMORY.tso, "sb_depth": 2, "engine": "compiled"}), ("lkmm h=2", {"memory": MEMORY.lkmm, "lkmm_history": 2}),
        ("lkmm h=3", {"memory": MEMORY.lkmm, "lkmm_history": 3})]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "weak_memory_growth.txt"))
    args = ap.parse_args()
    lines = [f"# weak_memory_growth: distinct states per memory model; python {platform.python_version()}, "
             f"{platform.machine()}", ""]
    head = f"{'spec':<18}" + "".join(f"{name:>24}" for name, _ in RUNS)
    lines += [head, "-" * len(head)]
    for label, cls in SPECS:
        row = f"{label:<18}"
        base = None
        for name, params in RUNS:
            t0 = time.perf_counter()
            params = dict(params)
            engine = params.pop("engine", "interpreted")
            r = explore(cls(**params), symmetry=False, engine=engine)
            dt = time.perf_counter() - t0
            assert r.complete, (label, name)
            base = base or r.states
            cell = f"{r.states:,} x{r.states / base:.1f} {dt:.2f}s"
            row += f"{cell:>24}"
        lines.append(row)
        print(row, flush=True)
    lines += ["", "cells: distinct states, factor over sc, seconds (interpreted unless marked compiled; symmetry off "
              "in every column)"]
    Path(args.out).write_text("\n".join(lines) + "\n")
    print(f"written {args.out}")


if __name__ == "__main__":
    main()
