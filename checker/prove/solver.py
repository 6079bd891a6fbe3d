# SPDX-License-Identifier: GPL-2.0-only
"""One place where Z3 is asked anything: limits, seeds, reasons, SMT-LIB files.

An obligation is ``hypotheses => goal``; it holds when ``hypotheses and
not goal`` is unsatisfiable. Every query has a limit; ``unknown`` is an
answer with a reason, never a pass. With ``emit_dir`` every query is also
written as an SMT-LIB2 file recording the expected answer, for any solver
to re-check.

Limits are Z3's resource limit (``rlimit``), not wall time: a query's
``timeout`` of S seconds is a budget of ``S * RLIMIT_PER_SECOND`` of Z3's
resource units, counted in the solver's own steps, so the same query gets
the same answer on an idle machine and on one running forty other jobs
(same input, same verdict). A wall-clock cap of ``WALL_GUARD`` times S
(at least ``WALL_GUARD_MIN`` seconds) stays behind it only so that a run cannot hang; when that cap is what
stops a query, the reason says so (and the verdict is inconclusive, as
for any limit). Every solver, optimiser and Spacer instance the prover
makes comes from ``seeded``, ``seeded_optimize`` or ``limit_spacer``
here, with the fixed random seed.

The seed is not all: Z3's answers in its shared context also depend on the
terms built there before (ids order its sums and its search). A model
shown to the user (``canonical_model``), Spacer's runs and the simplifier
of the invariants it prints therefore work in a context of their own
(``fresh_context``), so that they are the same whatever ran earlier in the
process (another pytest worker's order, another ``--workers`` schedule).
The rest of a point's work is the same for the same reason: each prove point
runs with a fresh context in place of Z3's shared one (``own_context``), so a
query that a limit ends, and Houdini's models, depend on the point alone.
"""
from __future__ import annotations

import contextlib
import functools
import gc
import hashlib
import re
import time
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any, Callable, Iterator, Sequence, TypeVar

import z3

import checker.interrupts as interrupts

#: Z3 resource units a second of ``timeout`` buys: about what Z3 5.4's SMT core counts in a second of
#: an idle core's work on the prover's queries (measured: 10 M/s on linear-arithmetic queries, 17 M/s in
#: Spacer). Only the ratio to the seconds a user writes depends on the machine; the verdict does not.
RLIMIT_PER_SECOND = 10_000_000
#: The wall-clock guard behind the resource limit, as a multiple of ``timeout`` and at least
#: ``WALL_GUARD_MIN`` seconds (a tiny budget is spent before Z3 counts much): reached only when the
#: machine gives Z3 under a thirtieth of a core (it does at a load of 40 on 2 cores), and then reported as the reason.
WALL_GUARD = 30
WALL_GUARD_MIN = 10.0
#: The reason of a call its resource limit ended.
RESOURCE_LIMIT = "resource limit (rlimit)"


def rlimit(timeout: float | None) -> int:
    """The resource budget for ``timeout`` seconds (0: none)."""
    return max(1, int(timeout * RLIMIT_PER_SECOND)) if timeout else 0


def _limit(obj: Any, timeout: float | None) -> Any:
    """``timeout``'s resource limit and wall guard on a Z3 solver, optimiser or Spacer (returned)."""
    if timeout:
        obj.set("rlimit", rlimit(timeout))
        obj.set("timeout", int(wall_guard(timeout) * 1000))
    return obj


def seeded(timeout: float | None, logic: str | None = None, ctx: z3.Context | None = None) -> z3.Solver:
    """A Z3 solver with the fixed seed and ``timeout``'s resource limit (``logic``: ``SolverFor``'s)."""
    s = z3.SolverFor(logic, ctx=ctx) if logic else z3.Solver(ctx=ctx)
    s.set("random_seed", 0)  # same input, same answer, same counterexample
    return _limit(s, timeout)


def seeded_optimize(timeout: float | None, ctx: z3.Context | None = None) -> z3.Optimize:
    """A Z3 optimiser with the fixed seed and ``timeout``'s resource limit (in ``ctx``, or the shared context)."""
    o = z3.Optimize(ctx=ctx)
    o.set("random_seed", 0)
    return _limit(o, timeout)


def limit_spacer(fp: z3.Fixedpoint, timeout: float | None) -> z3.Fixedpoint:
    """Spacer's seed and ``timeout``'s resource limit on ``fp``."""
    fp.set("spacer.random_seed", 0)
    return _limit(fp, timeout)


def lia_logic(bitvectors: bool) -> str | None:
    """``fresh_lia``'s logic: QF_LIA, or Z3's general solver for a spec with C's bit operators."""
    return None if bitvectors else "QF_LIA"


def fresh_context() -> z3.Context:
    """A Z3 context of its own for one query, which an interrupt reaches too (why: this module's text).
    Terms copied here (``translate``) get the same ids every time, whatever the shared context holds."""
    return interrupts.track(z3.Context())


@contextlib.contextmanager
def own_context() -> Iterator[z3.Context]:
    """Z3's shared context replaced by a fresh one (``fresh_context``) for the block: every term built
    with no ``ctx=`` lands there, with ids that depend on what the block built alone (and on nothing else:
    the cyclic garbage collector waits until the block ends). A term from outside the block cannot mix with
    one built inside (Z3 refuses it), so nothing is shared by accident."""
    # Python's cyclic collector is off in the block: Z3 gives a deleted term's id to the next term made, and
    # the collector runs (deleting the terms held in reference cycles) after a count of allocations that
    # depends on all the process did before, so with it on, ids, and so verdicts, depended on history
    # (measured: --prover infer proved percpu_eager B's claims or not depending on when a module was imported).
    collecting = gc.isenabled()
    gc.disable()
    old = z3.z3._main_ctx
    ctx = fresh_context()
    z3.z3._main_ctx = ctx
    try:
        yield ctx
    finally:
        z3.z3._main_ctx = old
        if collecting:
            gc.enable()


_F = TypeVar("_F", bound=Callable[..., Any])


def in_own_context(fn: _F) -> _F:
    """``fn`` run in ``own_context``: a prove point's verdict is the same whatever the process asked Z3
    before (same input, same verdict; see this module's text)."""
    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        with own_context():
            return fn(*args, **kwargs)
    return wrapper  # type: ignore[return-value]


def canonical_model(s: z3.Solver, timeout: float | None, logic: str | None = None) -> z3.ModelRef:
    """A model of ``s``'s (satisfiable) assertions that depends on them alone: the one found for their copy
    in a fresh context (``fresh_context``), translated back. Only a query whose model is shown pays for the
    second solve; if the copy is not answered sat within the limit, ``s``'s own model is the one shown."""
    ctx = fresh_context()
    fresh = seeded(timeout, logic, ctx)
    fresh.add([a.translate(ctx) for a in s.assertions()])
    if fresh.check() == z3.sat:
        return fresh.model().translate(z3.main_ctx())
    return s.model()


def wall_guard(timeout: float) -> float:
    """The wall-clock cap, in seconds, behind ``timeout``'s resource limit."""
    return max(timeout * WALL_GUARD, WALL_GUARD_MIN)


def unknown_reason(reason: str | bytes | None, seconds: float | None = None, timeout: float | None = None) -> str:
    """Z3's reason for ``unknown`` (or a canceled call) in the prover's words: which limit ended it. Z3 says
    "canceled" for both of its limits; the call's wall ``seconds`` against its guard tell them apart."""
    text = reason.decode() if isinstance(reason, bytes) else (reason or "unknown")
    if "resource limit" in text:
        return RESOURCE_LIMIT
    if "canceled" in text or text == "timeout":
        if timeout and seconds is not None and seconds < 0.9 * wall_guard(timeout):
            return RESOURCE_LIMIT
        return "wall-clock guard (the machine gave Z3 too little CPU; the resource limit was not reached)"
    return text


@dataclass
class Answer:
    """Z3's answer to one query: unsat (holds), sat (with a model) or unknown (with the reason)."""
    result: str  # "unsat" (the obligation holds), "sat" (a counterexample) or "unknown"
    #: The model of a sat answer, made when first asked (``canonical_model`` solves again: most callers
    #: want only the result).
    find_model: Callable[[], z3.ModelRef] | None = field(default=None, repr=False)
    reason: str | None = None
    seconds: float = 0.0

    @cached_property
    def model(self) -> z3.ModelRef | None:
        return self.find_model() if self.find_model is not None else None


@dataclass
class Solver:
    """Runs Z3 queries with a per-query limit (``timeout``: seconds of resource budget, see above), counting them and writing each as SMT-LIB when asked."""
    timeout: float | None = None  # seconds per query, as a resource budget (RLIMIT_PER_SECOND)
    emit_dir: Path | None = None
    queries: int = 0
    seconds: float = 0.0
    files: list[Path] = field(default_factory=list)

    def _new(self, timeout: float | None = None) -> z3.Solver:
        s = seeded(timeout or self.timeout)
        # Z3's incremental core, not the tactic its first check picks for a formula with bounds on every
        # integer (which blasts QF_LIA to bits): the counter tree's carry step at 5 CPUs, asked in its
        # cases, unsat in 0.5-30 s a step this way; 25-86 s, or undecided at the limit, the other way.
        s.push()
        return s

    def fresh_lia(self, bitvectors: bool = False) -> z3.Solver:
        """A non-incremental solver for one query over linear integer arithmetic; with
        ``bitvectors`` (a spec with C's bit operators: int2bv and bv2int terms) Z3's general
        solver, since the QF_LIA configuration does not take bit-vector terms."""
        return seeded(self.timeout, lia_logic(bitvectors))

    def obligation(self, name: str, hyps: list[Any], goal: Any, cases: Sequence[Any] = ()) -> Answer:
        """Does ``hyps => goal`` hold? ``name`` labels an emitted file. With a step's ``cases``
        (``checker.prove.cases``) it is asked in each case first, and whole only if Z3 cannot decide one."""
        a = self._in_cases(name, hyps, goal, cases)
        return a if a is not None and a.result != "unknown" else self._whole(name, hyps, goal)

    def _whole(self, name: str, hyps: list[Any], goal: Any, timeout: float | None = None) -> Answer:
        s = self._new(timeout)
        s.add(*hyps)
        s.add(z3.Not(goal))
        return self._run(s, name, expect="unsat")

    def _in_cases(self, name: str, hyps: list[Any], goal: Any, cases: Sequence[Any],
                  timeout: float | None = None) -> Answer | None:
        """``hyps => goal`` asked in each of ``cases``: unsat if it holds in each, a case's counterexample (one
        of the whole question), or unknown; None when there is one case or less, or with ``emit_dir`` (a file
        an obligation)."""
        if len(cases) < 2 or self.emit_dir is not None:
            return None
        spent = 0.0
        for case in cases:
            a = self._whole(name, [*hyps, case], goal, timeout)
            spent += a.seconds
            if a.result != "unsat":
                return a
        return Answer("unsat", seconds=spent)

    def obligations(self, names: list[str], hyps: list[Any], goals: list[Any], cases: Sequence[Any] = ()
                    ) -> list[Answer]:
        """``obligation`` for each goal under the same hypotheses: asked ``together`` first, and one by one
        only if they do not all hold (then each answer, and each counterexample, is that goal's own)."""
        return (self.together(hyps, goals, cases)
                or [self.obligation(n, hyps, g, cases) for n, g in zip(names, goals)])

    def together(self, hyps: list[Any], goals: list[Any], cases: Sequence[Any] = ()) -> list[Answer] | None:
        """Each goal's ``unsat`` answer if one query shows that ``hyps`` imply them all, else None. A step's
        obligations are nearly all proved, and one query costs about what each of its parts does. None too
        with ``emit_dir`` (a file an obligation, as the reports name them) or fewer than two goals. With
        ``cases``, asked only in them: a case Z3 cannot decide goes to the goals one by one, not to the whole
        question of them all (the hardest of all: the counter tree's add at 6 CPUs). A shortcut, so with a
        quarter of the budget: each goal has the whole budget again (the tree's laws at 5 CPUs: the joint
        question undecided after 593 s, each goal alone unsat in 29 s)."""
        if len(goals) < 2 or self.emit_dir is not None:
            return None
        quarter = self.timeout / 4 if self.timeout else None
        both = (self._in_cases("together", hyps, z3.And(goals), cases, quarter)
                or self._whole("together", hyps, z3.And(goals), quarter))
        return [Answer("unsat", seconds=both.seconds / len(goals)) for _ in goals] if both.result == "unsat" else None

    def satisfiable(self, name: str, constraints: list[Any]) -> Answer:
        s = self._new()
        s.add(*constraints)
        return self._run(s, name, expect=None)

    def _run(self, s: z3.Solver, name: str, expect: str | None) -> Answer:
        t0 = time.perf_counter()
        r = s.check()
        interrupts.check()  # an interrupt a destructor swallowed (z3's dec_ref) still ends the run
        dt = time.perf_counter() - t0
        self.queries += 1
        self.seconds += dt
        if self.emit_dir is not None:
            self._emit(s, name, expect, str(r))
        if r == z3.unsat:
            return Answer("unsat", seconds=dt)
        if r == z3.sat:
            # The obligation's counterexample is shown: taken from the query alone (canonical_model).
            return Answer("sat", (lambda: canonical_model(s, self.timeout)) if expect == "unsat" else s.model,
                          seconds=dt)
        return Answer("unknown", reason=unknown_reason(s.reason_unknown(), dt, self.timeout), seconds=dt)

    def _emit(self, s: z3.Solver, name: str, expect: str | None, got: str) -> None:
        self.emit_dir.mkdir(parents=True, exist_ok=True)
        safe = re.sub(r"[^A-Za-z0-9_.=-]+", "_", name).strip("_")
        if len(safe) > 200:  # a file name has 255 bytes: keep the spec, the obligation, and a hash of the rest
            digest = hashlib.sha1(safe.encode()).hexdigest()[:12]
            safe = f"{safe[:60]}.{digest}.{safe[-120:]}"
        path = self.emit_dir / f"{safe}.smt2"
        header = [f"; countercheck obligation: {name}"]
        if expect == "unsat":
            header.append("; expected: unsat (unsat means the obligation holds)")
        header.append(f"; z3 answered: {got}")
        path.write_text("\n".join(header) + "\n" + s.to_smt2())
        self.files.append(path)
