# SPDX-License-Identifier: GPL-2.0-only
"""Progress on stderr: one refreshing line on a terminal, a plain line a minute otherwise.

Hand-written rather than tqdm or rich: the engines report an unknown total
(states) or a known one (proof obligations) a few times per second, and one
line of text with ``\\r`` is all that needs; neither library is otherwise
used here. When stderr is not a terminal (a CI log), a plain ``progress:``
line is written every minute from a timer thread, as TLC does, so that a
long job is never silent: the latest figures the engines reported, and the
time since the run began. Never on stdout, so reports and JSON stay clean;
``--quiet`` turns both off. ``COUNTERCHECK_PROGRESS_INTERVAL`` (seconds)
changes the minute.
"""
from __future__ import annotations

import os
import shutil
import sys
import threading
import time
from typing import Any, Callable, TextIO

#: Seconds between two refreshes of the line: a few per second at most.
REFRESH = 0.25
#: Seconds between two plain progress lines when stderr is not a terminal.
INTERVAL = 60.0
INTERVAL_ENV = "COUNTERCHECK_PROGRESS_INTERVAL"


def interval_from_env() -> float:
    """Seconds between plain progress lines off a terminal: ``$COUNTERCHECK_PROGRESS_INTERVAL``, else 60."""
    try:
        return float(os.environ.get(INTERVAL_ENV, INTERVAL))
    except ValueError:
        return INTERVAL


class Progress:
    """Renders the explorer's and the prover's progress callbacks."""

    def __init__(self, stream: TextIO | None = None, *, quiet: bool = False, tty: bool | None = None,
                 clock: Callable[[], float] = time.monotonic, interval: float | None = None):
        self.stream = stream if stream is not None else sys.stderr
        is_tty = tty if tty is not None else _isatty(self.stream)
        self.live = is_tty and not quiet
        #: Plain lines every ``interval`` seconds (0: never), off a terminal.
        self.interval = 0.0 if is_tty or quiet else (interval if interval is not None else interval_from_env())
        #: The engines report their figures: to the live line, or for the plain lines.
        self.enabled = self.live or self.interval > 0
        self._latest = ""  # the last figures reported, for the plain line
        self._timer: threading.Thread | None = None
        self._stop = threading.Event()
        self._t0 = time.monotonic()
        self._clock = clock
        self._last = float("-inf")
        self._width = 0  # of the line on screen, to blank it out
        self._where = ""  # "spec j of M, point k of N": where the run is, set by verify

    def at(self, where: str) -> None:
        """Where the run is now (``spec 2 of 5, point 3 of 8``): shown before the engine's figures."""
        self._where = where
        if self.live:
            self._show(where, force=True)
        else:
            self._latest = where
            self._start_timer()

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
        if not self.live:
            self._latest = text  # the timer thread prints it
            return
        now = self._clock()
        if not force and now - self._last < REFRESH:
            return
        self._last = now
        # A wrapped line cannot be redrawn with \r: keep it within the terminal's width.
        text = text[:max(20, shutil.get_terminal_size().columns - 1)]
        self.stream.write("\r" + text.ljust(self._width))
        self.stream.flush()
        self._width = len(text)

    def _start_timer(self) -> None:
        if self._timer is not None or self.interval <= 0:
            return
        self._t0 = time.monotonic()
        self._timer = threading.Thread(target=self._tick, name="countercheck-progress", daemon=True)
        self._timer.start()

    def _tick(self) -> None:
        while not self._stop.wait(self.interval):
            try:
                self.stream.write(f"progress: {_elapsed(time.monotonic() - self._t0)} elapsed; {self._latest}\n")
                self.stream.flush()
            except (OSError, ValueError):  # stderr closed under us: progress is not worth an error
                return

    def close(self) -> None:
        """Stop the plain lines (the run is over)."""
        self._stop.set()
        if self._timer is not None:
            self._timer.join(timeout=1.0)
            self._timer = None

    def clear(self) -> None:
        """Blank the line, so that what is printed next starts clean."""
        if self._width:
            self.stream.write("\r" + " " * self._width + "\r")
            self.stream.flush()
            self._width = 0


def _elapsed(seconds: float) -> str:
    m, s = divmod(int(seconds), 60)
    h, m = divmod(m, 60)
    return f"{h}:{m:02d}:{s:02d}"


def _isatty(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):  # a closed or bare stream: not a terminal
        return False
