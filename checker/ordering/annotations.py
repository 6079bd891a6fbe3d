# SPDX-License-Identifier: GPL-2.0-only
"""Memory-ordering annotations: what one atomic step does to shared memory, in program order.

An action declares its accesses with ``@action(..., access=...)``: one
access or a tuple of them, in the order the kernel code makes them. The
constructors are named as the kernel names its primitives, so that a spec
reads like the code it models::

    @action(role="cpus", access=(READ_ONCE("p"), Load("slots", "once", dep=True)))

Only the weak-memory engines (``--memory tso|lkmm``, ``checker.ordering``)
read them; under ``sc`` they change nothing. A bad order is refused where
it is written (file and line, and what to write instead).
"""
from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Any, Callable

from checker.errors import SpecError

#: The orders each kind of access takes.
LOAD_ORDERS = ("plain", "once", "acquire")
STORE_ORDERS = ("plain", "once", "release")
RMW_ORDERS = ("mb", "relaxed", "acquire", "release", "unordered", "this_cpu")
FENCE_KINDS = ("mb", "rmb", "wmb", "before_atomic", "after_atomic", "after_spinlock", "after_unlock_lock")

#: ``slot="all"``: the step reads or writes every slot of the variable (a ``for_each_possible_cpu`` loop
#: that the spec makes one step).
ALL = "all"


def _where(depth: int = 3) -> tuple[str | None, int | None]:
    """The file and line of the spec text that called a constructor (the class body)."""
    f = sys._getframe(depth)
    while f is not None and f.f_code.co_filename == __file__:
        f = f.f_back
    return (f.f_code.co_filename, f.f_lineno) if f is not None else (None, None)


def _refuse(msg: str) -> SpecError:
    file, line = _where()
    return SpecError(msg, file=file, line=line)


@dataclass(frozen=True)
class Access:
    """One access of a step: ``kind`` is load, store, rmw, fence, or lock/unlock (a critical section in one
    step)."""

    kind: str
    var: str | None
    order: str
    slot: Callable[..., Any] | str | None = None
    race_ok: bool = False
    dep: bool | str = False  # True: the previous annotated load; a name: this CPU's last load of that variable
    file: str | None = None
    line: int | None = None

    @property
    def plain(self) -> bool:
        """A plain C access (not READ_ONCE/WRITE_ONCE, not an atomic): the one LKMM flags in a data race."""
        return self.order == "plain" and self.kind in ("load", "store") and not self.race_ok

    def __repr__(self) -> str:
        if self.kind == "fence":
            return f"Fence({self.order!r})"
        if self.kind in ("lock", "unlock"):
            return f"spin_{self.kind}({self.var!r})"
        extra = "".join((f", dep={self.dep!r}" if self.dep else "", ", race_ok=True" if self.race_ok else "",
                         f", slot={self.slot!r}" if isinstance(self.slot, str) else
                         (", slot=<fn>" if self.slot is not None else "")))
        return f"{self.kind.capitalize()}({self.var!r}, {self.order!r}{extra})"


def _check_var(kind: str, var: Any) -> None:
    if not isinstance(var, str) or not var.isidentifier():
        raise _refuse(f"{kind}({var!r}, ...): the first argument is the variable's name as a string, "
                      f"e.g. {kind}(\"count\", ...)")


def _check_slot(kind: str, slot: Any) -> None:
    if slot is not None and slot != ALL and not callable(slot):
        raise _refuse(f"{kind}(..., slot={slot!r}): slot is a function (s, cpu, *choices) giving the index, "
                      f"or \"all\" for every slot, e.g. slot=lambda s, cpu: s.owner[cpu]")


def Load(var: str, order: str = "plain", *, slot: Callable[..., Any] | str | None = None, race_ok: bool = False,
         dep: bool | str = False) -> Access:
    """A load of ``var``: ``plain``, ``once`` (READ_ONCE) or ``acquire`` (smp_load_acquire). ``dep=True``:
    its address comes from this CPU's previous annotated load (an address dependency); ``dep="p"``: from this
    CPU's last load of ``p`` (every load through a pointer read once, in any later step)."""
    _check_var("Load", var)
    _check_slot("Load", slot)
    if not (dep is True or dep is False or (isinstance(dep, str) and dep.isidentifier())):
        raise _refuse(f"Load({var!r}, ..., dep={dep!r}): dep is True (the previous annotated load gave the "
                      f"address) or the name of the pointer's variable as a string, e.g. dep=\"published\"")
    if order not in LOAD_ORDERS:
        hint = (f"a read-modify-write is Rmw({var!r}, {order!r})" if order in RMW_ORDERS else
                f"a store is Store({var!r}, {order!r})" if order in STORE_ORDERS else
                f"a fence is its own access, Fence({order!r})" if order in FENCE_KINDS else "")
        raise _refuse(f"Load({var!r}, {order!r}): a load's order is one of {', '.join(LOAD_ORDERS)}"
                      + (f"; {hint}" if hint else ""))
    return Access("load", var, order, slot, race_ok, dep, *_where())


def Store(var: str, order: str = "plain", *, slot: Callable[..., Any] | str | None = None,
          race_ok: bool = False) -> Access:
    """A store to ``var``: ``plain``, ``once`` (WRITE_ONCE) or ``release`` (smp_store_release)."""
    _check_var("Store", var)
    _check_slot("Store", slot)
    if order not in STORE_ORDERS:
        hint = (f"a read-modify-write is Rmw({var!r}, {order!r})" if order in RMW_ORDERS else
                f"a load is Load({var!r}, {order!r})" if order in LOAD_ORDERS else
                f"a fence is its own access, Fence({order!r})" if order in FENCE_KINDS else "")
        raise _refuse(f"Store({var!r}, {order!r}): a store's order is one of {', '.join(STORE_ORDERS)}"
                      + (f"; {hint}" if hint else ""))
    return Access("store", var, order, slot, race_ok, False, *_where())


def Rmw(var: str, order: str = "mb", *, slot: Callable[..., Any] | str | None = None,
        race_ok: bool = False) -> Access:
    """An atomic read-modify-write of ``var``: ``mb`` (value-returning, fully ordered), ``relaxed``,
    ``acquire``, ``release``, ``unordered`` (non-value-returning: atomic_inc) or ``this_cpu``."""
    _check_var("Rmw", var)
    _check_slot("Rmw", slot)
    if order not in RMW_ORDERS:
        hint = {"once": "an atomic_read() is Load(v, \"once\"), an atomic_set() Store(v, \"once\")",
                "plain": "a plain access is Load(v) or Store(v)"}.get(order, "")
        raise _refuse(f"Rmw({var!r}, {order!r}): a read-modify-write's order is one of {', '.join(RMW_ORDERS)}"
                      + (f"; {hint}" if hint else ""))
    if race_ok:
        raise _refuse(f"Rmw({var!r}, {order!r}, race_ok=True): an atomic never races; drop race_ok")
    return Access("rmw", var, order, slot, False, False, *_where())


def Fence(kind: str = "mb") -> Access:
    """A barrier: ``mb``, ``rmb``, ``wmb``, ``before_atomic``, ``after_atomic``, ``after_spinlock``,
    ``after_unlock_lock``."""
    if kind not in FENCE_KINDS:
        raise _refuse(f"Fence({kind!r}): a fence is one of {', '.join(FENCE_KINDS)}")
    return Access("fence", None, kind, None, False, False, *_where())


def spin_lock(var: str) -> Access:
    """``spin_lock(&l)`` (also ``raw_spin_lock``, the ``_irq``/``_irqsave`` forms) inside a step that is a
    whole critical section: an acquire of the Lock ``var``, in program order with the step's other accesses.
    A step that takes a lock and keeps it needs no annotation (its update of the Lock is the acquire); this is
    for a step that the spec makes lock, access and unlock at once (a hotplug callback's fold under fbc->lock),
    whose Lock variable is free before and after."""
    _check_var("spin_lock", var)
    return Access("lock", var, "acquire", None, False, False, *_where())


def spin_unlock(var: str) -> Access:
    """``spin_unlock(&l)`` inside a step that is a whole critical section (see ``spin_lock``): a release."""
    _check_var("spin_unlock", var)
    return Access("unlock", var, "release", None, False, False, *_where())


# -- the kernel's names ---------------------------------------------------------------------------------

def READ_ONCE(var: str, *, slot: Any = None, dep: bool | str = False) -> Access:
    """``READ_ONCE(var)``: a marked load (``dep=True``: later accesses depend on its value)."""
    return Load(var, "once", slot=slot, dep=dep)


def WRITE_ONCE(var: str, *, slot: Any = None) -> Access:
    """``WRITE_ONCE(var, v)``: a marked store."""
    return Store(var, "once", slot=slot)


def smp_load_acquire(var: str, *, slot: Any = None, dep: bool | str = False) -> Access:
    """``smp_load_acquire(var)``: a load that later accesses cannot pass."""
    return Load(var, "acquire", slot=slot, dep=dep)


def smp_store_release(var: str, *, slot: Any = None) -> Access:
    """``smp_store_release(var, v)``: a store that earlier accesses cannot pass."""
    return Store(var, "release", slot=slot)


def rcu_dereference(var: str, *, slot: Any = None) -> Access:
    """``rcu_dereference(p)``: a READ_ONCE whose value later loads depend on (``dep=True`` on them)."""
    return Load(var, "once", slot=slot)


def rcu_assign_pointer(var: str, *, slot: Any = None) -> Access:
    """``rcu_assign_pointer(p, v)``: a release store of a pointer."""
    return Store(var, "release", slot=slot)


def data_race(access: Access) -> Access:
    """``data_race(x)``: the kernel leaves this access plain on purpose; never reported as a race."""
    if not isinstance(access, Access) or access.kind in ("fence", "lock", "unlock"):
        raise _refuse(f"data_race({access!r}): wrap a Load or Store, e.g. data_race(Load(\"count\"))")
    if access.kind == "rmw":
        raise _refuse(f"data_race({access!r}): an atomic never races; drop data_race")
    from dataclasses import replace
    return replace(access, race_ok=True)


def smp_mb() -> Access:
    """``smp_mb()``: a full barrier."""
    return Fence("mb")


def smp_rmb() -> Access:
    """``smp_rmb()``: orders earlier loads before later loads."""
    return Fence("rmb")


def smp_wmb() -> Access:
    """``smp_wmb()``: orders earlier stores before later stores."""
    return Fence("wmb")


def smp_mb__before_atomic() -> Access:
    """``smp_mb__before_atomic()``: a full barrier before the next non-returning atomic."""
    return Fence("before_atomic")


def smp_mb__after_atomic() -> Access:
    """``smp_mb__after_atomic()``: a full barrier after the last non-returning atomic."""
    return Fence("after_atomic")


def smp_mb__after_spinlock() -> Access:
    """``smp_mb__after_spinlock()``: makes the lock acquisition before it a full barrier."""
    return Fence("after_spinlock")


def smp_mb__after_unlock_lock() -> Access:
    """``smp_mb__after_unlock_lock()``: makes an unlock followed by a lock a full barrier."""
    return Fence("after_unlock_lock")


def xchg(var: str, *, slot: Any = None) -> Access:
    """``xchg()``: fully ordered (value-returning)."""
    return Rmw(var, "mb", slot=slot)


def xchg_relaxed(var: str, *, slot: Any = None) -> Access:
    """``xchg_relaxed(var, v)``: an atomic exchange with no ordering."""
    return Rmw(var, "relaxed", slot=slot)


def xchg_acquire(var: str, *, slot: Any = None) -> Access:
    """``xchg_acquire(var, v)``: an atomic exchange with acquire ordering."""
    return Rmw(var, "acquire", slot=slot)


def xchg_release(var: str, *, slot: Any = None) -> Access:
    """``xchg_release(var, v)``: an atomic exchange with release ordering."""
    return Rmw(var, "release", slot=slot)


def cmpxchg(var: str, *, slot: Any = None) -> Access:
    """``cmpxchg()``: fully ordered when it succeeds; a failed one (the value left as it was) is an unordered
    load, as LKMM has it (Documentation/atomic_t.txt)."""
    return Rmw(var, "mb", slot=slot)


def cmpxchg_relaxed(var: str, *, slot: Any = None) -> Access:
    """``cmpxchg_relaxed(var, old, new)``: a compare-and-exchange with no ordering."""
    return Rmw(var, "relaxed", slot=slot)


def cmpxchg_acquire(var: str, *, slot: Any = None) -> Access:
    """``cmpxchg_acquire(var, old, new)``: a compare-and-exchange with acquire ordering."""
    return Rmw(var, "acquire", slot=slot)


def cmpxchg_release(var: str, *, slot: Any = None) -> Access:
    """``cmpxchg_release(var, old, new)``: a compare-and-exchange with release ordering."""
    return Rmw(var, "release", slot=slot)


#: Documentation/atomic_t.txt: the atomic ops that return a value (or test it) are fully ordered; the
#: others (atomic_add, atomic_inc, atomic_andnot, ...) order nothing.
_RETURNING = ("_return", "fetch_", "xchg", "cmpxchg", "_and_test", "_unless", "_not_zero", "_if_positive",
              "add_negative")


def atomic(op: str, var: str, *, slot: Any = None) -> Access:
    """An ``atomic_t``/``atomic64_t``/``atomic_long_t`` operation by its kernel name, ordered as
    Documentation/atomic_t.txt says: ``atomic("atomic_dec_and_test", "mm_users")`` is fully ordered,
    ``atomic("atomic64_cmpxchg_relaxed", "v")`` relaxed, ``atomic("atomic_inc", "refs")`` unordered,
    ``atomic("atomic_read", "v")`` a READ_ONCE, ``atomic("atomic_set_release", "v")`` a release store."""
    if not isinstance(op, str) or not op.startswith(("atomic_", "atomic64_")):
        raise _refuse(f"atomic({op!r}, {var!r}): name the kernel's operation, e.g. atomic(\"atomic_dec_and_test\", "
                      f"{var!r}) or atomic(\"atomic64_add\", {var!r}); for this_cpu_*() write this_cpu(...), "
                      f"for xchg()/cmpxchg() on a plain word xchg(...)/cmpxchg(...)")
    base = op[len(next(f for f in ("atomic_long_", "atomic64_", "atomic_") if op.startswith(f))):]
    if base in ("read", "read_acquire"):
        return Load(var, "acquire" if base.endswith("acquire") else "once", slot=slot)
    if base in ("set", "set_release"):
        return Store(var, "release" if base.endswith("release") else "once", slot=slot)
    for suffix in ("relaxed", "acquire", "release"):
        if base.endswith("_" + suffix):
            return Rmw(var, suffix, slot=slot)
    if any(k in base for k in _RETURNING):
        return Rmw(var, "mb", slot=slot)
    return Rmw(var, "unordered", slot=slot)


def this_cpu(op: str, var: str, *, slot: Any = None) -> Access:
    """A ``this_cpu_*()`` operation (``this_cpu_add``, ``this_cpu_cmpxchg``, ``__this_cpu_sub``...) on this
    CPU's slot of ``var``: atomic only to this CPU, not LOCKed on x86, ordering nothing for other CPUs.
    ``this_cpu_read``/``__this_cpu_read`` are a READ_ONCE / a plain load, ``this_cpu_write``/
    ``__this_cpu_write`` a WRITE_ONCE / a plain store."""
    if not isinstance(op, str) or not op.lstrip("_").startswith("this_cpu_"):
        raise _refuse(f"this_cpu({op!r}, {var!r}): name the kernel's operation, e.g. this_cpu(\"this_cpu_add\", "
                      f"{var!r})")
    plain = op.startswith("__")
    base = op.lstrip("_")[len("this_cpu_"):]
    if base == "read":
        return Load(var, "plain" if plain else "once", slot=slot)
    if base == "write":
        return Store(var, "plain" if plain else "once", slot=slot)
    return Rmw(var, "this_cpu", slot=slot)


def normalise(access: Any) -> tuple[Access, ...]:
    """``access=`` as a tuple of accesses, or a SpecError naming what was given."""
    if access is None:
        return ()
    items = access if isinstance(access, (tuple, list)) else (access,)
    for a in items:
        if not isinstance(a, Access):
            hint = " (a fence is called: smp_mb())" if callable(a) and getattr(a, "__name__", "").startswith("smp_") \
                else ""
            raise _refuse(f"access={access!r}: each access is Load(...), Store(...), Rmw(...), Fence(...) or a "
                          f"kernel-named one such as READ_ONCE(\"x\"){hint}")
    return tuple(items)
