# SPDX-License-Identifier: GPL-2.0-only
"""The lazy counter's publication under weak memory: L-K's switch_to_pcpu() and read().

``percpu_lazy`` writes lib/lazy-percpu-counter.c as its kernel functions, and their primitives carry the ordering
the code has::

    switch_to_pcpu():   *this_cpu_ptr(pcpu_v) = lazy_percpu_counter_atomic_val(v);   /* plain store */
                        v = atomic64_cmpxchg(&c->v, old, (unsigned long)pcpu_v | 1);  /* fully ordered */
    read():             s64 v = atomic64_read(&c->v);                                /* READ_ONCE */
                        ... v += *per_cpu_ptr(pcpu_v, cpu);    /* its address comes from v */

A reader that finds the word per-CPU must find the copy in the publisher's slot: the cmpxchg's full barrier orders
the copy's store before the pointer's, and the address dependency orders the slot's load after the pointer's
(LKMM's message passing with ``mb`` and ``addr``: Never). This spec adds that claim,
``read_sees_the_published_copy``, which means the same under every model: with positive amounts a slot only grows
from the copy on, so a per-CPU read that finds less than the copy in the publisher's slot read the zeroed storage
under the pointer. Its publishing cmpxchg step and its read's slot loads record the ghosts (``percpu_lazy``'s
``publishing`` and ``slot_read`` hooks). ``percpu_lazy``'s own ``read_exact_at_quiescence`` ("a read that no add
overlapped returns E") says "no overlap" by the SC order of steps; under ``tso`` and ``lkmm`` an add that SC placed
before the read may still sit in its CPU's store buffer (``this_cpu_add`` is no LOCKed instruction) or be unseen by
the reader, and nothing in the kernel orders it before the read, so here it is checked under ``sc`` only.
``specs/bugs/lazy_publish_relaxed.py`` makes the publish ``atomic64_cmpxchg_relaxed()``.

The default run is the smallest point where two CPUs race to switch and a reader races the publication: 2 CPUs,
``mod_bits=0``, positive amounts, one reader. It replaced the hand-written pc machine it was checked against state
for state (tests/pc_machines/percpu_lazy_publish.py; tests/test_process_lazy.py).
"""
from checker import NOBODY, And, Bool, CpuId, Ghost, If, Or, Param, Select, invariant, sometimes
from checker.specs.percpu_lazy import PercpuLazy


class PercpuLazyPublish(PercpuLazy):
    """percpu_lazy with the claim that a per-CPU read sees the published copy, under sc, tso, lkmm."""

    explore_sweeps = ({"ncpus": 2, "mod_bits": 0, "neg": 0, "readers": 1},)

    neg = Param(0, domain=(0,), doc="amounts +1 only: a slot only grows from the copy on")

    pub_copy = Ghost(0, doc="the value the publishing switch copied into its slot")
    pub_cpu = Ghost(NOBODY, type=CpuId, doc="the CPU whose slot the publishing switch copied into")
    read_pub = Ghost(0, type=Bool, doc="the reader has read the publisher's slot")
    read_stale = Ghost(0, type=Bool, doc="the reader found less than the published copy in the publisher's slot")

    @staticmethod
    def publishing(s, t, old, copy):
        """The publishing cmpxchg records the copy it publishes."""
        ok = And(s.published == NOBODY, s.word == old)
        return {"pub_copy": If(ok, copy, s.pub_copy), "pub_cpu": If(ok, Select(s.task_cpu, t), s.pub_cpu)}

    @staticmethod
    def slot_read(s, cpu, value):
        """A slot read from the publisher's slot (the CPU its copy went to): did it find less than the copy?"""
        pub = cpu == s.pub_cpu
        return {"read_pub": If(pub, 1, s.read_pub), "read_stale": If(And(pub, value < s.pub_copy), 1, s.read_stale)}

    @invariant(applies=lambda p: p.readers > 0)
    def read_sees_the_published_copy(s):
        """A lazy_percpu_counter_read that found the word per-CPU reads at least the copy in the publisher's
        slot."""
        return s.read_stale == 0

    @sometimes(applies=lambda p: p.readers > 0)
    def a_read_reads_the_published_slot(s):
        """A per-CPU read reads the publisher's slot (the claim above is not vacuous)."""
        return s.read_pub == 1

    @invariant(applies=lambda p: p.readers > 0, sc_only="read_sees_the_published_copy")
    def read_exact_at_quiescence(s):
        """(sc only) A lazy_percpu_counter_read that no add overlapped returns E."""
        return Or(s.reader_pc[s.reader[0]] != 1, s.read_ok[s.reader[0]] == 1)
