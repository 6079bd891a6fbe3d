"""Executable fast-path models and the throughput model (DESIGN principle 7: models count, specs prove).

costs.py        the cost record every model returns
percpu_alloc.py mm/percpu.c: what an allocation and a free cost, and under which lock
eager.py        percpu_counter add/sum, init_many/destroy_many
grouped.py      mm_init/__mmdrop's rss counters, grouped or one by one
lazy.py         the lazy percpu counter (L-K)
rss_split.py    pre-6.2 split rss
vma_unlink.py   unlink_file_vma, batched and unbatched; batch histograms
stack_cache.py  the per-CPU cache of vmapped stacks
workloads.py    doexec, lmbench and stress-ng iterations as model operations
queueing.py     exact MVA of a closed network of lock stations
throughput.py   pricing, calibration (calibration.json) and validation
"""
