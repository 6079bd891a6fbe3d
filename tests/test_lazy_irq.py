"""Issue 18, points 7 and 8: interrupt-context adds to the lazy counter, and 32-bit words (percpu_up, the
lazy counter's u64 slots)."""
import pytest

from checker import explore
from checker.specs.bugs.up_add_race import UpAddRace
from checker.specs.bugs.up_read_torn_32bit import UpReadTorn32bit
from checker.specs.percpu_up import PercpuUp


# -- percpu_up at 32 bits ----------------------------------------------------------------------------------
@pytest.mark.parametrize("ops,irq,states64,states32", [(1, 0, 5, 14), (1, 1, 14, 53), (1, 2, 27, 113),
                                                       (2, 0, 12, 39), (2, 1, 31, 127), (2, 2, 57, 252)])
def test_up_add_stays_exact_at_32_bits(ops, irq, states64, states32):
    r64, r32 = explore(PercpuUp(ops=ops, irq=irq, bits=64)), explore(PercpuUp(ops=ops, irq=irq, bits=32))
    assert (r64.states, r32.states) == (states64, states32)  # the 64-bit counts as before the Bits parameter
    assert r64.verdicts["read_is_exact"] == "holds" and "read_is_exact" not in r32.verdicts
    for r in (r64, r32):
        assert r.verdicts["every_add_kept"] == "holds" and r.verdicts["context_restored"] == "holds"
        assert r.verdicts["no_deadlock"] == "holds"


def test_up_read_holds_at_64_bits_and_tears_at_32():
    r = explore(PercpuUp(ops=1, irq=1, reads=1, bits=64))
    assert r.states == 42 and r.verdicts["read_within_interrupt_adds"] == "holds"
    assert r.verdicts["a_read_returns_after_an_interrupt_add"] == "holds"
    out = explore(UpReadTorn32bit(ops=0, irq=1)).outcomes["read_within_interrupt_adds"]
    assert out.verdict == "violated"
    assert [(st.action, st.choices) for st in out.trace] == [
        ("read.load_lo", {}), ("irq_add.store_lo", {"amount": -1}), ("irq_add.finish", {"amount": -1}),
        ("read.finish", {})]
    assert out.trace[-1].changes["read_val"] == -(1 << 32)  # the old low half, the new high half


def test_up_add_race_is_found_as_before():
    out = explore(UpAddRace(ops=1, irq=1)).outcomes["read_is_exact"]
    assert [s.action for s in out.trace] == ["add_load", "irq_add", "add_store"]


def test_a_torn_access_finishes_with_the_choice_it_started_with():
    """The interrupt's count += amount in halves: its finish never stores with another amount."""
    from checker.explore.graph import build_graph
    from checker.spec.compile import Model

    m = Model(PercpuUp(ops=0, irq=1, bits=32))
    g = build_graph(m)
    assert g.complete
    counts = {g.state(n)[m.index["count"]] for n in g.graph.nodes}
    # 0 - 1 half stored (low half first, high half first); +1 touches the low half only. A finish with the
    # other amount would give 0 - 1 + 1 in halves (4294967296 - ...), never seen
    assert counts == {0, 1, -1, 0xFFFFFFFF, -(1 << 32)}
