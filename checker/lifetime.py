# SPDX-License-Identifier: GPL-2.0-only
"""Process lifetimes tied to the coordinator: a child never outlives the checker.

A worker (``--jobs``), a compiled search or a compiler left behind by a
``kill -9`` of the checker would hold its memory and CPU for minutes, with
nobody to read its answer. On Linux each child asks the kernel to kill it
when its parent dies (``prctl(PR_SET_PDEATHSIG, SIGKILL)``, through ctypes);
elsewhere, and as a second line on Linux, a forked worker watches its parent
(``watch_parent``: the parent's pid changing means it is gone) and ends
itself. A child started with ``popen_kwargs`` is also in its own process
group, so an interrupt can end it with everything it started
(``kill_group``: a compiler's cc1 and as).
"""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from typing import Any

PR_SET_PDEATHSIG = 1


_prctl: Any = None  # libc's prctl, looked up once in the parent (a child between fork and exec imports nothing)


def _libc_prctl() -> Any:
    global _prctl
    if _prctl is None and sys.platform.startswith("linux"):
        try:
            import ctypes

            _prctl = ctypes.CDLL(None, use_errno=True).prctl
        except (OSError, AttributeError):
            _prctl = False
    return _prctl or None


def die_with_parent(parent: int | None = None) -> bool:
    """In a child: be killed (SIGKILL) when the parent dies. False where the kernel cannot do it
    (not Linux, no libc); ``parent`` (its pid): if it is already gone, end now."""
    prctl = _libc_prctl()
    ok = prctl is not None and prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0) == 0
    if parent is not None and os.getppid() != parent:  # it died before the request took hold
        os._exit(1)
    return ok


def watch_parent(parent: int, every: float = 1.0) -> None:
    """In a child: a daemon thread that ends the process once ``parent`` is no longer its parent
    (the portable fallback for ``die_with_parent``; at most ``every`` seconds late)."""
    def watch() -> None:
        ev = threading.Event()
        while not ev.wait(every):
            if os.getppid() != parent:
                os._exit(1)

    threading.Thread(target=watch, name="countercheck-watch-parent", daemon=True).start()


def _child_setup() -> None:  # runs in the child between fork and exec: async-signal-safe calls only
    die_with_parent()


def popen_kwargs() -> dict[str, Any]:
    """Keyword arguments for ``subprocess`` so the child dies with us and can be ended as a group."""
    if os.name != "posix":
        return {}
    _libc_prctl()  # looked up here, in the parent
    return {"preexec_fn": _child_setup, "start_new_session": True}


def kill_group(proc: subprocess.Popen) -> None:
    """End ``proc`` and whatever it started (``popen_kwargs`` made it a group leader), then reap it."""
    try:
        if os.name == "posix":
            os.killpg(proc.pid, signal.SIGKILL)
        else:
            proc.kill()
    except (ProcessLookupError, PermissionError, OSError):
        pass
    proc.wait()


def stop_workers(conns: list[Any], procs: list[Any], grace: float) -> None:
    """Tell forked workers to stop (``None`` on each pipe), wait up to ``grace`` seconds in all for them,
    then kill what is still running (a worker in the middle of a job)."""
    for conn in conns:
        try:
            conn.send(None)
        except (BrokenPipeError, OSError):
            pass
    end = time.monotonic() + grace
    for p in procs:
        p.join(timeout=max(0.0, end - time.monotonic()))
        if p.is_alive():
            p.kill()
            p.join()
