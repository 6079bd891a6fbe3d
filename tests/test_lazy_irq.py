# SPDX-License-Identifier: GPL-2.0-only
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
    from checker.language.compile import Model

    m = Model(PercpuUp(ops=0, irq=1, bits=32))
    g = build_graph(m)
    assert g.complete
    counts = {g.state(n)[m.index["count"]] for n in g.graph.nodes}
    # 0 - 1 half stored (low half first, high half first); +1 touches the low half only. A finish with the
    # other amount would give 0 - 1 + 1 in halves (4294967296 - ...), never seen
    assert counts == {0, 1, -1, 0xFFFFFFFF, -(1 << 32)}


# -- percpu_lazy: interrupt-context adds (point 7) ---------------------------------------------------------
from checker.specs.bugs.lazy_irq_switch_loser_preempt import LazyIrqSwitchLoserPreempt  # noqa: E402
from checker.specs.bugs.lazy_read_torn_32bit import LazyReadTorn32bit  # noqa: E402
from checker.kernel.memory import MEM  # noqa: E402
from checker.specs.percpu_lazy import SWITCH_READ, PercpuLazy, PercpuLazy32bit  # noqa: E402

IRQ_WITNESSES = ("an_irq_adds_over_a_task_add", "an_irq_switch_nests_in_the_task_switch",
                 "a_task_loses_the_switch_to_its_own_irq", "a_switch_happens", "a_switch_loser_frees")


def test_irq_adds_at_one_cpu_keep_every_property_and_nest_a_switch_in_the_task_switch():
    r = explore(PercpuLazy(irq=1, ncpus=1, mod_bits=0, ops=2, readers=0))
    assert r.complete and r.states == 140
    assert set(r.verdicts.values()) == {"holds"}, {k: v for k, v in r.verdicts.items() if v != "holds"}
    for p in IRQ_WITNESSES + ("irq_preempt_balanced_on_return", "irq_losers_free_their_storage"):
        assert p in r.verdicts
    nested = r.outcomes["an_irq_switch_nests_in_the_task_switch"].trace
    assert len(nested) == 16
    # the task is inside its switch (allocated, preemption off, c->v read) when the handler's add, six steps of
    # lazy_percpu_counter_add_irq, wraps and enters its own switch
    assert nested[9].action.startswith(f"lazy_percpu_counter_add_L{SWITCH_READ}_")
    assert {st.action.split("_L")[0] for st in nested[10:]} == {"lazy_percpu_counter_add_irq"}
    lost = r.outcomes["a_task_loses_the_switch_to_its_own_irq"].trace
    # the handler publishes its own storage (CPU 0's) and returns; the task's preempt_disable() and atomic64_read
    # then find the word per-CPU
    assert len(lost) == 17 and lost[-2].action.startswith("lazy_percpu_counter_add_irq_")
    assert lost[-2].changes["published_irq"] == 0 and lost[-2].changes["publishes"] == 1
    assert lost[-1].action.startswith(f"lazy_percpu_counter_add_L{SWITCH_READ}_") and lost[-1].changes["pcount[1]"] == 1


def test_irq_adds_at_two_cpus_with_a_reader_keep_every_property():
    r = explore(PercpuLazy(irq=1, ncpus=2, mod_bits=0, ops=1, neg=0), engine="compiled")  # (15 s interpreted)
    assert r.complete and r.states == 32890
    assert set(r.verdicts.values()) == {"holds"}, {k: v for k, v in r.verdicts.items() if v != "holds"}
    for p in IRQ_WITNESSES + ("an_irq_add_goes_per_cpu", "read_exact_at_quiescence", "read_within_adds"):
        assert r.verdicts[p] == "holds"


def test_the_task_waits_while_its_cpus_handler_runs():
    from checker.explore.graph import build_graph
    from checker.language.compile import Model

    m = Model(PercpuLazy(irq=1, ncpus=1, mod_bits=0, ops=2, readers=0))
    g = build_graph(m)
    task_steps = {a.index for a in m.actions if a.info.name.startswith("lazy_percpu_counter_add_L")}
    assert task_steps
    inside = 0
    for u, _v, data in g.graph.edges(data=True):
        if g.state(u)[m.index["cpus_pc"]][0] != 0:
            inside += 1
            assert data["label"][0] not in task_steps
    assert inside > 0


def test_posted_loser_return_in_a_handler_leaves_the_interrupt_with_preemption_off():
    r = explore(LazyIrqSwitchLoserPreempt(ncpus=2, ops=1))
    out = r.outcomes["irq_preempt_balanced_on_return"]
    assert out.verdict == "violated" and len(out.trace) == 18 and r.states == 4366
    # CPU 0's handler: preempt_disable() with the atomic64_read that finds the word per-CPU, then free_percpu()
    # and the return from the interrupt (pc idle) with irq_pcount[0] still 1
    disable, lose = out.trace[-2:]
    assert all((st.role, st.cpu) == ("cpus", 0) and st.action.startswith("lazy_percpu_counter_add_irq_")
               for st in (disable, lose))
    assert disable.changes["irq_pcount[0]"] == 1
    assert lose.changes == {"irq_alloc[0]": MEM.freed, "cpus_pc[0]": 0, "cpus_v[0]": 0}
    assert r.outcomes["preempt_balanced_on_return"].verdict == "violated"
    for p in ("no_update_lost", "losers_free_their_storage", "irq_losers_free_their_storage",
              "nothing_leaks_at_exit", "published_storage_live"):
        assert r.verdicts[p] == "holds"


# -- percpu_lazy at 32 bits (point 8) ----------------------------------------------------------------------
def test_lazy_counter_at_32_bits_keeps_its_verdicts_where_no_slot_crosses_2_to_the_32():
    r = explore(PercpuLazy32bit(ncpus=2, mod_bits=1, readers=1, neg=0))
    # each remote slot read is a load_lo/load_hi and a finish; a task's this_cpu_add stays whole (the pc machine
    # it replaced split it too: 18,042 states, the same verdicts)
    assert r.complete and r.states == 8832
    assert set(r.verdicts.values()) == {"holds"}, {k: v for k, v in r.verdicts.items() if v != "holds"}
    assert {"no_update_lost", "read_within_adds", "read_exact_at_quiescence"} <= set(r.verdicts)
    r64 = explore(PercpuLazy(ncpus=2, mod_bits=1, readers=1, neg=0))
    assert r64.states == 5392 and r64.verdicts["read_within_adds"] == "holds"


@pytest.mark.parametrize("engine", ["compiled", pytest.param("interpreted", marks=pytest.mark.differential)])
def test_lazy_read_tears_at_32_bits_when_a_slot_goes_below_zero(engine):
    r = explore(LazyReadTorn32bit(), engine=engine)  # (the interpreted run: 11 s)
    assert r.engine == engine
    out = r.outcomes["read_within_adds"]
    assert out.verdict == "violated" and len(out.trace) == 19
    # the reader loads slot 0's low half (0), the task's this_cpu_add(-1) makes the slot -1, the reader's
    # finish loads the high half of -1: 0xffffffff_00000000
    load, add, finish = out.trace[-6:-3]
    assert load.action.endswith("_per_cpu.load_lo") and finish.action.endswith("_per_cpu.finish")
    assert add.action.startswith("lazy_percpu_counter_add_") and add.changes["slot[0]"] == -1
    assert finish.changes["reader_v[2]"] == -(1 << 32)


def test_lazy_irq_add_at_32_bits_holds():
    r = explore(PercpuLazy32bit(irq=1, ncpus=1, mod_bits=0, ops=2, readers=0, neg=1))
    assert r.complete and r.states == 707
    assert set(r.verdicts.values()) == {"holds"}, {k: v for k, v in r.verdicts.items() if v != "holds"}
    # the handler's this_cpu_add to its own CPU's slot is two stores: the value is judged between them
    assert "no_update_lost_between_stores" in r.verdicts and "no_update_lost" not in r.verdicts
