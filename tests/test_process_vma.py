# SPDX-License-Identifier: GPL-2.0-only
"""vma_unlink_batch written as process functions (specs/vma_unlink_batch_process.py) against the hand-written
pc-machine (specs/vma_unlink_batch.py).

The claim: at the same point, the same distinct states, transitions, depth, verdicts and shortest trace lengths
(sc: neither spec is annotated for the weak-memory models, as nothing in it is a memory-ordering primitive; the
liveness sweep, forever=1, is not ported).
"""
from __future__ import annotations

import pytest

from port_equality import equal_runs, point_id
from specs.vma_unlink_batch import VmaUnlinkBatch
from specs.vma_unlink_batch_process import VmaUnlinkBatchProcess


def compare(params: dict, engine: str = "interpreted"):
    return equal_runs(VmaUnlinkBatch, VmaUnlinkBatchProcess, params, engine=engine)


_ids = point_id


# the first points of the default sweep (layout 0, both sizes), the unbatched loop, and the layout with a
# hugetlb vma and two struct files of one inode (both lock paths)
FIRST = [dict(layout=0, size=2), dict(layout=0, size=2, batched=0), dict(layout=3, size=2)]


@pytest.mark.parametrize("params", FIRST, ids=_ids)
def test_port_equals_the_pc_machine_at_the_first_points(params):
    h, p = compare(params)
    assert all(o.verdict == "holds" for o in p.outcomes.values())


@pytest.mark.differential
@pytest.mark.parametrize("params", [dict(layout=0, size=8), dict(layout=1, size=2), dict(layout=2, size=2),
                                    dict(layout=2, size=8), dict(layout=3, size=2, batched=0),
                                    dict(layout=3, size=2, walkers=2)], ids=_ids)
def test_port_equals_the_pc_machine_at_every_point(params):
    compare(params)


@pytest.mark.differential
def test_port_equals_the_pc_machine_on_the_compiled_explorer():
    compare(dict(layout=3, size=2), engine="compiled")
