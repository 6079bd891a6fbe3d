"""free_pgtables()' unlinking of file vmas from their mappings (seed 004; reference section 6).

Unbatched: one i_mmap_rwsem write acquisition per file vma. Batched
(``unlink_file_vma_batch_*``): consecutive vmas of one file share an
acquisition, up to the batch array's size (8), so a run of n same-file vmas
costs ceil(n / 8). The batch is flushed when a vma of another file comes or
the array is full; anonymous vmas are skipped without flushing.
"""
from __future__ import annotations

from collections import Counter

from models.costs import I_MMAP_RWSEM, Costs

BATCH_SIZE = 8
#: Seed 004's bpftrace lhist of batch sizes while building the kernel (not doexec).
SEED_004_HISTOGRAM = {1: 799579, 2: 0, 3: 3009, 4: 3009, 5: 326442}


def unlink_batched(files: list[str | None]) -> tuple[list[int], dict[str, Costs]]:
    """The batch sizes at each flush, and the costs per file (None: an anonymous vma)."""
    sizes: list[int] = []
    costs: dict[str, Costs] = {}
    batch: list[str] = []

    def process() -> None:
        costs.setdefault(batch[0], Costs()).lock(I_MMAP_RWSEM, work=len(batch))
        sizes.append(len(batch))
        batch.clear()

    for f in files:
        if f is None:
            continue
        if batch and (batch[0] != f or len(batch) == BATCH_SIZE):
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


def histogram(layouts: list[list[str | None]]) -> Counter:
    """Batch sizes over several address spaces' teardowns, as seed 004's bpftrace lhist counts them."""
    h: Counter = Counter()
    for files in layouts:
        h.update(unlink_batched(files)[0])
    return h


def elf_layout(name: str, segments: int = 5) -> list[str | None]:
    """A mapped ELF object: ``segments`` consecutive vmas of one file (r, r-x, r, rw for ld.so and libc
    on x86-64 glibc, plus the relro split), as /proc/PID/maps shows them."""
    return [name] * segments
