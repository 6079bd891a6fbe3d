# SPDX-License-Identifier: GPL-2.0-only
"""What a spec class declares: parameters, variables, roles, actions, properties.

Decorators and declarations only record small frozen values; the spec class
collects them once when it is created (``checker.language.model``), and the
engines act on the compiled form (``checker.language.compile``).
"""
from __future__ import annotations

import sys
from collections.abc import Iterable as AbcIterable
from dataclasses import dataclass
from typing import Any, Callable, Iterable

from checker.errors import SpecError

from checker.types import CpuId, Enum, Int, IntType, NOBODY


class Declaration:
    """Base of class-level declarations; knows its name and source line."""

    name: str = ""
    owner: type | None = None
    line: int | None = None

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name
        self.owner = owner


def _check_values(what: str, v: Any, *, allow_callable: bool) -> None:
    """A Param's ``domain``/``explore``/``prove`` is a collection of values (a domain may be a predicate);
    a bare number is refused where it is written, naming what to write instead."""
    if v is None or (allow_callable and callable(v)) or (isinstance(v, AbcIterable) and not isinstance(v, str)):
        return
    frame = sys._getframe(2)  # the spec class body that wrote Param(...)
    hint = f"range(1, {v + 1})" if isinstance(v, int) and not isinstance(v, bool) and v > 0 else "range(1, 9)"
    raise SpecError(f"Param({what}={v!r}): {what} is a collection of values"
                    + (" or a predicate" if allow_callable else "") + f", e.g. {what}={hint} or {what}=(1, 2)",
                    file=frame.f_code.co_filename, line=frame.f_lineno)


class Param(Declaration):
    """A parameter of the spec.

    ``default`` is a value or a function of the other parameters (a derived
    parameter, recomputed from the values set unless set itself).
    ``domain`` is what is valid at all; ``explore`` and ``prove`` are the
    default sweeps of each backend (the default value when not given).
    ``names`` (an ``Enum``) names the values: ``--set variant=A..C`` works
    and reports show the name; a domain that is an ``Enum`` is all its values.
    """

    def __init__(self, default: Any, *, domain: Iterable[int] | Callable[[int], bool] | Enum | None = None,
                 explore: Iterable[int] | None = None, prove: Iterable[int] | None = None,
                 names: Enum | None = None, doc: str = ""):
        if isinstance(domain, Enum):
            names, domain = domain, range(len(domain.names))
        for what, v in (("domain", domain), ("explore", explore), ("prove", prove)):
            _check_values(what, v, allow_callable=what == "domain")
        self.default = default
        self.domain = domain
        self.names = names
        self.explore = tuple(explore) if explore is not None else None
        self.prove = tuple(prove) if prove is not None else None
        self.doc = doc

    @property
    def derived(self) -> bool:
        return callable(self.default)

    def valid(self, value: Any) -> bool:
        if not isinstance(value, int) or isinstance(value, bool):
            return False
        d = self.domain
        if d is None:
            return True
        if callable(d):
            return bool(d(value))
        return value in d

    def show(self, value: Any) -> Any:
        return self.names.show(value) if self.names is not None and isinstance(value, int) else value

    def lookup(self, token: int | str) -> list[int]:
        """The values a command-line token stands for: a number, a name, or NAME..NAME."""
        if isinstance(token, int):
            return [token]
        e = self.names
        if e is None:
            raise ValueError(f"{token!r} is not an integer, a range LO..HI or a list")
        lo, dots, hi = token.partition("..")
        ends = (lo, hi) if dots else (token, token)
        for n in ends:
            if n not in e.names:
                raise ValueError(f"{n!r} is not one of {', '.join(e.names)}")
        a, b = e.names.index(ends[0]), e.names.index(ends[1])
        if b < a:
            raise ValueError(f"empty range {token}")
        return list(range(a, b + 1))

    def describe_domain(self) -> str:
        d = self.domain
        if d is None:
            return "any int"
        if self.names is not None and not callable(d):
            return ", ".join(self.names.show(v) for v in d)
        if isinstance(d, range) and d.step == 1:
            return f"{d.start}..{d.stop - 1}"
        if callable(d):
            return getattr(d, "__doc__", None) or "a predicate"
        return ", ".join(str(x) for x in d)


class Var(Declaration):
    """A state variable. ``kind`` is shared, percpu or ghost."""

    kind = "shared"

    def __init__(self, init: Any = 0, *, type: IntType = Int, overflow: str = "error",
                 role: str | None = None, atomic: bool = False, doc: str = ""):
        if overflow not in ("error", "wrap"):
            raise ValueError("overflow must be 'error' or 'wrap'")
        self.init = init
        self.type = type
        self.overflow = overflow
        self.role = role
        # atomic64_t / local64_t: every access whole, also on a 32-bit kernel (checker.kernel.tearing)
        self.atomic = atomic
        self.doc = doc


class Shared(Var):
    """One value shared by all CPUs (``fbc->count``)."""

    kind = "shared"


class PerCpu(Var):
    """One value per CPU (``*this_cpu_ptr(fbc->counters)``), indexed by CPU id.

    ``role`` names the CPUs that own a meaningful value; the others keep
    ``init`` (0 by default) for the whole run.
    """

    kind = "percpu"


class PerTask(PerCpu):
    """One value per task of the Task role ``role`` (``current->...``, a task's locals and its
    preempt_count), indexed by task id."""

    def __init__(self, init: Any = 0, *, role: str, type: IntType = Int, overflow: str = "error", doc: str = ""):
        super().__init__(init, type=type, overflow=overflow, role=role, doc=doc)


class Array(Var):
    """A fixed-length array indexed 0..length-1 (``mm->rss_stat[NR_MM_COUNTERS]``),
    updated like a per-CPU variable (``arr={i: value}``) but never permuted by
    symmetry. ``length`` is a parameter name or a number."""

    kind = "array"

    def __init__(self, length: str | int, init: Any = 0, *, type: IntType = Int, overflow: str = "error",
                 doc: str = ""):
        super().__init__(init, type=type, overflow=overflow, doc=doc)
        self.length = length


#: The value an uninitialised variable holds in the report mode (never a real value).
UNINIT = -(1 << 62) + 7


class StateMutated(Exception):
    """Spec code assigned to the state (``s.x = ...``, ``s.local[cpu] += 1``) instead of returning updates."""

    def __str__(self) -> str:
        return (f"the state is immutable: an action returns when(guard, {self.args[0].split('[')[0]}=...) "
                f"instead of assigning to s.{self.args[0]}")


class UninitRead(Exception):
    """Spec code read a variable that was never assigned."""

    def __init__(self, name: str):
        super().__init__(name)
        self.name = name


class Uninit(Var):
    """A local declared without a value (``int i;``).

    ``mode`` names the parameter that selects what reading it does: 0 reports
    the read (as KMSAN would: the property ``no_uninit_read`` is violated with
    the trace to the read); 1 lets it hold any value of ``domain`` (the
    explorer starts from each; the witness names the value).
    """

    kind = "shared"

    def __init__(self, domain: tuple[int, ...], *, mode: str = "uninit", type: IntType = Int, doc: str = ""):
        super().__init__(UNINIT, type=type, doc=doc)
        self.domain = tuple(domain)
        self.mode = mode


class Ghost(Var):
    """Not kernel state: bookkeeping that properties need (the exact value)."""

    kind = "ghost"


class Lock(Shared):
    """A lock: the id of the CPU holding it, or NOBODY. A spinlock by default
    (holding it makes the context atomic); ``sleeping=True`` for a mutex."""

    def __init__(self, doc: str = "", *, sleeping: bool = False, raw: bool = True):
        super().__init__(NOBODY, type=CpuId, doc=doc)
        self.spinlock = not sleeping
        self.raw = raw  # raw_spinlock_t; raw=False is a spinlock_t, which sleeps on PREEMPT_RT


class Abstraction(Declaration):
    """Unbounded behaviour in a finite state graph, for liveness checks.

    Where ``when(params)`` holds, every step leaves each variable of
    ``freeze`` at its initial value (a budget that is never used up: CPUs
    that add forever; a value that only grows, dropped) and keeps each
    variable of ``modulo`` (name -> function of the parameters) modulo that
    number (a word whose value only matters for equality). Such a point is
    checked for liveness only: its invariants and ``sometimes`` would read
    the dropped values. Sound when no guard, and no update of another
    variable, reads a frozen variable except a budget's ``> 0``, and when
    equality of a reduced word is all the steps ask of it: the spec says why.
    ``requires`` is ``(test, text)``: a point where the test fails is refused
    (exit 2) with the text, e.g. the parts of the spec that read dropped values.
    """

    def __init__(self, when: Callable[[Any], bool], *, freeze: Iterable[str] = (),
                 modulo: dict[str, Callable[[Any], int]] | None = None,
                 requires: tuple[Callable[[Any], bool], str] | None = None, doc: str = ""):
        self.when = when
        self.requires = requires  # (test of the parameters, what to set): the points it is sound at
        self.freeze = tuple(freeze)
        self.modulo = dict(modulo or {})
        self.doc = doc

    def refusal(self, params: Any) -> str | None:
        """Why the abstraction refuses the point ``params`` (it applies there and ``requires`` fails), else None."""
        if not self.when(params) or self.requires is None or self.requires[0](params):
            return None
        return f"its liveness abstraction ({self.name}) needs {self.requires[1]}"


class Role(Declaration):
    """A group of CPUs doing one kind of work, sized by a parameter.

    CPUs of a ``symmetric`` role are interchangeable: the explorer may
    replace a state by any state with those CPUs permuted. Actions of such a
    role must not compare, order or compute with CPU ids.
    """

    def __init__(self, count: str | int, *, symmetric: bool = False, cpu: Callable[..., Any] | None = None,
                 cpus: str | None = None, doc: str = ""):
        self.count = count
        self.symmetric = symmetric
        #: with ``cpu=``: the role whose members are the CPUs it returns (default: every role without cpu=;
        #: it may be the role itself, for CPUs that each run a task the scheduler may move)
        self.cpus = cpus
        #: ``cpu=lambda s, t: s.on[t]``: the CPU a member's steps run on, where the role is not the CPUs
        #: themselves (a task of the spec's own making): under ``--memory tso|lkmm`` its steps use that CPU's
        #: store buffer and views, its this_cpu accesses that CPU's slot, and a step that moves it to another
        #: CPU is the scheduler's full barrier on both (``checker.ordering.machine.RunsOn``).
        self.cpu = cpu
        self.doc = doc


class Task(Role):
    """A group of tasks (threads) that run on the CPUs of the role ``cpus``, sized by a parameter.

    A task is not a CPU: several tasks share one, the scheduler decides which
    of them runs (``checker.kernel.tasks``), and a task's actions receive its
    task id. ``s.task_cpu[t]`` is the CPU task ``t`` is on (its
    ``this_cpu_*`` variables are ``Select(s.local, s.task_cpu[t])``) and
    ``s.curr[cpu]`` the task that CPU runs. Task ``i`` of the role starts on
    the ``i % ncpus``-th CPU of ``cpus``. ``pinned=True``: the tasks never
    migrate (per-CPU kthreads, ``schedule_on_each_cpu`` workers).
    Per-task variables are ``PerTask(init, role=...)``; typed ``PREEMPT_COUNT``,
    ``IRQS_OFF``, ``MIGRATE_DISABLED`` or ``BH_OFF`` they are the task's
    context, which decides where it can be preempted and migrated.
    """

    def __init__(self, count: str | int, *, cpus: str, symmetric: bool = False, pinned: bool = False,
                 doc: str = ""):
        super().__init__(count, symmetric=symmetric, doc=doc)
        self.cpus = cpus
        self.pinned = pinned


class Subtree:
    """A node of an ``Interchangeable`` tree: its members (CPU indices within the role, or Subtrees) and the
    Array entries it owns (``item=(3,)``: entry 3 of the Array ``item`` moves with this node).

    The members of one Subtree that have one shape (alike nesting and owned entries) are interchangeable
    among themselves, each carrying what it holds."""

    def __init__(self, *members: "int | Subtree", **slots: Iterable[int]):
        self.members = members
        self.slots = {name: tuple(ix) for name, ix in slots.items()}

    def __repr__(self) -> str:
        own = "".join(f", {k}={v}" for k, v in self.slots.items())
        return f"Subtree({', '.join(map(repr, self.members))}{own})"


class Interchangeable(Declaration):
    """Structural CPU symmetry: which CPUs are interchangeable, and which groups of them are.

    ``tree(params)`` returns the root ``Subtree``: its leaves are CPU indices
    within ``role`` (0-based), and the members of every Subtree that have one
    shape are interchangeable, each moving with its own members and the Array entries
    it owns. The group is every renaming that permutes alike members of each
    Subtree (a wreath product when Subtrees nest). CPUs that are no leaf stay
    put. ``follow={"task": lambda p, i: i % p.ncpus}``: member ``i`` of the
    role ``task`` moves with the CPU ``follow(p, i)`` returns (members
    following one CPU keep their order). Checked like ``symmetric=True``:
    the sampled symmetry test refuses a tree the actions do not respect.
    """

    def __init__(self, tree: Callable[[Any], Subtree], *, role: str,
                 follow: dict[str, Callable[[Any, int], int]] | None = None, doc: str = ""):
        self.tree = tree
        self.role = role
        self.follow = dict(follow or {})
        self.doc = doc


@dataclass(frozen=True)
class ActionInfo:
    """What ``@action`` records about one action: its function, role, choices, accesses and source line."""
    name: str
    fn: Callable[..., Any]
    role: str | None
    choose: tuple[tuple[str, Any], ...]
    doc: str
    file: str | None
    line: int | None
    uses: tuple[tuple[str, str], ...] = ()  # (kernel symbol called, "file.c:line function")
    sleeps: bool = False  # the step may sleep (GFP_KERNEL allocation, mutex_lock)
    irq: bool = False  # the step runs in hard-interrupt context on its CPU
    applies: Callable[[Any], bool] | None = None  # the step exists only where applies(params)
    fair: str | None = None  # None, "weak" or "strong": per CPU, for liveness checks
    softirq: bool = False  # the step is a softirq handler on its CPU (irq exit, or ksoftirqd)
    builtin: bool = False  # the kernel's own step (the scheduler), not the spec's: engines may treat it apart
    access: tuple = ()  # its shared-memory accesses in program order (checker.ordering.annotations)


FAIRNESS = (None, False, "weak", "strong")


@dataclass(frozen=True)
class PropertyInfo:
    """What a property decorator records: kind, expected verdict, where it applies, and its source line."""
    name: str
    fn: Callable[..., Any]  # fn(state) -> truth value
    kind: str  # invariant, sometimes
    expect: str  # holds, violated
    applies: Callable[[Any], bool] | None
    doc: str
    file: str | None
    line: int | None
    role: str | None = None  # a per-CPU property: holds for every CPU of the role
    inductive: bool = False  # part of the spec's inductive strengthening (Z3 proofs)
    cpu_fn: Callable[..., Any] | None = None  # fn(state, cpu) of a per-CPU property
    proof: bool = True  # False: the explorer checks it, the Z3 backend does not try
    always: bool = False  # liveness: from every reachable state (eventually), not only from the start
    fair: bool = True  # liveness: only runs that respect the actions' fairness count
    lemma: bool = False  # there only to make induction go through, not a claim (IC3/PDR leaves it out)
    #: Its meaning needs sequential consistency (an order of steps is the claim): at a tso or lkmm point it is
    #: not checked and reported "not_applicable", with the name of the weak-memory property stated beside it.
    sc_only: bool = False
    weak_counterpart: str | None = None


def _record(fn: Callable, attr: str, value: Any) -> Callable:
    setattr(fn, attr, value)
    return fn


def action(fn: Callable | None = None, *, role: str | None = None,
           choose: dict[str, Any] | None = None, uses: dict[str, str] | None = None,
           sleeps: bool = False, irq: bool = False, applies: Callable[[Any], bool] | None = None,
           fair: str | bool | None = None, softirq: bool = False, access: Any = None) -> Any:
    """Mark a method as one atomic kernel step.

    ``role`` names the CPUs that may take the step (the method receives the
    CPU id); without it the step belongs to no CPU. ``choose`` maps argument
    names to the values to try: a collection, or a function of the
    parameters returning one. ``uses`` names the kernel symbols the step
    calls, each with its call site, for the per-configuration build check.
    ``sleeps=True`` marks a step that may sleep: taking it in atomic context
    (a spinlock held, interrupts or preemption off) rejects the spec.
    ``irq=True`` makes it an interrupt handler on its CPU: it can run between
    any two steps of that CPU's task, except while the spec's ``IRQS_OFF``
    variable for that CPU is set (in a spec with tasks: while the task that
    CPU runs has interrupts off). ``softirq=True`` makes it a softirq handler
    on its CPU: run on irq exit where the interrupted task has interrupts and
    bottom halves on, or, on PREEMPT_RT (``preempt=rt``), in ksoftirqd, so
    only where the CPU's task could be preempted. ``applies`` (a function of the parameters)
    keeps the step only where it is true: the code of one variant of a
    function, of one configuration. ``fair`` is the step's fairness in
    liveness checks, for each CPU of the role on its own: ``"weak"`` (if the
    step stays enabled for that CPU, it is eventually taken: a CPU that can
    run, runs), ``"strong"`` (if it is enabled again and again, it is
    eventually taken: a waiter on a FIFO lock is served), False (no promise).
    Left out, a step redefined in a subclass keeps the fairness of the step
    it replaces (none for a new step). ``access`` lists the step's shared-memory
    accesses in program order (``Load``, ``Store``, ``Rmw``, ``Fence`` and their
    kernel names, ``checker.ordering.annotations``), which ``--memory tso|lkmm``
    reads; under ``sc`` they change nothing.
    """
    if fair not in FAIRNESS:
        raise ValueError("fair must be 'weak', 'strong' or False")
    from checker.ordering.annotations import normalise

    accesses = normalise(access)

    def deco(f: Callable) -> Callable:
        return _record(f, "__countercheck_action__", {"role": role, "choose": dict(choose or {}),
                                                       "uses": dict(uses or {}), "sleeps": sleeps, "irq": irq,
                                                       "applies": applies, "fair": fair, "softirq": softirq,
                                                       "access": accesses})

    return deco(fn) if fn is not None else deco


def _prop(kind: str, fn: Callable | None, expect: str, applies: Callable | None, role: str | None = None,
          inductive: bool = False, proof: bool = True, always: bool = False, fair: bool = True,
          lemma: bool = False, sc_only: bool | str = False) -> Any:
    if expect not in ("holds", "violated"):
        raise ValueError("expect must be 'holds' or 'violated'")
    if lemma and (expect != "holds" or not proof):
        raise ValueError("a lemma (lemma=True) is part of the inductive strengthening: it is expected to hold "
                         "and is proved (drop expect= or proof=False)")
    if not (isinstance(sc_only, bool) or (isinstance(sc_only, str) and sc_only.isidentifier())):
        raise ValueError("sc_only is True or the name of the weak-memory property stated beside it, e.g. "
                         "sc_only=\"read_within_adds\"")

    def deco(f: Callable) -> Callable:
        return _record(f, "__countercheck_property__", {"kind": kind, "expect": expect, "applies": applies,
                                                         "role": role, "inductive": inductive, "proof": proof,
                                                         "always": always, "fair": fair, "sc_only": sc_only,
                                                         **({"lemma": True} if lemma else {})})

    return deco(fn) if fn is not None else deco


def invariant(fn: Callable | None = None, *, expect: str = "holds",
              applies: Callable[[Any], bool] | None = None, role: str | None = None,
              inductive: bool = False, proof: bool = True, lemma: bool = False,
              sc_only: bool | str = False) -> Any:
    """A predicate that must hold in every reachable state.

    ``expect="violated"`` ships a claim known to be false (a bug, or a
    variant of a bound shown to be too tight); ``applies`` limits it to the
    parameter points where it means something. With ``role`` the predicate
    takes ``(s, cpu)`` and must hold for every CPU of that role (the Z3
    backend proves it for one arbitrary CPU). ``inductive=True`` puts it in
    the spec's inductive strengthening: the invariants that together are
    preserved by every step, from which the others are proved. ``proof=False``
    leaves it to the explorer (the Z3 report says so): for a claim the
    strengthening does not imply and that is not worth strengthening for.
    ``lemma=True`` (implies ``inductive=True``) says it is there only to make
    induction go through, not a claim of its own: ``--prover pdr`` finds its
    own strengthening and leaves lemmas out; ``list`` marks them.
    ``sc_only=True`` (or the name of the property that states the claim under
    weak memory, beside it): its meaning needs sequential consistency ("no add
    overlapped the sum" is an order of steps); under ``--memory tso|lkmm`` it is
    not checked and each point reports it ``not_applicable``, neither a pass
    nor a failure.
    """
    return _prop("invariant", fn, expect, applies, role, inductive or lemma, proof, lemma=lemma, sc_only=sc_only)


def sometimes(fn: Callable | None = None, *, expect: str = "holds",
              applies: Callable[[Any], bool] | None = None) -> Any:
    """A predicate that must hold in some reachable state: the spec's
    evidence that its invariants are not vacuous. Never reached is a failure."""
    return _prop("sometimes", fn, expect, applies)


def eventually(fn: Callable | None = None, *, expect: str = "holds", applies: Callable[[Any], bool] | None = None,
               always: bool = False, fair: bool = True) -> Any:
    """A liveness property: every run reaches a state where the predicate holds.

    The method returns a truth value of the state, or a step predicate: a
    function ``(s, t)`` of a step's state before and after (``lambda s, t:
    ...``), and then every run must take such a step. A run is a maximal
    sequence of steps; one that ends (nothing enabled) stays in its last
    state forever, so a run that stops short of the goal violates it. With
    ``fair=True`` (the default) only runs in which every ``@action(fair=...)``
    promise is kept count; ``fair=False`` asks it of every schedule (lock
    freedom). ``always=True`` asks it again from every reachable state
    (always eventually: infinitely often). The explorer checks it on the
    unreduced state graph; the Z3 backend does not.
    """
    return _prop("eventually", fn, expect, applies, always=always, fair=fair)


def leads_to(fn: Callable | None = None, *, expect: str = "holds", applies: Callable[[Any], bool] | None = None,
             fair: bool = True) -> Any:
    """A liveness property ``P ~> Q``: the method returns ``(P, Q)``, and after
    every state where P holds, Q holds then or later. Q may be a step
    predicate ``(s, t)`` as for ``@eventually``; ``fair`` as there."""
    return _prop("leads_to", fn, expect, applies, fair=fair)


def witness(*, reaches: tuple[str, ...] = (), violates: tuple[str, ...] = (),
            at: dict[str, tuple[int, ...]] | None = None, applies: Callable[[Any], bool] | None = None) -> Callable:
    """A schedule that drives the spec to a state of interest at any size.

    The decorated function takes the parameters and yields steps
    ``(action, cpu, choices, repeat)``. The Z3 backend replays it concretely,
    through the same actions, at CPU counts far past exhaustive exploration,
    and reports each ``sometimes`` in ``reaches`` as reached and each
    invariant in ``violates`` as violated there, by construction. ``at``
    gives the parameter values to replay it at (a cross product); ``applies``
    skips the points where the schedule means nothing (another variant).
    """

    def deco(f: Callable) -> Callable:
        return _record(f, "__countercheck_witness__", {"reaches": tuple(reaches), "violates": tuple(violates),
                                                        "at": dict(at or {}), "applies": applies})

    return deco


def terminal(fn: Callable) -> Callable:
    """The predicate "all work is done". A state with nothing enabled that
    is not terminal is a deadlock."""
    return _record(fn, "__countercheck_terminal__", True)


class Between:
    """The integers ``lo..hi`` (inclusive) as an action's choice; either bound
    may be a function of the parameters. The explorer tries each value; the
    Z3 backend takes one symbolic value in the range, so the range may be as
    large as a parameter that is itself symbolic."""

    def __init__(self, lo: Any, hi: Any):
        self.lo = lo
        self.hi = hi

    def bounds(self, p: Any) -> tuple[Any, Any]:
        lo = self.lo(p) if callable(self.lo) else self.lo
        hi = self.hi(p) if callable(self.hi) else self.hi
        return lo, hi

    def values(self, p: Any) -> range:
        lo, hi = self.bounds(p)
        return range(lo, hi + 1)


class Fill:
    """Every slot of a per-CPU variable or array at once: ``summed=Fill(0)``
    (what ``for_each_possible_cpu(cpu) *per_cpu_ptr(p, cpu) = 0`` does),
    which the Z3 backend encodes for any number of CPUs."""

    __slots__ = ("value",)

    def __init__(self, value: Any):
        self.value = value

    def __repr__(self) -> str:
        return f"Fill({self.value!r})"


class Step:
    """What an action returns: a guard and the variables it changes."""

    __slots__ = ("guard", "updates")

    def __init__(self, guard: Any, updates: dict[str, Any]):
        self.guard = guard
        self.updates = updates

    def __repr__(self) -> str:
        return f"when({self.guard!r}, {self.updates!r})"


#: The result of an action whose guard is concretely false.
DISABLED = Step(False, {})


def when(guard: Any, **updates: Any) -> Step:
    """The step is enabled when ``guard`` holds; then it sets ``updates``.

    A per-CPU variable is updated with a mapping ``{cpu: value}``.
    """
    if guard is False or (guard.__class__ is int and not guard):
        return DISABLED
    return Step(guard, updates)
