# SPDX-License-Identifier: GPL-2.0-only
"""Verdicts and results: values with reasons, never printed here.

One word per idea, used in the API, the reports and the JSON alike:
a *check* is one property at one parameter point on one backend; its
*verdict* is ``holds``, ``violated`` or ``inconclusive`` (with a
*reason*); a *trace* is the list of *steps* leading to the state that
decides it (a counterexample, or the witness of a ``sometimes``).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

HOLDS = "holds"
VIOLATED = "violated"
INCONCLUSIVE = "inconclusive"
#: A property whose meaning needs sequential consistency, at a tso or lkmm point: not checked, so neither a
#: pass nor a failure (the check's reason names the weak-memory property stated beside it).
NOT_APPLICABLE = "not_applicable"
VERDICTS = (HOLDS, VIOLATED, INCONCLUSIVE, NOT_APPLICABLE)


class StopReason:
    """Why an exploration or proof stopped before deciding everything."""

    MAX_STATES = "max_states"
    TIMEOUT = "timeout"
    MAX_MEMORY = "max_memory"  # the compiled search's --max-memory budget
    OUT_OF_MEMORY = "memory"  # the interpreter's search ran out of memory (MemoryError)
    KILLED = "killed"  # the compiled search process was killed (by the OS: out of memory, say)
    WORKER_LOST = "worker_lost"  # a parallel or cluster worker died: resumable from a checkpoint
    NOT_INDUCTIVE = "not_inductive"
    SOLVER_UNKNOWN = "solver_unknown"


@dataclass(frozen=True)
class Step:
    """One step of a trace: who did what, and which variables changed."""

    cpu: int | None
    role: str | None
    action: str
    choices: dict[str, Any]
    changes: dict[str, Any]
    repeat: int = 1  # a compressed trace: the same step taken this many times in a row
    #: Where the action is defined (its function's file and first line), when known: SARIF code flows point there.
    file: str | None = None
    line: int | None = None
    #: The changes as the trace shows them (enum names, ``cpu0``, ``-`` for nobody), beside the raw values.
    shown: dict[str, str] | None = None
    #: Slots the step stored the value they already held (``count``): not in ``changes``, which only
    #: lists what differs, but a store the trace must show (the store that loses an update).
    unchanged: tuple[str, ...] = field(default=(), compare=False)

    def to_json(self) -> dict[str, Any]:
        d = {"cpu": self.cpu, "role": self.role, "action": self.action,
             "choices": dict(self.choices), "changes": dict(self.changes)}
        if self.shown is not None:  # optional (schema 1.3)
            d["shown"] = dict(self.shown)
        if self.repeat != 1:
            d["repeat"] = self.repeat
        if self.line is not None:  # optional (schema 1.1): omitted when the source is unknown
            d["file"], d["line"] = self.file, self.line
        return d


def make_step(model: Any, label: tuple, before: tuple, after: tuple) -> Step:
    """The trace step of one transition (``model``: a ``checker.language.compile.Model``): actor, action,
    choices and the variables it changed."""
    name, cpu, choices = model.label_parts(label)
    changes = model.changes(before, after)
    same = tuple(k for k in model.written(before, label) if k not in changes)
    return Step(cpu, model.role_of(cpu), name, choices, changes, unchanged=same)


@dataclass(frozen=True)
class Store:
    """One slot a step stored to, as people read it: ``count: 0 -> -1``; ``same`` when it stored the
    value already there."""

    var: str
    old: str
    new: str
    same: bool = False


@dataclass(frozen=True)
class ShownStep:
    """A step of a trace drawn for people (``checker.report.lanes``): who did it, named by what it is
    (``task2 on cpu0``, ``irq on cpu1``, ``cpu1``), the call, every store, and where the action is."""

    n: int
    lane: str  # the column it is drawn in: "cpu1", "irq on cpu1", "task2" (a task keeps its lane when it moves)
    rank: tuple[int, int]  # the lanes' left-to-right order
    actor: str
    call: str
    stores: tuple[Store, ...]
    file: str | None = None
    line: int | None = None
    note: str = ""  # more words after the stores (the start row: the values never assigned)


#: A trace drawn for people: its steps, and lines across the chart between them (a lasso's loop,
#: the values an uninitialised variable started with, an inversion's second order).
ShownTrace = list  # list[ShownStep | str]


@dataclass
class Check:
    """The outcome of one property at one parameter point on one backend."""

    spec: str
    file: str | None
    line: int | None
    params: dict[str, Any]
    property: str
    kind: str
    backend: str
    verdict: str
    expected: str
    reason: str | None = None
    symmetry: bool = False
    states: int | None = None
    transitions: int | None = None
    depth: int | None = None
    seconds: float = 0.0
    run: int = 0
    initial_state: dict[str, Any] | None = None
    trace: list[Step] = field(default_factory=list)
    loop_start: int | None = None
    doc: str = ""
    extra: dict[str, Any] = field(default_factory=dict)
    #: The trace rendered for people (enum names, old -> new); not part of the JSON.
    trace_text: list[str] = field(default_factory=list, repr=False)
    #: The same trace as lanes draw it (``ShownStep`` rows and marker lines); not part of the JSON.
    trace_shown: list = field(default_factory=list, repr=False)
    #: True when the spec declares this property violated by design (a bug spec's bug).
    bug: bool = False
    #: Whether symmetry reduction was asked for (the reproduce line repeats the request).
    requested_symmetry: bool = field(default=True, repr=False)
    #: The explorer that ran it ("interpreted" or "compiled"; None for other backends), and why the
    #: compiled one was asked for and not used
    engine: str | None = None
    engine_note: str | None = None
    #: Derived parameters computed from the others at this point (not set): the reproduce line omits them.
    computed: tuple[str, ...] = field(default=(), repr=False)
    #: The initial state as the trace shows it (flattened: ``local[1]``), beside the raw one.
    initial_shown: dict[str, str] | None = None

    @property
    def as_expected(self) -> bool:
        return self.verdict == self.expected

    @property
    def status(self) -> str:
        """``ok``, ``failed`` (an unexpected violation, or a bug not found) or ``inconclusive``."""
        if self.verdict == INCONCLUSIVE:
            return "inconclusive"
        if self.verdict == NOT_APPLICABLE:  # not checked on purpose: no failure (and its verdict is no holds),
            return "failed" if self.expected == VIOLATED else "ok"  # unless it is the bug the point looks for
        return "ok" if self.verdict == self.expected else "failed"

    def to_json(self) -> dict[str, Any]:
        d = {
            "spec": self.spec, "file": self.file, "line": self.line, "params": dict(self.params),
            "property": self.property, "kind": self.kind, "backend": self.backend,
            "verdict": self.verdict, "reason": self.reason, "expected": self.expected,
            "symmetry": self.symmetry, "states": self.states, "transitions": self.transitions,
            "depth": self.depth, "seconds": round(self.seconds, 6), "run": self.run,
            "initial_state": self.initial_state, "trace": [s.to_json() for s in self.trace],
            "loop_start": self.loop_start,
        }
        if self.initial_shown is not None:  # schema 1.3
            d["initial_state_shown"] = dict(self.initial_shown)
        if self.engine is not None:  # schema 1.2
            d["engine"] = self.engine
            if self.engine_note:
                d["engine_note"] = self.engine_note
        d.update(self.extra)
        return d


def flatten(state: dict[str, Any]) -> dict[str, Any]:
    """A state as the trace shows it: per-CPU values keyed ``local[2]``."""
    out: dict[str, Any] = {}
    for k, v in state.items():
        if isinstance(v, list):
            for c, x in enumerate(v):
                out[f"{k}[{c}]"] = x
        else:
            out[k] = v
    return out


@dataclass
class Outcome:
    """What one exploration decided about one property."""

    name: str
    kind: str
    verdict: str
    reason: str | None = None
    trace: list[Step] = field(default_factory=list)
    #: The state the trace starts from, when a spec has several (an uninitialised variable's values).
    initial_state: dict[str, Any] | None = None
    #: A verdict that needed every run, reached with the scheduler bounded: "<= 1 preemption, <= 0 migrations".
    bounded: str | None = None
    #: An inversion's second trace (the other order or context), when it has one.
    second_trace: list[Step] = field(default_factory=list)
    #: What a context rule found, in words (the places, the lock, the context).
    finding: str | None = None


@dataclass
class Exploration:
    """Statistics and per-property outcomes of one exhaustive exploration."""

    spec: str
    params: dict[str, Any]
    symmetry: bool
    states: int
    transitions: int
    depth: int
    seconds: float
    complete: bool
    stopped_because: str | None
    outcomes: dict[str, Outcome]
    initial_state: dict[str, Any] | None
    #: With fingerprints: the chance that a hash collision left a state unexplored.
    omission_probability: float | None = None
    #: Which explorer ran: "interpreted" or "compiled" (checker.compiled)
    engine: str = "interpreted"
    #: Why the compiled engine was asked for and not used ("interpreted: <construct>")
    engine_note: str | None = None

    @property
    def verdicts(self) -> dict[str, str]:
        return {n: o.verdict for n, o in self.outcomes.items()}
