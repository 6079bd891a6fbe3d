# SPDX-License-Identifier: GPL-2.0-only
"""``verify --workers N``: engine runs on forked processes give the one-at-a-time run's report (checks, run
numbers, warnings, errors), a spec's error ends that spec's runs alone, an engine bug is raised, not hung on,
and an interrupt leaves every undecided run inconclusive and no worker behind."""
from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
import time

import pytest
from conftest import ROOT
from test_faults_cli import tiny

from checker import loader
from checker.run_pool import WorkerFailed
from checker.verify import verify


def _comparable(report) -> tuple:
    """The report without its times (and without whether a proof was read from the proof cache, which the
    first of two runs fills)."""
    checks = [{k: ({x: y for x, y in v.items() if x != "cached" and not x.endswith("seconds")} if k == "extra" else v)
               for k, v in dataclasses.asdict(c).items() if k != "seconds"} for c in report.checks]
    return checks, report.warnings, [e.to_json() for e in report.errors], report.exit_code


@pytest.mark.parametrize("names, mode", [(["eager_fold_gt", "rss_split"], "explore"), (["rss_split"], "prove")])
def test_workers_give_the_one_at_a_time_report(names, mode):
    classes = loader.resolve(names)
    one = verify(classes, mode=mode, workers=1)
    two = verify(classes, mode=mode, workers=2)
    assert len(one.checks) > 20
    assert _comparable(two) == _comparable(one)


def _tiny_pair(tmp_path, body: str) -> list[type]:
    """The tiny spec with ``body`` in its action, and a second spec after it that runs cleanly."""
    bad = tiny(tmp_path, "bad.py", body=body)
    good = tiny(tmp_path, "good.py")
    (tmp_path / "good.py").write_text((tmp_path / "good.py").read_text().replace("class TinyCounter", "class Good"))
    return loader.resolve([bad, good])


def test_a_spec_error_at_its_second_point_ends_that_spec_alone_as_one_at_a_time_does(tmp_path):
    classes = _tiny_pair(tmp_path, "if isinstance(s.total, int) and len(s.local) == 2:\n"
                                   "            raise ValueError('boom at two CPUs')")
    one = verify(classes, mode="explore", workers=1)
    two = verify(classes, mode="explore", workers=2)
    assert [e.message for e in one.errors] and "boom at two CPUs" in one.errors[0].message
    assert _comparable(two) == _comparable(one)
    assert {c.spec for c in two.checks} == {"tiny_counter", "good"}


def test_an_engine_bug_in_a_worker_is_raised_with_its_traceback(monkeypatch):
    import operator

    import checker.engines as engines

    # raised in C, from no frame of a spec or a test, as the checker's own bug would be
    monkeypatch.setattr(engines, "run", operator.floordiv)
    with pytest.raises(WorkerFailed, match="TypeError: unsupported operand"):
        verify(loader.resolve(["eager_fold_gt"]), mode="explore", workers=2)


def test_the_deadline_kills_the_workers_and_leaves_their_runs_inconclusive(tmp_path):
    """At two CPUs the action never returns (and says which process runs it): the one-CPU point is
    decided, the two-CPU point is inconclusive at the deadline, and its worker is gone."""
    body = ("if isinstance(s.total, int) and len(s.local) == 2:\n"
            "            open('worker.pid', 'w').write(str(os.getpid()))\n"
            "            while True:\n"
            "                time.sleep(0.05)")
    path = tiny(tmp_path, body=body)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    p = subprocess.run([sys.executable, "-m", "checker", "verify", path, "--mode", "explore", "--engine",
                        "interpreted", "--workers", "2", "--deadline", "5", "--json", str(tmp_path / "r.json")],
                       cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert p.returncode == 3, p.stderr
    assert "Traceback" not in p.stderr
    checks = json.loads((tmp_path / "r.json").read_text())["checks"]
    by_point = {(c["params"]["ncpus"], c["property"]): (c["verdict"], c["reason"]) for c in checks}
    assert by_point[(1, "nothing_lost")][0] == "holds"
    assert by_point[(2, "nothing_lost")] == ("inconclusive", "timeout: deadline")
    pid = int((tmp_path / "worker.pid").read_text())
    end = time.monotonic() + 10
    while os.path.exists(f"/proc/{pid}") and time.monotonic() < end:
        time.sleep(0.05)
    assert not os.path.exists(f"/proc/{pid}") or "Z" in open(f"/proc/{pid}/stat").read().split()[2]


def test_a_worker_killed_from_outside_leaves_its_run_inconclusive_and_the_others_run(tmp_path):
    """The OOM killer's way (SIGKILL) at two CPUs: that run is undecided with the reason, the other point and
    the spec after it are decided, and the exit code is 3."""
    body = ("if isinstance(s.total, int) and len(s.local) == 2:\n"
            "            os.kill(os.getpid(), signal.SIGKILL)")
    classes = _tiny_pair(tmp_path, body)
    report = verify(classes, mode="explore", workers=2)
    lost = {c.reason for c in report.checks if c.verdict == "inconclusive"}
    assert len(lost) == 1 and "died: killed by SIGKILL" in lost.pop()
    assert {(c.spec, c.params["ncpus"]) for c in report.checks if c.verdict == "holds"} == {
        ("tiny_counter", 1), ("good", 1), ("good", 2)}
    assert report.exit_code == 3
