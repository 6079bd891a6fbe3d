# SPDX-License-Identifier: GPL-2.0-only
"""K-STACK-MEMCG: a failed memcg charge frees tsk->stack, which this fork never set.

In the 2018-19 structure (``stack_cache_2019``) ``dup_task_struct()`` charges
the new stack after ``alloc_thread_stack_node()`` returned it, and on failure
calls ``free_thread_stack(tsk)``. That puts ``tsk->stack_vm_area`` back into
an empty cache slot, but when the slots are full it calls
``vfree_atomic(tsk->stack)``, and ``tsk->stack`` was only written later in
``dup_task_struct``: the task_struct is fresh from ``kmem_cache_alloc``, so
it holds garbage. The crash reported against 9b6f7e163cd0 was
``vfree_atomic`` of that pointer; the stack that should have been freed
leaks. Rik van Riel's 5eed6f1dff87 set ``tsk->stack`` in the vmalloc path
(``fixes=0`` here is the code before it); Shakeel Butt's ba4a45746c36 did
the same for a stack taken from the cache (``fixes=1``: the code between the
two, where only a cached stack still crashes). ``stack_cache_2019`` with
``fixes=2`` passes.

Shortest traces, NR_CACHED_STACKS = 1: with no fix, one child lives and is
released into the slot while a second fork holds a fresh vmalloc'd stack
whose charge then fails; with the first fix, a fork must take a stack from
the cache and find the slot refilled by a third child before its charge
fails.
"""
from checker import Param
from checker.specs.stack_cache_2019 import StackCache2019


class StackMemcgChargeFail(StackCache2019, expect_violated=(
        "memory_safe", "stack_in_one_place", "failed_charge_frees_its_stack")):
    """dup_task_struct(): memcg_charge_kernel_stack() fails, free_thread_stack() does vfree_atomic(tsk->stack)
    with tsk->stack not yet set."""

    kernel = StackCache2019.kernel.replace("; with fixes=2 both 5eed6f1dff87 and ba4a45746c36", "") + \
        "; without ba4a45746c36 (fixes=1) and without 5eed6f1dff87 either (fixes=0)"
    fixes = Param(0, domain=(0, 1), explore=(0, 1), doc="0: 9b6f7e163cd0 alone; 1: + 5eed6f1dff87")
    nr_cached = Param(1, domain=(1, 2), explore=(1,), doc="NR_CACHED_STACKS (1: the slots fill with fewer tasks)")
    ntasks = Param(lambda p: 2 if p.fixes == 0 else 3, domain=range(1, 4),
                   doc="children: the cached path needs a third to refill the slot")
    migrations = Param(0, domain=range(0, 4), doc="task migrations allowed (none needed)")
    ncpus = Param(1, domain=range(1, 4), doc="CPUs (one is enough: the bug needs no concurrency across CPUs)")
