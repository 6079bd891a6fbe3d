# SPDX-License-Identifier: GPL-2.0-only
"""Claims proved for every CPU count with invariants inferred in place of the spec's lemmas (--prover infer).

At each point of the prove sweep whose CPUs are one symmetric role:

1. the claims (lemmas left out) are proved by IC3/PDR at 1 and 2 CPUs of the
   role (``checker.prove.fixed``), the other parameters at small values;
2. each conjunct of the invariants found there is generalised to candidates
   for any CPU count (``checker.prove.generalise``), and so is each
   conservation law the steps keep at one CPU (``checker.prove.laws``: an
   amount in flight in a process function's registers, read at the lock's
   holder);
3. Houdini over the any-N encoding drops every candidate (and every claim
   among them) that is false initially or that a step from a state of all the
   others can break, until what is left is inductive together;
4. the claims are proved by the ordinary any-N induction
   (``checker.prove.inductive``) with what is left as their strengthening,
   the spec's lemmas left out. Nothing Houdini or Spacer said is reported
   before that induction proves it.

A claim the candidates do not imply stays ``inconclusive`` (``not_inductive``)
with its counterexample to induction; the candidates that were not inductive
are counted in the report. A point the any-N encoding cannot take is proved
as ``--prover induction`` proves it (with the lemmas), and says so.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field, replace
from typing import Any, Callable

import z3

from checker.errors import CheckerError
from checker.interrupts import check as check_interrupt
from checker.language.compile import Model
from checker.language.declare import PropertyInfo
from checker.language.model import info, resolve_params
from checker.prove.encoding import AnyN
from checker.prove.fixed import LATE, _seed, claims_of, solve_point
from checker.prove.generalise import Candidate, CandidateText, generalise, held_law_candidates, \
    in_flight_templates, placeholder_terms, templates
from checker.prove.houdini import symmetric_role
from checker.prove.inductive import ENGINE_FLAGS, Proof, _inv, _types, prove_invariants
from checker.prove.laws import laws_alone
from checker.prove.observed import observed
from checker.prove.solver import Solver, seeded
from checker.result import HOLDS
from checker.symbolic.term import to_z3_num

#: CPU counts of the role at which IC3/PDR is asked for an invariant to generalise.
SIZES = (1, 2)
#: Rounds of "drop what the full induction refuses" after Houdini (it agrees with Houdini unless Z3 gives up).
RECHECK_ROUNDS = 3
#: Candidates relating two CPUs (``forall c != d``) are asked too, after those about one CPU: each is one shared
#: invariant of the any-N encoding, quantified over two CPUs of the role, assumed at every two CPUs a step can
#: mention (``AnyN.pair_instances``) and proved at two arbitrary ones.
PAIRWISE = True
#: At most this many of them, the shortest first: each costs Houdini about 30 ms a query round (percpu_eager:
#: 1,600 of its 12,731 pairs took 60 s against 12.6 s for its 1,625 singles alone), and most short ones hold.
MAX_PAIRS = 1000


@dataclass
class Inference:
    """What the inference at one point came to: the proofs and what was inferred."""

    proofs: dict[str, Proof]
    kept: list[str] = field(default_factory=list)  # the inferred invariants, printed
    found: list[Candidate] = field(default_factory=list)  # the same, as candidates (``generalise.at_point``)
    asked: int = 0  # candidates generalised from the fixed-size invariants
    sizes: list[str] = field(default_factory=list)  # what IC3/PDR said at each size
    seconds: float = 0.0


def small_values(cls: type, choice: dict[str, Any], role_param: str, n: int) -> dict[str, Any]:
    """The concrete point with ``n`` CPUs standing in for ``choice``: its numbers and defaults kept; a range
    or a symbolic parameter at its largest explore value (or its default; 1 for one that is 0 by default,
    so that what it counts happens)."""
    si = info(cls)
    given: dict[str, Any] = {role_param: n}
    for name, c in choice.items():
        p = si.params[name]
        if name == role_param:
            continue
        if isinstance(c, int) and not isinstance(c, bool):
            given[name] = c
        elif c == "default":
            continue  # the point's own default
        elif p.explore and all(isinstance(x, int) for x in p.explore):
            given[name] = max(p.explore)
        elif not p.derived and p.default == 0 and p.valid(1):
            given[name] = 1
    return given


def infer_point(cls: type, enc: AnyN, choice: dict[str, Any], timeout: float | None, tag: str,
                progress: Callable[[int, int], None] | None = None) -> Inference:
    """Proofs of ``enc``'s claims at this point, strengthened by inferred invariants instead of lemmas."""
    t0 = time.perf_counter()
    si = info(cls)
    role = enc.role
    role_param = si.roles[role].count
    claims = [p for p in enc.properties if not p.lemma and p.proof and p.expect == "holds"]
    candidates: list[Candidate] = []
    keys: set[str] = set()
    sizes: list[str] = []
    printer = None
    prev = None
    proofs: dict[str, Proof] = {}
    kept: list[str] = []
    found: list[Candidate] = []

    def add(new: list[Candidate]) -> None:
        for c in new:
            if (c.cpus <= 1 or PAIRWISE) and c.key not in keys:
                keys.add(c.key)
                candidates.append(c)

    # The sizes one at a time: what one CPU's invariant gives is often enough, and IC3/PDR at two CPUs is
    # where its time goes.
    for n in SIZES:
        check_interrupt()
        try:
            small = Model(cls, resolve_params(cls, small_values(cls, choice, role_param, n)))
        except CheckerError as e:
            sizes.append(f"{n} CPU(s): not a point of the spec ({e})")
            prev = None
            continue
        if symmetric_role(small) != role:
            sizes.append(f"{n} CPU(s): role {role!r} is not symmetric there")
            continue
        if printer is None:
            printer = CandidateText(small)
            add(templates(small, role) + in_flight_templates(small, role))
        asked = [p for p in claims_of(small) if p.expect == "holds" and p.name not in LATE]
        seed = _seed(prev, small, role, timeout)
        verdicts, inv = solve_point(small, asked, timeout, seed, late=False)
        held = sum(v.verdict == HOLDS for v in verdicts.values())
        sizes.append(f"{n} CPU(s) at {_point_text(small)}: IC3/PDR proved {held} of {len(asked)} claims"
                     + ("" if inv is not None else ", no invariant to generalise"))
        prev = (small, inv) if inv is not None else None
        if inv is not None:
            add(generalise(small, inv, role))
        if n == 1:
            # What IC3/PDR's conjuncts never say: an add's amount in flight in its registers, counted by a
            # law through the ghost of everything added (percpu_eager's conservation_through_fold, found).
            # Both from any state and from a state of the seed's facts: a law kept only where the facts hold
            # (the pc machine's amount in flight, in `seen` only between its fold and its sub) is found by the
            # second alone; the first is what the port's registers need, kept from any state.
            known = [] if seed is None else list(seed.children()) if z3.is_and(seed) else [seed]
            add(held_law_candidates(small, laws_alone(small, timeout) + laws_alone(small, timeout, known), role))
            # What the registers hold at each place, as the reachable states show it (``local == count -
            # amount`` between B's read and its sub), which Spacer states only as the inequality it needed.
            add(observed(small, role))
        if not candidates:
            continue
        # The candidates about one CPU first, then with those about two: two CPUs' invariant generalises to
        # eight times more pairs than singles (percpu_eager: 12,731 against 1,625), which only a claim the
        # singles leave open should pay for.
        singles = [c for c in candidates if c.cpus <= 1]
        pairs = sorted((c for c in candidates if c.cpus == 2), key=lambda c: len(c.key))
        for pool in [singles, singles + pairs[:MAX_PAIRS]] if singles and pairs else [candidates]:
            if len(pool) > len(singles) and len(pairs) > MAX_PAIRS:
                sizes.append(f"{len(pairs) - MAX_PAIRS} of {len(pairs)} candidates about two CPUs not asked "
                             f"(the {MAX_PAIRS} shortest were)")
            proofs, kept, found = _strengthen(enc, claims, pool, printer, timeout, tag, progress)
            if all(pr.verdict == HOLDS for pr in proofs.values()):
                break
        if all(pr.verdict == HOLDS for pr in proofs.values()):
            break
    if not proofs:  # nothing to strengthen with: the claims alone, as the induction asks them
        proofs = prove_invariants(enc, [replace(p, inductive=p.inductive and p.name in ENGINE_FLAGS)
                                        for p in claims], Solver(timeout), f"{tag}.infer", progress)
    return Inference(proofs, kept, found, len(candidates), sizes, time.perf_counter() - t0)


def _strengthen(enc: AnyN, claims: list[PropertyInfo], candidates: list[Candidate], printer: CandidateText,
                timeout: float | None, tag: str, progress: Any
                ) -> tuple[dict[str, Proof], list[str], list[Candidate]]:
    """Houdini over the claims and the candidates, then the induction with what it kept (lemmas left out):
    the claims' proofs, and the kept candidates printed and as they are."""
    inferred = [_property(enc, c, k, printer.text(c)) for k, c in enumerate(candidates)]
    pool = [replace(p, inductive=True) for p in claims] + inferred
    alive = minimal(enc, houdini_any(enc, pool, timeout), timeout)
    kept_names = {p.name for p in alive}
    solver = Solver(timeout)
    for _ in range(RECHECK_ROUNDS):
        props = [replace(p, inductive=p.name in kept_names or (p.inductive and p.name in ENGINE_FLAGS))
                 for p in claims] + [p for p in inferred if p.name in kept_names]
        proofs = prove_invariants(enc, props, solver, f"{tag}.infer", progress)
        refused = {n for n, pr in proofs.items() if n in kept_names and pr.verdict != HOLDS
                   and not (pr.reason or "").startswith("unproved_support")}
        if not refused:
            break
        kept_names -= refused
    kept = [p.doc for p in inferred if p.name in kept_names]
    found = [c for c, p in zip(candidates, inferred) if p.name in kept_names]
    return {n: pr for n, pr in proofs.items() if not n.startswith("inferred_")}, kept, found


def _point_text(model: Model) -> str:
    shown = model.params.shown()
    return " ".join(f"{k}={v}" for k, v in shown.items() if k in model.info.params and k != "memory"
                    and not isinstance(v, str) or k in ("variant",))


def _property(enc: AnyN, cand: Candidate, k: int, text: str) -> PropertyInfo:
    """The candidate as an invariant of the any-N encoding (per-CPU when it is about a CPU ``c``)."""
    pairs_of = _instantiate(cand.formula)

    if cand.cpus == 1:
        def fn(s: Any, c: Any) -> z3.BoolRef:
            return pairs_of(s, c, None)
    elif cand.cpus == 2:
        c2, d2 = z3.Int(f"%pair_c{k}"), z3.Int(f"%pair_d{k}")

        def fn(s: Any) -> z3.BoolRef:  # type: ignore[misc]
            return z3.ForAll([c2, d2], z3.Implies(z3.And(enc.in_range(c2), enc.in_range(d2), c2 != d2),
                                                  pairs_of(s, c2, d2)))

        text = f"AllOf({text} for c in s.{enc.role} for d in s.{enc.role} if c != d)"
        enc.pairwise = True
        return PairInfo(f"inferred_{k}", fn, "invariant", "holds", None, text, None, None, inductive=True,
                        pair=lambda s, c, d: pairs_of(s, c, d))
    else:
        def fn(s: Any) -> z3.BoolRef:  # type: ignore[misc]
            return pairs_of(s, None, None)

    return PropertyInfo(f"inferred_{k}", fn, "invariant", "holds", None, text, None, None,
                        role=enc.role if cand.cpus == 1 else None, inductive=True)


@dataclass(frozen=True)
class PairInfo(PropertyInfo):
    """An inferred invariant about two CPUs: ``fn(s)`` quantifies ``pair(s, c, d)`` over every two distinct
    CPUs of the role (what the obligations assume); its goals are ``pair`` at two arbitrary ones."""

    pair: Callable[[Any, Any, Any], Any] | None = None


def _instantiate(formula: z3.BoolRef) -> Callable[[Any, Any, Any], z3.BoolRef]:
    """A function of a symbolic state (and CPUs c, d) giving ``formula`` with its placeholders as the
    state's terms."""
    consts = placeholder_terms(formula)

    def term(s: Any, c: Any, d: Any, name: str) -> z3.ArithRef:
        if name == "c":
            return to_z3_num(c)
        if name == "d":
            return to_z3_num(d)
        if name.startswith("Sum(s."):
            return to_z3_num(getattr(s, name[6:-1]).total())
        base, _, rest = name[2:].partition("[")
        v = getattr(s, base)
        if not rest:
            return to_z3_num(v)
        if rest.startswith("s."):  # at the CPU a shared CPU id names (``s.pc[s.lock]``)
            return to_z3_num(v[getattr(s, rest[2:-1])])
        return to_z3_num(v[d if rest == "d]" else c])

    def build(s: Any, c: Any, d: Any) -> z3.BoolRef:
        return z3.substitute(formula, *[(x, term(s, c, d, x.decl().name())) for x in consts])

    return build


def houdini_any(enc: AnyN, pool: list[PropertyInfo], timeout: float | None) -> list[PropertyInfo]:
    """The largest subset of ``pool`` that holds initially and is inductive together for every CPU count
    (each step from a state of all of them, at the CPUs the step can mention, keeps each, at any CPU)."""
    base = enc.constraints()
    s = enc.fresh("")
    s0 = enc.initial()

    def solver() -> z3.Solver:
        return seeded(timeout)

    alive = []
    for p in pool:
        q = solver()
        q.add(*base, z3.Not(_holds(enc, p, s0)))
        if q.check() == z3.unsat:
            alive.append(p)
    steps = []
    for tr in enc.transitions():
        try:
            steps.append(enc.fire(tr, s))
        except Exception:  # noqa: BLE001 - a step the encoding cannot take: the induction reports it
            continue
    # Each candidate's hypotheses at s, and its goal after each step, are built once: rebuilding them for
    # every query (every live candidate, every round) was nearly all of the time (the solver's a few %).
    hyps = {p.name: z3.And(_inv(enc, [p], s)) for p in alive}
    goals: list[dict[str, z3.BoolRef]] = [{} for _ in steps]
    pre = [*base, _types(enc, s)]
    if enc.si.sum_bounds:
        pre.append(enc.sum_lemma(s, enc.cpu_terms(s)))

    def goal(i: int, p: PropertyInfo) -> z3.BoolRef:
        g = goals[i].get(p.name)
        if g is None:
            g = goals[i][p.name] = _goal(enc, p, steps[i][1])
        return g

    changed = True
    while changed and alive:
        changed = False
        for i, (guard, _t) in enumerate(steps):
            while alive:
                check_interrupt()
                after = [goal(i, p) for p in alive]
                given = [*pre, z3.And([hyps[p.name] for p in alive]), guard]
                broken = _broken(given, timeout, after, list(range(len(after))))
                if not broken:
                    break
                alive = [p for k, p in enumerate(alive) if k not in broken]
                changed = True
    return alive


def _broken(given: list[z3.BoolRef], timeout: float | None, after: list[z3.BoolRef], asked: list[int]) -> set[int]:
    """Which of the goals ``after[i]``, ``i`` in ``asked``, a state satisfying ``given`` can break: those
    false in a model, or where Z3 cannot tell, the ones it cannot tell of alone. Halves are asked in turn
    when the whole is undecided, so a few undecided goals among thousands cost a few queries each, not one
    query for every goal. Each query is a solver of its own, as they always were here (one solver under push
    and pop would put Z3 in its incremental mode, not measured on these queries)."""
    q = seeded(timeout)
    q.add(*given, z3.Not(z3.And([after[i] for i in asked])))
    r = q.check()
    if r == z3.unsat:
        return set()
    if r == z3.sat:  # (not just the false ones: one the model leaves undecided is not known to hold)
        m = q.model()
        return {i for i in asked if not z3.is_true(m.eval(after[i], model_completion=True))}
    if len(asked) == 1:
        return set(asked)  # undecided alone: not kept (the induction would not prove it either)
    half = len(asked) // 2
    return _broken(given, timeout, after, asked[:half]) | _broken(given, timeout, after, asked[half:])


def minimal(enc: AnyN, props: list[PropertyInfo], timeout: float | None) -> list[PropertyInfo]:
    """``props`` less each inferred one the others imply at the same CPUs (longest first): the same conjunction
    at every CPU, so still inductive, and fewer lines to read. The spec's claims are never dropped. Each is
    asked at the arbitrary CPU j (a pair at j and k, as a goal is), from the others at j and k: quantifier-free
    (a thousand pairs as ``ForAll`` hypotheses are not left to Z3's instantiation)."""
    base = enc.constraints()
    s = enc.fresh("")
    solver = Solver(timeout)
    keep = list(props)
    cpus = [enc.j, enc.k] if enc.pairwise else [enc.j]
    # (built once, not once for each question)
    goal = {q.name: _goal(enc, q, s) for q in props}
    held = {q.name: z3.And([enc.per_cpu_at(q, s, c) for c in cpus]) if q.role is not None else goal[q.name]
            for q in props}
    for p in sorted((p for p in props if p.name.startswith("inferred_")), key=lambda p: -len(p.doc)):
        others = [q for q in keep if q is not p]
        hyps = base + [enc.types_at(s, cpus)] + [held[q.name] for q in others]
        if solver.obligation(f"minimal.{p.name}", hyps, goal[p.name]).result == "unsat":
            keep = others
    return keep


def _goal(enc: AnyN, p: PropertyInfo, s: tuple) -> z3.BoolRef:
    try:
        return enc.goal(p, s)
    except Exception:  # noqa: BLE001 - a claim the any-N encoding cannot state is no candidate
        return z3.BoolVal(False)


def _holds(enc: AnyN, p: PropertyInfo, s: tuple) -> z3.BoolRef:
    try:
        return enc.holds(p, s)
    except Exception:  # noqa: BLE001 - a claim the any-N encoding cannot state is no candidate
        return z3.BoolVal(False)


__all__ = ["Inference", "houdini_any", "infer_point", "small_values"]
