# SPDX-License-Identifier: GPL-2.0-only
"""Counterexample depth for every bug spec: the explorer, BMC and the fixed-size IC3/PDR engine side by side.

    python benchmarks/bug_depths.py [--bugs NAME,...] [--timeout S] [--no-bmc] [--out FILE]

For each spec in specs/bugs/ and each property it expects violated that is an invariant (the one kind both
Z3 engines check), at the first explore point where the explorer finds that violation:

- explorer: the shortest counterexample's depth (steps) and seconds (its BFS, symmetry on);
- bmc: the depth BMC finds it at, unrolled to the explorer's depth (``bmc_checks``);
- pdr: the depth of the run Spacer finds (``checker.prove.fixed.check_point``, the engine of --prover pdr,
  lemmas left out), counted only after the explorer replayed it step by step (``replay``: every state of
  the run one of the explorer's successors, the claim broken in the explorer's last state); wall seconds,
  then the process's CPU seconds.

Z3's limit is its resource limit (``--timeout`` seconds' worth, checker/prove/solver.py), so a verdict here does
not depend on the machine's load; the seconds do. A property that is not an invariant (``sometimes``, liveness,
a build check) is listed with its kind, as are points the encoding refuses, with the reason. Measured, never
asserted in tests.
"""
from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from pathlib import Path

from measure import emitter

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import z3  # noqa: E402

from checker.engines.explore import explore_checks  # noqa: E402
from checker.language.compile import Model  # noqa: E402
from checker.language.model import info  # noqa: E402
from checker.loader import builtin_specs  # noqa: E402
from checker.prove import bmc_checks  # noqa: E402
from checker.prove.fixed import check_point, claims_of  # noqa: E402
from checker.verify import param_points  # noqa: E402


def load() -> str:
    return "load %.1f" % os.getloadavg()[0]


def cell(verdict: str, steps: int, secs: float) -> str:
    return f"{(str(steps) if verdict == 'violated' else verdict[:6]):>6} {secs:7.2f}s"


def one(emit, name: str, cls: type, timeout: float, bmc: bool, max_points: int, explore_timeout: float) -> None:
    kinds = {n: p.kind for n, p in info(cls).properties.items()}
    for prop in cls.expect_violated:
        kind = kinds.get(prop, "a check of its own, not a state property")
        if kind != "invariant":
            emit(f"{name:<32} {prop:<38} not an invariant ({kind}): neither Z3 engine checks it")
            continue
        found = None
        t_all = 0.0
        points = param_points(cls, {}, "explore")[:max_points]
        weak = sorted({str(p.shown().get("memory", "sc")) for p in points} - {"sc"})
        points = [p for p in points if str(p.shown().get("memory", "sc")) == "sc"]
        if not points:
            emit(f"{name:<32} {prop:<38} not encodable: its explore points are under --memory {', '.join(weak)}, "
                 f"and both Z3 engines encode sequentially consistent steps only")
            continue
        for params in points:
            t0 = time.perf_counter()
            ex = next((c for c in explore_checks(cls, params, timeout=explore_timeout) if c.property == prop), None)
            t_all += time.perf_counter() - t0
            if ex is not None and ex.verdict == "violated":
                found = (params, ex, time.perf_counter() - t0)
                break
        if found is None:
            emit(f"{name:<32} {prop:<38} the explorer does not find it at the first {len(points)} sc explore "
                 f"points ({t_all:.1f}s; its limit {explore_timeout:g}s a point): left out")
            continue
        params, ex, t_ex = found
        depth = len(ex.trace)
        shown = params.shown()
        if shown.get("memory") == "sc":  # the weak models' knobs say nothing at sc
            shown = {k: v for k, v in shown.items() if k not in ("sb_depth", "lkmm_history", "lkmm_promises")}
        point = " ".join(f"{k}={v}" for k, v in shown.items())
        if bmc:
            t0 = time.perf_counter()
            try:
                bm = next((c for c in bmc_checks(cls, params, depth, smt_timeout=timeout) if c.property == prop),
                          None)
                bm_cell = cell(bm.verdict if bm else "none", len(bm.trace) if bm else 0, time.perf_counter() - t0)
            except Exception as e:  # noqa: BLE001 - a point the encoding refuses: said, with the reason
                bm_cell = cell("refuse", 0, time.perf_counter() - t0)
                emit(f"#   {name}: bmc refused: {type(e).__name__}: {str(e).splitlines()[0][:160]}")
        else:
            bm_cell = cell("notrun", 0, 0.0)
        t0, c0 = time.perf_counter(), time.process_time()
        try:
            model = Model(cls, params)
            pd = check_point(model, [p for p in claims_of(model, lemmas=True) if p.name == prop], timeout).get(prop)
        except Exception as e:  # noqa: BLE001 - a point the encoding refuses: said, with the reason
            emit(f"{name:<32} {prop:<38} {cell(ex.verdict, depth, t_ex)} {bm_cell}  pdr: not encodable "
                 f"({type(e).__name__}: {str(e).splitlines()[0][:160]})  [{point}]")
            continue
        t_pd, c_pd = time.perf_counter() - t0, time.process_time() - c0
        why = f"  ({pd.reason})" if pd and pd.verdict != "violated" and pd.reason else ""
        emit(f"{name:<32} {prop:<38} {cell(ex.verdict, depth, t_ex)} {bm_cell} "
             f"{cell(pd.verdict if pd else 'none', len(pd.trace) if pd else 0, t_pd)} {c_pd:6.1f}s CPU"
             + (" replayed" if pd and pd.verdict == "violated" else "") + why + f"  [{point}] [{load()}]")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--bugs", help="these bug specs (comma-separated) instead of every one")
    ap.add_argument("--timeout", type=float, default=30.0, help="Z3 budget per query/Spacer call, seconds' worth")
    ap.add_argument("--no-bmc", action="store_true")
    ap.add_argument("--max-points", type=int, default=4, help="explore points tried for the explorer's violation")
    ap.add_argument("--explore-timeout", type=float, default=600.0, help="the explorer's limit at a point, seconds")
    ap.add_argument("--out")
    a = ap.parse_args()
    emit = emitter(a.out)

    specs = builtin_specs()
    names = a.bugs.split(",") if a.bugs else [n for n, c in specs.items() if c.expect_violated]
    emit(f"# z3 {z3.get_version_string()}, python {platform.python_version()}, {load()} at the start, "
         f"Z3 budget {a.timeout:g}s' worth a query")
    emit(f"{'spec':<32} {'property':<38} {'explorer':>15} {'bmc':>15} {'pdr':>15}")
    for name in names:
        one(emit, name, specs[name], a.timeout, not a.no_bmc, a.max_points, a.explore_timeout)


if __name__ == "__main__":
    main()
