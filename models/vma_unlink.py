# SPDX-License-Identifier: GPL-2.0-only
"""free_pgtables()' unlinking of file vmas from their mappings (seed 004; reference section 6).

Unbatched: one i_mmap_rwsem write acquisition per file vma. Batched
(``unlink_file_vma_batch_*``): consecutive vmas of one file share an
acquisition, up to the batch array's size (8), so a run of n same-file vmas
costs ceil(n / 8). The batch is flushed when a vma of another file comes or
the array is full; anonymous vmas are skipped without flushing. free_pgtables()
also flushes it (``unlink_file_vma_batch_final``) at the end of each group of
vmas it frees page tables for: a group ends before a vma more than PMD_SIZE
past the previous one (``starts``) and around a hugetlb vma (``huge``), which
is unlinked unbatched (one acquisition, no batch).
"""
from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from .costs import I_MMAP_RWSEM, Costs

BATCH_SIZE = 8
#: Seed 004's bpftrace lhist of batch sizes while building the kernel (not doexec).
SEED_004_HISTOGRAM = {1: 799579, 2: 0, 3: 3009, 4: 3009, 5: 326442}


def unlink_batched(files: list[str | None], size: int = BATCH_SIZE, starts: Iterable[int] = (),
                   huge: Iterable[int] = ()) -> tuple[list[int], dict[str, Costs]]:
    """The batch sizes at each flush, and the costs per file (None: an anonymous vma). ``starts``: indexes
    of vmas that start a new free_pgtables group (a gap of more than PMD_SIZE before them); ``huge``:
    indexes of hugetlb vmas (a group of their own, unlink_file_vma: not a batch)."""
    starts, huge = set(starts), set(huge)
    sizes: list[int] = []
    costs: dict[str, Costs] = {}
    batch: list[str] = []

    def process() -> None:
        costs.setdefault(batch[0], Costs()).lock(I_MMAP_RWSEM, work=len(batch))
        sizes.append(len(batch))
        batch.clear()

    for v, f in enumerate(files):
        if batch and (v in starts or v in huge):  # unlink_file_vma_batch_final() of the group before
            process()
        if v in huge:
            if f is not None:
                costs.setdefault(f, Costs()).lock(I_MMAP_RWSEM)
            continue
        if f is None:
            continue
        if batch and (batch[0] != f or len(batch) == size):
            process()
        batch.append(f)
    if batch:
        process()
    return sizes, costs


def unlink_unbatched(files: list[str | None]) -> dict[str, Costs]:
    """unlink_file_vma() per vma: one acquisition each."""
    costs: dict[str, Costs] = {}
    for f in files:
        if f is not None:
            costs.setdefault(f, Costs()).lock(I_MMAP_RWSEM)
    return costs


def histogram(layouts: list, size: int = BATCH_SIZE) -> Counter:
    """Batch sizes over several address spaces' teardowns, as seed 004's bpftrace lhist counts them. A
    layout is a list of files, or (files, starts, huge) as unlink_batched takes them."""
    h: Counter = Counter()
    for lay in layouts:
        files, starts, huge = lay if isinstance(lay, tuple) else (lay, (), ())
        h.update(unlink_batched(files, size, starts, huge)[0])
    return h


def elf_layout(name: str, segments: int = 5) -> list[str | None]:
    """A mapped ELF object: ``segments`` consecutive vmas of one file (r, r-x, r, rw for ld.so and libc
    on x86-64 glibc, plus the relro split), as /proc/PID/maps shows them."""
    return [name] * segments
