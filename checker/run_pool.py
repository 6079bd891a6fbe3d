# SPDX-License-Identifier: GPL-2.0-only
"""A verify's engine runs on forked workers, read back in the order they were planned.

A bare ``verify`` is a few hundred independent engine runs (an exploration, a
proof sweep, a BMC unrolling per point); one process runs them one after
another on one core. ``RunPool`` forks ``workers`` processes that each run
one at a time, handed out as workers come free, and gives the answers back
in submission order, so the report, the streamed lines and the run numbers
are those of the sequential run.

A worker dies with the coordinator (``checker.lifetime``), ignores SIGINT
(``checker.interrupts``: the coordinator stops it), and is ended with
SIGKILL when the run is interrupted: what it was running is undecided, and
the search or compiler it had started dies with it (their death signal).
"""
from __future__ import annotations

import multiprocessing
import os
import signal
import traceback
from collections.abc import Callable, Iterator
from multiprocessing.connection import Connection, wait
from typing import Any

import checker.lifetime as lifetime
from checker.errors import CheckerError


class WorkerFailed(RuntimeError):
    """A worker died, or an engine run raised what is not a user's error (an engine bug)."""


def _serve(conn: Connection, fn: Callable[[Any], Any], parent: int, inherited: list[Connection]) -> None:
    if not lifetime.die_with_parent(parent):
        lifetime.watch_parent(parent)
    for c in inherited:  # a coordinator's death then closes every worker's pipe
        c.close()
    while True:
        try:
            job = conn.recv()
        except (EOFError, OSError):
            return
        if job is None:
            return
        try:
            reply: tuple[str, Any] = ("ok", fn(job))
        except CheckerError as e:
            reply = ("error", e)
        except BaseException:  # noqa: BLE001 - an engine bug: its traceback goes to the coordinator
            reply = ("bug", traceback.format_exc())
        try:
            conn.send(reply)
        except Exception:  # noqa: BLE001 - an answer that does not pickle is an engine bug, said as one
            conn.send(("bug", traceback.format_exc()))


class RunPool:
    """``workers`` forked processes, each running ``fn(job)`` (``fn`` is inherited by the fork, not sent)."""

    def __init__(self, workers: int, fn: Callable[[Any], Any]):
        self.fn = fn
        self.ctx = multiprocessing.get_context("fork")
        self.conns: list[Any] = [None] * workers
        self.procs: list[Any] = [None] * workers
        for w in range(workers):
            self._start(w)

    def _start(self, w: int) -> None:
        """Fork worker ``w`` (again, in place of one that died)."""
        here, there = self.ctx.Pipe()
        others = [c for i, c in enumerate(self.conns) if i != w and c is not None]
        p = self.ctx.Process(target=_serve, args=(there, self.fn, os.getpid(), others), daemon=True)
        p.start()
        there.close()
        self.conns[w], self.procs[w] = here, p

    def ordered(self, jobs: list[Any], skip: Callable[[int], bool] = lambda i: False
                ) -> Iterator[tuple[int, tuple[str, Any]]]:
        """(index, (status, value)) for each job in order: ``ok`` with ``fn``'s value, ``error`` with the
        ``CheckerError`` it raised, or ``lost`` with how the worker running it died (killed from outside, out
        of memory: the job is undecided, and a new worker takes the next one). A job ``skip(i)`` is true for
        when it would be handed out is not run (its answer is ``skipped``). Raises ``WorkerFailed`` for an
        engine bug."""
        pending = list(range(len(jobs)))[::-1]  # popped from the end: in order
        busy: dict[int, int] = {}  # worker -> job
        done: dict[int, tuple[str, Any]] = {}
        nxt = 0

        def hand_out(w: int) -> None:
            while pending:
                i = pending.pop()
                if skip(i):
                    done[i] = ("skipped", None)
                    continue
                try:
                    self.conns[w].send(jobs[i])
                except (BrokenPipeError, ConnectionResetError, OSError):  # it died between two runs
                    done[i] = ("lost", self._lost(w))
                    self._start(w)
                    continue
                busy[w] = i
                return

        for w in range(len(self.conns)):
            hand_out(w)
        while nxt < len(jobs):
            while nxt not in done:
                if not busy:  # everything left was skipped
                    hand_out(0)
                    continue
                for conn in wait([self.conns[w] for w in busy]):
                    w = self.conns.index(conn)  # type: ignore[arg-type]
                    try:
                        status, value = conn.recv()
                    except (EOFError, OSError):
                        status, value = "lost", self._lost(w)
                        self._start(w)
                    if status == "bug":
                        raise WorkerFailed(f"an engine run failed in a verify worker:\n{value}")
                    done[busy.pop(w)] = (status, value)
                    hand_out(w)
            yield nxt, done.pop(nxt)
            nxt += 1

    def _lost(self, w: int) -> str:
        p = self.procs[w]
        p.join(timeout=5)
        self.conns[w].close()
        code = p.exitcode
        if code is not None and code < 0:
            try:
                how = f"killed by {signal.Signals(-code).name}"
            except ValueError:
                how = f"killed by signal {-code}"
        else:
            how = f"exit code {code}" if code is not None else "no answer"
        return f"the verify worker running it (pid {p.pid}) died: {how}"

    def close(self) -> None:
        """Stop the workers: a worker between runs exits, one in a run is killed (with what it started)."""
        lifetime.stop_workers(self.conns, self.procs, 0.5)
        for conn in self.conns:
            conn.close()

    def kill(self) -> None:
        """End every worker now (an interrupt): their runs are undecided."""
        for p in self.procs:
            if p.is_alive():
                p.kill()
        for p in self.procs:
            p.join()
        for conn in self.conns:
            conn.close()
