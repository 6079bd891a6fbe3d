# SPDX-License-Identifier: GPL-2.0-only
"""Bounded model checking: every run of up to k steps from the initial states.

A violation found this way is a real trace (``violated``), and the first
depth at which it appears makes it a shortest one. When no run of k + 1
steps exists at all, every reachable state was covered and "not found" is
final; otherwise it is ``inconclusive`` (``bmc_depth``).
"""
from __future__ import annotations

import time
from typing import Any

import z3

import checker.interrupts as interrupts
from checker.prove.encoding import PerN
from checker.prove.solver import Solver, canonical_model, lia_logic, unknown_reason
from checker.result import HOLDS, INCONCLUSIVE, VIOLATED, Outcome, Step, flatten
from checker.symbolic.term import to_z3_num
from checker.language.compile import Model

DEADLOCK = "no_deadlock"


def bmc(model: Model, k: int, solver: Solver) -> tuple[dict[str, Outcome], bool, dict[str, Any]]:
    """(outcome per property, whether the runs were exhausted, initial state)."""
    enc = PerN(model)
    trs = enc.transitions()
    init = enc.initial()
    states = [enc.fresh("@0")]
    sels: list[z3.ArithRef] = []
    constraints: list[Any] = [enc.equal(states[0], init), *enc.constraints()]
    z: Any = None
    props = list(model.properties)
    open_props = {p.name: p for p in props}
    out: dict[str, Outcome] = {}
    dl_open = True

    def step_constraint(prev: tuple, cur: tuple, sel: z3.ArithRef) -> list[z3.BoolRef]:
        """One step: the selected transition is enabled, and each slot takes the
        value of the transition that writes it (a frame condition otherwise).
        Listing per slot only the transitions that write it keeps the formula
        small: most steps touch two or three slots."""
        fired = [(tr, *enc.fire(tr, prev)) for tr in trs]
        cs = [z3.Or([z3.And(sel == tr.index, g) for tr, g, _ in fired if not z3.is_false(g)] or [z3.BoolVal(False)])]
        for old_slot, new_slot, nexts in _slots(prev, cur, [nxt for _, _, nxt in fired]):
            value = to_z3_num(old_slot)
            for (tr, _g, _n), nv in zip(fired, nexts):
                if nv is not old_slot:
                    value = z3.If(sel == tr.index, to_z3_num(nv), value)
            cs.append(to_z3_num(new_slot) == value)
        return cs

    def trace(m: z3.ModelRef, depth: int) -> list[Step]:
        steps = []
        for d in range(depth):
            tr = trs[m.eval(sels[d], model_completion=True).as_long()]
            before = flatten(enc.describe(m, states[d]))
            after = flatten(enc.describe(m, states[d + 1]))
            steps.append(Step(tr.cpu, model.role_of(tr.cpu), tr.name, tr.choices(),
                              {k2: v for k2, v in after.items() if before[k2] != v}))
        return steps

    def shown() -> z3.ModelRef:
        """The last query's model as its assertions alone give it (canonical_model): a trace the report shows."""
        return canonical_model(z, solver.timeout, lia_logic(model.info.c_words))

    def ask(extra: list[Any]) -> z3.CheckSatResult:
        # A fresh solver per query rather than push/pop: Z3 then preprocesses
        # the whole unrolling (solving away the per-step state equations),
        # which is far faster here than its incremental mode.
        nonlocal z
        q = solver.fresh_lia(model.info.c_words)
        q.add(*constraints, *extra)
        z = q
        t0 = time.perf_counter()
        r = q.check()
        spent[0] = time.perf_counter() - t0
        interrupts.check()  # an interrupt a destructor swallowed still ends the run
        solver.queries += 1
        return r

    unknown = None
    spent = [0.0]  # the last query's wall seconds: which of Z3's limits ended it
    for d in range(k + 1):
        if d > 0:
            cur = enc.fresh(f"@{d}")
            sel = z3.Int(f"%transition@{d}")
            constraints.extend(step_constraint(states[-1], cur, sel))
            states.append(cur)
            sels.append(sel)
        cur = states[-1]
        # One query for all open properties at this depth; only when some
        # is decided here, find which (most depths decide nothing).
        while open_props:
            goals = {name: (enc.holds(p, cur) if p.kind == "sometimes" else z3.Not(enc.holds(p, cur)))
                     for name, p in open_props.items()}
            r = ask([z3.Or(list(goals.values()))])
            if r != z3.sat:
                if r == z3.unknown:
                    unknown = unknown_reason(z.reason_unknown(), spent[0], solver.timeout)
                break
            m = z.model()
            decided = [name for name, g in goals.items() if z3.is_true(m.eval(g, model_completion=True))]
            for name in decided:
                # A trace for this property alone, so each is its own shortest witness.
                r = ask([goals[name]])
                if r == z3.sat:
                    p = open_props[name]
                    verdict = HOLDS if p.kind == "sometimes" else VIOLATED
                    m = shown()
                    out[name] = Outcome(name, p.kind, verdict, None, trace(m, d),
                                        enc.describe(m, states[0]) if model.uninit_any else None)
                del open_props[name]
        if dl_open:
            enabled = z3.Or([enc.fire(tr, cur)[0] for tr in trs]) if trs else z3.BoolVal(False)
            r = ask([z3.Not(enabled), z3.Not(enc.terminal(cur))])
            if r == z3.sat:
                m = shown()
                out[DEADLOCK] = Outcome(DEADLOCK, "deadlock", VIOLATED, None, trace(m, d),
                                        enc.describe(m, states[0]) if model.uninit_any else None)
                dl_open = False
    # Exhausted? No run of k + 1 steps means every reachable state was seen.
    nxt = enc.fresh(f"@{k + 1}")
    r = ask(step_constraint(states[-1], nxt, z3.Int(f"%transition@{k + 1}")))
    exhausted = r == z3.unsat
    reason = None if exhausted else (f"solver_unknown: {unknown}" if unknown else "bmc_depth")
    for name, p in open_props.items():
        if exhausted:
            out[name] = Outcome(name, p.kind, VIOLATED if p.kind == "sometimes" else HOLDS)
        else:
            out[name] = Outcome(name, p.kind, INCONCLUSIVE, reason)
    if dl_open:
        out[DEADLOCK] = Outcome(DEADLOCK, "deadlock", HOLDS if exhausted else INCONCLUSIVE,
                                   None if exhausted else reason)
    s0 = model.initial_states()[0]
    return out, exhausted, model.state_dict(s0)


def _slots(prev: tuple, cur: tuple, nexts: list[tuple]):
    """(slot before, slot after, that slot in each transition's next state), per slot."""
    for i, (a, b) in enumerate(zip(prev, cur)):
        if isinstance(a, tuple):
            for c in range(len(a)):
                yield a[c], b[c], [n[i][c] for n in nexts]
        else:
            yield a, b, [n[i] for n in nexts]
