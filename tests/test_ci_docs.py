# SPDX-License-Identifier: GPL-2.0-only
"""docs/ci.md's GitHub Actions workflow and GitLab job run: their shell commands, extracted from the page, on a
repository with one small spec, offline (the install step is the one left out: this checkout is the package).
What their upload and artifact steps pick up must then exist and be valid."""
import json
import os
import re
import stat
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from conftest import ROOT
from ktap_rules import parse as parse_ktap
from test_ci_outputs import JUNIT_XSD, TINY, validate_sarif

yaml = pytest.importorskip("yaml", reason="PyYAML reads the workflow: pip install '.[test]'")

PAGE = (ROOT / "docs" / "ci.md").read_text()
BLOCKS = re.findall(r"```yaml\n(.*?)```", PAGE, re.S)


def installs(command: str) -> bool:
    """The step that installs countercheck from PyPI: the network, which the tests do not use."""
    return "pip install" in command


@pytest.fixture
def repo(tmp_path):
    """A user's repository with a spec in specs/, and countercheck-kernel on PATH as this checkout's."""
    (tmp_path / "specs").mkdir()
    (tmp_path / "specs" / "tiny.py").write_text(TINY)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    shim = bin_dir / "countercheck-kernel"
    shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m checker "$@"\n')
    shim.chmod(shim.stat().st_mode | stat.S_IXUSR)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "CI_", "XDG_"))}
    env.update(PATH=f"{bin_dir}{os.pathsep}{os.environ['PATH']}", PYTHONPATH=str(ROOT))
    return tmp_path, env


def sh(command: str, cwd: Path, env: dict) -> int:
    return subprocess.run(["bash", "-e", "-c", command], cwd=cwd, env=env, timeout=600).returncode


def test_the_github_actions_workflow_runs_and_leaves_what_its_upload_steps_take(repo):
    d, env = repo
    workflow = yaml.safe_load(BLOCKS[0])
    (job,) = workflow["jobs"].values()
    assert workflow["permissions"]["security-events"] == "write"  # upload-sarif needs it
    expand = lambda text: text.replace("${{ github.workspace }}", str(d))  # noqa: E731
    env.update({k: expand(v) for k, v in job["env"].items()},
               GITHUB_ACTIONS="true", GITHUB_WORKSPACE=str(d), GITHUB_STEP_SUMMARY=str(d / "summary.md"))
    ran, codes = [], []
    for step in job["steps"]:  # in the repository's checkout, as Actions runs them
        if "run" in step and not installs(step["run"]):
            assert "${{" not in step["run"]
            codes.append(sh(step["run"], d, env))
            ran.append(step["name"])
    assert ran == ["Verify the specs"] and codes == [1]  # tiny.below_two fails: the step fails, uploads still run
    uploads = [s for s in job["steps"] if s.get("uses", "").startswith(("github/codeql-action/upload-sarif",
                                                                           "actions/upload-artifact"))]
    assert uploads and all(s["if"] == "always()" for s in uploads)
    sarif = next(s for s in uploads if "upload-sarif" in s["uses"])["with"]["sarif_file"]
    validate_sarif(json.loads((d / sarif).read_text()))
    for path in next(s for s in uploads if "upload-artifact" in s["uses"])["with"]["path"].split():
        assert (d / path).stat().st_size > 0
    JUNIT_XSD.validate(str(d / "countercheck.xml"))
    assert "| `tiny` |" in (d / "summary.md").read_text()
    # the cached directory is where the compiled explorer keeps its builds
    cache = next(s for s in job["steps"] if s.get("uses", "").startswith("actions/cache"))["with"]["path"]
    built = subprocess.run([sys.executable, "-c", "from checker.compiled.build import cache_dir; print(cache_dir())"],
                           env=env, capture_output=True, text=True, timeout=120)
    assert Path(built.stdout.strip()).parent == d / cache, built.stderr


def test_the_gitlab_job_runs_and_leaves_its_reports(repo):
    d, env = repo
    (job,) = yaml.safe_load(BLOCKS[1]).values()
    env["CI_PROJECT_DIR"] = str(d)
    for k, v in job["variables"].items():
        env[k] = os.path.expandvars(v.replace("$CI_PROJECT_DIR", str(d)))
    assert all(installs(c) for c in job["before_script"])
    codes = [sh(c, d, env) for c in job["script"]]
    assert codes == [1]  # the job fails on tiny.below_two; the artifacts are kept (when: always)
    assert job["artifacts"]["when"] == "always"
    junit = d / job["artifacts"]["reports"]["junit"]
    JUNIT_XSD.validate(str(junit))
    assert ET.parse(junit).getroot().get("failures") == "1"
    (ktap,) = job["artifacts"]["paths"]
    _, (tiny,), _ = parse_ktap((d / ktap).read_text())
    assert (tiny.name, tiny.status) == ("tiny", "FAILURE")
    (cached,) = job["cache"]["paths"]
    assert (d / cached).resolve() == (Path(env["XDG_CACHE_HOME"]) / "countercheck").resolve()
