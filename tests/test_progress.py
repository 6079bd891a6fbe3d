# SPDX-License-Identifier: GPL-2.0-only
"""Live progress: one refreshing stderr line on a terminal, nothing otherwise."""
import io
import itertools
import time

from checker import Param, PerCpu, Role, Spec, action, explore, invariant, terminal, when
from checker.report.progress import Progress


class Wide(Spec):
    """8,000 states without symmetry: enough for the explorer to report progress."""
    kernel = "test fixture"
    ncpus = Param(3, domain=range(1, 4))
    cpus = Role("ncpus")
    x = PerCpu(0)

    @action(role="cpus")
    def inc(s, cpu):
        return when(s.x[cpu] < 19, x={cpu: s.x[cpu] + 1})

    @terminal
    def done(s):
        return True

    @invariant
    def bounded(s):
        return s.x[0] <= 19


def _ticking_clock():
    ticks = itertools.count()
    return lambda: float(next(ticks))  # a second per reading: every update is drawn


def test_exploration_progress_shows_states_rate_frontier_depth_elapsed():
    out = io.StringIO()
    progress = Progress(out, tty=True, clock=_ticking_clock())
    r = explore(Wide(), symmetry=False, progress=progress.exploring("wide [ncpus=3]"))
    assert r.states == 8000
    line = out.getvalue().split("\r")[1]
    for field in (" states ", " states/s ", "frontier ", "depth ", "s  wide [ncpus=3]"):
        assert field in line, line
    progress.clear()
    assert out.getvalue().endswith("\r")


def test_proof_progress_counts_obligations_to_the_total(tmp_path):
    from checker import loader
    from checker.prove import prove_checks
    from checker.scaffold import render

    (tmp_path / "starter.py").write_text(render("starter", "starter.py"))
    cls, = loader.load_file(str(tmp_path / "starter.py"))
    out = io.StringIO()
    checks = prove_checks(cls, progress=Progress(out, tty=True, clock=_ticking_clock()).proving)
    proved = sum(c.extra["obligations"] for c in checks if c.kind == "proof")
    assert f"proof obligations {proved}/{proved}" in out.getvalue()


def test_silent_with_quiet_or_without_a_terminal_and_interval():
    assert Progress(io.StringIO(), interval=0).exploring("x") is None  # StringIO is not a terminal
    assert Progress(io.StringIO(), tty=True, quiet=True).proving("x") is None
    assert Progress(io.StringIO(), quiet=True).exploring("x") is None  # --quiet: no plain lines either


def test_off_a_terminal_a_plain_line_every_interval_with_the_latest_figures():
    out = io.StringIO()
    progress = Progress(out, interval=0.05)
    progress.at("spec 1 of 2, point 3 of 4")
    show = progress.exploring("wide [ncpus=3]")
    r = explore(Wide(), symmetry=False, progress=show)
    time.sleep(0.3)
    progress.close()
    lines = out.getvalue().splitlines()
    assert lines and all(line.startswith("progress: 0:00:0") for line in lines), lines  # h:mm:ss elapsed
    assert "\r" not in out.getvalue()  # plain lines: a CI log shows each
    assert r.states == 8000  # reported every 4,096 states: the line has the last report's figures
    assert lines[-1].split("elapsed; ")[1].startswith("spec 1 of 2, point 3 of 4: 4,")
    assert " states/s " in lines[-1] and lines[-1].endswith("wide [ncpus=3]")
    n = len(lines)
    time.sleep(0.15)
    assert len(out.getvalue().splitlines()) == n  # close() stops them


def test_cli_writes_nothing_to_stderr_when_it_is_not_a_terminal(cli, tmp_path):
    (tmp_path / "wide.py").write_text(
        "from checker import Param, PerCpu, Role, Spec, action, terminal, when\n\n\n"
        "class Wide(Spec):\n    kernel = 'test'\n    ncpus = Param(2, domain=range(1, 3))\n"
        "    cpus = Role('ncpus')\n    x = PerCpu(0)\n\n    @action(role='cpus')\n    def inc(s, cpu):\n"
        "        return when(s.x[cpu] < 69, x={cpu: s.x[cpu] + 1})\n\n    @terminal\n    def done(s):\n"
        "        return True\n")
    r = cli("verify", str(tmp_path / "wide.py"))  # 4,900 states: past the first progress report
    assert r.returncode == 0 and "4,900 states" in r.stdout, r.stdout + r.stderr
    assert r.stderr == ""  # a run shorter than a minute: no plain progress line either
