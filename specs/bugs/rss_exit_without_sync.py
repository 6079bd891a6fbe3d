# SPDX-License-Identifier: GPL-2.0-only
"""rss_split with exit_mm() that does not call sync_mm_rss(): late faults leak.

History. Split RSS counting (v2.6.34) synced a thread's cached deltas once
on exit, in do_exit() "before statistics gathering". The exit path can still
fault after that point: mm_release() does put_user(0, tsk->clear_child_tid)
(and exit_robust_list() reads user memory), and such a fault goes through
handle_mm_fault() and add_mm_counter_fast() into current->rss_stat, which
nobody flushes before the task and its rss_stat are gone. Konstantin
Khlebnikov's check_mm() consistency check (c3f0327f8e9d, "mm: add rss
counters consistency check", v3.4) made it visible as "BUG: Bad rss-counter
state mm:... idx:... val:..." when the mm is freed. The fix, "mm: correctly
synchronize rss-counters at exit/exec" (v3.5; a first version, 40af1bbdca47,
synced from mmput() and was reverted), syncs again in exit_mm() after
exit_mm_release() and in exec_mmap() after exec_mm_release(): the
sync_mm_rss(mm) that exit_mm() in kernel/exit.c has until v6.2.

This spec is rss_split with that second sync removed: exit_mm() drops the
deltas of the late faults together with the task. Shortest trace (4 steps):
do_exit's sync, a late fault (check_sync_rss_stat, add_mm_counter_fast), and
exit_mm without the sync.
"""
from checker import action, when
from checker.specs.rss_split import THREAD, RssSplit


class RssExitWithoutSync(RssSplit, expect_violated=("no_lost_update", "exact_after_exit")):
    """exit_mm() without sync_mm_rss(mm), as before v3.5: late faults' deltas are lost.

    The deltas of faults taken after do_exit()'s sync are freed with the
    task_struct and never reach mm->rss_stat."""

    kernel = ("kernel/exit.c exit_mm() before v3.5 \"mm: correctly synchronize rss-counters at exit/exec\" "
              "(no sync_mm_rss after mm_release), on top of rss_split's v6.1 model")

    @action(role="thread")
    def exit_mm(s, t):
        """BUG: exit_mm(): mm_release(current, mm); ...; current->mm = NULL, with no
        sync_mm_rss(mm): the cached deltas go away with the task (cache becomes 0 unsynced)."""
        return when(s.pc[t] == THREAD.exiting, cache={t: 0}, events={t: 0}, pc={t: THREAD.exited},
                    faults_left={t: 0}, unmaps_left={t: 0})
