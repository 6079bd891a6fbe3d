# SPDX-License-Identifier: GPL-2.0-only
"""free_pgtables freeing the group's page tables before unlink_file_vma_batch_final().

The order matters: the comment in free_pgtables says "Hide vma from rmap and
truncate_pagecache before freeing pgtables". With ``free_pgd_range`` moved
above ``unlink_file_vma_batch_final``, the vmas of the last batch are still in
their i_mmap tree when their page tables are freed, and an rmap walker that
gets ``i_mmap_rwsem`` for read before ``_final`` takes it for write walks
freed page tables (``page_vma_mapped_walk``).
"""
from checker import Param
from checker.specs.vma_unlink_batch import VmaUnlinkBatch, _free_pgt


class UnlinkBatchFreeBeforeFinal(VmaUnlinkBatch, expect_violated=(
        "removed_before_free_pgd_range", "nothing_freed_while_reachable", "memory_safe")):
    """free_pgd_range(); unlink_file_vma_batch_final(&vb);  -- in that order."""

    kernel = VmaUnlinkBatch.kernel + "; free_pgd_range() called before unlink_file_vma_batch_final()"
    explore_sweeps = ({},)  # the liveness point (forever=1, layout 3) is the correct spec's
    batched = Param(1, domain=(1,), doc="the batched code (the bug is in it)")
    layout = Param(0, domain=(0, 1), explore=(0,), doc="0: a static binary; 1: dynamic")

    @staticmethod
    def pgd_freed(s, addr, before_final: bool) -> dict:
        """(the bug) free_pgd_range(tlb, addr, vma->vm_end, ...) first, in the step before
        unlink_file_vma_batch_final(); nothing freed after it."""
        return _free_pgt(s, addr) if before_final else {}
