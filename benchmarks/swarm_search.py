# SPDX-License-Identifier: GPL-2.0-only
"""The swarm search (``verify --search swarm``) on the points issue 26 names as out of exhaustive reach.

    nice python benchmarks/swarm_search.py [--timeout S] [--workers W] [--seed S] [--points issue|tree|eager|bugs] [--out FILE]

For each point: the time to the first violation of each property found (the
worker's own clock, from its start: the violation's path is then replayed
and shrunk on the interpreter, timed apart), or, where nothing is found in
the budget, the coverage reached. A bug spec's point looks for its expected
violations only (the search ends when they are found); the others look for
every property. Figures are measured, not asserted: tests pin verdicts,
never times. Run it with ``nice`` and note the load: the machine is shared.
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from checker import loader  # noqa: E402
from checker.compiled import swarm as csw  # noqa: E402
from checker.engines.swarm import swarm_checks  # noqa: E402
from checker.language.compile import Model  # noqa: E402
from checker.verify import own_sets, param_points  # noqa: E402

TREE = {"ncpus": 8, "tasks": 1, "ops": 2, "large": 0, "migrations": 0}
# the point; of the three points its explore sweeps cross it with, the largest (batch 3, ops 3)
EAGER_C = {"variant": "C", "irq": 1, "migrations": 2, "readers": 1, "summers": 1, "forever": 0, "ncpus": 3,
           "batch": 3, "ops": 3, "limited": 0}
TREE_POINTS = [  # (spec, parameters, only the expected violations?)
    *[("counter_tree_read_in_flight", {**TREE, "design": d}, True) for d in ("latest", "noskip", "v6")],
    *[("percpu_counter_tree", {**TREE, "design": d}, False) for d in ("latest", "noskip", "v6")],
]
EAGER_POINTS = [("percpu_eager", EAGER_C, False)]
#: Bugs that exist at large points (``--points bugs``): the single-page in-flight read needs a second task
#: per CPU; the eager counter's interrupt adder at the issue's variant C point.
BUG_POINTS = [
    ("counter_tree_read_in_flight", {**TREE, "tasks": 2, "design": "latest"}, True),
    ("counter_tree_read_in_flight", {**TREE, "tasks": 2, "design": "v6"}, True),
    ("eager_irq_add", {**EAGER_C, "variant": "A", "migrations": 0}, True),
    ("eager_fold_gt", EAGER_C, True),
]


def point(name: str, sets: dict, bug_only: bool, timeout: float, workers: int, seed: int) -> list[str]:
    cls = loader.resolve([name])[0]
    (params,) = param_points(cls, own_sets(cls, {k: (v,) for k, v in sets.items()}))
    out = [f"{name} [{' '.join(f'{k}={v}' for k, v in sets.items())}]"]
    if bug_only:
        model = Model(cls, params)
        pending = [p.name in cls.expect_violated for p in model.properties] + [False]
        t0 = time.perf_counter()
        low, sw = csw.search(model, csw.SwarmOptions(seed, workers), timeout=timeout, pending=pending)
        wall = time.perf_counter() - t0
        for k, hit in sorted(sw.hits.items()):
            t1 = time.perf_counter()
            start, labs = csw.replayable(model, low, hit)
            out.append(f"  {low.props[k][0]}: violated after {hit.seconds:.2f}s (run {hit.run}, worker {hit.worker}), "
                       f"a path of {len(labs)} steps replayed in {time.perf_counter() - t1:.2f}s")
        if not sw.hits:
            out.append("  not found")
        out.append(f"  {sw.summary()} (compile {sw.compile_seconds:.1f}s; wall {wall:.1f}s; cpu {sw.cpu:.1f}s)")
        return out
    t0 = time.perf_counter()
    checks = swarm_checks(cls, params, csw.SwarmOptions(seed, workers), timeout=timeout)
    wall = time.perf_counter() - t0
    for c in checks:
        if c.verdict != "inconclusive" and c.kind != "build":
            out.append(f"  {c.property} ({c.kind}): {c.verdict} after {c.extra.get('seconds_to_find')}s, "
                       f"shrunk {c.extra.get('original_steps')} -> {len(c.trace)} steps")
    undecided = [c.property for c in checks if c.verdict == "inconclusive"]
    out.append(f"  inconclusive: {len(undecided)} ({', '.join(undecided)})")
    out.append(f"  {checks[-1].reason or ''}".rstrip() if undecided else "  (every check decided)")
    out.append(f"  wall {wall:.1f}s with replay and shrinking")
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--timeout", type=float, default=120.0)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--points", choices=("issue", "tree", "eager", "bugs"), default="issue")
    ap.add_argument("--out", help="append the results to FILE")
    a = ap.parse_args()
    lines = [f"swarm search, {a.workers} workers, seed {a.seed}, budget {a.timeout:.0f}s a point; "
             f"load at start: {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores ({time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())})"]
    print(lines[0], flush=True)
    points = {"issue": TREE_POINTS + EAGER_POINTS, "tree": TREE_POINTS, "eager": EAGER_POINTS, "bugs": BUG_POINTS}
    for name, sets, bug in points[a.points]:
        for ln in point(name, sets, bug, a.timeout, a.workers, a.seed):
            print(ln, flush=True)
            lines.append(ln)
    lines.append(f"load at end: {os.getloadavg()[0]:.2f}")
    print(lines[-1])
    if a.out:
        with open(a.out, "a") as f:
            f.write("\n".join(lines) + "\n\n")


if __name__ == "__main__":
    main()
