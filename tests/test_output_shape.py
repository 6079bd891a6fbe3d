# SPDX-License-Identifier: GPL-2.0-only
"""verify's output shaped like pytest's (issue 30, item 2): a line per spec and mode, failures gathered
at the end, colour when asked, a plain progress line off a terminal. Run in this process (main()), as a
fresh one would load every spec again, except where the process itself is the point."""
import os
import re
import subprocess
import sys

import pytest

from checker.cli import main
from checker.report.style import wants_color
from conftest import ROOT

# Three specs: one holds at two points, one fails, one is a bug spec whose planted bug is found.
SPECS = '''\
from checker import Param, PerCpu, Role, Shared, Spec, Sum, action, invariant, terminal, when


class Adds(Spec):
    """Each CPU adds once."""

    kernel = "a test spec"
    ncpus = Param(2, domain=range(1, 4), explore=(1, 2))
    cpus = Role("ncpus", symmetric=True)
    total = Shared(0)
    left = PerCpu(1)

    @action(role="cpus")
    def add(s, cpu):
        return when(s.left[cpu] > 0, left={cpu: 0}, total=s.total + 1)

    @terminal
    def done(s):
        return Sum(s.left) == 0

    @invariant
    def counted(s):
        return s.total + Sum(s.left) == s.ncpus


class Wrong(Adds):
    """Claims the total stays below 2."""

    ncpus = Param(2, domain=range(1, 4))

    @invariant
    def below_two(s):
        """The total stays below 2 (wrong with two CPUs)."""
        return s.total < 2


class Planted(Wrong, expect_violated=("below_two",)):
    """The same claim, shipped as a known bug."""
'''


def verify(capsys, tmp_path, *args, spec="specs.py"):
    path = tmp_path / "specs.py"
    path.write_text(SPECS)
    code = main(["verify", str(path) if spec == "specs.py" else spec, "--mode", "explore", *args])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_default_is_a_line_per_spec_then_the_failure_the_list_and_the_summary(capsys, tmp_path):
    code, out, err = verify(capsys, tmp_path)
    assert code == 1, out + err
    lines = out.splitlines()
    assert re.fullmatch(r"adds +explore  \.\. +2 points, 4 checks, \d+ states, \d+\.\ds", lines[0]), lines[0]
    assert re.fullmatch(r"wrong +explore  F +1 point, 3 checks, \d+ states, \d+\.\ds, 1 failed", lines[1]), lines[1]
    assert re.fullmatch(r"planted +explore  x +1 point, 3 checks, \d+ states, \d+\.\ds, 1 bug found", lines[2])
    assert not any(line.startswith(("ok ", "FAIL  holds", "FAIL  violated")) for line in lines)  # no check lines
    # the failure's trace, its spec's assumptions (not the others'), the list of what failed, the summary
    trace = lines.index("wrong.below_two violated after 2 steps (shortest); ncpus=2")
    assert next(line for line in lines[trace:] if "reproduce:" in line).strip().startswith(
        "reproduce: python -m checker verify")
    assert "wrong models a test spec, assuming:" in lines and "adds models a test spec, assuming:" not in lines
    assert "planted.below_two violated" not in out  # a bug found as expected: its trace only when asked
    assert lines[-2] == "FAIL  wrong.below_two: violated at 1 point: [ncpus=2]"
    assert re.fullmatch(r"10 checks in 4 runs \(\d+ states\): 8 holds, 2 violated, 0 inconclusive; 1 not as "
                        r"expected; 0 errors; \d+\.\ds; exit 1 \(.*\)", lines[-1]), lines[-1]
    assert "\033[" not in out  # not a terminal: no colour


def test_verbose_gives_check_lines_assumptions_and_growth(capsys, tmp_path):
    code, out, _ = verify(capsys, tmp_path, "-v")
    lines = out.splitlines()
    assert [line.split()[0] for line in lines[:10]] == ["ok"] * 5 + ["FAIL"] + ["ok"] * 4
    assert "adds models a test spec, assuming:" in lines  # every spec's assumptions
    assert any(re.fullmatch(r"growth: adds: states x[\d.]+ per ncpus \(ncpus=1,2: \d+, \d+\); ncpus=3 likely "
                            r"~\d+ states, .*", line) for line in lines), out


def test_traces_takes_keywords_and_check_names(capsys, tmp_path):
    _, out, _ = verify(capsys, tmp_path, "--traces", "bugs")
    assert "planted.below_two violated after 2 steps" in out and "wrong.below_two violated" in out
    _, out, _ = verify(capsys, tmp_path, "--traces", "planted.*")
    assert "planted.below_two violated after 2 steps" in out
    _, out, _ = verify(capsys, tmp_path, "--traces", "none")
    assert "violated after" not in out and "FAIL  wrong.below_two" in out  # the list still says what failed
    _, out, _ = verify(capsys, tmp_path, "--traces", "nosuch")
    assert "warning: --traces nosuch names no check of this run" in out


def test_quiet_prints_the_failures_and_the_summary(capsys, tmp_path):
    code, out, err = verify(capsys, tmp_path, "-q")
    assert code == 1 and err == ""
    assert out.splitlines()[0] == "" and out.splitlines()[1].startswith("wrong.below_two violated")
    assert "explore  " not in out


def test_exitfirst_stops_at_the_first_result_not_as_expected(capsys, tmp_path):
    code, out, _ = verify(capsys, tmp_path, "-x")
    assert code == 1
    assert "planted" not in out.split("stopped at")[0]  # the spec after the failure never ran
    assert ("stopped at the first result not as expected (-x): wrong.below_two violated; 1 engine run not run, "
            "1 spec not started") in out


def test_k_selects_checks_by_id_as_pytest_does(capsys, tmp_path):
    code, out, _ = verify(capsys, tmp_path, "-k", "counted and not planted")
    assert code == 0, out
    assert [line.split()[0] for line in out.splitlines()[:2]] == ["adds", "wrong"]
    assert "wrong  explore  .  " in out.replace(" " * 11, " ")  # below_two deselected: wrong is all as expected
    assert re.search(r"^3 checks in 3 runs .* 4 deselected by -k; ", out, re.M), out
    code, _, err = verify(capsys, tmp_path, "-k", "nothing_like_this")
    assert code == 2 and "-k 'nothing_like_this' matches no check of the 3 specs selected" in err
    code, _, err = verify(capsys, tmp_path, "-k", "counted and")
    assert code == 2 and "it ends where a word was expected" in err


def test_colour_follows_the_flag_then_no_color_then_force_color(capsys, tmp_path, monkeypatch):
    class Tty:
        def isatty(self):
            return True

    assert wants_color("auto", Tty(), {}) and not wants_color("auto", Tty(), {"NO_COLOR": "1"})
    assert not wants_color("auto", Tty(), {"TERM": "dumb"}) and not wants_color("auto", sys.stdout, {})
    assert wants_color("auto", sys.stdout, {"FORCE_COLOR": "1"})
    assert not wants_color("auto", sys.stdout, {"FORCE_COLOR": "1", "NO_COLOR": "1"})
    assert wants_color("always", sys.stdout, {"NO_COLOR": "1"}) and not wants_color("never", Tty(), {})
    monkeypatch.setenv("FORCE_COLOR", "1")
    _, out, _ = verify(capsys, tmp_path)
    assert "\033[31mF\033[0m" in out and "\033[32m.\033[0m" in out and "\033[31mFAIL\033[0m" in out
    _, out, _ = verify(capsys, tmp_path, "--color", "never")
    assert "\033[" not in out


def test_a_long_run_off_a_terminal_prints_a_plain_progress_line(tmp_path):
    """COUNTERCHECK_PROGRESS_INTERVAL shortens the minute, so that the line shows in a short run."""
    # 2,048 states without symmetry: long enough for a line every 20 ms
    (tmp_path / "specs.py").write_text(SPECS.replace("range(1, 4), explore=(1, 2)", "range(1, 12), explore=(11,)")
                                       .replace("symmetric=True", "symmetric=False"))
    env = dict(os.environ, PYTHONPATH=str(ROOT), COUNTERCHECK_PROGRESS_INTERVAL="0.02")
    r = subprocess.run([sys.executable, "-m", "checker", "verify", "specs.py:Adds", "--mode", "explore",
                        "--engine", "interpreted"], capture_output=True, text=True, cwd=tmp_path, env=env, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    lines = r.stderr.splitlines()
    assert lines and all(re.match(r"progress: \d+:\d\d:\d\d elapsed; spec 1 of 1, point 1 of 1", x)
                         for x in lines), r.stderr
    assert "progress:" not in r.stdout  # stdout stays the report


@pytest.mark.parametrize("argv0, prog", [("/usr/bin/countercheck-kernel", "countercheck-kernel"),
                                         ("/x/checker/__main__.py", "python -m checker")])
def test_usage_and_reproduce_lines_name_the_command_typed(capsys, tmp_path, monkeypatch, argv0, prog):
    monkeypatch.setattr(sys, "argv", [argv0])
    _, out, _ = verify(capsys, tmp_path)
    assert f"  reproduce: {prog} verify {tmp_path / 'specs.py'} --set ncpus=2" in out
    with pytest.raises(SystemExit):
        main(["verify", "--mode", "nosuch"])
    assert capsys.readouterr().err.startswith(f"usage: {prog} verify ")


def test_a_spec_with_many_points_wraps_its_marks_as_pytest_does():
    from checker.report.compact import SpecLines
    from checker.result import Check

    out = []
    lines = SpecLines(out.append, width=4)
    for run in range(45):
        lines.add(Check(spec="many", file=None, line=None, params={"n": run}, property="p", kind="invariant",
                        backend="explore", verdict="violated" if run == 41 else "holds", expected="holds",
                        states=10, seconds=0.5, run=run))
    lines.finish()
    first, second = out[0].split("\n")
    assert first == "many  explore  " + "." * 40
    assert second == " " * 15 + ".F..." + " " * 7 + "  45 points, 45 checks, 450 states, 22.5s, 1 failed"
