# SPDX-License-Identifier: GPL-2.0-only
"""At class creation: a spec with ``access=`` annotations gets the memory model and its bounds as parameters.

``memory`` (sc, tso, lkmm; default sc, so the spec means what it meant
before), ``sb_depth`` (tso: entries per CPU's store buffer),
``lkmm_history`` (lkmm: stores kept per location that some CPU has not yet
seen) and ``lkmm_promises`` (lkmm: stores a CPU may have promised and not
yet made, for load buffering: ``checker.ordering.promises``) are ordinary
parameters: they reach every engine and every report with the point, and ``--memory tso`` is ``--set memory=tso``. Each bound has
a ``sometimes`` that it is reached, and ``lkmm`` adds ``no_data_race``.
The annotations are checked here, against the spec's variables.
"""
from __future__ import annotations

from typing import Any

from checker.errors import SpecError
from checker.language.declare import Lock, Param, PropertyInfo, Task
from checker.types import Enum

MEMORY = Enum("sc", "tso", "lkmm", name="memory")
#: The parameters this module adds, and the hidden variables the engines add at a weak point.
PARAMS = ("memory", "sb_depth", "lkmm_history", "lkmm_promises")
GHOSTS = ("sb_n", *(f"sb_loc{k}" for k in range(8)), *(f"sb_val{k}" for k in range(8)), "tso_memory", "lk_n", "lk_val", "lk_who", "lk_mark", "lk_msgview", "lk_view", "lk_sync", "lk_taint", "data_race")


#: What each model assumes, in place of the sequentially consistent interleaving (the report's assumptions).
ASSUMPTION = {
    "tso": "x86-TSO: each CPU's stores wait in a FIFO store buffer of sb_depth entries (the point's value) "
           "until flushed; LOCKed RMWs, smp_mb() and taking a lock drain it, an unlock waits in the buffer as on x86 "
           "(checker.ordering.tso)",
    "lkmm": "lkmm, an operational approximation of the Linux-kernel memory model: per-location histories of "
            "lkmm_history stores (the point's value) read through per-CPU views, with up to lkmm_promises "
            "promised WRITE_ONCE() stores per CPU (load buffering); it agrees with LKMM on all 35 of the kernel's "
            "litmus tests (docs/litmus-table.md), and is stronger in that plain stores and read-modify-writes are "
            "never promised (docs/weak-memory.md); a step without access= that touches weak memory is fully ordered",
}


def assumptions(si: Any, base: tuple[str, ...], memory: str | None) -> tuple[str, ...]:
    """``base`` with the sequentially consistent interleaving replaced by ``memory``'s model, for a spec
    with annotations (one without them means the same under every model)."""
    if memory in (None, "sc") or not has_accesses(si):
        return base
    return (ASSUMPTION[memory] + "; symmetry reduction off",) + base[1:]


def weak_vars(si: Any) -> tuple[str, ...]:
    """The variables some action's ``access=`` names, in declaration order: the weak ones (a ``OneWord``'s
    fields, where an access names the word)."""
    words = getattr(si, "words", {})
    named: set[str] = set()
    for act in si.actions.values():
        for a in act.access:
            if a.var is not None and a.kind not in ("lock", "unlock"):  # (a Lock is ordered by its own rules)
                named.update(words[a.var].fields if a.var in words else (a.var,))
    return tuple(n for n in si.vars if n in named)


def has_accesses(si: Any) -> bool:
    """Whether any action of the spec declares ``access=`` (only such specs run under tso and lkmm)."""
    return any(act.access for act in si.actions.values())


def add_memory_model(si: Any, cls: type) -> None:
    """Check a spec's accesses and declare the parameters and ghosts the weak-memory models add."""
    if not has_accesses(si):
        return
    from checker.ordering.words import check, declared

    words = declared(cls)
    check(si, cls, words)
    si.words = words  # one kernel word held as several variables: one location (checker.ordering.words)
    _check_accesses(si, cls)
    for name in PARAMS + GHOSTS:
        if name in si.vars or (name in si.params and not getattr(si.params[name], "_countercheck_memory", False)):
            raise SpecError(f"{cls.__name__}: declares {name!r}, which the weak-memory model provides for a spec "
                            f"with access= annotations; rename it", file=si.file, line=si.line)
    for name, p in (("memory", Param(MEMORY.sc, domain=MEMORY, doc="the memory model: sc, tso or lkmm")),
                    ("sb_depth", Param(1, domain=range(1, 9), doc="tso: store-buffer entries per CPU")),
                    ("lkmm_history", Param(2, domain=range(2, 9),
                                           doc="lkmm: stores kept per location while some CPU has not seen them")),
                    ("lkmm_promises", Param(1, domain=range(0, 5),
                                            doc="lkmm: promised stores per CPU not yet made (load buffering; 0: "
                                                "none)"))):
        if name not in si.params:
            p.name, p.owner = name, cls
            p._countercheck_memory = True
            si.params[name] = p
    _add_properties(si)


def _check_accesses(si: Any, cls: type) -> None:
    names = ", ".join(n for n, v in si.vars.items() if v.kind != "ghost" and not isinstance(v, Lock))
    loaded = {a.var for act in si.actions.values() for a in act.access if a.kind in ("load", "rmw")}
    for act in si.actions.values():
        if not act.access:
            continue
        where = f"{cls.__name__}.{act.name}"
        held: list[str] = []
        for a in act.access:  # spin_lock()/spin_unlock() pair up inside the step: it is a whole critical section
            if a.kind == "lock":
                held.append(a.var)
            elif a.kind == "unlock" and (not held or held.pop() != a.var):
                raise SpecError(f"{where}: {a!r} without spin_lock({a.var!r}) before it in the same step",
                                file=a.file or act.file, line=a.line or act.line)
        if held:
            raise SpecError(f"{where}: spin_lock({held[-1]!r}) without spin_unlock({held[-1]!r}) after it in the "
                            f"same step (a step that keeps a lock takes it by its update, without annotation)",
                            file=act.file, line=act.line)
        if act.role is None:
            a = act.access[0]
            raise SpecError(f"{where}: access= describes what a CPU does, but the step belongs to no CPU; give it "
                            f"role=, e.g. @action(role=\"cpus\", access=...)", file=a.file or act.file,
                            line=a.line or act.line)
        for a in act.access:
            if a.kind == "fence":
                continue
            if a.kind in ("lock", "unlock"):
                if not isinstance(si.vars.get(a.var), Lock):
                    locks = ", ".join(n for n, v in si.vars.items() if isinstance(v, Lock))
                    raise SpecError(f"{where}: {a!r}: {a.var!r} is not a Lock; the Locks are: {locks or '(none)'}",
                                    file=a.file or act.file, line=a.line or act.line)
                continue

            def fail(msg: str, a=a, act=act, where=where) -> SpecError:  # bound per access (ruff B023)
                return SpecError(f"{where}: {a!r}: {msg}", file=a.file or act.file, line=a.line or act.line)

            if a.var in si.words:
                if a.slot is not None:
                    raise fail(f"{a.var} is one word ({', '.join(si.words[a.var].fields)}): it has no slots; "
                               f"drop slot=")
                continue
            v = si.vars.get(a.var)
            if v is None:
                raise fail(f"{a.var!r} is not a variable; the variables are: {names or '(none)'}")
            owner = next((w for w in si.words.values() if a.var in w.fields), None)
            if owner is not None:
                raise fail(f"{a.var} is a field of the word {owner.name}: name the word, e.g. "
                           f"{a.kind.capitalize()}({owner.name!r}, {a.order!r})")
            if isinstance(a.dep, str) and a.dep not in loaded:
                raise fail(f"dep={a.dep!r} names no variable a Load or Rmw reads (the pointer whose load gave the "
                           f"address); those are: {', '.join(sorted(loaded)) or '(none)'}")
            if isinstance(v, Lock):
                raise fail(f"{a.var} is a Lock: taking it is an acquire and releasing it a release, without "
                           f"annotations; drop this access")
            if v.kind == "ghost":
                raise fail(f"{a.var} is a Ghost (bookkeeping, not kernel memory), which has no memory order; "
                           f"drop this access")
            if v.kind == "array" and a.slot is None:
                raise fail(f"{a.var} is an Array: say which element, e.g. slot=lambda s, cpu: s.index[cpu], or "
                           f"slot=\"all\"")


def _weak_cpus(si: Any, p: Any) -> int:
    """How many CPUs take annotated steps at a point: one alone never falls behind its own stores, so the
    history bound cannot be reached (and is not needed: every verdict is exact)."""
    roles = {a.role for a in si.actions.values() if a.access and a.role is not None}
    # members run on the CPU roles: a Role(cpu=)'s, and a Task's (on its CPU's buffer and views)
    on = {n for n in roles if getattr(si.roles[n], "cpu", None) is not None or isinstance(si.roles[n], Task)}
    if on:
        roles = (roles - on) | {n for n, r in si.roles.items() if getattr(r, "cpu", None) is None
                                and not isinstance(r, Task)}
    return sum(len(getattr(p, r)) for r in roles)


def _add_properties(si: Any) -> None:
    """The bounds' witnesses and, under lkmm, the data-race check."""
    file, line = si.file, si.line

    def store_buffer_fills(s: Any) -> Any:
        from checker.expr import AnyOf

        return AnyOf([n >= s.sb_depth for n in s.sb_n])

    def history_fills(s: Any) -> Any:
        from checker.expr import AnyOf

        return AnyOf([n >= s.lkmm_history for n in s.lk_n])

    def no_data_race(s: Any) -> Any:
        return s.data_race == 0

    # Only a Store, a this_cpu Rmw or a lock's release is buffered under tso: a spec whose weak accesses are all
    # LOCKed read-modify-writes and loads (rss_split's atomic_long_add and atomic_long_read) never fills a buffer.
    buffers = any(a.kind == "store" or (a.kind == "rmw" and a.order == "this_cpu")
                  for act in si.actions.values() for a in act.access) or any(
        isinstance(v, Lock) for v in si.vars.values())
    props = [
        PropertyInfo("store_buffer_fills", store_buffer_fills, "sometimes", "holds",
                     lambda p: p.memory == MEMORY.tso and buffers,
                     "some CPU's store buffer holds sb_depth stores (the bound is reached: deeper buffers are "
                     "not explored)", file, line, proof=False),
        PropertyInfo("history_fills", history_fills, "sometimes", "holds",
                     lambda p: p.memory == MEMORY.lkmm and _weak_cpus(si, p) >= 2,
                     "some location keeps lkmm_history stores that a CPU has not seen (the bound is reached: a "
                     "CPU further behind is not explored)", file, line, proof=False),
    ]
    plain = any(a.plain for act in si.actions.values() for a in act.access)
    if plain:
        props.append(PropertyInfo(
            "no_data_race", no_data_race, "invariant", "holds", lambda p: p.memory == MEMORY.lkmm,
            "no plain access races with a conflicting access of another CPU that is not ordered before it "
            "(LKMM's data race; data_race()/race_ok accesses excepted)", file, line, proof=False))
    for p in props:
        if p.name not in ("store_buffer_fills", "history_fills"):  # (expressions over flat ghosts: lint runs them)
            p.fn.__countercheck_engine__ = True  # lint skips it: it reads the engine's hidden state
        si.properties.setdefault(p.name, p)
