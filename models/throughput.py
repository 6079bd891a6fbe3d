"""From cost records to ops/s on P cores, calibrated on a fixed set of seed figures.

price() turns one iteration's Costs into a think time (everything outside
the global locks, at uncontended prices) and a demand per global lock;
queueing.mva() turns those into throughput. The free parameters (a think
time per workload, and the hold times of the per-cpu allocator,
i_mmap_rwsem and vmap_area_lock) are solved exactly from the figures that
models/calibration.json lists under ``calibrate_on``; every other figure is
predicted and its error reported.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from .costs import (I_MMAP_RWSEM, LRUVEC_LOCK, PCPU_ALLOC_MUTEX, PCPU_LOCK, PERCPU_COUNTERS_LOCK,
                          VMAP_AREA_LOCK, Costs)
from .queueing import Solution, mva
from .workloads import WORKLOADS, iteration, ops_per_iteration

CALIBRATION = Path(__file__).with_name("calibration.json")
US = 1e-6


@lru_cache(maxsize=None)
def load(path: str = str(CALIBRATION)) -> dict:
    return json.loads(Path(path).read_text())


def price(c: Costs, params: dict, priors: dict) -> tuple[float, dict[str, float]]:
    """(think time outside global locks, demand per global lock), in microseconds per iteration."""
    h = params["h_pcpu"]
    share, free_share = priors["pcpu_lock_share"], priors["free_share"]
    demands = {
        PCPU_ALLOC_MUTEX: c.locks[PCPU_ALLOC_MUTEX] * h * (1 - share),
        PCPU_LOCK: (c.pcpu_allocs * share + c.pcpu_frees * free_share) * h,
        PERCPU_COUNTERS_LOCK: c.locks[PERCPU_COUNTERS_LOCK] * priors["t_lock"]
        + c.held[PERCPU_COUNTERS_LOCK] * priors["t_list_node"],
        I_MMAP_RWSEM: c.locks[I_MMAP_RWSEM] * params["h_immap"] + c.held[I_MMAP_RWSEM] * priors["t_list_node"],
        VMAP_AREA_LOCK: c.locks[VMAP_AREA_LOCK] * params["h_vmap"],
        LRUVEC_LOCK: c.locks[LRUVEC_LOCK] * priors["t_lock"] + c.held[LRUVEC_LOCK] * priors["t_lru_page"],
    }
    demands = {k: v for k, v in demands.items() if v > 0}
    other_locks = sum(n for k, n in c.locks.items() if k not in demands)
    think = (other_locks * priors["t_lock"] + c.shared_rmw * priors["t_rmw"] + c.local_ops * priors["t_local"]
             + c.cpu_work * priors["t_cpu_line"])
    return think, demands


def _ncpus(workload: str, cores: int, priors: dict) -> int:
    # lmbench runs one process, but the kernel still has all of seed 001's machine's possible CPUs
    return priors["possible_cpus_seed001"] if WORKLOADS[workload].single_process else cores


@dataclass(frozen=True)
class Point:
    workload: str
    variant: str
    cores: int
    ops_per_s: float
    latency_us: float      # per operation, uncontended part included
    bottleneck: str | None
    utilisation: float     # of the bottleneck lock


@lru_cache(maxsize=4096)
def _iteration(workload: str, variant: str, ncpus: int, priors_json: str) -> Costs:
    # The models are deterministic: one run per (workload, variant, CPUs) is enough.
    return iteration(workload, variant, ncpus, json.loads(priors_json))


def solve(workload: str, variant: str, cores: int, params: dict, priors: dict) -> Point:
    c = _iteration(workload, variant, _ncpus(workload, cores, priors), json.dumps(priors, sort_keys=True))
    think, demands = price(c, params, priors)
    z = params["Z"][workload] + think
    workers = 1 if WORKLOADS[workload].single_process else cores * priors.get("workers_per_core", 1)
    sol: Solution = mva(workers, z, demands)
    per_op = ops_per_iteration(workload, priors)
    b = sol.bottleneck
    return Point(workload, variant, cores, sol.throughput / US * per_op, (z + sum(sol.residence.values())) / per_op,
                 b, sol.utilisation.get(b, 0.0) if b else 0.0)


def _measure(p: Point, unit: str) -> float:
    return p.latency_us if unit == "us" else p.ops_per_s


def _root(f, lo: float, hi: float, iters: int = 80) -> float:
    """The smallest root of ``f`` on [lo, hi]: the first sign change on a log grid, then bisection.

    A hold time's gap is not monotone (past some hold time the base figure cannot be reached at any
    think time), so the first crossing is the meaningful one. No crossing: ValueError."""
    grid = [lo] + [lo + (hi - lo) * 10 ** (k / 8 - 12) for k in range(0, 8 * 12 + 1)]
    prev_x, prev_f = grid[0], f(grid[0])
    if prev_f == 0:
        return prev_x
    for x in grid[1:]:
        fx = f(x)
        if (fx > 0) != (prev_f > 0) or fx == 0:
            a, b, fa = prev_x, x, prev_f
            for _ in range(iters):
                m = (a + b) / 2
                fm = f(m)
                if (fm > 0) == (fa > 0):
                    a, fa = m, fm
                else:
                    b = m
            return (a + b) / 2
        prev_x, prev_f = x, fx
    raise ValueError("no parameter value reproduces the calibration figure")


# The calibration: which free parameter each calibrated figure fixes. A think time Z is solved from a
# workload's base figure; a hold time from the figure of the variant that changes that lock's use.
_HOLDS = {"h_pcpu": "s000-after", "h_immap": "s004-after", "h_vmap": "s003-after"}
_BASES = {"doexec-static": "s000-before", "doexec-shared": "s004-before", "clone": "s003-before",
          "lmbench-fork": "s001-fork-base", "lmbench-exec": "s001-exec-base", "lmbench-shell": "s001-shell-base"}
_HOLD_WORKLOAD = {"h_pcpu": "doexec-static", "h_immap": "doexec-shared", "h_vmap": "clone"}


@lru_cache(maxsize=4)
def calibrate(path: str = str(CALIBRATION)) -> dict:
    """Solve every free parameter from the figures under ``calibrate_on``; refuse any other figure."""
    cal = load(path)
    priors, figs = cal["priors"], {f["id"]: f for f in cal["figures"]}
    allowed = set(cal["calibrate_on"])
    for fid in list(_HOLDS.values()) + list(_BASES.values()):
        if fid not in allowed:
            raise ValueError(f"{fid} fixes a free parameter but is not in calibrate_on of {path}")
    params: dict = {"h_pcpu": 0.0, "h_immap": 0.0, "h_vmap": 0.0, "Z": {w: 0.0 for w in WORKLOADS}}

    def fit_z(workload: str) -> None:
        f = figs[_BASES[workload]]

        def err(z: float) -> float:
            params["Z"][workload] = z
            got = _measure(solve(workload, f["variant"], f["cores"], params, priors), f["unit"])
            return got - f["value"] if f["unit"] == "us" else f["value"] - got
        params["Z"][workload] = _root(err, 0.0, 1e7)

    # The hold times first (each with its workload's Z solved inside), then the Z of the rest.
    for hold, fid in _HOLDS.items():
        f, w = figs[fid], _HOLD_WORKLOAD[hold]

        def gap(h: float) -> float:
            params[hold] = h
            try:
                fit_z(w)
            except ValueError:
                # The base figure is out of reach even with no think time: h is past the point where
                # the base variant saturates, where the changed variant's gain is largest. Continuing
                # the gap's sign from there keeps the first crossing (below that point) findable.
                return f["value"]
            return _measure(solve(w, f["variant"], f["cores"], params, priors), f["unit"]) - f["value"]
        params[hold] = _root(gap, 0.0, 1e4)
        fit_z(w)
    for w in _BASES:
        if w not in _HOLD_WORKLOAD.values():
            fit_z(w)
    return params


def free_parameters(params: dict) -> dict[str, float]:
    out = {k: params[k] for k in _HOLDS}
    out.update({f"Z[{w}]": z for w, z in params["Z"].items()})
    return out


@dataclass(frozen=True)
class Row:
    id: str
    measured: float
    predicted: float
    calibrated: bool
    extrapolated: bool = False

    @property
    def error(self) -> float:
        return (self.predicted - self.measured) / self.measured


def validation(path: str = str(CALIBRATION)) -> tuple[list[Row], list[Row]]:
    """Every seed figure and every within-seed ratio: measured, predicted, relative error, calibrated."""
    cal, params = load(path), calibrate(path)
    priors, cal_set = cal["priors"], set(cal["calibrate_on"])
    figs, pred = {}, {}
    rows = []
    for f in cal["figures"]:
        p = _measure(solve(f["workload"], f["variant"], f["cores"], params, priors), f["unit"])
        figs[f["id"]], pred[f["id"]] = f["value"], p
        rows.append(Row(f["id"], f["value"], p, f["id"] in cal_set))
    ratios = [Row(r["id"], figs[r["num"]] / figs[r["den"]], pred[r["num"]] / pred[r["den"]],
                  r["num"] in cal_set and r["den"] in cal_set) for r in cal["ratios"]]
    return rows, ratios


def measured_points(workload: str, path: str = str(CALIBRATION)) -> list[dict]:
    return [f for f in load(path)["figures"] if f["workload"] == workload]


def largest_measured_cores(workload: str, path: str = str(CALIBRATION)) -> int:
    return max((f["cores"] for f in measured_points(workload, path)), default=0)
