# SPDX-License-Identifier: GPL-2.0-only
"""Ending a run on SIGINT, SIGTERM or SIGHUP: promptly, as a ``KeyboardInterrupt``, Z3 included.

Python runs a signal handler only between bytecodes, so a long Z3 query
would hold an interrupt until it returns (up to ``--smt-timeout``), and Z3
by default catches SIGINT itself during a query and answers ``unknown``,
so the run went on. Inside ``interruptible()``:

- SIGTERM and SIGHUP raise ``KeyboardInterrupt`` as SIGINT does, so every
  command ends the same way whatever stopped it (a CI job's timeout sends
  SIGTERM, a closed terminal SIGHUP);
- Z3 leaves SIGINT to Python (its ``ctrl_c`` parameter off), and a thread
  that wakes on every signal (``signal.set_wakeup_fd``) interrupts the
  running query (``Context.interrupt``, which Z3 allows from another
  thread); the query returns and the handler raises at once;
- forked workers (``--jobs``) ignore SIGINT: the terminal sends it to the
  whole process group, and the coordinator stops them itself, so Ctrl-C
  shows one line, not one traceback per worker;
- an interrupt raised inside a destructor (z3's ``Z3_solver_dec_ref`` in a
  ``__del__``) is swallowed by Python ("Exception ignored in"): the handler
  also records it, and ``check()``, called after every Z3 query, raises it
  again, so the run still ends inconclusive instead of going on to a pass;
- an interrupt raised while ctypes converts a call's arguments (any z3 API
  call) comes out as ``ctypes.ArgumentError("argument 1: KeyboardInterrupt")``:
  ``as_interrupt()`` turns any exception raised while an interrupt is
  pending back into the ``KeyboardInterrupt`` it was.
"""
from __future__ import annotations

import os
import signal
import socket
import sys
import threading
import weakref
from contextlib import contextmanager
from typing import Iterator

import checker.early as early

_SIGNALS = tuple(getattr(signal, n) for n in ("SIGTERM", "SIGHUP") if hasattr(signal, n))
_active = False
_fork_hook = False
_pending = False  # an interrupt arrived (it may have been raised where Python swallows it)
_during = False  # ... and it arrived during the run, not while the command was importing (checker.early)
_shielded = False  # the run is over and its reports are being written: an interrupt waits
#: Why the run stops: a signal ("interrupted") or the whole command's deadline (``checker.deadline``).
INTERRUPTED = "interrupted"
DEADLINE = "timeout: deadline"
#: The reasons of the checks a stopped run did not decide.
STOPPED = (INTERRUPTED, DEADLINE)
_cause = INTERRUPTED


def _raise(signum: int, frame: object) -> None:
    stop(INTERRUPTED)


def stop(cause: str) -> None:
    """End the run now as an interrupt, for ``cause`` (``INTERRUPTED`` or ``DEADLINE``); a first cause
    stays the run's. While reports are written (``shielded``) only noted."""
    global _pending, _during, _cause
    if not _pending:
        _cause = cause
    _pending = _during = True
    if not _shielded:
        raise KeyboardInterrupt


def cause() -> str:
    """Why the run was stopped: ``INTERRUPTED`` (a signal) or ``DEADLINE``."""
    return _cause


@contextmanager
def shielded() -> Iterator[None]:
    """Run the body (the reports of a finished run being written) to its end: a signal or the deadline
    in it is noted, not raised, so no report is cut in half."""
    global _shielded
    outer, _shielded = _shielded, True
    try:
        yield
    finally:
        _shielded = outer


def _unraisable(hook: object) -> object:
    def quiet(u: object) -> None:
        # an interrupt raised in a destructor, bare or wrapped by ctypes (z3's Z3_dec_ref in AstRef.__del__):
        # no "Exception ignored" traceback; check() raises it again
        if _pending or isinstance(getattr(u, "exc_value", None), KeyboardInterrupt):
            return
        hook(u)  # type: ignore[operator]

    return quiet


def check() -> None:
    """Raise an interrupt that arrived but was swallowed (raised inside a destructor)."""
    if _pending:
        raise KeyboardInterrupt


def check_during_run() -> None:
    """``check()`` for a loop that may run before the run has listed its checks (a search at load time):
    only an interrupt that arrived during the run; one noted while the command imported is left to the
    ``check()`` at the run's first task, which reports every check as not decided."""
    if _during:
        raise KeyboardInterrupt


@contextmanager
def as_interrupt() -> Iterator[None]:
    """Run the body so that an exception it raises while an interrupt is pending is that interrupt."""
    try:
        yield
    except KeyboardInterrupt:
        raise
    except Exception as e:
        if _pending:
            raise KeyboardInterrupt from e
        raise


def _in_child() -> None:
    if _active:  # a worker: the coordinator decides when it stops
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        for s in _SIGNALS:
            signal.signal(s, signal.SIG_DFL)
        try:
            signal.set_wakeup_fd(-1)
        except ValueError:  # not the main thread
            pass


_z3_interrupted = False
#: Z3 contexts besides the main one that a query may be running in (``track``).
_contexts: "weakref.WeakSet[object]" = weakref.WeakSet()


def track(ctx: object) -> object:
    """Interrupt ``ctx`` too (a fresh Z3 context a query runs in, ``checker.prove.solver.fresh_context``)
    while it lives; returns it."""
    _contexts.add(ctx)
    return ctx


def _interrupt_z3() -> None:
    global _z3_interrupted
    z3 = sys.modules.get("z3")
    if z3 is not None and not _shielded:  # a finished run's reports ask nothing of Z3
        z3.main_ctx().interrupt()
        for ctx in list(_contexts):  # (each is discarded after its query: none needs resuming)
            ctx.interrupt()
        _z3_interrupted = True


def _resume_z3() -> None:
    """Z3's interrupt stays set (``simplify`` then returns terms unsimplified, and the load-time checks
    would miss what they look for) until a solver runs: after the run, one empty check clears it for
    whatever runs next in this process."""
    global _z3_interrupted
    z3 = sys.modules.get("z3")
    if _z3_interrupted and z3 is not None:
        try:
            z3.Solver().check()
        except Exception:  # noqa: BLE001, S110 - nothing left to interrupt
            pass
    _z3_interrupted = False


@contextmanager
def interruptible(uses_z3: bool = False) -> Iterator[None]:
    """Run the body so that SIGINT, SIGTERM and SIGHUP raise ``KeyboardInterrupt`` promptly.
    ``uses_z3``: the body asks Z3 (so its own SIGINT handling is turned off first)."""
    global _active, _fork_hook, _pending, _during, _cause
    if threading.current_thread() is not threading.main_thread():
        yield  # signals reach the main thread only
        return
    if uses_z3:
        import z3

        z3.set_param("ctrl_c", False)
    _pending = _during = False
    _cause = INTERRUPTED
    old = {s: signal.signal(s, _raise) for s in (signal.SIGINT, *_SIGNALS)}
    if early.received():  # Ctrl-C or SIGTERM while the command was still importing: the run stops at once
        _pending = True
    old_hook = sys.unraisablehook
    sys.unraisablehook = _unraisable(old_hook)
    r, w = socket.socketpair()
    r.setblocking(True)
    w.setblocking(False)
    old_fd = signal.set_wakeup_fd(w.fileno(), warn_on_full_buffer=False)

    def watch() -> None:
        while True:
            try:
                b = r.recv(64)
            except OSError:
                return
            if not b:
                return
            _interrupt_z3()

    t = threading.Thread(target=watch, name="countercheck-interrupts", daemon=True)
    t.start()
    if not _fork_hook:
        os.register_at_fork(after_in_child=_in_child)
        _fork_hook = True
    _active = True
    try:
        yield
    finally:
        _active = False
        _pending = _during = False
        sys.unraisablehook = old_hook
        signal.set_wakeup_fd(old_fd)
        for s, h in old.items():
            signal.signal(s, h)
        w.close()  # the watcher reads the end of its socket and stops: no interrupt after the next line
        t.join(1.0)
        r.close()
        _resume_z3()


def pending() -> bool:
    """A signal arrived in this run (its interrupt may still be on its way up)."""
    return _pending
