# SPDX-License-Identifier: GPL-2.0-only
"""Random simulation throughput at 64 and 256 CPUs: steps/s of the walks, against building every successor.

    python benchmarks/simulate_speed.py [--runs N] [--depth D] [--out FILE]

For each point: the walks' steps per second (picking one enabled step by
testing guards in random order, and checking every property in every state),
and, on the states the walks visited, how many full successor lists
(``Model.successors``, what a pick by enumeration would build) the same
machine makes per second. Figures are measured, not asserted.
"""
from __future__ import annotations

import argparse
import platform
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from checker import loader  # noqa: E402
from checker.simulate.walk import walk  # noqa: E402
from checker.language.compile import Model  # noqa: E402
from checker.language.model import resolve_params  # noqa: E402

POINTS = [  # (spec, parameters)
    ("percpu_eager", {"variant": 1, "ncpus": 64, "batch": 4, "ops": 4}),
    ("percpu_eager", {"variant": 2, "ncpus": 64, "batch": 4, "ops": 4}),
    ("percpu_eager", {"variant": 1, "ncpus": 256, "batch": 4, "ops": 2}),
    ("percpu_hotplug", {"ncpus": 64, "ops": 2}),
    ("rss_split", {"threads": 64, "T": 2, "U": 2}),
]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=4)
    ap.add_argument("--depth", type=int, default=1000)
    ap.add_argument("--out", help="also write the table to this file")
    args = ap.parse_args()
    rows = [f"# simulation throughput ({args.runs} runs x depth {args.depth}, seed 0), python "
            f"{platform.python_version()}, {platform.machine()}",
            f"{'spec':<15} {'params':<34} {'props':>5} {'steps':>6} {'steps/s':>8} {'succ/s':>7} {'succ len':>8}"]
    print("\n".join(rows), flush=True)
    for name, given in POINTS:
        cls = loader.resolve([name])[0]
        model = Model(cls, resolve_params(cls, given))
        w = walk(model, runs=args.runs, depth=args.depth, seed=0)
        # The same number of states again, each expanded in full: a pick by enumeration pays this per step.
        states, s = [], model.initial_states()[0]
        while len(states) < 50:
            succ = model.successors(s)
            states.append(s)
            s = succ[len(states) % len(succ)][1] if succ else model.initial_states()[0]
        t0 = time.perf_counter()
        total = sum(len(model.successors(x)) for x in states)
        dt = time.perf_counter() - t0
        params = " ".join(f"{k}={v}" for k, v in given.items())
        line = (f"{name:<15} {params:<34} {len(model.properties):>5} {w.steps:>6} "
                f"{w.steps / w.seconds:>8,.0f} {len(states) / dt:>7,.0f} {total / len(states):>8.0f}")
        rows.append(line)
        print(line, flush=True)
    if args.out:
        Path(args.out).write_text("\n".join(rows) + "\n")


if __name__ == "__main__":
    main()
