# SPDX-License-Identifier: GPL-2.0-only
"""Claims proved at fixed N with every lemma removed, by the induction strengthened with what
checker.prove.laws finds at the point (modular facts, conservation laws, the vocabulary's templates;
no Spacer), and percpu_counter_tree's settled_gap_bound at ncpus 2..8 the same way.

    python benchmarks/lemma_free_laws.py [--section claims|tree] [--spec NAME] [--sizes 1,2,3,4] [--timeout S]

claims: each built-in spec with a prove sweep at N = 1..4 (its other parameters small, as
  benchmarks/pdr_lemma_free.py takes them): claims proved / claims asked (lemmas left out; the
  false-on-purpose ones are not asked: the induction cannot show a violation), the seconds for the point
  (finding the facts, then one induction for all claims) and that time divided by the claims.
tree: settled_gap_bound (with the tree's other claims) at ncpus 2..8, ops=1, with the seconds to find
  the facts and to prove; each size's laws are tried first at the next (``hints``, as a prove sweep does).
Measured, never asserted in tests; the machine's load is printed beside the figures.
"""
from __future__ import annotations

import argparse
import os
import platform
import resource
import sys
import time
from pathlib import Path

from measure import emitter

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import z3  # noqa: E402

from checker.language.compile import Model  # noqa: E402
from checker.language.model import resolve_params  # noqa: E402
from checker.loader import resolve  # noqa: E402
from checker.prove.laws import prove_lemma_free  # noqa: E402
from checker.prove.solver import Solver, own_context  # noqa: E402
from checker.result import HOLDS  # noqa: E402

#: The point of each spec with a prove sweep, by CPU count: the other parameters kept small.
POINTS = {
    "percpu_eager": lambda n: {"ncpus": n, "batch": 2},
    "rss_split": lambda n: {"threads": n, "T": 1, "U": 1},
    "percpu_counter_tree": lambda n: {"ncpus": n, "ops": 1},
    "vmstat": lambda n: {"ncpus": n, "threshold": 2},
}


def load() -> str:
    return "load average %.1f %.1f %.1f" % os.getloadavg()


def claims(emit, timeout: float, only: str | None, sizes: list[int]) -> None:
    emit("## claims proved at fixed N, every lemma removed, strengthened by checker.prove.laws (no Spacer)")
    for name, point in POINTS.items():
        if only and name != only:
            continue
        cls = resolve([name])[0]
        for n in sizes:
            model = Model(cls, resolve_params(cls, point(n)))
            t0, c0 = time.perf_counter(), time.process_time()
            with own_context():  # as a prove point runs it (checker.prove.solver)
                free = prove_lemma_free(model, Solver(timeout), name)
            dt, cpu = time.perf_counter() - t0, time.process_time() - c0
            asked = [p for p in model.properties if p.kind == "invariant" and p.expect == "holds"
                     and not p.lemma and p.name != "no_overflow" and (p.inductive or p.proof)]
            got = [p.name for p in asked if p.name in free.proofs and free.proofs[p.name].verdict == HOLDS]
            open_ = {p.name: (free.proofs[p.name].reason if p.name in free.proofs else "not asked")
                     for p in asked if p.name not in got}
            emit(f"{name:<22} N={n}  proved {len(got)}/{len(asked)}  {dt:7.1f}s wall {cpu:6.1f}s CPU  "
                 f"{dt / max(1, len(asked)):6.1f}s/claim"
                 f"  (facts {free.facts}, laws {len(free.kept)}, facts found in {free.laws.seconds:.1f}s)  [{load()}]"
                 + (f"  open: {', '.join(f'{k} ({v})' for k, v in open_.items())}" if open_ else ""))


def tree(emit, timeout: float, sizes: list[int]) -> None:
    emit("## percpu_counter_tree.settled_gap_bound, lemmas removed, ops=1 (design latest, batch 2, 1 task a CPU)")
    cls = resolve(["percpu_counter_tree"])[0]
    hints: list = []  # each size's grouped laws, tried first at the next (as a prove sweep passes them on)
    for n in sizes:
        model = Model(cls, resolve_params(cls, {"ncpus": n, "ops": 1}))
        t0, c0 = time.perf_counter(), time.process_time()
        with own_context():
            free = prove_lemma_free(model, Solver(timeout), "tree", hints=hints)
        hints = free.laws.portable
        dt, cpu = time.perf_counter() - t0, time.process_time() - c0
        pr = free.proofs["settled_gap_bound"]
        rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024
        emit(f"ncpus={n}  {pr.verdict:<12} {dt:7.1f}s wall, {cpu:6.1f}s CPU (facts {free.laws.seconds:.1f}s, "
             f"induction {dt - free.laws.seconds:.1f}s wall)  moduli {free.laws.moduli}  facts {free.facts}  "
             f"laws {len(free.kept)}  peak RSS {rss} MB  [{load()}]" + (f"  ({pr.reason})" if pr.reason else ""))
        for line in free.kept + free.laws.notes:
            emit(f"    {line}")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--section", choices=("claims", "tree", "all"), default="all")
    ap.add_argument("--spec")
    ap.add_argument("--sizes")
    ap.add_argument("--timeout", type=float, default=60.0)
    ap.add_argument("--out")
    a = ap.parse_args()
    emit = emitter(a.out)

    emit(f"# z3 {z3.get_version_string()}, python {platform.python_version()}, {load()} at the start")
    if a.section in ("claims", "all"):
        claims(emit, a.timeout, a.spec, [int(x) for x in (a.sizes or "1,2,3,4").split(",")])
    if a.section in ("tree", "all"):
        tree(emit, a.timeout, [int(x) for x in (a.sizes or "2,3,4,5,6,7,8").split(",")])


if __name__ == "__main__":
    main()
