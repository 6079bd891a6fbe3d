# SPDX-License-Identifier: GPL-2.0-only
"""Partial-order reduction (``--por``, checker/compiled/ample.py) against the plain compiled search, on
issue 26's targets: percpu_eager variant C with an interrupt adder, two migrations, a reader and a summer
at 3 CPUs (target: exhaustive in under 2 minutes), and percpu_eager's explore points under lkmm.

    python benchmarks/por.py [--out FILE] [--timeout S]
    python benchmarks/por.py --first-points [--specs NAME ...] [--out FILE]

Each run is its own process (``explore()`` on the compiled engine, symmetry on, as ``verify`` runs it),
with a per-exploration timeout. Printed per run: the states stored, whether it finished, the CPU
seconds, and from the report's note how many states with two or more enabled steps were expanded
reduced. The machine's load (``os.getloadavg``) is beside each run: other jobs share its two cores.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from pathlib import Path

from measure import ROOT, run_child

TARGET = {"variant": "C", "irq": 1, "migrations": 2, "readers": 1, "summers": 1, "forever": 0, "ncpus": 3}


def points() -> list[tuple[str, dict]]:
    """(label, parameters): the target point, then percpu_eager's explore points under lkmm."""
    sys.path.insert(0, str(ROOT))
    from checker.loader import builtin_specs
    from checker.ordering.declare import MEMORY
    from checker.verify import param_points

    cls = builtin_specs()["percpu_eager"]
    out = [("target (sc)", dict(TARGET))]
    for p in param_points(cls, {"memory": (MEMORY.lkmm,)}, "explore"):
        if p.as_dict().get("forever"):  # an unbounded liveness point: lkmm refuses it, verify leaves it out
            continue
        d = {k: (v.name if hasattr(v, "name") else v) for k, v in p.as_dict().items()}
        out.append(("lkmm", d))
    return out


def child(arg: str) -> None:
    sys.path.insert(0, str(ROOT))
    from checker.explore import explore
    from checker.language.compile import Model
    from checker.language.model import resolve_params
    from checker.loader import builtin_specs

    given, por, timeout = json.loads(arg)
    cls = builtin_specs()["percpu_eager"]
    mod = sys.modules[cls.__module__]
    enums = {"variant": mod.VARIANT}
    values = {}
    for k, v in given.items():
        if isinstance(v, str) and k in enums:
            v = getattr(enums[k], v)
        elif isinstance(v, str) and k == "memory":
            from checker.ordering.declare import MEMORY
            v = getattr(MEMORY, v)
        values[k] = v
    r = explore(Model(cls, resolve_params(cls, values)), engine="compiled", por=por, timeout=timeout)
    print(json.dumps({"engine": r.engine, "states": r.states, "complete": r.complete, "note": r.engine_note,
                      "verdicts": {n: o.verdict for n, o in r.outcomes.items()}}))


def run(given: dict, por: bool, timeout: float) -> dict:
    return run_child(__file__, [given, por, timeout])


def first_points(max_states: int, only: list[str] | None = None) -> list[str]:
    """Every built-in spec's first explore point (as tests/test_por.py takes it), unreduced and reduced in this
    process: the states each stores, whether the verdicts agree, and the reduced run's note."""
    sys.path.insert(0, str(ROOT))
    from checker.explore import explore
    from checker.language.compile import Model
    from checker.loader import builtin_specs
    from checker.verify import param_points

    lines = [f"# every built-in spec's first explore point, compiled, symmetry on, --max-states {max_states:,}",
             "# spec                              states    --por  verdicts  cpu s (off, on)  states expanded reduced"]
    print("\n".join(lines), flush=True)
    totals = [0, 0]
    for name, cls in sorted(builtin_specs().items()):
        if only and name not in only:
            continue
        pts = [p for p in param_points(cls, {}, "explore") if Model(cls, p).abstraction is None]
        if not pts:
            continue
        print(f"  ({name}, {time.strftime('%H:%M:%S')})", flush=True)
        runs = []
        for por in (False, True):
            c0 = time.process_time()
            r = explore(Model(cls, pts[0]), engine="compiled", por=por, max_states=max_states)
            runs.append((r, time.process_time() - c0))
        (full, c_full), (red, c_red) = runs
        if full.engine != "compiled":
            lines.append(f"{name:34s} interpreted: {full.engine_note}")
            print(lines[-1], flush=True)
            continue
        same = {n: o.verdict for n, o in full.outcomes.items()} == {n: o.verdict for n, o in red.outcomes.items()}
        note = (red.engine_note or "").split(" with two or more")[0].replace("partial-order reduction: ", "")
        totals[0] += full.states
        totals[1] += red.states
        lines.append(f"{name:34s} {full.states:>9,d} {red.states:>9,d}  {'same' if same else 'DIFFER':8s}"
                     f"  {c_full:6.1f} {c_red:6.1f}    {note}")
        print(lines[-1], flush=True)
    lines.append(f"# total: {totals[0]:,} states unreduced, {totals[1]:,} reduced")
    print(lines[-1], flush=True)
    return lines


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", help="also write the table to this file")
    ap.add_argument("--timeout", type=float, default=120.0, help="per exploration (default 120 s)")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    ap.add_argument("--lkmm-points", type=int, default=2, help="how many of the largest lkmm explore points (default 2)")
    ap.add_argument("--first-points", action="store_true",
                    help="instead: every built-in spec's first explore point, unreduced and reduced")
    ap.add_argument("--specs", nargs="*", help="with --first-points: only these specs")
    args = ap.parse_args()
    if args.child:
        child(args.child)
        return
    if args.first_points:
        lines = [f"# {platform.node()} {platform.machine()}, {os.cpu_count()} cores; load {os.getloadavg()[0]:.1f} "
                 f"at the start"] + first_points(300_000, args.specs)
        lines.append(f"# load {os.getloadavg()[0]:.1f} at the end")
        if args.out:
            Path(args.out).write_text("\n".join(lines) + "\n")
        return
    lines = [f"# {platform.node()} {platform.machine()}, {os.cpu_count()} cores, python {platform.python_version()}",
             f"# compiled engine, symmetry on; timeout {args.timeout:.0f} s per exploration",
             "# point          por  states        done  wall s  cpu s  load1  same verdicts  reduced"]
    print("\n".join(lines), flush=True)
    pts = points()
    # the largest lkmm points: most CPUs, then most readers and summers
    big = sorted(pts[1:], key=lambda lp: (lp[1]["ncpus"], lp[1]["readers"] + lp[1]["summers"]), reverse=True)
    pts = pts[:1] + big[:args.lkmm_points]
    for label, given in pts:
        base = None
        for por in (False, True):
            r = run(given, por, args.timeout)
            same = "" if base is None else ("yes" if r["verdicts"] == base else
                                            "no: " + ", ".join(k for k in r["verdicts"]
                                                               if r["verdicts"][k] != base.get(k)))
            if base is None:
                base = r["verdicts"]
            note = r["note"] or ""
            reduced = note.split(" states with")[0].replace("partial-order reduction: ", "") if por else ""
            shown = " ".join(f"{k}={v}" for k, v in given.items() if k not in ("memory",))
            line = (f"{label:12s} {'on ' if por else 'off'}  {r['states']:<12,d}  {'yes' if r['complete'] else 'no ':4s}"
                    f"  {r['wall']:6.1f}  {r['cpu']:5.1f}  {r['load']:5.2f}  {same:13s}  {reduced}")
            lines.append(line + f"   [{shown}]")
            print(lines[-1], flush=True)
    if args.out:
        Path(args.out).write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
