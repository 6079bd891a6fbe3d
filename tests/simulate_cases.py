# SPDX-License-Identifier: GPL-2.0-only
"""The committed simulation cases: (bug spec, parameters, runs, depth, seed, property expected violated).

Each is found by ``verify --simulate RUNS --depth D --seed S`` with these parameters (tests/test_simulate.py).
Where the spec's domain allows it and the walks find the bug at all, the CPU count is 64 with a small batch
and few adds, so that the bug is reachable in a short walk. The hotplug bugs are found at 2 CPUs only (at 64 a
sum takes 64 steps that no add may overlap, while a CPU is between going down and its fold: not seen in
100 runs); the lazy counter and stack cache specs stop at 3 CPUs (their ``ncpus`` domain); the grouped, vma and
UP specs have no CPU count. ``runs`` is the index of the run that finds the bug, plus one (run r
depends only on the seed and r): each case costs at most a few seconds. Cases tried and not committed are listed in docs/simulate.md.
"""

CASES = [
    ("eager_fold_gt", {"variant": "B", "ncpus": 64, "batch": 2, "ops": 2}, 2, 200, 0, "read_bound"),
    ("eager_sub_count", {"ncpus": 64, "batch": 2, "ops": 2}, 1, 300, 0, "conservation"),
    ("eager_cmpxchg_paren", {"ncpus": 64, "batch": 2, "ops": 2}, 1, 300, 0, "local_bound"),
    ("eager_irq_add", {"ncpus": 64, "batch": 2, "ops": 2}, 1, 300, 0, "local_bound"),
    ("eager_sum_unlocked", {"ncpus": 64, "batch": 2, "ops": 2}, 2, 400, 11, "sum_exact_without_overlap"),
    ("hotplug_sum_dead", {"ncpus": 2, "batch_floor": 1}, 14, 300, 0, "sum_exact_without_overlap"),
    ("hotplug_dying_partial", {"ncpus": 2}, 138, 300, 0, "sum_exact_without_overlap"),
    ("hotplug_compare_dying", {"ncpus": 2, "batch_floor": 4, "add": "C"}, 22, 300, 0, "compare_margin_sound"),
    ("hotplug_compare_shrink", {"ncpus": 2}, 2, 300, 0, "compare_margin_sound"),
    ("eager_limited_overshoot", {"ncpus": 2, "batch": 2}, 5, 300, 2, "limit_respected"),
    ("rss_exit_without_sync", {"threads": 64, "T": 2, "U": 2, "cow": 0}, 1, 150, 0, "no_lost_update"),
    ("up_add_race", {"ops": 1, "irq": 1}, 1, 50, 0, "read_is_exact"),
    ("lazy_decode_logical_shift", {"ncpus": 3}, 1, 100, 0, "no_update_lost"),
    ("lazy_rfc_double_init", {"ncpus": 3}, 46, 100, 0, "fbc_initialised_once"),
    ("lazy_rfc_read_positive", {"ncpus": 3}, 3, 100, 0, "read_positive_never_negative"),
    ("lazy_switch_loser_preempt", {"ncpus": 3}, 18, 100, 0, "preempt_balanced_on_return"),
    ("lazy_mmdrop_uninit_index", {"counters": 2}, 1, 100, 0, "memory_safe"),
    ("stack_stale", {"ncpus": 3, "nr_cached": 1}, 64, 300, 0, "reused_stack_zeroed"),
    ("stack_memcg_charge_fail", {"ncpus": 3, "fixes": 0}, 42, 300, 0, "stack_in_one_place"),
    ("stack_release_read_write", {"ncpus": 1, "ntasks": 2, "nr_cached": 1, "migrations": 0, "failures": 0}, 78, 200, 1,
     "stack_in_one_place"),
    ("stack_teardown_keeps_pointer", {"ncpus": 3}, 28, 300, 0, "stack_in_one_place"),
    ("grouped_destroy_interior", {"counters": 2}, 54, 300, 0, "memory_safe"),
    ("mm_init_leaks_context", {"config": "SMP", "counters": 2}, 2, 100, 0, "no_leak"),
    ("unlink_batch_no_final", {"layout": 0, "forever": 0}, 1, 300, 0, "removed_exactly_once"),
    ("unlink_batch_full_gt", {"size": 2}, 1, 300, 0, "batch_within_array"),
    ("unlink_batch_no_file_check", {}, 1, 300, 0, "removed_under_own_write_lock"),
    ("unlink_batch_free_before_final", {"size": 2}, 1, 300, 0, "removed_before_free_pgd_range"),
    ("unlink_batch_by_mapping", {"size": 2}, 1, 300, 0, "write_locks_match_formula"),
]
