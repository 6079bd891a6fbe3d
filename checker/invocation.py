# SPDX-License-Identifier: GPL-2.0-only
"""The name the user typed to run countercheck: for usage lines and ``reproduce:`` lines.

``countercheck-kernel`` when run as the console script (the documented, robust way: a ``checker.py``
in the current folder shadows ``python -m checker``), ``python -m checker`` otherwise.
"""
from __future__ import annotations

import os
import sys

SCRIPT = "countercheck-kernel"
MODULE = "python -m checker"


def invoked_as(argv0: str | None = None) -> str:
    """``countercheck-kernel`` when the console script runs, else ``python -m checker``."""
    name = os.path.basename(sys.argv[0] if argv0 is None else argv0)
    return SCRIPT if name == SCRIPT else MODULE
