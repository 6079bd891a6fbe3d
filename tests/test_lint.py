# SPDX-License-Identifier: GPL-2.0-only
"""The linter a Python reviewer expects: ruff with pyflakes and bugbear (pyproject's [tool.ruff]) is clean
over checker/, specs/, models/ and tests/, so that a redefined name or an unused import is caught here."""
import shutil
import subprocess
import sys

import pytest

from conftest import ROOT


def _ruff() -> list[str]:
    if shutil.which("ruff"):
        return ["ruff"]
    pytest.importorskip("ruff", reason="ruff is not installed: pip install '.[test]'")
    return [sys.executable, "-m", "ruff"]


def test_ruff_is_clean():
    r = subprocess.run([*_ruff(), "check", "--no-cache", "--output-format", "concise", "checker", "specs", "models",
                        "tests"], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr


def test_ruff_catches_an_unused_import(tmp_path):
    """The rule set is live: a file with an unused import and an undefined name fails."""
    bad = tmp_path / "bad.py"
    bad.write_text("import os\n\n\ndef f():\n    return undefined_name\n")
    r = subprocess.run([*_ruff(), "check", "--no-cache", "--output-format", "concise", "--config",
                        str(ROOT / "pyproject.toml"), str(bad)], capture_output=True, text=True, timeout=60)
    assert r.returncode == 1
    assert "F401" in r.stdout and "F821" in r.stdout
