# SPDX-License-Identifier: GPL-2.0-only
"""``lazy_percpu_counter_atomic_val()`` with a logical right shift.

The decode relies on ``v`` being an ``s64`` so that ``>>`` shifts
arithmetically and copies bit 55 (the value's sign) into the top bits::

    static inline s64 lazy_percpu_counter_atomic_val(s64 v)
    {
            /* Ensure output is sign extended properly: */
            return (v << COUNTER_MOD_BITS) >> (COUNTER_MOD_BITS + COUNTER_IS_PCPU_BIT);
    }

Declared ``u64`` (the type of ``v`` in the callers, ``u64 old, new, v``),
the shift is logical and every negative value reads as ``2^55 + value``.
The bit-vector lemmas find it with a concrete word (the lemma set with
``LShR``), and the explorer finds what it does: the switch copies the wrong
value into its slot, so the per-CPU counter starts off by 2^55
(``no_update_lost``, 11 steps), and an atomic-mode read returns it too
(``read_exact_at_quiescence`` and ``read_within_adds``, 4 steps: task 3 adds
-1, the reader's ``atomic64_read`` decodes the word as 2^55 - 1).

On ``percpu_lazy`` the mutation is its ``atomic_val`` hook, which
the switch's copy (the task's and the interrupt handler's) and the read call;
15,849 states, as the hand-written pc machine had.
"""
from checker import Or, Param, invariant
from checker.prove.bitvector import WordLemmas
from checker.specs.percpu_lazy import PercpuLazy, decode_logical


class LazyDecodeLogicalShift(PercpuLazy, expect_violated=("no_update_lost", "read_exact_at_quiescence",
                                                                "read_within_adds")):
    """L-K with lazy_percpu_counter_atomic_val() taking a u64: (v << 8) >> 9 shifts logically."""

    kernel = PercpuLazy.kernel + "; lazy_percpu_counter_atomic_val's s64 parameter mutated to u64"
    explore_sweeps = ({},)  # (the liveness point is percpu_lazy's)
    lemmas = WordLemmas("logical", expect_violated=("add_round_trip", "add_wraps_at_55_bits", "value_range_is_exact",
                                                    "sign_extension"))

    ncpus = Param(2, domain=range(1, 4), explore=(2,), doc="CPUs, each with one adding task at the start")
    mod_bits = Param(0, domain=range(0, 9), explore=(0,), doc="COUNTER_MOD_BITS (0: every add checks)")
    neg = Param(1, domain=(0, 1), doc="amounts +1 and -1: the counter must go negative")
    readers = Param(1, domain=(0, 1), doc="a CPU doing one lazy_percpu_counter_read")

    # Checked under every model (percpu_lazy declares it SC-only): the bug's trace is an SC run, which tso and
    # lkmm contain as well, so the bug is looked for there too, not passed as not_applicable.
    @invariant(applies=lambda p: p.readers > 0)
    def read_exact_at_quiescence(s):
        """A lazy_percpu_counter_read that no add overlapped returns E (no batching: it is exact)."""
        return Or(s.reader_pc[s.reader[0]] != 1, s.read_ok[s.reader[0]] == 1)

    @staticmethod
    def atomic_val(v):
        """lazy_percpu_counter_atomic_val(u64 v): the switch's copy and the read decode shifting logically."""
        return decode_logical(v)
