# SPDX-License-Identifier: GPL-2.0-only
"""How wide text output is drawn: ``--width N``, else the terminal's width, else 100 columns."""
from __future__ import annotations

import os
import sys
from typing import TextIO

from checker.errors import UsageError

#: Without a terminal (a pipe, a CI log, a file): wide enough for a review, narrow enough for a mail quote.
DEFAULT = 100
#: The narrowest a trace or table is drawn at (email is 72-75 columns).
NARROWEST = 40


def output_width(width: int | None, stream: TextIO | None = None) -> int:
    """The width to draw at: ``width`` when given (at least ``NARROWEST``), else the terminal's (``COLUMNS``
    honoured) when ``stream`` is one, else ``DEFAULT``."""
    if width is not None:
        if width < NARROWEST:
            raise UsageError(f"--width {width}: draw at least {NARROWEST} columns wide")
        return width
    stream = stream or sys.stdout
    try:
        tty = stream.isatty()
    except (AttributeError, ValueError):
        tty = False
    if not tty:
        return DEFAULT
    try:
        return max(NARROWEST, os.get_terminal_size(stream.fileno()).columns)
    except (OSError, AttributeError, ValueError):
        return DEFAULT
