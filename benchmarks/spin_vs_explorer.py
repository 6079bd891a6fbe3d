# SPDX-License-Identifier: GPL-2.0-only
"""SPIN on our Promela export against our explorer, in one run on one machine.

    python benchmarks/spin_vs_explorer.py [--quick] [--output benchmarks/spin_vs_explorer.txt]

For each point: our explorer with CPU-symmetry reduction and without (each in its own process, with a
timeout and a 16 GB address-space cap, so a point too large for it is reported, not skipped), then
SPIN on ``python -m checker export`` of the same point, with its partial-order reduction on and off.
SPIN's flags are fixed and printed: ``spin -o2 -a``; ``gcc -O2 -DSAFETY -DCOLLAPSE -DMEMLIM=16000``
(plus ``-DNOREDUCE`` for reduction off); ``pan -c0 -m1000000 -w<bits>`` with the hash table sized from
the state count. Wall time includes SPIN's compile (spin -a and gcc) and our process start-up; peak
memory is each process's maximum resident set (``os.wait4``), and for SPIN also pan's own figure.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import platform
import resource
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

OURS_TIMEOUT = 900.0  # seconds per exploration (15 min)
MEMORY_CAP = 16 << 30  # bytes of address space for our explorer: fail cleanly, not by the OOM killer
MEMLIM_MB = 16000  # pan's -DMEMLIM (the machine has 24 GiB)

EAGER = [("percpu_eager", {"ncpus": n, "ops": k, "batch": b, "readers": 1, "summers": 1})
         for n, k, b in ((3, 3, 2), (4, 2, 3), (4, 3, 3))]
VMA = [("vma_unlink_batch", {"layout": layout, "size": 8, "walkers": 2}) for layout in range(4)]


def child(spec: str, point: dict, symmetry: bool) -> None:
    """In the measured process: one exploration, its statistics as JSON on stdout."""
    from checker.explore import explore
    from checker.loader import builtin_specs
    from checker.language.compile import Model
    from checker.language.model import resolve_params

    cls = builtin_specs()[spec]
    try:
        r = explore(Model(cls, resolve_params(cls, point)), symmetry=symmetry, timeout=OURS_TIMEOUT)
    except MemoryError:
        print(json.dumps({"error": f"out of memory (address space capped at {MEMORY_CAP >> 30} GB)"}))
        return
    print(json.dumps({"states": r.states, "seconds": r.seconds, "complete": r.complete,
                      "stopped": r.stopped_because}))


def measured(cmd: list[str], *, cap: int | None = None, timeout: float | None = None) -> tuple[str, float, float]:
    """Run ``cmd``; its stdout, wall seconds and peak resident set in MB (this process only)."""
    def limit() -> None:
        if cap:
            resource.setrlimit(resource.RLIMIT_AS, (cap, cap))

    t0 = time.perf_counter()
    with tempfile.TemporaryFile("w+") as out:
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, preexec_fn=limit, cwd=ROOT)
        timer = threading.Timer(timeout, proc.kill) if timeout else None
        if timer:
            timer.start()
        _, status, usage = os.wait4(proc.pid, 0)
        if timer:
            timer.cancel()
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        text = out.read()
    if os.WIFSIGNALED(status):
        text += f"\nkilled by signal {signal.Signals(os.WTERMSIG(status)).name}"
    return text, time.perf_counter() - t0, usage.ru_maxrss / 1024


def ours(spec: str, point: dict, symmetry: bool) -> dict:
    cmd = [sys.executable, __file__, "--child", spec, json.dumps(point)] + ([] if symmetry else ["--no-symmetry"])
    text, wall, rss = measured(cmd, cap=MEMORY_CAP, timeout=OURS_TIMEOUT + 120)
    try:
        data = json.loads(text.strip().splitlines()[-1])
    except (ValueError, IndexError):
        data = {"error": text.strip().splitlines()[-1] if text.strip() else "no output"}
    data.update(wall=wall, rss=rss)
    return data


def spin_run(spec: str, point: dict, *, reduce: bool, expected: int) -> dict:
    from checker.export import export_promela, spin
    from checker.loader import builtin_specs
    from checker.language.compile import Model
    from checker.language.model import resolve_params

    cls = builtin_specs()[spec]
    model = export_promela(Model(cls, resolve_params(cls, point)), sometimes=True)
    flags = spin.cflags(reduce=reduce, collapse=True, optimize="-O2", memlim_mb=MEMLIM_MB)
    with tempfile.TemporaryDirectory() as d:
        t0 = time.perf_counter()
        try:
            r = spin.run(model, Path(d), flags=flags, expected_states=expected, timeout=OURS_TIMEOUT)
        except Exception as e:  # a limit or a failure is reported in the table, not raised
            return {"error": str(e).splitlines()[0], "wall": time.perf_counter() - t0, "flags": flags}
    return {"states": r.stored, "wall": r.compile_seconds + r.run_seconds, "compile": r.compile_seconds,
            "rss": r.peak_rss_mb, "pan_mb": r.memory_mb, "vector": r.vector_bytes, "flags": flags,
            "w": spin.hash_bits(expected)}


def point_text(point: dict) -> str:
    return " ".join(f"{k}={v}" for k, v in point.items())


def fmt_row(tool: str, r: dict, bases: dict[str, dict]) -> str:
    """One tool's line, with its time and peak memory as multiples of each complete run in ``bases``."""
    if "error" in r:
        return f"  {tool:<22} {'-':>10} {r['wall']:>9.1f} {'-':>9}   {r['error']}"
    if r.get("complete") is False:
        return (f"  {tool:<22} {r['states']:>10,} {r['wall']:>9.1f} {r['rss']:>9.0f}   stopped: {r['stopped']} "
                f"(inconclusive)")
    ratios = [f"x{r['wall'] / b['wall']:.2f} time, x{r['rss'] / b['rss']:.2f} memory of {name}"
              for name, b in bases.items() if "error" not in b and b.get("complete", True)]
    extra = ""
    if "pan_mb" in r:
        extra = f"   [pan {r['pan_mb']:.0f} MB, vector {r['vector']} B, -w{r['w']}, compile {r['compile']:.1f} s]"
    return f"  {tool:<22} {r['states']:>10,} {r['wall']:>9.1f} {r['rss']:>9.0f}   " + "; ".join(ratios) + extra


def header() -> list[str]:
    spin_v = subprocess.run(["spin", "-V"], capture_output=True, text=True).stdout.strip()
    gcc_v = subprocess.run(["gcc", "--version"], capture_output=True, text=True).stdout.splitlines()[0]
    from checker.export import spin

    flags = spin.cflags(reduce=True, collapse=True, optimize="-O2", memlim_mb=MEMLIM_MB)
    return [
        f"# SPIN vs countercheck's explorer; {platform.machine()}, {os.cpu_count()} cores, "
        f"{os.sysconf('SC_PAGE_SIZE') * os.sysconf('SC_PHYS_PAGES') / 2 ** 30:.0f} GiB, python "
        f"{platform.python_version()}, {spin_v}, {gcc_v}",
        f"# SPIN: spin {' '.join(spin.SPIN_ARGS)} model.pml; gcc {' '.join(flags)} [-DNOREDUCE for 'no POR'] "
        f"-o pan pan.c; ./pan -c0 -m1000000 -w<bits>",
        "# the model is `python -m checker export SPEC --set ... --sometimes` (one process of d_steps, all state "
        "global): SPIN stores our no-symmetry states + 1",
        f"# ours: explore() in its own process, timeout {OURS_TIMEOUT:.0f} s, address space capped at "
        f"{MEMORY_CAP >> 30} GB; wall includes start-up; peak RSS from wait4",
        "# ratios: wall time and peak memory as multiples of ours without symmetry (no-sym) and with it (sym)",
        f"  {'tool':<22} {'states':>10} {'wall s':>9} {'peak MB':>9}",
    ]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--output", default=str(ROOT / "benchmarks" / "spin_vs_explorer.txt"))
    ap.add_argument("--quick", action="store_true", help="only the smallest points (a smoke run)")
    ap.add_argument("--child", nargs=2, metavar=("SPEC", "POINT"), help=argparse.SUPPRESS)
    ap.add_argument("--no-symmetry", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        child(args.child[0], json.loads(args.child[1]), not args.no_symmetry)
        return 0
    from checker.export import spin

    if not spin.available():
        print("error: SPIN and gcc are needed (apt-get install spin)", file=sys.stderr)
        return 2
    points = (EAGER[:1] + VMA[:1]) if args.quick else (EAGER + VMA)
    lines = header()
    print("\n".join(lines), flush=True)
    t0 = time.perf_counter()
    for spec, point in points:
        block = [f"{spec} {point_text(point)}"]
        sym = ours(spec, point, True)
        full = ours(spec, point, False)
        if "states" in full and full.get("complete"):
            expected = full["states"] + 1
        else:  # symmetry merges at most n! states into one: a bound for the hash table
            expected = sym.get("states", 1 << 20) * math.factorial(point.get("ncpus", 1))
        por = spin_run(spec, point, reduce=True, expected=expected)
        nopor = spin_run(spec, point, reduce=False, expected=expected)
        bases = {"no-sym": full, "sym": sym}
        block += [fmt_row("ours, symmetry", sym, {"no-sym": full}), fmt_row("ours, no symmetry", full, {}),
                  fmt_row("SPIN, POR", por, bases), fmt_row("SPIN, no POR", nopor, bases)]
        print("\n".join(block), flush=True)
        lines += block
    lines.append(f"# total {time.perf_counter() - t0:.0f} s")
    print(lines[-1])
    Path(args.output).write_text("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
