# SPDX-License-Identifier: GPL-2.0-only
"""What the benchmark scripts share: the machine's load, and one measurement run in a child process.

A child keeps each point's peak memory and CPU time its own (``wait4``'s usage), and a crash in one point
from taking the table down with it."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable

ROOT = Path(__file__).resolve().parent.parent


def load() -> str:
    """The load averages (1, 5, 15 minutes), printed beside every figure measured on a shared machine."""
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def run_child(script: str, arg: object) -> dict:
    """Run ``script --child JSON(arg)``; its last stdout line is a JSON object, returned with the child's
    wall and CPU seconds, peak memory (MiB) and the 1-minute load at its start."""
    cmd = [sys.executable, script, "--child", json.dumps(arg)]
    start_load = os.getloadavg()[0]
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd, cwd=ROOT, stdout=out, stderr=err, text=True)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t0
        out.seek(0), err.seek(0)
        if os.waitstatus_to_exitcode(status) != 0:
            raise SystemExit(f"{' '.join(cmd)} failed:\n{err.read()}")
        res = json.loads(out.read().strip().splitlines()[-1])
    res.update(wall=wall, cpu=usage.ru_utime + usage.ru_stime, load=start_load, peak_mb=usage.ru_maxrss / 1024)
    return res


def emitter(path: str | None) -> Callable[[str], None]:
    """A line printer that also appends each line to ``path`` (when given), flushed at once: a table written
    as it is measured keeps its rows when a long run is stopped."""
    out = open(path, "a") if path else None

    def emit(line: str) -> None:
        print(line, flush=True)
        if out:
            out.write(line + "\n")
            out.flush()
    return emit
