# SPDX-License-Identifier: GPL-2.0-only
"""Colour for the human report: on a terminal, or when asked; never in files or pipes unless forced.

``--color always|never`` decides; with ``auto`` (the default) ``NO_COLOR`` (https://no-color.org)
turns colour off, then ``FORCE_COLOR`` turns it on, then a terminal other than ``TERM=dumb``
turns it on, as pytest decides.
"""
from __future__ import annotations

import os
from typing import Mapping, TextIO

COLOR_CHOICES = ("auto", "always", "never")

_CODES = {"green": "32", "red": "31", "yellow": "33", "bold": "1", "dim": "2", "cyan": "36"}


def wants_color(choice: str, stream: TextIO, environ: Mapping[str, str] | None = None) -> bool:
    """Colour for ``--color``: always/never, or auto: ``NO_COLOR`` off, ``FORCE_COLOR`` on, else a terminal."""
    env = os.environ if environ is None else environ
    if choice != "auto":
        return choice == "always"
    if env.get("NO_COLOR"):
        return False
    if env.get("FORCE_COLOR"):
        return True
    try:
        tty = stream.isatty()
    except (AttributeError, ValueError):
        tty = False
    return tty and env.get("TERM") != "dumb"


class Style:
    """Paints text when colour is on, and is the identity otherwise."""

    def __init__(self, color: bool = False):
        self.color = color

    def paint(self, text: str, *names: str) -> str:
        if not self.color or not names or not text:
            return text
        return "\033[" + ";".join(_CODES[n] for n in names) + "m" + text + "\033[0m"

    #: The colour of each outcome: a check's status, a point's mark, the summary's exit code.
    def status(self, text: str, status: str) -> str:
        return self.paint(text, {"ok": "green", "failed": "red", "inconclusive": "yellow", "bug": "yellow"}
                          .get(status, "bold"))


PLAIN = Style(False)
