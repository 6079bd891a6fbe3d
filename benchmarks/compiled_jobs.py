# SPDX-License-Identifier: GPL-2.0-only
"""``--jobs N`` on the compiled engine: the search on N threads against one thread, on the issue 26 points;
and ``--fingerprint`` on a point of over 10^9 states.

    python benchmarks/compiled_jobs.py [--jobs 2] [--repeat 3] [--output benchmarks/compiled_jobs.txt]
    python benchmarks/compiled_jobs.py --fingerprint [--max-states N] [--max-memory GIB]

Each point's program is built first (not timed); then the search runs with 1 and N threads, alternately,
``--repeat`` times; reported per run: the search's wall time and CPU time (all threads), from the search
process itself, and the load average (uptime) before it. The speed-up is the best wall time of one thread
over the best of N: on a machine shared with other work the best run is the one least disturbed, and the
CPU time says how much work each did. The states, transitions, depth and verdicts of every run must agree.

``--fingerprint`` explores BIG (percpu_eager ncpus=5 ops=4 batch=3 with a reader and a summer, no
symmetry: 14,635,839 states with symmetry, so over 10^9 without) keeping 64-bit hashes, and reports the
rate, the bytes per state and the omission probability; with ``--max-states`` it stops there and
projects the whole run from the rate (an estimate: later levels may run at another rate).
"""
from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

RS = {"readers": 1, "summers": 1}
BIG = ("percpu_eager", {"ncpus": 5, "ops": 4, "batch": 3, **RS})
POINTS = [
    ("percpu_eager", {"ncpus": 4, "ops": 3, "batch": 3, **RS}, False),  # unreduced
    ("percpu_eager", {"ncpus": 6, "ops": 3, "batch": 3, "variant": 1, **RS}, True),  # variant B, symmetry
]


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--quick", action="store_true", help="the first point only")
    ap.add_argument("--fingerprint", action="store_true", help="the 10^9-state point with fingerprints")
    ap.add_argument("--max-states", type=int)
    ap.add_argument("--max-memory", type=float, default=16.0, help="GiB for the fingerprint run")
    ap.add_argument("--output")
    args = ap.parse_args()
    from checker.compiled import engine as ce
    from checker.language.compile import Model
    from checker.language.model import resolve_params
    from checker.loader import builtin_specs

    lines = [f"# benchmarks/compiled_jobs.py --jobs {args.jobs} --repeat {args.repeat}",
             f"# {time.strftime('%Y-%m-%d %H:%M:%S %Z')}, {platform.node()}, {os.cpu_count()} CPUs"]

    def say(s: str) -> None:
        print(s, flush=True)
        lines.append(s)

    if args.fingerprint:
        spec, point = BIG
        cls = builtin_specs()[spec]
        ce.prepare(Model(cls, resolve_params(cls, point)), False, ce.Timings())
        before = load()
        t = ce.Timings()
        st = ce.compiled_search(Model(cls, resolve_params(cls, point)), symmetry=False, timings=t, fingerprint=True,
                                max_states=args.max_states, max_memory=int(args.max_memory * 2 ** 30))
        say(f"{spec} {point} symmetry=False --fingerprint (max_states={args.max_states}, max_memory="
            f"{args.max_memory} GiB)")
        say(f"  {st.states:,} states, {st.transitions:,} transitions, depth {st.depth}, stopped: {st.stopped}; "
            f"search {t.search:.1f} s wall, {t.search_cpu:.1f} s CPU ({st.states / t.search_cpu / 1e6:.2f} M states "
            f"per CPU second); peak RSS {t.rss_peak / 2 ** 30:.2f} GiB, "
            f"{(t.rss_peak - t.rss_before) / st.states:.1f} B/state; omission probability "
            f"{st.omission_probability:.2g}; load before: {before}, after: {load()}")
        if args.output:
            with open(args.output, "a") as f:
                f.write("\n".join(lines) + "\n")
        return
    for spec, point, sym in POINTS[:1] if args.quick else POINTS:
        cls = builtin_specs()[spec]
        ce.prepare(Model(cls, resolve_params(cls, point)), sym, ce.Timings())
        say(f"{spec} {point} symmetry={sym}")
        best: dict[int, float] = {}
        seen = None
        for rep in range(args.repeat):
            for threads in (1, args.jobs):
                before = load()
                t = ce.Timings()
                st = ce.compiled_search(Model(cls, resolve_params(cls, point)), symmetry=sym, timings=t,
                                        threads=threads)
                what = (st.states, st.transitions, st.depth, st.stopped, sorted(st.found), st.deadlock)
                if seen is None:
                    seen = what
                assert what == seen, (what, seen)
                best[threads] = min(best.get(threads, 1e9), t.search)
                say(f"  run {rep + 1} threads={threads}: {st.states:,} states, {st.transitions:,} transitions, "
                    f"depth {st.depth}; search {t.search:.2f} s wall, {t.search_cpu:.2f} s CPU "
                    f"({st.states / t.search / 1e6:.2f} M states/s); load before: {before}")
        say(f"  speed-up, best wall time: {best[1] / best[args.jobs]:.2f}x with {args.jobs} threads "
            f"({best[1]:.2f} s against {best[args.jobs]:.2f} s); every run the same states, transitions, depth, "
            f"properties found")
    if args.output:
        Path(args.output).write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
