# SPDX-License-Identifier: GPL-2.0-only
"""The swarm search: randomised depth-first bug hunting in parallel processes (``verify --search swarm``).

For spaces no exhaustive search finishes. As SPIN's swarm does, it runs many
small, different searches instead of one big one: each run is a depth-first
search in C (``swarm.c``, on the same generated steps and properties as the
breadth-first ``runtime.c``) with its own step order, depth limit, state
budget (Luby restarts) and bitstate hashes, all drawn from the seed and the
run's number; ``workers`` processes take the runs in turn (worker w: runs
w, w + workers, ...).

What it says, and no more:

- a property found (an invariant false, a deadlock, a ``sometimes`` true) is
  a path of step numbers, which the interpreter replays from the initial
  state, then shrinks (``checker.simulate.shrink``) and replays again: only
  a real trace is reported (``violated``, or for a ``sometimes`` a replayed
  witness: ``holds``, as the exhaustive search would say);
- nothing else is ever ``holds``: an invariant not found false is
  ``inconclusive``, with the coverage reached (runs, states visited, depth,
  seconds, and the bitstate's estimated coverage: the expected share of each
  run's new states its Bloom filter did not wrongly take as seen).

Deterministic given the seed (default 0) and a state budget: run r depends
on (seed, r) alone, and each property is reported from the lowest-numbered
run that found it. Under ``--timeout`` each run still replays alone, but how
many runs fit depends on the machine.
"""
from __future__ import annotations

import os
import subprocess
import time
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

import checker.lifetime as lifetime
from checker.compiled.build import CompileFailed, CompilerMissing, build
from checker.compiled.codegen import GENERATED, POR, generate, runtime_source
from checker.compiled.cterms import Untranslatable
from checker.compiled.distance import distance_source
from checker.compiled.lower import Lowered, NotLowerable, flatten, lower
from checker.errors import CheckerError
from checker.export.terms import Kids
from checker.language.compile import Label, Model

#: Runs when no budget (--timeout, --max-states) is given: enough for a small point's runs to differ.
DEFAULT_RUNS = 8
#: The deepest a run goes (the runs' limits are powers of two up to it) unless --depth says otherwise.
DEFAULT_DEPTH = 10_000
#: States of one Luby unit: run r's budget is luby(r) times this.
RUN_BASE = 1 << 16
#: The largest bitstate of one run, as log2 of its bits (2^30 bits: 128 MiB).
BITS_MAX = 30
DEADLOCK = -1


class SwarmFallback(Exception):
    """The point cannot run as C (the message names why)."""


class SwarmFailed(CheckerError):
    """A swarm worker misbehaved (a bug of ours, reported loudly, never a verdict)."""


@dataclass(frozen=True)
class SwarmOptions:
    """``verify --search swarm [--jobs W] [--depth D] [--seed S]``."""

    seed: int = 0
    workers: int | None = None  # None: the machine's cores
    depth: int | None = None
    method: str = "swarm"


@dataclass
class Hit:
    """A property found by a run, as the run found it (step numbers from the initial state)."""

    prop: int  # index into low.props, or DEADLOCK
    run: int
    initial: int
    seconds: float  # after the worker's start
    steps: list[int]
    worker: int = 0


@dataclass
class Swarm:
    """What the workers found and how far they looked."""

    hits: dict[int, Hit] = field(default_factory=dict)
    runs: int = 0
    states: int = 0
    transitions: int = 0
    depth: int = 0
    coverage: float = 1.0  # the lowest estimated bitstate coverage of a run
    lost: float = 0.0
    stopped: list[str] = field(default_factory=list)
    seconds: float = 0.0
    cpu: float = 0.0
    workers: int = 1
    depth_limits: tuple[int, int] = (0, 0)
    bits: tuple[int, int] = (0, 0)
    compile_seconds: float = 0.0
    compiled_now: bool = False

    def summary(self) -> str:
        """The coverage, in one line."""
        stop = ", ".join(sorted(set(self.stopped)))
        return (f"swarm: {self.runs} runs on {self.workers} process{'es' if self.workers != 1 else ''}, "
                f"{self.states:,} states visited (not distinct across runs), depth {self.depth} "
                f"(limits {self.depth_limits[0]}..{self.depth_limits[1]}), bitstate 2^{self.bits[0]}..2^{self.bits[1]} "
                f"bits, estimated coverage >= {100 * self.coverage:.2f}% of each run's states, "
                f"{self.seconds:.1f}s; stopped: {stop}")


def swarm_source(low: Lowered, symmetry: bool) -> str:
    """The swarm program: the generated part of the breadth-first program, ``cc_step_one``, then ``swarm.c``."""
    full, _ = generate(low, symmetry)
    rt = runtime_source()
    suffix = rt[rt.index(GENERATED) + len(GENERATED):].replace(POR, "")  # (generate() without por leaves it empty)
    if not full.endswith(suffix):
        raise SwarmFailed("the generated program does not end with the runtime (checker/compiled/codegen.py changed)")
    head = full[:len(full) - len(suffix)]
    one = ["static inline int cc_step_one(int k, const int64_t *restrict s, int64_t *restrict t) {",
           "    switch (k) {"]
    one += [f"    case {st.index}: return cc_step_{st.index}(s, t);" for st in low.steps]
    one += ["    }", "    (void)s; (void)t; return 0;", "}", ""]
    kids = Kids()
    narrow = {name: f"s[{i}]" for i, name in enumerate(low.slot_names)}
    wide = {name: f"((cw_t)s[{i}])" for i, name in enumerate(low.slot_names)}
    dist = distance_source(low.props, narrow, wide, kids)
    body = resources.files("checker.compiled").joinpath("swarm.c").read_text()
    return head + "\n" + "\n".join(one) + dist + body


_programs: dict[tuple, tuple] = {}


def prepare(model: Model, symmetry: bool) -> tuple[Lowered, Path, float, bool]:
    """(lowered model, built swarm program, compile seconds, compiled now), or SwarmFallback."""
    key = (model.cls, model.params, symmetry)
    hit = _programs.get(key)
    if hit is not None and hit[1].exists():
        return hit[0], hit[1], 0.0, False
    try:
        low = lower(model)
        source = swarm_source(low, symmetry)
    except (NotLowerable, Untranslatable) as e:
        raise SwarmFallback(str(e)) from None
    t0 = time.perf_counter()
    try:
        exe, now = build(source)
    except CompilerMissing as e:
        raise SwarmFallback(str(e)) from None
    except CompileFailed as e:
        raise SwarmFallback(f"the generated C did not compile: {e}") from None
    _programs[key] = (low, exe)
    return low, exe, time.perf_counter() - t0, now


def search(model: Model, opts: SwarmOptions, *, symmetry: bool = True, max_states: int | None = None,
           timeout: float | None = None, pending: list[bool] | None = None) -> tuple[Lowered, Swarm]:
    """Run the swarm on ``model``: the workers' hits (not yet replayed) and coverage. ``pending``: per
    property of ``model.properties``, then the deadlock, whether to look for it (default: all)."""
    use_sym = symmetry and model.symmetry.active
    low, exe, csecs, now = prepare(model, use_sym)
    workers = opts.workers or max(1, min(os.cpu_count() or 1, 64))
    budgeted = timeout is not None or max_states is not None
    runs = 0 if budgeted else max(DEFAULT_RUNS, workers)
    per_worker = 0 if max_states is None else max(1, -(-max_states // workers))
    pend = pending if pending is not None else [True] * (len(low.props) + 1)
    if len(pend) != len(low.props) + 1:
        raise SwarmFailed("pending properties do not match the lowered model")
    depth = opts.depth or DEFAULT_DEPTH
    inits = model.initial_states()
    text = f"{len(inits)}\n" + "\n".join(" ".join(map(str, flatten(model, s))) for s in inits) + "\n"
    procs = []
    t0 = time.perf_counter()
    try:
        for w in range(workers):
            args = [str(exe), str(opts.seed), str(w), str(workers), str(runs), repr(float(timeout or 0)),
                    str(per_worker), str(depth), str(BITS_MAX), str(RUN_BASE), "".join("1" if p else "0" for p in pend)]
            procs.append(subprocess.Popen(args, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                          text=True, errors="replace", **lifetime.popen_kwargs()))
        for p in procs:  # every worker has its initial states before any is read: they run side by side
            p.stdin.write(text)
            p.stdin.close()
        outs = [(p.stdout.read(), p.stderr.read()) for p in procs]
        for p in procs:
            p.wait()
    except BaseException:  # an interrupt: no worker outlives us, and none of their half results is read
        for p in procs:
            lifetime.kill_group(p)
        raise
    res = Swarm(workers=workers, compile_seconds=csecs, compiled_now=now)
    res.seconds = time.perf_counter() - t0
    lo_d, hi_d, lo_b, hi_b = [], [], [], []
    for w, (p, (out, err)) in enumerate(zip(procs, outs)):
        _read(res, w, p.returncode, out, err, exe, model, low, lo_d, hi_d, lo_b, hi_b)
    res.depth_limits = (min(lo_d, default=0), max(hi_d, default=0))
    res.bits = (min(lo_b, default=0), max(hi_b, default=0))
    return low, res


def _read(res: Swarm, w: int, code: int, out: str, err: str, exe: Path, model: Model, low: Lowered,
          lo_d: list, hi_d: list, lo_b: list, hi_b: list) -> None:
    """One worker's output, checked before it is believed (``checker.persist``'s rule)."""
    def bad(why: str) -> SwarmFailed:
        return SwarmFailed(f"swarm worker {w} ({exe}): {why}; a bug of the compiled engine, never a verdict")

    if code < 0:
        raise bad(f"killed by signal {-code}")
    lines = out.splitlines()
    if code == 4:  # cc_fail: a step the interpreter must judge (a value out of its type, a 64-bit overflow)
        error = next((ln.split() for ln in lines if ln.startswith("error ")), None)
        path = next((ln.split() for ln in lines if ln.startswith("path ")), None)
        raise SwarmFallback(_explain(model, low, error, path))
    if code != 0 or not lines or lines[-1] != "end":
        raise bad(f"exit status {code}: {err.strip()[:300]}")
    nsteps, nprops = len(low.steps), len(low.props)
    stats: dict[str, str] = {}
    for ln in lines[:-1]:
        parts = ln.split()
        try:
            if parts[0] == "found":
                prop, run, init, secs, n = int(parts[1]), int(parts[2]), int(parts[3]), float(parts[4]), int(parts[5])
                steps = [int(x) for x in parts[6:]]
                if len(steps) != n or not -1 <= prop < nprops or any(not 0 <= k < nsteps for k in steps) \
                        or not 0 <= init < len(model.initial_states()) or run < 0:
                    raise ValueError
                old = res.hits.get(prop)
                if old is None or run < old.run:
                    res.hits[prop] = Hit(prop, run, init, secs, steps, w)
            elif parts[0] == "result":
                stats = dict(p.split("=", 1) for p in parts[1:])
            else:
                raise ValueError
        except (ValueError, IndexError):
            raise bad(f"a line that does not parse: {ln[:80]!r}") from None
    try:
        res.runs += int(stats["runs"])
        res.states += int(stats["states"])
        res.transitions += int(stats["transitions"])
        res.depth = max(res.depth, int(stats["depth"]))
        res.coverage = min(res.coverage, float(stats["coverage"]))
        res.lost += float(stats["lost"])
        res.cpu += float(stats["cpu"])
        res.stopped.append(stats["stopped"])
        if int(stats["runs"]):
            lo_d.append(int(stats["depth_lo"]))
            hi_d.append(int(stats["depth_hi"]))
            lo_b.append(int(stats["bits_min"]))
            hi_b.append(int(stats["bits_max"]))
    except (KeyError, ValueError):
        raise bad(f"an incomplete result line {stats!r}") from None
    if not 0.0 <= res.coverage <= 1.0 or stats["stopped"] not in ("runs", "decided", "max_states", "timeout"):
        raise bad(f"an impossible result {stats!r}")


def labels(low: Lowered, steps: list[int]) -> list[Label]:
    """The interpreter's labels of a run's step numbers."""
    return [low.steps[k].label for k in steps]


def _explain(model: Model, low: Lowered, error: list[str] | None, path: list[str] | None) -> str:
    """A step the C cannot judge: replayed on the interpreter (its own error, with its state, if it
    raises one), else the reason the point runs interpreted."""
    if error is None:
        return "a swarm worker stopped on an error it did not name"
    kind = error[1]
    if path is not None:
        init, steps = int(path[2]), [int(x) for x in path[4:]]
        s = model.initial_states()[init]
        for lab in labels(low, steps):
            ai, cpu, ci = lab
            act = model.actions[ai]
            t = model.fire(s, act, cpu, act.choices[ci])  # raises the spec's error where the C stopped
            if t is None:
                break
            s = t
    return f"{kind} in the swarm's C ({' '.join(error[1:])}): the interpreter judges this point"


def replayable(model: Model, low: Lowered, hit: Hit) -> tuple[tuple, list[Label]]:
    """(initial state, labels) of a hit, each step checked enabled on the interpreter in turn."""
    start = model.initial_states()[hit.initial]
    labs = labels(low, hit.steps)
    s = start
    for i, (ai, cpu, ci) in enumerate(labs, 1):
        act = model.actions[ai]
        t = model.fire(s, act, cpu, act.choices[ci])
        if t is None:
            raise SwarmFailed(f"the swarm's path for property {hit.prop} does not replay: step {i} "
                              f"({act.info.name} on cpu{cpu}) is not enabled on the interpreter")
        s = t
    return start, labs


def describe(hit: Hit, depth_limit: Any = None) -> str:
    """How a run found it, for the trace's heading."""
    return f"swarm run {hit.run} (worker {hit.worker}, {hit.seconds:.2f}s in)"
