# SPDX-License-Identifier: GPL-2.0-only
"""32-bit kernels (checker.kernel.tearing): a load of another CPU's 64-bit per-CPU slot is two loads.

``*per_cpu_ptr(p, cpu)`` of a u64 on a 32-bit kernel is a plain load in halves (as the remote slot reads of
``lazy_percpu_counter_read()`` are); the owner's ``this_cpu_add()`` is whole to its own CPU. A reader that
reads the low half before two adds and the high half after them sees a value the slot never held, nor any
half-written store left in it.
"""
import pytest

from checker import S64, And, Load, PerCpu, Role, Shared, Spec, Store, action, invariant, terminal, when
from checker.explore import explore
from checker.kernel.config import Bits
from checker.language.compile import Model
from checker.ordering.declare import MEMORY

STEP = (1 << 32) + 1  # each add changes both halves
TORN = 2 << 32  # the low half of 0 with the high half of 2 * STEP


class TornSlot(Spec):
    """A CPU adds STEP twice to its own s64 per-CPU slot (``this_cpu_add``); another CPU reads that slot
    once, as a sum does (``*per_cpu_ptr(p, 0)``)."""

    kernel = "a test of 32-bit tearing of a remote per-CPU load"
    bits = Bits()
    adders = Role(1)
    summers = Role(1)
    local = PerCpu(0, type=S64, role="adders")
    adds = PerCpu(0, role="adders")
    seen = Shared(-1, doc="what the summer read (-1: not yet; a model variable, never torn)")

    @action(role="adders", access=Store("local", "plain", slot=lambda s, c: c, race_ok=True))
    def add(s, cpu):
        """this_cpu_add(*p, STEP)"""
        return when(s.adds[cpu] < 2, local={cpu: s.local[cpu] + STEP}, adds={cpu: s.adds[cpu] + 1})

    @action(role="summers", access=Load("local", "plain", slot=lambda s, c: 0, race_ok=True))
    def sum(s, cpu):
        """v = *per_cpu_ptr(p, 0)"""
        return when(s.seen == -1, seen=s.local[0])

    @invariant
    def never_reads_torn(s):
        return s.seen != TORN

    @terminal
    def done(s):
        return And(s.adds[0] == 2, s.seen != -1)


def test_a_64_bit_remote_load_is_whole():
    assert explore(Model(TornSlot(bits=64))).outcomes["never_reads_torn"].verdict == "holds"


@pytest.mark.parametrize("memory, states, trace", [
    # sc: the low half (0) from the first add's half-written slot (high half first: 2^32); the second add's
    # high half (2) then: TORN
    (MEMORY.sc, 89, ["add.store_hi", "sum.load_lo", "add.finish", "add.store_hi", "sum.finish"]),
    # tso: each half-store is buffered and flushed on its own
    (MEMORY.tso, 171, ["add.store_lo", "sum.load_lo", "flush", "add.finish", "flush", "add.store_hi", "flush",
                       "sum.finish"]),
    # lkmm: the low half read from the initial store, coherence-earlier than the first add's low half
    (MEMORY.lkmm, 118, ["add.store_lo", "sum.load_lo", "add.finish", "add.store_hi", "sum.finish"]),
])
def test_a_32_bit_remote_load_is_two_loads_under_every_model(memory, states, trace):
    r = explore(TornSlot(bits=32, memory=memory))
    bad = r.outcomes["never_reads_torn"]
    assert bad.verdict == "violated" and r.complete and r.states == states
    assert [st.action for st in bad.trace] == trace
    assert r.engine == "interpreted"  # 32-bit points are the interpreter's (the compiled engine hands them over)


def test_the_owner_reads_its_own_slot_whole():
    """this_cpu_read() on the owner's CPU: nothing runs there between the halves, so the load is not split."""

    class OwnRead(TornSlot):
        own = PerCpu(-1, role="adders")

        @action(role="adders")
        def read_own(s, cpu):
            """this_cpu_read(*p)"""
            return when(s.own[cpu] == -1, own={cpu: s.local[cpu]})

    names = [a.info.name for a in Model(OwnRead(bits=32)).actions]
    assert "read_own" in names and "sum.load_lo" in names and "read_own.load_lo" not in names


class SumInOneStep(TornSlot):
    """A summer that reads every adder's slot in one step (``Sum``), as no kernel reader does."""

    adders = Role(2)
    total = Shared(-1)

    @action(role="summers")
    def sum_all(s, cpu):
        """s = 0; for_each_possible_cpu(c) s += *per_cpu_ptr(p, c); as one step"""
        return when(s.total == -1, total=s.local[0] + s.local[1])


def test_a_step_loading_several_remote_slots_is_refused_at_a_32_bit_point():
    """Each remote slot is two 32-bit loads; one step cannot split several, so it is refused (naming the action
    and what to write), not kept whole; at 64 bits the same step is one load per slot and is built."""
    from checker.errors import SpecError

    assert "sum_all" in [a.info.name for a in Model(SumInOneStep(bits=64)).actions]
    with pytest.raises(SpecError, match=r"sum_all loads 2 other CPUs' slots of local in one step at a 32-bit "
                                        r"point \(bits=32\).*write one action per slot read") as e:
        Model(SumInOneStep(bits=32))
    assert e.value.line is not None


@pytest.mark.differential
def test_lazy_read_torn_32bit_is_found_under_tso():
    """The 32-bit lazy read's torn slot under tso (interpreted; 2083 s at a load of 30, about two minutes of
    CPU): CPU 0's this_cpu_add(-1) stores its low half, the reader loads that slot's high half (old), the low
    half is flushed, the reader loads it: 20 steps, one flush."""
    from checker.specs.bugs.lazy_read_torn_32bit import LazyReadTorn32bit

    r = explore(LazyReadTorn32bit(memory=MEMORY.tso))
    out = r.outcomes["read_within_adds"]
    assert out.verdict == "violated" and len(out.trace) == 20 and r.states == 267765
    assert [st.action for st in out.trace[-8:]] == ["this_cpu_add.store_lo", "read", "read_slot.load_lo",
                                                    "read_slot.finish", "read_slot.load_hi", "flush",
                                                    "read_slot.finish", "read_return"]
