# SPDX-License-Identifier: GPL-2.0-only
"""Claims at one parameter point without hand-written lemmas: IC3/PDR, checked twice.

Spacer (``checker.prove.horn``) is asked whether a state breaking a claim is
reachable. Its answers are not verdicts until checked here:

- an invariant it found is simplified, printed in the spec's words, and that
  printed formula is proved again by the ordinary induction
  (``checker.prove.inductive``: Init => I, I and Step => I', I => claim);
  only then are the claims ``holds``;
- a run it found is replayed step by step in the explorer (each next state
  must be one of the explorer's successors), and the claims it breaks are
  judged on the explorer's final state; only then are they ``violated``,
  with the explorer's trace (of any depth; not necessarily the shortest);
- anything else (its limit, ``unknown``, a failed re-check) is
  ``inconclusive`` with the reason.

All claims are asked at once; a run that breaks some of them removes those
and the rest are asked again, so a correct spec costs one Spacer call.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

import z3

from checker.errors import CheckerError
from checker.language.compile import Model
from checker.language.declare import PropertyInfo
from checker.language.model import resolve_params
from checker.prove.encoding import PerN
from checker.prove.horn import HornSystem, flat, slot_invariant, slot_names
from checker.prove.houdini import candidates, houdini, symmetric_role
from checker.prove.inductive import prove_invariants
from checker.prove.solver import WALL_GUARD, Solver, fresh_context
from checker.prove.symmetric import CpuSymmetry, prove_symmetry
from checker.prove.vocabulary import Vocabulary
from checker.result import HOLDS, INCONCLUSIVE, VIOLATED, Step

#: The name the re-checked invariant carries in the induction's obligations.
FOUND = "found_invariant"


@dataclass
class Verdict:
    """One claim's answer at the point."""

    name: str
    verdict: str
    reason: str | None = None
    trace: list[Step] = field(default_factory=list)
    invariant: list[str] = field(default_factory=list)  # the re-checked invariant, one conjunct a line
    seconds: float = 0.0


def claims_of(model: Model, *, lemmas: bool = False) -> list[PropertyInfo]:
    """The invariants asked about: every one at the point, less the lemmas unless ``lemmas``."""
    return [p for p in model.properties if p.kind == "invariant" and (lemmas or not getattr(p, "lemma", False))]


#: Conflicts each of the contextual simplifier's solver calls may take (a deterministic bound).
SIMPLIFY_CONFLICTS = 2000

#: Claims asked after the others, with what those proved: Spacer finds the type ranges of 64-bit
#: variables hard (it approaches a bound one value at a time) and must not hold up the spec's own claims.
LATE = ("no_overflow",)


def check_point(model: Model, claims: list[PropertyInfo], timeout: float | None,
                seed: z3.ExprRef | None = None, late: bool = True) -> dict[str, Verdict]:
    """Each claim's verdict at ``model``'s point (``timeout``: seconds per Spacer call and per obligation).
    ``seed``: a formula over ``Var(i)`` proved inductive at this point (``checker.prove.houdini``)."""
    return solve_point(model, claims, timeout, seed, late)[0]


def solve_point(model: Model, claims: list[PropertyInfo], timeout: float | None, seed: z3.ExprRef | None = None,
                late: bool = True, split: bool = True) -> tuple[dict[str, Verdict], z3.ExprRef | None]:
    """``check_point``, and the invariant proved (over ``Var(i)``), if any. ``late=False``: the ``LATE``
    claims are not asked. With ``split``, claims Spacer could not decide together are asked one at a time,
    sharing one more timeout: a false claim's run is found quickly alone, behind a hard true one it is not."""
    enc = PerN(model)
    horn = HornSystem(enc)
    out: dict[str, Verdict] = {}
    known: z3.ExprRef | None = seed  # over Var(i): the conjunction of the re-checked invariants so far
    proved_any = False
    groups = [[p for p in claims if p.name not in LATE], [p for p in claims if p.name in LATE and late]]
    for group in groups:
        open_claims = list(group)
        implied = _implied(model, enc, known, open_claims, timeout) if known is not None else []
        if implied:  # what the invariant known so far implies needs no Spacer call, once it is re-proved
            t0 = time.perf_counter()
            inv, lines, why = _recheck(model, enc, horn, known, implied, timeout)
            for p in implied:
                reason = why if isinstance(why, str) else (why or {}).get(p.name)
                out[p.name] = Verdict(p.name, INCONCLUSIVE if reason else HOLDS, reason, invariant=lines,
                                      seconds=time.perf_counter() - t0)
            if why is None:
                known, proved_any = inv, True
            open_claims = [p for p in open_claims if p not in implied]
        while open_claims:
            t0 = time.perf_counter()
            if group is groups[1]:
                # The late claims with the others again, not from what those proved: Spacer converges on
                # them as part of the whole far more often than alone behind a known invariant.
                asked = [p for p in claims if out.get(p.name) and out[p.name].verdict == HOLDS] + open_claims
                bad = z3.Or([z3.Not(enc.holds(p, horn.state)) for p in asked])
                hint = None
            else:
                bad = z3.Or([z3.Not(enc.holds(p, horn.state)) for p in open_claims])
                hint = None if known is None else z3.substitute_vars(known, *horn.slots)
            ans = horn.solve(bad, timeout, hint)
            if ans.result == "unsat":
                inv = ans.invariant if known is None else z3.And(known, ans.invariant)
                inv, lines, why = _recheck(model, enc, horn, inv, open_claims, timeout)
                for p in open_claims:
                    reason = why if isinstance(why, str) else (why or {}).get(p.name)
                    out[p.name] = Verdict(p.name, INCONCLUSIVE if reason else HOLDS, reason, invariant=lines,
                                          seconds=time.perf_counter() - t0)
                if why is None:
                    known, proved_any = inv, True
                break
            if ans.result == "unknown" and split and len(open_claims) > 1:
                share = max(5.0, (timeout or 60.0) / len(open_claims))
                for p in open_claims:
                    alone = solve_point(model, [p], share, known, late=True, split=False)[0][p.name]
                    if alone.verdict == INCONCLUSIVE:
                        alone.reason = (f"solver_unknown: spacer: {ans.reason} (with the other claims), "
                                        f"{alone.reason} (alone, {share:.0f}s)")
                    alone.seconds += ans.seconds  # its share: the joint call, then its own
                    out[p.name] = alone
                break
            if ans.result == "unknown":
                for p in open_claims:
                    out[p.name] = Verdict(p.name, INCONCLUSIVE, f"solver_unknown: spacer: {ans.reason}",
                                          seconds=time.perf_counter() - t0)
                break
            run = replay(model, ans.states)
            broken = [p for p in open_claims if run is not None and not p.fn(run[1])]
            if not broken:  # never trust the run alone: it did not replay, or breaks nothing in the explorer
                why = ("pdr_trace_not_replayed: Spacer's run is not a run of the explorer" if run is None else
                       "pdr_trace_not_replayed: the explorer's state at the end of Spacer's run breaks no claim")
                for p in open_claims:
                    out[p.name] = Verdict(p.name, INCONCLUSIVE, why, seconds=time.perf_counter() - t0)
                break
            for p in broken:
                out[p.name] = Verdict(p.name, VIOLATED, trace=run[0], seconds=time.perf_counter() - t0)
            open_claims = [p for p in open_claims if p not in broken]
    return out, (known if proved_any else None)


def check_ladder(model: Model, claims: list[PropertyInfo], timeout: float | None) -> dict[str, Verdict]:
    """``check_point`` at ``model``'s point, seeded from the same point with 1, 2, ... CPUs of its symmetric
    role: each smaller point's invariant, copied to the next size and kept where Houdini proves it, is what
    Spacer starts from there. Spacer alone finds per-CPU facts at one CPU in seconds and often not at all at
    three; the copies make most of them known."""
    role = symmetric_role(model)
    if role is None:
        # No CPU count to climb (the counter tree's CPUs sit in a tree of items): Spacer starts from the
        # modular facts and conservation laws found at the point, kept only where Houdini proves them.
        from checker.prove.laws import find_laws

        kept, _ = find_laws(model, timeout)
        return check_point(model, claims, timeout, z3.And(kept) if kept else None)
    if len(model.roles[role]) <= 1:
        return check_point(model, claims, timeout)
    param = model.info.roles[role].count
    given = {k: getattr(model.params, k) for k in model.info.params if k not in model.params.computed}
    seed = None
    prev: tuple[Model, z3.ExprRef] | None = None
    for n in range(1, len(model.roles[role])):
        try:
            small = Model(model.cls, resolve_params(model.cls, {**given, param: n}))
        except CheckerError:
            prev = None
            continue  # a size the spec does not allow with these values: the ladder starts again above it
        seed = _seed(prev, small, role, timeout)
        names = {p.name for p in claims}
        _, inv = solve_point(small, [p for p in claims_of(small) if p.name in names and p.expect == "holds"],
                             timeout, seed, late=False)
        prev = (small, inv) if inv is not None else None
    return check_point(model, claims, timeout, _seed(prev, model, role, timeout))


def _seed(prev: tuple[Model, z3.ExprRef] | None, model: Model, role: str, timeout: float | None) -> z3.ExprRef | None:
    """What Spacer starts from at ``model``'s point: the smaller point's invariant copied to this size, the
    same read for any number of CPUs and placed at each CPU (``checker.prove.generalise``), the spec's
    vocabulary templates and the conservation laws of its steps (``checker.prove.laws``), kept where Houdini
    proves them inductive here."""
    from checker.prove.generalise import at_point, generalise, templates
    from checker.prove.laws import laws_alone

    cands = at_point(model, templates(model, role)) + laws_alone(model, timeout)
    if prev is not None:
        cands = candidates(prev[0], prev[1], model, role) + at_point(model, generalise(prev[0], prev[1], role)) + cands
    if not cands:
        return None
    enc = PerN(model)
    sym = prove_symmetry(enc, role, timeout)
    kept = houdini(enc, cands, timeout, sym if isinstance(sym, CpuSymmetry) else None)
    return z3.And(kept) if kept else None


def replay(model: Model, states: list[tuple[int, ...]]) -> tuple[list[Step], tuple] | None:
    """The explorer's steps through ``states`` (flat slot values, initial first) and its final state,
    or None when some state is not a successor of the one before (or the first is not initial)."""
    if not states:
        return None
    s0 = model.initial_states()[0]
    cur = _state(model, s0, states[0])
    if cur not in model.initial_states():
        return None
    steps: list[Step] = []
    for vals in states[1:]:
        target = _state(model, s0, vals)
        for label, t in model.successors(cur):
            if t == target:
                name, cpu, choices = model.label_parts(label)
                steps.append(Step(cpu, model.role_of(cpu), name, choices, model.changes(cur, t)))
                cur = t
                break
        else:
            return None
    return steps, cur


def _state(model: Model, like: tuple, vals: tuple[int, ...]) -> tuple:
    out: list[Any] = []
    k = 0
    for n, v in zip(model.var_names, like):
        if n in model.tupled:
            out.append(tuple(vals[k:k + len(v)]))
            k += len(v)
        else:
            out.append(vals[k])
            k += 1
    return model.state_cls(out)


def vocabulary(model: Model, enc: PerN) -> Vocabulary:
    """How the encoding's slots read in the spec's own words (``s.local[1]``, enum names), to print invariants."""
    names = slot_names(enc)
    types = [model.vars[n.split("[", 1)[0]].type for n in names]
    return Vocabulary(names, types, model.cls)


def _recheck(model: Model, enc: PerN, horn: HornSystem, inv: z3.ExprRef, claims: list[PropertyInfo],
             timeout: float | None) -> tuple[z3.ExprRef, list[str], str | dict[str, str] | None]:
    """Simplify Spacer's invariant, print it, and prove the printed formula again by induction.
    The third value: None (all re-proved), a reason for all, or reasons by claim."""
    simple = _simplify(inv, len(horn.slots), timeout)
    lines = vocabulary(model, enc).conjuncts(simple)

    prop = slot_invariant(enc, simple, FOUND, "the invariant Spacer found")
    solver = Solver(timeout)
    proofs = prove_invariants(enc, [prop], solver, f"{model.name}.pdr", never_enabled=False)
    bad = {n: pr for n, pr in proofs.items() if pr.verdict != HOLDS}
    if bad:
        n, pr = next(iter(bad.items()))
        return simple, lines, f"pdr_recheck_failed: the found invariant's {n} obligation: {pr.reason or pr.verdict}"
    s = enc.fresh("")
    hyps = [enc.types(s), prop.fn(s)]
    reasons: dict[str, str] = {}
    for p in claims:
        a = solver.obligation(f"{model.name}.pdr.{p.name}.implied", hyps, enc.holds(p, s))
        if a.result != "unsat":
            reasons[p.name] = (f"pdr_recheck_failed: the found invariant does not imply it ({a.result}"
                               + (f": {a.reason}" if a.reason else "") + ")")
    return simple, lines, reasons or None


def _implied(model: Model, enc: PerN, known: z3.ExprRef, claims: list[PropertyInfo],
             timeout: float | None) -> list[PropertyInfo]:
    """The claims that ``known`` (an invariant already proved by induction, over ``Var(i)``) implies."""
    s = enc.fresh("")
    hyps = [enc.types(s), z3.substitute_vars(known, *flat(enc, s))]
    solver = Solver(timeout)
    return [p for p in claims
            if solver.obligation(f"{model.name}.pdr.{p.name}.implied", hyps, enc.holds(p, s)).result == "unsat"]


def _simplify(f: z3.ExprRef, n: int, timeout: float | None) -> z3.ExprRef:
    """Fewer, plainer conjuncts: Z3's simplifier, then a contextual pass (kept only if it finishes).
    ``f`` is over ``Var(0)`` .. ``Var(n - 1)``, and so is the answer."""
    # In a context of its own (fresh_context): the simplifier orders a sum's terms by their ids there, so
    # the printed invariant depends on ``f`` alone, not on what the process built before.
    ctx = fresh_context()
    slots = [z3.Int(f"%slot{i}", ctx) for i in range(n)]
    g = z3.simplify(z3.substitute_vars(f.translate(ctx), *slots))
    try:
        # Bounded by conflicts (the tactic takes no rlimit), so the printed invariant is the same under any
        # load; the wall-clock cap behind it only keeps a pathological formula from hanging the run.
        tactic = z3.TryFor(z3.With(z3.Tactic("ctx-solver-simplify", ctx), max_conflicts=SIMPLIFY_CONFLICTS),
                           max(1, int((timeout or 60) * WALL_GUARD * 1000 / 4)))
        goal = z3.Goal(ctx=ctx)
        goal.add(g)
        r = tactic(goal)
        if len(r) == 1:
            g = z3.simplify(r[0].as_expr())
    except z3.Z3Exception:
        pass  # over its budget: the plain simplification is still correct
    g = z3.substitute(g, *[(x, z3.Var(i, z3.IntSort(ctx))) for i, x in enumerate(slots)])
    return g.translate(z3.main_ctx())
