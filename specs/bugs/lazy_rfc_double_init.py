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
from checker import If, Param, action, when
from checker.specs.percpu_lazy_rfc import ADD, PercpuLazyRfc


class LazyRfcDoubleInit(PercpuLazyRfc, expect_violated=("fbc_initialised_once", "nothing_leaks_at_destroy",
                                                        "no_update_lost", "unregistered_at_destroy",
                                                        "read_positive_error_bounded")):
    """L-Z's switch_to_pcpu as posted: no claim, every switcher calls percpu_counter_init(&c->fbc)."""

    kernel = ("ZhangPeng RFC 2/3 lib/lazy-percpu-counter.c switch_to_pcpu as posted, with v6.6 "
              "lib/percpu_counter.c __percpu_counter_init_many, percpu_counter_set, percpu_counter_add_batch")
    mod_bits = Param(1, domain=range(0, 9), explore=(1,), doc="COUNTER_MOD_BITS (8 in the kernel)")

    @action(role="adders")
    def switch_read(s, cpu):
        """local_irq_save(flags); preempt_disable(); v = atomic64_read(&c->v); allocated = false;
        loop: if (is_pcpu(v)) break; if (!allocated) percpu_counter_init(&c->fbc, ...)"""
        return when(s.pc[cpu] == ADD.sw_read, irqs={cpu: 1}, preempt={cpu: s.preempt[cpu] + 1},
                    v={cpu: If(s.published == 1, 0, s.word)}, allocated={cpu: 0},
                    pc={cpu: If(s.published == 1, ADD.sw_exit, ADD.sw_init)})
