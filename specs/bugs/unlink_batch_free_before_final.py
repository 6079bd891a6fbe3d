# SPDX-License-Identifier: GPL-2.0-only
"""free_pgtables freeing the group's page tables before unlink_file_vma_batch_final().

The order matters: the comment in free_pgtables says "Hide vma from rmap and
truncate_pagecache before freeing pgtables". With ``free_pgd_range`` moved
above ``unlink_file_vma_batch_final``, the vmas of the last batch are still in
their i_mmap tree when their page tables are freed, and an rmap walker that
gets ``i_mmap_rwsem`` for read before ``_final`` takes it for write walks
freed page tables (``page_vma_mapped_walk``).
"""
from checker import If, Param, action, when
from checker.specs.vma_unlink_batch import PC, VmaUnlinkBatch, _free_pgt


class UnlinkBatchFreeBeforeFinal(VmaUnlinkBatch, expect_violated=(
        "removed_before_free_pgd_range", "nothing_freed_while_reachable", "memory_safe")):
    """free_pgd_range(); unlink_file_vma_batch_final(&vb);  -- in that order."""

    kernel = VmaUnlinkBatch.kernel + "; free_pgd_range() called before unlink_file_vma_batch_final()"
    explore_sweeps = ({},)  # the liveness point (forever=1, layout 3) is the correct spec's
    batched = Param(1, domain=(1,), doc="the batched code (the bug is in it)")
    layout = Param(0, domain=(0, 1), explore=(0,), doc="0: a static binary; 1: dynamic")

    @action(role="task")
    def batch_final(s, cpu):
        """(the bug) free_pgd_range(tlb, addr, vma->vm_end, ...) first -- then
        unlink_file_vma_batch_final(): if (vb->count > 0) unlink_file_vma_batch_process(vb);"""
        return when(s.pc == PC.final, pc=If(s.vb_count > 0, PC.lock, PC.free_pgd),
                    ret=If(s.vb_count > 0, PC.free_pgd, s.ret), **_free_pgt(s, s.addr))

    @action(role="task")
    def free_pgd_range(s, cpu):
        """free_pgtables(): (the page tables are already freed) vma = next; } while (vma);"""
        nxt = s.vma + 1
        return when(s.pc == PC.free_pgd, vma=If(nxt < s.nvmas, nxt, 0),
                    pc=If(nxt < s.nvmas, PC.top, PC.remove_vma))
