# SPDX-License-Identifier: GPL-2.0-only
"""K-STACK-STALE: a reused cached stack is not cleared (the memset only under CONFIG_DEBUG_KMEMLEAK).

Seed 003 shows alloc_thread_stack_node() as it was before 2018:

    #ifdef CONFIG_DEBUG_KMEMLEAK
            /* Clear stale pointers from reused stack. */
            memset(s->addr, 0, THREAD_SIZE);
    #endif

so without kmemleak a new task started on a stack full of the previous
task's data (an information leak, and stale pointers). Kees Cook's "fork:
unconditionally clear stack on fork" (2018) made the memset unconditional.
Shortest trace: a task runs and exits on a vmalloc'd stack, its stack goes
to the cache, the next fork takes it and starts on it uncleared.
"""
from checker import Param
from checker.specs.stack_cache import StackCache


class StackStale(StackCache, expect_violated=("reused_stack_zeroed",)):
    """alloc_thread_stack_node() without the memset of a reused stack (CONFIG_DEBUG_KMEMLEAK=n, pre-2018)."""

    kernel = StackCache.kernel + "; the memset of a reused stack only under CONFIG_DEBUG_KMEMLEAK (seed 003, pre-2018)"
    hotplug = Param(0, domain=(0, 1), doc="1: one CPU may go down (and come back up)")

    @staticmethod
    def memset_stack(s, k):
        """(the bug, CONFIG_DEBUG_KMEMLEAK=n) no memset(s->addr, 0, THREAD_SIZE): the step writes nothing."""
        return {}
