# SPDX-License-Identifier: GPL-2.0-only
"""32-bit kernels (checker.kernel.tearing): a split load's guard decides on the value its two halves assemble.

A lockless reader that acts only on some values (``if (percpu_counter_read(fbc) == X)``) loads the word
whenever its code reaches the load; the first half is read then, whatever the word holds, and the test
is made on the value assembled from the halves. A value no store ever left in memory, the low half of
one value and the high half of a value two stores later, is seen only so.
"""
from checker import S64, And, PerCpu, Role, Shared, Spec, action, invariant, terminal, when
from checker.explore import explore
from checker.kernel.config import Bits
from checker.language.compile import Model

STEP = (1 << 32) + 1  # each add changes both halves
TORN = 2 << 32  # the low half of 0 with the high half of 2 * STEP: never in memory


class TornGuard(Spec):
    """A writer adds STEP twice to a plain s64 (``fbc->count += amount``); a reader acts only where
    ``percpu_counter_read(fbc) == TORN``."""

    kernel = "a test of 32-bit tearing: a guard on a value loaded in halves"
    bits = Bits()
    writers = Role(1)
    readers = Role(1)
    count = Shared(0, type=S64, doc="fbc->count")
    adds = PerCpu(0, role="writers")
    acted = PerCpu(0, role="readers", doc="1: the reader took the branch")

    @action(role="writers")
    def add(s, cpu):
        """fbc->count += STEP"""
        return when(s.adds[cpu] < 2, count=s.count + STEP, adds={cpu: s.adds[cpu] + 1})

    @action(role="readers")
    def act(s, cpu):
        """if (percpu_counter_read(fbc) == TORN) ..."""
        return when(And(s.acted[cpu] == 0, s.count == TORN), acted={cpu: 1})

    @invariant
    def never_acts_on_a_value_never_held(s):
        return s.acted[1] == 0

    @terminal
    def done(s):
        return s.adds[0] == 2


def test_a_64_bit_reader_never_sees_the_value():
    assert explore(Model(TornGuard(bits=64))).outcomes["never_acts_on_a_value_never_held"].verdict == "holds"


def test_the_first_half_is_read_whatever_the_word_holds_and_the_guard_decides_on_both_halves():
    r = explore(Model(TornGuard(bits=32)))
    bad = r.outcomes["never_acts_on_a_value_never_held"]
    assert bad.verdict == "violated"
    # the low half (0) read from the first add's half-written word (high half first: 2^32), when the word
    # was not TORN; the second add's high half (2) then makes TORN, a value memory never held
    assert [st.action for st in bad.trace] == [
        "add.store_hi", "act.load_lo", "add.finish", "add.store_hi", "act.finish"]
    assert bad.trace[1].changes["_half_count[1]"] == 1 << 32
    assert bad.trace[-1].changes["acted[1]"] == 1
