# SPDX-License-Identifier: GPL-2.0-only
"""Executable fast-path models and the throughput model (DESIGN principle 7: models count, specs prove).

costs.py        the cost record every model returns
percpu_alloc.py mm/percpu.c: which lock each step of an allocation or a free holds (pcpu_lock nested in
                pcpu_alloc_mutex for GFP_KERNEL)
eager.py        percpu_counter add (variants A, B, C) and sum, init_many/destroy_many
grouped.py      mm_init/__mmdrop's rss counters: grouped, one by one (with or without mm_cid), slab ctor
lazy.py         the lazy percpu counter, L-K
lazy_rfc.py     the lazy percpu counter with an embedded percpu_counter, L-Z (seed 001's patch)
atomic_mode.py  an atomic-mode percpu_counter (ZhangPeng's RFC v2)
rss_split.py    pre-6.2 split rss
vma_unlink.py   unlink_file_vma, batched and unbatched; batch histograms
stack_cache.py  the per-CPU cache of vmapped stacks
workloads.py    doexec, lmbench, stress-ng, fork-many, launch, page-fault and open-missing iterations
queueing.py     exact MVA, a nested lock (surrogate delays), two classes (Schweitzer-Bard; exact multiclass)
measure.py      --measure: builds and runs measure.c, the machine's own costs
throughput.py   machines, pricing, calibration on named figures (calibration.json), validation, bands
"""
