# SPDX-License-Identifier: GPL-2.0-only
"""CI outputs: JUnit XML, SARIF 2.1.0 and KTAP beside the text log, validated against their schemas; SARIF
also against GitHub code scanning's ingestion rules; the GitHub Actions annotations and step summary."""
import json
import os
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from urllib.parse import urlparse

import jsonschema
import pytest
import xmlschema

from conftest import FIXTURES, ROOT
from ktap_rules import parse as parse_ktap

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
    github_ingestion(data)


def _artifact_locations(node):
    if isinstance(node, dict):
        for k, v in node.items():
            if k == "artifactLocation":
                yield v
            yield from _artifact_locations(v)
    elif isinstance(node, list):
        for v in node:
            yield from _artifact_locations(v)


def github_ingestion(data: dict) -> None:
    """What GitHub code scanning needs of an upload (docs.github.com, "SARIF support for code scanning", and
    the SARIF Multitool's GH/GHAS rules), as explicit assertions."""
    assert data["version"] == "2.1.0" and data["$schema"]
    for run in data["runs"]:
        driver = run["tool"]["driver"]
        assert driver["name"] == "countercheck" and driver["version"] and urlparse(driver["informationUri"]).scheme
        assert run["automationDetails"]["id"].startswith("countercheck/")
        (inv,) = run["invocations"]
        assert inv["commandLine"].split()[:3] == ["python", "-m", "checker"]
        bases = run["originalUriBaseIds"]
        for base in bases.values():  # a base is an absolute directory URI
            assert urlparse(base["uri"]).scheme == "file" and base["uri"].endswith("/")
        ids = [r["id"] for r in driver["rules"]]
        assert len(ids) == len(set(ids))
        for rule in driver["rules"]:  # GH2012: what GitHub shows beside an alert
            assert rule["shortDescription"]["text"] and rule["fullDescription"]["text"]
            assert rule["help"]["text"] and rule["help"]["markdown"]
            assert len(rule["shortDescription"]["text"]) <= 1024
        for res in run["results"]:
            assert res["ruleId"] in ids and ids[res["ruleIndex"]] == res["ruleId"]
            assert res["message"]["text"] and res["partialFingerprints"]
            # GH1001: a result without a physical location makes GitHub reject the whole upload
            phys = res["locations"][0]["physicalLocation"]
            assert phys["artifactLocation"]["uri"]
            if "region" in phys:
                assert phys["region"]["startLine"] >= 1
            for flow in res.get("codeFlows", []):
                for tfl in flow["threadFlows"][0]["locations"]:
                    assert tfl["location"]["physicalLocation"]["artifactLocation"]["uri"]
        for loc in _artifact_locations(run):  # GH1005: relative URIs on a documented base, never absolute
            assert not urlparse(loc["uri"]).scheme and not loc["uri"].startswith("/"), loc
            assert loc["uriBaseId"] in bases, loc


@pytest.fixture(scope="module")
def one_run(tmp_path_factory):
    """One verify run in the user's directory: the tiny spec and a built-in bug spec, a text log and the
    three artifacts."""
    d = tmp_path_factory.mktemp("ci")
    (d / "tiny.py").write_text(TINY)
    (d / "out").mkdir()
    # this checkout's checker, run from another directory, as a step of GitHub Actions
    env = {**os.environ, "PYTHONPATH": str(ROOT), "GITHUB_ACTIONS": "true", "GITHUB_STEP_SUMMARY": str(d / "summary.md")}
    (d / "summary.md").write_text("## an earlier step's summary\n")
    r = subprocess.run([sys.executable, "-m", "checker", "verify", "tiny.py", "eager_fold_gt", "--set", "ncpus=2",
                        "--set", "batch=2", "--set", "variant=B", "--mode", "explore", "--format", "ktap",
                        "--output", "out/k.ktap", "--junit", "out/j.xml",
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
    # run in this checkout, the built-in spec is in the repository: its source's line (elsewhere, relative to the
    # COUNTERCHECK base: test_junit_case_times_add_up_...)
    (loc,) = bound["locations"]
    assert loc["physicalLocation"]["artifactLocation"] == {"uri": "specs/percpu_eager.py", "uriBaseId": "SRCROOT"}
    assert loc["physicalLocation"]["region"]["startLine"] == line_of(
        (ROOT / "specs/percpu_eager.py").read_text(), "def read_bound(s)") - 1
    assert loc["logicalLocations"][0]["fullyQualifiedName"] == "eager_fold_gt.read_bound"
    base = data["runs"][0]["originalUriBaseIds"]["COUNTERCHECK"]["uri"]
    assert (Path(urlparse(base).path) / "specs/percpu_eager.py").is_file()


def test_a_builtin_spec_outside_this_checkout_is_relative_to_the_countercheck_base(undecided, tmp_path):
    from checker.report import sarif

    run = sarif.render(undecided, cwd=tmp_path)["runs"][0]
    locs = {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in run["results"]}
    bases = {r["locations"][0]["physicalLocation"]["artifactLocation"]["uriBaseId"] for r in run["results"]}
    assert locs == {"specs/percpu_eager.py", "specs/bugs/eager_fold_gt.py"} and bases == {"COUNTERCHECK"}


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


def test_sarif_names_the_tool_its_version_the_analysis_and_the_command_line(one_run):
    d, _ = one_run
    run = json.loads((d / "out/s.sarif").read_text())["runs"][0]
    driver = run["tool"]["driver"]
    assert re.fullmatch(r"\d+\.\d+\.\d+.*", driver["version"])
    assert run["automationDetails"]["id"] == "countercheck/explore/sc/"
    (inv,) = run["invocations"]
    assert inv["arguments"][:2] == ["verify", "tiny.py"] and "--sarif out/s.sarif" in inv["commandLine"]
    (rule,) = driver["rules"]
    assert rule["shortDescription"]["text"] == "The total stays below 2 (wrong with two CPUs)."
    md = rule["help"]["markdown"]
    # the property's doc, what it models, the assumptions and the line that reproduces it
    assert "The total stays below 2" in md and "Models: a test spec" in md and "Assuming:" in md
    assert "```sh\npython -m checker verify tiny.py --set ncpus=2\n```" in md
    state = run["results"][0]["codeFlows"][0]["threadFlows"][0]["locations"][1]["state"]
    assert state["total"] == {"text": "2", "properties": {"raw": 2}}


def test_junit_case_times_add_up_to_their_runs_with_relative_paths_and_the_version(one_run):
    d, _ = one_run
    root = ET.parse(d / "out/j.xml").getroot()
    checks = json.loads((d / "out/r.json").read_text())["checks"]
    searches = sum({(c["run"], c["seconds"]): c["seconds"] for c in checks}.values())  # each search once
    cases = [float(c.get("time")) for c in root.iter("testcase")]
    assert len(cases) == len(checks) and abs(sum(cases) - searches) < 1e-5 * len(cases)
    assert sum(cases) <= float(root.get("time")) + 0.001  # the whole run also loads and plans
    for suite in root.iter("testsuite"):
        assert abs(float(suite.get("time")) - sum(float(c.get("time")) for c in suite.iter("testcase"))) < 0.002
    suites = {s.get("name"): s for s in root.iter("testsuite")}
    assert suites["tiny"].get("file") == "tiny.py"
    assert suites["eager_fold_gt"].get("file") == "specs/bugs/eager_fold_gt.py"
    props = {p.get("name"): p.get("value") for p in suites["tiny"].iter("property")}
    assert props["countercheck.version"] == suites["tiny"].get("version")
    assert props["countercheck.command_line"].startswith("python -m checker verify tiny.py eager_fold_gt")


def test_json_names_the_tool_and_shows_values_beside_the_raw_ones(one_run):
    d, _ = one_run
    data = json.loads((d / "out/r.json").read_text())
    assert data["schema_version"] == "1.3"
    assert data["tool"]["name"] == "countercheck" and data["tool"]["command_line"].startswith("python -m checker")
    bug = next(c for c in data["checks"] if c["spec"] == "eager_fold_gt" and c["property"] == "read_bound")
    init = bug["initial_state"]
    assert (init["lock"], bug["initial_state_shown"]["lock"]) == (-1, "-")  # nobody holds fbc->lock
    assert (init["adders_pc"][0], bug["initial_state_shown"]["adders_pc[0]"]) == (0, "idle")  # an enum by name
    assert all(set(s["shown"]) == set(s["changes"]) for s in bug["trace"])


SHOWN = '''\
from checker import (NOBODY, CpuId, Enum, Param, PerCpu, Role, Shared, Spec, action, invariant, sometimes, terminal,
                     when)

PC = Enum("idle", "done", name="pc")


class Owned(Spec):
    """A CPU takes the owner slot; claimed to stay free."""

    kernel = "a test spec"
    ncpus = Param(1, domain=range(1, 3))
    cpus = Role("ncpus", symmetric=True)
    owner = Shared(NOBODY, type=CpuId)
    pc = PerCpu(PC.idle, type=PC)

    @action(role="cpus")
    def take(s, cpu):
        return when(s.pc[cpu] == PC.idle, owner=cpu, pc={cpu: PC.done})

    @invariant
    def nobody_owns(s):
        return s.owner == NOBODY

    @sometimes
    def taken(s):
        return s.pc[0] == PC.done

    @terminal
    def done(s):
        return s.pc[0] == PC.done
'''


def test_json_and_sarif_show_an_enum_name_and_a_cpu_beside_the_raw_value(tmp_path):
    from checker import loader
    from checker.report import sarif
    from checker.verify import verify

    (tmp_path / "owned.py").write_text(SHOWN)
    report = verify(loader.resolve([str(tmp_path / "owned.py")]), mode="explore")
    bad = next(c for c in report.checks if c.property == "nobody_owns")
    (step,) = bad.to_json()["trace"]
    assert step["changes"] == {"owner": 0, "pc[0]": 1} and step["shown"] == {"owner": "cpu0", "pc[0]": "done"}
    jsonschema.validate(report.to_json(), REPORT_SCHEMA)
    report.arguments = ["verify", "owned.py"]  # as the command line sets it
    data = sarif.render(report, cwd=tmp_path)
    validate_sarif(data)
    (flow_step,) = data["runs"][0]["results"][0]["codeFlows"][0]["threadFlows"][0]["locations"]
    assert flow_step["state"]["owner"] == {"text": "cpu0", "properties": {"raw": 0}}


def test_github_actions_groups_each_spec_annotates_failures_and_appends_a_summary(one_run):
    d, r = one_run
    out = r.stdout.splitlines()
    start, end = out.index(next(ln for ln in out if ln.startswith("::group::tiny"))), out.index("::endgroup::")
    group = out[start:end]
    assert group[0] == "::group::tiny: 3 of 4 checks as expected"
    (error,) = [ln for ln in group if ln.startswith("::error ")]
    props, message = error[len("::error "):].split("::", 1)
    assert props.startswith(f"file=tiny.py,line={line_of(TINY, 'def below_two') - 1},title=tiny.below_two ")
    assert "%0A" in message and "\n" not in message  # the trace, its lines escaped
    assert "::group::eager_fold_gt: 19 of 19 checks as expected" in out
    summary = (d / "summary.md").read_text()
    assert summary.startswith("## an earlier step's summary\n")  # appended, never overwritten
    assert "| `tiny` | 4 | 3 | 1 | 0 |" in summary and "| `eager_fold_gt` | 19 | 19 | 0 | 0 |" in summary
    assert "- `tiny.below_two [ncpus=2]: violated after 2 steps`" in summary


def test_github_actions_escapes_workflow_command_data():
    from checker.report.github import _data, _prop

    assert _data("50% done\r\nnext") == "50%25 done%0D%0Anext"
    assert _prop("a.py: x, y") == "a.py%3A x%2C y"


@pytest.fixture(scope="module")
def undecided():
    """eager_fold_gt stopped after 5 states, in this process: every property inconclusive."""
    from checker import loader
    from checker.verify import parse_set, verify

    report = verify(loader.resolve(["eager_fold_gt"]), sets=parse_set(["ncpus=2", "batch=2", "variant=B"]),
                    mode="explore", max_states=5)
    report.arguments = ["verify", "eager_fold_gt", "--max-states", "5"]  # as the command line sets it
    return report


def fake_kernel_tree(d: Path) -> int:
    """A kernel tree with the file eager_fold_gt models; the line where percpu_counter_add_batch is defined."""
    (d / "kernel").mkdir(parents=True)
    (d / "mm").mkdir()
    (d / "lib").mkdir()
    (d / "Makefile").write_text("VERSION = 6\n")
    (d / "lib/percpu_counter.c").write_text(
        "// SPDX-License-Identifier: GPL-2.0\n#include <linux/percpu_counter.h>\n\n"
        "void percpu_counter_add_batch(struct percpu_counter *fbc, s64 amount, s32 batch);\n"
        "static int compute_batch_value(unsigned int cpu)\n{\n\treturn 0;\n}\n\n"
        "void percpu_counter_add_batch(struct percpu_counter *fbc, s64 amount, s32 batch)\n{\n}\n"
        "EXPORT_SYMBOL(percpu_counter_add_batch);\n")
    return 10


def test_sarif_in_a_kernel_tree_points_at_the_modelled_kernel_function(undecided, tmp_path):
    from checker.report import sarif

    line = fake_kernel_tree(tmp_path / "linux")
    for data in (sarif.render(undecided, cwd=tmp_path / "linux"),  # run inside the tree
                 sarif.render(undecided, cwd=tmp_path, kernel_tree=tmp_path / "linux")):  # --kernel-tree
        run = data["runs"][0]
        assert run["originalUriBaseIds"]["SRCROOT"]["uri"] == (tmp_path / "linux").as_uri() + "/"
        results = run["results"]
        assert len(results) > 10
        for res in results:
            phys = res["locations"][0]["physicalLocation"]
            assert phys == {"artifactLocation": {"uri": "lib/percpu_counter.c", "uriBaseId": "SRCROOT"},
                            "region": {"startLine": line}}
            assert res["properties"]["kernelFunction"] == "percpu_counter_add_batch"
        validate_sarif(data)


def test_kernel_tree_must_be_one(capsys, tmp_path):
    from checker.cli import main

    assert main(["verify", "tiny", "--kernel-tree", str(tmp_path)]) == 2
    assert "not a kernel source tree" in capsys.readouterr().err


def multitool() -> str | None:
    """The SARIF Multitool's binary (npm @microsoft/sarif-multitool, which .ci/run installs), if it is here:
    $SARIF_MULTITOOL, or beside the npm wrapper on PATH (the wrapper itself runs through a shell, which
    would split the rule kinds' ';')."""
    if os.environ.get("SARIF_MULTITOOL"):
        return os.environ["SARIF_MULTITOOL"]
    wrapper = shutil.which("sarif-multitool")
    if wrapper is None:
        return None
    native = Path(wrapper).resolve().parent.parent / "sarif-multitool-linux" / "Sarif.Multitool"
    return str(native) if native.is_file() else None


@pytest.mark.skipif(multitool() is None, reason="the SARIF Multitool is not installed: npm install "
                    "@microsoft/sarif-multitool (.ci/run does), or set SARIF_MULTITOOL to its binary")
def test_sarif_passes_the_multitool_github_rules(one_run, undecided, tmp_path):
    from checker.report import sarif

    d, _ = one_run
    fake_kernel_tree(tmp_path / "linux")
    (tmp_path / "tree.sarif").write_text(json.dumps(sarif.render(undecided, cwd=tmp_path / "linux")))
    for f in (d / "out/s.sarif", tmp_path / "tree.sarif"):
        out = tmp_path / (f.stem + ".validation.sarif")
        r = subprocess.run([multitool(), "validate", "--rule-kind", "Gh;Ghas", "--output", str(out), str(f)],
                           capture_output=True, text=True, timeout=300,
                           env={**os.environ, "DOTNET_SYSTEM_GLOBALIZATION_INVARIANT": "1"})  # no ICU needed
        assert r.returncode == 0, r.stdout + r.stderr
        problems = [(x["ruleId"], x["message"].get("text", x["message"])) for run in json.loads(out.read_text())["runs"]
                    for x in run.get("results", []) if x.get("level", "warning") in ("error", "warning")]
        assert problems == [], problems


def test_a_subtest_per_spec_a_result_per_check_and_the_trace_before_it(one_run):
    d, _ = one_run
    head, (tiny, bug), tail = parse_ktap((d / "out/k.ktap").read_text())
    assert head[0].startswith("# countercheck ") and "verify tiny.py eager_fold_gt" in head[0]
    assert (tiny.name, tiny.status, bug.name, bug.status) == ("tiny", "FAILURE", "eager_fold_gt", "SUCCESS")
    assert [(t.name.split()[0], t.status) for t in tiny.subtests] == [
        ("counted", "SUCCESS"), ("below_two", "FAILURE"), ("one_add", "SUCCESS"), ("no_deadlock", "SUCCESS")]
    below = tiny.subtests[1]
    assert below.log[0] == "    # tiny.below_two violated after 2 steps (shortest); ncpus=2"
    head = next(ln for ln in below.log if re.match(r"\s*#\s+#\s+cpu0\s+cpu1\s+source$", ln))  # the trace in lanes
    steps = {ln.split()[1]: ln for ln in below.log if re.match(r"\s*#\s+[12]\s", ln)}
    assert steps["1"].index(" add ") + 1 == head.index("cpu0") and steps["2"].index(" add ") + 1 == head.index("cpu1")
    assert below.log[-1].strip() == "#   reproduce: python -m checker verify tiny.py --set ncpus=2"
    assert len(bug.subtests) == 19 and {t.status for t in bug.subtests} == {"SUCCESS"}  # bugs found as expected
    assert tail == ["# 23 checks: 22 as expected, 1 failed, 0 inconclusive, 0 errors; exit 1"]


def test_inconclusive_is_not_ok_with_its_reason_never_a_skip(undecided):
    from checker.report import ktap

    text = ktap.render(undecided)
    assert "SKIP" not in text
    _, (spec,), _ = parse_ktap(text)
    undecided_checks = [c for c in undecided.checks if c.verdict == "inconclusive"]
    inconclusive = [t for t in spec.subtests if t.directive.startswith("inconclusive")]
    assert len(inconclusive) == len(undecided_checks) > 10
    assert {t.status for t in inconclusive} == {"FAILURE"} and spec.status == "FAILURE"
    assert {t.directive for t in inconclusive} == {"inconclusive (max_states)"}


def test_the_reports_name_the_running_version_and_how_it_was_invoked():
    import tomllib

    from checker.provenance import command_line, program, version

    assert version() == tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    assert program("/usr/lib/python3/site-packages/checker/__main__.py") == "python -m checker"
    assert program("/home/me/.local/bin/countercheck-kernel") == "countercheck-kernel"
    assert command_line(["verify", "my spec.py"], "countercheck-kernel") == "countercheck-kernel verify 'my spec.py'"


def test_outside_github_actions_nothing_is_added(undecided, tmp_path):
    import io

    from checker.report.github import publish

    out = io.StringIO()
    summary = tmp_path / "summary.md"
    publish(undecided, out=out, environ={"GITHUB_STEP_SUMMARY": str(summary)})  # GITHUB_ACTIONS unset
    assert out.getvalue() == "" and not summary.exists()
    publish(undecided, out=out, environ={"GITHUB_ACTIONS": "true", "GITHUB_STEP_SUMMARY": str(summary)})
    assert out.getvalue().count("::warning ") == len({c.property for c in undecided.checks if c.status != "ok"})
    assert "| `eager_fold_gt` |" in summary.read_text()


def test_kernel_function_names_are_read_from_the_kernel_text_likeliest_first():
    from checker.report.locate import function_names

    text = "kernel/fork.c mmput, __mmput, __mmdrop, check_mm and include/linux/sched/mm.h mmdrop (v6.2 to today)"
    names = function_names(text)
    assert names[:3] == ["__mmput", "__mmdrop", "check_mm"] and "mmput" in names and "today" in names
    assert not {"kernel", "fork", "include", "linux", "sched"} & set(names)  # parts of paths


def test_kernel_definitions_are_found_and_prototypes_macro_calls_and_exports_are_not(tmp_path):
    from checker.report.locate import definitions

    f = tmp_path / "x.c"
    f.write_text("static LIST_HEAD(percpu_counters);\n"                                # 1: a macro call
                 "void percpu_counter_add_batch(struct percpu_counter *fbc, s64 a, s32 b);\n"  # 2: a prototype
                 "static inline void debug_activate(struct percpu_counter *fbc)\n{ }\n"      # 3
                 "s64 __percpu_counter_sum(struct percpu_counter *fbc)\n{\n}\n"               # 5
                 "EXPORT_SYMBOL(__percpu_counter_sum);\n"                                     # 8
                 "static int __init percpu_counter_startup(void)\n{\n}\n"                   # 9
                 "#define percpu_counter_init(fbc, value, gfp)\t\\\n\t0\n"                   # 12
                 "void percpu_counter_add_batch(struct percpu_counter *fbc, s64 a, s32 b)\n{\n}\n")  # 14
    assert definitions(str(f)) == {"debug_activate": 3, "__percpu_counter_sum": 5, "percpu_counter_startup": 9,
                                   "percpu_counter_init": 12, "percpu_counter_add_batch": 14}
