# SPDX-License-Identifier: GPL-2.0-only
"""The lazy counter's publication under weak memory, on the process-function port: percpu_lazy_publish's claim.

``percpu_lazy_publish`` adds to ``percpu_lazy`` the claim that a reader which finds ``c->v`` per-CPU reads at
least the copy in the publisher's slot (``read_sees_the_published_copy``: the publishing cmpxchg's full
barrier orders the copy's store before the pointer's, the read's address dependency orders the slot's load
after the pointer's). This is the same claim on ``percpu_lazy_process``: its publishing cmpxchg step and its
read's slot loads record the same ghosts (the port's ``publishing`` and ``slot_read`` hooks), and it is
checked against ``percpu_lazy_publish`` state for state in tests/test_process_lazy.py.
"""
from checker import NOBODY, And, Bool, CpuId, Ghost, If, Or, Param, Select, invariant, sometimes
from checker.specs.percpu_lazy_process import PercpuLazyProcess


class PercpuLazyPublishProcess(PercpuLazyProcess, on_demand=True):
    """percpu_lazy_process with the claim that a per-CPU read sees the published copy, under sc, tso, lkmm."""

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
