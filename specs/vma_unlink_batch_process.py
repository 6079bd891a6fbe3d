# SPDX-License-Identifier: GPL-2.0-only
"""Batched ``unlink_file_vma`` in ``free_pgtables`` (seed 004), written as the kernel functions.

The process-function port of ``vma_unlink_batch`` (its docstring describes the model; the equality test is
tests/test_process_vma.py): mm/memory.c ``free_pgtables()`` with mm/mmap.c ``unlink_file_vma_batch_init()``,
``_add()``, ``_process()`` and ``_final()`` as merged from seed 004 (``batched=1``), the loop before it calling
``unlink_file_vma()`` per vma (``batched=0``), and ``exit_mmap()``'s ``remove_vma()`` loop, as one function of
the task each; ``rmap_walk_file()`` on the walker CPUs. The helper calls of the C are written out where they are
called (a process function's steps are never hidden in a helper): ``unlink_file_vma_batch_process()`` twice,
from ``_add()`` and from ``_final()``. The layouts, the heap and the helpers of values are ``vma_unlink_batch``'s.
Each ``with k.atomic()`` block is one step of the hand-written spec; ``k.update(helper(s))`` writes the updates
a plain helper computes (the vma's removal, a free).

Not ported: ``forever=1`` (the liveness sweep): the generated steps outside a lock carry no fairness.
"""
from __future__ import annotations

import inspect
from functools import lru_cache

from checker import (And, Array, Bool, Ghost, If, Implies, Or, Param, PerCpu, Role, Select, Shared, Spec, action, invariant,
                     sometimes, terminal, when)
from checker.kernel.memory import MEM, MEM_ERROR
from checker.language.process import at, process
from checker.specs.vma_unlink_batch import (HEAP, LAYOUTS, MAXV, WALK, _file_change_in_group, _file_of, _files,
                                    _free, _free_pgt, _huge_of, _far_of, _layout, _map_of, _pgt_mem, _remove,
                                    _run_at_least, _set, _tables, _vma_mem, _writable_init, expected_write_locks)

BATCHED, UNBATCHED = "free_pgtables", "free_pgtables_unbatched"
DONE = 1  # the generated pc's values: idle 0, done 1, then the control points


def _setup(s) -> dict:
    """The mmap()s before exit: every vma and its page tables allocated, every file vma in its i_mmap."""
    lay = _layout(s)
    return {"linked": {v: 1 if x.file else 0 for v, x in enumerate(lay.vmas)}, **_tables(s.layout)["setup"]}


def _append(s, vma) -> dict:
    """vb->vmas[vb->count] = vma; vb->count++; (vmas[ARRAY_SIZE] lands in the next word of the stack frame,
    kept as one more element; a store further is only recorded, the ghost vb_overrun)."""
    return {"vb_vmas": {j: If(s.vb_count == j, vma, s.vb_vmas[j]) for j in range(s.vb_words)},
            "vb_count": s.vb_count + 1, "vb_overrun": If(s.vb_count < s.vb_words, s.vb_overrun, 1)}


@lru_cache(maxsize=None)
def _mark(fn: str, tag: str) -> int:
    """The line (counted from the def, as ``at()`` takes it) of the statement marked ``# [tag]`` in ``fn``."""
    lines = inspect.getsource(VmaUnlinkBatchProcess.__dict__[fn]).splitlines()
    d = next(i for i, ln in enumerate(lines) if ln.lstrip().startswith("def "))
    return next(i - d + 1 for i, ln in enumerate(lines) if ln.rstrip().endswith(f"[{tag}]"))


def _at(s, fn: str, tag: str):
    return at(s, s.task[0], fn, _mark(fn, tag))


def _freed_pgtables(s):
    """free_pgtables() has returned: exit_mmap() is in its remove_vma() loop, or done."""
    fn = BATCHED if s.batched else UNBATCHED
    return Or(_at(s, fn, "remove_vma"), s.task_pc[s.task[0]] == DONE)


class VmaUnlinkBatchProcess(Spec, on_demand=True):
    """free_pgtables() with unlink_file_vma_batch_{init,add,process,final} (seed 004), rmap walkers: as code."""

    kernel = ("mm/mmap.c unlink_file_vma_batch_init/_add/_process/_final as merged from seed 004 "
              "(\"mm: batch unlink_file_vma calls in free_pgd_range\", 2024), mm/memory.c free_pgtables() of "
              "that merge, exit_mmap()'s remove_vma() loop; with batched=0 the free_pgtables() before it "
              "(unlink_file_vma per vma); rmap_walk_file() as the concurrent reader of i_mmap")
    assumptions = (
        "those of vma_unlink_batch (layouts are fixed families; i_mmap_rwsem is a reader count and a writer "
        "flag; an rmap walk is three steps; __remove_shared_vm_struct() is one step under the write lock; the "
        "mm's vmas and page tables exist at the start)",
    )
    explore_sweeps = ({},)

    layout = Param(1, domain=range(len(LAYOUTS)), explore=range(len(LAYOUTS)),
                   doc="; ".join(f"{i}: {x.name}" for i, x in enumerate(LAYOUTS)))
    size = Param(8, domain=range(1, 17), explore=(2, 8), doc="ARRAY_SIZE(vb->vmas) (8 in the kernel)")
    batched = Param(1, domain=(0, 1), doc="1: seed 004's batch; 0: unlink_file_vma per vma (the code before)")
    walkers = Param(1, domain=range(0, 3), doc="CPUs running one rmap_walk_file each")
    nvmas = Param(lambda p: len(LAYOUTS[p.layout].vmas), domain=range(1, MAXV + 1), doc="vmas of the layout")
    nmaps = Param(lambda p: LAYOUTS[p.layout].nmaps, domain=range(1, 8), doc="address_spaces of the layout")
    vb_words = Param(lambda p: p.size + 1, domain=range(2, 18),
                     doc="vb.vmas[] plus the next word of free_pgtables' stack frame (where vmas[ARRAY_SIZE] lands)")

    task = Role(1, doc="the CPU running exit_mmap: free_pgtables, then remove_vma")
    walker = Role("walkers", symmetric=True, doc="CPUs in rmap_walk_file (folio_referenced, try_to_unmap, ...)")

    heap = HEAP

    vb_count = Shared(0, doc="vb.count")
    vb_vmas = Array("vb_words", -1, doc="vb.vmas[] and the stack word after it: vma indexes (-1: never "
                                        "written); not cleared by _init")
    vb_overrun = Ghost(0, type=Bool, doc="a store to vb.vmas[] went past the stack word after the array")
    wlocked = Array("nmaps", 0, type=Bool, doc="mapping->i_mmap_rwsem held for write")
    handoff = Shared(0, type=Bool, doc="RWSEM_FLAG_HANDOFF (never set here: forever=1 is not ported)")
    readers = Array("nmaps", 0, doc="mapping->i_mmap_rwsem readers")
    writable = Array("nmaps", _writable_init, doc="mapping->i_mmap_writable")
    linked = Array("nvmas", 0, type=Bool, doc="the vma is in its mapping's i_mmap tree")
    removed = Array("nvmas", 0, doc="ghost: __remove_shared_vm_struct calls on this vma")
    unlocked_removal = Ghost(0, type=Bool, doc="a removal ran without its own mapping's write lock")
    write_locks = Ghost(0, doc="i_mmap_lock_write acquisitions by free_pgtables")

    wpc = PerCpu(WALK.idle, type=WALK, role="walker")
    wmap = PerCpu(0, role="walker", doc="the mapping the walker reads")
    saw = PerCpu(0, role="walker", doc="ghost: vmas the walk found")

    @process(role="task", applies=lambda p: p.batched == 1)
    def free_pgtables(k, s, cpu):
        """exit_mmap(): free_pgtables(), then the remove_vma() loop; seed 004::

            do {
                    unsigned long addr = vma->vm_start;
                    struct vm_area_struct *next;
                    next = mas_find(mas, ceiling - 1);
                    vma_start_write(vma);
                    unlink_anon_vmas(vma);
                    if (is_vm_hugetlb_page(vma)) {
                            unlink_file_vma(vma);
                            hugetlb_free_pgd_range(tlb, addr, vma->vm_end, floor, next ? next->vm_start : ceiling);
                    } else {
                            unlink_file_vma_batch_init(&vb);
                            unlink_file_vma_batch_add(&vb, vma);
                            while (next && next->vm_start <= vma->vm_end + PMD_SIZE
                                   && !is_vm_hugetlb_page(next)) {
                                    vma = next;
                                    next = mas_find(mas, ceiling - 1);
                                    vma_start_write(vma);
                                    unlink_anon_vmas(vma);
                                    unlink_file_vma_batch_add(&vb, vma);
                            }
                            unlink_file_vma_batch_final(&vb);
                            free_pgd_range(tlb, addr, vma->vm_end, floor, next ? next->vm_start : ceiling);
                    }
                    vma = next;
            } while (vma);

        with unlink_file_vma_batch_add()::

            if (vma->vm_file == NULL)
                    return;
            if ((vb->count > 0 && vb->vmas[0]->vm_file != vma->vm_file) ||
                vb->count == ARRAY_SIZE(vb->vmas))
                    unlink_file_vma_batch_process(vb);
            vb->vmas[vb->count] = vma;
            vb->count++;

        unlink_file_vma_batch_process()::

            mapping = vb->vmas[0]->vm_file->f_mapping;
            i_mmap_lock_write(mapping);
            for (i = 0; i < vb->count; i++) {
                    VM_WARN_ON_ONCE(vb->vmas[i]->vm_file->f_mapping != mapping);
                    __remove_shared_vm_struct(vb->vmas[i], mapping);
            }
            i_mmap_unlock_write(mapping);
            unlink_file_vma_batch_init(vb);

        and unlink_file_vma_batch_final(): ``if (vb->count > 0) unlink_file_vma_batch_process(vb);``
        """
        with k.atomic():  # the mm as its mmap()s left it
            k.update(_setup(s))
        vma = 0
        while True:  # [top]
            with k.atomic():  # addr = vma->vm_start; next = mas_find(); unlink_anon_vmas(vma)
                addr = vma
                huge = _huge_of(s, vma) == 1
                if not huge:
                    s.vb_count = 0  # unlink_file_vma_batch_init(&vb)
            if huge:
                with k.atomic():  # unlink_file_vma(vma): if (file) i_mmap_lock_write(mapping)  [huge_lock]
                    m = _map_of(s, vma)
                    if _file_of(s, vma) != 0:
                        k.assume(s.wlocked[m] == 0 and s.readers[m] == 0)
                        s.wlocked[m] = 1
                        s.write_locks += 1
                if _file_of(s, vma) != 0:
                    with k.atomic():  # __remove_shared_vm_struct(vma, mapping)
                        k.update(_remove(s, vma, m))
                    with k.atomic():  # i_mmap_unlock_write(mapping)
                        s.wlocked[m] = 0
                with k.atomic():  # hugetlb_free_pgd_range(tlb, addr, ...); vma = next
                    k.update(_free_pgt(s, addr))
                    more = vma + 1 < s.nvmas
                    vma = vma + 1 if more else 0
            else:
                while True:
                    with k.atomic():  # unlink_file_vma_batch_add(&vb, vma)
                        file = _file_of(s, vma)
                        flush = file != 0 and ((s.vb_count > 0 and _file_of(s, s.vb_vmas[0]) != file)
                                               or s.vb_count == s.size)
                        if file != 0 and not flush:
                            k.update(_append(s, vma))
                    if flush:
                        with k.atomic():  # _process: i_mmap_lock_write(mapping)  [flush_lock]
                            m = _map_of(s, s.vb_vmas[0])
                            k.assume(s.wlocked[m] == 0 and s.readers[m] == 0)
                            s.wlocked[m] = 1
                            s.write_locks += 1
                            i = 0
                        while i < s.vb_count:
                            with k.atomic():  # __remove_shared_vm_struct(vb->vmas[i], mapping)
                                k.update(_remove(s, s.vb_vmas[i], m))
                                i += 1
                        with k.atomic():  # i_mmap_unlock_write(mapping); unlink_file_vma_batch_init(vb)
                            s.wlocked[m] = 0
                            s.vb_count = 0
                        with k.atomic():  # vb->vmas[vb->count] = vma; vb->count++;
                            k.update(_append(s, vma))
                    with k.atomic():  # while (next && next->vm_start <= vma->vm_end + PMD_SIZE && !huge(next))
                        more = vma + 1 < s.nvmas and _far_of(s, vma + 1) == 0 and _huge_of(s, vma + 1) == 0
                        vma = vma + 1 if more else vma
                    if not more:
                        break
                with k.atomic():  # unlink_file_vma_batch_final(&vb)
                    final = s.vb_count > 0
                if final:
                    with k.atomic():  # _process: i_mmap_lock_write(mapping)  [final_lock]
                        m = _map_of(s, s.vb_vmas[0])
                        k.assume(s.wlocked[m] == 0 and s.readers[m] == 0)
                        s.wlocked[m] = 1
                        s.write_locks += 1
                        i = 0
                    while i < s.vb_count:
                        with k.atomic():  # __remove_shared_vm_struct(vb->vmas[i], mapping)
                            k.update(_remove(s, s.vb_vmas[i], m))
                            i += 1
                    with k.atomic():  # i_mmap_unlock_write(mapping); unlink_file_vma_batch_init(vb)
                        s.wlocked[m] = 0
                        s.vb_count = 0
                with k.atomic():  # free_pgd_range(tlb, addr, vma->vm_end, ...); vma = next
                    k.update(_free_pgt(s, addr))
                    more = vma + 1 < s.nvmas
                    vma = vma + 1 if more else 0
            if not more:
                break
        while True:  # [remove_vma]
            with k.atomic():  # exit_mmap(): remove_vma(vma): vm_area_free(vma); vma = mas_find()
                k.update(_free(s, _tables(s.layout)["vma_var"], vma))
                more = vma + 1 < s.nvmas
                vma = vma + 1 if more else vma
            if not more:
                return

    @process(role="task", applies=lambda p: p.batched == 0)
    def free_pgtables_unbatched(k, s, cpu):
        """exit_mmap(): free_pgtables() before seed 004, then the remove_vma() loop::

            do {
                    unsigned long addr = vma->vm_start;
                    struct vm_area_struct *next;
                    next = mas_find(mas, ceiling - 1);
                    unlink_anon_vmas(vma);
                    unlink_file_vma(vma);
                    if (is_vm_hugetlb_page(vma)) {
                            hugetlb_free_pgd_range(tlb, addr, vma->vm_end, floor, next ? next->vm_start : ceiling);
                    } else {
                            while (next && next->vm_start <= vma->vm_end + PMD_SIZE
                                   && !is_vm_hugetlb_page(next)) {
                                    vma = next;
                                    next = mas_find(mas, ceiling - 1);
                                    unlink_anon_vmas(vma);
                                    unlink_file_vma(vma);
                            }
                            free_pgd_range(tlb, addr, vma->vm_end, floor, next ? next->vm_start : ceiling);
                    }
                    vma = next;
            } while (vma);

        with unlink_file_vma()::

            struct file *file = vma->vm_file;
            if (file) {
                    struct address_space *mapping = file->f_mapping;
                    i_mmap_lock_write(mapping);
                    __remove_shared_vm_struct(vma, file, mapping);
                    i_mmap_unlock_write(mapping);
            }
        """
        with k.atomic():  # the mm as its mmap()s left it
            k.update(_setup(s))
        vma = 0
        while True:
            with k.atomic():  # addr = vma->vm_start; next = mas_find(); unlink_anon_vmas(vma)
                addr = vma
                huge = _huge_of(s, vma)
            while True:  # [lock]
                with k.atomic():  # unlink_file_vma(vma): if (file) i_mmap_lock_write(mapping)
                    m = _map_of(s, vma)
                    if _file_of(s, vma) != 0:
                        k.assume(s.wlocked[m] == 0 and s.readers[m] == 0)
                        s.wlocked[m] = 1
                        s.write_locks += 1
                if _file_of(s, vma) != 0:
                    with k.atomic():  # __remove_shared_vm_struct(vma, file, mapping)
                        k.update(_remove(s, vma, m))
                    with k.atomic():  # i_mmap_unlock_write(mapping)
                        s.wlocked[m] = 0
                if huge:
                    break
                with k.atomic():  # while (next && next->vm_start <= vma->vm_end + PMD_SIZE && !huge(next))
                    more = vma + 1 < s.nvmas and _far_of(s, vma + 1) == 0 and _huge_of(s, vma + 1) == 0
                    vma = vma + 1 if more else vma
                if not more:
                    break
            with k.atomic():  # (hugetlb_)free_pgd_range(tlb, addr, vma->vm_end, ...); vma = next
                k.update(_free_pgt(s, addr))
                more = vma + 1 < s.nvmas
                vma = vma + 1 if more else 0
            if not more:
                break
        while True:  # [remove_vma]
            with k.atomic():  # exit_mmap(): remove_vma(vma): vm_area_free(vma); vma = mas_find()
                k.update(_free(s, _tables(s.layout)["vma_var"], vma))
                more = vma + 1 < s.nvmas
                vma = vma + 1 if more else vma
            if not more:
                return

    # -- rmap_walk_file() on other CPUs (vma_unlink_batch's actions) ---------------------------
    @action(role="walker", choose={"m": lambda p: range(p.nmaps)})
    def rmap_lock(s, cpu, m):
        """rmap_walk_file(): i_mmap_lock_read(mapping)  (down_read: waits while a writer holds it)."""
        return when(And(s.task_pc[s.task[0]] != 0, s.wpc[cpu] == WALK.idle, Select(s.wlocked, m) == 0,
                        s.handoff == 0), wpc={cpu: WALK.locked}, wmap={cpu: m},
                    readers=_set(s, "nmaps", m, Select(s.readers, m) + 1, s.readers))

    @action(role="walker", fair="weak")
    def rmap_walk(s, cpu):
        """rmap_walk_file(): vma_interval_tree_foreach(vma, &mapping->i_mmap, ...) rwc->rmap_one(folio, vma,
        ...): reads each vma found and walks its page tables (page_vma_mapped_walk)."""
        lay = _layout(s)
        found = [And(s.linked[v] == 1, s.wmap[cpu] == lay.mapping[x.file]) if x.file else False
                 for v, x in enumerate(lay.vmas)]
        err = HEAP.error_var
        e = getattr(s, err)
        for v in range(len(lay.vmas)):
            bad = Or(_vma_mem(s, v) != MEM.live, _pgt_mem(s, v) != MEM.live)
            e = If(And(e == MEM_ERROR.none, found[v], bad), MEM_ERROR.use_after_free, e)
        return when(s.wpc[cpu] == WALK.locked, wpc={cpu: WALK.walked},
                    saw={cpu: sum(If(f, 1, 0) for f in found)}, **{err: e})

    @action(role="walker", fair="weak")
    def rmap_unlock(s, cpu):
        """rmap_walk_file(): i_mmap_unlock_read(mapping);"""
        m = s.wmap[cpu]
        return when(s.wpc[cpu] == WALK.walked, wpc={cpu: WALK.done},
                    readers=_set(s, "nmaps", m, Select(s.readers, m) - 1, s.readers))

    @terminal
    def finished(s):
        """exit_mmap() has returned and every walk is done."""
        return And(s.task_pc[s.task[0]] == DONE, *[s.wpc[c] == WALK.done for c in s.walker])

    # -- properties (vma_unlink_batch's, with control points for its pc) ----------------------
    @invariant
    def removed_exactly_once(s):
        """UB-ONCE: no vma is removed from a mapping twice, an anonymous one never; when free_pgtables
        is done, every file-backed vma has been removed exactly once."""
        done = _freed_pgtables(s)
        return And(*[And(s.removed[v] <= (1 if f else 0), Implies(And(done, f != 0), s.removed[v] == 1))
                     for v, f in enumerate(_files(s))])

    @invariant
    def removed_under_own_write_lock(s):
        """UB-LOCK: every __remove_shared_vm_struct(vma) runs while free_pgtables holds
        vma->vm_file->f_mapping->i_mmap_rwsem for write."""
        return s.unlocked_removal == 0

    @invariant
    def removed_before_free_pgd_range(s):
        """Each file-backed vma is removed from its mapping before its group's page tables are freed."""
        return And(*[Implies(_pgt_mem(s, v) == MEM.freed, s.removed[v] >= 1)
                     for v, x in enumerate(_layout(s).vmas) if x.file])

    @invariant
    def nothing_freed_while_reachable(s):
        """A vma an rmap walker can find (in its mapping's i_mmap) and the page tables under it are live."""
        return And(*[Implies(s.linked[v] == 1, And(_vma_mem(s, v) == MEM.live, _pgt_mem(s, v) == MEM.live))
                     for v in range(len(_layout(s).vmas))])

    @invariant
    def batch_within_array(s):
        """UB-BOUND: 0 <= vb.count <= ARRAY_SIZE(vb.vmas): no store, and no read, past the array."""
        return And(s.vb_count >= 0, s.vb_count <= s.size, s.vb_overrun == 0)

    @invariant
    def final_state_equals_unbatched(s):
        """When free_pgtables is done: which vmas are linked, how often each was removed, and every
        mapping's i_mmap_writable are those of the unbatched loop (unbatched_reference)."""
        ref = _tables(s.layout)["reference"]
        same = And(*[s.linked[v] == x for v, x in enumerate(ref["linked"])],
                   *[s.removed[v] == x for v, x in enumerate(ref["removed"])],
                   *[s.writable[m] == x for m, x in enumerate(ref["writable"])])
        return Implies(_freed_pgtables(s), same)

    @invariant
    def write_locks_match_formula(s):
        """UB-COUNT: when free_pgtables is done, i_mmap_lock_write was taken as the closed formula says
        (batched=0: once per file vma)."""
        want = expected_write_locks(_layout(s), s.size) if s.batched else _tables(s.layout)["reference"]["locks"]
        return Implies(_freed_pgtables(s), s.write_locks == want)

    @sometimes(applies=lambda p: p.batched == 1 and _run_at_least(LAYOUTS[p.layout], p.size))
    def a_full_batch_forms(s):
        """vb.count reaches ARRAY_SIZE(vb.vmas)."""
        return s.vb_count == s.size

    @sometimes(applies=lambda p: p.batched == 1 and _run_at_least(LAYOUTS[p.layout], p.size + 1))
    def a_full_batch_is_flushed(s):
        """unlink_file_vma_batch_add() flushes a full batch of the vma's own file."""
        vma = s.task_vma[s.task[0]]
        return And(_at(s, BATCHED, "flush_lock"), s.vb_count == s.size,
                   _file_of(s, Select(s.vb_vmas, 0)) == _file_of(s, vma))

    @sometimes(applies=lambda p: p.batched == 1 and _file_change_in_group(LAYOUTS[p.layout]))
    def a_batch_is_flushed_by_a_file_change(s):
        """unlink_file_vma_batch_add() flushes a batch that is not full: the vma's vm_file differs."""
        vma = s.task_vma[s.task[0]]
        return And(_at(s, BATCHED, "flush_lock"), s.vb_count < s.size,
                   _file_of(s, Select(s.vb_vmas, 0)) != _file_of(s, vma))

    @sometimes(applies=lambda p: p.walkers > 0)
    def a_walker_finds_a_vma(s):
        """An rmap walk finds vmas in the tree (the walker is not vacuous)."""
        return Or(*[s.saw[c] > 0 for c in s.walker])

    @sometimes(applies=lambda p: p.walkers > 0)
    def the_writer_waits_for_a_walker(s):
        """free_pgtables wants i_mmap_rwsem for write while a walker holds it for read."""
        vma = s.task_vma[s.task[0]]
        if s.batched:
            batch = Or(_at(s, BATCHED, "flush_lock"), _at(s, BATCHED, "final_lock"))
            single = _at(s, BATCHED, "huge_lock")
        else:
            batch, single = False, _at(s, UNBATCHED, "lock")
        m = If(batch, _map_of(s, Select(s.vb_vmas, 0)), _map_of(s, vma))
        return And(Or(batch, single), m >= 0, Select(s.readers, m) > 0)
