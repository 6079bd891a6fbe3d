# SPDX-License-Identifier: GPL-2.0-only
"""``throughput --measure``: build models/measure.c with the system C compiler, run it, read its figures.

The figures describe the machine it runs on and replace the matching priors for that machine's
predictions only (with the user's --base, which solves that machine's Z); the seeds' machines keep
their own priors and their own fits. On a machine where the two threads cannot run at once (one CPU,
or a heavily loaded one) the contended figures are meaningless: they are dropped, with the reason.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

SOURCE = Path(__file__).with_name("measure.c")
#: measure.c's figure -> the prior it replaces
PRIORS = {"t_local": "t_local", "t_rmw": "t_rmw", "t_lock": "t_lock", "t_lock_global": "t_lock_global",
          "t_xfer": "t_xfer", "t_cpu_line": "t_cpu_line"}
CONTENDED = ("t_lock_global", "t_xfer")
#: a cache-line transfer between cores takes tens to a few hundred ns; a microsecond means the
#: other thread was not running at the same time
MAX_XFER_US = 1.0


class MeasureError(Exception):
    """The microbenchmark could not be built or run: the message says what to install or set."""


def compiler() -> str:
    for cc in (os.environ.get("CC"), "cc", "gcc", "clang"):
        if cc and shutil.which(cc):
            return cc
    raise MeasureError("--measure builds a small C program and needs a C compiler: install gcc (or clang), "
                       "or name one in CC")


def measure(timeout: float = 120.0) -> dict:
    """{"figures": what measure.c printed, "priors": the priors they replace, "dropped": {name: why}}."""
    cc = compiler()
    with tempfile.TemporaryDirectory(prefix="countercheck-measure-") as d:
        exe = Path(d) / "measure"
        build = subprocess.run([cc, "-O2", "-pthread", str(SOURCE), "-o", str(exe)], capture_output=True, text=True)
        if build.returncode != 0:
            first = (build.stderr.strip().splitlines() or ["(no message)"])[0]
            raise MeasureError(f"--measure: {cc} could not build {SOURCE.name}: {first}")
        try:
            run = subprocess.run([str(exe)], capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            raise MeasureError(f"--measure: the microbenchmark did not finish in {timeout:g} s") from None
        if run.returncode != 0:
            raise MeasureError(f"--measure: the microbenchmark failed (exit {run.returncode})")
    figures = json.loads(run.stdout)
    return usable(figures)


def usable(figures: dict) -> dict:
    """Which figures may replace priors, and why the others may not."""
    dropped = {}
    if figures.get("cpus", 1) < 2:
        dropped.update({k: "one CPU: nothing to contend with" for k in CONTENDED})
    elif figures["t_xfer"] > MAX_XFER_US:
        dropped.update({k: f"a cache-line transfer took {figures['t_xfer']:.2f} us: the two threads did not run "
                           f"at the same time (a loaded machine)" for k in CONTENDED})
    priors = {PRIORS[k]: v for k, v in figures.items() if k in PRIORS and k not in dropped and v > 0}
    return {"figures": figures, "priors": priors, "dropped": dropped}
