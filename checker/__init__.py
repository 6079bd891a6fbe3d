# SPDX-License-Identifier: GPL-2.0-only
"""countercheck: a model checker for the Linux kernel's concurrent counters.

The public surface is the spec vocabulary and a few entry points; the
modules behind them may change.
"""
from checker import early as _early

_early.install()  # run as the command: a signal while importing is noted (checker.early), not a traceback

from checker import layout as _layout

_layout.install()  # checker.specs and checker.models in a checkout (installed, they are subpackages)

from checker.errors import CheckerError, SpecError, SymmetryError, UsageError
import checker.cint as _cint  # noqa: F401  (U64(x) casts through it: checker.types)
from checker.expr import And, AllOf, AnyOf, Count, If, Implies, Max, Min, Not, Or, Select, Sum
from checker.language.declare import (Abstraction, Array, Interchangeable, Subtree, PerTask, Task, Between, Fill, Ghost, Uninit, Lock, Param, PerCpu, Role, Shared, action,
                                  eventually, invariant, leads_to, sometimes, terminal, when, witness)
from checker.language.model import Spec, use_environment as _use_environment
from checker.kernel.passes import KERNEL as _KERNEL

_use_environment(_KERNEL)  # the language below, the kernel environment's passes above it (docs/architecture.md)

from checker.types import NOBODY, S32, S64, U32, U64, Bool, CpuId, Enum, Int, IntType
from checker.explore import explore
from checker.kernel.context import BH_OFF, IRQS_OFF, MIGRATE_DISABLED, PREEMPT_COUNT
from checker.kernel.tasks import PREEMPT
from checker.ordering import (Fence, Load, Rmw, Store, READ_ONCE, WRITE_ONCE, data_race, rcu_assign_pointer,
                              rcu_dereference, smp_load_acquire, smp_mb, smp_mb__after_atomic, smp_mb__after_spinlock,
                              smp_mb__after_unlock_lock, smp_mb__before_atomic, smp_rmb, smp_store_release, smp_wmb,
                              xchg, xchg_relaxed, xchg_acquire, xchg_release, cmpxchg, cmpxchg_relaxed,
                              cmpxchg_acquire, cmpxchg_release, atomic, this_cpu, spin_lock, spin_unlock)
from checker.ordering.install import settled
from checker.ordering.words import OneWord

__all__ = [
    "Spec", "Uninit", "Array", "Between", "Fill", "Param", "Shared", "PerCpu", "Ghost", "Lock", "Role", "Task", "PerTask", "action", "invariant", "sometimes",
    "eventually", "leads_to", "Abstraction", "Interchangeable", "Subtree",
    "terminal", "when", "witness", "If", "And", "Or", "Not", "Implies", "Max", "Min", "Sum", "Count", "AllOf",
    "AnyOf", "Select", "Int", "IntType", "S32", "S64", "U32", "U64", "Bool", "CpuId", "Enum", "NOBODY",
    "IRQS_OFF", "PREEMPT_COUNT", "MIGRATE_DISABLED", "BH_OFF", "PREEMPT", "explore", "CheckerError", "SpecError", "SymmetryError", "UsageError",
    # weak memory (checker.ordering, docs/weak-memory.md)
    "Load", "Store", "Rmw", "Fence", "READ_ONCE", "WRITE_ONCE", "smp_load_acquire", "smp_store_release",
    "rcu_dereference", "rcu_assign_pointer", "data_race", "smp_mb", "smp_rmb", "smp_wmb", "smp_mb__before_atomic",
    "smp_mb__after_atomic", "smp_mb__after_spinlock", "smp_mb__after_unlock_lock", "settled",
    "xchg", "xchg_relaxed", "xchg_acquire", "xchg_release", "cmpxchg", "cmpxchg_relaxed",
    "cmpxchg_acquire", "cmpxchg_release", "atomic", "this_cpu", "spin_lock", "spin_unlock", "OneWord",
]
