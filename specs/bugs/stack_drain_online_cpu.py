# SPDX-License-Identifier: GPL-2.0-only
"""A drain of an online CPU's cached stacks with a LOCKed ``xchg()``: it races with that CPU's ``this_cpu_xchg``.

kernel/fork.c empties a CPU's ``cached_stacks[]`` from another CPU only
once that CPU is dead (``free_vm_stack_cache()``, a CPUHP_BP_PREPARE_DYN
teardown): every other access is a ``this_cpu_*`` op of the CPU itself.
That is the single-writer discipline Documentation/core-api/this_cpu_ops.rst
asks for ("Remote write access [is] something which could be problematic
because this_cpu ops do not have lock semantics. A remote write may
interfere with a this_cpu RMW operation."): on x86 ``this_cpu_xchg`` and
``this_cpu_cmpxchg`` are a gs-relative ``cmpxchg`` without the lock prefix,
atomic only against the CPU's own interrupts.

The regression: a memory-pressure drain (a shrinker's scan callback, say)
that gives the cached stacks back while every CPU is online, reusing the
teardown's loop with the remote accesses made "safe" by a fully ordered
``xchg()``::

    for_each_online_cpu(cpu) {
            struct vm_struct **cached_vm_stacks = per_cpu_ptr(cached_stacks, cpu);

            for (i = 0; i < NR_CACHED_STACKS; i++) {
                    struct vm_struct *vm_area = xchg(&cached_vm_stacks[i], NULL);

                    if (vm_area)
                            vfree(vm_area->addr);
            }
    }

Under ``sc`` it is correct: both exchanges are atomic, so the stack goes to
exactly one of them (the explorer finds nothing). Under ``tso`` the owner's
``this_cpu_xchg(cached_stacks[0], NULL)`` reads the stack and leaves its
NULL in the store buffer; the drain's ``LOCK XCHG`` reads the stack from
memory too and vfrees it while the fork zeroes and uses it: a use after
free, found in 9 steps with the NULL in CPU 0's buffer
(``sb_loc0[0]: slot0[0]``) at the drain. Under ``lkmm`` (7 steps) a
``this_cpu`` Rmw is atomic to its own CPU only: the drain takes the stack
CPU 0 released and vfrees it, and CPU 0's next ``this_cpu_xchg``, which
has not seen the drain's NULL, reads its own older store (the stack,
``slot0_age=1``) and places its NULL after the drain's
(docs/weak-memory.md, "stack_cache").
"""
from checker import And, Rmw, action, when
from checker.ordering.declare import MEMORY
from checker.specs.stack_cache import StackCache, empty_slots


def _target(s, ctl, cpu):
    """per_cpu_ptr(cached_stacks, cpu): the drained CPU's slot."""
    return cpu


class StackDrainOnlineCpu(StackCache, expect_violated=("freed_never_handed_out", "memory_safe",
                                                      "stack_in_one_place")):
    """stack_cache with a drain of another, online CPU's slots by xchg(per_cpu_ptr(...), NULL)."""

    kernel = StackCache.kernel + "; plus a drain of online CPUs' cached_stacks[] by xchg(per_cpu_ptr(...), NULL)"
    # the points of the shortest traces: one slot, one fork that takes its stack from the cache (sc is correct)
    explore_sweeps = ({"nr_cached": 1, "hotplug": 0, "failures": 0, "migrations": 0,
                       "memory": (MEMORY.tso, MEMORY.lkmm)},)

    @action(role="cpus", choose={"cpu": lambda p: p.cpus},
            access=(Rmw("slot0", "mb", slot=_target), Rmw("slot1", "mb", slot=_target)))
    def drain_vm_stack_cache(s, ctl, cpu):
        """(the bug) on ``ctl``, for the online ``cpu``: vm_area = xchg(&cached_vm_stacks[i], NULL); if
        (vm_area) vfree(vm_area->addr);  -- for each slot, in order (one step: each xchg is atomic and the
        vfree is of the pointer it alone got)."""
        frees, upd, any_cached = empty_slots(s, cpu)
        # (a drain that finds every slot empty changes nothing: not a step)
        return when(And(ctl != cpu, s.online[ctl] == 1, s.online[cpu] == 1, any_cached), **frees, **upd)
