# SPDX-License-Identifier: GPL-2.0-only
"""Explorer throughput on Ray (``--cluster ray``) against one process and forked workers.

    python benchmarks/cluster_speed.py [--quick] [--out FILE]

Each point is explored by the single-process explorer, by 2 forked workers
(``--jobs 2``), and by 1 and 2 actors of a local Ray; every run must give
the single-process counts (the script stops otherwise). The overhead per
BFS level is the extra wall time of one Ray actor over the single process,
divided by the levels: the coordinator's four round trips per level
(decided, expand, receive, admit), plus pickling the level's successors,
with no parallelism to hide either. On the smallest point (levels of a few
dozen states) it is the fixed cost per level; on larger ones the per-state
cost dominates. Ray's start-up and the actors' first start are
timed apart: they are paid once per command, not per point. Figures are
measured, not asserted: tests pin counts and verdicts, never times.
"""
from __future__ import annotations

import argparse
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from checker.explore import explore  # noqa: E402
from checker import cluster  # noqa: E402
from checker.specs.percpu_eager import PercpuEager  # noqa: E402

POINTS = [  # (ncpus, ops, batch, readers, summers), with symmetry reduction
    (3, 3, 3, 0, 0), (2, 3, 2, 1, 1), (4, 2, 3, 1, 1), (3, 3, 2, 1, 1), (3, 3, 3, 1, 1),
]
QUICK = POINTS[:2]
RUNS = [("1 process", {}), ("fork x2", {"jobs": 2}), ("ray x1", {"cluster": "ray", "jobs": 1}),
        ("ray x2", {"cluster": "ray", "jobs": 2}), ("ray x2 +ckpt", {"cluster": "ray", "jobs": 2, "checkpoint": True})]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="only the two smallest points")
    ap.add_argument("--out", help="also write the table to this file")
    ap.add_argument("--repeat", type=int, default=2, help="runs per figure, the fastest kept (default 2)")
    args = ap.parse_args()
    import ray

    rows = [f"# explorer throughput on a local Ray, ray {ray.__version__}, python {platform.python_version()}, "
            f"{platform.machine()}, {os.cpu_count()} CPUs (shared with other work), "
            f"best of {args.repeat} runs"]
    t0 = time.perf_counter()
    cluster.connect(None, num_cpus=2)
    started = time.perf_counter() - t0
    t0 = time.perf_counter()
    explore(PercpuEager(ncpus=1, ops=1, batch=2, readers=0, summers=0), cluster="ray", jobs=2)
    first = time.perf_counter() - t0
    rows.append(f"# ray.init (local, 2 CPUs): {started:.2f} s; first exploration (starts 2 actors): {first:.2f} s")
    rows.append("# states/s per run; ray ms/level = (ray x1 - 1 process) / levels: fixed cost per level plus pickling "
                "the level's successors")
    rows.append(f"{'ncpus':>5} {'ops':>3} {'batch':>5} {'rd':>2} {'sum':>3} {'states':>8} {'levels':>6} "
                + " ".join(f"{name + ' s/s':>17}" for name, _ in RUNS) + f" {'ray ms/level':>12}")
    print("\n".join(rows), flush=True)
    for n, ops, batch, rd, sm in (QUICK if args.quick else POINTS):
        rates, walls, ref = [], {}, None
        for name, kw in RUNS:
            dt = float("inf")
            for _ in range(args.repeat):  # the best of a few: the machine is shared
                kw = dict(kw)
                with tempfile.TemporaryDirectory() as tmp:
                    if kw.pop("checkpoint", False):
                        kw["checkpoint"] = Path(tmp)
                    t0 = time.perf_counter()
                    r = explore(PercpuEager(ncpus=n, ops=ops, batch=batch, readers=rd, summers=sm), **kw)
                    dt = min(dt, time.perf_counter() - t0)
            got = (r.states, r.transitions, r.depth, {k: o.verdict for k, o in r.outcomes.items()})
            ref = ref or got
            if got != ref:
                sys.exit(f"{name} differs from the single process at {n, ops, batch, rd, sm}: {got} != {ref}")
            walls[name] = dt
            rates.append(f"{r.states / dt:>17,.0f}")
        levels = ref[2] + 1
        per_level = (walls["ray x1"] - walls["1 process"]) / levels * 1000
        line = (f"{n:>5} {ops:>3} {batch:>5} {rd:>2} {sm:>3} {ref[0]:>8,} {levels:>6} " + " ".join(rates)
                + f" {per_level:>12.1f}")
        rows.append(line)
        print(line, flush=True)
    cluster.disconnect()
    if args.out:
        Path(args.out).write_text("\n".join(rows) + "\n")


if __name__ == "__main__":
    main()
