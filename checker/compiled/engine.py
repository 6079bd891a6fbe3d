# SPDX-License-Identifier: GPL-2.0-only
"""The compiled explorer behind ``explore``: lower, generate, build, run, read back.

``compiled_search`` returns the interpreter's ``SearchState`` (statistics,
the first state deciding each property, the deadlock, and parent pointers
for just the states on those paths), so ``explore`` builds verdicts and
traces from it exactly as from the interpreter's. Every stored step on a
returned path is replayed here by the interpreter (the step's successor,
canonicalised, must be the next stored state): a replay that loses the path
is an internal error, loudly. The context rules get the first transition of
each event, replayed through ``ContextRules.on_transition``; the symmetry
check runs in C on the states the interpreter would sample; a failure is explained by the
interpreter's own check.

Whatever cannot be lowered raises ``Fallback`` naming the construct; the
caller runs the point on the interpreter and says so.
"""
from __future__ import annotations

import ctypes
import json
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import checker.persist as persist
from checker.compiled import ENGINES  # noqa: F401  (re-exported)
from checker.compiled import build as cbuild, index
from checker.compiled.build import CompileFailed, CompilerMissing, build
from checker.compiled.codegen import generate, split_units
from checker.compiled.cterms import Untranslatable
from checker.compiled.lower import NotLowerable, flatten, lower, unflatten
from checker.compiled.run import run
from checker.errors import CheckerError, UsageError
from checker.explore.search import (SYMMETRY_SAMPLE_EVERY, SYMMETRY_SAMPLE_FIRST, SYMMETRY_SAMPLE_MAX, SearchState,
                                    fingerprint_of)
from checker.result import StopReason
from checker.language.compile import Model

#: The memory budget when none is given: this fraction of MemAvailable.
MEMORY_FRACTION = 0.5


class Fallback(Exception):
    """This point runs on the interpreter; the message names the construct."""


class InternalError(CheckerError):
    """The compiled engine and the interpreter disagree: a bug of ours, never a verdict."""


@dataclass
class Timings:
    """Seconds spent in each phase of a compiled run (lower, generate, compile, search), and whether it compiled now."""
    lower: float = 0.0
    generate: float = 0.0
    compile: float = 0.0
    search: float = 0.0
    search_cpu: float = 0.0  # CPU seconds of the search process (on a loaded machine, below the wall time)
    compiled_now: bool = False
    stride: int = 0
    rss_before: int = 0
    rss_peak: int = 0


def default_max_memory() -> int:
    """The compiled search's memory bound: a fraction of the machine's available memory, in bytes."""
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(int(line.split()[1]) * 1024 * MEMORY_FRACTION)
    except OSError:
        pass
    return 2 << 30


_STOPS = {"none": None, "max_states": StopReason.MAX_STATES, "timeout": StopReason.TIMEOUT,
          "max_memory": StopReason.MAX_MEMORY}

#: Generated programs per (model identity, symmetry, flags): a sweep's repeated points and tests reuse them.
_programs: dict[tuple, tuple] = {}
#: Generated sources per (model identity, symmetry): (lowered model, events, source).
_sources: dict[tuple, tuple] = {}

#: Cold start: a point's first states run on a program built with cbuild.QUICK_FLAGS (-O0: half the compile
#: time of -O1, a third of its speed); only a point that passes this many states is built again with -O1
#: and searched again from the start. Most points of a bare ``verify`` stop well before it.
QUICK_STATES = 100_000


def _source(model: Model, symmetry: bool, timings: Timings, por: bool = False) -> tuple[Any, list, str]:
    key = (model.cls, model.params, symmetry, por)
    hit = _sources.get(key)
    if hit is not None:
        return hit
    t0 = time.perf_counter()
    try:
        low = lower(model)
        timings.lower = time.perf_counter() - t0
        t1 = time.perf_counter()
        source, evs = generate(low, symmetry, por)
        timings.generate = time.perf_counter() - t1
    except (NotLowerable, Untranslatable) as e:
        raise Fallback(str(e)) from None
    except (RecursionError, ctypes.ArgumentError) as e:
        # a term over every CPU nests deeper than Python's stack (hundreds of CPUs); inside a Z3 call it comes
        # wrapped by ctypes ("argument 1: RecursionError")
        if not isinstance(e, RecursionError) and "RecursionError" not in str(e):
            raise
        raise Fallback(f"its terms nest too deeply for the C translation at {model.params}") from None
    _sources[key] = (low, evs, source)
    return low, evs, source


def _recall(model: Model, symmetry: bool, por: bool) -> tuple[str, Any, list, bool] | None:
    """The point index's entry for this point (checker/compiled/index.py), unless generated in this process."""
    if (model.cls, model.params, symmetry, por) in _sources:
        return None
    try:
        return index.recall(cbuild.cache_dir(), model, symmetry, por)
    except CompilerMissing:
        return None


def prepare(model: Model, symmetry: bool, timings: Timings, por: bool = False,
            flags: tuple[str, ...] = cbuild.FLAGS, past_warmup: bool = False) -> tuple[Any, list, Any]:
    """(lowered model, events, built program), or Fallback. ``por``: with partial-order reduction (ample.py).
    A point the index remembers, whose program is in the build cache, is neither lowered nor generated: the
    lowered model is then the index's ``Recalled``. ``past_warmup``: ``auto`` comes here after the
    interpreter's first states (the index remembers it, so that the next run starts here)."""
    key = (model.cls, model.params, symmetry, por, flags)
    hit = _programs.get(key)
    if hit is not None and hit[2].exists():  # (a cleaned cache: built again)
        return hit
    recalled = _recall(model, symmetry, por)
    if recalled is not None:
        digest, rec, evs, went = recalled
        exe = cbuild.cached_digest(digest, flags)
        if exe is not None:
            if past_warmup and not went:
                index.remember(cbuild.cache_dir(), model, symmetry, por, digest, rec, evs, True)
            _programs[key] = (rec, evs, exe)
            return rec, evs, exe
    low, evs, source = _source(model, symmetry, timings, por)
    t2 = time.perf_counter()
    try:
        # (the quick program links the runtime compiled once: most of a small program's compile was the runtime)
        exe, now = build(source, flags, split_units(source) if flags == cbuild.QUICK_FLAGS else None)
    except CompilerMissing as e:
        raise Fallback(str(e)) from None
    except CompileFailed as e:
        raise Fallback(f"the generated C did not compile: {e}") from None
    timings.compiled_now = timings.compiled_now or now
    timings.compile += time.perf_counter() - t2
    index.remember(exe.parent, model, symmetry, por, cbuild.source_digest(source), low, evs,
                   past_warmup or (recalled is not None and recalled[3]))
    out = (low, evs, exe)
    _programs[key] = out
    return out


def _quick_first(model: Model, symmetry: bool, timings: Timings, por: bool) -> bool:
    """Whether to start on the -O0 program: the -O1 one is not built yet (the search may stop before
    QUICK_STATES)."""
    if QUICK_STATES <= 0 or (model.cls, model.params, symmetry, por, cbuild.FLAGS) in _programs:
        return False
    recalled = _recall(model, symmetry, por)
    if recalled is not None:
        return cbuild.cached_digest(recalled[0]) is None
    _low, _evs, source = _source(model, symmetry, timings, por)
    return cbuild.cached(source) is None


def went_past_warmup(model: Model, symmetry: bool, por: bool) -> bool:
    """Whether the index remembers this point going past the interpreter's warm-up (``auto``), with its
    program still in the build cache: the warm-up would hand it over again."""
    use_sym = symmetry and model.symmetry.active
    recalled = _recall(model, use_sym, por)
    if recalled is None or not recalled[3]:
        return False
    return cbuild.cached_digest(recalled[0], cbuild.QUICK_FLAGS) is not None or \
        cbuild.cached_digest(recalled[0]) is not None


def compiled_search(model: Model, *, symmetry: bool, max_states: int | None = None, timeout: float | None = None,
                    check_symmetry: bool = True, max_memory: int | None = None,
                    timings: Timings | None = None, por: bool = False, threads: int = 1, fingerprint: bool = False,
                    checkpoint: Path | None = None, resume: bool = False, past_warmup: bool = False) -> SearchState:
    """Explore ``model`` as generated C: the same states, verdicts and shortest traces as the interpreter.
    ``por``: partial-order reduction (checker/compiled/ample.py, one thread): the same verdicts, fewer
    states, and traces that may not be the shortest (``st.note`` says how many states were expanded reduced).
    ``threads`` > 1 runs the search on that many threads, with the same result. ``fingerprint`` keeps a
    64-bit hash of each state (search_fingerprint.c): the result then holds unless two states share one
    (``SearchState.omission_probability``), and its parents are keyed by ``fingerprint_of``, as the
    interpreter's fingerprint search keys them, so traces are rebuilt the same way. ``checkpoint`` (a
    directory) saves every whole level (checker.compiled.checkpoint); ``resume`` continues from the last."""
    if por and (threads > 1 or fingerprint):
        raise UsageError("--por runs on one thread of the compiled engine, without --fingerprint: "
                         "leave out --jobs or --fingerprint")
    timings = timings if timings is not None else Timings()
    use_sym = symmetry and model.symmetry.active
    # (a large run, by its flags, is built -O1 at once; a checkpointed one is never searched twice)
    quick = threads == 1 and not fingerprint and checkpoint is None and _quick_first(model, use_sym, timings, por)
    low, evs, exe = prepare(model, use_sym, timings, por, cbuild.QUICK_FLAGS if quick else cbuild.FLAGS,
                            past_warmup)
    inits = model.initial_states()
    sample = (SYMMETRY_SAMPLE_FIRST, SYMMETRY_SAMPLE_EVERY, SYMMETRY_SAMPLE_MAX) if (use_sym and check_symmetry) \
        else (0, 0, 0)
    canon = model.symmetry.canonical if use_sym else None
    distinct = len({tuple(canon(s) if canon else s) for s in inits})
    cp_dir, resumed, on_level = None, None, None
    if checkpoint is not None:
        from checker.compiled import checkpoint as cp

        cp_dir, resumed, key = cp.start(Path(checkpoint), model, use_sym, resume, por)
        on_level = lambda level, path: cp.seal(cp_dir, key, level, path)  # noqa: E731
    flat = [flatten(model, s) for s in inits]
    memory = max_memory or default_max_memory()
    t0 = time.perf_counter()
    cap = QUICK_STATES if quick and (max_states is None or max_states > QUICK_STATES) else max_states
    out = run(exe, flat, max_states=cap, timeout=timeout, max_memory=memory, sample=sample,
              min_states=min(distinct, cap or distinct), threads=threads, fingerprint=fingerprint,
              checkpoint=cp_dir, resume_level=resumed, on_checkpoint=on_level)
    if cap != max_states and out.error is None and out.killed is None and out.stats.get("stopped") == "max_states":
        # past the quick program's states: the whole search again, on the -O1 program (nothing of the first
        # run is kept: its events and paths are read from this one only)
        low, evs, exe = prepare(model, use_sym, timings, por, cbuild.FLAGS, past_warmup)
        left = None if timeout is None else max(0.001, timeout - (time.perf_counter() - t0))
        out = run(exe, flat, max_states=max_states, timeout=left, max_memory=memory, sample=sample,
                  min_states=min(distinct, max_states or distinct))
    if out.error is not None and out.error[0] == "checkpoint":
        raise UsageError(f"--checkpoint: cannot save level {out.error[1]} in {cp_dir} "
                         f"({os.strerror(out.error[2])}); free the space and continue with --resume {checkpoint}")
    if out.error is not None and out.error[0] == "resume":
        raise UsageError(f"the checkpoint in {cp_dir} does not load (level files that are each whole but do not "
                         f"agree); delete {cp_dir} to explore this point afresh")
    if out.error is not None and out.error[0] == "symmetry":  # the interpreter explains a broken symmetry
        s = unflatten(model, out.states[out.error[2]])
        model.symmetry.check_sample(s)
        raise InternalError(f"compiled engine: the symmetry check failed in C at {s!r} but not on the interpreter")
    if out.error is not None:
        raise Fallback(_describe_error(low, out.error))
    if por and out.killed is None and out.stats.get("por_assumed_failed") == "1":
        # the reduction assumed every invariant expected to hold (ample.py); one does not: nothing it
        # decided is believed, the point is explored again unreduced
        left = None if timeout is None else max(0.001, timeout - (time.perf_counter() - t0))
        st = compiled_search(model, symmetry=symmetry, max_states=max_states, timeout=left,
                             check_symmetry=check_symmetry, max_memory=max_memory, timings=timings)
        st.note = ("no partial-order reduction: it assumes the invariants expected to hold, and one is "
                   "violated, so the point was explored again without it")
        return st
    st = SearchState()
    st.fingerprint = fingerprint
    if resumed is not None:
        st.note = f"resumed from the checkpoint's level {resumed}"
    stats = out.stats
    if out.killed is not None:  # its counts, if it printed them; nothing found is shown (no paths)
        st.stopped = StopReason.OUT_OF_MEMORY if stats.get("stopped") == "memory" else StopReason.KILLED
        st.seconds = 0.0
        st.states = int(stats.get("states", 0))
        st.transitions = int(stats.get("transitions", 0))
        st.depth = int(stats.get("depth", 0))
        st.note = out.killed
        return st
    if por:
        st.note = por_note(stats)
    st.states = int(stats["states"])
    st.transitions = int(stats["transitions"])
    st.depth = int(stats["depth"])
    st.seconds = float(stats["seconds"])
    st.stopped = _STOPS[stats["stopped"]]
    timings.search = st.seconds
    timings.search_cpu = float(stats.get("cpu", 0.0))
    timings.stride = int(stats.get("stride", 0))
    timings.rss_before = int(stats.get("rss_before", 0))
    timings.rss_peak = int(stats.get("rss_peak", 0))
    states = {i: unflatten(model, v) for i, v in out.states.items()}
    _replay_paths(model, low, out.nodes, states, inits, canon)
    key = fingerprint_of if fingerprint else (lambda s: s)
    for i, (par, step) in out.nodes.items():
        st.parents[key(states[i])] = None if par < 0 else (key(states[par]), low.steps[step].label)
    for k, idx in out.found.items():
        st.found[low.props[k][0]] = states[idx]
    dl = int(stats["deadlock"])
    if dl >= 0:
        st.deadlock = states[dl]
    if model.rules.active:
        replay_events(model, low, evs, [(e, states[idx], step, idx) for e, idx, step in out.events])
    return st


def por_note(stats: dict) -> str:
    """What partial-order reduction did, for the report: it may lengthen traces."""
    if "por_reduced" not in stats:
        return "no partial-order reduction (its tables were not generated: too many steps)"
    red, full = int(stats["por_reduced"]), int(stats["por_full"])
    return (f"partial-order reduction: {red:,} of {red + full:,} states with two or more steps expanded reduced; "
            f"traces are the shortest in the reduced graph, not necessarily the shortest")


def _replay_paths(model: Model, low: Any, nodes: dict, states: dict, inits: list, canon: Any) -> None:
    """Each stored step again on the interpreter: its successor (canonical) is the next stored state."""
    for i, (par, step) in nodes.items():
        if par < 0:
            s0 = inits[step]
            want = canon(s0) if canon else s0
        else:
            st = low.steps[step]
            act = model.actions[st.action]
            t = model.fire(states[par], act, st.cpu, act.choices[st.label[2]])
            if t is None:
                raise InternalError(f"compiled engine: the stored step {st.what} is not enabled in state "
                                    f"{states[par]!r} on the interpreter")
            want = canon(t) if canon else t
        if tuple(want) != tuple(states[i]):
            raise InternalError(f"compiled engine lost the path: state {i} is {states[i]!r} in C but "
                                f"{want!r} on the interpreter")


def _describe_error(low: Any, err: tuple[str, int, int]) -> str:
    kind, k, detail = err
    if kind == "overflow":
        return f"a value beyond 64 bits in {low.steps[k].what}"
    if kind == "check":
        return f"{low.steps[k].checks[detail][1]} in {low.steps[k].what} (the interpreter reports it)"
    if kind == "overflow_property":
        return f"a value beyond 64 bits in the property {low.props[k][0]}"
    if kind == "overflow_terminal":
        return "a value beyond 64 bits in the terminal predicate"
    return f"{kind} at step {k}"

#: ``auto`` interprets a point up to this many states first; past it, the compiled engine takes over.
#: A bare ``verify``, CPU seconds on 2 loaded cores (the interpreter at 10-20 K states/s; a program
#: takes 0.2-2 s to generate and compile cold, 0.05-0.4 s warm): warm cache 62.9 at 4,000, 46.0 at 800,
#: 39.6 at 300, 39.8 at 50; empty cache 76.7 at 4,000 (48 programs built), 81.3 at 300 (166).
AUTO_THRESHOLD = 300


def _interpreters(root: Path, model: Model) -> bool:
    """Whether the point's checkpoint under ``root`` was written by the interpreter (checked in full when it
    resumes; here only which engine reads it)."""
    from checker.explore.checkpoint import META, point_dir

    try:
        meta = json.loads(persist.read_framed(point_dir(Path(root), model) / META, "checkpoint-meta", None))
    except (OSError, ValueError, persist.Refused):
        return False
    return isinstance(meta, dict) and meta.get("engine") != "compiled"


def choose_and_search(model: Model, *, engine: str, symmetry: bool, max_states: int | None, timeout: float | None,
                      check_symmetry: bool, progress: Any, max_memory: int | None,
                      interpreted: Any, por: bool = False, threads: int = 1, fingerprint: bool = False,
                      checkpoint: Path | None = None, resume: bool = False) -> tuple[SearchState, str, str | None]:
    """(search state, the engine that ran, a one-line note: the compiled engine was asked for and not used,
    or it ran on ``threads`` threads). ``interpreted(max_states, timeout, warmup=False)`` runs the interpreter's
    search (``warmup``: auto's first states, on one process, with no checkpoint)."""
    unreduced = "interpreted without partial-order reduction (compiled engine only)" if por else None
    if engine == "interpreted":
        return interpreted(max_states, timeout), "interpreted", unreduced
    t0 = time.perf_counter()
    small = max_states is not None and max_states <= AUTO_THRESHOLD
    if engine == "auto" and checkpoint is not None and (small or resume and _interpreters(checkpoint, model)):
        return interpreted(max_states, timeout), "interpreted", unreduced  # (a checkpoint resumes on its engine)
    # auto: the interpreter first, for a point too small to be worth a C program; not with --checkpoint,
    # whose levels one engine writes from the start (a warm-up's first states would leave none)
    if engine == "auto" and checkpoint is None:
        if small:
            return interpreted(max_states, timeout), "interpreted", unreduced
        # (a point the index remembers going past the warm-up, with its program built, starts on it)
        if not went_past_warmup(model, symmetry, por):
            st = interpreted(AUTO_THRESHOLD, timeout, warmup=True)
            if st.stopped != StopReason.MAX_STATES:
                return st, "interpreted", unreduced
            from checker.kernel.context import ContextRules

            model.rules = ContextRules(model)  # the events of the partial run are the compiled run's to record
    left = None if timeout is None else max(0.001, timeout - (time.perf_counter() - t0))
    try:
        st = compiled_search(model, symmetry=symmetry, max_states=max_states, timeout=left,
                             check_symmetry=check_symmetry, max_memory=max_memory, por=por, threads=threads,
                             fingerprint=fingerprint, checkpoint=checkpoint, resume=resume,
                             past_warmup=engine == "auto" and checkpoint is None)
        notes = [n for n in (f"{threads} threads" if threads > 1 else None,
                             "64-bit fingerprints" if fingerprint else None,
                             "checkpoints" if checkpoint is not None else None, cbuild.note()) if n]
        return st, "compiled", "; ".join(notes) or None
    except Fallback as e:
        from checker.kernel.context import ContextRules

        model.rules = ContextRules(model)
        return interpreted(max_states, left), "interpreted", f"interpreted: {e}"


def replay_events(model: Model, low: Any, evs: list, hits: list[tuple[int, Any, int, int]]) -> None:
    """The context events the program reported, ``(event, state, step, order)`` (step -2: a spinning handler,
    -1: the terminal check), told to the context rules: at one state a spinning handler first (the interpreter
    looks before the state's steps), the terminal check last."""
    for e, s, step, _ in sorted(hits, key=lambda x: (x[3], x[2] if x[2] >= 0 else -1 if x[2] == -2 else 1 << 30)):
        if step == -2:
            model.rules.irq_spins(s)
            continue
        if step < 0:
            model.rules.on_terminal(s)
            continue
        label = low.steps[step].label
        t = next((t for lab, t in model.successors(s) if lab == label), None)
        if t is None:
            raise InternalError(f"compiled engine: context event {evs[e]} at a step the interpreter does not "
                                f"take ({label} in {s})")
        model.rules.on_transition(s, label, t)
