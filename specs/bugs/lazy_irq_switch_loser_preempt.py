# SPDX-License-Identifier: GPL-2.0-only
"""lazy_percpu_counter_switch_to_pcpu() as posted, called from a hard-irq handler.

The posted switch loser returns from inside ``preempt_disable()`` (see
``lazy_switch_loser_preempt.py``). The counter was written for allocation-tag
counters, updated from any context, so the loser can be an interrupt
handler. At two CPUs, one add each from task and handler (18 steps, each
shortest): CPU 1's task publishes while CPU 0's handler is between its slow
path's cmpxchg and its switch's ``atomic64_read``, which then finds the
word per-CPU:
the handler frees its storage and returns from the interrupt with
preemption still disabled (``irq_pcount[0] == 1``:
``irq_preempt_balanced_on_return``, and
``context_restored`` at the end); the task's loser does the same
(``preempt_balanced_on_return``). Nothing is lost or leaked. (At one CPU
the handler cannot lose: it runs to its return over its task, so a switch
it starts sees the word published only if it published it.)
``percpu_lazy`` with ``irq=1`` (the fix: leave through
``preempt_enable()``) holds; the handler's ``lazy_percpu_counter_add_irq``
asks the same ``loser_enables_preemption`` as the task's add.
"""
from checker import Param
from checker.specs.bugs.lazy_switch_loser_preempt import LazySwitchLoserPreempt


class LazyIrqSwitchLoserPreempt(LazySwitchLoserPreempt, expect_violated=(
        "preempt_balanced_on_return", "irq_preempt_balanced_on_return", "context_restored")):
    """L-K as posted, with a hard-irq handler adding on each CPU (its switch loser returns as the task's does)."""

    kernel = ("koverstreet/bcachefs lib/lazy-percpu-counter.c (79ded5acf1ac) = ZhangPeng RFC 1/3, as posted, "
              "with lazy_percpu_counter_add also called from hard-irq context")
    explore_sweeps = ({"ncpus": 2, "ops": 1},)
    mod_bits = Param(0, domain=range(0, 9), explore=(0,), doc="COUNTER_MOD_BITS (8 in the kernel)")
    irq = Param(1, domain=range(1, 4), doc="lazy_percpu_counter_add calls from each CPU's hard-irq handler")
