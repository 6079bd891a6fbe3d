# SPDX-License-Identifier: GPL-2.0-only
"""Which built-in explore points the compiled engine lowers under --memory lkmm, and why not where it does not.

    python benchmarks/lkmm_lowering.py [--before] [--sample] [--quick] [--skip PREFIX ...] [SPEC ...] [--out FILE]

For every built-in spec with access= annotations and each of its explore points under ``memory=lkmm`` (the
points ``verify --memory lkmm`` runs, liveness abstractions left out), this lowers the point as the compiled
engine does (``checker.compiled.lower.lower``, no build cache, no point index) and prints one line: ``lowered``
with the lowering time, or ``NotLowerable`` and the construct it names. ``--before`` switches off the Z3 check
of a store to another CPU's slot that its access= does not list (checker/ordering/lkmm.py, ``_can_hold``), as
the lowering was before it: the two runs' lines compared show which points the check sends to the interpreter.
A lowering under lkmm takes 2-60 s on a loaded machine, so ``--sample`` lowers, per spec, one point per value
of its named and 0/1 parameters (design, variant, irq, readers: the steps differ between them), the one with the fewest CPUs
but at least two (a store to another CPU's slot needs one); the check's verdict depends on a step's code and
its CPU, not on the sizes (ops, batch) that the other points vary. ``--quick`` asks the same question at a fraction of the cost (the lkmm step's message bookkeeping is most of
a lowering): after each step's stores are split off, every store to a slot other than the step's own CPU's, of
a variable the step accesses as its own, is put to Z3 with the step's guard and the conditions known by then,
and the step stops there. That is a superset of the real check (fewer conditions, and stores an access's slot=
lists counted too), so a point with no satisfiable answer under --quick has none in the lowering; a point with
one is lowered in full to see. Its lines say ``quick`` instead of ``lowered``. Nothing is asserted; note the machine's load beside the times (``uptime``).
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def points(cls):
    from checker.errors import UsageError
    from checker.language.compile import Model
    from checker.language.model import info
    from checker.ordering.declare import MEMORY, has_accesses
    from checker.verify import param_points

    if not has_accesses(info(cls)):
        return []
    out = []
    for p in param_points(cls, {"memory": (MEMORY.lkmm,)}, "explore"):
        try:
            if Model(cls, p).abstraction is None:
                out.append(p)
        except UsageError:
            continue
    return out


def sample(pts: list) -> list:
    """One point per combination of named parameter values: the first with the fewest CPUs, two or more."""
    best: dict = {}
    for p in pts:
        key = tuple(sorted((k, v) for k, v in p.shown().items()
                           if (isinstance(v, str) or v in (0, 1)) and k not in ("memory", "ncpus", "lkmm_promises")))
        n = p.ncpus_total
        rank = (n < 2, n)
        if key not in best or rank < best[key][0]:
            best[key] = (rank, p)
    return [p for _, p in best.values()]


def quick(lkmm) -> None:
    """The lkmm step stops after its stores are split off, asking Z3 about each store to another slot of a
    variable the step accesses as its own (see the module's docstring: a superset of the lowering's check)."""
    from checker.expr import And
    from checker.language.declare import DISABLED
    from checker.ordering.machine import own_slot, value_at

    class Stop(Exception):
        pass

    split, annotated = lkmm.Lkmm._stores, lkmm.Lkmm._annotated

    inside = [False]  # _stores serves unannotated (fully ordered) steps too: those run in full

    def stores(self, act, r, cpu, conds, seen):
        normal, todo = split(self, act, r, cpu, conds, seen)
        if not inside[0]:
            return normal, todo
        own = {a.var for a in act.info.access if a.kind in ("store", "rmw") and a.slot is None}
        for li, x in todo.items():
            v, k = self.locs.var_of[li]
            if v not in own or k is None or k == own_slot(self.model, seen, cpu):
                continue
            d = lkmm._differs(x, value_at(seen, self.model, (v, k)))
            if d is not False and d is not True:
                lkmm._can_hold(And(r.guard, *conds, d))
        raise Stop

    def annotated_step(self, *a):
        inside[0] = True
        try:
            return annotated(self, *a)
        except Stop:
            return DISABLED
        finally:
            inside[0] = False

    lkmm.Lkmm._stores, lkmm.Lkmm._annotated = stores, annotated_step


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("specs", nargs="*")
    ap.add_argument("--before", action="store_true")
    ap.add_argument("--sample", action="store_true")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--skip", nargs="*", default=[])
    ap.add_argument("--out")
    a = ap.parse_args()
    import checker.ordering.lkmm as lkmm
    from checker.compiled.lower import lower
    from checker.errors import NotLowerable
    from checker.language.compile import Model
    from checker.loader import builtin_specs

    calls, hits = [0], [0]
    if a.before:
        lkmm._can_hold = lambda cond: False
    else:
        real = lkmm._can_hold

        def counted(cond):
            calls[0] += 1
            held = real(cond)
            hits[0] += held
            return held
        lkmm._can_hold = counted
    if a.quick:
        quick(lkmm)
    specs = builtin_specs()
    names = a.specs or sorted(specs)
    lines = [f"# lkmm_lowering {'--before' if a.before else '(with the check)'}{' --sample' if a.sample else ''}{' --quick' if a.quick else ''}; load {os.getloadavg()[0]:.1f}"]
    print(lines[0], flush=True)
    for name in names:
        if any(name.startswith(s) for s in a.skip):
            continue
        pts = points(specs[name])
        for p in sample(pts) if a.sample else pts:
            tag = " ".join(f"{k}={v}" for k, v in p.shown().items() if k not in ("memory", "sb_depth", "lkmm_history", "lkmm_promises"))
            c0, h0, t0 = calls[0], hits[0], time.perf_counter()
            try:
                lower(Model(specs[name], p))
                what = "quick" if a.quick else "lowered"
            except NotLowerable as e:
                what = f"NotLowerable: {e}"
            line = f"{name:34} {what}  [{tag}]  {time.perf_counter() - t0:.1f}s z3 calls {calls[0] - c0} (satisfiable {hits[0] - h0})"
            print(line, flush=True)
            lines.append(line)
    if a.out:
        Path(a.out).write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
