# SPDX-License-Identifier: GPL-2.0-only
"""vma_unlink_batch as the hand-written pc machine it was before its process-function port replaced it.

Kept as a test (issue 28): tests/test_process_vma.py explores it and the built-in ``vma_unlink_batch``
(specs/vma_unlink_batch.py, the kernel functions written as process functions) at the same points and asserts
the same distinct states, transitions, depth, verdicts and shortest-trace lengths. One action per atomic step
of free_pgtables(), with its own program counter (``PC``) and return register (``ret``) for the two callers of
unlink_file_vma_batch_process(); the layouts, the heap and the helpers of values are the spec's.
"""
from __future__ import annotations

from checker import (And, Array, Bool, Enum, Ghost, If, Implies, Not, Or, Param, PerCpu, Role, Select, Shared,
                     Spec, action, invariant, leads_to, sometimes, terminal, when)
from checker.kernel.memory import MEM, MEM_ERROR
from checker.specs.vma_unlink_batch import (HEAP, LAYOUTS, MAXV, WALK, _far_of, _file_change_in_group, _file_of,
                                            _files, _free, _free_pgt, _huge_of, _layout, _map_of, _pgt_mem, _remove,
                                            _run_at_least, _set, _tables, _vma_mem, _writable_init,
                                            expected_write_locks)

PC = Enum("setup", "top", "add", "append", "loop", "final", "lock", "remove", "unlock", "free_pgd",
          "unlink_file", "unlink_remove", "unlink_unlock", "hugetlb_free", "remove_vma", "done", name="pc")


class VmaUnlinkBatch(Spec):
    """free_pgtables() with unlink_file_vma_batch_{init,add,process,final} (seed 004), rmap walkers."""

    kernel = ("mm/mmap.c unlink_file_vma_batch_init/_add/_process/_final as merged from seed 004 "
              "(\"mm: batch unlink_file_vma calls in free_pgd_range\", 2024), mm/memory.c free_pgtables() of "
              "that merge, exit_mmap()'s remove_vma() loop; with batched=0 the free_pgtables() before it "
              "(unlink_file_vma per vma); rmap_walk_file() as the concurrent reader of i_mmap")
    assumptions = (
        "layouts are fixed families (the layout parameter), not all sequences: a static binary, a dynamically "
        "linked one (exe, libc, ld.so), one file in nine pieces, two struct files of one inode around a "
        "hugetlbfs vma; the walk is exhaustive over interleavings with the walkers at each",
        "mas_find() returns the next vma of the layout; XA_ZERO_ENTRY (a failed dup_mmap) is not modelled",
        "vma_start_write() and unlink_anon_vmas() are part of the loop's steps and not modelled further: "
        "no anon_vma walker is modelled (only i_mmap, the tree this batching changes)",
        "the page tables freed by one free_pgd_range() are one object per group (floor/ceiling trimming, "
        "which keeps tables shared with a neighbouring group, is not modelled)",
        "i_mmap_rwsem is a reader count and a writer flag; writer-preference and handoff (fairness) are not "
        "modelled, they do not change which states are safe",
        "an rmap walk is three steps (read lock, the whole vma_interval_tree_foreach, read unlock): under the "
        "read lock the tree cannot change, so a walk split per vma finds no use after free that the single "
        "step at the later point does not also find",
        "__remove_shared_vm_struct() is one step under the write lock (mapping_unmap_writable, "
        "flush_dcache_mmap_lock, vma_interval_tree_remove, unlock)",
        "the mm's vmas and page tables exist at the start (one setup step allocates them and links each file "
        "vma into its mapping's i_mmap)",
    )

    layout = Param(1, domain=range(len(LAYOUTS)), explore=range(len(LAYOUTS)),
                   doc="; ".join(f"{i}: {x.name}" for i, x in enumerate(LAYOUTS)))
    size = Param(8, domain=range(1, 17), explore=(2, 8), doc="ARRAY_SIZE(vb->vmas) (8 in the kernel)")
    batched = Param(1, domain=(0, 1), doc="1: seed 004's batch; 0: unlink_file_vma per vma (the code before)")
    walkers = Param(1, domain=range(0, 3), doc="CPUs running one rmap_walk_file each")
    forever = Param(0, domain=(0, 1), doc="1: for liveness, each walker runs rmap_walk_file again and again")
    nvmas = Param(lambda p: len(LAYOUTS[p.layout].vmas), domain=range(1, MAXV + 1), doc="vmas of the layout")
    nmaps = Param(lambda p: LAYOUTS[p.layout].nmaps, domain=range(1, 8), doc="address_spaces of the layout")
    vb_words = Param(lambda p: p.size + 1, domain=range(2, 18),
                     doc="vb.vmas[] plus the next word of free_pgtables' stack frame (where vmas[ARRAY_SIZE] lands)")

    # The default run, and walkers that never stop (liveness) on the layout with both lock paths.
    explore_sweeps = ({}, {"forever": 1, "layout": 3, "size": 2})

    task = Role(1, doc="the CPU running exit_mmap: free_pgtables, then remove_vma")
    walker = Role("walkers", symmetric=True, doc="CPUs in rmap_walk_file (folio_referenced, try_to_unmap, ...)")

    heap = HEAP

    pc = Shared(PC.setup, type=PC, doc="where free_pgtables is")
    vma = Shared(0, doc="free_pgtables' vma (an index into the layout)")
    addr = Shared(0, doc="free_pgtables' addr: the first vma of the group (its vm_start)")
    ret = Shared(PC.done, type=PC, doc="where unlink_file_vma_batch_process / unlink_file_vma return to")
    vb_count = Shared(0, doc="vb.count")
    vb_vmas = Array("vb_words", -1, doc="vb.vmas[] and the stack word after it: vma indexes (-1: never "
                                        "written); not cleared by _init")
    vb_overrun = Ghost(0, type=Bool, doc="a store to vb.vmas[] went past the stack word after the array")
    i = Shared(0, doc="unlink_file_vma_batch_process's i")
    mapping = Shared(-1, doc="the mapping process() / unlink_file_vma() locked")

    wlocked = Array("nmaps", 0, type=Bool, doc="mapping->i_mmap_rwsem held for write")
    handoff = Shared(0, type=Bool, doc="RWSEM_FLAG_HANDOFF set by free_pgtables' waiting down_write (forever=1 only)")
    readers = Array("nmaps", 0, doc="mapping->i_mmap_rwsem readers")
    writable = Array("nmaps", _writable_init, doc="mapping->i_mmap_writable")
    linked = Array("nvmas", 0, type=Bool, doc="the vma is in its mapping's i_mmap tree")

    removed = Array("nvmas", 0, doc="ghost: __remove_shared_vm_struct calls on this vma")
    unlocked_removal = Ghost(0, type=Bool, doc="a removal ran without its own mapping's write lock")
    write_locks = Ghost(0, doc="i_mmap_lock_write acquisitions by free_pgtables")

    wpc = PerCpu(WALK.idle, type=WALK, role="walker")
    wmap = PerCpu(0, role="walker", doc="the mapping the walker reads")
    saw = PerCpu(0, role="walker", doc="ghost: vmas the walk found")

    # Fairness for liveness: the task runs on (weak). i_mmap_lock_write is strongly fair, and with
    # forever=1 a waiting writer sets the handoff bit (weakly fair: RWSEM_WAIT_TIMEOUT passes), after
    # which arriving readers queue instead of stealing the lock (kernel/locking/rwsem.c:
    # rwsem_down_write_slowpath sets RWSEM_FLAG_HANDOFF; rwsem_down_read_slowpath steals only while
    # neither RWSEM_WRITER_LOCKED nor RWSEM_FLAG_HANDOFF is set). A walker inside its walk runs on.

    # -- setup ----------------------------------------------------------------------------
    @action(role="task", fair="weak")
    def mappings_exist(s, cpu):
        """(setup) The process's mmap()s, done before exit: every vma and its page tables allocated,
        every file vma in its mapping's i_mmap (vma_link_file)."""
        lay = _layout(s)
        mem = _tables(s.layout)["setup"]
        return when(s.pc == PC.setup, pc=PC.top, linked={v: 1 if x.file else 0 for v, x in enumerate(lay.vmas)},
                    **mem)

    # -- free_pgtables() ------------------------------------------------------------------
    @action(role="task", fair="weak")
    def free_pgtables_top(s, cpu):
        """free_pgtables(): do { addr = vma->vm_start; next = mas_find(); vma_start_write(vma);
        unlink_anon_vmas(vma); then if (is_vm_hugetlb_page(vma)) unlink_file_vma(vma); else
        { unlink_file_vma_batch_init(&vb); unlink_file_vma_batch_add(&vb, vma); ...
        (batched=0: unlink_file_vma(vma) here for every vma)"""
        huge = _huge_of(s, s.vma) == 1
        if s.batched:
            return when(s.pc == PC.top, addr=s.vma,
                        pc=If(huge, PC.unlink_file, PC.add), ret=If(huge, PC.hugetlb_free, s.ret),
                        vb_count=If(huge, s.vb_count, 0))
        return when(s.pc == PC.top, addr=s.vma, pc=PC.unlink_file, ret=If(huge, PC.hugetlb_free, PC.loop))

    @action(role="task", fair="weak")
    def batch_add(s, cpu):
        """unlink_file_vma_batch_add(): if (vma->vm_file == NULL) return;
        if ((vb->count > 0 && vb->vmas[0]->vm_file != vma->vm_file) || vb->count == ARRAY_SIZE(vb->vmas))
        unlink_file_vma_batch_process(vb);  else vb->vmas[vb->count] = vma; vb->count++;"""
        anon = _file_of(s, s.vma) == 0
        flush = Or(And(s.vb_count > 0, _file_of(s, Select(s.vb_vmas, 0)) != _file_of(s, s.vma)),
                   s.vb_count == s.size)
        return when(And(s.pc == PC.add, s.batched == 1),
                    pc=If(anon, PC.loop, If(flush, PC.lock, PC.loop)),
                    ret=If(And(Not(anon), flush), PC.append, s.ret),
                    **_append(s, And(Not(anon), Not(flush))))

    @action(role="task", fair="weak")
    def batch_add_append(s, cpu):
        """unlink_file_vma_batch_add(), after the flush: vb->vmas[vb->count] = vma; vb->count++;"""
        return when(s.pc == PC.append, pc=PC.loop, **_append(s, True))

    @action(role="task", fair="weak")
    def gather_next(s, cpu):
        """free_pgtables(): while (next && next->vm_start <= vma->vm_end + PMD_SIZE &&
        !is_vm_hugetlb_page(next)) { vma = next; next = mas_find(); vma_start_write(vma);
        unlink_anon_vmas(vma); unlink_file_vma_batch_add(&vb, vma); }  (batched=0: unlink_file_vma(vma))
        -- and when the condition fails: unlink_file_vma_batch_final(&vb) (batched=0: free_pgd_range)."""
        nxt = s.vma + 1
        more = And(nxt < s.nvmas, _far_of(s, nxt) == 0, _huge_of(s, nxt) == 0)
        if s.batched:
            return when(s.pc == PC.loop, vma=If(more, nxt, s.vma), pc=If(more, PC.add, PC.final))
        return when(s.pc == PC.loop, vma=If(more, nxt, s.vma), pc=If(more, PC.unlink_file, PC.free_pgd),
                    ret=If(more, PC.loop, s.ret))

    @action(role="task", fair="weak")
    def batch_final(s, cpu):
        """unlink_file_vma_batch_final(): if (vb->count > 0) unlink_file_vma_batch_process(vb);"""
        return when(s.pc == PC.final, pc=If(s.vb_count > 0, PC.lock, PC.free_pgd),
                    ret=If(s.vb_count > 0, PC.free_pgd, s.ret))

    @action(role="task", fair="strong")
    def batch_process_lock(s, cpu):
        """unlink_file_vma_batch_process(): mapping = vb->vmas[0]->vm_file->f_mapping;
        i_mmap_lock_write(mapping)  (down_write: waits for readers and a writer)."""
        m = _map_of(s, Select(s.vb_vmas, 0))
        return when(And(s.pc == PC.lock, Select(s.wlocked, m) == 0, Select(s.readers, m) == 0),
                    wlocked=_set(s, "nmaps", m, 1, s.wlocked), mapping=m, i=0, pc=PC.remove,
                    write_locks=s.write_locks + 1, handoff=0)

    @action(role="task", fair="weak")
    def batch_process_remove(s, cpu):
        """unlink_file_vma_batch_process(): for (i = 0; i < vb->count; i++) {
        VM_WARN_ON_ONCE(vb->vmas[i]->vm_file->f_mapping != mapping);
        __remove_shared_vm_struct(vb->vmas[i], mapping); }"""
        v = Select(s.vb_vmas, s.i)
        return when(And(s.pc == PC.remove, s.i < s.vb_count), i=s.i + 1, **_remove(s, v, s.mapping))

    @action(role="task", fair="weak")
    def batch_process_unlock(s, cpu):
        """unlink_file_vma_batch_process(): i_mmap_unlock_write(mapping); unlink_file_vma_batch_init(vb)
        (vb->count = 0); return."""
        return when(And(s.pc == PC.remove, s.i >= s.vb_count),
                    wlocked=_set(s, "nmaps", s.mapping, 0, s.wlocked), vb_count=0, pc=s.ret, ret=PC.done,
                    mapping=-1)

    @action(role="task", fair="strong")
    def unlink_file_vma_lock(s, cpu):
        """unlink_file_vma(vma): if (file) { mapping = file->f_mapping; i_mmap_lock_write(mapping); ...
        (vm_file == NULL: return at once)"""
        m = _map_of(s, s.vma)
        anon = _file_of(s, s.vma) == 0
        return when(And(s.pc == PC.unlink_file, Or(anon, And(Select(s.wlocked, m) == 0, Select(s.readers, m) == 0))),
                    wlocked=_set(s, "nmaps", m, If(anon, Select(s.wlocked, m), 1), s.wlocked),
                    mapping=If(anon, s.mapping, m), pc=If(anon, s.ret, PC.unlink_remove), ret=If(anon, PC.done, s.ret),
                    write_locks=s.write_locks + If(anon, 0, 1), handoff=0)

    @action(role="task", fair="weak")
    def unlink_file_vma_remove(s, cpu):
        """unlink_file_vma(): __remove_shared_vm_struct(vma, mapping);"""
        return when(s.pc == PC.unlink_remove, pc=PC.unlink_unlock, **_remove(s, s.vma, s.mapping))

    @action(role="task", fair="weak")
    def unlink_file_vma_unlock(s, cpu):
        """unlink_file_vma(): i_mmap_unlock_write(mapping);"""
        return when(s.pc == PC.unlink_unlock, wlocked=_set(s, "nmaps", s.mapping, 0, s.wlocked), pc=s.ret,
                    ret=PC.done, mapping=-1)

    @action(role="task", fair="weak")
    def free_pgd_range(s, cpu):
        """free_pgtables(): free_pgd_range(tlb, addr, vma->vm_end, floor, next ? next->vm_start : ceiling):
        the group's page tables are freed; vma = next; } while (vma);"""
        nxt = s.vma + 1
        return when(s.pc == PC.free_pgd, vma=If(nxt < s.nvmas, nxt, 0),
                    pc=If(nxt < s.nvmas, PC.top, PC.remove_vma), **_free_pgt(s, s.addr))

    @action(role="task", fair="weak")
    def hugetlb_free_pgd_range(s, cpu):
        """free_pgtables(): hugetlb_free_pgd_range(tlb, addr, vma->vm_end, floor, ...); vma = next;"""
        nxt = s.vma + 1
        return when(s.pc == PC.hugetlb_free, vma=If(nxt < s.nvmas, nxt, 0), ret=PC.done,
                    pc=If(nxt < s.nvmas, PC.top, PC.remove_vma), **_free_pgt(s, s.addr))

    @action(role="task", fair="weak")
    def remove_vma(s, cpu):
        """exit_mmap(): do { remove_vma(vma): vma->vm_ops->close(), fput(vm_file), vm_area_free(vma);
        } while ((vma = mas_find(&vmi.mas, ULONG_MAX)));"""
        nxt = s.vma + 1
        return when(s.pc == PC.remove_vma, vma=If(nxt < s.nvmas, nxt, s.vma),
                    pc=If(nxt < s.nvmas, PC.remove_vma, PC.done), **_free(s, _tables(s.layout)["vma_var"], s.vma))

    @action(role="task", fair="weak", applies=lambda p: p.forever == 1)
    def rwsem_handoff(s, cpu):
        """rwsem_down_write_slowpath(): the first waiter has waited RWSEM_WAIT_TIMEOUT: set
        RWSEM_FLAG_HANDOFF (readers stop stealing the lock)."""
        waiting = Or(s.pc == PC.lock, And(s.pc == PC.unlink_file, _file_of(s, s.vma) != 0))
        return when(And(waiting, s.handoff == 0), handoff=1)

    # -- rmap_walk_file() on other CPUs ----------------------------------------------------
    @action(role="walker", choose={"m": lambda p: range(p.nmaps)})
    def rmap_lock(s, cpu, m):
        """rmap_walk_file(): i_mmap_lock_read(mapping)  (down_read: waits while a writer holds it)."""
        return when(And(s.pc != PC.setup, s.wpc[cpu] == WALK.idle, Select(s.wlocked, m) == 0, s.handoff == 0),
                    wpc={cpu: WALK.locked}, wmap={cpu: m}, readers=_set(s, "nmaps", m, Select(s.readers, m) + 1, s.readers))

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
        return when(s.wpc[cpu] == WALK.walked, wpc={cpu: If(s.forever == 1, WALK.idle, WALK.done)},
                    readers=_set(s, "nmaps", m, Select(s.readers, m) - 1, s.readers))

    @terminal
    def finished(s):
        return And(s.pc == PC.done, *[s.wpc[c] == WALK.done for c in s.walker])

    # -- properties ---------------------------------------------------------------------------
    @invariant
    def removed_exactly_once(s):
        """UB-ONCE: no vma is removed from a mapping twice, an anonymous one never; when free_pgtables
        is done, every file-backed vma has been removed exactly once."""
        files = _files(s)
        done = Or(s.pc == PC.remove_vma, s.pc == PC.done)
        return And(*[And(s.removed[v] <= (1 if f else 0), Implies(And(done, f != 0), s.removed[v] == 1))
                     for v, f in enumerate(files)])

    @invariant
    def removed_under_own_write_lock(s):
        """UB-LOCK: every __remove_shared_vm_struct(vma) runs while free_pgtables holds
        vma->vm_file->f_mapping->i_mmap_rwsem for write."""
        return s.unlocked_removal == 0

    @invariant
    def removed_before_free_pgd_range(s):
        """Each file-backed vma is removed from its mapping before its group's page tables are freed."""
        lay = _layout(s)
        return And(*[Implies(_pgt_mem(s, v) == MEM.freed, s.removed[v] >= 1)
                     for v, x in enumerate(lay.vmas) if x.file])

    @invariant
    def nothing_freed_while_reachable(s):
        """A vma an rmap walker can find (in its mapping's i_mmap) and the page tables under it are
        live: no vm_area_free and no free_pgd_range while it is linked."""
        lay = _layout(s)
        return And(*[Implies(s.linked[v] == 1, And(_vma_mem(s, v) == MEM.live, _pgt_mem(s, v) == MEM.live))
                     for v in range(len(lay.vmas))])

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
        return Implies(Or(s.pc == PC.remove_vma, s.pc == PC.done), same)

    @invariant
    def write_locks_match_formula(s):
        """UB-COUNT: when free_pgtables is done, i_mmap_lock_write was taken, summed over groups, the sum
        over maximal runs of one vm_file among the group's file vmas of ceil(run / ARRAY_SIZE), plus
        one per hugetlb file vma (batched=0: once per file vma)."""
        lay = _layout(s)
        want = expected_write_locks(lay, s.size) if s.batched else _tables(s.layout)["reference"]["locks"]
        return Implies(Or(s.pc == PC.remove_vma, s.pc == PC.done), s.write_locks == want)

    @sometimes(applies=lambda p: p.batched == 1 and _run_at_least(LAYOUTS[p.layout], p.size))
    def a_full_batch_forms(s):
        """vb.count reaches ARRAY_SIZE(vb.vmas)."""
        return s.vb_count == s.size

    @sometimes(applies=lambda p: p.batched == 1 and _run_at_least(LAYOUTS[p.layout], p.size + 1))
    def a_full_batch_is_flushed(s):
        """unlink_file_vma_batch_add() flushes a full batch of the vma's own file (being full is the only
        reason)."""
        return And(s.pc == PC.lock, s.ret == PC.append, s.vb_count == s.size,
                   _file_of(s, Select(s.vb_vmas, 0)) == _file_of(s, s.vma))

    @sometimes(applies=lambda p: p.batched == 1 and _file_change_in_group(LAYOUTS[p.layout]))
    def a_batch_is_flushed_by_a_file_change(s):
        """unlink_file_vma_batch_add() flushes a batch that is not full: the vma's vm_file differs from the
        batch's (the change of file is the only reason)."""
        return And(s.pc == PC.lock, s.ret == PC.append, s.vb_count < s.size,
                   _file_of(s, Select(s.vb_vmas, 0)) != _file_of(s, s.vma))

    @leads_to(applies=lambda p: p.forever == 1)
    def a_queued_batch_is_flushed(s):
        """UB-FLUSH: once unlink_file_vma_batch_add() has queued a vma (vb.count > 0), the batch is
        flushed: unlink_file_vma_batch_process() holds the mapping's i_mmap_rwsem for write and removes
        its vmas, however often rmap walkers take the lock for read."""
        return s.vb_count > 0, s.pc == PC.remove

    @sometimes(applies=lambda p: p.walkers > 0)
    def a_walker_finds_a_vma(s):
        """An rmap walk finds vmas in the tree (the walker is not vacuous)."""
        return Or(*[s.saw[c] > 0 for c in s.walker])

    @sometimes(applies=lambda p: p.walkers > 0)
    def the_writer_waits_for_a_walker(s):
        """free_pgtables wants i_mmap_rwsem for write while a walker holds it for read."""
        want = Or(s.pc == PC.lock, s.pc == PC.unlink_file)
        m = If(s.pc == PC.lock, _map_of(s, Select(s.vb_vmas, 0)), _map_of(s, s.vma))
        return And(want, m >= 0, Select(s.readers, m) > 0)


def _append(s, do):
    """vb->vmas[vb->count] = vma; vb->count++;  when ``do``. vmas[ARRAY_SIZE] lands in the next word
    of the stack frame, kept as one more element (so a later read finds it, as in C); a store even
    further is only recorded (the ghost vb_overrun)."""
    inside = s.vb_count < s.vb_words
    return {"vb_vmas": {j: If(And(do, s.vb_count == j), s.vma, s.vb_vmas[j]) for j in range(s.vb_words)},
            "vb_count": If(do, s.vb_count + 1, s.vb_count),
            "vb_overrun": If(And(do, Not(inside)), 1, s.vb_overrun)}
