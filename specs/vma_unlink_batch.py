# SPDX-License-Identifier: GPL-2.0-only
"""Batched ``unlink_file_vma`` in ``free_pgtables`` (seed 004).

mm/mmap.c ``unlink_file_vma_batch_init()``, ``unlink_file_vma_batch_add()``,
``unlink_file_vma_batch_process()`` and ``unlink_file_vma_batch_final()``
exactly as in Mateusz Guzik's "mm: batch unlink_file_vma calls in
free_pgd_range" (seed 004; Reviewed-by Liam R. Howlett, merged in 2024),
their caller mm/memory.c ``free_pgtables()`` as in that merge (reference
section 6.3), and, with ``batched=0``, the loop they replaced, which calls
``unlink_file_vma()`` (lock, ``__remove_shared_vm_struct``, unlock) once per
vma.

One task runs ``exit_mmap()``'s ``free_pgtables()`` over the mm's vmas and
then its ``remove_vma()`` loop (``vm_area_free``). ``free_pgtables`` walks
the vmas in address order and splits them into groups as the code does: a
group ends before a vma that starts more than ``PMD_SIZE`` after the
previous one ends, and before a hugetlb vma; a hugetlb vma is a group of
its own and is unlinked unbatched (``unlink_file_vma``), then
``hugetlb_free_pgd_range``. Every other group is fed vma by vma to
``unlink_file_vma_batch_add``, flushed by ``_final`` and its page tables
freed by one ``free_pgd_range``.

``i_mmap_rwsem`` is a reader/writer semaphore per ``address_space``,
modelled with plain variables: the number of readers, and whether the
writer holds it. ``i_mmap_lock_write`` waits until there is no reader and
no writer; ``i_mmap_lock_read`` waits while the writer holds it. Two
``struct file``s may share one mapping (two opens of one inode): the batch
compares ``vm_file``, so they batch separately, but they take the same
lock. Concurrent rmap walkers (``rmap_walk_file``: ``i_mmap_lock_read``,
``vma_interval_tree_foreach`` touching each vma found and its page tables
through ``page_vma_mapped_walk``, ``i_mmap_unlock_read``) run on other CPUs.

Layouts are fixed families (``layout``), the mappings of real processes at
exit: a static binary, a dynamically linked one (exe, libc, ld.so: the
doexec benchmark of seed 004), one file mapped in nine consecutive pieces
(so that a batch of 8 fills and overflows), and one with two ``struct
file``s of one inode and a hugetlb vma between them. Exhaustive over the
interleavings of the walkers, not over all layouts: see ``assumptions``.

The task's code is written as the kernel functions (process functions, one per version of
``free_pgtables``, each followed by ``exit_mmap()``'s ``remove_vma()`` loop): the helper calls of the C are
written out where they are called (``unlink_file_vma_batch_process()`` twice, from ``_add()`` and from
``_final()``), and ``k.update(helper(s))`` writes the updates a plain helper of values computes (a vma's
removal, a free). The walkers are hand-written actions. The pc machine this replaced is kept as a test,
tests/pc_machines/vma_unlink_batch.py, and tests/test_process_vma.py checks the two equal state for state.
The bug specs (specs/bugs/unlink_batch_*.py) change one of the static methods the code calls
(``batch_add_flushes``, ``batch_final_flushes``, ``pgd_freed``).
"""
from __future__ import annotations

import inspect
from dataclasses import dataclass
from functools import lru_cache
from math import ceil

from checker import (And, Array, Bool, Enum, Ghost, If, Implies, Or, Param, PerCpu, Role, Select, Shared, Spec,
                     action, invariant, leads_to, sometimes, terminal, when)
from checker.kernel.memory import MEM, MEM_ERROR, Heap, ptr
from checker.language.process import at, process

# -- layouts -------------------------------------------------------------------------


@dataclass(frozen=True)
class Vma:
    """One vm_area_struct: its file (0: anonymous), and where it lies."""

    name: str
    file: int = 0  # struct file id, 0 for vm_file == NULL
    far: bool = False  # vm_start > previous vm_end + PMD_SIZE
    huge: bool = False  # is_vm_hugetlb_page()
    shared: bool = False  # vma_is_shared_maywrite(): VM_SHARED | VM_MAYWRITE


@dataclass(frozen=True)
class Layout:
    name: str
    vmas: tuple[Vma, ...]
    #: struct file id -> address_space id (file->f_mapping)
    mapping: dict

    @property
    def nmaps(self) -> int:
        return max(self.mapping.values()) + 1


def _exe(f):
    return (Vma("exe r--p", f), Vma("exe r-xp", f), Vma("exe r--p", f), Vma("exe rw-p", f))


def _dso(f, lib, far=False):
    """A shared object as ld.so maps it: headers, text, rodata, relro, data (``far``: the first starts
    more than PMD_SIZE after the previous vma, as the mmap area is far from the heap)."""
    return (Vma(f"{lib} r--p", f, far=far), Vma(f"{lib} r-xp", f), Vma(f"{lib} r--p", f), Vma(f"{lib} r--p relro", f),
            Vma(f"{lib} rw-p", f))


EXE, LIBC, LD, DATA, DATA2, HUGE = 1, 2, 3, 4, 5, 6
LAYOUTS = (
    Layout("static: a statically linked binary (exe x4, heap), then the stack", (
        *_exe(EXE), Vma("[heap]"), Vma("[stack]", far=True)), {EXE: 0}),
    Layout("dynamic: exe x4 and heap; libc x5, its bss and ld.so x5; the stack", (
        *_exe(EXE), Vma("[heap]"),
        *_dso(LIBC, "libc.so.6", far=True), Vma("libc bss"), *_dso(LD, "ld-linux.so.2"),
        Vma("[stack]", far=True)), {EXE: 0, LIBC: 1, LD: 2}),
    Layout("pieces: one MAP_SHARED file in 9 consecutive vmas, an anonymous one, the same file past a gap", (
        *(Vma(f"data{i}", DATA, shared=True) for i in range(9)), Vma("anon"),
        Vma("data9", DATA, far=True, shared=True)), {DATA: 0}),
    Layout("two opens of one inode (data, data') around a hugetlbfs mapping", (
        Vma("data", DATA), Vma("anon"), Vma("data", DATA, shared=True), Vma("data'", DATA2), Vma("data'", DATA2),
        Vma("hugetlbfs", HUGE, huge=True), Vma("data'", DATA2), Vma("data", DATA)),
        {DATA: 0, DATA2: 0, HUGE: 1}),
)


def groups(layout: Layout) -> list[list[int]]:
    """free_pgtables' groups, by the rule of the code: a new group at a vma past PMD_SIZE, at a
    hugetlb vma and after one."""
    out: list[list[int]] = []
    for v, vma in enumerate(layout.vmas):
        prev = layout.vmas[v - 1] if v else None
        if prev is None or vma.far or vma.huge or prev.huge:
            out.append([])
        out[-1].append(v)
    return out


def group_of(layout: Layout) -> tuple[int, ...]:
    return tuple(g for g, members in enumerate(groups(layout)) for _ in members)


def expected_write_locks(layout: Layout, size: int) -> int:
    """The closed formula: over groups, the maximal runs of equal vm_file among the group's
    file-backed vmas (anonymous ones do not break a run), each ceil(run / size); plus one per
    hugetlb vma with a file."""
    total = 0
    for g in groups(layout):
        vmas = [layout.vmas[v] for v in g]
        if vmas[0].huge:
            total += 1 if vmas[0].file else 0
            continue
        files = [x.file for x in vmas if x.file]
        runs: list[int] = []
        for k, f in enumerate(files):
            if k and files[k - 1] == f:
                runs[-1] += 1
            else:
                runs.append(1)
        total += sum(ceil(r / size) for r in runs)
    return total


def unbatched_reference(layout: Layout) -> dict:
    """The pre-seed-004 free_pgtables run sequentially in plain Python: unlink_file_vma(vma) for
    every vma of every group, then free the group's page tables. What the batched code must
    end with."""
    linked = [1 if v.file else 0 for v in layout.vmas]
    removed = [0] * len(layout.vmas)
    writable = [0] * layout.nmaps
    for v in layout.vmas:
        if v.shared and v.file:
            writable[layout.mapping[v.file]] += 1
    locks = 0
    for g in groups(layout):
        for v in g:
            vma = layout.vmas[v]
            if vma.file:  # unlink_file_vma: i_mmap_lock_write, __remove_shared_vm_struct, unlock
                locks += 1
                linked[v] = 0
                removed[v] += 1
                writable[layout.mapping[vma.file]] -= 1 if vma.shared else 0
    return {"linked": tuple(linked), "removed": tuple(removed), "writable": tuple(writable), "locks": locks}


def _run_at_least(layout: Layout, size: int) -> bool:
    """Some group has a run of one file at least ``size`` long: a full batch can form."""
    for g in groups(layout):
        if layout.vmas[g[0]].huge:
            continue
        files = [layout.vmas[v].file for v in g if layout.vmas[v].file]
        run = 0
        for k, f in enumerate(files):
            run = run + 1 if k and files[k - 1] == f else 1
            if run >= size:
                return True
    return False


def _file_change_in_group(layout: Layout) -> bool:
    for g in groups(layout):
        files = [layout.vmas[v].file for v in g if layout.vmas[v].file]
        if any(a != b for a, b in zip(files, files[1:])):
            return True
    return False


# -- the spec --------------------------------------------------------------------------

WALK = Enum("idle", "locked", "walked", "done", name="walk")

#: The largest layout, for the heap's sites: one per vma, one per group's page tables.
MAXV = max(len(x.vmas) for x in LAYOUTS)
MAXG = max(len(groups(x)) for x in LAYOUTS)
HEAP = Heap(*[f"vma{v}" for v in range(MAXV)], *[f"pgt{g}" for g in range(MAXG)])
VMA_SITE = 0
PGT_SITE = MAXV


def _layout(s) -> Layout:
    return LAYOUTS[s.layout]


@lru_cache(maxsize=None)
def _tables(k: int) -> dict:
    """Per-layout constant tables (the layout is a parameter: plain Python is fine here)."""
    lay = LAYOUTS[k]
    return {
        "files": tuple(v.file for v in lay.vmas),
        "maps": tuple(lay.mapping[x.file] if x.file else -1 for x in lay.vmas),
        "shared": tuple(1 if (x.shared and x.file) else 0 for x in lay.vmas),
        "huge": tuple(1 if x.huge else 0 for x in lay.vmas),
        "far": tuple(1 if x.far else 0 for x in lay.vmas),
        "group": group_of(lay),
        "ngroups": len(groups(lay)),
        "reference": unbatched_reference(lay),
        "vma_var": tuple(HEAP.var_name(f"vma{v}") for v in range(len(lay.vmas))),
        "pgt_var": tuple(HEAP.var_name(f"pgt{g}") for g in group_of(lay)),
        "group_vars": tuple(HEAP.var_name(f"pgt{g}") for g in range(len(groups(lay)))),
        "setup": {**{HEAP.var_name(f"vma{v}"): MEM.live for v in range(len(lay.vmas))},
                  **{HEAP.var_name(f"pgt{g}"): MEM.live for g in range(len(groups(lay)))}},
    }


def _files(s) -> tuple[int, ...]:
    return _tables(s.layout)["files"]


def _map_of(s, v):
    """vma->vm_file->f_mapping of vma ``v`` (a state value); -1 for an anonymous vma."""
    return Select(_tables(s.layout)["maps"], v)


def _file_of(s, v):
    return Select(_files(s), v)


def _shared_of(s, v):
    return Select(_tables(s.layout)["shared"], v)


def _huge_of(s, v):
    return Select(_tables(s.layout)["huge"], v)


def _far_of(s, v):
    return Select(_tables(s.layout)["far"], v)


def _pgt(s, v):
    """The page tables covering vma ``v``: those of its free_pgtables group."""
    return ptr(PGT_SITE + Select(_tables(s.layout)["group"], v))


def _vma_mem(s, v: int):
    """The allocation state of vma number ``v`` (a plain index)."""
    return getattr(s, _tables(s.layout)["vma_var"][v])


def _pgt_mem(s, v: int):
    """The allocation state of the page tables under vma number ``v`` (a plain index)."""
    return getattr(s, _tables(s.layout)["pgt_var"][v])


def _free(s, names: tuple[str, ...], k) -> dict:
    """``HEAP.free()`` of the object ``names[k]`` (``k`` a state value): the same updates and the same
    misuse check (a second free is a double free), computed over only the objects it can be."""
    err = HEAP.error_var
    state = Select(tuple(getattr(s, n) for n in names), k)
    out = {n: If(And(k == j, state == MEM.live), MEM.freed, getattr(s, n)) for j, n in enumerate(names)}
    e = getattr(s, err)
    out[err] = If(e != MEM_ERROR.none, e, If(state == MEM.freed, MEM_ERROR.double_free,
                                             If(state == MEM.unalloc, MEM_ERROR.invalid_free, MEM_ERROR.none)))
    return out


def _free_pgt(s, v):
    """free_pgd_range() of the group of vma ``v`` (a state value)."""
    tab = _tables(s.layout)
    return _free(s, tab["group_vars"], Select(tab["group"], v))


def _writable_init(p):
    lay = LAYOUTS[p.layout]
    w = [0] * lay.nmaps
    for v in lay.vmas:
        if v.shared and v.file:
            w[lay.mapping[v.file]] += 1
    return tuple(w)




def _set(s, length: str, k, value, arr):
    """arr[k] = value for an Array indexed by a state value k (others unchanged)."""
    n = getattr(s, length)
    return {j: If(k == j, value, arr[j]) for j in range(n)}


def _remove(s, v, m):
    """__remove_shared_vm_struct(vma, mapping): if (vma_is_shared_maywrite(vma))
    mapping_unmap_writable(mapping); vma_interval_tree_remove(vma, &mapping->i_mmap)."""
    own = _map_of(s, v)
    nv = s.nvmas
    return {"linked": {j: If(v == j, 0, s.linked[j]) for j in range(nv)},
            "removed": {j: If(v == j, s.removed[j] + 1, s.removed[j]) for j in range(nv)},
            "writable": _set(s, "nmaps", m, Select(s.writable, m) - _shared_of(s, v), s.writable),
            "unlocked_removal": If(Or(own < 0, Select(s.wlocked, own) == 0), 1, s.unlocked_removal)}


BATCHED, UNBATCHED = "free_pgtables", "free_pgtables_unbatched"
DONE = 1  # the generated pc's values: idle 0, done 1, then the control points


def _lock_write(s, m) -> dict:
    """i_mmap_lock_write(mapping) once it may (no reader, no writer): the writer holds it, RWSEM_FLAG_HANDOFF is
    cleared (the waiter it was set for has the lock), and the ghost count of acquisitions grows."""
    return {"wlocked": _set(s, "nmaps", m, 1, s.wlocked), "write_locks": s.write_locks + 1, "handoff": 0}


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
    lines = inspect.getsource(VmaUnlinkBatch.__dict__[fn]).splitlines()
    d = next(i for i, ln in enumerate(lines) if ln.lstrip().startswith("def "))
    return next(i - d + 1 for i, ln in enumerate(lines) if ln.rstrip().endswith(f"[{tag}]"))


def _at(s, fn: str, tag: str):
    return at(s, s.task[0], fn, _mark(fn, tag))


def _freed_pgtables(s):
    """free_pgtables() has returned: exit_mmap() is in its remove_vma() loop, or done."""
    fn = BATCHED if s.batched else UNBATCHED
    return Or(_at(s, fn, "remove_vma"), s.task_pc[s.task[0]] == DONE)


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

    vb_count = Shared(0, doc="vb.count")
    vb_vmas = Array("vb_words", -1, doc="vb.vmas[] and the stack word after it: vma indexes (-1: never "
                                        "written); not cleared by _init")
    vb_overrun = Ghost(0, type=Bool, doc="a store to vb.vmas[] went past the stack word after the array")

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

    # Fairness for liveness: the task runs on, and i_mmap_lock_write is strongly fair (fair="strong": every
    # other step of the task is enabled until it is taken, so for them strong is weak). With forever=1 a
    # waiting writer sets the handoff bit (weakly fair: RWSEM_WAIT_TIMEOUT passes), after which arriving
    # readers queue instead of stealing the lock (kernel/locking/rwsem.c: rwsem_down_write_slowpath sets
    # RWSEM_FLAG_HANDOFF; rwsem_down_read_slowpath steals only while neither RWSEM_WRITER_LOCKED nor
    # RWSEM_FLAG_HANDOFF is set). A walker inside its walk runs on.

    # -- the places bug specs change (specs/bugs/unlink_batch_*.py) -------------------------------
    @staticmethod
    def batch_add_flushes(s, vma):
        """unlink_file_vma_batch_add()'s test for flushing before it adds ``vma`` (a file vma)::

            (vb->count > 0 && vb->vmas[0]->vm_file != vma->vm_file) || vb->count == ARRAY_SIZE(vb->vmas)"""
        return Or(And(s.vb_count > 0, _file_of(s, Select(s.vb_vmas, 0)) != _file_of(s, vma)), s.vb_count == s.size)

    @staticmethod
    def batch_final_flushes(s):
        """unlink_file_vma_batch_final(&vb): ``if (vb->count > 0) unlink_file_vma_batch_process(vb);``"""
        return s.vb_count > 0

    @staticmethod
    def pgd_freed(s, addr, before_final: bool) -> dict:
        """free_pgd_range(tlb, addr, vma->vm_end, ...): the group's page tables, freed after
        unlink_file_vma_batch_final() (``before_final`` is the point just before it: nothing freed there)."""
        return {} if before_final else _free_pgt(s, addr)

    @process(role="task", applies=lambda p: p.batched == 1, fair="strong")
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

        unlink_file_vma_batch_init()::

            vb->count = 0;

        unlink_file_vma_batch_final()::

            if (vb->count > 0)
                    unlink_file_vma_batch_process(vb);

        unlink_file_vma() (a hugetlb vma)::

            struct file *file = vma->vm_file;
            if (file) {
                    struct address_space *mapping = file->f_mapping;
                    i_mmap_lock_write(mapping);
                    __remove_shared_vm_struct(vma, file, mapping);
                    i_mmap_unlock_write(mapping);
            }

        and exit_mmap()'s loop after free_pgtables() (v6.11; the accounting is not modelled)::

            do {
                    if (vma->vm_flags & VM_ACCOUNT)
                            nr_accounted += vma_pages(vma);
                    remove_vma(vma, true);
                    count++;
                    cond_resched();
                    vma = vma_next(&vmi);
            } while (vma && likely(!xa_is_zero(vma)));
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
                        k.update(_lock_write(s, m))
                if _file_of(s, vma) != 0:
                    with k.atomic():  # __remove_shared_vm_struct(vma, mapping)
                        k.update(_remove(s, vma, m))
                    with k.atomic():  # i_mmap_unlock_write(mapping)
                        s.wlocked[m] = 0
                with k.atomic():  # hugetlb_free_pgd_range(tlb, addr, vma->vm_end, ...)
                    k.update(_free_pgt(s, addr))
            else:
                while True:
                    with k.atomic():  # unlink_file_vma_batch_add(&vb, vma)
                        file = _file_of(s, vma)
                        flush = file != 0 and s.spec.batch_add_flushes(s, vma)
                        if file != 0 and not flush:
                            k.update(_append(s, vma))
                    if flush:
                        with k.atomic():  # _process: i_mmap_lock_write(mapping)  [flush_lock]
                            m = _map_of(s, s.vb_vmas[0])
                            k.assume(s.wlocked[m] == 0 and s.readers[m] == 0)
                            k.update(_lock_write(s, m))
                            i = 0
                        while i < s.vb_count:  # [flush_remove]
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
                with k.atomic():  # unlink_file_vma_batch_final(&vb)  [final]
                    k.update(s.spec.pgd_freed(s, addr, True))
                    final = s.spec.batch_final_flushes(s)
                if final:
                    with k.atomic():  # _process: i_mmap_lock_write(mapping)  [final_lock]
                        m = _map_of(s, s.vb_vmas[0])
                        k.assume(s.wlocked[m] == 0 and s.readers[m] == 0)
                        k.update(_lock_write(s, m))
                        i = 0
                    while i < s.vb_count:  # [final_remove]
                        with k.atomic():  # __remove_shared_vm_struct(vb->vmas[i], mapping)
                            k.update(_remove(s, s.vb_vmas[i], m))
                            i += 1
                    with k.atomic():  # i_mmap_unlock_write(mapping); unlink_file_vma_batch_init(vb)
                        s.wlocked[m] = 0
                        s.vb_count = 0
                with k.atomic():  # free_pgd_range(tlb, addr, vma->vm_end, ...)  [free_pgd]
                    k.update(s.spec.pgd_freed(s, addr, False))
            more = vma + 1 < s.nvmas  # vma = next; } while (vma);  (joins the step before it)
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

    @process(role="task", applies=lambda p: p.batched == 0, fair="strong")
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
                        k.update(_lock_write(s, m))
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

    @action(role="task", fair="weak", applies=lambda p: p.forever == 1)
    def rwsem_handoff(s, cpu):
        """rwsem_down_write_slowpath(): the first waiter has waited RWSEM_WAIT_TIMEOUT: set
        RWSEM_FLAG_HANDOFF (readers stop stealing the lock)."""
        file = _file_of(s, s.task_vma[s.task[0]]) != 0
        if s.batched:
            waiting = Or(_at(s, BATCHED, "flush_lock"), _at(s, BATCHED, "final_lock"),
                         And(_at(s, BATCHED, "huge_lock"), file))
        else:
            waiting = And(_at(s, UNBATCHED, "lock"), file)
        return when(And(waiting, s.handoff == 0), handoff=1)

    # -- rmap_walk_file() on other CPUs --------------------------------------------------------
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
        return when(s.wpc[cpu] == WALK.walked, wpc={cpu: If(s.forever == 1, WALK.idle, WALK.done)},
                    readers=_set(s, "nmaps", m, Select(s.readers, m) - 1, s.readers))

    @terminal
    def finished(s):
        """exit_mmap() has returned and every walk is done."""
        return And(s.task_pc[s.task[0]] == DONE, *[s.wpc[c] == WALK.done for c in s.walker])

    # -- properties -----------------------------------------------------------------------------
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
        """A vma an rmap walker can find (in its mapping's i_mmap) and the page tables under it are
        live: no vm_area_free and no free_pgd_range while it is linked."""
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
        """UB-COUNT: when free_pgtables is done, i_mmap_lock_write was taken, summed over groups, the sum
        over maximal runs of one vm_file among the group's file vmas of ceil(run / ARRAY_SIZE), plus
        one per hugetlb file vma (batched=0: once per file vma)."""
        want = expected_write_locks(_layout(s), s.size) if s.batched else _tables(s.layout)["reference"]["locks"]
        return Implies(_freed_pgtables(s), s.write_locks == want)

    @sometimes(applies=lambda p: p.batched == 1 and _run_at_least(LAYOUTS[p.layout], p.size))
    def a_full_batch_forms(s):
        """vb.count reaches ARRAY_SIZE(vb.vmas)."""
        return s.vb_count == s.size

    @sometimes(applies=lambda p: p.batched == 1 and _run_at_least(LAYOUTS[p.layout], p.size + 1))
    def a_full_batch_is_flushed(s):
        """unlink_file_vma_batch_add() flushes a full batch of the vma's own file (being full is the only
        reason)."""
        vma = s.task_vma[s.task[0]]
        return And(_at(s, BATCHED, "flush_lock"), s.vb_count == s.size,
                   _file_of(s, Select(s.vb_vmas, 0)) == _file_of(s, vma))

    @sometimes(applies=lambda p: p.batched == 1 and _file_change_in_group(LAYOUTS[p.layout]))
    def a_batch_is_flushed_by_a_file_change(s):
        """unlink_file_vma_batch_add() flushes a batch that is not full: the vma's vm_file differs from the
        batch's (the change of file is the only reason)."""
        vma = s.task_vma[s.task[0]]
        return And(_at(s, BATCHED, "flush_lock"), s.vb_count < s.size,
                   _file_of(s, Select(s.vb_vmas, 0)) != _file_of(s, vma))

    @leads_to(applies=lambda p: p.forever == 1)
    def a_queued_batch_is_flushed(s):
        """UB-FLUSH: once unlink_file_vma_batch_add() has queued a vma (vb.count > 0), the batch is
        flushed: unlink_file_vma_batch_process() holds the mapping's i_mmap_rwsem for write and removes
        its vmas, however often rmap walkers take the lock for read."""
        flushing = Or(_at(s, BATCHED, "flush_remove"), _at(s, BATCHED, "final_remove")) if s.batched else False
        return s.vb_count > 0, flushing

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
