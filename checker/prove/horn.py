# SPDX-License-Identifier: GPL-2.0-only
"""A spec at one parameter point as constrained Horn clauses, solved by Z3's Spacer (IC3/PDR).

The clauses come from the same ``PerN`` terms as the inductive proofs and
BMC: one relation ``reach`` over the state's slots, a clause for the initial
state, one per transition (action, CPU, choice), and a query clause for a
state that breaks a claim. Spacer answers with an inductive invariant that
implies the claims (``unsat``: no bad state is reachable), or with a
derivation of a bad state from the initial one (``sat``), whose ground
``reach`` facts are the states of a run; or it gives up at its limit.

Nothing here decides a verdict: ``checker.prove.fixed`` re-checks an
invariant by induction and replays a run in the explorer first.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

import z3

import checker.interrupts as interrupts
from checker.language.declare import PropertyInfo
from checker.prove.encoding import PerN
from checker.prove.solver import fresh_context, limit_spacer, unknown_reason
from checker.symbolic.term import to_z3_num


@dataclass
class Answer:
    """What Spacer said: ``unsat`` (the claims hold: ``invariant`` is a formula over ``Var(i)``, slot i),
    ``sat`` (``states``: the run's states as flat slot values, initial first) or ``unknown``."""

    result: str
    invariant: z3.ExprRef | None = None
    states: list[tuple[int, ...]] = field(default_factory=list)
    reason: str | None = None
    seconds: float = 0.0


def flat(enc: PerN, s: tuple) -> list[z3.ArithRef]:
    """The slots of a symbolic state, per-CPU rows spread out, as Z3 integer terms."""
    out: list[z3.ArithRef] = []
    for n, v in zip(enc.model.var_names, s):
        if n in enc.model.tupled:
            out += [to_z3_num(x) for x in v]
        else:
            out.append(to_z3_num(v))
    return out


def slot_invariant(enc: PerN, formula: z3.BoolRef, name: str, doc: str) -> PropertyInfo:
    """``formula`` (over ``Var(i)``, ``enc``'s flat slots) as an inductive invariant of ``enc``: a found or
    inferred strengthening, proved again by the induction with the claims it supports."""
    return PropertyInfo(name, lambda s: z3.substitute_vars(formula, *flat(enc, s)), "invariant", "holds", None,
                        doc, None, None, inductive=True)


def slot_names(enc: PerN) -> list[str]:
    """Names of the flat slots, as the explorer's traces print them (``local[1]``)."""
    m = enc.model
    s0 = m.initial_states()[0]
    out = []
    for n, v in zip(m.var_names, s0):
        out += [f"{n}[{c}]" for c in range(len(v))] if n in m.tupled else [n]
    return out


def _constants(terms: list[z3.ExprRef]) -> list[z3.ExprRef]:
    """The uninterpreted integer constants of ``terms``: the clauses' universally quantified variables."""
    seen: dict[int, z3.ExprRef] = {}
    todo = list(terms)
    visited: set[int] = set()
    while todo:
        t = todo.pop()
        if t.get_id() in visited:
            continue
        visited.add(t.get_id())
        if z3.is_const(t) and t.decl().kind() == z3.Z3_OP_UNINTERPRETED:
            seen[t.get_id()] = t
        elif z3.is_app(t):
            todo.extend(t.children())
    return list(seen.values())


class HornSystem:
    """The clauses of one point, built once; each ``solve`` asks about one set of claims."""

    def __init__(self, enc: PerN):
        self.enc = enc
        s = enc.fresh("")
        self.state = s
        self.slots = flat(enc, s)
        self.reach = z3.Function("reach", *([z3.IntSort()] * len(self.slots)), z3.BoolSort())
        init = flat(enc, enc.initial())
        self.rules: list[tuple[z3.BoolRef, list[z3.BoolRef], str]] = [
            (self.reach(*init), enc.constraints(), "init")]
        for tr in enc.transitions():
            guard, t = enc.fire(tr, s)
            if z3.is_false(z3.simplify(guard)):
                continue
            label = f"{tr.name}.{tr.cpu}.{tr.index}"
            self.rules.append((self.reach(*flat(enc, t)), [self.reach(*self.slots), guard], label))
        heads = [h for h, _, _ in self.rules] + [g for _, body, _ in self.rules for g in body]
        self.variables = _constants(heads)

    def solve(self, bad: z3.BoolRef, timeout: float | None, known: z3.BoolRef | None = None) -> Answer:
        """Is a state where ``bad`` holds reachable? ``bad`` is a formula over ``self.state``.
        ``known``: a formula over ``self.state`` already proved to hold in every reachable state;
        steps are taken only from states where it holds (the same reachable states, fewer to rule out)."""
        # In a context of its own (fresh_context): the invariant and the run Spacer finds then depend on the
        # clauses alone, not on what the process asked Z3 before.
        ctx = fresh_context()

        def here(t: z3.AstRef) -> Any:
            return t.translate(ctx)

        reach = here(self.reach)
        fp = z3.Fixedpoint(ctx=ctx)
        fp.set(engine="spacer")
        # One clause application per step, so a derivation's facts are the run's states.
        fp.set("xform.slice", False)
        fp.set("xform.inline_linear", False)
        fp.set("xform.inline_eager", False)
        limit_spacer(fp, timeout)  # the seed, and a resource limit: the same verdict under any load
        err = z3.Function("bad_state", z3.BoolSort(ctx))
        fp.register_relation(reach, err)
        extra = [v for v in _constants([bad]) if not any(v.eq(w) for w in self.variables)]
        fp.declare_var(*[here(v) for v in self.variables + extra])
        hint = [] if known is None else [here(known)]
        for head, body, name in self.rules:
            fp.rule(here(head), [here(b) for b in body] + (hint if name != "init" else []), name=name)
        fp.rule(err(), [here(self.reach(*self.slots)), here(bad), *hint], name="bad")
        t0 = time.perf_counter()
        try:
            r = fp.query(err())
        except z3.Z3Exception as e:  # Spacer's way of saying a limit passed (or that it was interrupted)
            interrupts.check()
            return Answer("unknown", reason=unknown_reason(str(e), time.perf_counter() - t0, timeout),
                          seconds=time.perf_counter() - t0)
        interrupts.check()  # an interrupt a destructor swallowed still ends the run
        dt = time.perf_counter() - t0
        if r == z3.unsat:
            return Answer("unsat", invariant=fp.get_cover_delta(-1, reach).translate(z3.main_ctx()), seconds=dt)
        if r == z3.sat:
            return Answer("sat", states=_run(fp.get_answer(), reach), seconds=dt)
        return Answer("unknown", reason=unknown_reason(fp.reason_unknown(), dt, timeout), seconds=dt)


def _run(proof: z3.ExprRef, reach: z3.FuncDeclRef) -> list[tuple[int, ...]]:
    """The ground ``reach`` facts of a derivation, from the initial state on (post-order: premises
    before conclusions). A fact that is not ground ends the list early; the replay then fails."""
    out: list[tuple[int, ...]] = []
    seen: set[int] = set()

    def visit(p: z3.ExprRef) -> None:
        stack = [(p, False)]
        while stack:
            node, done = stack.pop()
            if done:
                if z3.is_app(node) and node.decl().eq(reach):
                    if all(z3.is_int_value(a) for a in node.children()):
                        vals = tuple(a.as_long() for a in node.children())
                        if not out or out[-1] != vals:
                            out.append(vals)
                continue
            if z3.is_app(node) and node.decl().eq(reach):  # a state: every occurrence counts
                stack.append((node, True))
                continue
            if node.get_id() in seen:
                continue
            seen.add(node.get_id())
            if z3.is_app(node):
                for ch in reversed(node.children()):
                    stack.append((ch, False))

    visit(proof)
    return out
