# SPDX-License-Identifier: GPL-2.0-only
"""The Z3 backend: the same specs, proved for every CPU count of a range.

``prove_checks`` runs a spec's prove sweep: inductive proofs (any-N when the
spec's code allows it, per-N otherwise), and its witnesses by construction.
``bmc_checks`` runs bounded model checking at concrete points, ``pdr_checks``
IC3/PDR (Spacer) at one, with no lemmas from the spec. Each returns
``Check`` values like the explorer's, with ``backend="z3"``.
"""
from __future__ import annotations

import itertools
from dataclasses import replace
import time
from pathlib import Path
from typing import Any, Callable

import z3

from checker.errors import CheckerError, SpecError, UsageError
from checker.prove import sweep
from checker.prove.bmc import bmc
from checker.prove.construct import replay
from checker.prove.encoding import AnyN, PerN
from checker.prove.fixed import check_ladder, claims_of
from checker.prove.houdini import symmetric_role
from checker.prove.inductive import Proof, prove_invariants
from checker.prove.solver import Solver, in_own_context
from checker.prove.symstate import NotParametric
from checker.report.trace import list_lines, shown_trace
from checker.result import HOLDS, INCONCLUSIVE, VIOLATED, Check
from checker.language.compile import Model
from checker.language.model import info, resolve_params
from checker.symbolic.term import Sym, SymbolicBranch, SymbolicIndex

_NOT_PARAMETRIC = {SymbolicBranch: "decides a condition on a symbolic parameter with Python",
                   SymbolicIndex: "uses a symbolic parameter as a Python index or range bound"}

#: A contiguous run of at least this many values is proved as one symbolic range.
RANGE_MIN = 3
#: Seconds the per-N fallback may spend on one range before giving up.
PER_N_BUDGET = 60.0


def _is_range(vals: tuple) -> bool:
    return len(vals) >= RANGE_MIN and all(isinstance(v, int) for v in vals) and \
        list(vals) == list(range(vals[0], vals[0] + len(vals)))


def _axes(cls: type, sets: dict[str, tuple]) -> list[tuple[str, list[Any]]]:
    """Per parameter, the prove-mode choices: ints, ("range", lo, hi), "symbolic", "default"."""
    si = info(cls)
    axes = []
    for name, p in si.params.items():
        vals = sets.get(name, p.prove)
        if vals is None:
            axes.append((name, ["default"]))
        elif _is_range(tuple(vals)):
            axes.append((name, [("range", vals[0], vals[-1])]))
        else:
            axes.append((name, list(vals)))
    return axes


def _bind(cls: type, choice: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any], list[z3.BoolRef], bool]:
    """Values (ints or Z3 terms), what to print for each, constraints, whether any is symbolic."""
    si = info(cls)
    values: dict[str, Any] = {}
    shown: dict[str, Any] = {}
    constraints: list[z3.BoolRef] = []
    symbolic = False

    class Partial:
        def __getattr__(self, k: str) -> Any:
            return values[k]

    for name, p in si.params.items():
        c = choice[name]
        if isinstance(c, tuple) and c[0] == "range":
            x = z3.Int(name)
            constraints += [x >= c[1], x <= c[2]]
            values[name], shown[name], symbolic = Sym(x), f"{c[1]}..{c[2]}", True
        elif c == "symbolic":
            x = z3.Int(name)
            if isinstance(p.domain, range):
                constraints += [x >= p.domain.start, x <= p.domain.stop - 1]
            values[name], shown[name], symbolic = Sym(x), "symbolic", True
        elif c == "default":
            if p.derived:
                v = p.default(Partial())
                if isinstance(v, Sym):
                    values[name], shown[name] = v, "default"
                else:
                    values[name] = shown[name] = v
            else:
                values[name], shown[name] = p.default, p.show(p.default)
        else:
            if not p.valid(c):
                raise UsageError(f"{cls.spec_name}: parameter {name}={c!r} is outside its domain "
                                 f"({p.describe_domain()})")
            values[name], shown[name] = c, p.show(c)
    return values, shown, constraints, symbolic


def prove_checks(cls: type, sets: dict[str, tuple] | None = None, *, smt_timeout: float | None = None,
                 emit_dir: Path | None = None, run: int = 0,
                 progress: Callable[[str], Callable[[int, int], None] | None] | None = None,
                 cluster: str | None = None, warn: Callable[[str], None] | None = None,
                 infer: bool = False) -> list[Check]:
    """Inductive proofs over the prove sweep, and witnesses by construction.

    ``infer``: the spec's lemmas are left out and invariants inferred from IC3/PDR at small CPU counts
    take their place (``checker.prove.infer``); every one is proved again by the induction.

    ``progress(label)`` gives a callback told the obligations done of total at each point.
    With ``cluster``, the points of a per-N fallback are proved on Ray tasks. ``warn`` is told each claim
    the any-N encoding cannot state (it iterates over CPUs), so that none is left out silently."""
    sets = sets or {}
    si = info(cls)
    checks: list[Check] = []
    # A bug spec inherits a correct spec's strengthening, which its bug breaks:
    # it is checked by exploration, BMC and its witnesses, not by induction.
    # With ``infer``, a spec with a prove sweep (a parameter's prove=) needs no inductive invariant of its own.
    has_proof = (any(p.inductive for p in si.properties.values())
                 or infer and any(p.prove is not None for p in si.params.values())) and not cls.expect_violated
    if has_proof:
        axes = _axes(cls, sets)
        names = [n for n, _ in axes]
        hints: list = []  # with infer: each point's laws, tried first at the next (checker.prove.laws)
        for combo in itertools.product(*(v for _, v in axes)):
            checks += _prove_point(cls, dict(zip(names, combo)), smt_timeout, emit_dir, run, progress, cluster,
                                   infer, hints)
    if warn is not None:
        dropped: dict[str, tuple[str, int]] = {}
        for c in checks:
            for name, why in c.extra.get("not_parametric", {}).items():
                dropped[name] = (why, dropped.get(name, (why, 0))[1] + 1)
        for name, (why, n) in dropped.items():
            warn(f"{cls.spec_name}.{name} is not proved for every CPU count ({n} prove point{'s' * (n != 1)}): "
                 f"it {why}, which the any-N encoding cannot state; the explorer checks it at its explore points")
    for wname, fn in si.witnesses.items():
        checks += _witness_checks(cls, wname, fn, sets, run)
    if cls.lemmas is not None:  # lemmas the spec's abstraction rests on (bit-vector facts about a word)
        checks += cls.lemmas.checks(cls.spec_name, timeout=smt_timeout, run=run)
    if cls.bmc is not None:  # the spec asks for bounded model checking in every prove run
        depth, at = cls.bmc
        at = {k: tuple(sets.get(k, v)) for k, v in at.items()}
        names = list(at)
        for combo in itertools.product(*(at[n] for n in names)):
            checks += bmc_checks(cls, resolve_params(cls, dict(zip(names, combo))), depth,
                                 smt_timeout=smt_timeout, run=run)
    return checks


@in_own_context
def _prove_point(cls: type, choice: dict[str, Any], smt_timeout: float | None, emit_dir: Path | None,
                 run: int, progress: Any = None, cluster: str | None = None, infer: bool = False,
                 hints: list | None = None) -> list[Check]:
    """One point's checks. ``hints``: the laws the point before found (``checker.prove.laws``), tried first
    where the laws route runs, and replaced by this point's."""
    si = info(cls)
    solver = Solver(smt_timeout, emit_dir)
    t0 = time.perf_counter()
    try:
        values, shown, constraints, symbolic = _bind(cls, choice)
    except (SymbolicBranch, SymbolicIndex, TypeError) as e:
        # A derived parameter computed by Python code that needs a number (``tree(p.ncpus)[1]``): it
        # cannot be a term of a symbolic range, so each value of the range is a point of its own.
        if not any(isinstance(c, tuple) or c == "symbolic" for c in choice.values()):
            raise
        derived = [n for n, p in si.params.items() if p.derived and choice.get(n) == "default"]
        why = (f"derives {', '.join(derived) or 'a parameter'} with Python code that needs a number"
               + (f" ({type(e).__name__}: {e})" if str(e) else ""))
        tag = cls.spec_name + "." + ".".join(f"{k}={_shown(v)}" for k, v in choice.items())
        proofs, method, shown = _per_n_fallback(cls, choice, solver, tag, why, progress, cluster, infer)
        return _proof_checks(cls, proofs, method, shown, time.perf_counter() - t0, run)
    tag = cls.spec_name + "." + ".".join(f"{k}={v}" for k, v in shown.items())
    if symbolic:
        role = next(iter(si.roles), None)
        if role is None:
            raise SpecError(f"{cls.__name__}: a symbolic proof needs a CPU role", file=si.file, line=si.line)
        size_param = si.roles[role].count
        size = values[size_param] if isinstance(size_param, str) else size_param
        size_z = size.z if isinstance(size, Sym) else z3.IntVal(size)
        try:
            enc = AnyN(cls, values, shown, role, size_z, constraints)
            if infer:
                from checker.prove.infer import infer_point

                inference = infer_point(cls, enc, choice, smt_timeout, tag, progress and progress(tag))
                checks = _proof_checks(cls, inference.proofs, "inferred", shown, time.perf_counter() - t0, run)
                return _inferred_text(checks, inference)
            proofs = prove_invariants(enc, enc.properties, solver, tag, progress and progress(tag))
            method = "parametric"
        except (NotParametric, SymbolicBranch, SymbolicIndex) as e:
            fallback_reason = str(e) or _NOT_PARAMETRIC[type(e)]
            if infer:
                fallback_reason += ("; lemmas left out, each point strengthened by the modular facts and "
                                    "conservation laws found there (checker.prove.laws)")
            proofs, method, shown = _per_n_fallback(cls, choice, solver, tag, fallback_reason, progress, cluster,
                                                    infer)
    else:
        model = Model(cls, resolve_params(cls, values))
        if infer:  # one point: its lemmas left out, the facts and laws found there in their place
            inference = _infer_at_size(cls, model, choice, values, shown, constraints, smt_timeout, tag, progress)
            if inference is not None:
                # The claims the any-N encoding cannot state (they iterate over CPUs) are proved at the point:
                # with the inferred invariants placed at its CPUs, else with the facts and laws found there.
                rest = sorted({n for pr in inference.proofs.values() for n in pr.not_parametric})
                for pr in inference.proofs.values():
                    pr.not_parametric.clear()
                count = f"{len(model.roles[symmetric_role(model)])} CPUs"
                checks = _inferred_text(_proof_checks(cls, inference.proofs, "inferred-at-point", shown,
                                                      time.perf_counter() - t0, run), inference, count)
                proved = [n for n, pr in inference.proofs.items() if pr.verdict == HOLDS]
                placed = _placed_proofs(model, rest, proved, inference.found, solver, tag)
                checks += _proof_checks(cls, placed, "inferred-at-point", shown, time.perf_counter() - t0, run)
                left = [n for n in rest if n not in placed]
                if left:
                    free = _lemma_free(model, solver, tag, progress, hints)
                    at_point = {n: free.proofs[n] for n in left if n in free.proofs}
                    checks += _proof_checks(cls, _laws_notes(free, at_point), "per-n-laws", shown,
                                            time.perf_counter() - t0, run)
                return checks
            free = _lemma_free(model, solver, tag, progress, hints)
            proofs, method = _laws_notes(free, free.proofs), "per-n-laws"
        else:
            proofs = prove_invariants(PerN(model), list(model.properties), solver, tag,
                                      progress and progress(tag))
            method = "per-n"
    note = None
    if not symbolic and model.scheduler is not None:
        note = model.scheduler.bounds_note()  # a proof of the task model's bounded scheduler
    return _proof_checks(cls, proofs, method, shown, time.perf_counter() - t0, run, note)


def _lemma_free(model: Model, solver: Solver, tag: str, progress: Any, hints: list | None) -> Any:
    """``prove_lemma_free`` at the point, the point before's laws (``hints``) tried first and replaced by its own."""
    from checker.prove.laws import prove_lemma_free

    free = prove_lemma_free(model, solver, tag, progress and progress(tag), hints=hints or ())
    if hints is not None:
        hints[:] = free.laws.portable
    return free


def _laws_notes(free: Any, proofs: dict[str, Proof]) -> dict[str, Proof]:
    """``proofs`` (of the laws route at a point, ``free``) with a note of what strengthened them."""
    for pr in proofs.values():
        pr.notes.append(f"lemmas left out; strengthened by {free.facts} modular facts and {len(free.kept)} "
                        f"conservation laws found at the point, proved again by induction: " + "; ".join(free.kept))
    return proofs


def _placed_proofs(model: Model, names: list[str], proved: list[str], found: list[Any], solver: Solver,
                   tag: str) -> dict[str, Proof]:
    """The claims ``names`` at ``model``'s point proved by the induction with what the any-N induction proved
    at its CPU count (the claims ``proved``, and the inferred invariants ``found`` placed at its CPUs), all of
    it proved again here as one inductive strengthening: those that hold."""
    from checker.prove.generalise import at_point
    from checker.prove.horn import slot_invariant

    if not names or not found:
        return {}
    enc = PerN(model)
    prop = slot_invariant(enc, z3.And(at_point(model, found, held=True)), "inferred_at_point",
                          "the invariants inferred at one CPU, placed at this point's CPUs")
    asked = [replace(p, inductive=True) if p.name in proved else p for p in model.properties
             if p.name in names or p.name in proved]
    proofs = prove_invariants(enc, asked + [prop], solver, f"{tag}.placed")
    if proofs.pop(prop.name).verdict != HOLDS:
        return {}
    out = {n: pr for n, pr in proofs.items() if n in names and pr.verdict == HOLDS}
    for pr in out.values():
        pr.notes.append("lemmas left out; proved with the invariants inferred at one CPU, kept by the induction "
                        "at this point's CPU count, placed at its CPUs and proved again here")
    return out


def _infer_at_size(cls: type, model: Model, choice: dict[str, Any], values: dict[str, Any], shown: dict[str, Any],
                   constraints: list[z3.BoolRef], smt_timeout: float | None, tag: str, progress: Any) -> Any:
    """``--prover infer`` at a point of fixed values whose CPUs are one symmetric role: its claims proved with
    invariants inferred at one CPU and read for any CPU (``checker.prove.infer``), Houdini and the any-N
    induction asked at this point's count; None where that encoding does not apply or leaves a claim open
    (the facts and laws found at the point are asked then)."""
    from checker.prove.infer import infer_point

    role = symmetric_role(model)
    if role is None or len(model.roles[role]) < 2:
        return None  # (at one CPU the point's own facts are as quick)
    try:
        enc = AnyN(cls, values, shown, role, z3.IntVal(len(model.roles[role])), constraints)
        inference = infer_point(cls, enc, choice, smt_timeout, tag, progress and progress(tag))
    except (NotParametric, SymbolicBranch, SymbolicIndex):
        return None
    return inference if all(pr.verdict == HOLDS for pr in inference.proofs.values()) else None


def _proof_checks(cls: type, proofs: dict[str, Proof], method: str, shown: dict[str, Any], seconds: float,
                  run: int, note: str | None = None) -> list[Check]:
    """One check per proof; ``note``: the task model's bounds a holding proof is under."""
    si = info(cls)
    out = []
    for name, pr in proofs.items():
        p = si.properties.get(name)
        cti = pr.cti or {}
        trace = cti.get("trace", [])
        check = Check(
            spec=cls.spec_name, file=p.file if p else si.file, line=p.line if p else si.line, params=dict(shown),
            property=name, kind="proof", backend="z3", verdict=pr.verdict, expected=HOLDS, reason=pr.reason,
            symmetry=False, seconds=seconds, run=run, initial_state=cti.get("initial_state"), trace=trace,
            doc=(p.doc if p else _BUILTIN_DOC.get(name, "")),
            extra={"obligations": pr.obligations, "solver_seconds": round(pr.seconds, 6), "method": method,
                   **({"broken": cti["broken"]} if cti else {}), **({"notes": pr.notes} if pr.notes else {}),
                   **({"bounded": note} if note and pr.verdict == HOLDS else {}),
                   **({"not_parametric": dict(pr.not_parametric)} if pr.not_parametric else {})})
        if cti:
            check.trace_text = _cti_text(cti, cls)
        out.append(check)
    return out


def _inferred_text(checks: list[Check], inference: Any, counts: str = "every CPU count") -> list[Check]:
    """What was inferred, on every check of the point; printed once, under the first claim it proves.
    ``counts``: the CPU counts the induction covered (a fixed point: its own)."""
    shown = False
    for c in checks:
        c.extra.update({"inferred": inference.kept, "candidates": inference.asked, "fixed_size": inference.sizes})
        c.extra["notes"] = c.extra.get("notes", []) + [
            f"lemmas left out; {len(inference.kept)} of {inference.asked} candidate invariants inferred from "
            f"IC3/PDR ({'; '.join(inference.sizes)}) are inductive for {counts} and strengthen the proof"]
        if c.verdict == HOLDS and not shown and c.property not in ("types", "sum_lemma"):
            shown = True
            c.trace_text = ([f"proved with {len(inference.kept)} inferred invariants (lemmas left out), each proved "
                             f"again by induction for {counts}:"]
                            + [f"  {line}" for line in inference.kept])
    return checks


_BUILTIN_DOC = {
    "types": "every variable stays within its declared type (enum, bool, CPU id)",
    "sum_lemma": "N values each within [lo, hi] sum to within [N*lo, N*hi]; each declared per-CPU bound holds",
}


def _cti_text(cti: dict[str, Any], cls: type | None = None) -> list[str]:
    """The counterexample to induction, its values shown as the explorer's traces show them."""
    show = _shower(cls)
    before = ", ".join(f"{k}={show(k, v)}" for k, v in cti["initial_state"].items())
    if cti.get("initial"):
        return [f"violated in an initial state: {before}"]
    lines = [f"counterexample to induction (the state before may be unreachable); breaks {cti['broken']}",
             f"before: {before}"]
    for st in cti["trace"]:
        who = "-" if st.cpu is None else f"cpu{st.cpu}"
        args = ", ".join(f"{k}={v}" for k, v in st.choices.items())
        ch = ", ".join(f"{k}: {show(k, cti['initial_state'].get(k))} -> {show(k, v)}" for k, v in st.changes.items())
        lines.append(f"1  {who}  {st.action}({args})  {ch}")
    return lines


def _shower(cls: type | None) -> Callable[[str, Any], str]:
    """``show(key, value)``: an enum value by name, no CPU as ``-``, a CPU id as ``cpu1`` (``local[1]`` is
    a slot of ``local``); a parameter or an unknown name as the number."""
    variables = info(cls).vars if cls is not None else {}

    def show(key: str, v: Any) -> str:
        var = variables.get(key.split("[", 1)[0])
        if var is None or not isinstance(v, int):
            return str(v)
        return var.type.show(v)

    return show


def _per_n_fallback(cls: type, choice: dict[str, Any], solver: Solver, tag: str, why: str,
                    progress: Any = None, cluster: str | None = None,
                    infer: bool = False) -> tuple[dict[str, Proof], str, dict[str, Any]]:
    """Prove each concrete point of the ranges, within a time budget (on Ray tasks with ``cluster``);
    ``progress`` is told the points done of total. ``infer``: each point without its lemmas
    (``checker.prove.laws``)."""
    axes = []
    for name, c in choice.items():
        if isinstance(c, tuple) and c[0] == "range":
            axes.append((name, list(range(c[1], c[2] + 1))))
        elif c == "symbolic":
            proofs = {"any": Proof("any", verdict=INCONCLUSIVE,
                                   reason=f"not_parametric: {why}; parameter {name} is symbolic with no range")}
            return proofs, "per-n", {k: _shown(v) for k, v in choice.items()}
        else:
            axes.append((name, [c]))
    names = [n for n, _ in axes]
    merged: dict[str, Proof] = {}
    done = 0
    points = [{n: v for n, v in zip(names, combo) if v != "default"}
              for combo in itertools.product(*(v for _, v in axes))]
    last: dict[str, Any] = {}
    told = progress and progress(f"{tag}: per-N points")
    # In the points' order, here or on Ray tasks: the first point that fails gives the verdict.
    answers = sweep.answers(cls, points, solver.timeout, solver.emit_dir, tag, cluster, infer)
    for done, (proofs, last) in sweep.budgeted(answers, len(points), PER_N_BUDGET):  # noqa: B007 (last: read after)
        if told:
            told(done, len(points))
        for name, pr in proofs.items():
            m = merged.setdefault(name, Proof(name))
            m.obligations += pr.obligations
            m.seconds += pr.seconds
            if infer:  # what each point was strengthened with, point by point
                m.notes += [n for n in pr.notes if n not in m.notes]
            if m.verdict == HOLDS and pr.verdict != HOLDS:
                m.verdict, m.reason, m.cti = pr.verdict, pr.reason, pr.cti
    if done < len(points):
        for m in merged.values():
            if m.verdict == HOLDS:
                m.verdict, m.reason = INCONCLUSIVE, f"per_n_budget: proved {done} of {len(points)} points"
    for m in merged.values():
        m.notes.append(f"per-N sweep ({done} points): the any-N encoding does not apply because the spec {why}")
    shown = {k: (_shown(v) if isinstance(v, tuple) else last.get(k, v)) for k, v in choice.items()}
    return merged, "per-n-laws" if infer else "per-n", shown


def _shown(choice: Any) -> Any:
    return f"{choice[1]}..{choice[2]}" if isinstance(choice, tuple) else choice


def _witness_checks(cls: type, wname: str, fn: Any, sets: dict[str, tuple], run: int) -> list[Check]:
    si = info(cls)
    meta = fn.__countercheck_witness__
    at = dict(meta["at"])
    for k, v in sets.items():  # a value set on the command line replaces the witness's own
        if not _is_range(tuple(v)) and all(isinstance(x, int) for x in v):
            at[k] = tuple(v)
    names = list(at)
    checks = []
    for combo in itertools.product(*(at[n] for n in names)):
        params = resolve_params(cls, dict(zip(names, combo)))
        if meta.get("applies") is not None and not meta["applies"](params):
            continue
        model = Model(cls, params)
        present = {q.name for q in model.properties}
        if not all(n in present for n in (*meta["reaches"], *meta["violates"])):
            if all(n in si.properties for n in (*meta["reaches"], *meta["violates"])):
                continue  # a point (set on the command line) where its properties do not apply
        t0 = time.perf_counter()
        r = replay(model, fn)
        dt = time.perf_counter() - t0
        for pname, kind in [(n, "sometimes") for n in meta["reaches"]] + [(n, "invariant") for n in meta["violates"]]:
            p = next((q for q in model.properties if q.name == pname), None)
            if p is None:
                raise SpecError(f"witness {wname} names property {pname!r}, which does not apply at {params}",
                                file=si.file, line=si.line)
            value = bool(p.fn(r.final))
            if kind == "sometimes":
                verdict = HOLDS if value else INCONCLUSIVE
            else:
                verdict = VIOLATED if not value else INCONCLUSIVE
            check = Check(
                spec=cls.spec_name, file=p.file, line=p.line, params=params.shown(), property=pname, kind=kind,
                backend="z3", verdict=verdict, expected=p.expect,
                reason=None if verdict != INCONCLUSIVE else f"witness {wname} did not reach it",
                seconds=dt, run=run, initial_state=model.state_dict(model.initial_states()[0]), trace=r.trace,
                doc=p.doc, extra={"method": "construction", "witness": wname, "steps": r.steps,
                                  "final": {n: v for n, v in model.state_dict(r.final).items()
                                            if n not in model.tupled},
                                  "obligations": None, "solver_seconds": 0.0})
            check.trace_shown = shown_trace(model, check.initial_state, r.trace)
            check.trace_text = list_lines(check.trace_shown)
            checks.append(check)
    return checks


@in_own_context
def bmc_checks(cls: type, params: Any, k: int, *, smt_timeout: float | None = None, run: int = 0) -> list[Check]:
    """Bounded model checking of every property at one concrete point."""
    model = Model(cls, params)
    solver = Solver(smt_timeout)
    t0 = time.perf_counter()
    try:
        outcomes, exhausted, init = bmc(model, k, solver)
    except z3.Z3Exception as e:  # pragma: no cover - an encoding problem is our bug, with context
        raise CheckerError(f"{cls.spec_name}: BMC failed: {e}") from None
    dt = time.perf_counter() - t0
    si = info(cls)
    props = {p.name: p for p in model.properties}
    out = []
    for name, o in outcomes.items():
        p = props.get(name)
        expected = p.expect if p else si.builtin_expect.get(name, HOLDS)
        start = o.initial_state or init  # with an uninitialised variable: the value Z3 found
        check = Check(
            spec=cls.spec_name, file=p.file if p else si.file, line=p.line if p else si.line,
            params=params.shown(), property=name, kind=o.kind, backend="z3", verdict=o.verdict,
            expected=expected, reason=o.reason, seconds=dt, run=run, depth=k, initial_state=start, trace=o.trace,
            doc=p.doc if p else "", bug=name in cls.expect_violated, computed=params.computed,
            extra={"method": "bmc", "exhausted": exhausted, "obligations": solver.queries,
                   "solver_seconds": round(solver.seconds, 6)})
        note = model.scheduler.bounds_note() if model.scheduler is not None else None
        if note and ((o.verdict == HOLDS and o.kind != "sometimes") or (o.verdict == "violated" and o.kind == "sometimes")):
            check.extra["bounded"] = note  # the runs of the task model's bounded scheduler only
        if o.trace:
            check.trace_shown = shown_trace(model, start, o.trace)
            check.trace_text = list_lines(check.trace_shown)
        out.append(check)
    return out


@in_own_context
def pdr_checks(cls: type, params: Any, *, smt_timeout: float | None = None, run: int = 0) -> list[Check]:
    """IC3/PDR of every invariant at one concrete point, lemmas left out (``checker.prove.fixed``)."""
    model = Model(cls, params)
    claims = claims_of(model)
    lemmas = [p.name for p in model.properties if p.kind == "invariant" and p not in claims]
    try:
        verdicts = check_ladder(model, claims, smt_timeout)
    except z3.Z3Exception as e:  # pragma: no cover - an encoding problem is our bug, with context
        raise CheckerError(f"{cls.spec_name}: IC3/PDR failed: {e}") from None
    si = info(cls)
    start = model.state_dict(model.initial_states()[0])
    out = []
    held = [q.name for q in claims if verdicts[q.name].verdict == HOLDS]
    # One invariant proves them all (the last is the largest: it includes the earlier ones): shown once.
    shown = max(held, key=lambda n: len(verdicts[n].invariant), default=None)
    for p in claims:
        v = verdicts[p.name]
        extra: dict[str, Any] = {"method": "pdr", "solver_seconds": round(v.seconds, 6)}
        if lemmas:
            extra["lemmas_left_out"] = lemmas
        if v.invariant and v.verdict == HOLDS:
            extra["invariant"] = v.invariant
        check = Check(
            spec=cls.spec_name, file=p.file or si.file, line=p.line or si.line, params=params.shown(),
            property=p.name, kind="invariant", backend="z3", verdict=v.verdict, expected=p.expect, reason=v.reason,
            seconds=v.seconds, run=run, depth=len(v.trace) if v.verdict == VIOLATED else None,
            initial_state=start, trace=v.trace, doc=p.doc, bug=p.name in cls.expect_violated,
            computed=params.computed, extra=extra)
        if v.verdict == VIOLATED:
            check.trace_shown = shown_trace(model, start, v.trace)
            check.trace_text = list_lines(check.trace_shown)
        elif p.name == shown:
            check.trace_text = ([f"an inductive invariant found by IC3/PDR and proved again by induction; it "
                                 f"implies {', '.join(held)}" + (f" (lemmas left out: {', '.join(lemmas)})"
                                                                 if lemmas else "")]
                                + [f"  {line}" for line in v.invariant])
        out.append(check)
    return out
