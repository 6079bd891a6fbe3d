# SPDX-License-Identifier: GPL-2.0-only
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

import marshal
import time
from hashlib import blake2b
from typing import Any, Callable

from checker.errors import CheckerError, SpecError, innermost_frame_in
from checker.interrupts import check_during_run as check_interrupt
from checker.result import StopReason
from checker.language.compile import Model

#: States whose symmetry is checked: the first few, then a spread sample.
SYMMETRY_SAMPLE_FIRST = 32
SYMMETRY_SAMPLE_EVERY = 97
SYMMETRY_SAMPLE_MAX = 256


def _same(s: tuple) -> tuple:
    return s


def fingerprint_of(s: tuple) -> int:
    """A 64-bit fingerprint of a state. Not Python's ``hash``: it maps -1
    and -2 to the same value, so states differing only there would collide."""
    # marshal version 2: no back-references, so equal states give equal bytes whatever objects they share
    return int.from_bytes(blake2b(marshal.dumps(tuple(s), 2), digest_size=8).digest(), "little")


def changed(reads: tuple[int, ...] | None, s: tuple, t: tuple) -> bool:
    """Whether ``t`` may differ from ``s`` in a slot of ``reads``."""
    if reads is None:
        return True
    for i in reads:
        if t[i] is not s[i]:
            return True
    return False


def symmetry_sampled(n: int) -> bool:
    """Whether the ``n``-th state expanded (from 0) has its symmetry checked."""
    return n < SYMMETRY_SAMPLE_FIRST or (n % SYMMETRY_SAMPLE_EVERY == 0 and
                                         n <= SYMMETRY_SAMPLE_EVERY * SYMMETRY_SAMPLE_MAX)


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
        self.states = 0  # distinct states stored
        self.fingerprint = False  # parents are keyed by the states' 64-bit hashes
        self.note: str | None = None  # said beside the state count (e.g. which checkpoint level a run resumed)

    @property
    def omission_probability(self) -> float:
        """With fingerprints, the chance that two of the states share a hash
        (the birthday bound for a uniform 64-bit hash, which BLAKE2b's is)."""
        n = self.states
        return min(1.0, n * (n - 1) / 2 / 2.0 ** 64) if self.fingerprint else 0.0


def search(model: Model, *, symmetry: bool, max_states: int | None = None, timeout: float | None = None,
           check_symmetry: bool = True, progress: Callable[[SearchState], None] | None = None,
           fingerprint: bool = False) -> SearchState:
    """``fingerprint``: the visited set keeps each state's 64-bit hash, not
    the state (TLC's and SPIN's hash compaction): a fraction of the memory,
    at a small probability that two states share a hash and one is never
    explored (``omission_probability``). Traces are rebuilt by replaying."""
    st = SearchState()
    st.fingerprint = fingerprint
    key = fingerprint_of if fingerprint else _same
    labels: dict[tuple, tuple] = {}  # one label object per distinct step: parents share them
    t0 = time.perf_counter()
    deadline = t0 + timeout if timeout else None
    sym = model.symmetry
    canon = sym.canonical if (symmetry and sym.active) else None
    sampling = check_symmetry and canon is not None
    parents = st.parents
    found = st.found
    reads = model.property_reads()
    # (property, positions it reads); a property is pending until decided.
    pending_inv = [(p, reads[p.name]) for p in model.invariants]
    pending_some = [(p, reads[p.name]) for p in model.sometimes]
    limit = max_states if max_states is not None else -1
    rules = model.rules if model.rules.active else None
    current: tuple | None = None

    def check(c: tuple, s: tuple | None = None, t: tuple | None = None) -> None:
        """Decide pending properties in the new state ``c`` (the canonical
        form of ``t``, a successor of ``s``). A pending invariant held in
        ``s`` (a pending ``sometimes`` did not): if ``t`` kept every slot it
        reads (the same objects: ``apply`` copies the parent's slots), its
        value in ``c`` is its value in ``s``, and it is not evaluated."""
        nonlocal pending_inv, pending_some
        if pending_inv:
            hit = [p for p, r in pending_inv if (s is None or changed(r, s, t)) and not p.fn(c)]
            if hit:
                for p in hit:
                    found[p.name] = c
                pending_inv = [x for x in pending_inv if x[0].name not in found]
        if pending_some:
            hit = [p for p, r in pending_some if (s is None or changed(r, s, t)) and p.fn(c)]
            if hit:
                for p in hit:
                    found[p.name] = c
                pending_some = [x for x in pending_some if x[0].name not in found]

    try:
        level = []
        for s0 in model.initial_states():
            current = s0
            c = canon(s0) if canon else s0
            kc = key(c)
            if kc not in parents:
                parents[kc] = None
                check(c)
                level.append(c)
        expanded = 0
        while level and st.stopped is None:
            nxt = []
            level_start = expanded
            for s in level:
                current = s
                ks = key(s)
                if sampling and symmetry_sampled(expanded):
                    sym.check_sample(s)
                expanded += 1
                succ = model.successors(s)
                st.transitions += len(succ)
                if rules is not None:
                    rules.on_state(s, succ)
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
                    kc = key(c)
                    if kc in parents:
                        continue
                    if len(parents) == limit:
                        st.stopped = StopReason.MAX_STATES
                        break
                    parents[kc] = (ks, labels.setdefault(label, label))
                    check(c, s, t)
                    nxt.append(c)
                if st.stopped:
                    break
                # (every state: at hundreds of CPUs one expansion takes a second, and the clock costs 50 ns)
                # A signal raised inside a destructor (a Z3 term collected mid-search) is swallowed by
                # Python, only noted: raised here, or the search would run on past it.
                check_interrupt()
                if deadline is not None and time.perf_counter() > deadline:
                    st.stopped = StopReason.TIMEOUT
                    break
                if progress is not None and (expanded & 4095) == 0:
                    st.seconds = time.perf_counter() - t0
                    st.states = len(parents)
                    st.frontier = len(level) - (expanded - level_start) + len(nxt)
                    progress(st)
            if nxt:
                st.depth += 1
            level = nxt
    except MemoryError:
        # Out of memory is a limit, not the spec's fault: what was found stays found (a violation, a
        # reached ``sometimes``), the rest is inconclusive, with the states stored so far. The levels go
        # first, so that the traces to what was found can still be built.
        level = nxt = []
        st.stopped = StopReason.OUT_OF_MEMORY
    except CheckerError:
        raise
    except Exception as e:  # an exception inside spec code: say where and in which state
        raise _spec_exception(model, e, current) from None
    st.seconds = time.perf_counter() - t0
    st.states = len(parents)
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
