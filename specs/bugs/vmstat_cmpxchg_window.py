# SPDX-License-Identifier: GPL-2.0-only
"""mod_zone_state()'s window: an update of the item between its this_cpu_try_cmpxchg and its zone add.

Mainline mm/vmstat.c (torvalds/linux @00c010e130e5), ``mod_zone_state`` under
``CONFIG_HAVE_CMPXCHG_LOCAL`` (x86, arm64, s390, loongarch)::

    } while (!this_cpu_try_cmpxchg(*p, &o, n));

    if (z)
        zone_page_state_add(z, zone, item);

``inc_zone_page_state`` / ``dec_zone_page_state`` / ``mod_zone_page_state``
(and the node forms, ``mod_node_state``) run it with interrupts on and
preemption enabled. Once the cmpxchg has stored ``-overstep``, the overflow
``z = n + overstep`` is in neither the diff nor ``vm_stat`` until the add.
An interrupt, or on CONFIG_PREEMPT another task after a preemption, that
updates the same item on that CPU in between refills the diff up to the
threshold: the CPU's share of the drift is then up to ``threshold + o +
overstep`` (o, the diff the cmpxchg replaced, up to the threshold), 2.5 *
threshold rather than the threshold the drift mark and the pressure
threshold assume. No update is lost. The interfering update here is an
interrupt handler's ``__mod_zone_page_state`` of +-1 run to completion.

Shortest counterexample (6 steps, 1 CPU, threshold 2): an inc and an
interrupt's +1 take the diff to 2; the next inc's cmpxchg stores -1 with
z = 4 in flight; an interrupt's +1 makes the diff 0 before the add:
vm_stat is 0 while E is 3 > 1 * 2.
"""
from checker import Param, invariant
from checker.specs.vmstat import VARIANT, Vmstat


class VmstatCmpxchgWindow(Vmstat, expect_violated=("zone_drift_bound",)):
    """mod_zone_state (this_cpu_try_cmpxchg) with an interrupt handler updating the same item."""

    kernel = Vmstat.kernel + "; mod_zone_state with an update of the item between its cmpxchg and its zone add"
    explore_sweeps = ({"ncpus": (1, 2)},)
    variant = Param(VARIANT.cmpxchg, domain=VARIANT, doc="cmpxchg: mod_zone_state")
    ncpus = Param(1, domain=range(1, 8193), explore=(1, 2), doc="CPUs")
    ops = Param(lambda p: p.threshold + 1, domain=range(0, 1 << 16), doc="updates per CPU's task")
    irq = Param(2, domain=range(0, 9), doc="updates by each CPU's interrupt handler (the threshold, 2)")
    refreshes = Param(0, domain=range(0, 9), doc="refresh_cpu_vm_stats runs on each CPU")

    @invariant
    def drift_within_the_window_bound(s):
        """What does hold: |zone_page_state - E| <= ncpus * (2 * threshold + (threshold >> 1))."""
        return abs(s.zone - s.exact) <= s.ncpus * (2 * s.threshold + s.threshold // 2)
