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

Workers are forked, so they share the compiled model without pickling it.
"""
from __future__ import annotations

import multiprocessing
import pickle
import time
from typing import Any, Callable

from checker.errors import CheckerError, SpecError
from checker.explore.search import SearchState, _spec_exception, symmetry_sampled
from checker.result import StopReason
from checker.spec.compile import Model

# Keys order the states of a level as the sequential loop generates them.
Key = tuple  # (parent rank, successor index)


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

    def count(self) -> int:
        return len(self.states)

    def rules_record(self) -> Any:
        return self.rules.record() if self.rules is not None else None


def _serve(conn: Any, worker: _Worker) -> None:
    """A worker process: run the coordinator's calls until told to stop."""
    while True:
        msg = conn.recv()
        if msg is None:
            return
        name, args = msg
        try:
            conn.send(("ok", getattr(worker, name)(*args)))
        except CheckerError as e:
            conn.send(("error", (type(e), e.message, e.file, e.line)))
        except BaseException as e:  # pragma: no cover - an engine bug: report it, don't hang
            conn.send(("error", (SpecError, f"worker {worker.wid} failed: {type(e).__name__}: {e}", None, None)))


class _Pool:
    """Forked workers and a blocking call on all or one of them."""

    def __init__(self, model: Model, jobs: int, symmetry: bool, check_symmetry: bool):
        ctx = multiprocessing.get_context("fork")
        self.model = model
        self.conns = []
        self.procs = []
        for wid in range(jobs):
            here, there = ctx.Pipe()
            w = _Worker(model, wid, jobs, symmetry, check_symmetry)
            p = ctx.Process(target=_serve, args=(there, w), daemon=True)
            p.start()
            there.close()
            self.conns.append(here)
            self.procs.append(p)

    def call(self, name: str, per_worker: list[tuple]) -> list[Any]:
        for conn, args in zip(self.conns, per_worker):
            conn.send((name, args))
        return [self._answer(conn) for conn in self.conns]

    def call_one(self, wid: int, name: str, *args: Any) -> Any:
        self.conns[wid].send((name, args))
        return self._answer(self.conns[wid])

    @staticmethod
    def _answer(conn: Any) -> Any:
        status, value = conn.recv()
        if status == "error":
            cls, message, file, line = value
            raise cls(message, file=file, line=line)
        return value

    def close(self) -> None:
        for conn in self.conns:
            try:
                conn.send(None)
            except (BrokenPipeError, OSError):
                pass
        for p in self.procs:
            p.join(timeout=5)
            if p.is_alive():
                p.kill()


def parallel_search(model: Model, *, jobs: int, symmetry: bool, max_states: int | None = None,
                    timeout: float | None = None, check_symmetry: bool = True,
                    progress: Callable[[SearchState], None] | None = None) -> SearchState:
    """``search`` on ``jobs`` forked workers; the same ``SearchState``, with
    ``parents`` holding only the paths to the states that decide something."""
    st = SearchState()
    t0 = time.perf_counter()
    deadline = t0 + timeout if timeout else None
    limit = max_states
    sym = model.symmetry
    canon = sym.canonical if (symmetry and sym.active) else None
    pool = _Pool(model, jobs, symmetry, check_symmetry)
    found_at: dict[str, tuple[int, int]] = {}  # property -> (owner, local id)
    try:
        # Level 0: the initial states, deduplicated in order (as ``search`` does).
        seen: dict[tuple, int] = {}
        for s0 in model.initial_states():
            c = canon(s0) if canon else s0
            seen.setdefault(tuple(c), len(seen))
        owned: list[list] = [[] for _ in range(jobs)]
        for c, r in seen.items():
            owned[hash(c) % jobs].append((r, c))
        total = len(seen)
        _merge_hits(pool.call("seed", [(o,) for o in owned]), found_at)
        width = total  # states in the level about to be expanded
        expanded = 0
        rules_cut: tuple | None = None
        while width and st.stopped is None:
            if deadline is not None and time.perf_counter() > deadline:
                st.stopped = StopReason.TIMEOUT
                break
            pool.call("decided", [(set(found_at),)] * jobs)
            out = pool.call("expand", [(st.depth, expanded, None)] * jobs)
            nsucc = sorted(x for _, ns, _ in out for x in ns)
            deadlocks = [d for _, _, d in out if d is not None]
            answers = pool.call("receive", [([blobs[w] for blobs, _, _ in out],) for w in range(jobs)])
            keys = sorted((k, w, j) for w, ks in enumerate(answers) for j, k in enumerate(ks))
            room = None if limit is None else limit - total
            kept = keys if room is None or len(keys) <= room else keys[:room]
            cutoff = None
            if room is not None and len(keys) > room:
                # The sequential loop stops while expanding the parent of the
                # first state past the limit: later parents never run.
                st.stopped = StopReason.MAX_STATES
                cutoff = keys[room][0][0]
                rules_cut = (st.depth, cutoff)
            ranks: list[list] = [[None] * len(ks) for ks in answers]
            for rank, (_k, w, j) in enumerate(kept):
                ranks[w][j] = rank
            hits = pool.call("admit", [(r,) for r in ranks])
            st.transitions += sum(n for r, n in nsucc if cutoff is None or r <= cutoff)
            dl = min((d for d in deadlocks if cutoff is None or d[0] < cutoff), default=None)
            if dl is not None and st.deadlock is None:
                st.deadlock = dl[1:]  # (owner, local id), resolved below
            _merge_hits(hits, found_at)
            expanded += width
            width = len(kept)
            total += width
            if width:
                st.depth += 1
            if progress is not None:
                st.seconds = time.perf_counter() - t0
                st.states = total
                progress(st)
        st.states = total
        st.seconds = time.perf_counter() - t0
        # Paths to the states that decide something, fetched from their owners.
        refs = dict(found_at)
        if st.deadlock is not None:
            refs["\0deadlock"] = st.deadlock
        resolved = {name: _fetch_path(pool, ref, canon, st.parents) for name, ref in refs.items()}
        st.deadlock = resolved.pop("\0deadlock", None)
        st.found.update(resolved)
        if model.rules.active:
            rules = model.rules
            rules.absorb(pool.call("rules_record", [()] * jobs), rules_cut)
            for v in (rules.unbalanced, rules.sleep_violation):  # ``finish`` traces to these
                if v is not None:
                    owner = hash(tuple(v[0])) % jobs
                    _fetch_path(pool, (owner, pool.call_one(owner, "find", tuple(v[0]))), canon, st.parents)
    finally:
        pool.close()
    st.seconds = time.perf_counter() - t0
    return st


def _merge_hits(per_worker: list[dict[str, tuple[int, int]]], found_at: dict) -> None:
    """A property's deciding state is the least-ranked one of its level."""
    best: dict[str, tuple[int, int, int]] = {}
    for w, hits in enumerate(per_worker):
        for name, (rank, lid) in hits.items():
            if name not in found_at and (name not in best or rank < best[name][0]):
                best[name] = (rank, w, lid)
    for name, (_r, w, lid) in best.items():
        found_at[name] = (w, lid)


def _fetch_path(pool: _Pool, ref: tuple[int, int], canon: Any, parents: dict) -> tuple:
    """Walk parent links across workers into ``parents``; the end state."""
    chain = []
    while ref is not None:
        state, parent = pool.call_one(ref[0], "lookup", ref[1])
        chain.append((state, parent))
        ref = None if parent is None else parent[:2]
    chain = [(pool.model.state_cls(s), p) for s, p in chain]
    for i, (state, parent) in enumerate(chain):
        parents[state] = None if parent is None else (chain[i + 1][0], parent[2])
    return chain[0][0]
