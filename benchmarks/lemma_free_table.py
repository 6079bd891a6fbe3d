# SPDX-License-Identifier: GPL-2.0-only
"""Issue 27's first target as one table: for every built-in spec with a prove sweep, the claims proved with every
lemma removed at N = 1..4 and for every N, with the time per claim.

    python benchmarks/lemma_free_table.py --section fixed [--spec NAME] [--sizes 1,2,3,4] [--timeout S] [--pdr-only]
                                          [--out FILE]
    python benchmarks/lemma_free_table.py --section every [--spec NAME] [--timeout S] [--out FILE]

fixed: at each N (the spec's other parameters small, as benchmarks/pdr_lemma_free.py takes them), the claims
  (invariants expected to hold, not lemmas, asked of the induction; not no_overflow, which the induction does
  not ask with the lemmas either) are proved first as --prover infer proves them at the point (where its CPUs are
  one symmetric role, the invariants inferred at one CPU for every CPU count, the any-N induction asked at N;
  else the laws route, checker.prove.laws: modular facts, conservation laws and vocabulary templates found at the
  point, Houdini, then the ordinary induction), then whatever is still open by the IC3/PDR route (checker.prove.fixed's
  check_ladder: Spacer seeded from the same point at 1..N-1 CPUs, its invariant proved again by induction).
  A claim counts once either route proves it. Seconds: the process's CPU time (Z3 included) for the point,
  both routes, divided by the claims asked; wall time beside it.
every: each point of the spec's prove sweep, --prover induction with the lemmas vs --prover infer with them
  left out (benchmarks/infer_every_n.py's comparison), claims proved for every CPU count.

Z3's limit is its resource limit (``--timeout`` seconds' worth a call, checker/prove/solver.py): the verdicts
do not depend on the machine's load; the seconds do, and the load is printed beside them. Measured, never
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

from checker.language.compile import Model  # noqa: E402
from checker.language.model import info, resolve_params  # noqa: E402
from checker.loader import resolve  # noqa: E402
from checker.prove import _prove_point  # noqa: E402
from checker.prove.fixed import check_ladder  # noqa: E402
from checker.result import HOLDS  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from infer_every_n import run as every_n  # noqa: E402

#: Every built-in spec with a prove sweep, and its point by CPU count (the other parameters small).
POINTS = {
    "percpu_eager": lambda n: {"ncpus": n, "batch": 2},
    "rss_split": lambda n: {"threads": n, "T": 1, "U": 1},
    "vmstat": lambda n: {"ncpus": n, "threshold": 2},
    "percpu_counter_tree": lambda n: {"ncpus": n, "ops": 1},
}


def load() -> str:
    return "load %.1f" % os.getloadavg()[0]


def fixed(emit, name: str, sizes: list[int], timeout: float, laws: bool = True) -> None:
    cls = resolve([name])[0]
    for n in sizes:
        model = Model(cls, resolve_params(cls, POINTS[name](n)))
        # no_overflow is left out, as the induction leaves it out with the lemmas too (the typed ranges are the
        # explorer's to check); Spacer spends its whole budget on a 64-bit range (pdr_lemma_free.txt: open at
        # every N).
        asked = [p for p in model.properties if p.kind == "invariant" and p.expect == "holds"
                 and not p.lemma and (p.inductive or p.proof) and p.name != "no_overflow"]
        t0, c0 = time.perf_counter(), time.process_time()
        by: dict[str, str] = {}
        why = {p.name: "not asked" for p in asked}
        if laws:
            # --prover infer's path at the point: the invariants inferred at one CPU for every CPU count, the
            # any-N induction asked at N, where the CPUs are one symmetric role; else the facts and laws
            # found at the point
            given = POINTS[name](n)
            checks = _prove_point(cls, {k: given.get(k, "default") for k in info(cls).params}, timeout, None, 0,
                                  infer=True)
            got = {c.property: c for c in checks}
            route = {"inferred": "infer", "inferred-at-point": "infer", "per-n-laws": "laws"}
            by = {p.name: route.get(got[p.name].extra["method"], got[p.name].extra["method"]) for p in asked
                  if p.name in got and got[p.name].verdict == HOLDS}
            why = {p.name: (got[p.name].reason if p.name in got else "not asked") for p in asked}
        c_laws = time.process_time() - c0
        rest = [p for p in asked if p.name not in by]
        if rest:
            got = check_ladder(model, rest, timeout)
            for p in rest:
                if got[p.name].verdict == HOLDS:
                    by[p.name] = "pdr"
                else:
                    why[p.name] = f"laws: {why[p.name]}; pdr: {got[p.name].reason}"
        dt, cpu = time.perf_counter() - t0, time.process_time() - c0
        routes = sorted(set(by.values()))
        open_ = {p.name: why[p.name] for p in asked if p.name not in by}
        emit(f"{name:<28} N={n}  proved {len(by)}/{len(asked)}  by {'+'.join(routes) or '-':<9} "
             f"{cpu:7.1f}s CPU ({c_laws:.1f} infer or laws) {cpu / max(1, len(asked)):6.1f}s CPU/claim  {dt:7.1f}s wall  "
             f"[{load()}]" + (f"  open: {'; '.join(f'{k} ({v})' for k, v in open_.items())}" if open_ else ""))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--section", choices=("fixed", "every"), default="fixed")
    ap.add_argument("--spec", help="one spec (default: every spec with a prove sweep)")
    ap.add_argument("--sizes", default="1,2,3,4")
    ap.add_argument("--timeout", type=float, default=30.0, help="Z3 budget per call, seconds' worth")
    ap.add_argument("--pdr-only", action="store_true",
                    help="fixed: IC3/PDR's ladder for every claim, without the laws route first (--prover pdr's path)")
    ap.add_argument("--out")
    a = ap.parse_args()
    emit = emitter(a.out)

    emit(f"# {a.section}: z3 {z3.get_version_string()}, python {platform.python_version()}, {load()} at the "
         f"start, Z3 budget {a.timeout:g}s' worth a call")
    for name in POINTS:
        if a.spec and name != a.spec:
            continue
        if a.section == "fixed":
            fixed(emit, name, [int(x) for x in a.sizes.split(",")], a.timeout, laws=not a.pdr_only)
        else:
            every_n(name, a.timeout, emit)


if __name__ == "__main__":
    main()
