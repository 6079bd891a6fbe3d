# SPDX-License-Identifier: GPL-2.0-only
"""limited_add's margin when a CPU comes online during the add, even with the DYING fold (H3) [a finding].

``__percpu_counter_limited_add()`` computes ``unknown = batch *
num_online_cpus()`` at its entry, right after ``local_irq_save()`` (v6.6+;
read in the kernelorg-mirror/linux_kernel_git_dennis_percpu tree at
d24c23304103, the same in mainline), and tests ``count + unknown <= limit``
under ``fbc->lock`` later. If a CPU comes online in between (its bring-up
runs on a third CPU; the adder may be spinning on ``fbc->lock`` or its vCPU
preempted, with interrupts off), that CPU's fast-path adds, each passing its
own test with the larger ``unknown``, fill its local while the first add's
``unknown`` covers one CPU fewer: the add accepts without summing and the
total ends past the limit. H3's DYING fold, which closes the offline hole,
does not close this one; mainline H2 has it too, beside its own offline hole
(``limited_add_misses_an_offline_cpu``). Found when the spec's ``unknown`` was
moved from the lock to the entry, where the kernel computes it (issue 29).
Latent: it needs a CPU onlined during a shmem block accounting call whose
margin is tight. Not reported on the list as far as we know.

Shortest counterexample (13 steps): CPU 0 fills its local; CPU 1 goes down;
CPU 0's limited_add enters with one CPU online (unknown = batch); CPU 1
comes back and fills its local; CPU 0 takes the lock and accepts without a
sum: E = limit + 1.
"""
from checker import Param, invariant
from checker.specs.percpu_hotplug import _FIXED, DESIGN, PercpuHotplug, _limited_margin_result


class HotplugLimitedOnlineDuringAdd(PercpuHotplug, expect_violated=("limited_add_keeps_the_limit",)):
    """H3 with limited_add and a CPU that comes back online during an add."""

    kernel = ("lib/percpu_counter.c __percpu_counter_limited_add (unknown at entry), the 2024 DYING-fold rework "
              "(H3); kernel/cpu.c cpu_up")
    explore_sweeps = ({"ncpus": 2},)
    design = Param(DESIGN.H3, domain=DESIGN, doc="H3")
    limited = Param(1, domain=(1,), doc="every add is a limited_add")
    reonline = Param(1, domain=(1,), doc="the offlined CPU comes back")
    summers = Param(0, domain=(0, 1), doc="no sum needed")

    # Checked under every model (percpu_hotplug declares it SC-only: under lkmm a stale fbc->count breaks it as
    # well): the bug is unknown computed before a CPU comes online, an SC trace that tso and lkmm contain too.
    @invariant(applies=lambda p: p.limited and _FIXED(p) and p.design == DESIGN.H3)
    def limited_add_keeps_the_limit(s):
        """__percpu_counter_limited_add: an add it accepts without summing the CPUs leaves E <= limit."""
        return _limited_margin_result(s)
