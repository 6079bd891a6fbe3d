# SPDX-License-Identifier: GPL-2.0-only
"""A bare ``verify`` with empty caches, then warm: wall and CPU seconds, and the split between compiling,
exploring and proving (issue 26 item 5).

    nice python benchmarks/cold_start.py [--also-unproved] [--also-empty-build] [--out FILE]

Runs ``python -m checker verify --timings -q`` (every built-in spec, as a user's bare ``verify``) in a
fresh process with ``XDG_CACHE_HOME`` an empty temporary directory (cold: no program built, no point
remembered, no proof kept), then again on the caches that run filled (warm). ``--also-unproved`` adds a
third run, warm but with ``COUNTERCHECK_PROOF_CACHE=off`` (the build cache and the point index only: every
proof proved again); ``--also-empty-build`` one with the build cache alone emptied (the issue's "empty build
cache" read literally: every program compiled again, the proofs and lint results kept). Each line gives the wall time, the CPU seconds of the run and everything it waited
for (compilers, searches), and the run's own ``--timings`` line. On a shared machine note the load: wall
times follow it, CPU times much less.
"""
from __future__ import annotations

import argparse
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def once(label: str, cache: str, **env: str) -> str:
    e = {**os.environ, "XDG_CACHE_HOME": cache, "PYTHONPATH": str(ROOT), **env}
    c0, t0, l0 = _cpu(), time.perf_counter(), os.getloadavg()[0]
    r = subprocess.run([sys.executable, "-m", "checker", "verify", "--timings", "-q"], cwd=ROOT, env=e,
                       capture_output=True, text=True)
    wall, cpu, l1 = time.perf_counter() - t0, _cpu() - c0, os.getloadavg()[0]
    lines = r.stdout.strip().splitlines()
    summary = next((ln for ln in lines if " checks in " in ln), "no summary")
    timings = next((ln for ln in lines if ln.startswith("time: ")), "no timings")
    return (f"{label}: wall {wall:.1f}s, CPU {cpu:.1f}s (the run and its compilers and searches), exit "
            f"{r.returncode}; load {l0:.1f} -> {l1:.1f}\n  {timings}\n  {summary}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--also-unproved", action="store_true", help="a third run: warm, with the proof cache off")
    ap.add_argument("--also-empty-build", action="store_true",
                    help="a last run with the build cache alone emptied (proofs and lint results kept)")
    ap.add_argument("--out")
    a = ap.parse_args()
    cache = tempfile.mkdtemp(prefix="cold-start-")
    lines = [f"bare verify, {os.cpu_count()} cores, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}"]
    runs = [("cold (empty caches)", {}), ("warm (programs, point index, proofs)", {})]
    if a.also_unproved:
        runs.append(("warm, proof cache off", {"COUNTERCHECK_PROOF_CACHE": "off"}))
    if a.also_empty_build:
        runs.append(("build cache alone empty", {}))
    for label, env in runs:
        if label == "build cache alone empty":
            shutil.rmtree(Path(cache) / "countercheck" / "compiled")
        lines.append(once(label, cache, **env))
        print(lines[-1], flush=True)
    if a.out:
        with open(a.out, "a") as f:
            f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
