# SPDX-License-Identifier: GPL-2.0-only
"""Which tool wrote a report, which version, and the command line that ran it.

Every JSON, SARIF and JUnit report carries these, so a report kept as a CI
artifact says how to make it again. The version is the installed
distribution's; in a checkout that is not installed (or whose installed copy
is another version), the one ``pyproject.toml`` beside the package declares,
since that is the code that ran.
"""
from __future__ import annotations

import functools
import os
import re
import shlex
import sys
from importlib import metadata
from pathlib import Path
from typing import Sequence

NAME = "countercheck"
DISTRIBUTION = "countercheck-kernel"
#: Where a reader of a report learns about the tool: the distribution's page on PyPI.
INFORMATION_URI = "https://pypi.org/project/countercheck-kernel/"

_PYPROJECT = Path(__file__).resolve().parent.parent / "pyproject.toml"


@functools.lru_cache(maxsize=1)
def version() -> str:
    """The running countercheck's version: the checkout's pyproject.toml when run from one, else the
    installed distribution's metadata."""
    try:
        text = _PYPROJECT.read_text(encoding="utf-8")
    except OSError:
        text = ""
    if f'name = "{DISTRIBUTION}"' in text:
        m = re.search(r'^version\s*=\s*"([^"]+)"', text, re.M)
        if m:
            return m.group(1)
    try:
        return metadata.version(DISTRIBUTION)
    except metadata.PackageNotFoundError:
        return "0+unknown"  # neither a checkout nor installed (a copied tree): said so, never a made-up number


def program(argv0: str | None = None) -> str:
    """How the user invoked the tool: ``python -m checker`` or the console script's name."""
    a0 = sys.argv[0] if argv0 is None else argv0
    name = os.path.basename(a0)
    if name in ("__main__.py", "-m", "-c", "") or name.startswith("python"):
        return "python -m checker"
    return name


def command_line(args: Sequence[str], argv0: str | None = None) -> str:
    """The command line, quoted for a POSIX shell: ``python -m checker verify tiny.py --set ncpus=2``."""
    return " ".join([program(argv0)] + [shlex.quote(a) for a in args])
