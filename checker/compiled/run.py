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
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import checker.lifetime as lifetime
from checker.errors import CheckerError


@dataclass
class RunOutput:
    """What one compiled search printed: its result fields, the states where properties were found, and events."""
    stats: dict[str, str] = field(default_factory=dict)
    found: dict[int, int] = field(default_factory=dict)  # property number -> state index
    events: list[tuple[int, int, int]] = field(default_factory=list)  # (event, state index, step or -1)
    nodes: dict[int, tuple[int, int]] = field(default_factory=dict)  # state index -> (parent or -1, step)
    states: dict[int, list[int]] = field(default_factory=dict)  # state index -> slot vector
    error: tuple[str, int, int] | None = None  # (kind, step or property, detail)
    killed: str | None = None  # why the process ended without a result
    checkpoints: list[tuple[int, str]] = field(default_factory=list)  # (level, file) saved


class SearchFailed(CheckerError):
    """The search program misbehaved (a bug of ours, reported loudly): the message carries what it said."""


#: Signals that mean the search crashed (a bug of ours) rather than that something stopped it.
CRASHES = frozenset({signal.SIGSEGV, signal.SIGBUS, signal.SIGFPE, signal.SIGILL, signal.SIGABRT})


def run(exe: Path, initial: list[list[int]], *, max_states: int | None, timeout: float | None,
        max_memory: int, sample: tuple[int, int, int], min_states: int = 1, threads: int = 1,
        fingerprint: bool = False, checkpoint: Path | None = None, resume_level: int | None = None,
        on_checkpoint: Callable[[int, Path], None] | None = None) -> RunOutput:
    """Run the search on ``initial`` and read back what it printed. Its output is read back data like
    any other (``checker.persist``'s rule): it must parse and hold together (``check``: at least
    ``min_states`` states, the distinct initial ones; the ``threads`` asked for), or it is a ``SearchFailed``,
    never a verdict. ``threads`` > 1: the level-synchronised search on that many threads (search_threads.c);
    ``fingerprint``: the search keeping 64-bit hashes of the states (search_fingerprint.c). ``checkpoint``:
    a directory the search saves each whole level in (search_checkpoint.c), ``on_checkpoint(level, file)``
    told of each as it is written; ``resume_level``: the search first loads the levels up to that one."""
    args = [str(exe), str(max_states or 0), repr(float(timeout or 0)), str(int(max_memory)), *map(str, sample),
            str(int(threads)), str(int(fingerprint)), str(checkpoint) if checkpoint else "-",
            str(-1 if resume_level is None else resume_level)]
    text = f"{len(initial)}\n" + "\n".join(" ".join(map(str, v)) for v in initial) + "\n"
    try:
        proc = subprocess.Popen(args, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True, errors="replace", **lifetime.popen_kwargs())
    except OSError as e:
        raise SearchFailed(f"the compiled search {exe} did not start: {e}") from None
    try:
        if checkpoint is None:
            out, err = proc.communicate(text)
        else:  # read as it comes: each level file is sealed as soon as it is written
            out, err = _follow(proc, text, on_checkpoint)
    except BaseException:  # an interrupt: the search must not outlive us, nor its half result read as a pass
        lifetime.kill_group(proc)
        raise
    if proc.returncode < 0:
        try:
            sig = signal.Signals(-proc.returncode)
            name = sig.name
        except ValueError:
            sig, name = None, str(-proc.returncode)
        if sig in CRASHES:
            raise SearchFailed(f"the compiled search {exe} crashed ({name}): a bug of the compiled engine; "
                               f"--engine interpreted runs this point without it")
        res = _partial(out)
        res.killed = f"the search process was killed by {name}"
        return res
    if proc.returncode == 5:  # out of memory mid-search: counts, no paths
        res = _partial(out)
        res.killed = "the search process ran out of memory"
        res.stats["stopped"] = "memory"
        return res
    try:
        res = parse(out)
    except ValueError as e:
        raise SearchFailed(f"the output of the compiled search {exe} does not parse ({e}): a bug of the "
                           f"compiled engine, or a program changed in the cache") from None
    if proc.returncode == 4 and res.error is not None:
        return res
    if proc.returncode != 0 or "end" not in res.stats:
        raise SearchFailed(f"the compiled search exited with status {proc.returncode}: {err.strip()[:300]}")
    check(res, min_states, exe)
    ran = (res.stats.get("threads"), res.stats.get("fingerprint"))
    if ran != (str(int(threads)), str(int(fingerprint))):
        raise SearchFailed(f"the compiled search {exe} ran as threads, fingerprint = {ran!r}, not the "
                           f"{threads}, {int(fingerprint)} asked for: a program changed in the cache; never a verdict")
    return res


def _follow(proc: subprocess.Popen, text: str, on_checkpoint: Callable[[int, Path], None] | None) -> tuple[str, str]:
    """``communicate``, telling ``on_checkpoint`` of each ``checkpoint LEVEL PATH`` line as it comes."""
    errs: list[str] = []
    reader = threading.Thread(target=lambda: errs.append(proc.stderr.read()), daemon=True)
    reader.start()
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(text)
    proc.stdin.close()
    lines = []
    for line in proc.stdout:
        lines.append(line)
        parts = line.split()
        if len(parts) == 3 and parts[0] == "checkpoint" and parts[1].isdigit() and on_checkpoint is not None:
            on_checkpoint(int(parts[1]), Path(parts[2]))
    proc.wait()
    reader.join()
    return "".join(lines), "".join(errs)


def _partial(out: str) -> RunOutput:
    """What a search that was stopped from outside printed: only its counts are used, if they parse."""
    try:
        res = parse(out)
    except ValueError:
        return RunOutput()
    return RunOutput(stats={k: v for k, v in res.stats.items() if k in ("states", "transitions", "depth")
                            and v.isdigit()})


#: The fields of a whole result line, each with the type it must parse as.
_RESULT = {"states": int, "transitions": int, "depth": int, "deadlock": int, "seconds": float,
           "stopped": str}
_STOPPED = ("none", "max_states", "timeout", "max_memory")


def check(res: RunOutput, min_states: int, exe: Path) -> None:
    """A whole search's output holds together: every result field there and well formed, at least as
    many states as initial ones, every reference to a state that it printed. Else ``SearchFailed``."""
    def bad(why: str) -> SearchFailed:
        return SearchFailed(f"the output of the compiled search {exe} is inconsistent ({why}): a bug of the "
                            f"compiled engine, or a program changed in the cache; never a verdict")

    for k, kind in _RESULT.items():
        v = res.stats.get(k)
        try:
            if v is None or (kind is int and int(v) < -1) or (kind is float and not float(v) >= 0):
                raise ValueError
        except ValueError:
            raise bad(f"result {k}={v!r}") from None
    if res.stats["stopped"] not in _STOPPED:
        raise bad(f"stopped={res.stats['stopped']!r}")
    states = int(res.stats["states"])
    if states < max(1, min_states):
        raise bad(f"{states} states, fewer than its {min_states} initial ones")
    known = res.nodes.keys()
    refs = [*res.found.values(), *(i for _e, i, _s in res.events)]
    dl = int(res.stats["deadlock"])
    if dl >= 0:
        refs.append(dl)
    if any(i not in known or i not in res.states for i in refs) or any(
            (p >= 0 and p not in known) or i not in res.states or i >= states for i, (p, _s) in res.nodes.items()):
        raise bad("a path to a state it did not print")


def parse(out: str) -> RunOutput:
    """The search's output, line by line; a line that does not parse raises ValueError."""
    res = RunOutput()
    for n, line in enumerate(out.splitlines(), 1):
        parts = line.split()
        if not parts:
            continue
        tag = parts[0]
        try:
            if tag == "result":
                res.stats.update(_pair(p) for p in parts[1:])
            elif tag == "found" and len(parts) == 3:
                res.found[int(parts[1])] = int(parts[2])
            elif tag == "event" and len(parts) == 4:
                res.events.append((int(parts[1]), int(parts[2]), int(parts[3])))
            elif tag == "node" and len(parts) == 4:
                res.nodes[int(parts[1])] = (int(parts[2]), int(parts[3]))
            elif tag == "state" and len(parts) >= 2:
                res.states[int(parts[1])] = [int(x) for x in parts[2:]]
            elif tag == "error" and len(parts) == 4:
                res.error = (parts[1], int(parts[2]), int(parts[3]))
            elif tag == "checkpoint" and len(parts) == 3:
                res.checkpoints.append((int(parts[1]), parts[2]))
            elif tag == "end" and len(parts) == 1:
                res.stats["end"] = "1"
            else:
                raise ValueError
        except ValueError:
            raise ValueError(f"line {n}: {line[:80]!r}") from None
    return res


def _pair(p: str) -> tuple[str, str]:
    k, eq, v = p.partition("=")
    if not eq or not k or not v:
        raise ValueError
    return k, v
