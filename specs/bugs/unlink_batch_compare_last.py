# SPDX-License-Identifier: GPL-2.0-only
"""An equivalent mutant of unlink_file_vma_batch_add(): it must NOT be reported.

The code changes, the behaviour does not: the file test compares with the
last vma batched (``vb->vmas[vb->count - 1]``) instead of the first, and the
full test is ``>=`` instead of ``==``. Both are equivalent because the batch
is homogeneous (every vma in it has the first one's ``vm_file``) and
``count`` never exceeds ``ARRAY_SIZE``: the checker proves exactly that at
each explored point, so every property holds, with the state counts of the
merged code. A checker that reported this spec would be reporting syntax,
not behaviour.
"""
from checker import And, Or, Select
from checker.specs.vma_unlink_batch import VmaUnlinkBatch, _file_of


class UnlinkBatchCompareLast(VmaUnlinkBatch):
    """unlink_file_vma_batch_add() with vmas[count - 1] for vmas[0] and >= for == (equivalent)."""

    kernel = (VmaUnlinkBatch.kernel + "; equivalent mutant: vb->vmas[vb->count - 1]->vm_file and "
              "vb->count >= ARRAY_SIZE(vb->vmas) in unlink_file_vma_batch_add()")

    @staticmethod
    def batch_add_flushes(s, vma):
        """(equivalent) (vb->count > 0 && vb->vmas[vb->count - 1]->vm_file != vma->vm_file) ||
        vb->count >= ARRAY_SIZE(vb->vmas)"""
        return Or(And(s.vb_count > 0, _file_of(s, Select(s.vb_vmas, s.vb_count - 1)) != _file_of(s, vma)),
                  s.vb_count >= s.size)
