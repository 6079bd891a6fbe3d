# SPDX-License-Identifier: GPL-2.0-only
"""The compiled explorer against SPIN (on our Promela export) and against the interpreter, in one run.

    python benchmarks/compiled_vs_spin.py [--quick] [--output benchmarks/compiled_vs_spin.txt]

Each measurement is its own process, started cold: ours with an empty build cache (a fresh
XDG_CACHE_HOME), so its wall time is end to end: Python start-up and imports, lowering the spec to terms
and C, the C compile, the search, reading the result back; each part is also reported apart. SPIN runs
as benchmarks/spin_vs_explorer.py runs it (``spin -o2 -a`` on ``python -m checker export``, gcc -O2,
``pan -c0``), in all four configurations (partial-order reduction on or off, COLLAPSE on or off); its
wall time includes spin -a and gcc. The interpreter runs with a timeout (it needs minutes where C needs
seconds). Memory: peak resident set of the process that searched (for ours, the C search process's
VmHWM), and for ours bytes per stored state = (peak RSS - RSS before the search) / states, parent
index and label included. The machine's load (uptime) is recorded beside the figures.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

TIMEOUT = 900.0  # seconds per measured process
INTERPRETER_TIMEOUT = 60.0
MEMLIM_MB = 16000

RS = {"readers": 1, "summers": 1}
POINTS = [
    ("percpu_eager", {"ncpus": 3, "ops": 3, "batch": 2, **RS}),
    ("percpu_eager", {"ncpus": 4, "ops": 2, "batch": 3, **RS}),
    ("percpu_eager", {"ncpus": 4, "ops": 3, "batch": 3, **RS}),
    ("percpu_eager", {"ncpus": 5, "ops": 3, "batch": 3}),
    ("percpu_eager", {"ncpus": 6, "ops": 2, "batch": 2}),
] + [("vma_unlink_batch", {"layout": layout, "size": 8, "walkers": 2}) for layout in range(4)]
#: The reach target: compiled, symmetry on, exhaustively (no SPIN or interpreter run: far too large for both).
REACH = ("percpu_eager", {"ncpus": 6, "ops": 3, "batch": 3, "variant": 1, **RS})


def child(kind: str, spec: str, point: dict, symmetry: bool, t_start: float) -> None:
    """In the measured process: one exploration; its statistics as JSON on stdout."""
    t_imp = time.time()
    from checker.compiled import engine as ce
    from checker.explore import explore
    from checker.loader import builtin_specs
    from checker.language.compile import Model
    from checker.language.model import resolve_params

    cls = builtin_specs()[spec]
    model = Model(cls, resolve_params(cls, point))
    t_model = time.time()
    if kind == "interpreted":
        r = explore(model, symmetry=symmetry, timeout=INTERPRETER_TIMEOUT, engine="interpreted")
        print(json.dumps({"states": r.states, "search": r.seconds, "complete": r.complete, "stopped": r.stopped_because,
                          "startup": t_model - t_start}))
        return
    timings = ce.Timings()
    st = ce.compiled_search(model, symmetry=symmetry, timings=timings)
    t_end = time.time()
    print(json.dumps({
        "states": st.states, "transitions": st.transitions, "depth": st.depth, "complete": st.stopped is None,
        "stopped": st.stopped, "startup": t_imp - t_start, "imports": t_model - t_imp, "lower": timings.lower,
        "generate": timings.generate, "compile": timings.compile, "search": timings.search, "search_cpu": timings.search_cpu,
        "readback": (t_end - t_model) - timings.lower - timings.generate - timings.compile - timings.search,
        "stride": timings.stride, "rss_before": timings.rss_before, "rss_peak": timings.rss_peak,
        "found": sorted(st.found)}))


def measured(cmd: list[str], env: dict | None = None, timeout: float = TIMEOUT) -> tuple[dict, float, float]:
    t0 = time.perf_counter()
    with tempfile.TemporaryFile("w+") as out:
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, cwd=ROOT, env=env)
        try:
            _, status, usage = os.wait4(proc.pid, 0)
        except KeyboardInterrupt:
            proc.kill()
            raise
        wall = time.perf_counter() - t0
        out.seek(0)
        text = out.read()
    try:
        data = json.loads(text.strip().splitlines()[-1])
    except (ValueError, IndexError):
        data = {"error": (text.strip().splitlines() or ["no output"])[-1]}
    return data, wall, usage.ru_maxrss / 1024


def ours(kind: str, spec: str, point: dict, symmetry: bool) -> dict:
    env = dict(os.environ)
    cache = tempfile.mkdtemp(prefix="cc-cold-")
    env["XDG_CACHE_HOME"] = cache  # a cold build cache: the compile is part of the wall time
    cmd = [sys.executable, __file__, "--child", kind, spec, json.dumps(point), str(time.time())]
    if not symmetry:
        cmd.append("--no-symmetry")
    data, wall, rss = measured(cmd, env)
    data.update(wall=wall, python_rss=rss)
    subprocess.run(["rm", "-rf", cache])
    return data


def spin_run(spec: str, point: dict, *, reduce: bool, collapse: bool, expected: int) -> dict:
    from checker.export import export_promela, spin
    from checker.loader import builtin_specs
    from checker.language.compile import Model
    from checker.language.model import resolve_params

    cls = builtin_specs()[spec]
    t0 = time.perf_counter()
    model = export_promela(Model(cls, resolve_params(cls, point)), sometimes=True)
    export = time.perf_counter() - t0
    flags = spin.cflags(reduce=reduce, collapse=collapse, optimize="-O2", memlim_mb=MEMLIM_MB)
    with tempfile.TemporaryDirectory() as d:
        t0 = time.perf_counter()
        try:
            r = spin.run(model, Path(d), flags=flags, expected_states=expected, timeout=TIMEOUT)
        except Exception as e:  # a limit or a failure is reported in the table, not raised
            return {"error": str(e).splitlines()[0], "wall": time.perf_counter() - t0}
    return {"states": r.stored, "wall": r.compile_seconds + r.run_seconds, "compile": r.compile_seconds,
            "rss": r.peak_rss_mb, "export": export}


def fmt_ours(tool: str, r: dict) -> str:
    if "error" in r:
        return f"  {tool:<26} {'-':>10} {r['wall']:>8.1f} {'-':>8}   {r['error']}"
    peak = r["rss_peak"] / 2 ** 20
    per = (r["rss_peak"] - r["rss_before"]) / max(1, r["states"])
    stop = "" if r["complete"] else f"  STOPPED: {r['stopped']} (inconclusive)"
    return (f"  {tool:<26} {r['states']:>10,} {r['wall']:>8.2f} {peak:>8.0f}   "
            f"[start-up+imports {r['startup'] + r['imports']:.2f}, terms {r['lower']:.2f}, C {r['generate']:.2f}, "
            f"compile {r['compile']:.2f}, search {r['search']:.2f} = {r['states'] / max(r['search'], 1e-9) / 1e6:.2f} "
            f"M states/s ({r.get('search_cpu', 0):.2f} CPU s = "
            f"{r['states'] / max(r.get('search_cpu', 0), 1e-9) / 1e6:.2f} M states/CPU s), read-back {r['readback']:.2f}; {r['stride']} B packed, {per:.1f} B/state]{stop}")


def fmt_interp(tool: str, r: dict) -> str:
    if "error" in r:
        return f"  {tool:<26} {'-':>10} {r['wall']:>8.1f} {'-':>8}   {r['error']}"
    rate = r["states"] / max(r["search"], 1e-9)
    what = "complete" if r["complete"] else f"stopped by its {INTERPRETER_TIMEOUT:.0f} s timeout"
    return (f"  {tool:<26} {r['states']:>10,} {r['wall']:>8.2f} {r['python_rss']:>8.0f}   "
            f"[{what}; {rate / 1e3:.1f} K states/s]")


def fmt_spin(tool: str, r: dict) -> str:
    if "error" in r:
        return f"  {tool:<26} {'-':>10} {r['wall']:>8.1f} {'-':>8}   {r['error']}"
    return (f"  {tool:<26} {r['states']:>10,} {r['wall']:>8.2f} {r['rss']:>8.0f}   "
            f"[spin -a + gcc {r['compile']:.2f}; our export {r['export']:.2f} not included]")


def header() -> list[str]:
    spin_v = subprocess.run(["spin", "-V"], capture_output=True, text=True).stdout.strip()
    gcc_v = subprocess.run(["gcc", "--version"], capture_output=True, text=True).stdout.splitlines()[0]
    load = subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    return [
        f"# compiled explorer vs SPIN vs the interpreter; {platform.machine()}, {os.cpu_count()} cores, "
        f"{os.sysconf('SC_PAGE_SIZE') * os.sysconf('SC_PHYS_PAGES') / 2 ** 30:.0f} GiB, python "
        f"{platform.python_version()}, {spin_v}, {gcc_v}",
        f"# load at start: {load}",
        "# ours: cold build cache, own process; wall = end to end (start-up, terms, C, compile, search, read-back)",
        "# SPIN: spin -o2 -a; gcc -O2 -DSAFETY [-DCOLLAPSE] [-DNOREDUCE] -DMEMLIM; pan -c0 -m1000000 -w<bits>;"
        " stores our no-symmetry states + 1",
        f"# interpreter: explore(engine='interpreted', timeout={INTERPRETER_TIMEOUT:.0f}) in its own process",
        f"  {'tool':<26} {'states':>10} {'wall s':>8} {'peak MB':>8}",
    ]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--output", default=str(ROOT / "benchmarks" / "compiled_vs_spin.txt"))
    ap.add_argument("--quick", action="store_true", help="the smallest point only (a smoke run)")
    ap.add_argument("--child", nargs=4, metavar=("KIND", "SPEC", "POINT", "T0"), help=argparse.SUPPRESS)
    ap.add_argument("--no-symmetry", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        kind, spec, point, t0 = args.child
        child(kind, spec, json.loads(point), not args.no_symmetry, float(t0))
        return 0
    from checker.export import spin

    if not spin.available():
        print("error: SPIN and gcc are needed (apt-get install spin)", file=sys.stderr)
        return 2
    lines = header()
    print("\n".join(lines), flush=True)
    t_all = time.perf_counter()
    points = POINTS[:1] if args.quick else POINTS
    for spec, point in points:
        block = [f"{spec} " + " ".join(f"{k}={v}" for k, v in point.items())]
        sym = ours("compiled", spec, point, True)
        full = ours("compiled", spec, point, False)
        block += [fmt_ours("compiled, symmetry", sym), fmt_ours("compiled, no symmetry", full)]
        print("\n".join(block), flush=True)
        expected = full["states"] + 1 if full.get("complete") else sym.get("states", 1 << 20) * math.factorial(
            point.get("ncpus", 1))
        spins = {}
        for reduce in (True, False):
            for collapse in (True, False):
                name = f"SPIN, {'POR' if reduce else 'no POR'}, {'COLLAPSE' if collapse else 'no COLLAPSE'}"
                spins[name] = spin_run(spec, point, reduce=reduce, collapse=collapse, expected=expected)
                block.append(fmt_spin(name, spins[name]))
                print(block[-1], flush=True)
        interp = ours("interpreted", spec, point, True)
        block.append(fmt_interp("interpreter, symmetry", interp))
        print(block[-1], flush=True)
        ok = [r for r in spins.values() if "error" not in r]
        if ok and "error" not in sym:
            best = min(ok, key=lambda r: r["wall"])
            block.append(f"  => compiled with symmetry: {sym['wall'] / best['wall']:.3f} of SPIN's fastest wall "
                         f"({best['wall']:.2f} s); no symmetry: {full['wall'] / best['wall']:.3f}")
            print(block[-1], flush=True)
        lines += block
    if not args.quick:
        spec, point = REACH
        r = ours("compiled", spec, point, True)
        lines += [f"reach: {spec} " + " ".join(f"{k}={v}" for k, v in point.items()) + " (variant B)",
                  fmt_ours("compiled, symmetry", r)]
        print("\n".join(lines[-2:]), flush=True)
    load = subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    lines.append(f"# load at end: {load}; total {time.perf_counter() - t_all:.0f} s")
    print(lines[-1])
    Path(args.output).write_text("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
