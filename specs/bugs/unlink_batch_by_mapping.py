# SPDX-License-Identifier: GPL-2.0-only
"""unlink_file_vma_batch_add() batching by f_mapping instead of vm_file: safe, but not the patch.

A variant a reviewer could propose (the lock is per mapping, so two
``struct file``s of one inode could share a batch). It keeps every safety
property: each vma is still removed under its own mapping's write lock. It is
not the merged behaviour: with two opens of one inode in one group it takes
fewer locks than the closed formula of the merged code, and the lock-count
property says so (and no batch is flushed by a change of vm_file). This spec shows that the
lock-count property tells the variants apart.
"""
from checker import And, Or, Param, Select
from checker.specs.vma_unlink_batch import VmaUnlinkBatch, _map_of


class UnlinkBatchByMapping(VmaUnlinkBatch, expect_violated=(
        "write_locks_match_formula", "a_batch_is_flushed_by_a_file_change")):
    """unlink_file_vma_batch_add() comparing vb->vmas[0]->vm_file->f_mapping with vma->vm_file->f_mapping."""

    kernel = VmaUnlinkBatch.kernel + "; the batch compares f_mapping instead of vm_file"
    explore_sweeps = ({},)  # the liveness point (forever=1, layout 3) is the correct spec's
    layout = Param(3, domain=(3,), doc="3: two opens of one inode around a hugetlbfs vma")
    batched = Param(1, domain=(1,), doc="the batched code (the variant is in it)")

    @staticmethod
    def batch_add_flushes(s, vma):
        """(the variant) (vb->count > 0 && vb->vmas[0]->vm_file->f_mapping != vma->vm_file->f_mapping) ||
        vb->count == ARRAY_SIZE(vb->vmas)"""
        return Or(And(s.vb_count > 0, _map_of(s, Select(s.vb_vmas, 0)) != _map_of(s, vma)), s.vb_count == s.size)
