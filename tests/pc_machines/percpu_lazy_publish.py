# SPDX-License-Identifier: GPL-2.0-only
"""percpu_lazy_publish as the hand-written pc machine it was before its process-function port replaced it.

Kept as a test (issue 28): tests/test_process_lazy.py explores it beside the built-in ``percpu_lazy_publish``
(specs/percpu_lazy_publish.py) at the same points under sc, tso and lkmm and asserts the same states, verdicts and
trace lengths. Built on the pc machine of ``percpu_lazy`` (tests/pc_machines/percpu_lazy.py); the claim and why it
means the same under every model are in the built-in spec's docstring.
"""
from checker import NOBODY, And, Bool, Ghost, If, Load, Or, Param, Store, action, invariant, sometimes, when
from checker.language.declare import DISABLED, Step
from checker.specs.percpu_lazy import decode
from pc_machines.percpu_lazy import C_V, CMPXCHG_V, READ, PercpuLazy, switch_cmpxchg_with


def _with(step: Step, **more) -> Step:
    """The same step, setting ``more`` as well (the ghosts this spec adds)."""
    return step if step is DISABLED else when(step.guard, **step.updates, **more)


class PercpuLazyPublish(PercpuLazy):
    """L-K (percpu_lazy) with the claim that a per-CPU read sees the published copy, under sc, tso, lkmm."""

    kernel = PercpuLazy.kernel
    # The default run is sc; `--memory tso|lkmm` runs the same point under a weak model. Both report
    # read_sees_the_published_copy violated today for the correct code, from two gaps in the models
    # (docs/weak-memory.md, "The seeds under weak memory"; strict xfails in tests/test_weak_seeds.py).
    explore_sweeps = ({"ncpus": 2, "mod_bits": 0, "neg": 0, "readers": 1},)

    neg = Param(0, domain=(0,), doc="amounts +1 only: a slot only grows from the copy on")

    pub_copy = Ghost(0, doc="the value the publishing switch copied into its slot")
    read_pub = Ghost(0, type=Bool, doc="the reader has read the publisher's slot")
    read_stale = Ghost(0, type=Bool, doc="the reader found less than the published copy in the publisher's slot")

    # The copy into this CPU's slot is a plain store before the cmpxchg (program order).
    @action(role="adders", access=(Store("slot", "plain"), CMPXCHG_V))
    def switch_cmpxchg(s, cpu):
        """v = atomic64_cmpxchg(&c->v, old, pcpu_v | 1): success publishes this CPU's storage (its
        slot holds the copy), then preempt_enable(); on failure the loop copies the word found again."""
        ok = And(s.published == NOBODY, s.word == s.v[cpu])
        return _with(switch_cmpxchg_with(s, cpu, decode), pub_copy=If(ok, s.copy[cpu], s.pub_copy))

    @action(role="reader", choose={"other": lambda p: p.adders},
            access=Load("slot", "plain", slot=lambda s, r, other: other, dep=C_V, race_ok=True))
    def read_slot(s, r, other):
        """for_each_possible_cpu(cpu) v += *per_cpu_ptr(pcpu_v, cpu); (one plain load per step, any order;
        its address comes from the atomic64_read)"""
        pub = other == s.published
        v = s.slot[other]
        return when(And(s.read_pc[r] == READ.scan, s.read_seen[other] == 0),
                    read_acc={r: s.read_acc[r] + v}, read_seen={other: 1},
                    read_pub=If(pub, 1, s.read_pub), read_stale=If(And(pub, v < s.pub_copy), 1, s.read_stale))

    @invariant(applies=lambda p: p.readers > 0)
    def read_sees_the_published_copy(s):
        """A lazy_percpu_counter_read that found the word per-CPU reads at least the copy in the publisher's
        slot: the copy's store is visible before the pointer is (atomic64_cmpxchg's full barrier, the read's
        address dependency)."""
        return s.read_stale == 0

    @sometimes(applies=lambda p: p.readers > 0)
    def a_read_reads_the_published_slot(s):
        """A per-CPU read reads the publisher's slot (the claim above is not vacuous)."""
        return s.read_pub == 1

    @invariant(applies=lambda p: p.readers > 0, sc_only="read_sees_the_published_copy")
    def read_exact_at_quiescence(s):
        """(sc only: "no add overlapped" is the SC order of steps; under tso and lkmm not_applicable) A
        lazy_percpu_counter_read that no add overlapped returns E."""
        return Or(s.read_pc[s.reader[0]] != READ.done, s.read_ok[s.reader[0]] == 1)
