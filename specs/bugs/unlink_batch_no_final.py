# SPDX-License-Identifier: GPL-2.0-only
"""free_pgtables without unlink_file_vma_batch_final(): the last batch is never processed.

A patch author batching the unlinks must flush what is left before the group's
page tables go. Without ``unlink_file_vma_batch_final(&vb)``, the vmas still in
the batch when the group ends stay in their mapping's i_mmap tree (the next
group's ``unlink_file_vma_batch_init`` just sets ``count = 0``), while
``free_pgd_range`` frees their page tables and ``remove_vma`` frees the vmas:
an rmap walker that takes ``i_mmap_rwsem`` for read afterwards finds a freed
vma with freed page tables. Shortest trace: the first group's batch is built,
then ``free_pgd_range`` frees its page tables with the batch still linked.
The liveness property says it without a walker: a batch is queued and never
flushed (the next group's init only forgets it).
"""
from checker import Param
from checker.specs.vma_unlink_batch import VmaUnlinkBatch


class UnlinkBatchNoFinal(VmaUnlinkBatch, expect_violated=(
        "removed_exactly_once", "removed_before_free_pgd_range", "nothing_freed_while_reachable",
        "final_state_equals_unbatched", "write_locks_match_formula", "memory_safe", "a_queued_batch_is_flushed")):
    """free_pgtables() calling free_pgd_range() without unlink_file_vma_batch_final() first."""

    kernel = VmaUnlinkBatch.kernel + "; the call to unlink_file_vma_batch_final() left out"
    # Also with walkers that never stop: the group's last batch is never flushed (a liveness failure).
    explore_sweeps = ({}, {"forever": 1, "layout": 0})
    batched = Param(1, domain=(1,), doc="the batched code (the bug is in it)")
    layout = Param(0, domain=(0, 1), explore=(0, 1), doc="0: a static binary; 1: dynamic (exe, libc, ld.so)")
    size = Param(2, domain=range(1, 17), explore=(2,), doc="ARRAY_SIZE(vb->vmas): 2, so that batches flush and "
                 "the walker can be seen waiting as in the merged code")

    @staticmethod
    def batch_final_flushes(s):
        """(the bug) no unlink_file_vma_batch_final(&vb): the batch is never processed, straight on to
        free_pgd_range."""
        return False
