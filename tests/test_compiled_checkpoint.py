# SPDX-License-Identifier: GPL-2.0-only
"""``--checkpoint``/``--resume`` on the compiled engine: a run killed mid-search resumes from its last
whole level and ends with the uninterrupted run's states, verdicts and traces; level files are sealed
and checked (checker.persist) before a resume believes them."""
import os
import signal
import threading
import time

import pytest

from checker.errors import UsageError
from checker.explore import explore
from checker.language.compile import Model
from eager_table import EagerTable
from test_compiled_jobs import _searches


def outcome_view(r):
    return {n: (o.verdict, o.reason, o.trace, o.initial_state) for n, o in r.outcomes.items()}


def same(a, b):
    assert (a.states, a.transitions, a.depth, a.complete) == (b.states, b.transitions, b.depth, b.complete)
    assert outcome_view(a) == outcome_view(b)


def test_a_checkpointed_run_and_a_resumed_one_give_the_plain_runs_result(tmp_path):
    plain = explore(EagerTable(ncpus=3, ops=6, batch=3), symmetry=False, engine="compiled")
    saved = explore(EagerTable(ncpus=3, ops=6, batch=3), symmetry=False, engine="compiled", checkpoint=tmp_path,
                    max_states=20_000)
    assert saved.engine == "compiled" and "checkpoints" in saved.engine_note and not saved.complete
    resumed = explore(EagerTable(ncpus=3, ops=6, batch=3), symmetry=False, engine="compiled", checkpoint=tmp_path,
                      resume=True)
    assert "resumed from the checkpoint's level" in resumed.engine_note
    same(plain, resumed)


@pytest.mark.differential
def test_a_killed_run_resumes_to_the_same_states_and_verdicts(tmp_path):
    model = Model(EagerTable(ncpus=3, ops=9, batch=3))  # 1.3 M states: seconds
    plain = explore(model, symmetry=False, engine="compiled")
    before = _searches()
    box = {}
    t = threading.Thread(target=lambda: box.update(r=explore(Model(EagerTable(ncpus=3, ops=9, batch=3)),
                                                             symmetry=False, engine="compiled", checkpoint=tmp_path)))
    t.start()
    for _ in range(500):  # until a few levels are sealed
        if len(list(tmp_path.glob("*/level-*.bin.manifest"))) >= 8:
            break
        time.sleep(0.01)
    for pid in _searches() - before:
        os.kill(pid, signal.SIGKILL)
    t.join(60)
    killed = box["r"]
    assert killed.stopped_because == "killed" and "holds" not in set(killed.verdicts.values())
    assert not (_searches() - before)
    resumed = explore(Model(EagerTable(ncpus=3, ops=9, batch=3)), symmetry=False, engine="compiled",
                      checkpoint=tmp_path, resume=True)
    assert "resumed from the checkpoint's level" in resumed.engine_note
    same(plain, resumed)


def test_a_damaged_level_is_refused_naming_it(tmp_path):
    explore(EagerTable(ncpus=2, ops=2, batch=2), symmetry=False, engine="compiled", checkpoint=tmp_path,
            max_states=100)
    f = sorted(tmp_path.glob("*/level-000001.bin"))[0]
    data = bytearray(f.read_bytes())
    data[-1] ^= 1
    f.write_bytes(bytes(data))
    with pytest.raises(UsageError, match=r"level-000001.bin does not match its manifest.*delete"):
        explore(EagerTable(ncpus=2, ops=2, batch=2), symmetry=False, engine="compiled", checkpoint=tmp_path,
                resume=True)


def test_another_runs_checkpoint_is_refused(tmp_path):
    explore(EagerTable(ncpus=2, ops=2, batch=2), symmetry=False, engine="compiled", checkpoint=tmp_path / "c",
            max_states=100)
    with pytest.raises(UsageError, match=r"already holds a checkpoint"):
        explore(EagerTable(ncpus=2, ops=2, batch=2), symmetry=False, engine="compiled", checkpoint=tmp_path / "c")
    with pytest.raises(UsageError, match=r"is of another run \(symmetry=False there, True here\)"):
        explore(EagerTable(ncpus=2, ops=2, batch=2), symmetry=True, engine="compiled", checkpoint=tmp_path / "c",
                resume=True)
    explore(EagerTable(ncpus=2, ops=2, batch=2), symmetry=False, engine="interpreted", checkpoint=tmp_path / "i",
            max_states=100)
    with pytest.raises(UsageError, match=r"is of another run \(engine=None there, 'compiled' here\)"):
        explore(EagerTable(ncpus=2, ops=2, batch=2), symmetry=False, engine="compiled", checkpoint=tmp_path / "i",
                resume=True)
