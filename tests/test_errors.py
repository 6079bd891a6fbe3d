# SPDX-License-Identifier: GPL-2.0-only
"""A spec author's mistakes: exit 2, the file and line, and what to write instead."""
import json

import pytest

from conftest import FIXTURES

M = str(FIXTURES / "malformed.py")


def _line_of(text: str, path=FIXTURES / "malformed.py") -> int:
    return next(i for i, line in enumerate(path.read_text().splitlines(), 1) if text in line)


@pytest.mark.parametrize("spec,needle,match", [
    ("PythonIf", "if s.x[cpu] < 2:", "asks Python for the truth of a state value: `if s.x\\[cpu\\] < 2:`"),
    ("PythonAnd", "s.x[cpu] < 2 and s.total == 0", "Put the condition in the result instead"),
    ("UnknownVariable", "def bump", "sets 'y', which is not a variable; the variables are: x, total"),
    ("NotHashable", "def bump", "sets 'total' to \\[1, 2\\] \\(list\\); state values must be ints"),
    ("SharedAsDict", "def bump", "update one CPU's slot with a mapping, e.g. x=\\{cpu: value\\}"),
    ("CpuOutOfRange", "def bump", "sets x\\[7\\], but CPU ids at .* are 0..1"),
    ("RaisesInside", "1 // (1 - s.x[cpu])", "ZeroDivisionError"),
    ("ForgotWhen", "def bump", "an action returns when\\(guard, var=value, ...\\)"),
])
def test_malformed_spec_exits_2_naming_file_and_line(cli, spec, needle, match):
    r = cli("verify", f"{M}:{spec}")
    assert r.returncode == 2, r.stdout + r.stderr
    assert "Traceback" not in r.stderr
    import re
    assert re.search(match, r.stderr), r.stderr
    assert f"malformed.py:{_line_of(needle) if needle != 'def bump' else ''}" in r.stderr or needle == "def bump"
    if needle != "def bump":
        assert f"malformed.py:{_line_of(needle)}:" in r.stderr


def test_exception_inside_spec_names_the_state(cli):
    r = cli("verify", f"{M}:RaisesInside")
    assert "in state" in r.stderr and "RaisesInside.bump" in r.stderr


def test_broken_symmetry_is_refused(cli):
    r = cli("verify", f"{M}:OrderedCpus")
    assert r.returncode == 2
    assert "declared CPU symmetry does not hold" in r.stderr
    assert "symmetric=False" in r.stderr
    # without the reduction the declaration is not relied on, and the spec runs
    assert cli("verify", f"{M}:OrderedCpus", "--no-symmetry").returncode == 0


def test_spec_without_actions_is_rejected_at_class_creation(cli):
    r = cli("verify", str(FIXTURES / "no_actions.py"))
    assert r.returncode == 2
    assert "no_actions.py:5: NoActions: declares no actions" in r.stderr


def test_syntax_error_names_line(cli):
    r = cli("verify", str(FIXTURES / "syntax_error.py"))
    assert r.returncode == 2 and "syntax_error.py:4: syntax error" in r.stderr


def test_unknown_spec_suggests_the_closest_not_all_68(cli):
    r = cli("verify", "percpu_eagre")
    assert r.returncode == 2
    assert "no spec 'percpu_eagre': did you mean percpu_eager" in r.stderr
    assert "percpu_lazy" not in r.stderr and len(r.stderr.splitlines()) == 1
    far = cli("list", "zzzz")
    assert far.returncode == 2 and "no spec 'zzzz': `list` shows the built-in specs" in far.stderr


def test_unknown_parameter_suggests_the_closest(cli):
    r = cli("verify", "percpu_eager", "--set", "cpus=2")
    assert r.returncode == 2
    assert "no selected spec has a parameter 'cpus'; did you mean ncpus?" in r.stderr


def test_parameter_outside_its_domain(cli):
    r = cli("verify", "percpu_eager", "--set", "readers=2")
    assert r.returncode == 2 and "readers=2 is outside its domain (0, 1)" in r.stderr


def test_bad_set_syntax(cli):
    r = cli("verify", "percpu_eager", "--set", "ncpus=two")
    assert r.returncode == 2 and "'two' is not an integer" in r.stderr


def test_json_is_written_with_errors_on_exit_2(cli, tmp_path):
    out = tmp_path / "r.json"
    r = cli("verify", f"{M}:PythonIf", "--format", "json", "--output", str(out))
    assert r.returncode == 2
    data = json.loads(out.read_text())
    assert data["summary"]["exit_code"] == 2
    assert data["errors"][0]["file"].endswith("malformed.py")
    assert data["errors"][0]["line"] == _line_of("if s.x[cpu] < 2:")


def test_argparse_usage_error_is_exit_2(cli):
    assert cli("verify", "--format", "yaml").returncode == 2


# The mistakes a newcomer meets first (issue 9): each names the file and line and says what to
# write instead. Run in-process: the command line's own path, without a process per case.
@pytest.mark.parametrize("spec,needle,match", [
    ("NoGuardCounter", "@action(role=\"cpus\")\n    def bump(s, cpu):\n        return when(True, left",
     r"NoGuardCounter.bump can always run \(its guard is True\) and each step changes left\[cpu\] by -1.*"
     r"a forgotten guard.\nAdd the condition that stops it to when\(...\), e.g.\n"
     r"    return when\(s.left\[cpu\] > 0, left=\{cpu: s.left\[cpu\] - 1\}\)"),
    ("NoGuardPc", "@action(role=\"cpus\")\n    def bump(s, cpu):\n        return when(s.x[cpu] == 0, pc",
     r"NoGuardPc.bump sets pc to 2, which is not a value of its type \(idle=0, busy=1\).*guard is missing a "
     r"condition.\nAdd the condition to when\(...\), e.g.\n    return when\(s.pc\[cpu\] == E.idle"),
    ("MutatesSlot", "s.x[cpu] += 1", r"MutatesSlot.bump changes the state in place: `s.x\[cpu\] \+= 1`.*"
     r"Return the new values instead, e.g.\n    return when\(guard, x=\{cpu: s.x\[cpu\] \+ 1\}\)"),
    ("MutatesShared", "s.total = s.total + 1", r"changes the state in place: `s.total = s.total \+ 1`.*\n.*"
     r"\n    return when\(guard, total=s.total \+ 1\)"),
    ("PythonNot", "when(not s.x[cpu]", r"Write instead: `not a` -> Not\(a\)"),
    ("PythonMax", "max(s.total", r"Write instead: `max\(a, b\)` / `min\(a, b\)` -> Max\(a, b\) / Min\(a, b\)"),
    ("PythonOr", "s.x[cpu] == 0 or", r"Write instead: `a or b` -> Or\(a, b\)"),
    ("PythonAnd", "s.x[cpu] < 2 and s.total == 0", r"Write instead: `a and b` -> And\(a, b\)"),
    ("PythonIf", "if s.x[cpu] < 2:", r"Write instead: `if cond:` -> when\(And\(guard, cond\), ...\)"),
    ("ListVariable", "seen = Shared([])", r"variable 'seen' is given \[\] \(list\); state values must be ints.*\n"
     r"Write a collection as one int per element instead: PerCpu\(0\).*bitmask"),
    ("NotHashable", "@action(role=\"cpus\")\n    def bump(s, cpu):\n        return when(s.x[cpu] < 1, total=[1, 2])",
     r"sets 'total' to \[1, 2\] \(list\).*\nWrite a collection as one int per element instead"),
    ("ReadsPastLastCpu", "s.x[s.ncpus]", r"ReadsPastLastCpu.bump reads x\[2\]: .*, but CPU ids at ncpus=2 are "
     r"0..1.\nIndex x with a CPU of its role \(the action's `cpu`, or `for c in s.cpus`\)"),
    ("ReadsLeftNeighbour", "s.x[cpu - 1]", r"reads x\[-1\].*\(Python would silently read the last one\).\n.*"
     r"write Select\(s.x, cpu - 1\), which gives 0 outside the range"),
    ("CpuOutOfRange", "@action(role=\"cpus\")\n    def bump(s, cpu):\n        return when(s.x[cpu] < 1, x={cpu + 7",
     r"sets x\[7\], but CPU ids at ncpus=2 are 0..1; key the update by a CPU of the role, e.g. x=\{cpu: value\}"),
    ("BootCpuFirst", "@action(role=\"cpus\")\n    def bump(s, cpu):\n        return when(And(s.x[cpu] == 0, Or(cpu == 0",
     r"declared CPU symmetry does not hold.*\n.*\(`cpu == 0`, `c < cpu`, `cpu \+ 1`\): compare per-CPU values "
     r"instead.*a role of its own, Role\(1\); or declare the role with symmetric=False"),
])
def test_newcomer_mistake_says_what_to_write_instead(capsys, spec, needle, match):
    import re

    from checker.cli import main

    assert main(["verify", f"{M}:{spec}", "--mode", "explore"]) == 2
    err = capsys.readouterr().err
    text = (FIXTURES / "malformed.py").read_text()
    line = text[:text.index(needle)].count("\n") + 1  # the line of the needle's first character:
    # the offending code, or an action's first line when the mistake is in what it returned
    assert f"malformed.py:{line}: " in err, err
    assert re.search(match, err, re.S), err


def test_a_broken_builtin_spec_module_names_its_file_and_line(tmp_path, monkeypatch):
    """A spec being written under specs/ that fails to import: its file and line, not a traceback."""
    import sys

    from checker import loader
    from checker.errors import SpecError

    pkg = tmp_path / "broken_specs_pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "half_written.py").write_text("# SPDX-License-Identifier: GPL-2.0-only\nfrom checker import NoSuchThing\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(loader, "BUILTIN_PACKAGE", "broken_specs_pkg")
    with pytest.raises(SpecError) as e:
        loader.builtin_specs()
    sys.modules.pop("broken_specs_pkg", None)
    assert e.value.line == 2 and str(e.value.file).endswith("half_written.py")
    assert "NoSuchThing" in str(e.value)
