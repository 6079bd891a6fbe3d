# SPDX-License-Identifier: GPL-2.0-only
"""unlink_file_vma_batch_add() testing ``count > ARRAY_SIZE`` for a full batch: one vma too many.

The off-by-one Liam R. Howlett's review looked for in seed 004 (the merged code
tests ``vb->count == ARRAY_SIZE(vb->vmas)`` before storing at ``vmas[count]``).
With ``>`` the batch flushes only when it already holds ARRAY_SIZE + 1 vmas,
so ``vb->vmas[ARRAY_SIZE]`` is written: the word after the array in
free_pgtables' stack frame. The model keeps that word, so the removals still
happen (as they would if nothing else lived there); the bound is what breaks,
and one lock acquisition per ARRAY_SIZE + 1 vmas instead of ARRAY_SIZE (no
batch is ever flushed when exactly full: ``a_full_batch_is_flushed`` fails). Found
at the kernel's ARRAY_SIZE of 8 with the nine-piece layout (and at 2).
"""
from checker import And, Or, Param, Select
from checker.specs.vma_unlink_batch import VmaUnlinkBatch, _file_of


class UnlinkBatchFullGt(VmaUnlinkBatch, expect_violated=(
        "batch_within_array", "write_locks_match_formula", "a_full_batch_is_flushed")):
    """unlink_file_vma_batch_add() with vb->count > ARRAY_SIZE(vb->vmas) as the full test."""

    kernel = VmaUnlinkBatch.kernel + "; the full test written vb->count > ARRAY_SIZE(vb->vmas)"
    explore_sweeps = ({},)  # the liveness point (forever=1, layout 3) is the correct spec's
    layout = Param(2, domain=(1, 2), doc="1: dynamic (exe, libc, ld.so); 2: one file in 9 pieces")
    size = Param(8, domain=range(1, 17), explore=(2, 8), doc="ARRAY_SIZE(vb->vmas) (8 in the kernel)")
    batched = Param(1, domain=(1,), doc="the batched code (the bug is in it)")

    @staticmethod
    def batch_add_flushes(s, vma):
        """(the bug) (vb->count > 0 && vb->vmas[0]->vm_file != vma->vm_file) || vb->count > ARRAY_SIZE(vb->vmas)"""
        return Or(And(s.vb_count > 0, _file_of(s, Select(s.vb_vmas, 0)) != _file_of(s, vma)), s.vb_count > s.size)
