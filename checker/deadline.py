# SPDX-License-Identifier: GPL-2.0-only
"""One deadline for the whole command: unattended CI always ends.

``--timeout`` bounds each exploration; nothing bounded the rest (importing a
spec that loops, an action that loops when it is first run on symbols at
load, a compiler that never returns, a search process that was stopped).
``--deadline S`` (or ``$COUNTERCHECK_DEADLINE``, for CI) arms a real-time
timer when the command starts. When it fires, the run stops through the
interrupt machinery (``checker.interrupts``: a Z3 query is interrupted, a
search process or a compiler is killed by the code that started it): what
was not decided is inconclusive (``timeout: deadline``), every requested
report is written, exit 3.

Python acts on the timer's signal between bytecodes, so code stuck inside
one long C call (a huge integer power in a spec) is reached only when that
call returns: if the process is still running a few seconds after the
deadline (``grace``), a watchdog process started with the timer writes an
inconclusive report to every requested path, says so on stderr, and kills
the command (which then ends by SIGKILL, never 0).
"""
from __future__ import annotations

import math
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import checker.interrupts as interrupts
from checker.errors import UsageError

ENV = "COUNTERCHECK_DEADLINE"
#: Seconds past the deadline before the watchdog kills a command that did not stop: the deadline itself,
#: between 2 and 10 s (time to list what was not decided and write the reports).
def grace(limit: float) -> float:
    """How long the watchdog waits past the deadline for the signal path to end the run (2 to 10 s)."""
    return min(10.0, max(2.0, limit))


_end: float | None = None


def seconds(flag: float | None) -> float | None:
    """The deadline in seconds from ``--deadline`` or else ``$COUNTERCHECK_DEADLINE``; None: none."""
    if flag is None:
        text = os.environ.get(ENV, "").strip()
        if not text:
            return None
        try:
            flag = float(text)
        except ValueError:
            raise UsageError(f"${ENV}={text!r}: write a number of seconds, e.g. {ENV}=3600") from None
        what = f"${ENV}={text}"
    else:
        what = f"--deadline {flag:g}"
    if not (flag > 0 and math.isfinite(flag)):
        raise UsageError(f"{what}: the deadline is a positive number of seconds")
    return flag


def remaining() -> float | None:
    """Seconds left before the deadline (None: no deadline): a timeout for a subprocess to wait."""
    return None if _end is None else max(0.0, _end - time.monotonic())


def _fire(signum: int, frame: object) -> None:
    interrupts.stop(interrupts.DEADLINE)


@contextmanager
def armed(limit: float | None, fallback: Callable[[], None] | None = None) -> Iterator[None]:
    """Run the body under a deadline of ``limit`` seconds (None: none). ``fallback`` is what the
    watchdog does, in its own process, if the command still runs ``grace`` seconds after the deadline
    (write the reports), before it kills the command."""
    global _end
    if limit is None or not hasattr(signal, "setitimer") or threading.current_thread() is not threading.main_thread():
        yield  # (signals reach the main thread only)
        return
    old = signal.signal(signal.SIGALRM, _fire)
    _end = time.monotonic() + limit
    watchdog = _watchdog(limit + grace(limit), fallback, grace(limit))
    signal.setitimer(signal.ITIMER_REAL, limit)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
        _end = None
        if watchdog:
            try:
                os.kill(watchdog, signal.SIGKILL)
                os.waitpid(watchdog, 0)
            except OSError:
                pass


def _watchdog(after: float, fallback: Callable[[], None] | None, late: float) -> int | None:
    """A process that kills this one ``after`` seconds from now, unless this one kills it first (or
    exits: it then notices its parent changed and ends)."""
    parent = os.getpid()
    sys.stdout.flush()
    sys.stderr.flush()
    try:
        pid = os.fork()
    except OSError:
        return None  # no watchdog: the deadline still works for everything but a stuck C call
    if pid:
        return pid
    code = 0
    try:
        for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGALRM):
            signal.signal(sig, signal.SIG_IGN)  # the terminal's Ctrl-C is the command's to handle
        end = time.monotonic() + after
        while time.monotonic() < end:
            time.sleep(min(0.5, max(0.0, end - time.monotonic())))
            if os.getppid() != parent:
                os._exit(0)
        if fallback is not None:
            fallback()
        for pid in _descendants(parent):  # its workers and compilers first: nothing outlives the command
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        print(f"error: the run did not stop within {late:g}s of its deadline (stuck in a C call?); "
              f"killed: inconclusive (timeout: deadline)", file=sys.stderr, flush=True)
        os.kill(parent, signal.SIGKILL)
    except BaseException:  # noqa: BLE001 - a forked child never returns into the command's code
        code = 1
    os._exit(code)


def _descendants(root: int) -> list[int]:
    """The processes below ``root`` (Linux /proc; none elsewhere), this watchdog left out."""
    children: dict[int, list[int]] = {}
    try:
        pids = [int(p) for p in os.listdir("/proc") if p.isdigit()]
    except OSError:
        return []
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat", "rb") as f:
                ppid = int(f.read().rsplit(b")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        children.setdefault(ppid, []).append(pid)
    out, todo = [], [root]
    while todo:
        for c in children.get(todo.pop(), ()):
            if c != os.getpid():
                out.append(c)
                todo.append(c)
    return out
