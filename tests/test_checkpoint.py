# SPDX-License-Identifier: GPL-2.0-only
"""Checkpoint and resume (``--checkpoint DIR``, ``--resume DIR``): a parallel
exploration stopped at any point (a killed worker, Ctrl-C, a state limit)
resumes from its last whole BFS level to exactly the uninterrupted run's
counts, verdicts and traces, counting nothing twice; a lost worker is an
inconclusive run naming ``--resume DIR``, never a hang and never a pass."""
import json
import os
import signal

import pytest
from conftest import FIXTURES
from test_parallel import _model, _summary

from checker import loader
from checker.cli import main
from checker.errors import UsageError
from checker.explore import explore
from checker.explore import parallel
from checker.explore.parallel import ForkPool, parallel_search
from checker.result import INCONCLUSIVE
from checker.language.compile import Model
from checker.verify import own_sets, parse_set, verify


def _killing_pool(level):
    class KillsAWorker(ForkPool):
        """SIGKILLs worker 1 when level ``level`` is to be expanded (levels 0..level-1 are saved)."""

        def __init__(self, *args):
            super().__init__(*args)
            self.expands = 0

        def call(self, name, per_worker):
            if name == "expand":
                self.expands += 1
                if self.expands == level + 1:
                    os.kill(self.procs[1].pid, signal.SIGKILL)
            return super().call(name, per_worker)

    return KillsAWorker


@pytest.mark.parametrize("spec,level", [("stack_stale", 4), ("eager_limited_overshoot", 9),
                                        ("hotplug_dying_partial", 1)])
def test_a_killed_worker_resumes_to_the_uninterrupted_result(tmp_path, spec, level):
    full = _summary(explore(_model(spec)))
    st = parallel_search(_model(spec), jobs=2, symmetry=True, pool=_killing_pool(level), checkpoint_root=tmp_path)
    assert st.stopped.startswith("worker_lost: worker 1 (pid ") and f"resume with --resume {tmp_path}" in st.stopped
    resumed = explore(_model(spec), jobs=2, checkpoint=tmp_path, resume=True)
    assert _summary(resumed) == full


def test_a_lost_worker_makes_every_verdict_inconclusive_and_the_run_exit_3(tmp_path, monkeypatch):
    monkeypatch.setattr(parallel, "ForkPool", _killing_pool(2))
    cls = loader.resolve(["eager_fold_gt"])[0]  # a bug spec: its violation, found by level 2, is not shown either
    report = verify([cls], sets=own_sets(cls, parse_set(["ncpus=2", "batch=2", "ops=3"])), mode="explore",
                    jobs=2, checkpoint=tmp_path)
    assert report.exit_code == 3 and report.checks
    assert all(c.verdict == INCONCLUSIVE and f"resume with --resume {tmp_path}" in c.reason for c in report.checks)


def test_interrupted_by_ctrl_c_resumes_to_the_same_result(tmp_path):
    full = _summary(explore(_model("stack_teardown_keeps_pointer"), jobs=2))

    def interrupt(st):
        if st.depth == 6:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        explore(_model("stack_teardown_keeps_pointer"), jobs=2, checkpoint=tmp_path, progress=interrupt)
    assert _summary(explore(_model("stack_teardown_keeps_pointer"), jobs=2, checkpoint=tmp_path,
                            resume=True)) == full


def test_a_run_cut_at_a_state_limit_resumes_with_a_higher_one(tmp_path):
    model = lambda: _model("hotplug_sum_dead")  # noqa: E731
    cut = explore(model(), jobs=2, max_states=700, checkpoint=tmp_path)
    assert cut.stopped_because == "max_states" and cut.states == 700
    assert _summary(explore(model(), jobs=2, max_states=700, checkpoint=tmp_path, resume=True)) == _summary(cut)
    assert _summary(explore(model(), jobs=2, checkpoint=tmp_path, resume=True)) == _summary(explore(model()))


def test_context_rules_seen_before_the_kill_are_kept(tmp_path):
    cls = loader.resolve([f"{FIXTURES / 'contexts.py'}:AbbaLocks"])[0]
    seq = explore(Model(cls)).outcomes["lock_order"]
    st = parallel_search(Model(cls), jobs=2, symmetry=True, pool=_killing_pool(3), checkpoint_root=tmp_path)
    assert st.stopped.startswith("worker_lost")
    resumed = explore(Model(cls), jobs=2, checkpoint=tmp_path, resume=True).outcomes["lock_order"]
    assert seq.verdict == "violated" and "inconsistent lock order" in seq.finding
    assert (resumed.verdict, resumed.trace, resumed.second_trace, resumed.finding) == \
        (seq.verdict, seq.trace, seq.second_trace, seq.finding)


def test_a_checkpoint_is_not_overwritten_nor_resumed_by_another_run(tmp_path):
    explore(_model("stack_stale"), jobs=2, checkpoint=tmp_path)
    with pytest.raises(UsageError, match="already holds a checkpoint.*--resume"):
        explore(_model("stack_stale"), jobs=2, checkpoint=tmp_path)
    with pytest.raises(UsageError, match="jobs=2 there, 3 here"):
        explore(_model("stack_stale"), jobs=3, checkpoint=tmp_path, resume=True)


def test_cli_resume_gives_the_uninterrupted_report(cli, tmp_path, capsys):
    sets = ("--set", "ncpus=2", "--set", "batch=2", "--set", "ops=3")
    cls = loader.resolve(["eager_fold_gt"])[0]
    plain = verify([cls], sets=own_sets(cls, parse_set(s for s in sets if s != "--set")), mode="explore")

    # --jobs runs the interpreter; the single-process run may hand a point to the compiled engine
    skip = {"seconds", "engine", "engine_note"}

    def checks(r):
        assert r.returncode == 0, r.stderr
        return [{k: v for k, v in c.items() if k not in skip} for c in json.loads(r.stdout)["checks"]]

    args = ("verify", "eager_fold_gt", *sets, "--mode", "explore", "--format", "json", "--jobs", "2")
    expected = [{k: v for k, v in c.items() if k not in skip} for c in plain.to_json()["checks"]]
    assert checks(cli(*args, "--checkpoint", str(tmp_path))) == expected
    assert checks(cli(*args, "--resume", str(tmp_path))) == expected
    with pytest.raises(SystemExit) as e:
        main([*args, "--checkpoint", str(tmp_path), "--resume", str(tmp_path)])
    assert e.value.code == 2 and "not allowed with argument" in capsys.readouterr().err
