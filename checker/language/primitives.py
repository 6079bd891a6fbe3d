# SPDX-License-Identifier: GPL-2.0-only
"""The kernel primitives, as data: one table for process functions and the litmus lowering.

Each entry says, for one kernel primitive (``this_cpu_add``, ``READ_ONCE``, ``atomic_fetch_add_acquire``,
``raw_spin_lock_irqsave``, ``local_irq_save``, ``preempt_disable``, ...):

- its arguments, in C's order (``var`` is the memory it works on: a spec variable, written ``s.name``);
- its guard and effect (``effect(ctx, args)``, on a step's context: reads see the step's own writes);
- its memory-ordering annotation, the ``access=`` the weak-memory models read
  (``checker.ordering.annotations``), as plain data: ``(kind, order)``;
- its context effect: interrupts (``irqs``: +1 saves and disables, -1 restores), preemption
  (``preempt``), migration (``migrate``), the lock it takes or releases (``lock``), as ``checker.kernel.context`` checks them;
- its fairness: a primitive that waits (a spinlock) is strongly fair (qspinlock is FIFO), the others
  carry none of their own.

The litmus lowering (``checker.litmus.lower``) reads ``LOADS``, ``STORES``, ``FENCES`` and ``RMWS`` from here;
process functions (``checker.language.process``) read ``PRIMITIVES``, which is built from the same tables.
Nothing here imports above the language layer: the access records are plain data that duck-type
``checker.ordering.annotations.Access``.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, Callable

from checker.expr import If

#: Loads: name -> (argument form, order). "lvalue": READ_ONCE(*x); "pointer": smp_load_acquire(x).
LOADS = {"READ_ONCE": ("lvalue", "once"), "rcu_dereference": ("lvalue", "once"),
         "smp_load_acquire": ("pointer", "acquire"), "atomic_read": ("pointer", "once"),
         "atomic_read_acquire": ("pointer", "acquire")}
STORES = {"WRITE_ONCE": ("lvalue", "once"), "rcu_assign_pointer": ("lvalue", "release"),
          "smp_store_release": ("pointer", "release"), "atomic_set": ("pointer", "once"),
          "atomic_set_release": ("pointer", "release")}
FENCES = {"smp_mb": "mb", "smp_rmb": "rmb", "smp_wmb": "wmb", "smp_mb__before_atomic": "before_atomic",
          "smp_mb__after_atomic": "after_atomic", "smp_mb__after_spinlock": "after_spinlock",
          "smp_mb__after_unlock_lock": "after_unlock_lock"}

#: The _relaxed/_acquire/_release forms of a value-returning atomic and their Rmw orders.
_SUFFIXES = {"": "mb", "_relaxed": "relaxed", "_acquire": "acquire", "_release": "release"}


@dataclass(frozen=True)
class RmwOp:
    """An atomic read-modify-write: its arguments (names, in C's order), the new value, what it returns."""
    args: tuple[str, ...]  # of "v" (the pointer), "i", "old", "new", "u"
    new: Callable[..., Any]  # (old value, args dict) -> the value stored
    returns: str | None  # "new", "old", "test" (new == 0), "negative" (new < 0), "unless" (it added), "try", None
    order: str


def _rmw_table() -> dict[str, RmwOp]:
    t: dict[str, RmwOp] = {}
    for op, f in (("inc", lambda o, a: o + 1), ("dec", lambda o, a: o - 1)):
        t[f"atomic_{op}"] = RmwOp(("v",), f, None, "unordered")
        t[f"atomic_{op}_and_test"] = RmwOp(("v",), f, "test", "mb")
        for sfx, order in _SUFFIXES.items():
            t[f"atomic_{op}_return{sfx}"] = RmwOp(("v",), f, "new", order)
            t[f"atomic_fetch_{op}{sfx}"] = RmwOp(("v",), f, "old", order)
    for op, f in (("add", lambda o, a: o + a["i"]), ("sub", lambda o, a: o - a["i"])):
        t[f"atomic_{op}"] = RmwOp(("i", "v"), f, None, "unordered")
        for sfx, order in _SUFFIXES.items():
            t[f"atomic_{op}_return{sfx}"] = RmwOp(("i", "v"), f, "new", order)
            t[f"atomic_fetch_{op}{sfx}"] = RmwOp(("i", "v"), f, "old", order)
    # atomic_add_unless(v, a, u): adds a unless v == u; returns whether it added (a failure changes nothing:
    # the models take it as an unordered load)
    t["atomic_add_unless"] = RmwOp(("v", "i", "u"), lambda o, a: If(o != a["u"], o + a["i"], o), "unless", "mb")
    t["atomic_sub_and_test"] = RmwOp(("i", "v"), lambda o, a: o - a["i"], "test", "mb")
    t["atomic_add_negative"] = RmwOp(("i", "v"), lambda o, a: o + a["i"], "negative", "mb")
    for sfx, order in _SUFFIXES.items():
        t[f"atomic_xchg{sfx}"] = RmwOp(("v", "new"), lambda o, a: a["new"], "old", order)
        t[f"xchg{sfx}"] = RmwOp(("v", "new"), lambda o, a: a["new"], "old", order)
        cas = RmwOp(("v", "old", "new"), lambda o, a: If(o == a["old"], a["new"], o), "old", order)
        t[f"atomic_cmpxchg{sfx}"] = cas
        t[f"cmpxchg{sfx}"] = cas
    return t


#: The atomic read-modify-writes (atomic_t and plain-word xchg/cmpxchg), by kernel name.
RMWS = _rmw_table()


@dataclass(frozen=True)
class StepAccess:
    """One shared-memory access of a generated step: the fields of ``checker.ordering.annotations.Access``."""

    kind: str  # load, store, rmw, fence
    var: str | None
    order: str
    slot: Callable[..., Any] | str | None = None
    race_ok: bool = False
    dep: bool | str = False
    file: str | None = None
    line: int | None = None

    @property
    def plain(self) -> bool:
        """A plain C access: the one LKMM flags in a data race."""
        return self.order == "plain" and self.kind in ("load", "store") and not self.race_ok


@dataclass(frozen=True)
class Primitive:
    """One kernel primitive: what a process function may call as ``k.<name>(...)``."""

    name: str
    args: tuple[str, ...]  # "var" (a spec variable, s.name), "cpu" (another CPU's slot) or a value's name
    effect: Callable[..., Any]  # effect(ctx, var, **values) -> the value the primitive returns
    access: tuple[tuple[str, str], ...] = ()  # (kind, order) of each access to var, in program order
    slot: str = "shared"  # "this_cpu": the acting CPU's slot of var; "cpu": the slot given; "shared": var itself
    irqs: int = 0  # +1: interrupts saved and disabled; -1: restored
    preempt: int = 0  # +1: preempt_disable(); -1: preempt_enable()
    migrate: int = 0  # +1: migrate_disable(); -1: migrate_enable() (a task's MIGRATE_DISABLED count)
    lock: str | None = None  # "take" or "release"
    waits: bool = False  # its guard waits for another CPU (a spinlock): strongly fair
    sleeps: bool = False  # the step may sleep (might_sleep(): a GFP_KERNEL allocation): @action(sleeps=True)
    doc: str = ""
    returns: tuple[str, ...] = field(default=())  # names of what it returns, for the guide's table
    #: A primitive that succeeds or fails (try_cmpxchg): each outcome is its own way through the step, and
    #: effect(ctx, ..., outcome=name) takes the one given. A failed try_cmpxchg stores nothing.
    outcomes: tuple[str, ...] = ()

    @property
    def joins(self) -> str | None:
        """A context-only primitive (local_irq_*, preempt_*, migrate_*: no memory, no lock) is not a step of its
        own: one that disables joins the step after it ("next"), one that enables the step before it ("prev").
        Nothing on this CPU can run between them and that step (interrupts, preemption or migration are off
        there), and what other CPUs do commutes with a change of this CPU's own context, so the states left
        out are only ones in between."""
        if self.access or self.lock or self.sleeps or not (self.irqs or self.preempt or self.migrate):
            return None
        return "next" if self.irqs + self.preempt + self.migrate > 0 else "prev"


def _plain_slot(ctx: Any, var: str, cpu: Any = None) -> Any:
    return ctx.this_cpu if cpu is None else cpu


def _this_cpu_ops(prefix: str, load: str, store: str) -> dict[str, Primitive]:
    """this_cpu_* (irq-safe on this CPU) and raw_cpu_* (__this_cpu_*: the caller keeps preemption off)."""
    out: dict[str, Primitive] = {}

    def p(name: str, args: tuple[str, ...], effect: Callable[..., Any], access: tuple[tuple[str, str], ...],
          doc: str) -> None:
        out[prefix + name] = Primitive(prefix + name, args, effect, access, "this_cpu", doc=doc)

    p("read", ("var",), lambda c, v: c.read(v, c.this_cpu), (("load", load),), "this CPU's slot")
    p("write", ("var", "val"), lambda c, v, val: c.write(v, c.this_cpu, val), (("store", store),), "this CPU's slot := val")
    for op, f in (("add", lambda o, i: o + i), ("sub", lambda o, i: o - i)):
        p(op, ("var", "val"), lambda c, v, val, f=f: c.write(v, c.this_cpu, f(c.read(v, c.this_cpu), val)),
          (("rmw", "this_cpu"),), f"this CPU's slot {op} val")

        def ret(c: Any, v: str, val: Any, f: Callable[..., Any] = f) -> Any:
            new = f(c.read(v, c.this_cpu), val)
            c.write(v, c.this_cpu, new)
            return new

        p(f"{op}_return", ("var", "val"), ret, (("rmw", "this_cpu"),), f"{op}, returns the new value")
    for op, d in (("inc", 1), ("dec", -1)):
        p(op, ("var",), lambda c, v, d=d: c.write(v, c.this_cpu, c.read(v, c.this_cpu) + d),
          (("rmw", "this_cpu"),), f"this CPU's slot {op}")

        def ret1(c: Any, v: str, d: int = d) -> Any:
            new = c.read(v, c.this_cpu) + d
            c.write(v, c.this_cpu, new)
            return new

        p(f"{op}_return", ("var",), ret1, (("rmw", "this_cpu"),), f"{op}, returns the new value")

    def xchg(c: Any, v: str, new: Any) -> Any:
        old = c.read(v, c.this_cpu)
        c.write(v, c.this_cpu, new)
        return old

    def cmpxchg(c: Any, v: str, old: Any, new: Any) -> Any:
        cur = c.read(v, c.this_cpu)
        c.write(v, c.this_cpu, If(cur == old, new, cur))
        return cur

    def try_cmpxchg(c: Any, v: str, old: Any, new: Any, outcome: str = "ok") -> Any:
        # this_cpu_try_cmpxchg(pcp, &old, new): true if it swapped; else *old = the slot's value
        cur = c.read(v, c.this_cpu)
        if outcome == "ok":
            c.guard(cur == old)
            c.write(v, c.this_cpu, new)
            return True, old
        c.guard(cur != old)
        return False, cur

    p("xchg", ("var", "new"), xchg, (("rmw", "this_cpu"),), "returns the old value")
    p("cmpxchg", ("var", "old", "new"), cmpxchg, (("rmw", "this_cpu"),), "returns the old value")
    out[prefix + "try_cmpxchg"] = Primitive(
        prefix + "try_cmpxchg", ("var", "old", "new"), try_cmpxchg, (("rmw", "this_cpu"),), "this_cpu",
        doc="ok, old = k.this_cpu_try_cmpxchg(s.v, old, new): (True, old) having swapped, or (False, the slot's "
            "value)", outcomes=("ok", "fail"))
    return out


def _rmw_effect(op: RmwOp) -> Callable[..., Any]:
    names = [a for a in op.args if a != "v"]

    def effect(c: Any, var: str, *vals: Any) -> Any:
        a = dict(zip(names, vals))
        old = c.read(var, None)
        new = op.new(old, a)
        c.write(var, None, new)
        return {"new": new, "old": old, "test": new == 0, "negative": new < 0, "unless": old != a.get("u"),
                None: None}[op.returns]
    return effect


def _try_cmpxchg(order: str) -> Callable[..., Any]:
    def effect(c: Any, var: str, old: Any, new: Any, outcome: str = "ok") -> Any:
        cur = c.read(var, None)
        if outcome == "ok":
            c.guard(cur == old)
            c.write(var, None, new)
            return True, old
        c.guard(cur != old)
        return False, cur
    return effect


def _locks() -> dict[str, Primitive]:
    out: dict[str, Primitive] = {}

    def take(c: Any, var: str) -> Any:
        c.guard(c.read(var, None) == c.nobody)
        c.write(var, None, c.me)
        return None

    def release(c: Any, var: str) -> Any:
        c.write(var, None, c.nobody)
        return None

    def take_irqsave(c: Any, var: str) -> Any:
        flags = c.irq_save()
        take(c, var)
        return flags

    def release_irqrestore(c: Any, var: str, flags: Any) -> Any:
        release(c, var)
        c.irq_restore(flags)
        return None

    def take_irq(c: Any, var: str) -> Any:
        c.irq_save()
        take(c, var)

    def release_irq(c: Any, var: str) -> Any:
        release(c, var)
        c.irq_restore(0)

    for raw in ("", "raw_"):
        out[f"{raw}spin_lock"] = Primitive(f"{raw}spin_lock", ("var",), take, lock="take", waits=True,
                                           doc="waits until the lock is free, then holds it")
        out[f"{raw}spin_unlock"] = Primitive(f"{raw}spin_unlock", ("var",), release, lock="release")
        out[f"{raw}spin_lock_irqsave"] = Primitive(f"{raw}spin_lock_irqsave", ("var",), take_irqsave, irqs=1,
                                                   lock="take", waits=True, returns=("flags",),
                                                   doc="flags = k.raw_spin_lock_irqsave(s.lock)")
        out[f"{raw}spin_unlock_irqrestore"] = Primitive(f"{raw}spin_unlock_irqrestore", ("var", "flags"),
                                                        release_irqrestore, irqs=-1, lock="release")
        out[f"{raw}spin_lock_irq"] = Primitive(f"{raw}spin_lock_irq", ("var",), take_irq, irqs=1, lock="take",
                                               waits=True)
        out[f"{raw}spin_unlock_irq"] = Primitive(f"{raw}spin_unlock_irq", ("var",), release_irq, irqs=-1,
                                                 lock="release")
    return out


def _context() -> dict[str, Primitive]:
    def restore(c: Any, flags: Any) -> Any:
        c.irq_restore(flags)

    def disable(c: Any) -> Any:
        c.irq_save()

    return {
        "local_irq_save": Primitive("local_irq_save", (), lambda c: c.irq_save(), irqs=1, returns=("flags",),
                                    doc="flags = k.local_irq_save()"),
        "local_irq_restore": Primitive("local_irq_restore", ("flags",), restore, irqs=-1),
        "local_irq_disable": Primitive("local_irq_disable", (), disable, irqs=1),
        "local_irq_enable": Primitive("local_irq_enable", (), lambda c: c.irq_restore(0), irqs=-1),
        "preempt_disable": Primitive("preempt_disable", (), lambda c: c.preempt(1), preempt=1),
        "preempt_enable": Primitive("preempt_enable", (), lambda c: c.preempt(-1), preempt=-1),
        "migrate_disable": Primitive("migrate_disable", (), lambda c: c.migrate(1), migrate=1,
                                     doc="the task stays on its CPU (preemptible)"),
        "migrate_enable": Primitive("migrate_enable", (), lambda c: c.migrate(-1), migrate=-1),
        # might_sleep(): the step may sleep (vmalloc, a memcg charge with GFP_KERNEL), so the context rules
        # flag it in atomic context; inside `with k.atomic():` it marks that step
        "might_sleep": Primitive("might_sleep", (), lambda c: None, sleeps=True,
                                 doc="the step may sleep (a GFP_KERNEL allocation): checked against atomic context"),
    }


def _memory() -> dict[str, Primitive]:
    out: dict[str, Primitive] = {}
    for name, (_, order) in LOADS.items():
        out[name] = Primitive(name, ("var",), lambda c, v: c.read(v, None), (("load", order),))
    for name, (_, order) in STORES.items():
        # WRITE_ONCE(x, v) and smp_store_release(&x, v): the variable first, as in C
        out[name] = Primitive(name, ("var", "val"), lambda c, v, val: c.write(v, None, val), (("store", order),))
    for name, kind in FENCES.items():
        out[name] = Primitive(name, (), lambda c: None, (("fence", kind),))
    for name, op in RMWS.items():
        args = tuple("var" if a == "v" else a for a in op.args)
        access = (("rmw", op.order),) if op.returns != "unless" else (("rmw", op.order),)
        out[name] = Primitive(name, args, _rmw_effect(op), access)
    for sfx, order in _SUFFIXES.items():
        for base in ("atomic_try_cmpxchg", "try_cmpxchg"):
            out[base + sfx] = Primitive(base + sfx, ("var", "old", "new"), _try_cmpxchg(order), (("rmw", order),),
                                        doc="ok, old = k.try_cmpxchg(s.v, old, new)", outcomes=("ok", "fail"))
    # atomic64_* and atomic_long_* are the same operations on a wider word (the variable's type says how wide)
    for name in [n for n in out if n.startswith("atomic_")]:
        for wide in ("atomic64_", "atomic_long_"):
            alias = wide + name[len("atomic_"):]
            out[alias] = dataclasses.replace(out[name], name=alias)
    return out


def _remote() -> dict[str, Primitive]:
    return {"per_cpu": Primitive("per_cpu", ("var", "cpu"), lambda c, v, cpu: c.read(v, cpu), (("load", "plain"),),
                                 "cpu", doc="*per_cpu_ptr(v, cpu): a plain load of another CPU's slot")}


#: Every primitive a process function may call, by kernel name.
PRIMITIVES: dict[str, Primitive] = {**_memory(), **_this_cpu_ops("this_cpu_", "once", "once"),
                                    **_this_cpu_ops("raw_cpu_", "plain", "plain"), **_locks(), **_context(),
                                    **_remote()}

#: Calls on ``k`` that are not steps of their own: they join the step they are in.
#: assume(cond): the step runs only where cond holds (PlusCal's await); any_cpu(s.seen): a CPU whose
#: slot of ``seen`` is 0, chosen (every one is tried) and marked; data_race(x): a plain load that may race;
#: address_dep(s.p, load): the load's address comes from this CPU's last load of ``p`` (a dependency);
#: update(helper(s)): a plain helper's updates (``{name: value or {slot: value}}``) written in the step.
PSEUDO = ("assume", "any_cpu", "data_race", "address_dep", "atomic", "update")
