# SPDX-License-Identifier: GPL-2.0-only
"""A bare ``verify`` with an empty build cache, then warm: wall and CPU seconds, and the split between
compiling, exploring and proving (issue 26 item 5).

    nice python benchmarks/cold_start.py [--no-quick] [--out FILE]

Runs ``verify()`` in this process on every built-in spec (as ``python -m checker verify`` with no
arguments) twice: with ``XDG_CACHE_HOME`` an empty temporary directory (cold), then again on the cache
the first run filled (warm, a new process's view: the in-process program tables are cleared). The
compile time is the wall time inside the compiler (``checker.compiled.build._compile``; its CPU time is
the children's), prove is the wall time of the Z3 engines, explore the rest of the engines' time.
``--no-quick`` builds every program with -O1 from the start (``QUICK_STATES = 0``, the code before the
quick tier). On a shared machine note the load: wall times follow it, CPU times much less.
"""
from __future__ import annotations

import argparse
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from checker import loader  # noqa: E402
from checker.compiled import build as cbuild, engine as cengine  # noqa: E402
from checker.engines import prove as eprove  # noqa: E402
from checker.verify import verify  # noqa: E402

SPENT = {"compile": 0.0, "prove": 0.0, "programs": 0}


def _timed(key, fn):
    def wrapper(*a, **k):
        t0 = time.perf_counter()
        try:
            return fn(*a, **k)
        finally:
            SPENT[key] += time.perf_counter() - t0
            if key == "compile":
                SPENT["programs"] += 1
    return wrapper


def cpu() -> tuple[float, float]:
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime, kids.ru_utime + kids.ru_stime


def once(label: str) -> str:
    for k in SPENT:
        SPENT[k] = 0
    cengine._programs.clear()
    cengine._sources.clear()
    c0, k0 = cpu()
    t0 = time.perf_counter()
    l0 = os.getloadavg()[0]
    report = verify(loader.resolve([]))
    wall = time.perf_counter() - t0
    c1, k1 = cpu()
    l1 = os.getloadavg()[0]
    return (f"{label}: wall {wall:.1f}s, CPU {c1 - c0:.1f}s here + {k1 - k0:.1f}s in children (compilers, "
            f"searches); {SPENT['programs']} programs compiled in {SPENT['compile']:.1f}s, prove "
            f"{SPENT['prove']:.1f}s, explore and the rest {wall - SPENT['compile'] - SPENT['prove']:.1f}s; "
            f"{len(report.checks)} checks, {len(report.errors)} errors; load {l0:.1f} -> {l1:.1f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--no-quick", action="store_true")
    ap.add_argument("--out")
    a = ap.parse_args()
    if a.no_quick:
        cengine.QUICK_STATES = 0
    cbuild._compile = _timed("compile", cbuild._compile)
    for cls in (eprove.ProveEngine, eprove.BmcEngine, eprove.PdrEngine):
        cls.run = _timed("prove", cls.run)
    os.environ["XDG_CACHE_HOME"] = tempfile.mkdtemp(prefix="cold-start-")
    tier = "-O1 only" if a.no_quick else f"-O0 first, -O1 past {cengine.QUICK_STATES:,} states"
    lines = [f"bare verify ({tier}), {os.cpu_count()} cores, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}"]
    for label in ("cold", "warm"):
        lines.append(once(label))
        print(lines[-1], flush=True)
    if a.out:
        with open(a.out, "a") as f:
            f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
