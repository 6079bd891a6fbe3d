# SPDX-License-Identifier: GPL-2.0-only
"""The compiled search on Ray actors (``--cluster ray[://HOST:PORT]``, ``--engine compiled`` or ``auto``).

Each actor loads the point's generated program as a shared library (``checker.compiled.slice``) and
owns one hash slice of the visited set. The coordinator (this process) runs breadth-first levels in
lock step, as ``checker.explore.parallel`` does for the interpreter:

1. ``expand``: every actor expands its level in rank order; the successors go out as one buffer per
   owner (packed states, each with its key: parent's rank and successor index). The buffers travel
   actor to actor through Ray's object store: the coordinator passes references, never the states.
2. ``receive``: every actor keeps the successors it owns that are new, each with its least key, and
   returns the keys (8 bytes a new state).
3. The coordinator sorts all keys (numpy): a new state's rank is where the one-process search would
   number it. ``admit``: every actor checks the properties of its new states in rank order and returns
   the least-ranked state deciding each; the least over the actors is the one-process search's.

So the states, transitions, depth, verdicts and shortest traces are one compiled process's. The path to
a state deciding a property is fetched from its owners, state by state, in the level that decides it
(so it outlives a lost actor); every path is replayed by the interpreter (``engine._replay_paths``)
before it is believed. A lost actor (killed, its node gone) ends the run ``worker_lost`` and an actor
past its memory budget ``max_memory``: verdicts not yet decided are inconclusive, never a pass; what
was decided keeps its trace.
"""
from __future__ import annotations

import os
import time
from typing import Any

import numpy as np

from checker.cluster import IdleActors, import_ray
from checker.compiled.engine import (Fallback, InternalError, Timings, replay_events, _describe_error, _replay_paths, _source,
                                     default_max_memory)
from checker.compiled.build import CompileFailed, CompilerMissing
from checker.compiled.lower import flatten, unflatten
from checker.compiled.run import parse
from checker.compiled.slice import DAMAGED, ERROR, LIMIT, MEMORY, NONE, Library, Slice, SliceError
from checker.errors import UsageError
from checker.explore.parallel import WorkerLost
from checker.explore.search import SYMMETRY_SAMPLE_EVERY, SYMMETRY_SAMPLE_FIRST, SYMMETRY_SAMPLE_MAX, SearchState
from checker.language.compile import Model
from checker.result import StopReason


class _SliceActor:
    """A ``Slice`` in a Ray actor: one method a coordinator call."""

    def __init__(self) -> None:
        self.slice: Slice | None = None

    def start(self, lib: Library, inits: list[list[int]], max_memory: int, jobs: int, wid: int) -> None:
        self.close()
        self.wid = wid
        self.sent = [0, 0]  # bytes of successors sent to other actors, and kept here
        self.cpu0 = time.process_time()
        self.work = 0.0  # CPU seconds of this thread in the slice's calls (process_time adds Ray's own threads)
        self.slice = Slice(lib)
        self.slice.init(inits, max_memory, jobs, wid)

    def seed(self, owned: list) -> dict:
        self.slice.seed(owned)
        return self.slice.found()

    def expand(self, decided: list[int], base: int, cutoff: int | None, sample: tuple) -> Any:
        t = time.thread_time()
        self.slice.decided(decided)
        out = self.slice.expand(base, cutoff, sample)
        self.work += time.thread_time() - t
        for d, b in enumerate(out):
            self.sent[d == self.wid] += len(b)
        return tuple(out) if len(out) > 1 else out[0]

    def receive(self, *buffers: bytes) -> bytes:
        t = time.thread_time()
        for sender, data in enumerate(buffers):
            self.slice.receive(data, sender)
        out = self.slice.candidates()
        self.work += time.thread_time() - t
        return out

    def admit(self, ranks: bytes) -> dict:
        t = time.thread_time()
        self.slice.admit(ranks)
        self.work += time.thread_time() - t
        return self.slice.found()

    def summary(self, cutoff: int | None) -> tuple:
        return self.slice.level_summary(cutoff)

    def events(self) -> list:
        return self.slice.events()

    def lookup(self, idx: int) -> tuple:
        return self.slice.lookup(idx)

    def stats(self) -> tuple:
        return self.slice.stats()

    def measure(self) -> dict:
        """What this search cost here: bytes sent and kept, CPU seconds, the slice's bytes, peak RSS."""
        states, held, stride, peak = self.slice.stats()
        return {"sent": self.sent[0], "kept": self.sent[1], "cpu": time.process_time() - self.cpu0, "work": self.work,
                "states": states, "slice_bytes": held, "stride": stride, "rss_peak": peak}

    def pid(self) -> int:
        return os.getpid()

    def close(self) -> None:
        if self.slice is not None:
            self.slice.close()
            self.slice = None


class RaySlices:
    """``jobs`` slice actors, spread over the cluster's nodes; ``WorkerLost`` when one stops answering."""

    def __init__(self, jobs: int):
        if jobs > 255:
            raise UsageError(f"--jobs {jobs} with --cluster and the compiled engine: 255 actors at most")
        self.ray = import_ray()
        self.jobs = jobs
        self.actors = _idle.take(jobs)

    def get(self, pending: list, wids: list[int] | None = None) -> list:
        out = []
        errors = self.ray.exceptions
        for wid, p in zip(wids or range(len(pending)), pending):
            try:
                out.append(self.ray.get(p))
            except errors.RayActorError:
                raise self._lost(wid) from None
            except errors.RayTaskError as e:
                cause = getattr(e, "cause", None)
                if isinstance(cause, SliceError):
                    raise cause from None
                if isinstance(cause, errors.RayActorError):  # an input from another actor that died
                    raise self._lost(wid) from None
                raise
        return out

    def _lost(self, wid: int) -> WorkerLost:
        """The first actor that does not answer (a call's input may come from another than its own)."""
        for w, a in enumerate(self.actors):
            try:
                self.ray.get(a.pid.remote(), timeout=30)
            except (self.ray.exceptions.RayActorError, self.ray.exceptions.GetTimeoutError):
                return WorkerLost(w, "(a Ray actor) died or stopped answering")
        return WorkerLost(wid, "(a Ray actor) lost an input")

    def all(self, name: str, per_worker: list[tuple]) -> list:
        return self.get([getattr(a, name).remote(*args) for a, args in zip(self.actors, per_worker)])

    def one(self, wid: int, name: str, *args: Any) -> Any:
        return self.get([getattr(self.actors[wid], name).remote(*args)], [wid])[0]

    def exchange(self, decided: list[int], base: int, cutoff: int | None, sample: tuple) -> list[bytes]:
        """Expand on every actor, each actor's buffers to their owners (as object references), and the
        owners' keys."""
        n = self.jobs
        outs = [a.expand.options(num_returns=n).remote(decided, base, cutoff, sample) for a in self.actors]
        if n == 1:
            outs = [[o] for o in outs]
        return self.get([a.receive.remote(*[outs[s][w] for s in range(n)]) for w, a in enumerate(self.actors)])

    def close(self, lost: bool) -> None:
        """Keep the actors for the next exploration (starting one takes seconds), their slices freed;
        none if one was lost (a call may still be running on the others)."""
        if lost:
            for a in self.actors:
                self.ray.kill(a)
        else:
            for a in self.actors:
                a.close.remote()
            _idle.give_back(self.actors)
        self.actors = []


class LocalSlices:
    """The same calls on slices in this process, one after another: the distributed search's logic without
    Ray (its tests compare it with one process on many points quickly)."""

    def __init__(self, jobs: int):
        self.jobs = jobs
        self.actors = [_SliceActor() for _ in range(jobs)]

    def all(self, name: str, per_worker: list[tuple]) -> list:
        return [getattr(a, name)(*args) for a, args in zip(self.actors, per_worker)]

    def one(self, wid: int, name: str, *args: Any) -> Any:
        return getattr(self.actors[wid], name)(*args)

    def exchange(self, decided: list[int], base: int, cutoff: int | None, sample: tuple) -> list[bytes]:
        outs = [a.expand(decided, base, cutoff, sample) for a in self.actors]
        outs = [o if self.jobs > 1 else (o,) for o in outs]
        return [a.receive(*[outs[s][w] for s in range(self.jobs)]) for w, a in enumerate(self.actors)]

    def close(self, lost: bool) -> None:
        for a in self.actors:
            a.close()


def compiled_ray_search(model: Model, *, jobs: int, symmetry: bool, max_states: int | None = None,
                        timeout: float | None = None, check_symmetry: bool = True, max_memory: int | None = None,
                        timings: Timings | None = None, workers: Any = None,
                        measured: list | None = None) -> SearchState:
    """The compiled search on ``jobs`` Ray actors: one compiled process's ``SearchState``, or ``Fallback``
    (the point runs on the interpreter). ``max_memory``: each actor's budget. ``workers``: the actors
    (``RaySlices(jobs)`` unless given, e.g. by a test that kills one). ``measured``: each actor's costs
    (``_SliceActor.measure``) are appended to it."""
    timings = timings if timings is not None else Timings()
    use_sym = symmetry and model.symmetry.active
    low, evs, program = _source(model, use_sym, timings)  # (Fallback: the point runs on the interpreter)
    t0 = time.perf_counter()
    try:
        lib, now = Library.build(program, len(flatten(model, model.initial_states()[0])))
    except CompilerMissing as e:
        raise Fallback(str(e)) from None
    except CompileFailed as e:
        raise Fallback(f"the generated library did not compile: {e}") from None
    timings.compile += time.perf_counter() - t0
    timings.compiled_now = timings.compiled_now or now
    inits = model.initial_states()
    flat = [flatten(model, s) for s in inits]
    canon = model.symmetry.canonical if use_sym else None
    here = Slice(lib)  # the coordinator's own copy: canonical forms and owners of the initial states
    seen: dict[tuple, int] = {}
    owned: list[list] = [[] for _ in range(jobs)]
    for i, v in enumerate(flat):
        c, owner = here.canonical_owner(v, jobs)
        if tuple(c) not in seen:
            seen[tuple(c)] = len(seen)
            owned[owner].append((seen[tuple(c)], i, c))
    sample = (SYMMETRY_SAMPLE_FIRST, SYMMETRY_SAMPLE_EVERY, SYMMETRY_SAMPLE_MAX) if (use_sym and check_symmetry) \
        else (0, 0, 0)
    st = SearchState()
    budget = max_memory or default_max_memory() // max(1, jobs)
    pool = workers if workers is not None else RaySlices(jobs)
    total = width = len(seen)
    depth, expanded, transitions = 0, 0, 0
    found_at: dict[int, tuple[int, int]] = {}
    paths = _Paths(model, low, len(flat[0]), len(flat))
    ends: dict[int, int] = {}  # property -> the end of its path in ``paths``
    deadlock: tuple[int, int] | None = None
    events_limit: int | None = None
    lost = True
    t1 = time.perf_counter()
    deadline = None if timeout is None else t1 + timeout
    try:
        try:
            pool.all("start", [(lib, flat, budget, jobs, w) for w in range(jobs)])
            decided: list[int] = []
            _merge(pool.all("seed", [(o,) for o in owned]), found_at, decided)
            for k in decided:
                ends[k] = paths.fetch(pool, found_at[k])
            while width and st.stopped is None:
                if deadline is not None and time.perf_counter() > deadline:
                    st.stopped = StopReason.TIMEOUT
                    break
                keys = pool.exchange(decided, expanded, None, sample)
                decided = []
                arrays = [np.frombuffer(k, dtype="<u8") for k in keys]
                every = np.concatenate(arrays) if arrays else np.zeros(0, dtype="<u8")
                order = np.argsort(every, kind="stable")
                room = None if max_states is None else max_states - total
                kept = len(order) if room is None or len(order) <= room else room
                cutoff = None
                if kept < len(order):
                    # the one-process search stops expanding at the parent of the first state past the limit
                    st.stopped = StopReason.MAX_STATES
                    cutoff = int(every[order[kept]] >> np.uint64(16))
                    events_limit = expanded + cutoff
                ranks = np.full(len(order), NONE, dtype="<u4")
                ranks[order[:kept]] = np.arange(kept, dtype="<u4")
                split = np.cumsum([len(a) for a in arrays])[:-1]
                # (the level's summary before ``admit`` makes the new states the level)
                summaries = pool.all("summary", [(cutoff,)] * jobs)
                transitions += sum(t for t, _dl in summaries)
                dls = [(dl[0], w, dl[1]) for w, (_t, dl) in enumerate(summaries) if dl is not None]
                if deadlock is None and dls:
                    deadlock = min(dls)[1:]
                hits = pool.all("admit", [(r.tobytes(),) for r in np.split(ranks, split)])
                _merge(hits, found_at, decided)
                for k in decided:
                    ends[k] = paths.fetch(pool, found_at[k])
                expanded += width
                width = kept
                total += kept
                if kept:
                    depth += 1
            st.states, st.transitions, st.depth = total, transitions, depth
            st.seconds = time.perf_counter() - t1
            timings.search = st.seconds
            _paths(paths, evs, pool, ends, deadlock, events_limit, canon, st)
            costs = pool.all("measure", [()] * jobs)
            if measured is not None:
                measured.extend(costs)
            held = sum(c["slice_bytes"] for c in costs)
            st.note = f"{held / max(1, total):.0f} bytes a state in the actors' slices"
            lost = False
        except SliceError as e:
            lost = False
            if e.status not in (MEMORY, LIMIT):
                _slice_error(model, low, e)
            st.states, st.transitions, st.depth = total, transitions, depth
            st.stopped = StopReason.MAX_MEMORY
            if ends:
                _paths(paths, [], pool, ends, None, None, canon, st)
    except WorkerLost as e:
        st.found.clear()
        st.deadlock = None
        st.parents.clear()
        st.states, st.transitions, st.depth = total, transitions, depth
        st.stopped = f"{StopReason.WORKER_LOST}: {e} at depth {depth}; run again"
        # what was decided before the loss: its path was fetched in the level that decided it
        if ends:
            _paths(paths, [], pool, ends, None, None, canon, st)
    finally:
        here.close()
        pool.close(lost)
    st.seconds = time.perf_counter() - t1
    return st


def _merge(per_worker: list[dict], found_at: dict, decided: list[int]) -> None:
    """A property's deciding state is the least-ranked of its level; decided ones are not checked again."""
    best: dict[int, tuple[int, int, int]] = {}
    for w, hits in enumerate(per_worker):
        for k, (rank, lid) in hits.items():
            if k not in found_at and (k not in best or rank < best[k][0]):
                best[k] = (rank, w, lid)
    for k, (_r, w, lid) in best.items():
        found_at[k] = (w, lid)
        decided.append(k)


def _slice_error(model: Model, low: Any, e: SliceError) -> None:
    """An actor's run-time error: a broken symmetry explained by the interpreter, else a Fallback."""
    if e.status != ERROR:
        if e.status == DAMAGED:
            raise InternalError(f"compiled engine on Ray: {e.text or 'a damaged buffer or library'}")
        raise Fallback(f"an actor ran out of its memory budget (status {e.status})")
    try:
        out = parse(e.text)
    except ValueError:
        raise InternalError(f"compiled engine on Ray: an actor's error does not parse: {e.text[:200]!r}") from None
    if out.error is None:
        raise InternalError(f"compiled engine on Ray: an actor failed without saying why: {e.text[:200]!r}")
    if out.error[0] == "symmetry":
        s = unflatten(model, out.states[out.error[2]])
        model.symmetry.check_sample(s)
        raise InternalError(f"compiled engine: the symmetry check failed in C at {s!r} but not on the interpreter")
    raise Fallback(_describe_error(low, out.error))


class _Paths:
    """The paths fetched so far from the actors, state by state (each state once): a property's path is
    fetched in the level that decides it, so it survives the loss of an actor later."""

    def __init__(self, model: Model, low: Any, nslots: int, ninits: int):
        self.model, self.low, self.nslots, self.ninits = model, low, nslots, ninits
        self.ids: dict[tuple[int, int], int] = {}
        self.nodes: dict[int, tuple[int, int]] = {}
        self.vecs: dict[int, list[int]] = {}

    def fetch(self, pool: Any, ref: tuple[int, int]) -> int:
        start, chain = ref, []
        while ref not in self.ids:
            vec, par, owner, step = pool.one(ref[0], "lookup", ref[1])
            if len(vec) != self.nslots or not (0 <= step < max(len(self.low.steps), self.ninits)) or (
                    par is not None and not 0 <= owner < pool.jobs):
                raise InternalError(f"compiled engine on Ray: actor {ref[0]} answered a state that is not one "
                                    f"of {self.model.name}")
            self.ids[ref] = len(self.ids)
            self.vecs[self.ids[ref]] = vec
            chain.append((self.ids[ref], par, owner, step))
            if par is None:
                break
            ref = (owner, par)
        for i, par, owner, step in chain:
            self.nodes[i] = (-1 if par is None else self.ids[(owner, par)], step)
        return self.ids[start]


def _paths(paths: _Paths, evs: list, pool: Any, found: dict[int, int], deadlock: tuple | None,
           events_limit: int | None, canon: Any, st: SearchState) -> None:
    """The deadlock's and the events' paths fetched too, all of them replayed on the interpreter, and
    ``st`` filled as ``engine.compiled_search`` fills it. ``found``: property -> its path's end (``paths``)."""
    model, low = paths.model, paths.low
    dl = paths.fetch(pool, deadlock) if deadlock is not None else None
    ev_hits: list[tuple[int, int, int, int]] = []
    if evs:
        per = pool.all("events", [()] * pool.jobs)
        for e in range(len(evs)):
            cands = [(x[0], w, x[1], x[2]) for w, xs in enumerate(per) if (x := xs[e]) is not None
                     and (events_limit is None or x[0] <= events_limit)]
            if cands:
                num, w, lid, step = min(cands)
                ev_hits.append((e, paths.fetch(pool, (w, lid)), step, num))
    nodes = paths.nodes
    states = {i: unflatten(model, v) for i, v in paths.vecs.items()}
    _replay_paths(model, low, nodes, states, [tuple(s) for s in model.initial_states()], canon)
    for i, (par, step) in nodes.items():
        st.parents[states[i]] = None if par < 0 else (states[par], low.steps[step].label)
    for k, i in found.items():
        st.found[low.props[k][0]] = states[i]
    if dl is not None:
        st.deadlock = states[dl]
    if model.rules.active:
        replay_events(model, low, evs, [(e, states[i], step, num) for e, i, step, num in ev_hits])


#: The slice actors between explorations of this process.
_idle = IdleActors(_SliceActor)
