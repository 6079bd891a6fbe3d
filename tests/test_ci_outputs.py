# SPDX-License-Identifier: GPL-2.0-only
"""CI outputs: JUnit XML and SARIF 2.1.0 beside the text log, validated against their schemas."""
import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET

import jsonschema
import pytest
import xmlschema

from conftest import FIXTURES, ROOT

JUNIT_XSD = xmlschema.XMLSchema(str(FIXTURES / "junit-10.xsd"))
SARIF_SCHEMA = json.loads((FIXTURES / "sarif-2.1.0-rtm.5.json").read_text())
REPORT_SCHEMA = json.loads((ROOT / "checker" / "report" / "schema.json").read_text())

# A spec in the user's repository: one invariant holds, one is violated unexpectedly (a trace of 2 steps).
TINY = '''\
from checker import Param, PerCpu, Role, Shared, Spec, Sum, action, invariant, sometimes, terminal, when


class Tiny(Spec):
    """Two CPUs add once each; the total is claimed to stay below 2."""

    kernel = "a test spec"
    ncpus = Param(2, domain=range(1, 4))
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

    @invariant
    def below_two(s):
        """The total stays below 2 (wrong with two CPUs)."""
        return s.total < 2

    @sometimes
    def one_add(s):
        return s.total == 1
'''


def line_of(text: str, needle: str) -> int:
    return next(i for i, line in enumerate(text.splitlines(), 1) if needle in line)


def validate_sarif(data: dict) -> None:
    cls = jsonschema.validators.validator_for(SARIF_SCHEMA)
    cls(SARIF_SCHEMA, format_checker=cls.FORMAT_CHECKER).validate(data)


@pytest.fixture(scope="module")
def one_run(tmp_path_factory):
    """One verify run in the user's directory: the tiny spec and a built-in bug spec, a text log and the
    three artifacts."""
    d = tmp_path_factory.mktemp("ci")
    (d / "tiny.py").write_text(TINY)
    (d / "out").mkdir()
    env = {**os.environ, "PYTHONPATH": str(ROOT)}  # this checkout's checker, run from another directory
    r = subprocess.run([sys.executable, "-m", "checker", "verify", "tiny.py", "eager_fold_gt", "--set", "ncpus=2",
                        "--set", "batch=2", "--set", "variant=B", "--mode", "explore", "--format", "text",
                        "--junit", "out/j.xml",
                        "--sarif", "out/s.sarif", "--json", "out/r.json"],
                       capture_output=True, text=True, cwd=d, env=env, timeout=600)
    return d, r


def test_one_run_writes_the_log_and_three_artifacts_that_validate(one_run):
    d, r = one_run
    assert r.returncode == 1, r.stderr  # tiny.below_two is violated unexpectedly
    assert "tiny.below_two violated after 2 steps" in r.stdout and "exit 1" in r.stdout  # the readable log
    JUNIT_XSD.validate(str(d / "out/j.xml"))
    validate_sarif(json.loads((d / "out/s.sarif").read_text()))
    jsonschema.validate(json.loads((d / "out/r.json").read_text()), REPORT_SCHEMA)


def test_junit_failure_carries_the_trace_and_a_found_bug_passes(one_run):
    d, _ = one_run
    root = ET.parse(d / "out/j.xml").getroot()
    cases = {(c.get("classname"), c.get("name").split()[0]): c for c in root.iter("testcase")}
    failure = cases[("countercheck.tiny", "below_two")].find("failure")
    assert failure.get("type") == "violated"
    lines = failure.text.splitlines()
    assert lines[0].startswith("tiny.below_two violated after 2 steps")
    head = next(ln for ln in lines if ln.split()[:1] == ["#"])  # the trace in lanes: a column per CPU
    steps = {ln.split()[0]: ln for ln in lines if ln.split()[:1] in (["1"], ["2"])}
    assert steps["1"].index("add") == head.index("cpu0") and steps["2"].index("add") == head.index("cpu1")
    bug = cases[("countercheck.eager_fold_gt", "read_bound")]
    assert bug.find("failure") is None and bug.find("error") is None  # found as expected: a pass
    assert "read_bound violated after 3 steps" in bug.find("system-out").text
    assert root.get("failures") == "1" and root.get("errors") == "0"


def test_sarif_result_at_the_property_line_with_a_code_flow_at_the_action_lines(one_run):
    d, _ = one_run
    run = json.loads((d / "out/s.sarif").read_text())["runs"][0]
    assert [r["ruleId"] for r in run["results"]] == ["tiny.below_two"]  # found bugs are no results
    res = run["results"][0]
    assert res["level"] == "error"
    loc = res["locations"][0]["physicalLocation"]
    assert loc["artifactLocation"] == {"uri": "tiny.py", "uriBaseId": "SRCROOT"}
    assert loc["region"]["startLine"] == line_of(TINY, "def below_two") - 1  # the decorator's line
    steps = res["codeFlows"][0]["threadFlows"][0]["locations"]
    add_line = line_of(TINY, "def add") - 1
    assert [s["location"]["physicalLocation"]["region"]["startLine"] for s in steps] == [add_line, add_line]
    assert steps[0]["location"]["message"]["text"].split()[:3] == ["1", "cpu0", "add"]
    assert run["originalUriBaseIds"]["SRCROOT"]["uri"] == d.resolve().as_uri() + "/"
    assert run["invocations"][0]["exitCode"] == 1


def test_json_steps_carry_their_action_line(one_run):
    d, _ = one_run
    checks = json.loads((d / "out/r.json").read_text())["checks"]
    bad = next(c for c in checks if c["property"] == "below_two")
    assert {(s["action"], s["line"]) for s in bad["trace"]} == {("add", line_of(TINY, "def add") - 1)}


def test_inconclusive_is_an_error_and_a_warning_never_a_pass(cli, tmp_path):
    r = cli("verify", "eager_fold_gt", "--set", "ncpus=2", "--set", "batch=2", "--set", "variant=B",
            "--mode", "explore", "--max-states", "5", "--format", "junit", "--sarif", str(tmp_path / "s.sarif"),
            "--json", str(tmp_path / "r.json"))
    assert r.returncode == 3, r.stderr
    JUNIT_XSD.validate(r.stdout)
    verdicts = {c["property"]: c["verdict"] for c in json.loads((tmp_path / "r.json").read_text())["checks"]}
    undecided = {p for p, v in verdicts.items() if v == "inconclusive"}
    assert len(undecided) > 10
    cases = {c.get("name").split()[0]: c for c in ET.fromstring(r.stdout).iter("testcase")}
    errors = {p for p, c in cases.items() if c.find("error") is not None}
    assert errors == undecided
    assert all(cases[p].find("error").get("type") == "inconclusive" for p in errors)
    assert "max_states" in cases["read_bound"].find("error").get("message")
    data = json.loads((tmp_path / "s.sarif").read_text())
    validate_sarif(data)
    results = data["runs"][0]["results"]
    assert {r["ruleId"].split(".")[1] for r in results} == undecided and {r["level"] for r in results} == {"warning"}
    bound = next(r for r in results if r["ruleId"] == "eager_fold_gt.read_bound")
    # a built-in spec is not in the user's repository: a logical location only
    assert bound["locations"] == [{"logicalLocations": [{"fullyQualifiedName": "eager_fold_gt.read_bound",
                                                        "name": "read_bound", "kind": "function"}]}]


def test_an_error_is_a_junit_error_case_and_a_sarif_notification(cli, tmp_path):
    r = cli("verify", str(FIXTURES / "malformed.py") + ":PythonIf", "--format", "junit",
            "--sarif", str(tmp_path / "s.sarif"))
    assert r.returncode == 2
    JUNIT_XSD.validate(r.stdout)
    (case,) = ET.fromstring(r.stdout).iter("testcase")
    assert case.get("classname") == "countercheck.errors"
    assert "asks Python for the truth" in case.find("error").get("message")
    data = json.loads((tmp_path / "s.sarif").read_text())
    validate_sarif(data)
    (inv,) = data["runs"][0]["invocations"]
    assert inv["executionSuccessful"] is False and inv["exitCode"] == 2
    (note,) = inv["toolExecutionNotifications"]
    loc = note["locations"][0]["physicalLocation"]
    assert loc["artifactLocation"] == {"uri": "tests/fixtures/malformed.py", "uriBaseId": "SRCROOT"}
