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
    assert "no_actions.py:4: NoActions: declares no actions" in r.stderr


def test_syntax_error_names_line(cli):
    r = cli("verify", str(FIXTURES / "syntax_error.py"))
    assert r.returncode == 2 and "syntax_error.py:3: syntax error" in r.stderr


def test_unknown_spec_lists_the_valid_ones(cli):
    r = cli("verify", "percpu_eagre")
    assert r.returncode == 2
    assert "no spec 'percpu_eagre'; built-in specs are: " in r.stderr
    assert "percpu_eager, " in r.stderr.split("built-in specs are: ")[1]


def test_unknown_parameter_lists_the_valid_ones(cli):
    r = cli("verify", "percpu_eager", "--set", "cpus=2")
    assert r.returncode == 2
    assert "no selected spec has a parameter 'cpus'; their parameters are: batch, forever, irq, large, limit" in r.stderr


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
