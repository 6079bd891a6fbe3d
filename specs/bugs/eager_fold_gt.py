# SPDX-License-Identifier: GPL-2.0-only
"""The fold test of percpu_counter_add_batch() weakened from >= to >.

A realistic slip in lib/percpu_counter.c: writing
``if (abs(count) > batch)`` for ``if (abs(count) >= batch)``. The fast
path then lets a local reach exactly ``batch``, so each CPU can hide one
more unit than the read bound allows, and ``percpu_counter_read`` can be
off by ``ncpus * batch``. (The same `<=` in ``__percpu_counter_limited_add``
is deliberate there, and its bound is ``ncpus * batch`` accordingly.)

Shortest counterexample to the read bound: ``ncpus * (batch - 1) + 1``
fast-path adds (every CPU fills its local to ``batch - 1``, then one more).
"""
from checker import Param
from checker.specs.percpu_eager import VARIANT, PercpuEager


class EagerFoldGt(PercpuEager, expect_violated=("read_bound", "local_bound")):
    """percpu_counter_add_batch() with `abs(count) > batch` as the fold test (variants B and C)."""

    kernel = PercpuEager.kernel + "; fold test mutated from >= to >"
    explore_sweeps = ({}, {"variant": VARIANT.C})
    ops = Param(lambda p: p.batch + 1, domain=range(0, 1 << 16),
                doc="adds per CPU (default batch + 1: with the bug a fold needs that many)")
    readers = Param(0, domain=(0, 1), doc="CPUs doing one percpu_counter_read / read_positive")
    summers = Param(0, domain=(0, 1), doc="CPUs doing one __percpu_counter_sum")

    @staticmethod
    def folds(s, count):
        """The bug: abs(count) > batch (should be >=)."""
        return abs(count) > s.batch
