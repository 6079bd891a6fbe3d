# SPDX-License-Identifier: GPL-2.0-only
"""vma_unlink_batch, written as process functions (specs/vma_unlink_batch.py), against the hand-written pc machine
it replaced (tests/pc_machines/vma_unlink_batch.py).

The claim: at the same point, the same distinct states, transitions, depth, verdicts and shortest trace lengths
(sc: neither spec is annotated for the weak-memory models, as nothing in it is a memory-ordering primitive), and
at the liveness point (forever=1) the same liveness verdict.
"""
from __future__ import annotations

import pytest

from checker.language.model import resolve_params
from checker.specs.vma_unlink_batch import VmaUnlinkBatch
from checker.verify import explore_checks
from pc_machines.vma_unlink_batch import VmaUnlinkBatch as PcMachine
from port_equality import equal_runs, point_id


def compare(params: dict, engine: str = "interpreted"):
    return equal_runs(PcMachine, VmaUnlinkBatch, params, engine=engine)


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
                                    dict(layout=3, size=2, walkers=2), dict(layout=3, size=2, forever=1)],
                         ids=_ids)
def test_port_equals_the_pc_machine_at_every_point(params):
    compare(params)


def _liveness(cls, params):
    checks = explore_checks(cls, resolve_params(cls, params))
    return {c.property: (c.verdict, c.states) for c in checks if c.kind in ("eventually", "leads_to")}


@pytest.mark.differential
@pytest.mark.parametrize("params", [dict(forever=1, layout=3, size=2), dict(forever=1, layout=3, size=2, batched=0)],
                         ids=_ids)
def test_port_keeps_the_pc_machines_liveness_verdict(params):
    """The liveness sweep: walkers that never stop, the writer's handoff, i_mmap_lock_write strongly fair."""
    assert _liveness(PcMachine, params) == _liveness(VmaUnlinkBatch, params) == \
        {"a_queued_batch_is_flushed": ("holds", _liveness(PcMachine, params)["a_queued_batch_is_flushed"][1])}


@pytest.mark.differential
def test_port_equals_the_pc_machine_on_the_compiled_explorer():
    compare(dict(layout=3, size=2), engine="compiled")
