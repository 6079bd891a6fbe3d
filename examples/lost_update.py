# SPDX-License-Identifier: GPL-2.0-only
"""A shared counter incremented as ``load; add; store``: two CPUs lose an update.

The C it models, called on every CPU::

    void counter_inc(void)
    {
            long v = READ_ONCE(counter);   /* step 1: load */
            WRITE_ONCE(counter, v + 1);    /* step 2: store */
    }

Each line is one atomic step, so another CPU can run between them. The spec
declares ``nothing_lost`` expected violated: ``verify`` exits 0 when the
checker finds the lost update (and 1 if a change hid it), and prints the
shortest trace: both CPUs load 0, both store 1.

    python -m checker verify examples/lost_update.py --traces bugs

``lost_update_fixed.py`` is the same counter with the fix.
"""
from checker import And, Implies, Param, PerCpu, Role, Shared, Spec, Sum, action, invariant, sometimes, terminal, when


class LostUpdate(Spec, expect_violated=("nothing_lost",)):
    """counter_inc() as a load and a store: the increment is not atomic."""

    kernel = "an example: counter_inc() as READ_ONCE(counter) then WRITE_ONCE(counter, v + 1)"
    ncpus = Param(2, domain=range(1, 9), explore=(2, 3), doc="CPUs (one CPU cannot race)")
    incs = Param(1, domain=range(0, 5), doc="increments per CPU")

    cpus = Role("ncpus", symmetric=True)
    counter = Shared(0)                   # the shared counter
    loaded = PerCpu(0)                    # v, the value this CPU loaded
    busy = PerCpu(0)                      # 1 between the load and the store
    left = PerCpu(lambda p: p.incs)       # increments this CPU has still to make

    @action(role="cpus")
    def load(s, cpu):
        """v = READ_ONCE(counter)."""
        return when(And(s.busy[cpu] == 0, s.left[cpu] > 0), loaded={cpu: s.counter}, busy={cpu: 1})

    @action(role="cpus")
    def store(s, cpu):
        """WRITE_ONCE(counter, v + 1)."""
        return when(s.busy[cpu] == 1, counter=s.loaded[cpu] + 1, busy={cpu: 0}, left={cpu: s.left[cpu] - 1})

    @terminal
    def done(s):
        return Sum(s.left) + Sum(s.busy) == 0

    @invariant
    def nothing_lost(s):
        """Once every CPU is done, the counter holds every increment made."""
        return Implies(Sum(s.left) + Sum(s.busy) == 0, s.counter == s.ncpus * s.incs)

    @sometimes
    def all_done(s):
        return Sum(s.left) + Sum(s.busy) == 0
