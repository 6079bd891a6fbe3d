# SPDX-License-Identifier: GPL-2.0-only
"""vma_unlink_batch (seed 004): verdicts, state counts, the lock-count formula, the bug specs.

Numbers are pinned: state counts per layout family, the closed formula's
lock counts against the unbatched loop's, and the lengths and last steps of
the shortest counterexamples (the pc machine's before the process-function
port replaced it: tests/test_process_vma.py checks the two equal). A step of
free_pgtables is named by the control point it goes to (``point``).
"""
import pytest

from checker import explore
from checker.kernel.memory import MEM_ERROR
from checker.language.compile import Model
from checker.specs.bugs.unlink_batch_by_mapping import UnlinkBatchByMapping
from checker.specs.bugs.unlink_batch_compare_last import UnlinkBatchCompareLast
from checker.specs.bugs.unlink_batch_free_before_final import UnlinkBatchFreeBeforeFinal
from checker.specs.bugs.unlink_batch_full_gt import UnlinkBatchFullGt
from checker.specs.bugs.unlink_batch_no_file_check import UnlinkBatchNoFileCheck
from checker.specs.bugs.unlink_batch_no_final import UnlinkBatchNoFinal
from checker.specs.vma_unlink_batch import (LAYOUTS, VmaUnlinkBatch, _mark, expected_write_locks, groups,
                                            unbatched_reference)

STATIC, DYNAMIC, PIECES, TWO_OPENS = range(4)


def point(tag: str, fn: str = "free_pgtables") -> dict:
    """The change of a step that takes the task to the control point marked ``# [tag]`` in ``fn``."""
    reg = VmaUnlinkBatch.__countercheck_processes__[fn]
    line = _mark(fn, tag)
    return {"task_pc[0]": next(getattr(reg["enum"], p.label) for p in reg["points"].values() if p.line == line)}

#: (layout, size, batched) -> distinct states with one walker.
STATES = {
    (STATIC, 2, 1): 162, (STATIC, 8, 1): 128, (STATIC, 8, 0): 193,
    (DYNAMIC, 2, 1): 1352, (DYNAMIC, 8, 1): 917, (DYNAMIC, 8, 0): 1539,
    (PIECES, 2, 1): 437, (PIECES, 8, 1): 266, (PIECES, 8, 0): 549,
    (TWO_OPENS, 2, 1): 444, (TWO_OPENS, 8, 1): 444, (TWO_OPENS, 8, 0): 457,
}


@pytest.mark.parametrize("layout, size, batched", sorted(STATES))
def test_every_property_holds_with_pinned_state_counts(layout, size, batched):
    e = explore(VmaUnlinkBatch(layout=layout, size=size, batched=batched))
    assert e.complete
    assert set(e.verdicts.values()) == {"holds"}, {k: v for k, v in e.verdicts.items() if v != "holds"}
    assert e.states == STATES[layout, size, batched]


def test_groups_split_at_a_pmd_gap_and_around_hugetlb():
    assert groups(LAYOUTS[STATIC]) == [[0, 1, 2, 3, 4], [5]]
    assert groups(LAYOUTS[DYNAMIC]) == [[0, 1, 2, 3, 4], list(range(5, 16)), [16]]
    assert groups(LAYOUTS[PIECES]) == [list(range(10)), [10]]
    assert groups(LAYOUTS[TWO_OPENS]) == [[0, 1, 2, 3, 4], [5], [6, 7]]


@pytest.mark.parametrize("layout, size, batched, unbatched", [
    (STATIC, 8, 1, 4), (STATIC, 2, 2, 4),
    # seed 004's doexec case: libc's and ld.so's five vmas each take the lock once, not five times
    (DYNAMIC, 8, 3, 14), (DYNAMIC, 2, 8, 14),
    (PIECES, 8, 3, 10), (PIECES, 2, 6, 10),
    # two struct files of one inode batch separately; the hugetlbfs vma is unlinked unbatched
    (TWO_OPENS, 8, 5, 7), (TWO_OPENS, 1, 7, 7),
])
def test_closed_formula_against_the_unbatched_loop(layout, size, batched, unbatched):
    assert expected_write_locks(LAYOUTS[layout], size) == batched
    assert unbatched_reference(LAYOUTS[layout])["locks"] == unbatched


def _run_to_the_end(spec):
    """With no walker free_pgtables is deterministic: follow the one successor to the end."""
    m = Model(spec)
    s = m.initial_states()[0]
    steps = 0
    while True:
        succ = m.successors(s)
        if not succ:
            assert m.is_terminal(s)
            return m, s, steps
        assert len(succ) == 1
        s = succ[0][1]
        steps += 1


@pytest.mark.parametrize("layout", range(len(LAYOUTS)))
@pytest.mark.parametrize("size", [1, 2, 8])
def test_final_state_is_the_unbatched_loops_and_locks_follow_the_formula(layout, size):
    m1, batched, _ = _run_to_the_end(VmaUnlinkBatch(layout=layout, size=size, batched=1, walkers=0))
    m0, unbatched, _ = _run_to_the_end(VmaUnlinkBatch(layout=layout, size=size, batched=0, walkers=0))
    kernel_visible = [n for n in m1.var_names if n in ("linked", "removed", "writable") or n.startswith("heap_")]
    assert {n: batched[m1.index[n]] for n in kernel_visible} == {n: unbatched[m0.index[n]] for n in kernel_visible}
    assert batched.write_locks == expected_write_locks(LAYOUTS[layout], size)
    assert unbatched.write_locks == sum(1 for v in LAYOUTS[layout].vmas if v.file)


def test_the_kernel_array_size_fills_and_flushes_a_batch_of_eight():
    e = explore(VmaUnlinkBatch(layout=PIECES, size=8))
    full = e.outcomes["a_full_batch_forms"].trace
    # setup, top, then eight adds with the seven loop steps between them
    assert len(full) == 2 + 8 + 7 and full[-1].changes["vb_count"] == 8
    flushed = e.outcomes["a_full_batch_is_flushed"].trace
    assert flushed[-2].changes["task_vma[0]"] == 8  # the ninth piece: unlink_file_vma_batch_add() flushes
    assert flushed[-1].changes == point("flush_lock")


def test_two_walkers_keep_every_property():
    e = explore(VmaUnlinkBatch(layout=DYNAMIC, size=8, walkers=2))
    assert set(e.verdicts.values()) == {"holds"} and e.states == 5672


# -- bug specs ---------------------------------------------------------------------------------

def test_forgotten_final_frees_page_tables_under_a_linked_vma_and_a_walker_touches_them():
    e = explore(UnlinkBatchNoFinal(layout=STATIC, size=2))
    reach = e.outcomes["nothing_freed_while_reachable"].trace
    assert len(reach) == 19
    assert reach[-2].changes == point("free_pgd")  # from where _final was, with the batch still in it
    assert reach[-1].changes["heap_pgt0"] == 2  # freed
    uaf = e.outcomes["memory_safe"].trace
    assert len(uaf) == 21
    assert uaf[-2].changes["heap_pgt0"] == 2 and uaf[-1].action == "rmap_walk"  # the walker locked before
    assert uaf[-1].changes["heap_error"] == MEM_ERROR.use_after_free
    assert e.outcomes["removed_exactly_once"].verdict == "violated"


def test_off_by_one_full_test_overruns_the_kernels_array_of_eight():
    e = explore(UnlinkBatchFullGt(layout=PIECES))  # size 8 at this layout
    assert e.outcomes["batch_within_array"].verdict == "violated"
    t = e.outcomes["batch_within_array"].trace
    assert len(t) == 2 + 9 + 8 and t[-1].changes["vb_count"] == 9 and t[-1].changes["vb_vmas[8]"] == 8
    assert e.outcomes["write_locks_match_formula"].verdict == "violated"
    assert e.outcomes["memory_safe"].verdict == "holds"  # the removals all happen: only the bound breaks


def test_flush_only_when_full_removes_ld_so_vmas_under_libcs_lock():
    e = explore(UnlinkBatchNoFileCheck())
    t = e.outcomes["removed_under_own_write_lock"].trace
    assert len(t) == 47
    assert t[-1].changes["unlocked_removal"] == 1 and t[-1].changes["removed[11]"] == 1
    assert t[-1].changes["linked[11]"] == 0  # ld.so's first vma, removed under libc's lock
    # at ARRAY_SIZE 8 the lock count coincides with the merged code's; at 2 it does not
    assert e.outcomes["write_locks_match_formula"].verdict == "holds"
    assert explore(UnlinkBatchNoFileCheck(size=2)).outcomes["write_locks_match_formula"].verdict == "violated"


def test_free_before_final_lets_a_walker_into_freed_page_tables():
    e = explore(UnlinkBatchFreeBeforeFinal(size=8))
    t = e.outcomes["memory_safe"].trace
    assert len(t) == 15  # setup, top, four exe vmas and the heap added, _final frees, a walker walks
    # _final's step frees the page tables on its way to the lock, and a walker that locked before walks them
    assert t[-2].changes["heap_pgt0"] == 2 and point("final_lock").items() <= t[-2].changes.items()
    assert t[-1].action == "rmap_walk"
    assert e.outcomes["removed_exactly_once"].verdict == "holds"


def test_batching_by_mapping_is_safe_but_breaks_the_lock_count():
    e = explore(UnlinkBatchByMapping(size=8))
    bad = {k for k, v in e.verdicts.items() if v == "violated"}
    assert bad == {"write_locks_match_formula", "a_batch_is_flushed_by_a_file_change"}
    assert len(e.outcomes["write_locks_match_formula"].trace) == 36  # to the end of free_pgtables


@pytest.mark.parametrize("layout", range(len(LAYOUTS)))
@pytest.mark.parametrize("size", [2, 8])
def test_equivalent_mutant_is_not_reported_and_reaches_the_same_states(layout, size):
    base = explore(VmaUnlinkBatch(layout=layout, size=size))
    mutant = explore(UnlinkBatchCompareLast(layout=layout, size=size))
    assert set(mutant.verdicts.values()) == {"holds"}
    assert mutant.states == base.states and mutant.transitions == base.transitions
