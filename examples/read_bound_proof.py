# SPDX-License-Identifier: GPL-2.0-only
"""A per-CPU counter's read error, proved for every CPU count from 1 to 8192 at once.

The C it models (lib/percpu_counter.c, the interrupts-off variant)::

    void percpu_counter_add_batch(struct percpu_counter *fbc, s64 amount, s32 batch)
    {
            count = __this_cpu_read(*fbc->counters) + amount;
            if (abs(count) >= batch) {
                    raw_spin_lock_irqsave(&fbc->lock, flags);
                    fbc->count += count;
                    __this_cpu_sub(*fbc->counters, count - amount);
                    raw_spin_unlock_irqrestore(&fbc->lock, flags);
            } else {
                    this_cpu_add(*fbc->counters, amount);
            }
    }

``percpu_counter_read()`` returns ``fbc->count`` alone, so it is off by what
the CPUs hold locally: at most ``ncpus * (batch - 1)``. The explorer checks
that at 1 and 2 CPUs; ``--mode prove`` proves it with Z3 for every ``ncpus``
in 1..8192 and every ``batch`` and ``ops`` at once, from two inductive
invariants (each local stays within ``batch - 1`` of 0; nothing is lost):

    python -m checker verify examples/read_bound_proof.py --mode prove
"""
from checker import And, Ghost, Param, PerCpu, Role, Shared, Spec, Sum, action, invariant, sometimes, terminal, when


class ReadBoundProof(Spec):
    """percpu_counter_add_batch() with the fold under fbc->lock, and percpu_counter_read()'s error."""

    kernel = "lib/percpu_counter.c: percpu_counter_add_batch() (interrupts off), percpu_counter_read()"
    ncpus = Param(2, domain=range(1, 8193), explore=(1, 2), prove=range(1, 8193), doc="CPUs")
    batch = Param(2, domain=range(1, 64), prove=("symbolic",), doc="fbc's batch")
    ops = Param(2, domain=range(0, 4), prove=("symbolic",), doc="adds per CPU")

    cpus = Role("ncpus", symmetric=True)
    count = Shared(0)                     # fbc->count
    local = PerCpu(0)                     # *this_cpu_ptr(fbc->counters)
    left = PerCpu(lambda p: p.ops)        # adds this CPU has still to make
    exact = Ghost(0)                      # the sum of every amount added: what a read should return

    sum_bounds = {"local": lambda s: (1 - s.batch, s.batch - 1)}  # for the proof's sum lemma

    @action(role="cpus", choose={"amount": (-1, 1)})
    def add_fast(s, cpu, amount):
        """this_cpu_add(*fbc->counters, amount) while |local + amount| < batch."""
        c = s.local[cpu] + amount
        return when(And(s.left[cpu] > 0, abs(c) < s.batch),
                    local={cpu: c}, left={cpu: s.left[cpu] - 1}, exact=s.exact + amount)

    @action(role="cpus", choose={"amount": (-1, 1)})
    def add_fold(s, cpu, amount):
        """Under fbc->lock, interrupts off: fbc->count += local + amount; the local drops to 0."""
        c = s.local[cpu] + amount
        return when(And(s.left[cpu] > 0, abs(c) >= s.batch),
                    count=s.count + c, local={cpu: 0}, left={cpu: s.left[cpu] - 1}, exact=s.exact + amount)

    @terminal
    def done(s):
        return Sum(s.left) == 0

    @invariant(role="cpus", inductive=True)
    def local_in_range(s, cpu):
        """Each CPU's local stays within batch - 1 of 0."""
        return And(s.local[cpu] > -s.batch, s.local[cpu] < s.batch)

    @invariant(inductive=True)
    def nothing_lost(s):
        """fbc->count and the locals add up to every amount added."""
        return s.count + Sum(s.local) == s.exact

    @invariant
    def read_error_bounded(s):
        """percpu_counter_read() is within ncpus * (batch - 1) of the exact sum."""
        return abs(s.count - s.exact) <= s.ncpus * (s.batch - 1)

    @sometimes
    def a_fold_happens(s):
        return s.count != 0
