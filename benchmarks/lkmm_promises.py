# SPDX-License-Identifier: GPL-2.0-only
"""What promises cost (issue 29, item 2): distinct states under ``--memory lkmm`` with ``lkmm_promises`` 0 and 1.

    python benchmarks/lkmm_promises.py [--points N] [--out FILE]

For each seed spec (percpu_eager, percpu_lazy, vma_unlink_batch,
stack_cache) its first N explore points under lkmm with two CPUs or more
(of those ``verify SPEC --memory lkmm`` runs), each explored exhaustively on the compiled engine with
no promises (the default) and with one per CPU; then the kernel's litmus
tests (tests/litmus/, with the bounds ``python -m checker litmus`` sets).
Each row: states without and with promises, the factor, the seconds, and
whether every verdict is the same. A promise is possible only for a
``"once"`` store whose value is a constant or of a finite type
(checker/ordering/promises.py), so a spec without such a store pays
nothing. Figures are measured, not asserted.
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

from checker.errors import UsageError  # noqa: E402
from checker.explore import explore  # noqa: E402
from checker.language.compile import Model  # noqa: E402
from checker.language.model import info  # noqa: E402
from checker.loader import builtin_specs  # noqa: E402
from checker.ordering.declare import MEMORY, has_accesses  # noqa: E402
from checker.verify import param_points  # noqa: E402

SEEDS = ("percpu_eager", "percpu_lazy", "vma_unlink_batch", "stack_cache")
LIMIT = 5_000_000


def lkmm_points(cls: type) -> list:
    if not has_accesses(info(cls)):
        return []
    out = []
    for p in param_points(cls, {"memory": (MEMORY.lkmm,)}, "explore"):
        try:
            if Model(cls, p).abstraction is None:
                out.append(p)
        except UsageError:
            continue
    return out


def run(make: object, promises: int, engine: str) -> tuple:
    t = time.monotonic()
    r = explore(Model(make(promises)), engine=engine, max_states=LIMIT)
    return r.states, time.monotonic() - t, r.verdicts, r.complete, r.engine


def row(label: str, make: object, engine: str = "compiled") -> str:
    a, b = run(make, 0, engine), run(make, 1, engine)
    same = "same verdicts" if a[2] == b[2] else "verdicts differ: " + ", ".join(
        f"{k} {a[2].get(k)}->{b[2].get(k)}" for k in sorted(set(a[2]) | set(b[2])) if a[2].get(k) != b[2].get(k))
    cut = "" if a[3] and b[3] else " (a limit was reached)"
    return (f"{label:<58}{a[0]:>10,}{b[0]:>11,}{b[0] / max(a[0], 1):>8.2f}x{a[1]:>8.1f}s{b[1]:>8.1f}s  {b[4]:<12}"
            f"{same}{cut}")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--points", type=int, default=2)
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "lkmm_promises.txt"))
    args = ap.parse_args()
    load = os.getloadavg()
    lines = [f"# lkmm_promises: states under --memory lkmm without and with promises; python "
             f"{platform.python_version()}, {platform.machine()}, {os.cpu_count()} cores, load average "
             f"{load[0]:.1f} at the start (other jobs were running: seconds are indicative only)", ""]
    head = f"{'point':<58}{'no promises':>10}{'1 per CPU':>11}{'factor':>9}{'s (0)':>9}{'s (1)':>9}  engine"
    lines += [head, "-" * len(head)]
    print("\n".join(lines), flush=True)
    specs = builtin_specs()
    for name in SEEDS:
        cls = specs[name]
        pts = lkmm_points(cls)
        if not pts:
            line = f"{name}: no access= annotations, so --memory lkmm explores it as sc: nothing to promise"
            lines.append(line)
            print(line, flush=True)
            continue
        # two CPUs or more first (one CPU alone never falls behind its own stores: nothing to promise to)
        pts = [p for p in pts if p.as_dict().get("ncpus", 2) >= 2] or pts
        for p in pts[:args.points]:
            shown = " ".join(f"{k}={v}" for k, v in p.shown().items() if k not in ("memory",))
            line = row(f"{name} {shown}"[:57], lambda k, cls=cls, p=p: cls(**{**p.as_dict(), "lkmm_promises": k}))
            lines.append(line)
            print(line, flush=True)
    from checker.litmus import run as R

    lines += ["", "kernel litmus tests (tests/litmus/ and documentation/), the bounds the litmus command sets:"]
    for lw in R.prepare(R.default_paths()):
        if lw.spec is None or "memory" not in info(lw.spec).params:
            continue
        b = {k: v for k, v in R.bounds(lw.spec).items() if k != "sb_depth"}
        line = row(lw.test.name[:57], lambda k, lw=lw, b=b: lw.spec(memory=MEMORY.lkmm, **{**b, "lkmm_promises": k}),
                   "interpreted")
        lines.append(line)
        print(line, flush=True)
    lines += ["", "columns: distinct states with lkmm_promises=0 and =1, the factor, seconds of each run (the compiled",
              "engine's include generating and compiling its C, or the build cache's hit), the engine, and whether",
              "every verdict is the same (the litmus rows' verdicts differ exactly where promises give LB and S)."]
    Path(args.out).write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
