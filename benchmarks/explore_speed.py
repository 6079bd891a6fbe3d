# SPDX-License-Identifier: GPL-2.0-only
"""Explorer throughput on percpu_eager: states, transitions, seconds, rates.

    python benchmarks/explore_speed.py [--quick] [--out FILE]

Each point is explored with and without CPU-symmetry reduction; the
figures go to stdout and, with --out, to a file. Figures are measured, not
asserted: tests pin counts and verdicts, never times.
"""
from __future__ import annotations

import argparse
import platform
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from checker import explore  # noqa: E402
from checker.specs.percpu_eager import PercpuEager  # noqa: E402

POINTS = [  # (ncpus, ops, batch, readers, summers)
    (1, 2, 2, 0, 0), (2, 2, 2, 0, 0), (3, 3, 3, 0, 0), (4, 3, 3, 0, 0),
    (2, 3, 2, 1, 1), (3, 3, 2, 1, 1), (3, 3, 3, 1, 1), (4, 2, 3, 1, 1), (4, 3, 3, 1, 0),
]
QUICK = POINTS[:4]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="only the points without readers and summers")
    ap.add_argument("--out", help="also write the table to this file")
    ap.add_argument("--skip-full-above", type=int, default=3_000_000,
                    help="skip the unreduced run when the reduced one exceeds this many states")
    args = ap.parse_args()
    rows = [f"# percpu_eager explorer throughput, python {platform.python_version()}, {platform.machine()}",
            f"{'ncpus':>5} {'ops':>3} {'batch':>5} {'rd':>2} {'sum':>3} {'sym':>3} {'states':>10} "
            f"{'transitions':>12} {'depth':>5} {'seconds':>8} {'states/s':>9} {'trans/s':>9}"]
    print("\n".join(rows), flush=True)
    for n, ops, batch, rd, sm in (QUICK if args.quick else POINTS):
        reduced_states = None
        for sym in (True, False):
            if not sym and reduced_states and reduced_states * max(1, n) ** 2 > args.skip_full_above * 4:
                line = f"{n:>5} {ops:>3} {batch:>5} {rd:>2} {sm:>3} {'no':>3}  (skipped: too large for this run)"
            else:
                t0 = time.perf_counter()
                r = explore(PercpuEager(ncpus=n, ops=ops, batch=batch, readers=rd, summers=sm), symmetry=sym)
                dt = time.perf_counter() - t0
                if sym:
                    reduced_states = r.states
                line = (f"{n:>5} {ops:>3} {batch:>5} {rd:>2} {sm:>3} {'yes' if sym else 'no':>3} {r.states:>10,} "
                        f"{r.transitions:>12,} {r.depth:>5} {dt:>8.2f} {r.states / dt:>9,.0f} "
                        f"{r.transitions / dt:>9,.0f}")
            rows.append(line)
            print(line, flush=True)
    if args.out:
        Path(args.out).write_text("\n".join(rows) + "\n")


if __name__ == "__main__":
    main()
