# SPDX-License-Identifier: GPL-2.0-only
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

Workloads with no seed figure (issue 19): ``fork-many`` (fork + exit in
many concurrent copies, a spawn benchmark), ``launch`` (one serial parent
forking children that exec: two classes, see queueing.launch_throughput),
``page-fault`` (anonymous faults and munmap in each worker's own mm) and
``open-missing`` (open() of a missing file: nr_files inc in
alloc_empty_file, dec in file_free, one global counter).
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from .atomic_mode import AtomicModeGroup
from .costs import I_MMAP_RWSEM, LRUVEC_LOCK, Costs
from .eager import EagerCounter, default_batch
from .grouped import NR_MM_COUNTERS, MmInit
from .lazy import LazyCounter
from .lazy_rfc import LazyRfcCounter
from .percpu_alloc import PercpuAllocator
from .rss_split import SplitRss
from .stack_cache import StackCache, clone_burst
from .vma_unlink import elf_layout, unlink_batched, unlink_unbatched

#: How the mm's rss counters are kept. per-counter: 6.5 (one allocation per counter, mm_cid too);
#: per-counter-nocid: f1a7941243c1's 6.2 ladder; grouped: 14ef95be6f55 (6.6); lazy: L-K; lazy-z: L-Z
#: (seed 001's patch); split: before 6.2; atomic: ZhangPeng's RFC v2 atomic mode; ctor: Harry Yoo's
#: slab-constructor RFC (the per-cpu memory kept across reuse of the mm_struct).
RSS_VARIANTS = ("per-counter", "per-counter-nocid", "grouped", "lazy", "lazy-z", "split", "atomic", "ctor")
#: The eager add's three forms (reference 1.2), for a workload whose cost is the add itself.
EAGER_VARIANTS = ("eager-A", "eager-B", "eager-C")
#: lmbench's order: seed 001's base (grouped), its revert (split) and its patch (lazy-z) first.
LMBENCH_VARIANTS = ("grouped", "split", "lazy-z", "lazy", "atomic", "ctor", "per-counter", "per-counter-nocid")
PAGEVEC = 31      # release_pages takes the lruvec lock once per folio batch of the same lruvec
LRU_ADD_BATCH = 15  # folio_add_lru: a per-CPU batch of 15 folios moved under the lruvec lock at once
OWN_FILE_LOCK = "i_mmap_rwsem(own binary)"  # each worker's binary is separate: not a global lock
NR_FILES_LOCK = "nr_files.lock"             # fs/file_table.c's nr_files: one counter for the machine
NR_FILES_LINE = "nr_files"                  # its cache line, when it is an atomic


@dataclass(frozen=True)
class Workload:
    name: str
    variants: tuple[str, ...]
    doc: str
    mms: int = 1                      # mm lifecycles per iteration
    shared_files: tuple[str, ...] = ()
    single_process: bool = False      # lmbench: latency of one process, no contention
    two_class: bool = False           # a serial parent and its concurrent children


WORKLOADS = {
    "doexec-static": Workload("doexec-static", RSS_VARIANTS, "seed 000: static doexec, one exec per iteration"),
    "doexec-shared": Workload("doexec-shared", ("unbatched", "batched"),
                              "seed 004: dynamic doexec, ld.so and libc shared by every worker",
                              shared_files=("ld.so", "libc.so")),
    "lmbench-fork": Workload("lmbench-fork", LMBENCH_VARIANTS, "seed 001: fork + exit", single_process=True),
    "lmbench-exec": Workload("lmbench-exec", LMBENCH_VARIANTS, "seed 001: fork + exec + exit", mms=2,
                             single_process=True),
    "lmbench-shell": Workload("lmbench-shell", LMBENCH_VARIANTS,
                              "seed 001: fork + exec /bin/sh -c + exec of the command", mms=3,
                              single_process=True),
    "clone": Workload("clone", ("find_vm_area", "vmalloc_area"), "seed 003: stress-ng --clone"),
    "fork-many": Workload("fork-many", RSS_VARIANTS, "fork + exit in one concurrent copy per worker (spawn)"),
    "launch": Workload("launch", RSS_VARIANTS, "one serial parent forking children that exec a static "
                       "binary and exit; at most --workers children alive", mms=2, two_class=True),
    "page-fault": Workload("page-fault", EAGER_VARIANTS + ("split", "lazy", "lazy-z", "atomic"),
                           "anonymous page faults then munmap, each worker in its own mm; ops = faults"),
    "open-missing": Workload("open-missing", EAGER_VARIANTS + ("atomic",),
                             "open() of a missing file: nr_files inc in alloc_empty_file, dec in file_free"),
}


class MmRss:
    """One mm's rss counters under one variant: what mm_init sets up, each fault's add, the zap's subtract
    (add_mm_rss_vec), check_mm's sums and the teardown."""

    def __init__(self, variant: str, mm, alloc: PercpuAllocator, eager: str = "B"):
        self.variant, self.alloc = variant, alloc
        batch = default_batch(alloc.ncpus)
        self.eager = None
        if variant in ("per-counter", "per-counter-nocid", "grouped", "ctor"):
            self.eager = mm.rss
            for c in self.eager:
                c.variant = eager
        elif variant == "lazy":
            self.lazy = [LazyCounter(alloc) for _ in range(2)]
        elif variant == "lazy-z":
            self.lazy = [LazyRfcCounter(alloc, batch) for _ in range(2)]
        elif variant == "atomic":
            self.group = AtomicModeGroup(alloc, NR_MM_COUNTERS, batch)
        elif variant == "split":
            self.split = SplitRss(1)
        else:
            raise ValueError(f"no rss variant {variant!r}")

    def add(self, member: int, n: int, now: int = 1) -> Costs:
        """add_mm_counter(mm, member, n) on CPU 0 (a fault adds 1; the zap adds -pages)."""
        if self.eager is not None:
            return self.eager[member].add(0, n)
        if self.variant in ("lazy", "lazy-z"):
            return self.lazy[member].add(0, n, now=now)
        if self.variant == "atomic":
            return self.group.add(member, 0, n)
        return self.split.fault(0, n) if n > 0 else self.split.zap(0, -n)

    def teardown(self) -> Costs:
        """exit's sync (split), check_mm's sums, then what __mmdrop frees beyond mm_init's allocations."""
        cost = Costs()
        if self.variant == "split":
            return self.split.exit(0)
        if self.variant in ("lazy", "lazy-z"):
            for c in self.lazy:
                value, r = c.read() if self.variant == "lazy" else c.sum()
                if value:
                    raise AssertionError(f"BUG: Bad rss-counter state val:{value}")
                cost += r + (c.exit() if self.variant == "lazy" else c.destroy())
        elif self.variant == "atomic":
            for k in range(NR_MM_COUNTERS):
                value, r = self.group.sum(k)
                if value:
                    raise AssertionError(f"BUG: Bad rss-counter state val:{value}")
                cost += r
            cost += self.group.destroy()
        return cost  # eager counters: MmInit.mmdrop sums and destroys them


def _release_pages(pages: int) -> Costs:
    cost = Costs()
    for start in range(0, pages, PAGEVEC):
        cost.lock(LRUVEC_LOCK, work=min(PAGEVEC, pages - start))
    return cost


def _lru_add(pages: int) -> Costs:
    """folio_add_lru() of each new page: a this_cpu batch, drained under the lruvec lock every 15."""
    cost = Costs(local_ops=pages)
    for start in range(0, pages, LRU_ADD_BATCH):
        cost.lock(LRUVEC_LOCK, work=min(LRU_ADD_BATCH, pages - start))
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


def _link_file_vmas(shared: tuple[str, ...], vmas: int) -> Costs:
    """mmap of the image: one i_mmap_rwsem write per file vma linked."""
    cost = Costs()
    for f in doexec_layout(shared, vmas):
        if f is not None:
            cost.lock(I_MMAP_RWSEM if f in shared else OWN_FILE_LOCK)
    return cost


def _unlink_file_vmas(shared: tuple[str, ...], vmas: int, batched: bool) -> Costs:
    layout = doexec_layout(shared, vmas)
    cost = Costs()
    per_file = unlink_batched(layout)[1] if batched else unlink_unbatched(layout)
    for f, c in per_file.items():
        if f not in shared:  # the worker's own binary: rename its lock, it is not contended
            c.locks[OWN_FILE_LOCK] += c.locks.pop(I_MMAP_RWSEM)
            c.held[OWN_FILE_LOCK] += c.held.pop(I_MMAP_RWSEM)
        cost += c
    return cost


def _mm_init(rss: str, alloc: PercpuAllocator, ctor_cache: dict | None = None) -> tuple[MmInit, object, Costs]:
    eager = rss in ("per-counter", "per-counter-nocid", "grouped", "ctor")
    if rss == "ctor":
        # one slab cache per allocator: the constructed objects outlive each mm
        mi = (ctor_cache or {}).get("mi") or MmInit(alloc, grouped=True, with_cid=True, ctor=True)
        if ctor_cache is not None:
            ctor_cache["mi"] = mi
    else:
        mi = MmInit(alloc, grouped=rss not in ("per-counter", "per-counter-nocid"),
                    with_cid=rss != "per-counter-nocid", counters=NR_MM_COUNTERS if eager else 0)
    mm, cost = mi.mm_init()
    return mi, mm, cost


@dataclass
class MmPhase:
    """A live mm between the phases of its life (so a fork's and an exec's parts can be priced apart)."""
    mi: MmInit
    mm: object
    rss: MmRss
    faults: int


def mm_start(rss: str, alloc: PercpuAllocator, faults: int, shared: tuple[str, ...] = (), vmas: int = 5,
             ctor_cache: dict | None = None) -> tuple[MmPhase, Costs]:
    """mm_init, the image's file vmas linked, ``faults`` rss adds (file and anon pages, alternating)."""
    mi, mm, cost = _mm_init(rss, alloc, ctor_cache)
    r = MmRss(rss, mm, alloc)
    cost += _link_file_vmas(shared, vmas)
    for k in range(faults):
        cost += r.add(k % 2, 1)
    return MmPhase(mi, mm, r, faults), cost


def mm_end(ph: MmPhase, pages: int, shared: tuple[str, ...] = (), vmas: int = 5, batched: bool = True) -> Costs:
    """exit_mmap (zap: add_mm_rss_vec per member; release_pages; unlink of the file vmas), then __mmdrop."""
    cost = Costs()
    for member, n in enumerate((ph.faults - ph.faults // 2, ph.faults // 2)):
        if n:
            cost += ph.rss.add(member, -n)
    cost += _release_pages(pages)
    cost += _unlink_file_vmas(shared, vmas, batched)
    cost += ph.rss.teardown()
    cost += ph.mi.mmdrop(ph.mm)
    return cost


def mm_lifecycle(rss: str, ncpus: int, faults: int, pages: int, shared: tuple[str, ...] = (),
                 vmas: int = 5, batched: bool = True, alloc: PercpuAllocator | None = None,
                 ctor_cache: dict | None = None) -> Costs:
    """mm_init, faults, exit_mmap (zap, release_pages, unlink file vmas), __mmdrop."""
    own = alloc is None
    alloc = alloc or PercpuAllocator(ncpus)
    ph, cost = mm_start(rss, alloc, faults, shared, vmas, ctor_cache)
    cost += mm_end(ph, pages, shared, vmas, batched)
    if own and alloc.areas and rss != "ctor":
        raise AssertionError(f"{rss}: the mm lifecycle leaked {len(alloc.areas)} per-cpu areas")
    return cost


def _steady(run) -> Costs:
    """The second of two runs on the same state: the steady state, not the first use (a slab cache filled,
    a lazy counter switched, a stack cache warm)."""
    run()
    return run()


def _page_fault(variant: str, ncpus: int, priors: dict) -> Costs:
    """A long-lived process's loop: fault ``pages`` anonymous pages in, munmap them. ops = faults."""
    pages = priors["fault_pages"]
    alloc = PercpuAllocator(ncpus)
    rss_variant = "grouped" if variant in EAGER_VARIANTS else variant
    mi, mm, _ = _mm_init(rss_variant, alloc)
    r = MmRss(rss_variant, mm, alloc, eager=variant[-1] if variant in EAGER_VARIANTS else "B")
    state = {"now": 1}

    def loop() -> Costs:
        cost = _lru_add(pages)
        for _ in range(pages):
            cost += r.add(1, 1, now=state["now"])          # MM_ANONPAGES, far faster than HZ
        cost += r.add(1, -pages, now=state["now"])          # zap_pte_range's add_mm_rss_vec
        cost += _release_pages(pages)
        state["now"] += 1
        return cost
    return _steady(loop)


def _open_missing(variant: str, ncpus: int, priors: dict) -> Costs:
    """path_openat(): alloc_empty_file() (get_nr_files() check, then percpu_counter_inc(&nr_files)), the
    walk fails with ENOENT, fput() of a never-opened file: file_free() (percpu_counter_dec(&nr_files))."""
    if variant == "atomic":
        cost = Costs(local_ops=1)                    # the max_files check reads the atomic
        cost.line_rmw[NR_FILES_LINE] += 2            # atomic_long_inc, atomic_long_dec
        cost.shared_rmw += 2
        return cost
    nr_files = EagerCounter(ncpus, default_batch(ncpus), variant[-1], lock_name=NR_FILES_LOCK)

    def one() -> Costs:
        return Costs(local_ops=1) + nr_files.add(0, 1) + nr_files.add(0, -1)
    return _steady(one)


def launch_parts(variant: str, ncpus: int, priors: dict) -> tuple[Costs, Costs]:
    """(the parent's fork, the child's exec and exit) of one launched program: the parent's dup_mm
    (mm_init and the copied pages' rss), then in the child an exec (a new mm: init, the image's faults)
    that tears the forked copy down, and the child's exit tearing the image down."""
    alloc = PercpuAllocator(ncpus)
    cache: dict = {}
    copied, faults, pages = priors["faults"]["lmbench-fork"], priors["faults"]["doexec-static"], \
        priors["pages_freed"]["doexec-static"]

    def one() -> tuple[Costs, Costs]:
        forked, parent = mm_start(variant, alloc, copied, ctor_cache=cache)
        image, child = mm_start(variant, alloc, faults, ctor_cache=cache)
        child += mm_end(forked, pages // 2) + mm_end(image, pages - pages // 2)
        return parent, child
    one()
    return one()


def iteration(workload: str, variant: str, ncpus: int, priors: dict) -> Costs:
    """The costs of one iteration of ``workload`` under ``variant`` on ``ncpus`` possible CPUs."""
    w = WORKLOADS[workload]
    if variant not in w.variants:
        raise ValueError(f"{workload} has variants {', '.join(w.variants)}, not {variant!r}")
    if workload == "clone":
        live = priors["clone_live_children"]
        cache = StackCache(ncpus, find_vm_area=variant == "find_vm_area")
        return _steady(lambda: clone_burst(cache, 0, live))  # `live` clones: ops_per_iteration() says so
    if workload == "page-fault":
        return _page_fault(variant, ncpus, priors)
    if workload == "open-missing":
        return _open_missing(variant, ncpus, priors)
    if workload == "launch":
        parent, child = launch_parts(variant, ncpus, priors)
        return parent + child
    key = "lmbench-fork" if workload == "fork-many" else workload
    faults, pages = priors["faults"][key], priors["pages_freed"][key]
    rss = "grouped" if workload == "doexec-shared" else variant
    alloc = PercpuAllocator(ncpus)
    cache: dict = {}

    def one() -> Costs:
        cost = Costs()
        for k in range(w.mms):
            # the fork's mm copies the parent's rss; each exec faults its image in
            n = faults if w.mms == 1 else (priors["faults"]["lmbench-fork"] if k == 0 else faults // (w.mms - 1))
            cost += mm_lifecycle(rss, ncpus, n, pages // w.mms, w.shared_files, priors["shared_elf_vmas"],
                                 batched=variant == "batched", alloc=alloc, ctor_cache=cache)
        return cost
    cost = _steady(one)
    if alloc.areas and rss != "ctor":
        raise AssertionError(f"{workload}/{variant}: leaked {len(alloc.areas)} per-cpu areas")
    return cost


def ops_per_iteration(workload: str, priors: dict) -> int:
    """Operations the figure counts per iteration (clone: one burst is ``live`` clones; page-fault: the
    faults of one munmap cycle)."""
    if workload == "clone":
        return priors["clone_live_children"]
    if workload == "page-fault":
        return priors["fault_pages"]
    return 1
