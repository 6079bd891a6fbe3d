# SPDX-License-Identifier: GPL-2.0-only
"""Exhaustive explicit-state exploration.

``explore(spec)`` runs one spec at one parameter point and returns an
``Exploration``: statistics and a verdict for every property, with the
shortest trace for each violation and each ``sometimes`` witness.
"""
from __future__ import annotations

from pathlib import Path
from typing import Callable

from checker.errors import UsageError
from checker.explore.paths import concrete_trace
from checker.explore.search import SearchState, search
from checker.result import HOLDS, INCONCLUSIVE, VIOLATED, Exploration, Outcome, StopReason
from checker.language.compile import Model
from checker.language.model import Spec

DEADLOCK = "no_deadlock"


def explore(spec: Spec | Model, *, symmetry: bool = True, max_states: int | None = None,
            timeout: float | None = None, check_symmetry: bool = True,
            progress: Callable[[SearchState], None] | None = None, jobs: int | None = None,
            cluster: str | None = None, checkpoint: Path | None = None, resume: bool = False,
            fingerprint: bool = False, engine: str = "interpreted", max_memory: int | None = None,
            por: bool = False) -> Exploration:
    """Explore every reachable state of ``spec`` (a bound spec or a model).

    ``max_states`` and ``timeout`` (seconds) stop the search early: a
    violation or a reached ``sometimes`` found before then is final, while
    anything that needed the whole state space becomes ``inconclusive``.
    ``jobs`` > 1 runs the search on that many processes, with the same result;
    ``cluster`` (``"ray"`` or ``"ray://HOST:PORT"``) runs them as Ray actors
    (``jobs`` defaulting to the cluster's CPUs): with ``engine`` compiled or auto, each actor runs the
    generated program (``checker.compiled.ray_search``; the note says ``compiled on N Ray actors``). ``checkpoint`` (a directory)
    saves every whole BFS level; ``resume`` continues from the last one saved.
    ``fingerprint`` stores 64-bit hashes of the states (see ``search``).
    ``engine``: ``"interpreted"``, ``"compiled"`` (generated C, ``checker.compiled``; the same states,
    verdicts and traces) or ``"auto"`` (compiled once a point outgrows the interpreter);
    ``max_memory`` (bytes) bounds the compiled search. ``por``: partial-order reduction on the compiled
    engine (checker/compiled/ample.py): the same verdicts, traces perhaps longer (the note says so).
    """
    model = spec if isinstance(spec, Model) else Model(spec)
    pool = None
    if cluster is not None:
        import checker.cluster as ray_cluster
        from checker.explore.ray_pool import RayPool

        ray_cluster.connect(ray_cluster.parse_cluster(cluster))
        pool = RayPool
        jobs = jobs or ray_cluster.cluster_cpus()
    jobs = jobs or 1
    used, note = "interpreted", None
    # the compiled engine runs --jobs on threads, --fingerprint and --checkpoint on one; not two of them at once
    compiled_ok = engine != "interpreted" and pool is None and sum((jobs > 1, fingerprint, checkpoint is not None)) <= 1
    if engine == "compiled" and not compiled_ok:
        what = "--cluster" if pool is not None else "--jobs with --checkpoint" if jobs > 1 else \
            "--fingerprint with --checkpoint"
        note = f"interpreted: {what} (the compiled engine does not run it)"
    threads = jobs if compiled_ok else 1
    st = None
    if pool is not None and engine != "interpreted" and not (fingerprint or checkpoint is not None or por):
        # the compiled search on Ray actors (checker/compiled/ray_search.py); a point it cannot run goes to
        # the interpreter's actors below, saying why
        st, note = _compiled_on_ray(model, jobs, symmetry=symmetry, max_states=max_states, timeout=timeout,
                                    check_symmetry=check_symmetry, max_memory=max_memory)
        if st is not None:
            used = "compiled"
    if st is not None:
        pass
    elif not compiled_ok and (jobs > 1 or pool is not None or checkpoint is not None):
        if fingerprint:
            raise UsageError("--fingerprint works with one process: drop --jobs, --cluster or --checkpoint")
        from checker.explore.parallel import parallel_search

        st = parallel_search(model, jobs=jobs, symmetry=symmetry, max_states=max_states, timeout=timeout,
                             check_symmetry=check_symmetry, progress=progress, pool=pool,
                             checkpoint_root=checkpoint, resume=resume)
    elif compiled_ok:
        from checker.compiled.engine import choose_and_search  # the compiled explorer, same seam

        st, used, note = choose_and_search(  # (auto's first few states, and a fallback, on the interpreter)
            model, engine=engine, symmetry=symmetry, max_states=max_states, timeout=timeout,
            check_symmetry=check_symmetry, progress=progress, max_memory=max_memory, por=por, threads=threads,
            fingerprint=fingerprint, checkpoint=checkpoint, resume=resume,
            interpreted=lambda limit, left, warmup=False: _interpreted(
                model, 1 if warmup else jobs, None if warmup else checkpoint,
                resume, symmetry=symmetry, max_states=limit, timeout=left, check_symmetry=check_symmetry,
                progress=progress, fingerprint=fingerprint))
    else:
        st = search(model, symmetry=symmetry, max_states=max_states, timeout=timeout,
                    check_symmetry=check_symmetry, progress=progress, fingerprint=fingerprint)
    if por and used != "compiled" and note is None:
        note = "interpreted without partial-order reduction (compiled engine only)"
    refused = getattr(model.symmetry, "refused", None)  # a structural symmetry too large to enumerate
    if symmetry and refused:
        note = refused if note is None else f"{note}; {refused}"
    if st.note:  # e.g. the checkpoint level a run resumed from: said beside its state count
        note = st.note if note is None else f"{note}; {st.note}"
    try:
        return _verdicts(model, st, symmetry, used, note)
    except MemoryError:  # building the traces ran out: nothing can be shown, the count still can
        st.parents.clear()
        st.found.clear()
        outcomes = {p.name: Outcome(p.name, p.kind, INCONCLUSIVE, StopReason.OUT_OF_MEMORY, [], None)
                    for p in model.properties}
        outcomes[DEADLOCK] = Outcome(DEADLOCK, "deadlock", INCONCLUSIVE, StopReason.OUT_OF_MEMORY, [], None)
        declared = (any(r.symmetric for r in model.info.roles.values()) or model.info.structure is not None) \
            and getattr(model, "weak", None) is None
        return Exploration(model.name, model.params.shown(), symmetry and declared, st.states, st.transitions,
                           st.depth, st.seconds, False, StopReason.OUT_OF_MEMORY, outcomes,
                           model.state_dict(model.initial_states()[0]), None, used, note)


def _compiled_on_ray(model: Model, jobs: int, **kw: object) -> tuple[SearchState | None, str]:
    """(the compiled search on ``jobs`` Ray actors, or None: the point cannot be compiled; the note)."""
    from checker.compiled.engine import Fallback
    from checker.compiled.ray_search import compiled_ray_search

    try:
        return compiled_ray_search(model, jobs=jobs, **kw), f"compiled on {jobs} Ray actors"  # type: ignore[arg-type]
    except Fallback as e:
        from checker.kernel.context import ContextRules

        model.rules = ContextRules(model)  # (whatever the compiled attempt recorded goes)
        return None, f"interpreted on {jobs} Ray actors: {e}"


def _interpreted(model: Model, jobs: int, checkpoint: Path | None, resume: bool, **kw: object) -> SearchState:
    """The interpreter's search where the compiled one does not run: on ``jobs`` processes, or saving
    levels in ``checkpoint``, when asked."""
    fingerprint = kw.pop("fingerprint", False)
    if jobs > 1 or checkpoint is not None:
        from checker.explore.parallel import parallel_search

        return parallel_search(model, jobs=jobs, pool=None, checkpoint_root=checkpoint, resume=resume, **kw)
    return search(model, fingerprint=fingerprint, **kw)


def _verdicts(model: Model, st: SearchState, symmetry: bool, used: str, note: str | None) -> Exploration:
    """Verdicts and shortest traces from what a search left behind."""
    canon = model.symmetry.canonical if (symmetry and model.symmetry.active) else None
    complete = st.stopped is None
    outcomes: dict[str, Outcome] = {}

    def steps_and_end(state: tuple) -> tuple:
        return concrete_trace(model, st.parents, state, canon, st.fingerprint)[1:]

    def trace_to(state: tuple) -> list:
        return steps_and_end(state)[0]

    several = len(model.initial_states()) > 1

    def start_of(state: tuple | None) -> dict | None:
        """Where the trace starts, when a spec has several initial states."""
        if state is None or not several:
            return None
        return model.state_dict(concrete_trace(model, st.parents, state, canon, st.fingerprint)[0])

    for p in model.properties:
        hit = st.found.get(p.name)
        if p.kind == "invariant":
            verdict = VIOLATED if hit is not None else (HOLDS if complete else INCONCLUSIVE)
        else:
            verdict = HOLDS if hit is not None else (VIOLATED if complete else INCONCLUSIVE)
        outcomes[p.name] = Outcome(p.name, p.kind, verdict, None if verdict != INCONCLUSIVE else st.stopped,
                                   trace_to(hit) if hit is not None else [], start_of(hit))
    if model.rules.active:  # lockdep-style context rules: each a verdict with its shortest traces
        outcomes.update(model.rules.outcomes(steps_and_end, complete, st.stopped))
    dl = st.deadlock
    outcomes[DEADLOCK] = Outcome(DEADLOCK, "deadlock",
                                 VIOLATED if dl is not None else (HOLDS if complete else INCONCLUSIVE),
                                 st.stopped if (dl is None and not complete) else None,
                                 trace_to(dl) if dl is not None else [], start_of(dl))
    bounds = model.scheduler.bounds_note() if model.scheduler is not None else None
    if getattr(model, "weak", None) is not None:  # a weak-memory bound that was reached (checker.ordering)
        bounds = model.weak.bounds_note(outcomes)
    if bounds is not None:  # a verdict that needed every run holds only for the runs within the bounds
        for o in outcomes.values():
            if (o.verdict == HOLDS and o.kind != "sometimes") or (o.verdict == VIOLATED and o.kind == "sometimes"):
                o.bounded = bounds
    init = model.initial_states()[0]
    declared = (any(r.symmetric for r in model.info.roles.values()) or model.info.structure is not None) \
        and getattr(model, "weak", None) is None
    return Exploration(model.name, model.params.shown(), symmetry and declared, st.states, st.transitions,
                       st.depth, st.seconds, complete, st.stopped, outcomes, model.state_dict(init),
                       st.omission_probability if st.fingerprint else None, used, note)
