# SPDX-License-Identifier: GPL-2.0-only
"""unlink_file_vma_batch_add() that flushes only when full: vmas of different files in one batch.

A patch that forgets why the batch must be homogeneous: ``process`` locks the
mapping of ``vb->vmas[0]`` only, so the vmas of a second file that joined the
batch are removed from their i_mmap tree without their own mapping's
``i_mmap_rwsem`` (the ``VM_WARN_ON_ONCE`` in the merged code is there for
this), while an rmap walker may be reading that tree. In the dynamically
linked layout libc's batch takes in ld.so's first three vmas. At the kernel's
ARRAY_SIZE of 8 the number of lock acquisitions happens to be the merged
code's (ten vmas of libc and ld.so: 8 + 2 against 5 + 5, two either way), so
only the lock property catches it there; at ARRAY_SIZE 2 the count differs
too (5 against 6).
"""
from checker import Param
from checker.specs.vma_unlink_batch import VmaUnlinkBatch


class UnlinkBatchNoFileCheck(VmaUnlinkBatch, expect_violated=(
        "removed_under_own_write_lock", "a_batch_is_flushed_by_a_file_change")):
    """unlink_file_vma_batch_add() without the vm_file comparison."""

    kernel = VmaUnlinkBatch.kernel + "; the vm_file comparison left out of unlink_file_vma_batch_add()"
    explore_sweeps = ({},)  # the liveness point (forever=1, layout 3) is the correct spec's
    layout = Param(1, domain=(1,), doc="1: dynamic (exe, libc, ld.so): two files in one group")
    size = Param(8, domain=range(1, 17), explore=(8,), doc="ARRAY_SIZE(vb->vmas) (8 in the kernel)")
    batched = Param(1, domain=(1,), doc="the batched code (the bug is in it)")

    @staticmethod
    def batch_add_flushes(s, vma):
        """(the bug) vb->count == ARRAY_SIZE(vb->vmas)  (no vm_file comparison)"""
        return s.vb_count == s.size
