# SPDX-License-Identifier: GPL-2.0-only
"""The bare weak-memory sweeps of issue 29: every built-in spec and bug spec, no caps.

    python benchmarks/weak_sweeps.py run MODEL OUTDIR      # nice python -m checker verify --memory MODEL -v ...
    python benchmarks/weak_sweeps.py each MODEL OUTDIR --deadline S SPEC ...   # one spec at a time
    python benchmarks/weak_sweeps.py summary OUTDIR [MODEL ...] [--out FILE]

``run`` starts ``python -m checker verify --memory MODEL -v --traces none --json OUTDIR/MODEL.json`` (the
bare selection: every built-in spec and bug spec, no --max-states, no --timeout), with its per-check lines in
``OUTDIR/MODEL.out`` and its progress in ``OUTDIR/MODEL.err``, and records its wall time. ``summary`` reads
those files (a sweep still running, or stopped, included: its last progress line says where it was) and
writes per spec: the points finished, the checks by verdict and the largest point's states, then every check
that is not "holds / not applicable / expected violation found", then where the sweep stood. The figures are
what the runs printed, nothing is asserted; note the machine's load beside them (``uptime``).

``each`` runs the named specs one at a time, each with ``--deadline S`` (what a spec did not decide by then
is inconclusive, and its last progress line, with the states and the rate, is kept), appending to the same
``OUTDIR/MODEL.out``; ``OUTDIR/MODEL.each`` gets a line per spec: its wall time, exit status, the load
average when it ended, and for a spec stopped by its deadline where it stood.
"""
from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LINE = re.compile(r"^(?P<mark>\S+)\s+(?P<verdict>.+?)\s{2,}(?P<spec>[a-z0-9_]+)\.(?P<prop>\S+)(?: \((?P<kind>[a-z]+)\))?"
                  r"\s+\[(?P<params>[^]]*)\]\s+(?:(?P<states>[\d,]+) states|not checked)")


def run(model: str, outdir: Path) -> int:
    outdir.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    t0 = time.time()
    with open(outdir / f"{model}.out", "w") as out, open(outdir / f"{model}.err", "w") as err:
        rc = subprocess.call(["nice", sys.executable, "-m", "checker", "verify", "--memory", model, "-v",
                              "--traces", "none", "--json", str(outdir / f"{model}.json")],
                             stdout=out, stderr=err, cwd=ROOT, env=env)
    (outdir / f"{model}.wall").write_text(f"{time.time() - t0:.0f} s, exit {rc}\n")
    return rc


def each(model: str, outdir: Path, deadline: int, specs: list[str]) -> None:
    outdir.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    for spec in specs:
        t0 = time.time()
        err_file = outdir / f"{model}.{spec}.err"
        with open(outdir / f"{model}.out", "a") as out, open(err_file, "w") as err:
            # the outer timeout only guards a run that does not honour --deadline (a hung child)
            rc = subprocess.call(["timeout", str(deadline + 300), "nice", "-n", "19", sys.executable, "-m",
                                  "checker", "verify", spec, "--memory", model, "-v", "--traces", "none",
                                  "--deadline", str(deadline)],
                                 stdout=out, stderr=err, cwd=ROOT, env=env)
        progress = [x for x in err_file.read_text().splitlines() if x.startswith("progress:")]
        stood = f"  where it stood: {progress[-1][:300]}" if rc == 3 and progress else ""
        load = os.getloadavg()
        with open(outdir / f"{model}.each", "a") as log:
            log.write(f"{spec:38} {time.time() - t0:7.0f} s  exit {rc}  load {load[0]:.1f}{stood}\n")


def summary(outdir: Path, model: str) -> list[str]:
    specs: dict[str, dict] = defaultdict(lambda: {"points": set(), "verdicts": defaultdict(int), "max": 0})
    odd = []
    for line in (outdir / f"{model}.out").read_text().splitlines():
        m = LINE.match(line)
        if not m:
            continue
        sp = specs[m["spec"]]
        sp["points"].add(m["params"])
        v = m["verdict"].split(" (")[0]
        sp["verdicts"][v] += 1
        sp["max"] = max(sp["max"], int((m["states"] or "0").replace(",", "")))
        if m["mark"] != "ok":
            odd.append(f"  {m['mark']} {m['verdict']} {m['spec']}.{m['prop']} [{m['params']}]")
    lines = [f"## --memory {model}", ""]
    wall = outdir / f"{model}.wall"
    lines.append(f"wall: {wall.read_text().strip() if wall.exists() else 'not finished (see where it stood)'}")
    err = (outdir / f"{model}.err").read_text().splitlines() if (outdir / f"{model}.err").exists() else []
    progress = [x for x in err if x.startswith("progress:")]
    if progress and not wall.exists():
        lines.append(f"where it stood: {progress[-1][:300]}")
    lines += ["", f"{'spec':38} {'points':>6} {'largest':>9}  verdicts"]
    for name, sp in specs.items():
        vs = ", ".join(f"{k} {n}" for k, n in sorted(sp["verdicts"].items()))
        lines.append(f"{name:38} {len(sp['points']):>6} {sp['max']:>9}  {vs}")
    lines += ["", "not as expected:" if odd else "not as expected: none among the finished checks", *odd, ""]
    return lines


def main() -> None:
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run")
    r.add_argument("model", choices=("tso", "lkmm"))
    r.add_argument("outdir", type=Path)
    e = sub.add_parser("each")
    e.add_argument("model", choices=("tso", "lkmm"))
    e.add_argument("outdir", type=Path)
    e.add_argument("--deadline", type=int, required=True)
    e.add_argument("specs", nargs="+")
    s = sub.add_parser("summary")
    s.add_argument("outdir", type=Path)
    s.add_argument("models", nargs="*", default=["tso", "lkmm"])
    s.add_argument("--out", type=Path)
    args = ap.parse_args()
    if args.cmd == "run":
        sys.exit(run(args.model, args.outdir))
    if args.cmd == "each":
        each(args.model, args.outdir, args.deadline, args.specs)
        return
    lines = []
    for m in args.models:
        lines += summary(args.outdir, m)
    text = "\n".join(lines) + "\n"
    if args.out:
        args.out.write_text(text)
    else:
        print(text, end="")


if __name__ == "__main__":
    main()
