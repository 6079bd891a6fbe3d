# SPDX-License-Identifier: GPL-2.0-only
"""Issue 25, the boundary: never a false pass, never a lost report.

Each test drives the command line as a user would (``main([...])`` in this process where it can, a fresh
``python -m checker`` where signals, the deadline or the watchdog are the point) and asserts the exit
code, one error line and no traceback, every requested report present and valid (JSON against the
report schema, JUnit against junit-10.xsd, SARIF against 2.1.0), and no process left behind.

Families (cases): spec code ending the run or failing outside an action (12), a name bound twice in a
spec class (5), report paths: clashes, inputs, full and impossible paths, stale and half-written
reports, devices (13 cases in 11 tests), the deadline and its watchdog (6), signals while importing and
mid-run, Z3 after an interrupt, the interrupted run listing the complete run's checks (7), spec output and imports (2),
messages (9).
"""
from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
import uuid
import xml.etree.ElementTree as ET
from pathlib import Path

import jsonschema
import pytest
import xmlschema
from conftest import FIXTURES, ROOT

JUNIT_XSD = xmlschema.XMLSchema(str(FIXTURES / "junit-10.xsd"))
SARIF_SCHEMA = json.loads((FIXTURES / "sarif-2.1.0-rtm.5.json").read_text())
REPORT_SCHEMA = json.loads((ROOT / "checker" / "report" / "schema.json").read_text())

# README's tiny spec, with places to put faults: {top} at module level, {body} first in the action,
# {prop} the invariant's body, {extra} more class body.
TINY = '''\
import os, signal, sys, time
from checker import Param, PerCpu, Role, Shared, Spec, Sum, action, invariant, sometimes, terminal, when
{top}

class TinyCounter(Spec):
    """A per-CPU counter that folds into a shared total once it reaches 2."""

    kernel = "an example, not kernel code"
    ncpus = Param(2, domain=range(1, 9000), explore=(1, 2))
    cpus = Role("ncpus", symmetric=True)
    total = Shared(0)
    local = PerCpu(0)
    adds = PerCpu(3)

    @action(role="cpus")
    def add(s, cpu):
        {body}
        c = s.local[cpu] + 1
        return when(s.adds[cpu] > 0, adds={{cpu: s.adds[cpu] - 1}},
                    local={{cpu: c % 2}}, total=s.total + (c // 2) * 2)

    @terminal
    def done(s):
        return Sum(s.adds) == 0

    @invariant
    def nothing_lost(s):
        {prop}

    @sometimes
    def a_fold_happens(s):
        return s.total > 0
{extra}'''

HOLDS = "return s.total + Sum(s.local) == 3 * s.ncpus - Sum(s.adds)"
#: Reached only on concrete states (the explorer's), never on the symbols of the load-time checks.
CONCRETE = "isinstance(s.total, int) and s.total == 2"


def tiny(d: Path, name: str = "tiny.py", *, top: str = "", body: str = "pass", prop: str = HOLDS,
         extra: str = "") -> str:
    path = d / name
    path.write_text(TINY.format(top=top, body=body, prop=prop, extra=extra))
    return str(path)


def main(capsys, *args: str) -> tuple[int, str, str]:
    """``python -m checker ARGS`` in this process: (exit code, stdout, stderr)."""
    from checker.cli import main as cli_main

    code = cli_main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


def one_error(err: str, *needles: str) -> str:
    """The run's one error line (no traceback), holding every needle."""
    assert "Traceback" not in err, err
    lines = [ln for ln in err.splitlines() if ln.startswith("error:")]
    assert len(lines) == 1, err
    for n in needles:
        assert n in lines[0], lines[0]
    return lines[0]


def reports(d: Path) -> list[str]:
    return ["--json", str(d / "r.json"), "--junit", str(d / "r.xml"), "--sarif", str(d / "r.sarif")]


def valid_reports(d: Path, exit_code: int) -> dict:
    """The three reports of ``reports(d)``, each valid; the JSON's summary says ``exit_code``."""
    data = json.loads((d / "r.json").read_text())
    jsonschema.validate(data, REPORT_SCHEMA)
    assert data["summary"]["exit_code"] == exit_code
    JUNIT_XSD.validate(str(d / "r.xml"))
    sarif = json.loads((d / "r.sarif").read_text())
    cls = jsonschema.validators.validator_for(SARIF_SCHEMA)
    cls(SARIF_SCHEMA, format_checker=cls.FORMAT_CHECKER).validate(sarif)
    assert sarif["runs"][0]["invocations"][0]["exitCode"] == exit_code
    assert not [p for p in d.iterdir() if p.name.endswith(".tmp")]  # no temporary file left behind
    return data


def junit_ids(d: Path) -> set[tuple[str, str]]:
    return {(c.get("classname"), c.get("name")) for c in ET.parse(d / "r.xml").getroot().iter("testcase")}


# -- fresh processes: signals, the deadline, the watchdog ------------------------------------------

def _sigint_default() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)  # what a terminal gives (a shell's background job ignores it)


class Proc:
    """``python -m checker ARGS`` in a fresh process, tagged so that whatever it leaves behind is found."""

    def __init__(self, *args: str, cwd: Path, env: dict | None = None):
        self.tag = uuid.uuid4().hex
        self.p = subprocess.Popen([sys.executable, "-m", "checker", *map(str, args)], stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True, cwd=cwd,
                                  preexec_fn=_sigint_default,  # noqa: PLW1509 - no threads started yet
                                  env={**os.environ, "PYTHONPATH": str(ROOT), "FAULTS_TAG": self.tag,
                                       **(env or {})})

    def status(self) -> tuple[int, set[int]]:
        """(threads, signals caught) of the running command, from /proc."""
        text = Path(f"/proc/{self.p.pid}/status").read_text()
        fields = dict(line.split(":\t", 1) for line in text.splitlines() if ":\t" in line)
        caught = int(fields["SigCgt"], 16)
        return int(fields["Threads"]), {s for s in range(1, 64) if caught >> (s - 1) & 1}

    def wait_until(self, ready, timeout: float = 120) -> None:
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            try:
                if ready(*self.status()):
                    return
            except (FileNotFoundError, KeyError):
                break
            time.sleep(0.005)
        raise AssertionError("the command did not reach the moment in time")

    def finish(self, timeout: float = 120) -> tuple[int, str, str]:
        out, err = self.p.communicate(timeout=timeout)
        time.sleep(0.6)  # a watchdog notices its parent is gone within 0.5 s
        assert not self.leftovers(), "processes left behind"
        return self.p.returncode, out, err

    def leftovers(self) -> list[int]:
        found = []
        for pid in os.listdir("/proc"):
            if not pid.isdigit() or int(pid) == self.p.pid:
                continue
            try:
                if f"FAULTS_TAG={self.tag}".encode() in Path(f"/proc/{pid}/environ").read_bytes():
                    found.append(int(pid))
            except OSError:
                pass
        return found


# == spec code cannot end the run (item 2) ==========================================================

EXITS = {
    "sys_exit_in_action": {"body": "sys.exit(0)"},
    "system_exit_on_concrete_states": {"body": f"if {CONCRETE}:\n            raise SystemExit(0)"},
    "sys_exit_in_invariant": {"prop": f"if {CONCRETE}:\n            sys.exit(0)\n        " + HOLDS},
    "keyboard_interrupt_no_signal_raised": {"body": f"if {CONCRETE}:\n            raise KeyboardInterrupt"},
    "generator_exit_in_terminal": {"extra": "    @terminal\n    def done(s):\n        raise GeneratorExit\n"},
    "sys_exit_in_a_parameter": {"extra": "    batch = Param(lambda p: sys.exit(0))\n"},
    "sys_exit_at_import": {"top": "sys.exit(0)"},
    "generator_exit_at_import": {"top": "raise GeneratorExit"},
}


@pytest.mark.parametrize("fault", list(EXITS))
def test_spec_code_that_exits_is_exit_2_with_its_line_and_every_report(tmp_path, capsys, fault):
    """Without the boundary, sys.exit(0) in an action ended the run with exit 0, no output, no report."""
    path = tiny(tmp_path, **EXITS[fault])
    code, _out, err = main(capsys, "verify", path, "--mode", "explore", *reports(tmp_path))
    assert code == 2, err
    line = one_error(err, path)
    assert re.search(r"tiny\.py:\d+: ", line)
    valid_reports(tmp_path, 2)


@pytest.mark.parametrize("where", ["parameter", "choose"])
def test_an_exception_in_spec_code_outside_an_action_is_exit_2_with_its_line(tmp_path, capsys, where):
    """A parameter's function or a choose= function that fails: a traceback before."""
    path = tmp_path / "tiny.py"
    src = TINY.format(top="", body="pass", prop=HOLDS, extra="")
    if where == "parameter":
        src = src.replace("    cpus = Role(", "    batch = Param(lambda p: 1 // 0)\n    cpus = Role(")
    else:
        src = src.replace('@action(role="cpus")', '@action(role="cpus", choose={"k": lambda p: 1 // 0})').replace(
            "def add(s, cpu):", "def add(s, cpu, k):")
    path.write_text(src)
    code, _out, err = main(capsys, "verify", path, "--mode", "explore", *reports(tmp_path))
    assert code == 2
    one_error(err, "raised ZeroDivisionError", f"{path}:")
    valid_reports(tmp_path, 2)


@pytest.mark.parametrize("extra", [["--simulate", "3"], ["--engine", "interpreted", "--checkpoint", "ck"]])
def test_spec_code_that_exits_in_other_engines_is_exit_2(tmp_path, capsys, extra):
    path = tiny(tmp_path, body=f"if {CONCRETE}:\n            raise SystemExit(0)")
    extra = [str(tmp_path / e) if e == "ck" else e for e in extra]
    code, _out, err = main(capsys, "verify", path, *(["--mode", "explore"] if "--simulate" not in extra else []),
                           *extra)
    assert code == 2
    one_error(err, "TinyCounter.add called sys.exit(0)")


# == a declared name bound twice (item 3) ===========================================================

REBOUND = {
    # the violated invariant first, the one that holds second: Python kept the second, "holds"
    "invariant": ("    @invariant\n    def nothing_lost(s):\n        return s.total < 0\n", "@invariant"),
    "action": ("    @action(role='cpus')\n    def add(s, cpu):\n        return when(s.adds[cpu] > 0, adds={cpu: 0})\n",
               "@action"),
    "invariant_by_assignment": ("    nothing_lost = None\n", "@invariant"),
    "declaration": ("    total = Shared(5)\n", "Shared"),
}


@pytest.mark.parametrize("what", list(REBOUND))
def test_a_name_bound_twice_in_a_spec_class_is_exit_2_naming_both_lines(tmp_path, capsys, what):
    text, kind = REBOUND[what]
    path = tmp_path / "tiny.py"
    src = TINY.format(top="", body="pass", prop=HOLDS, extra=text)
    if what == "invariant":  # the violated one before the one that holds
        src = TINY.format(top="", body="pass", prop=HOLDS, extra="").replace(
            "    @invariant\n    def nothing_lost", text + "\n    @invariant\n    def nothing_lost")
    path.write_text(src)
    code, _out, err = main(capsys, "verify", path, "--mode", "explore", *reports(tmp_path))
    assert code == 2
    line = one_error(err, "defined twice", kind)
    first, second = map(int, re.search(r"at line (\d+), again at line (\d+)", line).groups())
    assert first < second and f"tiny.py:{second}:" in line
    valid_reports(tmp_path, 2)


def test_redefining_a_base_specs_property_in_a_subclass_is_still_overriding(tmp_path, capsys):
    path = tiny(tmp_path, extra="\n\nclass Broken(TinyCounter):\n    @invariant\n    def nothing_lost(s):\n"
                                "        return s.total < 0\n")
    code, out, _err = main(capsys, "verify", f"{path}:Broken", "--mode", "explore", "--set", "ncpus=1", "-v")
    assert code == 1 and "FAIL  violated                broken.nothing_lost" in out


# == report paths (items 8, 9, 10) ===================================================================

def test_two_reports_to_one_file_are_refused_before_the_run(tmp_path, capsys):
    path = tiny(tmp_path)
    x = tmp_path / "x"
    for flags in (["--json", x, "--junit", x], ["--format", "json", "--output", x, "--sarif", x]):
        code, _out, err = main(capsys, "verify", path, "--mode", "explore", *flags)
        assert code == 2 and not x.exists()
        one_error(err, "both write")
    os.symlink(tmp_path / "real.json", tmp_path / "alias.json")  # one file by two names
    code, _out, err = main(capsys, "verify", path, "--mode", "explore", "--json", tmp_path / "real.json",
                           "--sarif", tmp_path / "alias.json")
    assert code == 2
    one_error(err, "both write")


@pytest.mark.parametrize("how", ["same", "symlink", "hardlink", "class"])
def test_a_report_over_the_spec_is_refused_and_the_spec_kept(tmp_path, capsys, how):
    path = tiny(tmp_path)
    before = Path(path).read_text()
    target = {"same": path, "symlink": tmp_path / "s.json", "hardlink": tmp_path / "h.json", "class": path}[how]
    if how == "symlink":
        os.symlink(path, target)
    if how == "hardlink":
        os.link(path, target)
    spec_arg = f"{path}:TinyCounter" if how == "class" else path
    code, _out, err = main(capsys, "verify", spec_arg, "--mode", "explore", "--json", target)
    assert code == 2
    one_error(err, "an input of this run")
    assert Path(path).read_text() == before


def test_one_failed_write_loses_no_other_report(tmp_path, capsys):
    """--junit /dev/full: the JSON and SARIF are written, the summary printed, the failure named, exit 2."""
    path = tiny(tmp_path)
    code, out, err = main(capsys, "verify", path, "--mode", "explore", "--json", tmp_path / "r.json",
                          "--junit", "/dev/full", "--sarif", tmp_path / "r.sarif")
    assert code == 2
    assert "exit 0 (everything as expected)" in out  # the verdicts themselves
    one_error(err, "cannot write --junit /dev/full: No space left on device")
    jsonschema.validate(json.loads((tmp_path / "r.json").read_text()), REPORT_SCHEMA)
    assert json.loads((tmp_path / "r.sarif").read_text())["version"] == "2.1.0"


def test_a_report_to_a_device_is_written_into_it_never_renamed_over_it(tmp_path, capsys):
    code, _out, err = main(capsys, "verify", tiny(tmp_path), "--mode", "explore", "--json", "/dev/null")
    assert code == 0 and os.path.exists("/dev/null") and not Path("/dev/null").is_file(), err


def test_a_previous_runs_report_is_replaced_whole_and_never_read_as_this_ones(tmp_path, capsys, monkeypatch):
    path = tiny(tmp_path)
    for name in ("r.json", "r.xml", "r.sarif"):
        (tmp_path / name).write_text("the previous run's report")
    # a run that dies before writing (here: rendering fails) leaves no previous report behind
    from checker import cli

    monkeypatch.setattr(cli, "_emit_verify", lambda *a, **k: (_ for _ in ()).throw(MemoryError()))
    code, _out, _err = main(capsys, "verify", path, "--mode", "explore", *reports(tmp_path))
    assert code == 3 and not any((tmp_path / n).exists() for n in ("r.json", "r.xml", "r.sarif"))
    monkeypatch.undo()
    os.symlink(tmp_path / "r.json", tmp_path / "link.json")  # a report path that is a symlink stays one
    code, _out, _err = main(capsys, "verify", path, "--mode", "explore", *reports(tmp_path)[2:],
                            "--json", tmp_path / "link.json")
    assert code == 0 and (tmp_path / "link.json").is_symlink()
    valid_reports(tmp_path, 0)


@pytest.mark.parametrize("where", ["under_a_file", "a_directory"])
def test_a_report_path_that_cannot_be_a_file_is_refused_before_the_run(tmp_path, capsys, where):
    path = tiny(tmp_path)
    target = tmp_path / "tiny.py" / "r.json" if where == "under_a_file" else tmp_path
    code, _out, err = main(capsys, "verify", path, "--mode", "explore", "--json", target)
    assert code == 2
    one_error(err, "--json")


def test_a_signal_while_the_reports_are_written_cuts_none_of_them(tmp_path, capsys, monkeypatch):
    """Ctrl-C (or the deadline) while the finished run writes its reports: each is written whole."""
    from checker.report import write

    atomic = write.write_atomic
    calls = []

    def interrupted_write(path, payload):
        calls.append(path)
        if len(calls) == 1:
            os.kill(os.getpid(), signal.SIGINT)  # the handler runs here, between two reports
        atomic(path, payload)

    monkeypatch.setattr(write, "write_atomic", interrupted_write)
    code, _out, err = main(capsys, "verify", tiny(tmp_path), "--mode", "explore", *reports(tmp_path))
    assert len(calls) == 3 and code == 0 and "Traceback" not in err
    valid_reports(tmp_path, 0)


def test_z3_answers_again_after_an_interrupted_run():
    """An interrupt stops Z3 by cancelling its context, which stayed cancelled: simplify() then returned
    terms unsimplified, and a later run in the process missed a forgotten guard (an endless search)."""
    import z3

    from checker import interrupts

    with pytest.raises(KeyboardInterrupt), interrupts.interruptible(uses_z3=True):
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(5)  # the handler raises here; the watcher thread has interrupted Z3
    x = z3.Int("x")
    assert z3.is_int_value(z3.simplify(x + 1 - x))


# == one deadline for the whole command (item 12) =====================================================

@pytest.mark.parametrize("where", ["import", "action_at_load"])
def test_an_endless_loop_ends_at_the_deadline_inconclusive_with_every_report(tmp_path, where):
    fault = {"top": "while True:\n    time.sleep(0.01)"} if where == "import" else {
        "body": "while True:\n            time.sleep(0.01)"}
    path = tiny(tmp_path, **fault)
    args = ["verify", path, "--mode", "explore", *reports(tmp_path)]
    if where == "import":  # CI's way: the environment
        p = Proc(*args, cwd=tmp_path, env={"COUNTERCHECK_DEADLINE": "2"})
    else:
        p = Proc(*args, "--deadline", "2", cwd=tmp_path)
    code, out, err = p.finish()
    assert code == 3, err
    assert "deadline reached: what was not decided is inconclusive (timeout: deadline)" in err
    assert "Traceback" not in err and "exit 3 (inconclusive: timeout (--deadline))" in out
    assert valid_reports(tmp_path, 3)["interrupted"] is True


def test_code_that_ignores_every_signal_is_killed_by_the_watchdog_with_every_report(tmp_path):
    """Spec code that ignores SIGALRM (or sits in one long C call): the watchdog writes the reports, says so
    and kills the command, which never exits 0."""
    path = tiny(tmp_path, top="for _s in (signal.SIGALRM, signal.SIGINT, signal.SIGTERM):\n"
                              "    signal.signal(_s, signal.SIG_IGN)\nwhile True:\n    time.sleep(0.05)")
    p = Proc("verify", path, "--mode", "explore", "--deadline", "1", *reports(tmp_path), cwd=tmp_path)
    code, _out, err = p.finish()
    assert code == -signal.SIGKILL
    assert "error: the run did not stop within 2s of its deadline" in err
    data = valid_reports(tmp_path, 3)
    assert data["interrupted"] is True and "was killed" in data["warnings"][0]


@pytest.mark.parametrize("value", [["--deadline", "0"], ["--deadline", "nan"], ["env", "soon"]])
def test_a_deadline_that_is_no_number_of_seconds_is_exit_2(tmp_path, capsys, monkeypatch, value):
    path = tiny(tmp_path)
    if value[0] == "env":
        monkeypatch.setenv("COUNTERCHECK_DEADLINE", value[1])
        value = []
    code, _out, err = main(capsys, "verify", path, "--mode", "explore", *value)
    assert code == 2
    one_error(err, "seconds")


# == signals at other moments (item 13) and the same checks when interrupted (item 14) =================

@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_while_the_command_imports_ends_it_with_every_report(tmp_path, sig):
    """The moment: the package noted the signal handlers (checker.early) and interrupts has not yet taken
    over (its watcher thread is not running): z3 and the engines are still importing."""
    path = tiny(tmp_path)
    p = Proc("verify", path, "--mode", "explore", *reports(tmp_path), cwd=tmp_path)
    p.wait_until(lambda threads, caught: signal.SIGTERM in caught and threads == 1)
    p.p.send_signal(sig)
    code, _out, err = p.finish()
    assert code == 3, err
    assert "Traceback" not in err and "interrupted: what was not decided is inconclusive (interrupted)" in err
    data = valid_reports(tmp_path, 3)
    # the checks a complete run makes, each not decided
    assert {(c["property"], c["params"]["ncpus"]) for c in data["checks"]} == {
        (n, k) for n in ("nothing_lost", "a_fold_happens", "no_deadlock") for k in (1, 2)}
    assert {c["reason"] for c in data["checks"]} == {"interrupted"}


def test_an_interrupted_run_lists_the_checks_a_complete_run_lists(tmp_path, capsys):
    """SIGHUP in the middle of the exploration: the JUnit cases and SARIF rules are the complete run's."""
    top = ("DELAY = float(os.environ.get('TINY_DELAY', '0'))\n"
           "def exploring(s):  # the explorer runs the action on states of numbers: say so once\n"
           "    if DELAY and isinstance(s.total, int) and not os.path.exists('exploring'):\n"
           "        open('exploring', 'w').close()\n")
    path = tiny(tmp_path, top=top, body="time.sleep(DELAY)\n        exploring(s)")
    flags = ["--mode", "explore", "--set", "ncpus=1,2", "--coverage", "--engine", "interpreted"]
    (tmp_path / "whole").mkdir()
    assert main(capsys, "verify", path, *flags, *reports(tmp_path / "whole"))[0] == 0
    complete = junit_ids(tmp_path / "whole")
    p = Proc("verify", path, *flags, *reports(tmp_path), cwd=tmp_path, env={"TINY_DELAY": "0.2"})
    end = time.monotonic() + 120
    while not (tmp_path / "exploring").exists() and time.monotonic() < end:
        time.sleep(0.01)
    p.p.send_signal(signal.SIGHUP)  # in the middle of the first exploration
    code, _out, err = p.finish()
    assert code == 3, err
    valid_reports(tmp_path, 3)
    assert junit_ids(tmp_path) == complete and len(complete) == 7  # 3 checks x 2 points, and coverage
    rules = {r["id"] for r in json.loads((tmp_path / "r.sarif").read_text())["runs"][0]["tool"]["driver"]["rules"]}
    assert rules == {f"tiny_counter.{n}" for n in ("nothing_lost", "a_fold_happens", "no_deadlock", "coverage")}


@pytest.mark.parametrize("name", ["percpu_lazy_rfc", "stack_cache", "eager_irq_add"])
def test_the_checks_an_interrupt_lists_are_those_the_exploration_makes(name):
    """Specs with context rules (lock order, sleeping in atomic context, irq safety) and the overflow check:
    what the explorer decides at a point, by name and kind (all 119 built-in points agreed when written)."""
    from checker import loader
    from checker.engines.explore import undecided_checks
    from checker.verify import explore_checks, param_points

    cls = loader.builtin_specs()[name]
    point = param_points(cls, {}, "explore")[0]
    done = {(c.property, c.kind) for c in explore_checks(cls, point, max_states=50, engine="interpreted")}
    assert {(c.property, c.kind) for c in undecided_checks(cls, point, 1, "interrupted")} == done


# == spec output and imports (item 15) ================================================================

def test_print_in_a_spec_does_not_corrupt_the_json_on_stdout_and_the_spec_is_imported_once(tmp_path, capsys):
    path = tiny(tmp_path, top="print('imported')", body="print('stepping')")
    # --workers 1: capsys sees this process's writes, not a forked worker's (which go to the real stderr)
    code, out, err = main(capsys, "verify", path, path, "--mode", "explore", "--format", "json", "--workers", "1")
    assert code == 0
    assert len(json.loads(out)["checks"]) == 6  # named twice: one spec, its checks once
    assert err.count("imported") == 1 and "stepping" in err


def test_the_human_report_keeps_stdout_and_spec_output_goes_to_stderr(tmp_path, capsys):
    path = tiny(tmp_path, body="print('stepping')")
    code, out, err = main(capsys, "verify", path, "--mode", "explore", "--set", "ncpus=1")
    assert code == 0 and "stepping" not in out and "stepping" in err and "exit 0" in out


# == messages (item 16 and lint) ======================================================================

@pytest.mark.parametrize("kind", ["directory", "fifo", "symlink_loop", "broken_symlink", "missing"])
def test_a_spec_path_that_is_no_file_says_what_it_is(tmp_path, capsys, kind):
    p = tmp_path / "spec.py"
    if kind == "directory":
        p.mkdir()
    elif kind == "fifo":
        os.mkfifo(p)
    elif kind == "symlink_loop":
        os.symlink(p, p)
    elif kind == "broken_symlink":
        os.symlink(tmp_path / "gone.py", p)
    code, _out, err = main(capsys, "verify", p, "--mode", "explore")
    assert code == 2
    one_error(err, {"directory": "is a directory", "fifo": "is a FIFO", "symlink_loop": "is a symlink loop",
                    "broken_symlink": "which does not exist", "missing": "no such file"}[kind])


def test_a_sweep_past_the_limit_is_refused_with_its_count_and_no_long_line(tmp_path, capsys):
    path = tiny(tmp_path)
    code, out, err = main(capsys, "verify", path, "--mode", "explore", "--set", "ncpus=1..8192")
    assert code == 2
    one_error(err, "8,192 points", "--set ncpus=1..4")
    assert max(map(len, (out + err).splitlines())) < 400
    # within the limit, the note on the sweep collapses the range
    path = tiny(tmp_path, name="two.py", extra="    batch = Param(1, domain=range(1, 9), explore=(1, 2))\n")
    code, out, err = main(capsys, "verify", path, "--mode", "explore", "--set", "ncpus=1..40", "--max-states", "1")
    assert "ncpus=1..40" in err and max(map(len, (out + err).splitlines())) < 400


def test_simulate_with_prove_is_refused(tmp_path, capsys):
    code, _out, err = main(capsys, "verify", tiny(tmp_path), "--simulate", "3", "--mode", "prove")
    assert code == 2
    one_error(err, "--simulate", "--mode prove")


def test_max_memory_on_the_interpreter_is_said(tmp_path, capsys):
    code, _out, err = main(capsys, "verify", tiny(tmp_path), "--mode", "explore", "--engine", "interpreted",
                           "--max-memory", "1G")
    assert code == 0 and "--max-memory bounds the compiled explorer only" in err


def test_true_division_in_a_spec_is_exit_2_saying_what_to_write(tmp_path, capsys):
    """lint's message for `/` named TRUEDIV without importing it: a NameError traceback."""
    path = tiny(tmp_path, body="x = 0 * (s.local / 2)")
    code, _out, err = main(capsys, "verify", path, "--mode", "explore")
    assert code == 2
    one_error(err, "`/` is true division", "Write `//`")
