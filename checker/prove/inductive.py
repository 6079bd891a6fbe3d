# SPDX-License-Identifier: GPL-2.0-only
"""Inductive invariants: Init => Inv, Inv and Step => Inv', Inv => Property.

``Inv`` is the conjunction of the spec's ``@invariant(inductive=True)``
properties and the type facts of its variables. Each obligation is a Z3
query (those with the same hypotheses asked together first, one by one only
when they do not all hold); a property is proved when all of its
obligations are. A step that
breaks a conjunct yields a counterexample to induction: the state before,
the step, the state after and the conjunct. Its verdict is inconclusive
(``not_inductive``): the state before may be unreachable.

For the any-N encoding, per-CPU conjuncts are proved for one arbitrary CPU
``j`` and assumed at the CPUs a step can mention; sums are bounded by the
sum lemma (proved here by induction once) from the per-element bounds the
spec declares in ``sum_bounds`` (each itself an obligation).
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Callable

import z3

from checker.prove.cases import split
from checker.prove.encoding import AnyN, PerN, Transition
from checker.prove.horn import flat
from checker.prove.solver import Solver
from checker.prove.symstate import NotParametric
from checker.result import HOLDS, INCONCLUSIVE, VIOLATED, StopReason, Step, flatten


#: Built-in properties that say a flag only the engine writes is still clear: the first undefined shift
#: (``ub``), the first misuse of memory, the first read of an uninitialised variable. They are part of
#: the strengthening without the spec naming the flag: their step obligation (no step from a state of the
#: invariant sets it) is the real question, asked in the spec's own variables.
ENGINE_FLAGS = ("no_undefined_behaviour", "memory_safe", "no_uninit_read")
#: Of those, the flags that stop a run: no step is enabled once set, so no other obligation needs them.
STOPPING_FLAGS = ("no_undefined_behaviour",)


@dataclass
class Proof:
    """What the obligations of one property came to."""

    name: str
    obligations: int = 0
    verdict: str = HOLDS
    reason: str | None = None
    cti: dict[str, Any] | None = None  # initial_state, trace, broken conjunct
    seconds: float = 0.0
    notes: list[str] = field(default_factory=list)
    #: Claims the any-N encoding cannot state (they iterate over CPUs), with why: not proved here.
    not_parametric: dict[str, str] = field(default_factory=dict)

    def record(self, answer: Any, cti: Any = None, initial: bool = False) -> None:
        self.obligations += 1
        self.seconds += answer.seconds
        if self.verdict != HOLDS:
            return
        if answer.result == "sat":
            if initial:  # an initial state is reachable: a real violation
                self.verdict, self.reason = VIOLATED, None
            else:
                self.verdict, self.reason = INCONCLUSIVE, StopReason.NOT_INDUCTIVE
            self.cti = cti(answer.model) if cti is not None else None
        elif answer.result == "unknown":
            self.verdict, self.reason = INCONCLUSIVE, f"{StopReason.SOLVER_UNKNOWN}: {answer.reason}"


def prove_invariants(enc: PerN | AnyN, properties: list[Any], solver: Solver, tag: str,
                     progress: Callable[[int, int], None] | None = None, *,
                     never_enabled: bool = True, proved: tuple = ()) -> dict[str, Proof]:
    """Prove every inductive property and every other invariant expected to hold.

    ``progress(done, total)`` is told after each obligation. ``never_enabled``: also ask which steps the
    invariant never enables (a note of the report; a query a step, which a caller that reports no notes
    leaves out). ``proved``: invariants already proved inductive (by this function, alone), assumed before
    each step and not asked again."""
    properties = [replace(p, inductive=True) if p.name in ENGINE_FLAGS and p.kind == "invariant"
                  and p.expect == "holds" and p.proof else p for p in properties]
    inductive = [p for p in properties if p.kind == "invariant" and p.inductive]
    goals = [p for p in properties if p.kind == "invariant" and not p.inductive and p.expect == "holds"
             and p.name != "no_overflow" and p.proof]
    proofs: dict[str, Proof] = {p.name: Proof(p.name) for p in inductive + goals}
    proofs["types"] = Proof("types")
    if isinstance(enc, AnyN):
        proofs["sum_lemma"] = Proof("sum_lemma")
    base = enc.constraints()
    s = enc.fresh("")
    s0 = enc.initial()

    def q(name: str) -> str:
        return f"{tag}.{name}"

    transitions = enc.transitions()
    per_cpu = [p for p in inductive if p.role is not None]
    shared = [p for p in inductive if p.role is None]
    bounds = list(enc.element_bounds(s, enc.j)) if isinstance(enc, AnyN) and enc.si.sum_bounds else None
    total = (len(inductive) + 1 + len(transitions) * (1 + len(inductive)) + len(goals)
             + (2 + len(bounds) if bounds is not None else 0))
    done = 0

    def ask(name: str, hyps: list, goal: Any) -> Any:
        return ask_all([name], hyps, [goal])[0]

    def ask_all(names: list[str], hyps: list, goals: list, answers: list | None = None, cases: tuple = ()
                ) -> list[Any]:
        nonlocal done
        answers = answers or solver.obligations(names, hyps, goals, cases)
        done += len(answers)
        if progress is not None:
            progress(done, total)
        return answers

    def record(names: list[str], what: str, hyps: list, goals: list, cti: Callable[[str], Any],
               initial: bool = False, answers: list | None = None, cases: tuple = ()) -> None:
        """Each named property's obligation ``hyps => goal`` (its query named ``name.what``), recorded
        (``answers``: already known to hold; ``cases``: the step's, ``Solver.obligation``)."""
        for n, a in zip(names, ask_all([q(f"{n}.{what}") for n in names], hyps, goals, answers, cases)):
            proofs[n].record(a, cti(n), initial=initial)

    # -- Init => Inv: a failure here is a real violation, in an initial state --------------
    record([p.name for p in inductive] + ["types"], "init", base,
           [enc.holds(p, s0) for p in inductive] + [_types(enc, s0)], lambda n: _init_cex(enc, s0, n), initial=True)

    assumed = [*inductive, *proved]
    hyp = base + [_types(enc, s), *_inv(enc, assumed, s)]
    if isinstance(enc, AnyN):
        _prove_sum_lemma(enc, ask, proofs["sum_lemma"], hyp, bounds or [], s, q)
        hyp.append(enc.sum_lemma(s, enc.cpu_terms(s)))
    # No vacuous proofs: the hypotheses must admit a state, and the initial one.
    for what, cs in (("the invariant", hyp), ("the initial state", base + [_types(enc, s0), *_inv(enc, assumed, s0)])):
        if solver.satisfiable(q(f"consistency.{what}"), cs).result == "unsat":
            proofs["types"].verdict = INCONCLUSIVE
            proofs["types"].reason = f"vacuous: no state satisfies {what} under the parameter constraints"

    # -- Inv and Step => Inv' ------------------------------------------------------
    never = []
    slots = flat(enc, s) if isinstance(enc, PerN) else None  # the state before every step, for its cases
    for tr in transitions:
        guard, t = enc.fire(tr, s)
        pre = hyp + [guard]
        if never_enabled and solver.satisfiable(q(f"enabled.{tr.name}"), pre).result == "unsat":
            never.append(tr.name)
        label = f"{tr.name}" + ("".join(f".{k}={v}" for k, v in tr.choices().items()))
        # At a fixed size a step that branches on a slot is asked branch by branch (checker.prove.cases).
        cases = tuple(split(slots, [guard, *flat(enc, t)])) if slots is not None else ()

        def cti(n: str, tr: Transition = tr, t: tuple = t) -> Any:
            return _cti(enc, tr, s, t, n)

        first = ["types"] + [p.name for p in per_cpu]
        first_goals = [_types(enc, t)] + [enc.holds(p, t) for p in per_cpu]
        then = [p.name for p in shared]
        then_goals = [enc.goal(p, t) if isinstance(enc, AnyN) else enc.holds(p, t) for p in shared]
        # At a fixed size the shared conjuncts assume after the step just the goals before them: the state
        # before implies all of them exactly when both groups hold, so a step that keeps them is one query.
        held = solver.together(pre, first_goals + then_goals, cases) if isinstance(enc, PerN) and shared else None
        if held is not None:
            record(first + then, f"step.{label}", pre, first_goals + then_goals, cti, answers=held)
            continue
        record(first, f"step.{label}", pre, first_goals, cti, cases=cases)
        if not shared:
            continue
        # Shared conjuncts may use the per-CPU ones after the step: those were
        # just proved for an arbitrary CPU, so they hold for every CPU.
        post = pre + [_types(enc, t), *_inv(enc, per_cpu, t)]
        if isinstance(enc, AnyN):
            post.append(enc.sum_lemma(t, enc.cpu_terms(t)))
        record(then, f"step.{label}", post, then_goals, cti, cases=cases)

    for p in properties:
        if p.kind == "invariant" and not p.proof:
            proofs["types"].notes.append(f"{p.name} is not proved here: the spec leaves it to the explorer")
    if never:
        proofs["types"].notes.append("never enabled under the invariant: " + ", ".join(dict.fromkeys(never)))
    # -- Inv => Property ---------------------------------------------------------------
    implied = {}
    for p in goals:
        try:
            implied[p.name] = enc.holds(p, s)
        except NotParametric as e:
            # Not expressible for any N (it iterates over CPUs): left to the explorer, and said so.
            del proofs[p.name]
            proofs["types"].notes.append(f"{p.name} is not proved here: it {e} (checked by the explorer)")
            proofs["types"].not_parametric[p.name] = str(e)
            total -= 1
    if implied:
        record(list(implied), "implied", hyp, list(implied.values()), lambda n: _cti(enc, None, s, s, n))
    # Every step obligation assumed the whole strengthening: with a part of it unproved,
    # what was "proved" from it is not proved either.
    support = [n for n in [p.name for p in inductive] + ["types", "sum_lemma"]
               if n in proofs and proofs[n].verdict != HOLDS and n not in STOPPING_FLAGS]
    for name, pr in proofs.items():
        rest = [n for n in support if n != name]
        if pr.verdict == HOLDS and rest:
            pr.verdict, pr.reason = INCONCLUSIVE, f"unproved_support: relies on {', '.join(rest)}"
    return proofs


def _types(enc: PerN | AnyN, s: tuple) -> z3.BoolRef:
    if isinstance(enc, AnyN):
        return enc.types_at(s, enc.cpu_terms(s))
    return enc.types(s)


def _inv(enc: PerN | AnyN, props: list[Any], s: tuple) -> list[z3.BoolRef]:
    out = []
    for p in props:
        if isinstance(enc, AnyN) and p.role is not None:
            out += [enc.per_cpu_at(p, s, c) for c in enc.cpu_terms(s)]
        elif isinstance(enc, AnyN) and getattr(p, "pair", None) is not None:
            out += enc.pair_instances(p, s)
        else:
            out.append(enc.holds(p, s))
    return out


def _prove_sum_lemma(enc: AnyN, ask: Any, proof: Proof, hyp: list, bounds: list, s: tuple, q: Any) -> None:
    """The sum lemma by induction on k, for arbitrary values and bounds, then
    each declared per-element bound from the invariant."""
    if not enc.si.sum_bounds:
        return
    k, lo, hi, total, x = z3.Ints("k lo hi partial_sum x")
    step_hyp = [k >= 0, lo <= hi, k * lo <= total, total <= k * hi, lo <= x, x <= hi]
    proof.record(ask(q("sum_lemma.base"), [lo <= hi], z3.And(0 * lo <= 0, 0 <= 0 * hi)))
    proof.record(ask(q("sum_lemma.step"), step_hyp,
                     z3.And((k + 1) * lo <= total + x, total + x <= (k + 1) * hi)))
    for name, fact in bounds:
        proof.record(ask(q(f"sum_lemma.bounds.{name}"), hyp, fact),
                     _cti(enc, None, s, s, f"the declared bounds of every {name}[cpu] (sum_bounds)"))


def _init_cex(enc: PerN | AnyN, s0: tuple, conjunct: str) -> Any:
    def build(model: z3.ModelRef) -> dict[str, Any]:
        if isinstance(enc, AnyN):
            state = enc.describe(model, s0, [enc.j])
        else:
            state = flatten(enc.describe(model, s0))
        return {"initial_state": state, "trace": [], "broken": conjunct, "initial": True}

    return build


def _cti(enc: PerN | AnyN, tr: Transition | None, s: tuple, t: tuple, conjunct: str) -> Any:
    """A function building the counterexample to induction from a Z3 model."""

    def build(model: z3.ModelRef) -> dict[str, Any]:
        if isinstance(enc, AnyN):
            cpus = enc.cpu_terms(s) + enc.cpu_terms(t)
            before, after = enc.describe(model, s, cpus), enc.describe(model, t, cpus)
            cpu = _int(model, tr.cpu) if tr is not None and tr.cpu is not None else None
        else:
            before, after = flatten(enc.describe(model, s)), flatten(enc.describe(model, t))
            cpu = tr.cpu if tr is not None else None
        steps = []
        if tr is not None:
            changes = {k: v for k, v in after.items() if before.get(k) != v}
            steps.append(Step(cpu, tr.action.role, tr.name, tr.choices(), changes))
        return {"initial_state": before, "trace": steps, "broken": conjunct}

    return build


def _int(model: z3.ModelRef, x: Any) -> int:
    from checker.symbolic.term import to_z3_num

    v = model.eval(to_z3_num(x), model_completion=True)
    return v.as_long()
