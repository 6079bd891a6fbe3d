# SPDX-License-Identifier: GPL-2.0-only
"""Weak memory: ordering annotations on a spec's accesses, and the tso and lkmm memory models.

``annotations`` is the vocabulary (re-exported from ``checker``), ``words`` one kernel word held as
several variables (``OneWord``); ``declare``
adds the memory model and its bounds as parameters at class creation;
``install`` is the seam a compiled model calls; ``tso`` and ``lkmm`` are the
models, ``machine`` what they share and ``races`` the data-race check.
See ``docs/weak-memory.md``.
"""
from checker.ordering.annotations import (Fence, Load, Rmw, Store, READ_ONCE, WRITE_ONCE, data_race,
                                          rcu_assign_pointer, rcu_dereference, smp_load_acquire, smp_mb,
                                          smp_mb__after_atomic, smp_mb__after_spinlock, smp_mb__after_unlock_lock,
                                          smp_mb__before_atomic, smp_rmb, smp_store_release, smp_wmb,
                                          xchg, xchg_relaxed, xchg_acquire, xchg_release, cmpxchg, cmpxchg_relaxed,
                                          cmpxchg_acquire, cmpxchg_release, atomic, this_cpu, spin_lock, spin_unlock)

__all__ = ["Load", "Store", "Rmw", "Fence", "READ_ONCE", "WRITE_ONCE", "smp_load_acquire", "smp_store_release",
           "rcu_dereference", "rcu_assign_pointer", "data_race", "smp_mb", "smp_rmb", "smp_wmb",
           "smp_mb__before_atomic", "smp_mb__after_atomic", "smp_mb__after_spinlock", "smp_mb__after_unlock_lock",
           "xchg", "xchg_relaxed", "xchg_acquire", "xchg_release", "cmpxchg", "cmpxchg_relaxed",
           "cmpxchg_acquire", "cmpxchg_release", "atomic", "this_cpu", "spin_lock", "spin_unlock"]
