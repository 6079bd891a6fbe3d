# SPDX-License-Identifier: GPL-2.0-only
"""RFC 2/3's switch_to_pcpu: two CPUs initialise the one embedded ``c->fbc``.

Every CPU whose add wraps within a second runs ``switch_to_pcpu``, and the
only test before ``percpu_counter_init(&c->fbc, ...)`` is the word's mode
bit::

    v = atomic64_read(&c->v);
    do {
            if (lazy_percpu_counter_is_pcpu(v))
                    break;
            if (!allocated) {
                    if (percpu_counter_init(&c->fbc, 0, GFP_ATOMIC|__GFP_NOWARN))
                            break;
                    allocated = true;
            }
            old = v;
            new = (unsigned long)&c->fbc | 1;
            percpu_counter_set(&c->fbc, lazy_percpu_counter_atomic_val(v));
    } while ((v = atomic64_cmpxchg(&c->v, old, new)) != old);

A second CPU that read the word before the first published it initialises
the same ``fbc`` again (the reference infers it, K-LAZY-DOUBLEINIT; the
checker confirms it): it adds the list node a second time, replaces
``counters`` (the first allocation leaks), resets ``count`` and the
locals, and its ``percpu_counter_set`` writes a stale atomic value over the
published counter before its ``cmpxchg`` fails. Adds made through the
published counter in between are lost.
"""
from checker import Param, invariant
from checker.specs import percpu_lazy_rfc as rfc
from checker.specs.percpu_lazy_rfc import DESIGN, PercpuLazyRfc


class LazyRfcDoubleInit(PercpuLazyRfc, expect_violated=("fbc_initialised_once", "nothing_leaks_at_destroy",
                                                        "no_update_lost", "unregistered_at_destroy",
                                                        "read_positive_error_bounded")):
    """L-Z's switch_to_pcpu as posted: no claim, every switcher calls percpu_counter_init(&c->fbc)."""

    kernel = ("ZhangPeng RFC 2/3 lib/lazy-percpu-counter.c switch_to_pcpu as posted, with v6.6 "
              "lib/percpu_counter.c __percpu_counter_init_many, percpu_counter_set, percpu_counter_add_batch")
    explore_sweeps = ({"ncpus": (2, 3)},)
    design = Param(DESIGN.posted, domain=DESIGN, doc="the posted code")
    mod_bits = Param(1, domain=range(0, 9), explore=(1,), doc="COUNTER_MOD_BITS (8 in the kernel)")

    # What percpu_lazy_rfc states only where the double initialisation cannot happen, stated here for the
    # posted code at two and three CPUs.
    @invariant
    def no_update_lost(s):
        """LZ-EXACT / LZ-SWITCH for the posted code."""
        return rfc.no_update_lost(s)

    @invariant
    def fbc_initialised_once(s):
        """LZ-REG for the posted code."""
        return rfc.fbc_initialised_once(s)

    @invariant
    def unregistered_at_destroy(s):
        """LZ-REG at destroy for the posted code."""
        return rfc.unregistered_at_destroy(s)

    @invariant
    def nothing_leaks_at_destroy(s):
        """LZ-RES for the posted code."""
        return rfc.nothing_leaks_at_destroy(s)

    @invariant(applies=lambda p: p.readers > 0)
    def read_positive_error_bounded(s):
        """read_positive's bound for the posted code."""
        return rfc.read_positive_error_bounded(s)
