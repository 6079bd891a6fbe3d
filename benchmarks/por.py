# SPDX-License-Identifier: GPL-2.0-only
"""Partial-order reduction (``--por``, checker/compiled/ample.py) against the plain compiled search, on
issue 26's targets: percpu_eager variant C with an interrupt adder, two migrations, a reader and a summer
at 3 CPUs (target: exhaustive in under 2 minutes), and percpu_eager's explore points under lkmm.

    python benchmarks/por.py [--out FILE] [--timeout S]

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
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
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
    cmd = [sys.executable, __file__, "--child", json.dumps([given, por, timeout])]
    load = os.getloadavg()[0]
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd, cwd=ROOT, stdout=out, stderr=err, text=True)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t0
        out.seek(0), err.seek(0)
        if os.waitstatus_to_exitcode(status) != 0:
            raise SystemExit(f"{' '.join(cmd)} failed:\n{err.read()}")
        res = json.loads(out.read().strip().splitlines()[-1])
    res.update(wall=wall, cpu=usage.ru_utime + usage.ru_stime, load=load)
    return res


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", help="also write the table to this file")
    ap.add_argument("--timeout", type=float, default=120.0, help="per exploration (default 120 s)")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    ap.add_argument("--lkmm-points", type=int, default=2, help="how many of the largest lkmm explore points (default 2)")
    args = ap.parse_args()
    if args.child:
        child(args.child)
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
