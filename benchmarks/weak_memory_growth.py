# SPDX-License-Identifier: GPL-2.0-only
"""State-space growth per memory model (issue 20): distinct states under sc, tso and lkmm.

    python benchmarks/weak_memory_growth.py [--out FILE]

Each spec is explored exhaustively under ``--memory sc``, ``tso`` (store
buffers of 1 and 2 entries; depth 2 also on the compiled engine, whose
seconds include generating and compiling the C, cached after the first
run) and ``lkmm`` (histories of 2 and 3 stores per location, on both engines); each cell is
distinct states, the factor over sc and the seconds. Symmetry reduction is
off in every column (tso and lkmm turn it off). The specs are the litmus
shapes of tests/test_weak_memory.py and its small counters (an annotated
eager-style counter, a lock-protected plain counter, a cmpxchg race).
A second table runs a few seed points under lkmm on both engines
(states/s; the interpreter's run may stop at a state limit).
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
        ("lkmm h=3", {"memory": MEMORY.lkmm, "lkmm_history": 3}),
        ("lkmm h=2 compiled", {"memory": MEMORY.lkmm, "lkmm_history": 2, "engine": "compiled"}),
        ("lkmm h=3 compiled", {"memory": MEMORY.lkmm, "lkmm_history": 3, "engine": "compiled"})]
#: Seed points under lkmm (default bound 2), each on both engines: (label, spec, parameters, the interpreter's
#: state limit: it is measured on that many states, the compiled engine on the whole point).
SEED_POINTS = [("check_mm_mmput_relaxed (default)", "check_mm_mmput_relaxed", {}, None),
               ("lazy_publish_relaxed (default)", "lazy_publish_relaxed", {}, None),
               ("percpu_lazy (first point)", "percpu_lazy", {"ncpus": 2, "ops": 2, "neg": 1, "readers": 1, "mod_bits": 0}, None),
               ("percpu_eager B 3cpu summer", "percpu_eager", {"variant": "B", "ncpus": 3, "batch": 2, "ops": 2,
                                                               "summers": 1}, 50000)]


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
              "in every column; a compiled cell includes generating and compiling its C, or the build cache's hit)"]
    lines += ["", "lkmm at seed points (lkmm_history=2): interpreted vs compiled", ""]
    head = f"{'point':<34}{'interpreted':>30}{'compiled (search)':>30}{'build (lower+C+cc)':>22}{'speed-up':>10}"
    lines += [head, "-" * len(head)]
    print(head, flush=True)
    for label, name, params, cap in SEED_POINTS:
        row = seed_row(label, name, params, cap)
        lines.append(row)
        print(row, flush=True)
    lines += ["", "interpreted: states explored (of the limit where one is given), seconds, states/s; compiled: "
              "the whole point, search seconds and states/s; build: lowering to terms, printing C and compiling "
              "it ((cached): the build cache had the program, so no compiler ran); speed-up: of states/s"]
    Path(args.out).write_text("\n".join(lines) + "\n")
    print(f"written {args.out}")


def seed_row(label: str, name: str, params: dict, cap: int | None) -> str:
    from checker.compiled import engine as ce
    from checker.language.compile import Model
    from checker.loader import builtin_specs

    cls = builtin_specs()[name]
    params = {"memory": MEMORY.lkmm, **params}
    if "variant" in params:
        import specs.percpu_eager as pe

        params["variant"] = getattr(pe.VARIANT, params["variant"])
    t0 = time.perf_counter()
    a = explore(cls(**params), symmetry=False, engine="interpreted", max_states=cap)
    ta = time.perf_counter() - t0
    tm = ce.Timings()
    model = Model(cls, cls(**params).params)
    ce.prepare(model, False, tm)
    st = ce.compiled_search(model, symmetry=False, timings=tm)
    tb = st.seconds
    build = tm.lower + tm.generate + tm.compile
    rate_a, rate_b = a.states / ta, st.states / max(tb, 1e-9)
    cell_a = f"{a.states:,}{'' if a.complete else ' (limit)'} {ta:.1f}s {rate_a:,.0f}/s"
    cell_b = f"{st.states:,} {tb:.2f}s {rate_b:,.0f}/s"
    cell_c = f"{build:.1f}s" + ("" if tm.compiled_now else " (cached)")
    return f"{label:<34}{cell_a:>30}{cell_b:>30}{cell_c:>22}{rate_b / rate_a:>9.0f}x"


if __name__ == "__main__":
    main()
