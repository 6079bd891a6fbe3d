# SPDX-License-Identifier: GPL-2.0-only
"""Running SPIN on an exported model: compile, verify, read the verdicts.

``spin -a`` writes the verifier's C source, gcc compiles it, ``./pan``
searches. ``pan -c0`` keeps searching past every error, so the stored-state
count is the whole state space and each violated assertion is reported
(pan prints an error unless it repeats the previous one, so every distinct
assertion name violated appears at least once).
"""
from __future__ import annotations

import math
import os
import re
import shutil
import signal
import subprocess
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from checker.errors import CheckerError
from checker.export.promela import PromelaModel

#: pan's error line: "pan:3: assertion violated inv_read_bound (at depth 7)".
_ERROR = re.compile(r"^pan:\d+: (.*) \(at depth \d+\)$", re.M)
_VIOLATED = re.compile(r"^assertion violated (\S+)$")
_NUMBER = {"stored": re.compile(r"^\s*(\d+) states, stored", re.M),
           "matched": re.compile(r"^\s*(\d+) states, matched", re.M),
           "transitions": re.compile(r"^\s*(\d+) transitions", re.M),
           "vector": re.compile(r"State-vector (\d+) byte", re.M),
           "depth": re.compile(r"depth reached (\d+)", re.M)}
_MEMORY = re.compile(r"^\s*([\d.]+)\s+total actual memory usage", re.M)


#: ``-o2``: keep write-only variables in the state vector. SPIN otherwise drops a variable no step
#: reads (a ghost only a property left out reads), and stores fewer states than the explorer.
SPIN_ARGS = ("-o2", "-a")


class SpinError(CheckerError):
    """SPIN or gcc failed, or pan stopped before the search was complete."""


@dataclass
class SpinResult:
    """What SPIN's ``pan`` reported: states stored and matched, transitions, depth, assertions violated."""
    stored: int
    matched: int
    transitions: int
    vector_bytes: int
    depth: int
    violated: set[str]  # assertion names
    deadlock: bool  # an invalid end state
    memory_mb: float  # pan's own figure: "total actual memory usage"
    peak_rss_mb: float  # the pan process's maximum resident set
    compile_seconds: float  # spin -a and gcc
    run_seconds: float
    flags: list[str] = field(default_factory=list)
    output: str = ""


def available() -> bool:
    """Whether SPIN and gcc are both installed."""
    return shutil.which("spin") is not None and shutil.which("gcc") is not None


def hash_bits(states: int) -> int:
    """pan's -w: a hash table of 2^w slots, at least twice the expected states."""
    return max(10, math.ceil(math.log2(max(states, 1) * 2)))


def cflags(*, reduce: bool, collapse: bool = False, optimize: str = "-O2", memlim_mb: int | None = None) -> list[str]:
    """The gcc flags for ``pan``: safety only, with or without partial-order reduction and state compression."""
    out = [optimize, "-DSAFETY"]
    if not reduce:
        out.append("-DNOREDUCE")
    if collapse:
        out.append("-DCOLLAPSE")
    if memlim_mb is not None:
        out.append(f"-DMEMLIM={memlim_mb}")
    return out


def run(model: PromelaModel, workdir: Path, *, flags: list[str], expected_states: int = 1 << 20,
        max_depth: int = 1_000_000, timeout: float | None = None) -> SpinResult:
    """Compile ``model`` in ``workdir`` with gcc ``flags`` and search its whole state space."""
    workdir.mkdir(parents=True, exist_ok=True)
    pml = workdir / "model.pml"
    pml.write_text(model.text)
    t0 = time.perf_counter()
    _call(["spin", *SPIN_ARGS, pml.name], workdir, timeout)
    _call(["gcc", *flags, "-o", "pan", "pan.c"], workdir, timeout)
    t1 = time.perf_counter()
    args = ["./pan", "-c0", f"-m{max_depth}", f"-w{hash_bits(expected_states)}"]
    out, code, rss, killed = _pan(args, workdir, timeout)
    t2 = time.perf_counter()
    if killed:
        raise SpinError(f"pan did not finish within {timeout:.0f} s")
    if "max search depth too small" in out:
        raise SpinError(f"pan's search depth -m{max_depth} was too small")
    if code != 0 or _NUMBER["stored"].search(out) is None:
        raise SpinError(f"pan failed (exit {code}):\n{out[-2000:]}")
    errors = _ERROR.findall(out)
    violated = {m.group(1) for e in errors if (m := _VIOLATED.match(e))}
    unknown = violated - set(model.assertions)
    if unknown:
        raise SpinError(f"pan reports assertions the export did not make: {', '.join(sorted(unknown))}")
    others = [e for e in errors if not _VIOLATED.match(e) and e != "invalid end state"]
    if others:
        raise SpinError(f"pan reports errors other than assertions and deadlocks: {others[0]}")
    mem = _MEMORY.search(out)
    nums = {k: int(r.search(out).group(1)) if r.search(out) else 0 for k, r in _NUMBER.items()}
    return SpinResult(nums["stored"], nums["matched"], nums["transitions"], nums["vector"], nums["depth"],
                      violated, "invalid end state" in errors, float(mem.group(1)) if mem else 0.0, rss,
                      t1 - t0, t2 - t1, list(flags), out)


def _call(cmd: list[str], cwd: Path, timeout: float | None) -> None:
    try:
        r = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise SpinError(f"{' '.join(cmd)} did not finish within {timeout:.0f} s") from None
    if r.returncode != 0:
        raise SpinError(f"{' '.join(cmd)} failed:\n{(r.stdout + r.stderr)[-2000:]}")


def _pan(args: list[str], cwd: Path, timeout: float | None) -> tuple[str, int, float, bool]:
    """Run pan; its output, exit code, peak resident set (MB) and whether the timeout killed it.
    ``os.wait4`` gives this one child's resource usage (RUSAGE_CHILDREN would mix in gcc's)."""
    log = cwd / "pan.out"
    with open(log, "w") as f:
        proc = subprocess.Popen(args, cwd=cwd, stdout=f, stderr=subprocess.STDOUT)
        timer = threading.Timer(timeout, proc.kill) if timeout else None
        if timer is not None:
            timer.start()
        _, status, usage = os.wait4(proc.pid, 0)
        killed = os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL
        if timer is not None:
            timer.cancel()
    proc.returncode = os.waitstatus_to_exitcode(status)  # reaped here: Popen must not wait again
    return log.read_text(), proc.returncode, usage.ru_maxrss / 1024, killed


def verdicts(model: PromelaModel, result: SpinResult) -> dict[str, str]:
    """SPIN's answer per property, in the explorer's words: an invariant whose assertion failed is
    violated; a sometimes whose never-reached assertion failed holds; a deadlock is an invalid end state."""
    from checker.explore import DEADLOCK

    out = {}
    for name, (prop, kind) in model.assertions.items():
        failed = name in result.violated
        if kind == "invariant":
            out[prop] = "violated" if failed else "holds"
        else:
            out[prop] = "holds" if failed else "violated"
    out[DEADLOCK] = "violated" if result.deadlock else "holds"
    return out
