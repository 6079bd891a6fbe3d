# SPDX-License-Identifier: GPL-2.0-only
"""refresh_cpu_vm_stats()'s window: an interrupt's update between its this_cpu_xchg and its atomic_long_add.

Mainline mm/vmstat.c (torvalds/linux @00c010e130e5), ``refresh_cpu_vm_stats``::

    v = this_cpu_xchg(pzstats->vm_stat_diff[i], 0);
    if (v) {
        atomic_long_add(v, &zone->vm_stat[i]);

It runs from the per-CPU vmstat_update work (``mm_percpu_wq``) with
interrupts on and preemption enabled. Between the two lines ``v`` is in
neither the diff nor ``vm_stat``. NR_FREE_PAGES is updated from interrupt
context (a page freed in an interrupt handler: ``free_one_page`` /
``free_pcppages_bulk`` take ``zone->lock`` with ``spin_lock_irqsave`` and
``account_freepages`` calls ``__mod_zone_page_state``, correctly, with
interrupts off); such an update in the window refills the diff, up to the
threshold, while ``v`` (up to the threshold) is still on its way. On a
CONFIG_PREEMPT kernel the worker can also be preempted there, and every
task that then runs on that CPU does the same. For that CPU's share the
drift is then up to 2 * threshold, not threshold: ``zone_page_state`` can be
further from the exact value than the ``num_online_cpus() * threshold``
that ``refresh_zone_stat_thresholds``' ``percpu_drift_mark`` and
``calculate_pressure_threshold`` assume. No update is lost (the sum of
vm_stat, the diffs and the amount in flight stays exact); the window is a
few instructions wide unless the worker is preempted in it. What it costs:
``zone_watermark_ok_safe`` trusts ``zone_page_state`` above
``percpu_drift_mark = high_wmark + num_online_cpus() * threshold``, so with
N CPUs in the window the free pages may be up to N * threshold below the
high watermark while kswapd reads the zone as balanced.

Shortest counterexample (4 steps, 1 CPU, threshold 2): two ``__inc_zone_state``
take the diff to 2, the refresh's xchg takes the 2 out, an interrupt's
``__mod_zone_page_state(+1)`` makes the diff 1 before the refresh's add:
vm_stat is 0 while E is 3 > 1 * 2.
"""
from checker import Param, invariant
from checker.specs.vmstat import CTX, VARIANT, Vmstat


class VmstatRefreshWindow(Vmstat, expect_violated=("zone_drift_bound",)):
    """The __ updates in interrupts-off sections, an interrupt handler updating the item, and a refresh."""

    kernel = Vmstat.kernel + "; refresh_cpu_vm_stats with an interrupt-context update in its xchg-add window"
    explore_sweeps = ({"ncpus": (1, 2)},)
    variant = Param(VARIANT.irqoff, domain=VARIANT, doc="irqoff: the __ functions in interrupts-off sections")
    ctx = Param(CTX.irqs_off, domain=CTX, doc="the __ functions run with interrupts off (as account_freepages)")
    ncpus = Param(1, domain=range(1, 8193), explore=(1, 2), doc="CPUs")
    ops = Param(lambda p: p.threshold, domain=range(0, 1 << 16), doc="updates per CPU's task")
    irq = Param(2, domain=range(0, 9), doc="updates by each CPU's interrupt handler (the threshold, 2)")
    refreshes = Param(1, domain=range(1, 9), doc="refresh_cpu_vm_stats runs on each CPU")

    @invariant
    def drift_within_twice_the_threshold(s):
        """What does hold: |zone_page_state - E| <= 2 * ncpus * threshold (a diff refilled to the threshold
        while a refresh carries up to the threshold)."""
        return abs(s.zone - s.exact) <= 2 * s.ncpus * s.threshold
