# SPDX-License-Identifier: GPL-2.0-only
"""RFC 2/3's lazy_percpu_counter_read_positive() does not clamp in atomic mode.

::

    s64 lazy_percpu_counter_read_positive(struct lazy_percpu_counter *c)
    {
            s64 v = atomic64_read(&c->v);
            struct percpu_counter *pcpu_v = lazy_percpu_counter_is_pcpu(v);

            if (pcpu_v)
                    return percpu_counter_read_positive(pcpu_v);
            return lazy_percpu_counter_atomic_val(v);       /* may be < 0 */
    }

(``lazy_percpu_counter_sum_positive`` likewise.) K-LAZY-POS: a counter whose
value is negative reads negative through the ``_positive`` call, and
``get_mm_counter()`` returns it as an ``unsigned long``. In atomic mode the
value is exact, so for the rss counters this needs a negative exact value;
the checker shows the function breaks its contract, not that rss goes
negative (with lazy counters it only could through an accounting bug).
"""
from checker import Param, invariant
from checker.specs import percpu_lazy_rfc as rfc
from checker.specs.percpu_lazy_rfc import DESIGN, PercpuLazyRfc


class LazyRfcReadPositive(PercpuLazyRfc, expect_violated=("read_positive_never_negative",
                                                          "read_positive_error_bounded")):
    """L-Z's read_positive as posted: the atomic-mode value unclamped."""

    kernel = "ZhangPeng RFC 2/3 lib/lazy-percpu-counter.c lazy_percpu_counter_read_positive as posted"
    explore_sweeps = ({"ncpus": 1},)
    design = Param(DESIGN.posted, domain=DESIGN, doc="the posted code")
    ncpus = Param(1, domain=range(1, 4), explore=(1,), doc="adder CPUs (no race needed: one adds -1)")
    mod_bits = Param(0, domain=range(0, 9), explore=(0,), doc="COUNTER_MOD_BITS")
    neg = Param(1, domain=(0, 1), doc="amounts +1 and -1: the value must go negative")
    readers = Param(1, domain=(0, 1), doc="a CPU calling lazy_percpu_counter_read_positive")

    @invariant(applies=lambda p: p.readers > 0)
    def read_positive_never_negative(s):
        """LZ-POS for the posted code."""
        return rfc.read_positive_never_negative(s)

    @invariant(applies=lambda p: p.readers > 0)
    def read_positive_error_bounded(s):
        """read_positive's bound for the posted code."""
        return rfc.read_positive_error_bounded(s)
