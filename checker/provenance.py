# SPDX-License-Identifier: GPL-2.0-only
"""Which tool wrote a report, which version, and the command line that ran it.

Every JSON, SARIF and JUnit report carries these, so a report kept as a CI
artifact says how to make it again. The version is the installed
distribution's; in a checkout that is not installed (or whose installed copy
is another version), the one ``pyproject.toml`` beside the package declares,
since that is the code that ran.
"""
from __future__ import annotations

import shlex
from typing import Sequence

# one source each for --version, usage lines and the reports
from checker.invocation import invoked_as as program  # noqa: F401  (re-exported)
from checker.version import version  # noqa: F401  (re-exported)

NAME = "countercheck"
DISTRIBUTION = "countercheck-kernel"
#: Where a reader of a report learns about the tool: the distribution's page on PyPI.
INFORMATION_URI = "https://pypi.org/project/countercheck-kernel/"


def command_line(args: Sequence[str], argv0: str | None = None) -> str:
    """The command line, quoted for a POSIX shell: ``python -m checker verify tiny.py --set ncpus=2``."""
    return " ".join([program(argv0)] + [shlex.quote(a) for a in args])
