# SPDX-License-Identifier: GPL-2.0-only
"""The explorer's modes on percpu_eager with a reader and a summer: one
process, ``--jobs 2`` and ``--fingerprint``, with and without symmetry.

    python benchmarks/explore_modes.py [--out FILE]

Each run is its own process (``explore()`` on the spec class, the point
pinned); wall time includes start-up. Peak memory is the largest single process (with --jobs, a worker
or the coordinator), from wait4's rusage. Bytes per state subtract the
peak of the smallest point's run (the interpreter, z3 and the specs).
Figures are measured, not asserted: tests pin counts and verdicts.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
POINTS = [(3, 3, 2), (4, 2, 3), (4, 3, 3)]  # (ncpus, ops, batch), each with readers=1 summers=1
MODES = ["1 process", "--jobs 2", "--fingerprint"]


def run(point: tuple[int, int, int], sym: bool, mode: str) -> tuple[int, float, float]:
    """(states, wall seconds, peak MB of the largest process) of one run in a child process."""
    cmd = [sys.executable, __file__, "--child", json.dumps([*point, sym, mode])]
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd, cwd=ROOT, stdout=out, stderr=err, text=True)
        _, status, usage = os.wait4(proc.pid, 0)  # this run's rusage: its largest process's peak
        wall = time.perf_counter() - t0
        out.seek(0), err.seek(0)
        if os.waitstatus_to_exitcode(status) != 0:
            raise SystemExit(f"{' '.join(cmd)} failed:\n{err.read()}")
        states = json.loads(out.read())["states"]
    return states, wall, usage.ru_maxrss / 1024


def child(spec: str) -> None:
    sys.path.insert(0, str(ROOT))
    from checker import explore
    from checker.specs.percpu_eager import PercpuEager

    n, ops, batch, sym, mode = json.loads(spec)
    r = explore(PercpuEager(ncpus=n, ops=ops, batch=batch, readers=1, summers=1), symmetry=sym,
                jobs=2 if mode == "--jobs 2" else 1, fingerprint=mode == "--fingerprint")
    print(json.dumps({"states": r.states}))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", help="also write the table to this file")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        return child(args.child)
    rows = [f"# percpu_eager, readers=1 summers=1, variant B; python {platform.python_version()}, "
            f"{platform.machine()}, {os.cpu_count()} cores",
            f"{'point':>9} {'sym':>3} {'mode':<14} {'states':>10} {'wall s':>8} {'states/s':>9} {'peak MB':>8}"]
    print("\n".join(rows), flush=True)
    for point in POINTS:
        for sym in (True, False):
            for label in MODES:
                if not sym and point == (4, 3, 3):
                    line = f"{str(point):>9} {'no':>3} {label:<14}  (left out: 5.4 M states, see spin_vs_explorer.txt)"
                else:
                    states, wall, peak = run(point, sym, label)
                    line = (f"{str(point):>9} {'yes' if sym else 'no':>3} {label:<14} {states:>10,} {wall:>8.1f} "
                            f"{states / wall:>9,.0f} {peak:>8.0f}")
                rows.append(line)
                print(line, flush=True)
    if args.out:
        Path(args.out).write_text("\n".join(rows) + "\n")


if __name__ == "__main__":
    main()
