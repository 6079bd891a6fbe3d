# SPDX-License-Identifier: GPL-2.0-only
"""percpu_counter_set() whose walk leaves one CPU's local behind [a mutation].

lib/percpu_counter.c (v6.6, c439d5e8a0de; the same since 2.6)::

    void percpu_counter_set(struct percpu_counter *fbc, s64 amount)
    {
            ...
            raw_spin_lock_irqsave(&fbc->lock, flags);
            for_each_possible_cpu(cpu) {
                    s32 *pcount = per_cpu_ptr(fbc->counters, cpu);
                    *pcount = 0;
            }
            fbc->count = amount;
            raw_spin_unlock_irqrestore(&fbc->lock, flags);
    }

Its callers rely on one thing: after a set that no add raced, the counter
reads the value set (``percpu_counter_sum()`` returns it, and later adds
count from it). A walk that misses a CPU (``for_each_online_cpu`` while a
CPU's local is not yet folded, or an off-by-one bound) leaves that local's
adds on top of the value set. Here the walk stops one CPU short (which CPU
is left is any). percpu_eager_calls' set property used to define the value
after a set from the model's own locals (E = the value set + the locals
left), which a skipped local satisfies: this mutation went unnoticed. The
property now states the callers' promise (``set_then_sum_reads_the_value_set``,
and ``conservation`` with E = the value set).

Shortest counterexample: an add leaves 1 in a local, the set zeroes every
local but that one and stores the value: count + locals = value + 1.
"""
from checker import NOBODY, And, Fill, Implies, Or, Param, Sum, action, invariant, when
from checker.specs.percpu_eager_calls import SET, PercpuEagerCalls, _value_set


class EagerSetSkipsACpu(PercpuEagerCalls, name="eager_set_skips_a_cpu", expect_violated=("set_then_sum_reads_the_value_set", "conservation")):
    """percpu_counter_set() zeroing every local but one."""

    kernel = PercpuEagerCalls.kernel + "; percpu_counter_set's walk mutated to leave one CPU's local behind"
    explore_sweeps = ({"setters": 1, "ncpus": 2},)
    setters = Param(1, domain=(1,), doc="a CPU doing one percpu_counter_set(fbc, set_to)")

    # Both checked under every model (percpu_eager_calls declares the first SC-only and, with adds racing the
    # set under tso/lkmm, names the second racing_set_breaks_conservation_under_weak_memory): the bug is a set
    # that leaves a local behind, found by an SC trace that tso and lkmm contain as well.
    @invariant
    def conservation(s):
        """PC-CONS: whenever fbc->lock is free, count + sum of locals == E."""
        return Or(s.lock != NOBODY, s.count + Sum(s.local) == s.exact)

    @invariant
    def set_then_sum_reads_the_value_set(s):
        """After a set that no lockless add raced, with fbc->lock free, count + the locals is E."""
        done = Or(*[s.set_pc[c] == SET.done for c in s.setter])
        quiet = And(s.set_kept == 0, s.set_lost == 0)
        return Implies(And(done, quiet, s.lock == NOBODY), s.count + Sum(s.local) == s.exact)

    @action(role="setter", fair="weak")
    def set_store(s, cpu):
        """(the bug) fbc->count = amount once every CPU's local but (at most) one is zeroed; raw_spin_unlock_irqrestore()."""
        return when(And(s.set_pc[cpu] == SET.zeroing, Sum(s.visited) >= s.ncpus - 1),
                    count=s.set_to, exact=_value_set(s), visited=Fill(0), lock=NOBODY, set_pc={cpu: SET.done})
