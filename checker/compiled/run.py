# SPDX-License-Identifier: GPL-2.0-only
"""Running a built search program and reading back what it found.

The search runs as a subprocess rather than through ctypes: a search that
the operating system kills (out of memory) or that crashes cannot take the
Python process with it, and its parent reports it as inconclusive; its
memory goes back to the system whole when it ends; an interrupt (Ctrl-C)
kills it and the interrupt goes on to the command line, which reports it
as inconclusive. What crosses the pipe is small: the initial states in,
statistics, the stored paths to deciding states and a few sampled states
out. The process start costs a millisecond.
"""
from __future__ import annotations

import signal
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from checker.errors import CheckerError


@dataclass
class RunOutput:
    """What a compiled explorer printed: its statistics, the properties it found violated, events and trace nodes."""
    stats: dict[str, str] = field(default_factory=dict)
    found: dict[int, int] = field(default_factory=dict)  # property number -> state index
    events: list[tuple[int, int, int]] = field(default_factory=list)  # (event, state index, step or -1)
    nodes: dict[int, tuple[int, int]] = field(default_factory=dict)  # state index -> (parent or -1, step)
    states: dict[int, list[int]] = field(default_factory=dict)  # state index -> slot vector
    error: tuple[str, int, int] | None = None  # (kind, step or property, detail)
    killed: str | None = None  # why the process ended without a result


class SearchFailed(CheckerError):
    """The search program misbehaved (a bug of ours, reported loudly): the message carries what it said."""


#: Signals that mean the search crashed (a bug of ours) rather than that something stopped it.
CRASHES = frozenset({signal.SIGSEGV, signal.SIGBUS, signal.SIGFPE, signal.SIGILL, signal.SIGABRT})


def run(exe: Path, initial: list[list[int]], *, max_states: int | None, timeout: float | None,
        max_memory: int, sample: tuple[int, int, int]) -> RunOutput:
    """Run the built explorer ``exe`` from the initial states, within the limits; its parsed output."""
    args = [str(exe), str(max_states or 0), repr(float(timeout or 0)), str(int(max_memory)), *map(str, sample)]
    text = f"{len(initial)}\n" + "\n".join(" ".join(map(str, v)) for v in initial) + "\n"
    try:
        proc = subprocess.Popen(args, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True)
    except OSError as e:
        raise SearchFailed(f"the compiled search {exe} did not start: {e}") from None
    try:
        out, err = proc.communicate(text)
    except BaseException:  # an interrupt: the search must not outlive us, nor its half result read as a pass
        proc.kill()
        proc.wait()
        raise
    res = parse(out)
    if proc.returncode < 0:
        try:
            sig = signal.Signals(-proc.returncode)
            name = sig.name
        except ValueError:
            sig, name = None, str(-proc.returncode)
        if sig in CRASHES:
            raise SearchFailed(f"the compiled search {exe} crashed ({name}): a bug of the compiled engine; "
                               f"--engine interpreted runs this point without it")
        res.killed = f"the search process was killed by {name}"
        return res
    if proc.returncode == 4 and res.error is not None:
        return res
    if proc.returncode == 5:
        res.stats.setdefault("stopped", "max_memory")
        return res
    if proc.returncode != 0 or "end" not in res.stats:
        raise SearchFailed(f"the compiled search exited with status {proc.returncode}: {err.strip()[:300]}")
    return res


def parse(out: str) -> RunOutput:
    """The compiled explorer's line protocol, read into a ``RunOutput``."""
    res = RunOutput()
    for line in out.splitlines():
        parts = line.split()
        if not parts:
            continue
        tag = parts[0]
        if tag == "result":
            res.stats.update(p.split("=", 1) for p in parts[1:])
        elif tag == "found":
            res.found[int(parts[1])] = int(parts[2])
        elif tag == "event":
            res.events.append((int(parts[1]), int(parts[2]), int(parts[3])))
        elif tag == "node":
            res.nodes[int(parts[1])] = (int(parts[2]), int(parts[3]))
        elif tag == "state":
            res.states[int(parts[1])] = [int(x) for x in parts[2:]]
        elif tag == "error":
            res.error = (parts[1], int(parts[2]), int(parts[3]))
        elif tag == "end":
            res.stats["end"] = "1"
    return res
