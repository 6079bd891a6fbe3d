# SPDX-License-Identifier: GPL-2.0-only
"""Signals that arrive while the command is still importing (z3, the engines: about 0.4 s).

``checker.interrupts`` turns SIGINT, SIGTERM and SIGHUP into an orderly stop
(exit 3, every requested report written), but only once ``main()`` runs:
before, Ctrl-C gave a traceback from the middle of an import and SIGTERM
killed the process with no report. The first thing the ``checker`` package
does, when it is being run as the command (``python -m checker``, the
``countercheck-kernel`` script), is ``install()``: until ``interruptible()``
takes over, a signal is only noted, and the run then stops as soon as it
can, as it would had the signal come a moment later. Imported as a library,
nothing is installed. (A signal in the first few milliseconds, while Python
itself starts, still gets Python's default treatment.)
"""
from __future__ import annotations

import os
import signal
import sys

_received: list[int] = []
COMMANDS = ("countercheck-kernel",)


def _note(signum: int, frame: object) -> None:
    _received.append(signum)


def received() -> bool:
    """A signal arrived before ``interruptible()`` took over."""
    return bool(_received)


def _is_command() -> bool:
    argv0 = sys.argv[0] if sys.argv else ""
    if os.path.basename(argv0) in COMMANDS:
        return True
    # `python -m checker`: runpy imports the package while argv[0] is still "-m" (not `-m checker.x`)
    orig = list(getattr(sys, "orig_argv", ()))
    run = next((orig[i + 1] for i, a in enumerate(orig[:-1]) if a == "-m"),
               next((a[2:] for a in orig if a.startswith("-m") and len(a) > 2), None))
    return argv0 == "-m" and run == "checker"


def install() -> None:
    """Note SIGINT, SIGTERM and SIGHUP instead of acting on them, when this process is the command."""
    if not _is_command() or signal.getsignal(signal.SIGINT) is not signal.default_int_handler:
        return  # a library import, or someone else's handler: leave it alone
    for name in ("SIGINT", "SIGTERM", "SIGHUP"):
        if hasattr(signal, name):
            signal.signal(getattr(signal, name), _note)
