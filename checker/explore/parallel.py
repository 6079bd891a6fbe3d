# SPDX-License-Identifier: GPL-2.0-only
"""The search loop of ``search.py`` on several processes (``--jobs N``).

Each worker owns the states whose partition hash falls to it: it stores
them, expands the ones of the current level and sends each successor to
its owner. A coordinator runs the levels in lock step.

The result is the sequential search's, not merely an equivalent one:

- The partition hash is ``hash`` of a tuple of ints, which Python does not
  salt (only str and bytes hashes are salted per process), so every
  process agrees on it.
- The sequential loop visits a level in the order its states were first
  generated, and keeps for each new state the first (parent, step) that
  reached it. Here every new state carries the key (parent's rank in its
  level, successor index); an owner keeps the least key, and the
  coordinator sorts the keys of a level to give each state its rank. So
  the same parents are kept, the same first violating state is found at
  each level, and traces are the same shortest traces.
- ``--max-states`` cuts the level where the sequential loop would have
  stopped (the state at which the limit is reached has a rank), so the
  counts at a limit are the same too.
- Context rules (lockdep-style) record first events with the same keys,
  and the workers' records are merged by least key.

The coordinator talks to its workers only through a pool (``call`` on
every worker, ``call_one`` on one, ``close``): ``ForkPool`` forks them here,
so they share the compiled model without pickling it;
``checker.explore.ray_pool.RayPool`` runs them as Ray actors that build the
model from a picklable reference. A worker that dies is reported as
``WorkerLost``, never waited for; with a checkpoint directory
(``checker.explore.checkpoint``) the run resumes from its last whole level.
"""
from __future__ import annotations

import multiprocessing
import os
import pickle
import time
from pathlib import Path
from typing import Any, Callable, Protocol

import checker.lifetime as lifetime
from checker.errors import CheckerError, SpecError
from checker.explore import checkpoint
from checker.explore.search import SearchState, _spec_exception, symmetry_sampled
from checker.result import StopReason
from checker.language.compile import Model

# Keys order the states of a level as the sequential loop generates them.
Key = tuple  # (parent rank, successor index)


class WorkerLost(Exception):
    """A worker stopped answering (killed, crashed, its node lost)."""

    def __init__(self, wid: int, why: str):
        super().__init__(f"worker {wid} {why}")
        self.wid = wid


class Pool(Protocol):
    """The workers a parallel search runs on (processes or Ray actors): call a function on each, or on one."""

    def call(self, name: str, per_worker: list[tuple]) -> list[Any]: ...

    def call_one(self, wid: int, name: str, *args: Any) -> Any: ...

    def close(self) -> None: ...


#: Makes a pool: (model, jobs, symmetry, check_symmetry) -> Pool.
PoolFactory = Callable[[Model, int, bool, bool], Pool]


class _Worker:
    """One partition of the visited set, run in its own process."""

    def __init__(self, model: Model, wid: int, jobs: int, symmetry: bool, check_symmetry: bool):
        self.model = model
        self.wid = wid
        self.jobs = jobs
        sym = model.symmetry
        self.canon = sym.canonical if (symmetry and sym.active) else None
        self.sampling = check_symmetry and self.canon is not None
        self.rules = model.rules if model.rules.active else None
        self.index: dict[tuple, int] = {}  # state -> local id
        self.states: list[tuple] = []  # local id -> state
        self.parent: list[Any] = []  # local id -> (owner, local id, label) or None
        self.level: list[tuple[int, int]] = []  # (rank, local id) of the current level, by rank
        self.fresh: list[tuple[Key, tuple, Any]] = []  # this level's new states before ranking
        self.own: list = []  # this level's successors owned here
        self.invariants = list(model.invariants)
        self.sometimes = list(model.sometimes)
        self.saved = 0  # states already in checkpoint files

    # -- one level -------------------------------------------------------------
    def expand(self, depth: int, base: int, cutoff: int | None) -> tuple[list[bytes], list, Any]:
        """Expand this level's states (ranks up to ``cutoff``); successors go
        to their owners' buckets. ``base`` is how many states were expanded in
        earlier levels (the sequential loop's symmetry sample counts them)."""
        model, canon, jobs = self.model, self.canon, self.jobs
        buckets: list[list] = [[] for _ in range(jobs)]
        nsucc = []
        deadlock = None
        rules = self.rules
        current = None
        try:
            for rank, lid in self.level:
                if cutoff is not None and rank > cutoff:
                    break
                s = current = self.states[lid]
                if self.sampling:
                    n = base + rank
                    if symmetry_sampled(n):
                        self.model.symmetry.check_sample(s)
                succ = model.successors(s)
                nsucc.append((rank, len(succ)))
                if rules is not None:
                    rules.key = (depth, rank, -2)  # before the state's transitions, as ``search`` calls it
                    rules.on_state(s, succ)
                    for i, (label, t) in enumerate(succ):
                        rules.key = (depth, rank, i)
                        rules.on_transition(s, label, t)
                if not succ:
                    if model.is_terminal(s):
                        if rules is not None:
                            rules.key = (depth, rank, -1)
                            rules.on_terminal(s)
                    elif deadlock is None:
                        deadlock = (rank, self.wid, lid)
                ref = (self.wid, lid)
                for i, (label, t) in enumerate(succ):
                    c = tuple(canon(t) if canon else t)  # the state class is not picklable: a plain tuple
                    buckets[hash(c) % jobs].append((c, rank, i, ref, label))
        except CheckerError:
            raise
        except Exception as e:
            raise _spec_exception(model, e, current) from None
        self.own = buckets[self.wid]  # successors this worker owns stay here, unpickled
        return [None if w == self.wid else pickle.dumps(b, pickle.HIGHEST_PROTOCOL)
                for w, b in enumerate(buckets)], nsucc, deadlock

    def receive(self, blobs: list[bytes]) -> list[Key]:
        """Keep each successor not seen before, with its least key; return the
        keys of the new states (in the order of ``self.fresh``)."""
        index = self.index
        best: dict[tuple, list] = {}
        for blob in blobs:
            for c, rank, i, ref, label in (self.own if blob is None else pickle.loads(blob)):
                if c in index:
                    continue
                key = (rank, i)
                cur = best.get(c)
                if cur is None:
                    best[c] = [key, ref, label]
                elif key < cur[0]:
                    cur[0], cur[1], cur[2] = key, ref, label
        self.own = []
        self.fresh = [(v[0], c, (v[1][0], v[1][1], v[2])) for c, v in best.items()]
        return [k for k, _, _ in self.fresh]

    def admit(self, ranks: list[int | None]) -> dict[str, tuple[int, int]]:
        """Store the new states the coordinator ranked (``None``: cut by the
        state limit); check properties; the next level is the ranked states."""
        level = []
        hits: dict[str, tuple[int, int]] = {}
        current = None
        make = self.model.state_cls
        ranked = sorted((rank, c, parent) for (_k, c, parent), rank in zip(self.fresh, ranks) if rank is not None)
        try:
            for rank, c, parent in ranked:
                c = make(c)
                lid = len(self.states)
                self.index[c] = lid
                self.states.append(c)
                self.parent.append(parent)
                level.append((rank, lid))
                current = c
                self._check(c, rank, lid, hits)
        except CheckerError:
            raise
        except Exception as e:
            raise _spec_exception(self.model, e, current) from None
        self.level = level
        self.fresh = []
        return hits

    def seed(self, states: list[tuple[int, tuple]]) -> dict[str, tuple[int, int]]:
        """The initial states this worker owns, with their ranks."""
        self.fresh = [((r, 0), c, None) for r, c in states]
        return self.admit([r for r, _ in states])

    def _check(self, c: tuple, rank: int, lid: int, hits: dict) -> None:
        for p in self.invariants:
            if p.name not in hits and not p.fn(c):
                hits[p.name] = (rank, lid)
        for p in self.sometimes:
            if p.name not in hits and p.fn(c):
                hits[p.name] = (rank, lid)

    def decided(self, names: set[str]) -> None:
        """Properties decided at an earlier level are not checked again."""
        self.invariants = [p for p in self.invariants if p.name not in names]
        self.sometimes = [p for p in self.sometimes if p.name not in names]

    def find(self, state: tuple) -> int:
        return self.index[state]

    def lookup(self, lid: int) -> tuple[tuple, Any]:
        return tuple(self.states[lid]), self.parent[lid]

    def rules_record(self) -> Any:
        return self.rules.record() if self.rules is not None else None

    # -- checkpoints -----------------------------------------------------------
    def save(self, root: str, level: int, key: str) -> None:
        """Write the states admitted since the last save (this level's)."""
        new = range(self.saved, len(self.states))
        checkpoint.save_worker(Path(root), level, self.wid, key, {
            "states": [tuple(self.states[i]) for i in new], "parents": [self.parent[i] for i in new],
            "ranks": [rank for rank, _lid in self.level], "rules": self.rules_record()})
        self.saved = len(self.states)

    def load(self, root: str, last: int, key: str) -> tuple[int, int]:
        """Reload levels 0..``last``: the same local ids, the last as the current level. (states stored,
        states in the current level), for the coordinator to check against its counters."""
        make = self.model.state_cls
        width = len(self.model.initial_states()[0])
        data: dict = {"ranks": [], "rules": None}
        first = 0
        for level in range(last + 1):
            data = checkpoint.load_worker(Path(root), level, self.wid, key)
            first = len(self.states)
            for c, parent in zip(data["states"], data["parents"]):
                if len(c) != width or (parent is not None and not (0 <= parent[0] < self.jobs and parent[1] >= 0)):
                    raise checkpoint.inconsistent(Path(root), level, f"worker {self.wid}'s states are not "
                                                  f"states of {self.model.name}")
                c = make(c)
                self.index[c] = len(self.states)
                self.states.append(c)
                self.parent.append(parent)
        self.level = [(rank, first + j) for j, rank in enumerate(data["ranks"])]
        if any(lid >= len(self.states) for _r, lid in self.level):
            raise checkpoint.inconsistent(Path(root), last, f"worker {self.wid} ranks more states than it holds")
        self.saved = len(self.states)
        if self.rules is not None and data["rules"]:
            try:
                self.rules.absorb([data["rules"]], None)
            except (TypeError, ValueError, KeyError, IndexError, AttributeError) as e:
                raise checkpoint.inconsistent(Path(root), last, f"worker {self.wid}'s context-rule record does "
                                              f"not fit {self.model.name} ({type(e).__name__})") from None
        return len(self.states), len(self.level)


def run_call(worker: _Worker, name: str, args: tuple) -> tuple[str, Any]:
    """One coordinator call on a worker, its error made picklable."""
    try:
        return "ok", getattr(worker, name)(*args)
    except CheckerError as e:
        return "error", (type(e), e.message, e.file, e.line)
    except MemoryError:  # a limit, not a spec error: the run stops inconclusive, as at a lost worker
        return "lost", (worker.wid, "ran out of memory")
    except BaseException as e:  # pragma: no cover - an engine bug: report it, don't hang
        return "error", (SpecError, f"worker {worker.wid} failed: {type(e).__name__}: {e}", None, None)


def answer(reply: tuple[str, Any]) -> Any:
    """The value of a ``run_call`` reply, or its error raised here."""
    status, value = reply
    if status == "lost":
        raise WorkerLost(*value)
    if status == "error":
        cls, message, file, line = value
        raise cls(message, file=file, line=line)
    return value


def _serve(conn: Any, worker: _Worker, parent: int, inherited: list) -> None:
    """A worker process: run the coordinator's calls until told to stop. It dies with the
    coordinator (``checker.lifetime``), and closes the pipes to the workers forked before it, so
    that a coordinator's death closes each worker's pipe too."""
    if not lifetime.die_with_parent(parent):
        lifetime.watch_parent(parent)
    for c in inherited:
        c.close()
    while True:
        msg = conn.recv()
        if msg is None:
            return
        conn.send(run_call(worker, *msg))


class ForkPool:
    """Forked workers and a blocking call on all or one of them."""

    def __init__(self, model: Model, jobs: int, symmetry: bool, check_symmetry: bool):
        ctx = multiprocessing.get_context("fork")
        self.model = model
        self.conns = []
        self.procs = []
        for wid in range(jobs):
            here, there = ctx.Pipe()
            w = _Worker(model, wid, jobs, symmetry, check_symmetry)
            p = ctx.Process(target=_serve, args=(there, w, os.getpid(), list(self.conns)), daemon=True)
            p.start()
            there.close()
            self.conns.append(here)
            self.procs.append(p)

    def call(self, name: str, per_worker: list[tuple]) -> list[Any]:
        for wid, args in enumerate(per_worker):
            self._send(wid, (name, args))
        return [self._answer(wid) for wid in range(len(self.conns))]

    def call_one(self, wid: int, name: str, *args: Any) -> Any:
        self._send(wid, (name, args))
        return self._answer(wid)

    def _send(self, wid: int, msg: tuple) -> None:
        try:
            self.conns[wid].send(msg)
        except (BrokenPipeError, ConnectionResetError, EOFError):
            raise self._lost(wid) from None

    def _answer(self, wid: int) -> Any:
        try:
            reply = self.conns[wid].recv()
        except (EOFError, ConnectionResetError):  # the process is gone: its end of the pipe closed
            raise self._lost(wid) from None
        return answer(reply)

    def _lost(self, wid: int) -> WorkerLost:
        p = self.procs[wid]
        p.join(timeout=1)
        how = f"exit code {p.exitcode}" if p.exitcode is not None else "no answer"
        return WorkerLost(wid, f"(pid {p.pid}) died: {how}")

    def close(self, grace: float = 5) -> None:
        lifetime.stop_workers(self.conns, self.procs, grace)


class _Counters:
    """The coordinator's side of a level boundary: what a checkpoint keeps."""

    def __init__(self) -> None:
        self.level = 0  # levels admitted so far, the initial one being 0
        self.depth = 0
        self.expanded = 0  # states expanded in earlier levels
        self.total = 0  # states stored
        self.width = 0  # states in the level about to be expanded
        self.transitions = 0
        self.found_at: dict[str, tuple[int, int]] = {}  # property -> (owner, local id)
        self.deadlock: tuple[int, int] | None = None


def parallel_search(model: Model, *, jobs: int, symmetry: bool, max_states: int | None = None,
                    timeout: float | None = None, check_symmetry: bool = True,
                    progress: Callable[[SearchState], None] | None = None,
                    pool: PoolFactory | None = None, checkpoint_root: Path | None = None,
                    resume: bool = False) -> SearchState:
    """``search`` on ``jobs`` workers (forked, unless ``pool`` makes others);
    the same ``SearchState``, with ``parents`` holding only the paths to the
    states that decide something.

    With ``checkpoint_root`` every whole level is saved in this point's
    directory under it; ``resume`` continues from the last one saved. A lost worker stops the search with
    ``stopped`` saying so (every verdict then inconclusive: the traces of
    what was found live in the workers)."""
    st = SearchState()
    t0 = time.perf_counter()
    deadline = t0 + timeout if timeout else None
    sym = model.symmetry
    canon = sym.canonical if (symmetry and sym.active) else None
    from_level = None
    checkpoint_dir = None if checkpoint_root is None else checkpoint.point_dir(checkpoint_root, model)
    key = ""
    if checkpoint_dir is not None:
        from_level, key = checkpoint.start(checkpoint_dir, checkpoint.binding(model, jobs, symmetry), resume)
        if from_level is not None:
            st.note = f"resumed from level {from_level} of {checkpoint_dir}"
        elif resume:
            st.note = f"no checkpoint of this point in {checkpoint_root}: explored from the start"
    workers = (pool or ForkPool)(model, jobs, symmetry, check_symmetry)
    k: _Counters | None = None
    try:
        if from_level is None:
            k = _start(model, workers, jobs, canon)
            _save(workers, k, jobs, checkpoint_dir, key, st)
        else:
            k = _Counters()
            k.__dict__.update(checkpoint.load_level(checkpoint_dir, from_level, key))
            if max_states is not None and k.total > max_states:
                raise CheckerError(f"the checkpoint in {checkpoint_dir} already holds {k.total} states, more "
                                   f"than --max-states {max_states}")
            held = workers.call("load", [(str(checkpoint_dir), from_level, key)] * jobs)
            # Each file is whole; together they must be the level the coordinator counted.
            if sum(n for n, _ in held) != k.total or sum(w for _, w in held) != k.width or not all(
                    0 <= w < jobs and lid < held[w][0] for w, lid in [*k.found_at.values(), *([k.deadlock] if k.deadlock else [])]):
                raise checkpoint.inconsistent(checkpoint_dir, from_level, "its workers' files do not add up to "
                                              "the level's counters")
        rules_cut = _levels(workers, jobs, k, st, max_states, deadline, checkpoint_dir, key, progress, t0)
        st.states = k.total
        st.depth = k.depth
        st.transitions = k.transitions
        st.seconds = time.perf_counter() - t0
        # Paths to the states that decide something, fetched from their owners.
        refs = dict(k.found_at)
        if k.deadlock is not None:
            refs["\0deadlock"] = k.deadlock
        resolved = {name: _fetch_path(workers, model, ref, st.parents) for name, ref in refs.items()}
        st.deadlock = resolved.pop("\0deadlock", None)
        st.found.update(resolved)
        if model.rules.active:
            rules = model.rules
            rules.absorb(workers.call("rules_record", [()] * jobs), rules_cut)
            for v in rules.trace_states():  # ``outcomes`` traces to these
                owner = hash(tuple(v)) % jobs
                _fetch_path(workers, model, (owner, workers.call_one(owner, "find", tuple(v))), st.parents)
    except (WorkerLost, MemoryError) as e:
        # Nothing found so far can be shown (its trace is spread over the
        # workers): every verdict is inconclusive, never a pass; the count is what was stored.
        st.found.clear()
        st.deadlock = None
        st.parents.clear()
        st.states = max(st.states, k.total if k is not None else 0)
        again = (f"resume with --resume {checkpoint_root}" if checkpoint_root is not None else
                 "run again, with --checkpoint DIR to be able to resume after a loss")
        what = e if isinstance(e, WorkerLost) else "the coordinator ran out of memory"
        st.stopped = f"{StopReason.WORKER_LOST}: {what} at depth {st.depth}; {again}"
    except BaseException:  # an interrupt or the deadline: a worker's job in flight is not waited for
        workers.close(grace=0)
        raise
    workers.close()
    st.seconds = time.perf_counter() - t0
    return st


def _start(model: Model, workers: Pool, jobs: int, canon: Any) -> _Counters:
    """Level 0: the initial states, deduplicated in order (as ``search`` does)."""
    k = _Counters()
    seen: dict[tuple, int] = {}
    for s0 in model.initial_states():
        c = canon(s0) if canon else s0
        seen.setdefault(tuple(c), len(seen))
    owned: list[list] = [[] for _ in range(jobs)]
    for c, r in seen.items():
        owned[hash(c) % jobs].append((r, c))
    k.total = k.width = len(seen)
    _merge_hits(workers.call("seed", [(o,) for o in owned]), k.found_at)
    return k


def _levels(workers: Pool, jobs: int, k: _Counters, st: SearchState, limit: int | None, deadline: float | None,
            root: Path | None, key: str, progress: Callable[[SearchState], None] | None,
            t0: float) -> tuple | None:
    """Expand level after level until nothing is new or a limit is hit; the
    context-rule cut ``(depth, rank)`` at the state limit, if hit."""
    rules_cut = None
    while k.width and st.stopped is None:
        if deadline is not None and time.perf_counter() > deadline:
            st.stopped = StopReason.TIMEOUT
            break
        workers.call("decided", [(set(k.found_at),)] * jobs)
        out = workers.call("expand", [(k.depth, k.expanded, None)] * jobs)
        nsucc = sorted(x for _, ns, _ in out for x in ns)
        deadlocks = [d for _, _, d in out if d is not None]
        answers = workers.call("receive", [([blobs[w] for blobs, _, _ in out],) for w in range(jobs)])
        keys = sorted((key, w, j) for w, ks in enumerate(answers) for j, key in enumerate(ks))
        room = None if limit is None else limit - k.total
        kept = keys if room is None or len(keys) <= room else keys[:room]
        cutoff = None
        if room is not None and len(keys) > room:
            # The sequential loop stops while expanding the parent of the
            # first state past the limit: later parents never run.
            st.stopped = StopReason.MAX_STATES
            cutoff = keys[room][0][0]
            rules_cut = (k.depth, cutoff)
        ranks: list[list] = [[None] * len(ks) for ks in answers]
        for rank, (_k, w, j) in enumerate(kept):
            ranks[w][j] = rank
        hits = workers.call("admit", [(r,) for r in ranks])
        k.transitions += sum(n for r, n in nsucc if cutoff is None or r <= cutoff)
        dl = min((d for d in deadlocks if cutoff is None or d[0] < cutoff), default=None)
        if dl is not None and k.deadlock is None:
            k.deadlock = dl[1:]  # (owner, local id), resolved at the end
        _merge_hits(hits, k.found_at)
        k.expanded += k.width
        k.width = len(kept)
        k.total += k.width
        k.level += 1
        if k.width:
            k.depth += 1
        st.depth = k.depth
        if st.stopped is None:  # a level cut at the state limit is not whole: never resumed from
            _save(workers, k, jobs, root, key, st)
        if progress is not None:
            st.seconds = time.perf_counter() - t0
            st.states = k.total
            progress(st)
    return rules_cut


def _save(workers: Pool, k: _Counters, jobs: int, root: Path | None, key: str, st: SearchState) -> None:
    """A level's checkpoint: the workers' files first, the coordinator's last."""
    st.depth = k.depth
    if root is None:
        return
    workers.call("save", [(str(root), k.level, key)] * jobs)
    checkpoint.save_level(root, k.level, key, dict(vars(k)))


def _merge_hits(per_worker: list[dict[str, tuple[int, int]]], found_at: dict) -> None:
    """A property's deciding state is the least-ranked one of its level."""
    best: dict[str, tuple[int, int, int]] = {}
    for w, hits in enumerate(per_worker):
        for name, (rank, lid) in hits.items():
            if name not in found_at and (name not in best or rank < best[name][0]):
                best[name] = (rank, w, lid)
    for name, (_r, w, lid) in best.items():
        found_at[name] = (w, lid)


def _fetch_path(workers: Pool, model: Model, ref: tuple[int, int], parents: dict) -> tuple:
    """Walk parent links across workers into ``parents``; the end state."""
    chain = []
    while ref is not None:
        state, parent = workers.call_one(ref[0], "lookup", ref[1])
        chain.append((state, parent))
        ref = None if parent is None else parent[:2]
    chain = [(model.state_cls(s), p) for s, p in chain]
    for i, (state, parent) in enumerate(chain):
        parents[state] = None if parent is None else (chain[i + 1][0], parent[2])
    return chain[0][0]
