"""Bounded model checking: every run of up to k steps from the initial states.

A violation found this way is a real trace (``violated``), and the first
depth at which it appears makes it a shortest one. When no run of k + 1
steps exists at all, every reachable state was covered and "not found" is
final; otherwise it is ``inconclusive`` (``bmc_depth``).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import z3

from checker.prove.encoding import PerN
from checker.prove.solver import Solver
from checker.result import HOLDS, INCONCLUSIVE, VIOLATED, Step
from checker.spec.compile import Model

DEADLOCK = "no_deadlock"


@dataclass
class BmcOutcome:
    name: str
    kind: str
    verdict: str
    reason: str | None = None
    trace: list[Step] = field(default_factory=list)


def bmc(model: Model, k: int, solver: Solver) -> tuple[dict[str, BmcOutcome], bool, dict[str, Any]]:
    """(outcome per property, whether the runs were exhausted, initial state)."""
    enc = PerN(model)
    trs = enc.transitions()
    z = solver._new()
    init = enc.initial()
    states = [enc.fresh("@0")]
    sels: list[z3.ArithRef] = []
    z.add(enc.equal(states[0], init))
    props = list(model.properties)
    open_props = {p.name: p for p in props}
    out: dict[str, BmcOutcome] = {}
    dl_open = True

    def step_constraint(prev: tuple, cur: tuple, sel: z3.ArithRef) -> list[z3.BoolRef]:
        cs = [sel >= 0, sel < len(trs)]
        for tr in trs:
            g, nxt = enc.fire(tr, prev)
            cs.append(z3.Implies(sel == tr.index, z3.And(g, enc.equal(cur, nxt))))
        return cs

    def trace(m: z3.ModelRef, depth: int) -> list[Step]:
        steps = []
        for d in range(depth):
            tr = trs[m.eval(sels[d], model_completion=True).as_long()]
            before = _flat(enc.describe(m, states[d]))
            after = _flat(enc.describe(m, states[d + 1]))
            steps.append(Step(tr.cpu, model.role_of(tr.cpu), tr.name, tr.choices(),
                              {k2: v for k2, v in after.items() if before[k2] != v}))
        return steps

    def ask(extra: list[Any]) -> z3.CheckSatResult:
        z.push()
        z.add(*extra)
        r = z.check()
        solver.queries += 1
        return r

    unknown = None
    for d in range(k + 1):
        if d > 0:
            cur = enc.fresh(f"@{d}")
            sel = z3.Int(f"step@{d}")
            z.add(*step_constraint(states[-1], cur, sel))
            states.append(cur)
            sels.append(sel)
        cur = states[-1]
        for name in list(open_props):
            p = open_props[name]
            want = enc.holds(p, cur) if p.kind == "sometimes" else z3.Not(enc.holds(p, cur))
            r = ask([want])
            if r == z3.sat:
                verdict = HOLDS if p.kind == "sometimes" else VIOLATED
                out[name] = BmcOutcome(name, p.kind, verdict, None, trace(z.model(), d))
                del open_props[name]
            elif r == z3.unknown:
                unknown = z.reason_unknown()
            z.pop()
        if dl_open:
            enabled = z3.Or([enc.fire(tr, cur)[0] for tr in trs]) if trs else z3.BoolVal(False)
            r = ask([z3.Not(enabled), z3.Not(enc.terminal(cur))])
            if r == z3.sat:
                out[DEADLOCK] = BmcOutcome(DEADLOCK, "deadlock", VIOLATED, None, trace(z.model(), d))
                dl_open = False
            z.pop()
    # Exhausted? No run of k + 1 steps means every reachable state was seen.
    nxt = enc.fresh(f"@{k + 1}")
    r = ask(step_constraint(states[-1], nxt, z3.Int(f"step@{k + 1}")))
    z.pop()
    exhausted = r == z3.unsat
    reason = None if exhausted else (f"solver_unknown: {unknown}" if unknown else "bmc_depth")
    for name, p in open_props.items():
        if exhausted:
            out[name] = BmcOutcome(name, p.kind, VIOLATED if p.kind == "sometimes" else HOLDS)
        else:
            out[name] = BmcOutcome(name, p.kind, INCONCLUSIVE, reason)
    if dl_open:
        out[DEADLOCK] = BmcOutcome(DEADLOCK, "deadlock", HOLDS if exhausted else INCONCLUSIVE,
                                   None if exhausted else reason)
    s0 = model.initial_states()[0]
    return out, exhausted, model.state_dict(s0)


def _flat(state: dict[str, Any]) -> dict[str, Any]:
    out = {}
    for k, v in state.items():
        if isinstance(v, list):
            for c, x in enumerate(v):
                out[f"{k}[{c}]"] = x
        else:
            out[k] = v
    return out
