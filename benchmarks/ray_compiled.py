# SPDX-License-Identifier: GPL-2.0-only
"""``--cluster ray`` on the compiled engine: the search on N local Ray actors against one compiled process,
on the issue 26 points (percpu_eager (4,3,3) with a reader and a summer, unreduced; (6,3,3) variant B with
symmetry).

    python benchmarks/ray_compiled.py [--jobs 2] [--quick | --second] [--output benchmarks/ray_compiled.txt]

Each point's program and library are built first (not timed). Reported per run: wall time, states per
second, CPU seconds (the one process's own; each actor's process CPU during the search, and the part its
search calls took on their thread: the rest is Ray's own threads), and per state:
the bytes of successors sent between actors (the network cost on a real cluster; the share an actor
keeps for itself is not sent), the coordinator's bytes (keys up, ranks down: 12 a new state), and the
memory (the one process's peak RSS growth; the actors' slices, and their peak RSS). The states,
transitions, depth, deciding states and parents of both runs must agree (else the script stops).
The load average is printed beside each run: this machine is shared.
"""
from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from pathlib import Path

from measure import load

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

RS = {"readers": 1, "summers": 1}
POINTS = [
    ("percpu_eager", {"ncpus": 4, "ops": 3, "batch": 3, **RS}, False),  # unreduced
    ("percpu_eager", {"ncpus": 6, "ops": 3, "batch": 3, "variant": 1, **RS}, True),  # variant B, symmetry
]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--quick", action="store_true", help="the first point only")
    ap.add_argument("--second", action="store_true", help="the second point only")
    ap.add_argument("--output")
    args = ap.parse_args()
    from checker import cluster
    from checker.compiled import engine as ce
    from checker.compiled.ray_search import RaySlices, compiled_ray_search
    from checker.language.compile import Model
    from checker.language.model import resolve_params
    from checker.loader import builtin_specs

    lines = [f"# benchmarks/ray_compiled.py --jobs {args.jobs}",
             f"# {time.strftime('%Y-%m-%d %H:%M:%S %Z')}, {platform.node()}, {os.cpu_count()} CPUs"]

    def say(s: str) -> None:
        print(s, flush=True)
        lines.append(s)

    cluster.connect(None, num_cpus=args.jobs)
    for spec, point, sym in POINTS[:1] if args.quick else POINTS[1:] if args.second else POINTS:
        cls = builtin_specs()[spec]

        def model(cls: type = cls, point: dict = point) -> Model:
            return Model(cls, resolve_params(cls, point))

        ce.prepare(model(), sym, ce.Timings())
        say(f"{spec} {point} symmetry={sym}")
        before = load()
        t = ce.Timings()
        w0 = time.perf_counter()
        one = ce.compiled_search(model(), symmetry=sym, timings=t)
        wall1 = time.perf_counter() - w0
        say(f"  one process:  {one.states:,} states, {one.transitions:,} transitions, depth {one.depth}; "
            f"{wall1:.1f} s wall ({t.search:.1f} s search, {t.search_cpu:.1f} s CPU), "
            f"{one.states / t.search:,.0f} states/s; peak RSS growth "
            f"{(t.rss_peak - t.rss_before) / one.states:.1f} B/state; load {before}")
        # warm: the library built and the actors started (their start-up is not the search's cost)
        compiled_ray_search(Model(builtin_specs()["percpu_eager"]), jobs=args.jobs, symmetry=True,
                            workers=RaySlices(args.jobs))
        compiled_ray_search(model(), jobs=args.jobs, symmetry=sym, max_states=1, workers=RaySlices(args.jobs))
        before = load()
        costs: list = []
        w0 = time.perf_counter()
        two = compiled_ray_search(model(), jobs=args.jobs, symmetry=sym, workers=RaySlices(args.jobs),
                                  measured=costs)
        wall2 = time.perf_counter() - w0
        same = (one.states, one.transitions, one.depth, one.stopped, one.found, one.deadlock, one.parents) == \
            (two.states, two.transitions, two.depth, two.stopped, two.found, two.deadlock, two.parents)
        if not same:
            say("  DIFFERENT RESULTS: stopping")
            break
        sent = sum(c["sent"] for c in costs)
        kept = sum(c["kept"] for c in costs)
        cpu = [c["cpu"] for c in costs]
        work = [c["work"] for c in costs]
        slices = sum(c["slice_bytes"] for c in costs)
        rss = [c["rss_peak"] for c in costs]
        n = two.states
        say(f"  {args.jobs} Ray actors: the same states, transitions, depth, verdicts' states and parents; "
            f"{wall2:.1f} s wall, {n / wall2:,.0f} states/s ({wall1 / wall2:.2f}x one process's wall); actors' "
            f"CPU {' + '.join(f'{c:.1f}' for c in cpu)} s, of which in the search's calls "
            f"{' + '.join(f'{c:.1f}' for c in work)} s (the rest: Ray's threads); load {before}")
        say(f"    per state: {sent / n:.1f} B sent between actors ({sent / two.transitions:.1f} B a transition; "
            f"{kept / n:.1f} B kept by the sender), 12 B coordinator (keys and ranks); slices "
            f"{slices / n:.1f} B/state in all; actors' peak RSS {' + '.join(f'{r / 2**20:.0f}' for r in rss)} MiB "
            f"({sum(rss) / n:.1f} B/state with each Python process)")
    say(f"# load after: {load()}")
    cluster.disconnect()
    if args.output:
        Path(args.output).write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
