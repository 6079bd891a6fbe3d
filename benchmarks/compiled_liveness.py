# SPDX-License-Identifier: GPL-2.0-only
"""Liveness on the compiled engine against the interpreter's state graph, on the biggest liveness points.

    python benchmarks/compiled_liveness.py [--quick] [--output benchmarks/compiled_liveness.txt]

Each measurement is its own process (so its peak memory is its own): the interpreter builds the
unreduced graph (checker.explore.graph, networkx) and runs every liveness property's fair-SCC search
(checker.explore.liveness); the compiled engine (checker.compiled.liveness) builds the same graph and
runs the same search in C, then replays each lasso on the interpreter. Reported per point: the graph's
states and edges (equal on both: checked), the verdicts (equal: checked), CPU seconds of the search
(the interpreter: its process's CPU for graph plus checks; compiled: the C process's CPU, plus the
Python replay), states per CPU second, and bytes per state (peak resident set minus the resident set
before the search, over the states; for compiled, the C process's VmHWM minus its start, edges and
the SCC search's arrays included). The compiled program is built before it is timed (the build cache
keeps it; compile time is reported apart). The interpreter may take INTERPRETER_CPU CPU seconds (a CPU limit:
wall time means little on shared cores); past it the row shows ">300". The machine's load (uptime) is recorded beside the figures: other jobs share the two cores.
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

#: CPU seconds the interpreter's process may take (a CPU limit, not a wall-clock one: the cores are shared)
INTERPRETER_CPU = 300

#: (spec, parameters, run the interpreter too): the liveness points, smallest first
POINTS = [
    ("percpu_lazy", {"forever": 1, "mod_bits": 0, "ncpus": 3, "readers": 0}, True),
    ("lazy_cmpxchg_stale_old", {"forever": 1, "mod_bits": 0, "ncpus": 3, "readers": 0}, True),
    ("vma_unlink_batch", {"forever": 1, "layout": 3, "size": 2, "walkers": 2}, True),
    ("percpu_eager", {"forever": 1, "ncpus": 5, "batch": 3}, True),
    ("percpu_eager", {"forever": 1, "ncpus": 6, "batch": 3}, False),
    ("percpu_eager", {"forever": 1, "ncpus": 7, "batch": 3}, False),
]
QUICK = POINTS[:2]


def _hwm() -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    return 0


def _rss() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGESIZE")


def one(engine: str, spec: str, params: dict) -> dict:
    """One measurement, in this process: the graph's counts, verdicts, CPU seconds and memory."""
    from checker.language.compile import Model
    from checker.language.model import resolve_params
    from checker.loader import builtin_specs

    cls = builtin_specs()[spec]
    model = Model(cls, resolve_params(cls, params))
    if engine == "interpreted":
        from checker.explore.graph import build_graph
        from checker.explore.liveness import check_liveness

        rss0 = _rss()
        c0 = time.process_time()
        sg = build_graph(model, None)
        verdicts = {p.name: check_liveness(sg, p).verdict for p in model.liveness}
        cpu = time.process_time() - c0
        return {"states": sg.graph.number_of_nodes(), "edges": sg.graph.number_of_edges(), "verdicts": verdicts,
                "cpu": cpu, "bytes": _hwm() - rss0}
    from checker.compiled import liveness as cl

    t0 = time.perf_counter()
    cl.prepare(model)  # built (or read from the build cache) before the search is timed
    build = time.perf_counter() - t0
    c0 = time.process_time()
    g = cl.compiled_liveness(model)
    replay = time.process_time() - c0  # Python: reading back and replaying the lassos
    st = g.stats
    return {"states": g.nodes, "edges": g.edges, "verdicts": {n: o.verdict for n, o in g.outcomes.items()},
            "cpu": float(st["cpu"]) + replay, "c_cpu": float(st["cpu"]), "graph_seconds": float(st["graph_seconds"]),
            "seconds": float(st["seconds"]), "bytes": int(st["rss_peak"]) - int(st["rss_before"]), "build": build}


def measure(engine: str, spec: str, params: dict, cpu_limit: int | None) -> dict | None:
    """One measurement in its own process; None when it went past ``cpu_limit`` CPU seconds."""
    cmd = [sys.executable, __file__, "--one", engine, spec, json.dumps(params)]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}

    def limit() -> None:
        if cpu_limit:
            resource.setrlimit(resource.RLIMIT_CPU, (cpu_limit, cpu_limit + 5))

    r = subprocess.run(cmd, capture_output=True, text=True, env=env, preexec_fn=limit)
    if r.returncode != 0:
        if cpu_limit and r.returncode < 0:
            return None
        raise SystemExit(f"{' '.join(cmd)} failed: {r.stderr[-2000:]}")
    return json.loads(r.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--output")
    ap.add_argument("--one", nargs=3)
    ap.add_argument("--points", help="which rows of POINTS, as a slice START:STOP (default: all)")
    ap.add_argument("--compiled-only", action="store_true", help="leave the interpreter out of every row")
    a = ap.parse_args()
    if a.one:
        print(json.dumps(one(a.one[0], a.one[1], json.loads(a.one[2]))))
        return
    lines = [f"# benchmarks/compiled_liveness.py{' --quick' if a.quick else ''}",
             f"# load before: {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} {os.getloadavg()[2]:.2f} "
             f"(2 cores, shared with other jobs)", ""]
    head = (f"{'point':<62} {'states':>10} {'edges':>11}  {'interp s':>8} {'st/s':>8} {'B/st':>6}  "
            f"{'C s':>7} {'st/s':>10} {'B/st':>5}  {'speedup':>7}")
    lines.append(head)
    print(head, flush=True)
    rows = QUICK if a.quick else POINTS
    if a.points:
        lo, _, hi = a.points.partition(":")
        rows = rows[int(lo or 0):int(hi) if hi else None]
    for spec, params, interp in rows:
        interp = interp and not a.compiled_only
        point = spec + " " + " ".join(f"{k}={v}" for k, v in params.items())
        c = measure("compiled", spec, params, None)
        i = measure("interpreted", spec, params, INTERPRETER_CPU) if interp else None
        if i is not None:
            assert (i["states"], i["edges"], i["verdicts"]) == (c["states"], c["edges"], c["verdicts"]), (i, c)
            istats = f"{i['cpu']:8.2f} {i['states'] / i['cpu']:8.0f} {i['bytes'] / i['states']:6.0f}"
            speed = f"{i['cpu'] / c['cpu']:6.0f}x"
        else:
            istats = f"{'-' if not interp else f'>{INTERPRETER_CPU}':>8} {'':>8} {'':>6}"
            speed = f"{'-':>7}"
        row = (f"{point:<62} {c['states']:>10,} {c['edges']:>11,}  {istats}  {c['cpu']:7.2f} "
               f"{c['states'] / max(c['cpu'], 1e-6):10.0f} {c['bytes'] / c['states']:5.0f}  {speed}")
        verdicts = ", ".join(f"{n} {v}" for n, v in c["verdicts"].items())
        lines += [row, f"{'':<4}{verdicts}; C graph {c['graph_seconds']:.2f} s of {c['seconds']:.2f} s wall, "
                       f"C CPU {c['c_cpu']:.2f} s; build {c['build']:.2f} s (cache)"]
        print(lines[-2], "\n" + lines[-1], flush=True)
    lines += ["", f"# load after: {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} {os.getloadavg()[2]:.2f}",
              f"# peak RSS of this driver's children: {resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss // 1024} MiB"]
    if a.output:
        Path(a.output).write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
