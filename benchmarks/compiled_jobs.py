# SPDX-License-Identifier: GPL-2.0-only
"""``--jobs N`` on the compiled engine: the search on N threads against one thread, on the issue 26 points;
and ``--fingerprint`` on a point of over 10^9 states.

    python benchmarks/compiled_jobs.py [--jobs 2] [--repeat 3] [--output benchmarks/compiled_jobs.txt]
    python benchmarks/compiled_jobs.py --fingerprint [--max-states N] [--max-memory GIB]
    python benchmarks/compiled_jobs.py --share [--repeat 2] [--output FILE]

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

from measure import load

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

RS = {"readers": 1, "summers": 1}
BIG = ("percpu_eager", {"ncpus": 5, "ops": 4, "batch": 3, **RS})
POINTS = [
    ("percpu_eager", {"ncpus": 4, "ops": 3, "batch": 3, **RS}, False),  # unreduced
    ("percpu_eager", {"ncpus": 6, "ops": 3, "batch": 3, "variant": 1, **RS}, True),  # variant B, symmetry
]


def share(repeat: int, say) -> None:
    """The search program of the first point run directly (no Python around it), each configuration
    ``repeat`` times: the CPU time it takes (all threads) says what threading costs in work, and CPU time
    over wall time says how much of the machine the scheduler gave it. Pinned to one CPU, two threads do
    the work of two with no parallelism, so any extra CPU time there is the threaded algorithm's own."""
    import subprocess

    from checker.compiled import engine as ce
    from checker.compiled.lower import flatten
    from checker.language.compile import Model
    from checker.language.model import resolve_params
    from checker.loader import builtin_specs

    spec, point, sym = POINTS[0]
    cls = builtin_specs()[spec]
    m = Model(cls, resolve_params(cls, point))
    _low, _evs, exe = ce.prepare(m, sym, ce.Timings())
    inits = [flatten(m, s) for s in m.initial_states()]
    text = f"{len(inits)}\n" + "\n".join(" ".join(map(str, v)) for v in inits) + "\n"
    say(f"{spec} {point} symmetry={sym}: the search program alone (sched_autogroup_enabled="
        f"{Path('/proc/sys/kernel/sched_autogroup_enabled').read_text().strip()})")
    for rep in range(repeat):
        for threads, cpus in ((1, {0, 1}), (2, {0}), (2, {0, 1})):
            before = load()
            t0 = time.perf_counter()
            proc = subprocess.Popen([str(exe), "0", "0", str(8 << 30), "0", "0", "0", str(threads), "0", "-", "-1"],
                                    stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                                    preexec_fn=lambda c=cpus: os.sched_setaffinity(0, c))
            out, _ = proc.communicate(text)
            wall = time.perf_counter() - t0
            res = dict(kv.split("=", 1) for kv in out.splitlines()[0].split()[1:])
            cpu = float(res["cpu"])
            say(f"  run {rep + 1} threads={threads} cpus={','.join(map(str, sorted(cpus)))}: {int(res['states']):,} "
                f"states; {wall:.1f} s wall, {cpu:.2f} s CPU, {cpu / wall:.2f} CPUs; load before: {before}")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--quick", action="store_true", help="the first point only")
    ap.add_argument("--fingerprint", action="store_true", help="the 10^9-state point with fingerprints")
    ap.add_argument("--max-states", type=int)
    ap.add_argument("--max-memory", type=float, default=16.0, help="GiB for the fingerprint run")
    ap.add_argument("--output")
    ap.add_argument("--share", action="store_true",
                    help="where the time of two threads goes: the search program alone, on 1 thread, on 2 threads "
                         "pinned to one CPU, and on 2 threads free on both, with its CPU time and share of a CPU")
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

    if args.share:
        share(args.repeat, say)
        if args.output:
            with open(args.output, "a") as f:
                f.write("\n".join(lines) + "\n")
        return
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
