# SPDX-License-Identifier: GPL-2.0-only
"""From cost records to ops/s on a machine, calibrated on named figures, with every fit's source shown.

price() turns one iteration's Costs into a think time (everything outside
the global locks, at uncontended prices) and a demand per global lock;
queueing.mva() turns those into throughput. A ``Machine`` says how many
cores, hardware threads per core, possible CPUs (what per-CPU work scales
with) and workers (what throughput scales with). The free parameters (a
think time Z per workload, and hold times) are solved exactly from the
figures a calibration file's ``fits`` names: the seeds' (models/calibration.json),
a user's own file, or a user's one ``--base`` figure. Every fitted value
carries the figure and the file it came from; every other figure is
predicted and its error reported.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from .costs import (I_MMAP_RWSEM, LRUVEC_LOCK, PCPU_ALLOC_MUTEX, PCPU_LOCK, PERCPU_COUNTERS_LOCK,
                    VMAP_AREA_LOCK, Costs)
from .queueing import Solution, launch_throughput, mva
from .workloads import NR_FILES_LOCK, WORKLOADS, iteration, launch_parts, ops_per_iteration

CALIBRATION = Path(__file__).with_name("calibration.json")
SERIAL_PARENT = "the serial parent"  # launch's bottleneck when its children keep up
CHILD_SLOTS = "the children (--workers)"  # ... and when the parent waits for a slot
US = 1e-6
#: The hold times a calibration can fit, and what each prices.
HOLDS = {"h_pcpu": "serialised time of one per-cpu allocation's area search or free under pcpu_lock",
         "h_immap": "i_mmap_rwsem write hold per vma linked or unlinked",
         "h_vmap": "vmap_area_lock hold per acquisition"}


class CalibrationError(ValueError):
    """A calibration that cannot be done as asked: the message says which figure and why."""


@lru_cache(maxsize=None)
def load(path: str = str(CALIBRATION)) -> dict:
    return json.loads(Path(path).read_text())


@dataclass(frozen=True)
class Machine:
    """Where a figure was measured or a prediction is made.

    ``possible_cpus`` (default cores x smt) sizes every per-CPU walk (memset, sums); ``workers`` (default
    one per core; 1 for a single-process benchmark) is the closed network's population."""

    cores: int
    smt: int = 1
    possible_cpus: int | str | None = None   # a string names a prior (a seed machine's, varied in a band)
    workers: int | None = None

    def cpus(self, priors: dict | None = None) -> int:
        if isinstance(self.possible_cpus, str):
            return int((priors or load()["priors"])[self.possible_cpus])
        return self.possible_cpus if self.possible_cpus is not None else self.cores * self.smt

    def population(self, single_process: bool) -> int:
        if self.workers is not None:
            return self.workers
        return 1 if single_process else self.cores

    def slowdowns(self, single_process: bool, priors: dict) -> tuple[float, float]:
        """(per-thread slowdown of all work, extra slowdown of the work outside the locks).

        Workers are spread one per core first, then onto SMT siblings: a core running j of its K threads
        delivers 1 + (smt_yield - 1)(j - 1)/(K - 1) single-thread speeds (smt_yield, a named prior, for
        all K busy), shared by its j threads. Past K threads per core the scheduler time-shares: the work
        outside the locks stretches by workers / threads. A spinlock holder is not preempted, so lock holds
        stretch by the SMT share only."""
        w, threads = self.population(single_process), self.cores * self.smt
        busy = min(w, threads)
        per_core = busy / self.cores
        if per_core <= 1 or self.smt == 1:
            smt = 1.0
        else:
            smt = per_core / (1 + (priors["smt_yield"] - 1) * (per_core - 1) / (self.smt - 1))
        return smt, max(1.0, w / threads)

    def describe(self, single_process: bool = False, priors: dict | None = None) -> str:
        return (f"{self.cores} cores x {self.smt} threads, {self.cpus(priors)} possible CPUs, "
                f"{self.population(single_process)} workers")


def figure_machine(f: dict, priors: dict) -> Machine:
    """The machine of a calibration figure (a string possible_cpus names a prior)."""
    return Machine(f["cores"], f.get("smt", 1), f.get("possible_cpus"), f.get("workers"))


def price(c: Costs, params: dict, priors: dict) -> tuple[float, dict[str, float], dict]:
    """(think time outside global locks, own demand per global lock, nested sections), in microseconds per
    iteration. The per-cpu allocator's locks follow models/percpu_alloc.py (from mm/percpu.c): an area
    operation under pcpu_lock costs h_pcpu (a free, h_pcpu x free_area_ratio); a GFP_KERNEL allocation's
    area operation is nested in pcpu_alloc_mutex, whose own hold is the populated-bitmap walk."""
    h = params["h_pcpu"]
    nested_allocs = c.nested[(PCPU_ALLOC_MUTEX, PCPU_LOCK)]
    atomic_allocs = c.pcpu_allocs - nested_allocs
    demands = {
        PCPU_ALLOC_MUTEX: c.held[PCPU_ALLOC_MUTEX] * priors["t_populate_check"],
        PCPU_LOCK: atomic_allocs * h + c.pcpu_frees * h * priors["free_area_ratio"],
        I_MMAP_RWSEM: c.locks[I_MMAP_RWSEM] * params["h_immap"] + c.held[I_MMAP_RWSEM] * priors["t_list_node"],
        VMAP_AREA_LOCK: c.locks[VMAP_AREA_LOCK] * params["h_vmap"],
        LRUVEC_LOCK: c.locks[LRUVEC_LOCK] * priors["t_lock_global"] + c.held[LRUVEC_LOCK] * priors["t_lru_page"],
    }
    for k in (PERCPU_COUNTERS_LOCK, NR_FILES_LOCK):  # list and counter locks: a round trip and the items
        demands[k] = c.locks[k] * priors["t_lock_global"] + c.held[k] * priors["t_list_node"]
    for line, n in c.line_rmw.items():  # a shared variable's line: one transfer per RMW, serialised
        demands[f"line:{line}"] = n * priors["t_xfer"]
    demands = {k: v for k, v in demands.items() if v > 0}
    nested = {(PCPU_ALLOC_MUTEX, PCPU_LOCK): nested_allocs * h} if nested_allocs else {}
    if nested and PCPU_ALLOC_MUTEX not in demands:
        demands[PCPU_ALLOC_MUTEX] = 0.0
    other_locks = sum(n for k, n in c.locks.items() if k not in demands and k != PCPU_LOCK)
    think = (other_locks * priors["t_lock"] + c.shared_rmw * priors["t_rmw"] + c.local_ops * priors["t_local"]
             + c.cpu_work * priors["t_cpu_line"] + c.irq_saves * priors["t_irq_save"]
             + c.local_cmpxchg * priors["t_local_cmpxchg"])
    return think, demands, nested


@dataclass(frozen=True)
class Point:
    workload: str
    variant: str
    cores: int
    ops_per_s: float
    latency_us: float      # per operation, uncontended part included
    bottleneck: str | None
    utilisation: float     # of the bottleneck lock
    possible_cpus: int = 0
    workers: int = 0
    demands: dict = field(default_factory=dict, compare=False)  # per global lock, us per iteration


@lru_cache(maxsize=8192)
def _iteration(workload: str, variant: str, ncpus: int, priors_json: str) -> Costs:
    # The models are deterministic: one run per (workload, variant, CPUs) is enough.
    return iteration(workload, variant, ncpus, json.loads(priors_json))


@lru_cache(maxsize=4096)
def _launch_parts(variant: str, ncpus: int, priors_json: str) -> tuple[Costs, Costs]:
    return launch_parts(variant, ncpus, json.loads(priors_json))


class NoThinkTime(CalibrationError):
    """A workload with no figure of its own and nothing to borrow: the user must give one."""


def think_time(workload: str, params: dict) -> float:
    z = params["Z"].get(workload)
    if z is None:
        raise NoThinkTime(f"{workload} has no measured figure to solve its think time Z from: give your own "
                          f"--base VALUE (what you measured, in ops/s) or a --calibration file with a figure of it")
    return z


def solve(workload: str, variant: str, machine: Machine | int, params: dict, priors: dict) -> Point:
    """The predicted throughput of ``workload`` under ``variant`` on ``machine`` (an int: that many cores,
    one thread each, one worker per core)."""
    m = machine if isinstance(machine, Machine) else Machine(machine)
    wl = WORKLOADS[workload]
    single = wl.single_process
    ncpus, workers = m.cpus(priors), m.population(single)
    pj = json.dumps(priors, sort_keys=True)
    smt, share = m.slowdowns(single, priors)
    z0 = think_time(workload, params)
    if wl.two_class:
        parent, child = _launch_parts(variant, ncpus, pj)
        tp, dp, np_ = price(parent, params, priors)
        tc, dc, nc = price(child, params, priors)
        zc = z0 * params["Z_child_ratio"][workload]
        stretch = smt * max(1.0, (workers + 1) / (m.cores * m.smt))
        x, sol, alive = launch_throughput(
            workers, ((z0 + tp) * stretch, {k: d * smt for k, d in dp.items()},
                      {k: d * smt for k, d in np_.items()}),
            ((zc + tc) * stretch, {k: d * smt for k, d in dc.items()}, {k: d * smt for k, d in nc.items()}))
        demands = {k: dp.get(k, 0) + dc.get(k, 0) for k in set(dp) | set(dc)}
        if alive < workers:  # the children keep up: the one parent, never idle, is what limits
            return Point(workload, variant, m.cores, x / US, 1 / x, SERIAL_PARENT, 1.0, ncpus, workers, demands)
        b = sol.bottleneck
        if not b or sol.utilisation[b] < 0.5:  # the parent waits for a free slot: the children limit it
            return Point(workload, variant, m.cores, x / US, 1 / x, CHILD_SLOTS, 1.0, ncpus, workers, demands)
        return Point(workload, variant, m.cores, x / US, 1 / x, b, sol.utilisation.get(b, 0.0) if b else 0.0,
                     ncpus, workers, demands)
    c = _iteration(workload, variant, ncpus, pj)
    think, demands, nested = price(c, params, priors)
    z = (z0 + think) * smt * share
    demands = {k: d * smt for k, d in demands.items()}
    nested = {k: d * smt for k, d in nested.items()}
    sol: Solution = mva(workers, z, demands, nested)
    per_op = ops_per_iteration(workload, priors)
    b = sol.bottleneck
    return Point(workload, variant, m.cores, sol.throughput / US * per_op,
                 (z + sum(sol.residence.values())) / per_op, b, sol.utilisation.get(b, 0.0) if b else 0.0,
                 ncpus, workers, demands)


def _measure(p: Point, unit: str) -> float:
    return p.latency_us if unit == "us" else p.ops_per_s


def _bisect(f, a: float, b: float, fa: float, iters: int = 100, fb: float | None = None) -> float:
    """A root of ``f`` in [a, b] (f(a) = fa and f(b) differ in sign): the Illinois variant of false
    position, which keeps the bracket (so it cannot escape it as the secant method can) and converges
    superlinearly on the smooth gaps here; bisection steps when it stalls."""
    fb = f(b) if fb is None else fb
    if fb == 0:
        return b
    side = 0
    for k in range(iters):
        if b - a <= 1e-13 * max(abs(b), 1e-12):
            break
        m = (a * fb - b * fa) / (fb - fa) if fb != fa and k % 8 != 7 else (a + b) / 2
        if not a < m < b:
            m = (a + b) / 2
        fm = f(m)
        if fm == 0:
            return m
        if (fm > 0) == (fa > 0):
            a, fa = m, fm
            if side == -1:
                fb /= 2
            side = -1
        else:
            b, fb = m, fm
            if side == 1:
                fa /= 2
            side = 1
    return (a + b) / 2


def _root(f, lo: float, hi: float) -> float:
    """The smallest root of ``f`` on [lo, hi]: the first sign change on a log grid, then bisection.

    A hold time's gap is not monotone (past some hold time the base figure cannot be reached at any
    think time), so the first crossing is the meaningful one. No crossing: CalibrationError."""
    grid = [lo] + [lo + (hi - lo) * 10 ** (k / 8 - 12) for k in range(40, 8 * 12 + 1)]
    prev_x, prev_f = grid[0], f(grid[0])
    if prev_f == 0:
        return prev_x
    for x in grid[1:]:
        fx = f(x)
        if (fx > 0) != (prev_f > 0) or fx == 0:
            return _bisect(f, prev_x, x, prev_f, fb=fx)
        prev_x, prev_f = x, fx
    raise CalibrationError("no parameter value reproduces the calibration figure")


@dataclass(frozen=True)
class Fit:
    """Where one free parameter's value came from."""
    parameter: str
    value: float
    figure: str      # the figure's id
    source: str      # the calibration file, or "--base"


@dataclass
class Calibration:
    params: dict
    priors: dict
    fits: dict[str, Fit]
    figures: list[dict]           # every figure validated (the seeds' and the user's), each with "source"
    ratios: list[dict]
    calibrated: set[str]          # ids of the figures something was solved from
    by_source: dict = field(default_factory=dict)  # source -> the parameters its figures are predicted with
    priors_by_source: dict = field(default_factory=dict)  # source -> the priors its figures are predicted with

    def priors_for(self, source: str) -> dict:
        return self.priors_by_source.get(source, self.priors)

    def params_for(self, source: str) -> dict:
        """A figure is predicted with the parameters of its own machine: the seeds' Zs for a seed figure,
        the user file's for the user's figures, the --base Z for the base figure and every prediction."""
        return self.by_source.get(source, self.params)


def _fit_z(params: dict, workload: str, f: dict, priors: dict) -> None:
    m = figure_machine(f, priors)

    def err(z: float) -> float:
        params["Z"][workload] = z
        got = _measure(solve(workload, f["variant"], m, params, priors), f["unit"])
        return got - f["value"] if f["unit"] == "us" else f["value"] - got
    # Latency grows and throughput falls with Z: one sign change, so bisection on a bracket suffices.
    lo = 0.0
    e_lo = err(lo)
    if e_lo > 0:
        raise CalibrationError(f"figure {f['id']}: {f['value']:g} {f['unit']} is out of reach even with no "
                               f"unmodelled time (the modelled costs alone exceed it)")
    # X = n / (Z + ...) <= n / Z, so Z <= n / X bounds the root (a latency: Z <= the latency).
    n = m.population(WORKLOADS[workload].single_process) * ops_per_iteration(workload, priors)
    hi = f["value"] if f["unit"] == "us" else n / (f["value"] * US)
    e_hi = err(hi)
    if e_hi < 0:
        raise CalibrationError(f"figure {f['id']}: no think time reproduces {f['value']:g} {f['unit']}")
    params["Z"][workload] = _bisect(err, lo, hi, e_lo, fb=e_hi)


def fit(params: dict, fits: dict[str, str], figs: dict[str, dict], priors: dict, source: str) -> dict[str, Fit]:
    """Solve the parameters ``fits`` names (parameter -> figure id) into ``params``: hold times first,
    each with its workload's Z re-solved inside, then the remaining Zs."""
    out: dict[str, Fit] = {}
    for p, fid in fits.items():
        if fid not in figs:
            raise CalibrationError(f"{source}: fits {p} on {fid!r}, which is not one of its figures")
        if p not in HOLDS and not (p.startswith("Z[") and p[2:-1] in WORKLOADS):
            raise CalibrationError(f"{source}: cannot fit {p!r}; the free parameters are "
                                   f"{', '.join(HOLDS)} and Z[workload] for {', '.join(WORKLOADS)}")
        if p.startswith("Z[") and figs[fid]["workload"] != p[2:-1]:
            raise CalibrationError(f"{source}: {p} is fitted on {fid}, a figure of {figs[fid]['workload']}")
    for hold in [p for p in fits if p in HOLDS]:
        f = figs[fits[hold]]
        w = f["workload"]
        zf = fits.get(f"Z[{w}]")
        if zf is None:
            raise CalibrationError(f"{source}: {hold} is fitted on {f['id']} ({w}), but Z[{w}] is not fitted "
                                   f"there: a hold time is solved together with its workload's think time")

        def gap(h: float, hold: str = hold, w: str = w, zf: str = zf, f: dict = f) -> float:  # bound per hold (B023)
            params[hold] = h
            try:
                _fit_z(params, w, figs[zf], priors)
            except CalibrationError:
                # The base figure is out of reach even with no think time: h is past the point where
                # the base variant saturates, where the changed variant's gain is largest. Continuing
                # the gap's sign from there keeps the first crossing (below that point) findable.
                return f["value"]
            return _measure(solve(w, f["variant"], figure_machine(f, priors), params, priors), f["unit"]) - f["value"]
        try:
            params[hold] = _root(gap, 0.0, 1e4)
        except CalibrationError:
            raise CalibrationError(f"{source}: no {hold} reproduces {f['id']} ({f['value']:g} {f['unit']}) "
                                   f"with {zf} reproduced too") from None
        _fit_z(params, w, figs[zf], priors)
        out[hold] = Fit(hold, params[hold], f["id"], source)
    for p, fid in fits.items():
        if p.startswith("Z["):
            w = p[2:-1]
            if p not in {f"Z[{figs[fits[h]]['workload']}]" for h in out}:
                _fit_z(params, w, figs[fid], priors)
            out[p] = Fit(p, params["Z"][w], fid, source)
    return out


def _check_file(cal: dict, path: str) -> None:
    for key in ("figures", "calibrate_on", "fits"):
        if key not in cal:
            raise CalibrationError(f"{path}: no {key!r}; a calibration file has 'figures', 'calibrate_on' and "
                                   f"'fits' as models/calibration.json does")
    figs = {f["id"]: f for f in cal["figures"]}
    for f in cal["figures"]:
        for k in ("id", "workload", "variant", "cores", "value", "unit"):
            if k not in f:
                raise CalibrationError(f"{path}: figure {f.get('id', '?')!r} has no {k!r}")
        w = WORKLOADS.get(f["workload"])
        if w is None:
            raise CalibrationError(f"{path}: figure {f['id']}: no workload {f['workload']!r}; the workloads are "
                                   f"{', '.join(WORKLOADS)}")
        if f["variant"] not in w.variants:
            raise CalibrationError(f"{path}: figure {f['id']}: {f['workload']} has the variants "
                                   f"{', '.join(w.variants)}, not {f['variant']!r}")
        if f["unit"] not in ("ops/s", "us"):
            raise CalibrationError(f"{path}: figure {f['id']}: unit {f['unit']!r}; write 'ops/s' or 'us'")
    for p, fid in cal["fits"].items():
        if fid not in set(cal["calibrate_on"]):
            raise CalibrationError(f"{path}: {p} is fitted on {fid}, which is not in calibrate_on")
    for fid in cal["calibrate_on"]:
        if fid not in figs:
            raise CalibrationError(f"{path}: calibrate_on names {fid!r}, which is not a figure")


def _empty_params() -> dict:
    return {**{h: 0.0 for h in HOLDS}, "Z": {}, "Z_child_ratio": {}}


def _borrow(params: dict, fits: dict, borrow: dict, priors: dict, path: str) -> dict[str, Fit]:
    """Z of a workload with no figure of its own, taken from a seed workload's (flagged as borrowed). The
    launch parent's Z is launch_fork_share of a fork's; its children's Z is the rest of a fork + exec's."""
    out = {}
    for p, src in borrow.items():
        w, sw = p[2:-1], src[2:-1]
        z = params["Z"][sw]
        if WORKLOADS[w].two_class:
            zp = priors["launch_fork_share"] * z
            params["Z_child_ratio"][w] = (params["Z"]["lmbench-exec"] - zp) / zp
            z = zp
        params["Z"][w] = z
        out[p] = Fit(p, z, fits[src].figure, f"borrowed from {src}")
    return out


@lru_cache(maxsize=64)
def _calibrate(path: str, priors_json: str) -> tuple[dict, dict]:
    cal = load(path)
    _check_file(cal, path)
    params = _empty_params()
    pri = json.loads(priors_json)
    fits = fit(params, cal["fits"], {f["id"]: f for f in cal["figures"]}, pri, path)
    fits.update(_borrow(params, fits, cal.get("borrow", {}), pri, path))
    return params, fits


def calibrate(path: str = str(CALIBRATION), priors: dict | None = None) -> dict:
    """Every free parameter solved from the seeds' figures (``priors``: replace the file's, e.g. for a
    sensitivity band). Returns the parameters; calibration() also says where each came from."""
    pri = priors if priors is not None else load(path)["priors"]
    params, _ = _calibrate(path, json.dumps(pri, sort_keys=True))
    return json.loads(json.dumps(params))


def calibration(user: str | None = None, base: dict | None = None, priors: dict | None = None,
                machine_priors: dict | None = None) -> Calibration:
    """The seeds' calibration, then a user's file (``user``: its fits replace the seeds' for the parameters
    it names) and a user's ``base`` figure (its Z replaces the workload's). The seeds' figures are fitted
    and predicted with the seeds' priors (``priors`` replaces them, for a sensitivity band); the user's
    machine, its figures and every prediction with those updated by the user file's priors and by
    ``machine_priors`` (--measure): a measurement of one machine never re-fits another's figures."""
    seeds = load(str(CALIBRATION))
    seed_pri = dict(priors if priors is not None else seeds["priors"])
    pri = dict(seed_pri)
    ucal = None
    if user is not None:
        try:
            ucal = json.loads(Path(user).read_text())
        except OSError as e:
            raise CalibrationError(f"--calibration {user}: {e.strerror}") from None
        except json.JSONDecodeError as e:
            raise CalibrationError(f"--calibration {user}: not JSON (line {e.lineno}: {e.msg})") from None
        _check_file(ucal, user)
        pri.update(ucal.get("priors", {}))
    pri.update(machine_priors or {})
    seed_params, seed_fits = _calibrate(str(CALIBRATION), json.dumps(seed_pri, sort_keys=True))
    params = json.loads(json.dumps(seed_params))
    fits = dict(seed_fits)
    figures = [dict(f, source="seeds") for f in seeds["figures"]]
    ratios = [dict(r, source="seeds") for r in seeds["ratios"]]
    calibrated = set(seeds["calibrate_on"])
    by_source = {"seeds": json.loads(json.dumps(params))}
    if ucal is not None:
        figs = {f["id"]: f for f in ucal["figures"]}
        fits.update(fit(params, ucal["fits"], figs, pri, user))
        figures += [dict(f, source=user) for f in ucal["figures"]]
        ratios += [dict(r, source=user) for r in ucal.get("ratios", [])]
        calibrated |= set(ucal["calibrate_on"])
        by_source[user] = json.loads(json.dumps(params))
    if base is not None:
        fits.update(fit(params, {f"Z[{base['workload']}]": base["id"]}, {base["id"]: base}, pri, "--base"))
        figures.append(dict(base, source="--base"))
        calibrated.add(base["id"])
    return Calibration(params, pri, fits, figures, ratios, calibrated, by_source,
                       {"seeds": seed_pri})


def free_parameters(params: dict) -> dict[str, float]:
    out = {k: params[k] for k in HOLDS}
    out.update({f"Z[{w}]": z for w, z in params["Z"].items()})
    return out


@dataclass(frozen=True)
class Band:
    """One prediction at each end of every prior's range (one prior at a time, everything re-fitted)."""
    low: float
    high: float
    widest: str          # the prior that moves it most
    by_prior: dict       # prior -> (value at its low end, at its high end)


def bands(workload: str, variants: tuple[str, ...], machines: list[Machine], user: str | None = None,
          base: dict | None = None, machine_priors: dict | None = None) -> dict:
    """(variant, cores) -> {"ops": Band, "speedup": Band (against variants[0])}. A prior measured by
    --measure has no band: it is that machine's figure, not a prior."""
    seeds = load(str(CALIBRATION))
    runs: dict[str, tuple[dict, dict]] = {}
    for prior, ends in seeds["prior_ranges"].items():
        if prior in (machine_priors or {}):
            continue
        out = []
        for v in ends:
            try:
                cal = calibration(user=user, base=base, priors=dict(seeds["priors"], **{prior: v}),
                                  machine_priors=machine_priors)
                out.append({(var, m.cores): solve(workload, var, m, cal.params, cal.priors).ops_per_s
                            for var in variants for m in machines})
            except CalibrationError:
                out.append(None)  # no fit at this end of the range: the band says so with nan
        runs[prior] = (out[0], out[1])
    result = {}
    for var in variants:
        for m in machines:
            key, bkey = (var, m.cores), (variants[0], m.cores)
            per = {"ops": {}, "speedup": {}}
            for prior, ends in runs.items():
                per["ops"][prior] = tuple(e[key] if e else float("nan") for e in ends)
                per["speedup"][prior] = tuple(e[key] / e[bkey] if e else float("nan") for e in ends)
            result[key] = {}
            for kind, d in per.items():
                vals = [x for pair in d.values() for x in pair if x == x]
                spread = {p: max(abs(a - b) if a == a and b == b else float("inf"), 0) for p, (a, b) in d.items()}
                widest = max(spread, key=spread.__getitem__) if spread else "-"
                result[key][kind] = Band(min(vals, default=float("nan")), max(vals, default=float("nan")), widest, d)
    return result


@dataclass(frozen=True)
class Row:
    id: str
    measured: float
    predicted: float
    calibrated: bool
    source: str = "seeds"

    @property
    def error(self) -> float:
        return (self.predicted - self.measured) / self.measured

    @property
    def change_error(self) -> float:
        """For a ratio: predicted change minus measured change (ratio - 1), in points."""
        return (self.predicted - 1) - (self.measured - 1)


def validation_of(cal: Calibration) -> tuple[list[Row], list[Row]]:
    """Every figure and every ratio of ``cal``: measured, predicted, relative error, calibrated or held out."""
    figs, pred, rows = {}, {}, []
    for f in cal.figures:
        pri = cal.priors_for(f["source"])
        p = _measure(solve(f["workload"], f["variant"], figure_machine(f, pri), cal.params_for(f["source"]), pri),
                     f["unit"])
        figs[f["id"]], pred[f["id"]] = f["value"], p
        rows.append(Row(f["id"], f["value"], p, f["id"] in cal.calibrated, f["source"]))
    ratios = [Row(r["id"], figs[r["num"]] / figs[r["den"]], pred[r["num"]] / pred[r["den"]],
                  r["num"] in cal.calibrated and r["den"] in cal.calibrated, r["source"]) for r in cal.ratios]
    return rows, ratios


def validation(path: str = str(CALIBRATION)) -> tuple[list[Row], list[Row]]:
    """The seeds' figures and within-seed ratios, as calibrated on the seeds."""
    if path != str(CALIBRATION):
        return validation_of(calibration(user=path))
    return validation_of(calibration())


def measured_points(workload: str, cal: Calibration | None = None) -> list[dict]:
    figures = cal.figures if cal is not None else load()["figures"]
    return [f for f in figures if f["workload"] == workload]


def largest_measured_cores(workload: str, cal: Calibration | None = None) -> int:
    return max((f["cores"] for f in measured_points(workload, cal)), default=0)
