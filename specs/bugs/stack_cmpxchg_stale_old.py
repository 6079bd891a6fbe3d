# SPDX-License-Identifier: GPL-2.0-only
"""try_release_thread_stack_to_cache() with the this_cpu_try_cmpxchg ``old`` declared outside the loop.

The 2024 conversion to this_cpu_try_cmpxchg (kernel/fork.c as read in a 2025
tree) declares the expected value inside the loop:

    for (i = 0; i < NR_CACHED_STACKS; i++) {
            struct vm_struct *tmp = NULL;

            if (this_cpu_try_cmpxchg(cached_stacks[i], &tmp, vm_area))
                    return true;
    }

try_cmpxchg writes the slot's current value into ``tmp`` when it fails. The
mutation hoists ``tmp = NULL`` above the loop (a plausible cleanup): after
slot 0 is found full, ``tmp`` holds that slot's stack and the cmpxchg on
slot 1 compares against it, so it fails on an empty slot and the stack goes
to thread_stack_delayed_free instead of the cache (a lost cache hit on
every release with slot 0 full); and were slot 1 ever to hold the very stack
read from slot 0 (after an allocation and a release in between, on a
preemptible release), the cmpxchg would succeed and overwrite it. A mutant
of the kernel code; no fix commit is cited, none was read.

Shortest counterexample: one task's stack is cached in slot 0, a second
task's release finds slot 0 full and fails on the empty slot 1.
"""
from checker.specs.stack_cache import StackCache


class StackCmpxchgStaleOld(StackCache, expect_violated=("an_empty_slot_takes_the_stack",)):
    """free_thread_stack()'s cache loop with `struct vm_struct *tmp = NULL;` before the loop."""

    kernel = StackCache.kernel + "; try_release_thread_stack_to_cache() with tmp initialised once, before the loop"
    explore_sweeps = ({"nr_cached": 2, "hotplug": 0},)

    @staticmethod
    def try_release_thread_stack_to_cache(k, s, vm):
        """(the bug) struct vm_struct *tmp = NULL; for (i...) { if (this_cpu_try_cmpxchg(cached_stacks[i], &tmp,
        vm_area)) return true; } return false;  (tmp: after a failure, the slot's stack)"""
        ok, tmp = k.this_cpu_try_cmpxchg(s.slot0, 0, vm)
        if not ok and s.nr_cached == 2:
            k.label("free")
            ok, cur = k.this_cpu_try_cmpxchg(s.slot1, tmp, vm)  # tmp is slot 0's stack, not NULL
            s.skipped_empty = 1 if not ok and cur == 0 else s.skipped_empty
        return ok
