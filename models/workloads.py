"""Workloads as the model operations one iteration performs, run through the models.

Every figure the seeds give is for one of these loops. doexec's source was
not available (reference 7.2), so its operation list is an assumption built
from the seeds' descriptions: each worker execs in a loop, so an iteration
creates one mm (mm_alloc -> mm_init), faults the new image in, and tears the
old mm down (exit_mmap: zap, release_pages under the lruvec lock, unlink of
file vmas, then __mmdrop). The dynamic build also maps the shared ld.so and
libc, 5 vmas each, linking each under that file's i_mmap_rwsem, and unlinks
them at teardown, one acquisition per vma or per batch. lmbench's fork,
exec and shell loops are one, two and three such mm lifecycles (fork; fork +
exec; fork + exec of sh + exec of the command). stress-ng clone is a clone
whose child keeps its vmapped stack until reaped.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from .costs import I_MMAP_RWSEM, LRUVEC_LOCK, Costs
from .grouped import MmInit
from .lazy import LazyCounter
from .percpu_alloc import PercpuAllocator
from .rss_split import SplitRss
from .stack_cache import StackCache, clone_burst
from .vma_unlink import elf_layout, unlink_batched, unlink_unbatched

RSS_VARIANTS = ("per-counter", "grouped", "lazy", "split")
PAGEVEC = 31  # release_pages takes the lruvec lock once per folio batch of the same lruvec
OWN_FILE_LOCK = "i_mmap_rwsem(own binary)"  # each worker's binary is separate: not a global lock


@dataclass(frozen=True)
class Workload:
    name: str
    variants: tuple[str, ...]
    doc: str
    mms: int = 1                      # mm lifecycles per iteration
    shared_files: tuple[str, ...] = ()
    single_process: bool = False      # lmbench: latency of one process, no contention


WORKLOADS = {
    "doexec-static": Workload("doexec-static", RSS_VARIANTS, "seed 000: static doexec, one exec per iteration"),
    "doexec-shared": Workload("doexec-shared", ("unbatched", "batched"),
                              "seed 004: dynamic doexec, ld.so and libc shared by every worker",
                              shared_files=("ld.so", "libc.so")),
    "lmbench-fork": Workload("lmbench-fork", ("grouped", "split", "lazy"), "seed 001: fork + exit",
                             single_process=True),
    "lmbench-exec": Workload("lmbench-exec", ("grouped", "split", "lazy"), "seed 001: fork + exec + exit",
                             mms=2, single_process=True),
    "lmbench-shell": Workload("lmbench-shell", ("grouped", "split", "lazy"),
                              "seed 001: fork + exec /bin/sh -c + exec of the command", mms=3,
                              single_process=True),
    "clone": Workload("clone", ("find_vm_area", "vmalloc_area"), "seed 003: stress-ng --clone"),
}


def _rss_updates(variant: str, mm, alloc: PercpuAllocator, faults: int) -> Costs:
    """The faults' rss accounting and exit_mmap's zap (add_mm_rss_vec: one add per member)."""
    cost = Costs()
    per_member = [faults - faults // 2, faults // 2]  # file and anon pages, alternating
    if variant in ("per-counter", "grouped"):
        for k in range(faults):
            cost += mm.rss[k % 2].add(0, 1)
        for member, n in enumerate(per_member):
            cost += mm.rss[member].add(0, -n)
    elif variant == "lazy":
        counters = [LazyCounter(alloc), LazyCounter(alloc)]
        for k in range(faults):
            cost += counters[k % 2].add(0, 1, now=1)  # one exec takes far less than a second (HZ)
        for member, n in enumerate(per_member):
            cost += counters[member].add(0, -n, now=1)
        for c in counters:  # check_mm's lazy_percpu_counter_sum, then destroy
            _, r = c.read()
            cost += r + c.exit()
    else:
        rss = SplitRss(1)
        for _ in range(faults):
            cost += rss.fault(0, 1)
        for n in per_member:
            cost += rss.zap(0, n)
        cost += rss.exit(0)
    return cost


def _release_pages(pages: int) -> Costs:
    cost = Costs()
    for start in range(0, pages, PAGEVEC):
        cost.lock(LRUVEC_LOCK, work=min(PAGEVEC, pages - start))
    return cost


def doexec_layout(shared: tuple[str, ...], vmas: int) -> list[str | None]:
    """The file vmas of one doexec process in address order: its own binary (4 vmas), then each shared
    object's run, separated by an anonymous vma (bss, heap or a gap mapping)."""
    layout: list[str | None] = elf_layout("binary", 4)
    for f in shared:
        layout += [None] + elf_layout(f, vmas)
    return layout


def batch_histograms(vmas: int = 5) -> dict[str, dict]:
    """unlink_file_vma batch sizes and i_mmap_rwsem acquisitions for the static and dynamic doexec."""
    out = {}
    for name, w in (("static", "doexec-static"), ("dynamic", "doexec-shared")):
        layout = doexec_layout(WORKLOADS[w].shared_files, vmas)
        sizes, _ = unlink_batched(layout)
        out[name] = {"batch_sizes": dict(sorted(Counter(sizes).items())),
                     "acquisitions_unbatched": sum(f is not None for f in layout),
                     "acquisitions_batched": len(sizes)}
    return out


def _file_vmas(shared: tuple[str, ...], vmas: int, batched: bool) -> Costs:
    """mmap of the shared objects (one i_mmap_rwsem write per vma linked), then their unlink."""
    layout = doexec_layout(shared, vmas)
    cost = Costs()
    for f in layout:
        if f is not None:
            cost.lock(I_MMAP_RWSEM if f in shared else OWN_FILE_LOCK)
    per_file = unlink_batched(layout)[1] if batched else unlink_unbatched(layout)
    for f, c in per_file.items():
        if f not in shared:  # the worker's own binary: rename its lock, it is not contended
            c.locks[OWN_FILE_LOCK] += c.locks.pop(I_MMAP_RWSEM)
            c.held[OWN_FILE_LOCK] += c.held.pop(I_MMAP_RWSEM)
        cost += c
    return cost


def mm_lifecycle(rss: str, ncpus: int, faults: int, pages: int, shared: tuple[str, ...] = (),
                 vmas: int = 5, batched: bool = True) -> Costs:
    """mm_init, faults, exit_mmap (zap, release_pages, unlink file vmas), __mmdrop."""
    alloc = PercpuAllocator(ncpus)
    eager = rss in ("per-counter", "grouped")
    mi = MmInit(alloc, grouped=rss != "per-counter", with_cid=True, counters=4 if eager else 0)
    mm, cost = mi.mm_init()
    cost += _rss_updates(rss, mm, alloc, faults)
    cost += _release_pages(pages)
    cost += _file_vmas(shared, vmas, batched)
    cost += mi.mmdrop(mm)
    if alloc.areas:
        raise AssertionError(f"{rss}: the mm lifecycle leaked {len(alloc.areas)} per-cpu areas")
    return cost


def iteration(workload: str, variant: str, ncpus: int, priors: dict) -> Costs:
    """The costs of one iteration of ``workload`` under ``variant`` on ``ncpus`` possible CPUs."""
    w = WORKLOADS[workload]
    if variant not in w.variants:
        raise ValueError(f"{workload} has variants {', '.join(w.variants)}, not {variant!r}")
    if workload == "clone":
        live = priors["clone_live_children"]
        cache = StackCache(ncpus, find_vm_area=variant == "find_vm_area")
        clone_burst(cache, 0, live)  # warm the cache: the steady state, not the first burst
        return clone_burst(cache, 0, live)  # `live` clones: ops_per_iteration() says so
    faults, pages = priors["faults"][workload], priors["pages_freed"][workload]
    rss = "grouped" if workload == "doexec-shared" else variant
    cost = Costs()
    for k in range(w.mms):
        # the fork's mm copies the parent's rss; each exec faults its image in
        n = faults if w.mms == 1 else (priors["faults"]["lmbench-fork"] if k == 0 else faults // (w.mms - 1))
        cost += mm_lifecycle(rss, ncpus, n, pages // w.mms, w.shared_files, priors["shared_elf_vmas"],
                             batched=variant == "batched")
    return cost


def ops_per_iteration(workload: str, priors: dict) -> int:
    """Operations the figure counts per iteration (clone: one burst is ``live`` clones)."""
    return priors["clone_live_children"] if workload == "clone" else 1
