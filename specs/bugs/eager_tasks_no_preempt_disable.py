# SPDX-License-Identifier: GPL-2.0-only
"""Variant A of percpu_counter_add_batch() without its preempt_disable().

Before 805afd830099 the add read ``*fbc->counters`` with ``__this_cpu_read``
and decided the fast path with preemption disabled, so the ``this_cpu_add``
that followed went to the local it had read. Without ``preempt_disable()``
the task can be preempted, or migrated, between the decision and the add:
another task (or the migrated task's new CPU's) fills the local meanwhile,
and the add takes it to ``batch`` and past the read bound. On the task model
the scheduler finds both: a migration (two CPUs, one task each) and a
preemption (one CPU, two tasks).
"""
from checker import Param
from checker.specs.percpu_eager_tasks import VARIANT, PercpuEagerTasks


class EagerTasksNoPreemptDisable(PercpuEagerTasks, expect_violated=("local_bound", "read_bound")):
    """Variant A with preempt_disable() / preempt_enable() left out."""

    kernel = "lib/percpu_counter.c percpu_counter_add_batch before 805afd830099, without its preempt_disable()"
    explore_sweeps = ({"ncpus": 2, "migrations": 1, "preemptions": 1}, {"ncpus": 1, "ntasks": 2, "preemptions": 1})
    variant = Param(VARIANT.A, domain=(VARIANT.A,), names=VARIANT, doc="variant A")
    preempt_disable = Param(0, domain=(0,), doc="the bug: no preempt_disable()")
