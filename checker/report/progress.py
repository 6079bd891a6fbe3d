# SPDX-License-Identifier: GPL-2.0-only
"""Live progress on a terminal: one refreshing stderr line.

Hand-written rather than tqdm or rich: the engines report an unknown total
(states) or a known one (proof obligations) a few times per second, and one
line of text with ``\\r`` is all that needs; neither library is otherwise
used here. Silent unless the stream is a terminal, and never on stdout, so
reports and JSON stay clean.
"""
from __future__ import annotations

import shutil
import sys
import time
from typing import Any, Callable, TextIO

#: Seconds between two refreshes of the line: a few per second at most.
REFRESH = 0.25


class Progress:
    """Renders the explorer's and the prover's progress callbacks."""

    def __init__(self, stream: TextIO | None = None, *, quiet: bool = False, tty: bool | None = None,
                 clock: Callable[[], float] = time.monotonic):
        self.stream = stream if stream is not None else sys.stderr
        is_tty = tty if tty is not None else _isatty(self.stream)
        self.enabled = is_tty and not quiet
        self._clock = clock
        self._last = float("-inf")
        self._width = 0  # of the line on screen, to blank it out
        self._where = ""  # "spec j of M, point k of N": where the run is, set by verify

    def at(self, where: str) -> None:
        """Where the run is now (``spec 2 of 5, point 3 of 8``): shown before the engine's figures."""
        self._where = where
        if self.enabled:
            self._show(where, force=True)

    def exploring(self, label: str) -> Callable[[Any], None] | None:
        """A callback for ``explore(progress=...)``, or None when silent (no cost at all)."""
        if not self.enabled:
            return None

        def show(st: Any) -> None:
            # The parallel coordinator keeps no parents of its own: its count is ``states``.
            n = max(st.states, len(st.parents))
            rate = n / st.seconds if st.seconds > 0 else 0.0
            # The figures first: a narrow terminal cuts the label, not them.
            self._show(f"{self._prefix()}{n:,} states  {rate:,.0f} states/s  frontier {st.frontier:,}  "
                       f"depth {st.depth}  {st.seconds:.1f}s  {label}")

        return show

    def proving(self, label: str) -> Callable[[int, int], None] | None:
        """A callback for obligations done of total, or None when silent."""
        if not self.enabled:
            return None
        t0 = self._clock()

        def show(done: int, total: int) -> None:
            self._show(f"{self._prefix()}proof obligations {done}/{total}  {self._clock() - t0:.1f}s  {label}",
                       force=done == total)

        return show

    def simulating(self, label: str) -> Callable[[int, int], None] | None:
        """A callback for random walks done of total, or None when silent."""
        if not self.enabled:
            return None
        t0 = self._clock()

        def show(done: int, total: int) -> None:
            self._show(f"{self._prefix()}walk {done}/{total}  {self._clock() - t0:.1f}s  {label}")

        return show

    def _prefix(self) -> str:
        return f"{self._where}: " if self._where else ""

    def _show(self, text: str, force: bool = False) -> None:
        now = self._clock()
        if not force and now - self._last < REFRESH:
            return
        self._last = now
        # A wrapped line cannot be redrawn with \r: keep it within the terminal's width.
        text = text[:max(20, shutil.get_terminal_size().columns - 1)]
        self.stream.write("\r" + text.ljust(self._width))
        self.stream.flush()
        self._width = len(text)

    def clear(self) -> None:
        """Blank the line, so that what is printed next starts clean."""
        if self._width:
            self.stream.write("\r" + " " * self._width + "\r")
            self.stream.flush()
            self._width = 0


def _isatty(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):  # a closed or bare stream: not a terminal
        return False
