import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = Path(__file__).resolve().parent / "fixtures"
sys.path.insert(0, str(FIXTURES))


def run_cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    """Run ``python -m checker`` as a user would, in a fresh process."""
    env = dict(os.environ)
    return subprocess.run([sys.executable, "-m", "checker", *args], capture_output=True, text=True,
                          cwd=cwd or ROOT, env=env, timeout=600)


@pytest.fixture
def cli():
    return run_cli
