# SPDX-License-Identifier: GPL-2.0-only
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = Path(__file__).resolve().parent / "fixtures"
sys.path.insert(0, str(FIXTURES))
# Under GitHub Actions the CLI adds workflow commands to its output: the commands the tests run are not the
# job's, and the tests that check those commands set GITHUB_ACTIONS themselves.
os.environ.pop("GITHUB_ACTIONS", None)
# Proofs are proved and points lowered in every test: tests replace solver and lowering functions in-process,
# which the keys of the proof cache and the point index (checker.engines.proof_cache, checker.compiled.index:
# digests of files) cannot see. tests/test_proof_cache.py and tests/test_point_index.py turn them on.
os.environ["COUNTERCHECK_PROOF_CACHE"] = "off"
os.environ["COUNTERCHECK_POINT_INDEX"] = "off"
# A generated program the compiler rejects fails the test that built it (checker/compiled/build.py), where a
# user's run falls back to the interpreter saying so: otherwise an engine comparison compares the interpreter
# with itself. The fallback's own test (tests/test_compiled.py) lifts it.
os.environ["COUNTERCHECK_COMPILE_FAILURE"] = "raise"


@pytest.hookimpl(tryfirst=True)
def pytest_cmdline_main(config: pytest.Config) -> None:
    """-n auto --dist worksteal when pytest-xdist is there and the command line did not choose
    (-n 0, -n 2, -p no:xdist); runs before xdist's own hook, which turns -n into workers. worksteal, not
    loadfile: a worker that runs out takes tests from the other's queue, so one file's long tests do not
    leave a core idle at the end (a module-scoped fixture may then be set up on both workers)."""
    if not config.pluginmanager.hasplugin("xdist") or os.environ.get("PYTEST_XDIST_WORKER"):
        return
    if config.option.numprocesses is None:
        config.option.numprocesses = "auto"
        if config.option.dist == "no":
            config.option.dist = "worksteal"


def run_cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    """Run ``python -m checker`` as a user would, in a fresh process."""
    env = dict(os.environ)
    return subprocess.run([sys.executable, "-m", "checker", *args], capture_output=True, text=True,
                          cwd=cwd or ROOT, env=env, timeout=600)


@pytest.fixture
def cli():
    return run_cli
