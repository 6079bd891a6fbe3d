"""The one search loop: pop, expand, check, push (breadth-first).

Ordering decisions, and why:
- Breadth-first, level by level, so the first state found to violate an
  invariant (or witness a ``sometimes``) is at the least depth: its trace is
  a shortest one. Properties are checked when a state is first generated,
  not when it is expanded (as TLC does), so a violation is seen one level
  earlier and the search can stop at a limit with the most decided.
- Successors come in the model's fixed order (action declaration order,
  CPU ascending, choices as declared) and each state keeps the first parent
  that reached it, so among shortest traces the one reported is the same on
  every run and every machine.
- The search keeps going after a violation until every property has its
  verdict or the state space is exhausted: a report lists all of them.
"""
from __future__ import annotations

import time
from typing import Any, Callable

from checker.errors import CheckerError, SpecError, innermost_frame_in
from checker.result import StopReason
from checker.spec.compile import Model

#: States whose symmetry is checked: the first few, then a spread sample.
SYMMETRY_SAMPLE_FIRST = 32
SYMMETRY_SAMPLE_EVERY = 97
SYMMETRY_SAMPLE_MAX = 256


class SearchState:
    """What the loop leaves behind for traces and verdicts."""

    def __init__(self) -> None:
        self.parents: dict[tuple, Any] = {}
        self.found: dict[str, tuple] = {}  # property -> first deciding state
        self.deadlock: tuple | None = None
        self.transitions = 0
        self.depth = 0
        self.frontier = 0  # states generated and not yet expanded (kept current for progress only)
        self.stopped: str | None = None
        self.seconds = 0.0


def search(model: Model, *, symmetry: bool, max_states: int | None = None, timeout: float | None = None,
           check_symmetry: bool = True, progress: Callable[[SearchState], None] | None = None) -> SearchState:
    st = SearchState()
    t0 = time.perf_counter()
    deadline = t0 + timeout if timeout else None
    sym = model.symmetry
    canon = sym.canonical if (symmetry and sym.active) else None
    sampling = check_symmetry and canon is not None
    parents = st.parents
    found = st.found
    pending_inv = list(model.invariants)
    pending_some = list(model.sometimes)
    limit = max_states if max_states is not None else -1
    rules = model.rules if model.rules.active else None
    current: tuple | None = None

    def check(c: tuple) -> None:
        nonlocal pending_inv, pending_some
        if pending_inv:
            hit = [p for p in pending_inv if not p.fn(c)]
            if hit:
                for p in hit:
                    found[p.name] = c
                pending_inv = [p for p in pending_inv if p.name not in found]
        if pending_some:
            hit = [p for p in pending_some if p.fn(c)]
            if hit:
                for p in hit:
                    found[p.name] = c
                pending_some = [p for p in pending_some if p.name not in found]

    try:
        level = []
        for s0 in model.initial_states():
            current = s0
            c = canon(s0) if canon else s0
            if c not in parents:
                parents[c] = None
                check(c)
                level.append(c)
        expanded = 0
        while level and st.stopped is None:
            nxt = []
            level_start = expanded
            for s in level:
                current = s
                if sampling and (expanded < SYMMETRY_SAMPLE_FIRST or expanded % SYMMETRY_SAMPLE_EVERY == 0):
                    sym.check_sample(s)
                    if expanded >= SYMMETRY_SAMPLE_EVERY * SYMMETRY_SAMPLE_MAX:
                        sampling = False
                expanded += 1
                succ = model.successors(s)
                st.transitions += len(succ)
                if rules is not None:
                    for label, t in succ:
                        rules.on_transition(s, label, t)
                if not succ:
                    if model.is_terminal(s):
                        if rules is not None:
                            rules.on_terminal(s)
                    elif st.deadlock is None:
                        st.deadlock = s
                for label, t in succ:
                    c = canon(t) if canon else t
                    if c in parents:
                        continue
                    if len(parents) == limit:
                        st.stopped = StopReason.MAX_STATES
                        break
                    parents[c] = (s, label)
                    check(c)
                    nxt.append(c)
                if st.stopped:
                    break
                if deadline is not None and (expanded & 255) == 0 and time.perf_counter() > deadline:
                    st.stopped = StopReason.TIMEOUT
                    break
                if progress is not None and (expanded & 4095) == 0:
                    st.seconds = time.perf_counter() - t0
                    st.frontier = len(level) - (expanded - level_start) + len(nxt)
                    progress(st)
            if nxt:
                st.depth += 1
            level = nxt
    except CheckerError:
        raise
    except Exception as e:  # an exception inside spec code: say where and in which state
        raise _spec_exception(model, e, current) from None
    st.seconds = time.perf_counter() - t0
    return st


def _spec_exception(model: Model, e: Exception, state: tuple | None) -> SpecError:
    file, line = innermost_frame_in(e.__traceback__, model.spec_files)
    where = "spec code"
    if state is not None:
        for act in model.actions:
            for cpu in act.cpus:
                for args in act.choices:
                    try:
                        act.info.fn(state, cpu, *args) if cpu is not None else act.info.fn(state, *args)
                    except Exception:
                        where = f"{model.cls.__name__}.{act.info.name}" + (f" on cpu{cpu}" if cpu is not None else "")
                        break
                else:
                    continue
                break
            if where != "spec code":
                break
    msg = f"{type(e).__name__}: {e}"
    return SpecError(f"{where} raised {msg}\n  in state {state!r}\n  with {model.params}", file=file, line=line)
