# SPDX-License-Identifier: GPL-2.0-only
"""K-MMINIT-LEAK: f1a7941243c1's mm_init() error path skipped destroy_context().

"mm: convert mm's rss stats into percpu_counter" (v6.2) put the per-counter
percpu_counter_init loop after init_new_context(), but its fail_pcpu label
fell through to fail_nocontext: a counter allocation failure leaked the
context (on powerpc an id from ida_alloc_range). Fixed by Mathieu
Desnoyers, "mm: fix memory leak on mm_init error handling" (Message-ID
20230330133822.66271-1-mathieu.desnoyers@efficios.com), which added
destroy_context(mm) to the unwind.
"""
from checker import Param, action, when
from checker.kernel.config import CONFIG, SMP, SMP_HOTPLUG
from checker.kernel.memory import ptr
from checker.specs.percpu_grouped import HEAP, SITES, STEP, PercpuGrouped


class MmInitLeaksContext(PercpuGrouped, expect_violated=("no_leak",)):
    """f1a7941243c1's mm_init: fail_pcpu falls through to fail_nocontext."""

    kernel = "f1a7941243c1 kernel/fork.c mm_init (v6.2), before 'mm: fix memory leak on mm_init error handling'"
    config = Param(SMP_HOTPLUG, domain=(SMP, SMP_HOTPLUG), names=CONFIG, explore=(SMP, SMP_HOTPLUG),
                   doc="a counter allocation can fail only with CONFIG_SMP")
    grouped = Param(0, domain=(0,), doc="f1a7941243c1's per-counter loop")

    @action(role="task")
    def destroy_context_unwind(s, cpu):
        """fail_pcpu: (the bug) nothing here: on to fail_nocontext without destroy_context(mm)."""
        return when(s.step == STEP.fail_cid, step=STEP.fail_nocontext)

    @action(role="task")
    def mm_free_pgd_unwind(s, cpu):
        """fail_nocontext: mm_free_pgd(mm);"""
        return when(s.step == STEP.fail_nocontext, step=STEP.fail_nopgd, **HEAP.free(s, ptr(SITES.index("pgd"))))
