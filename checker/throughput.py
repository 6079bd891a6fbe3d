# SPDX-License-Identifier: GPL-2.0-only
"""``python -m checker throughput``: predicted ops/s against cores, with the seeds' figures beside.

The numbers come from models/: the workload's operations run through the
fast-path models, priced, and put through the queueing model calibrated on
models/calibration.json (see docs/throughput.md). This module only parses,
prints and plots.
"""
from __future__ import annotations

import argparse
import csv
import io
import json
import sys
import textwrap
from pathlib import Path

from checker.errors import CheckerError
from checker.models.measure import MeasureError, measure
from checker.models.throughput import (CalibrationError, Calibration, Machine, bands, calibration, largest_measured_cores,
                                       measured_points, solve, validation_of)
from checker.models.vma_unlink import SEED_004_HISTOGRAM
from checker.models.workloads import WORKLOADS, batch_histograms

MAX_CORES = 256


def add_arguments(p: argparse.ArgumentParser) -> None:
    """The ``throughput`` command's options."""
    p.add_argument("--workload", choices=tuple(WORKLOADS), default="doexec-static")
    p.add_argument("--cores", default="1..256", metavar="N|LO..HI|A,B,...",
                   help="core counts (1..256); a range LO..HI gives the powers of two in it, its ends and "
                        "the seeds' measured core counts (default 1..256)")
    p.add_argument("--variant", action="append", default=[], metavar="NAME",
                   help="a variant of the workload (repeat or comma-separate; default: all); the first is the "
                        "base the speedups are against")
    p.add_argument("--smt", type=int, default=1, metavar="K",
                   help="hardware threads per core (default 1); siblings share a core (prior smt_yield)")
    p.add_argument("--possible-cpus", type=int, metavar="N",
                   help="possible CPUs, what per-CPU walks scale with (default: cores x smt)")
    p.add_argument("--workers", type=int, metavar="N",
                   help="concurrent copies of the benchmark (default: one per core; 1 for lmbench)")
    p.add_argument("--base", metavar="[VARIANT@CORES=]VALUE",
                   help="your own measured baseline (ops/s, or us/op for lmbench); the workload's think time "
                        "Z is solved from it on this machine. Default variant: the first; default cores: the "
                        "largest of --cores")
    p.add_argument("--calibration", metavar="FILE.json",
                   help="your own figures in the format of models/calibration.json; the parameters its 'fits' "
                        "names are solved from them, the rest from the seeds")
    p.add_argument("--measure", action="store_true",
                   help="build and run a small C microbenchmark (system compiler) on this machine; its figures "
                        "replace the matching priors for this machine's predictions, which need your --base")
    p.add_argument("--no-band", dest="band", action="store_false",
                   help="skip the sensitivity band (each prior at both ends of its range, everything re-fitted: "
                        "about twenty calibrations)")
    p.add_argument("--format", choices=("text", "json", "csv"), default="text",
                   help="text (a table per group of variants that fits --width), json or csv (every point, with "
                        "its sensitivity band unless --no-band)")
    p.add_argument("--width", type=int, metavar="N", help="text at most N columns wide (default: the terminal's "
                   "width, 100 when not a terminal; 72 fits a changelog paragraph)")
    p.add_argument("--plot", metavar="FILE.png|FILE.svg", help="also plot ops/s against cores (needs matplotlib)")


def parse_cores(text: str, measured: list[int]) -> list[int]:
    """'26', '1,2,4' or 'LO..HI' (powers of two inside, the ends, and measured counts inside)."""
    def num(s: str) -> int:
        try:
            n = int(s)
        except ValueError:
            raise CheckerError(f"--cores {text!r}: {s!r} is not a whole number; write e.g. 26, 1,2,4 or 1..256") \
                from None
        if not 1 <= n <= MAX_CORES:
            raise CheckerError(f"--cores {text!r}: {n} is outside 1..{MAX_CORES}")
        return n

    if ".." in text:
        lo, _, hi = text.partition("..")
        a, b = num(lo), num(hi)
        if a > b:
            raise CheckerError(f"--cores {text!r}: the range is empty ({a} > {b})")
        pts = {a, b} | {1 << k for k in range(9) if a <= 1 << k <= b} | {m for m in measured if a <= m <= b}
        return sorted(pts)
    return sorted({num(s) for s in text.split(",")})


def _variants(args: argparse.Namespace) -> tuple[str, ...]:
    allowed = WORKLOADS[args.workload].variants
    chosen = [v for item in args.variant for v in item.split(",") if v]
    for v in chosen:
        if v not in allowed:
            raise CheckerError(f"--variant {v!r}: {args.workload} has the variants {', '.join(allowed)}")
    return tuple(dict.fromkeys(chosen)) or allowed


def _machine_args(args: argparse.Namespace) -> None:
    for name in ("smt", "possible_cpus", "workers"):
        v = getattr(args, name)
        if v is not None and not 1 <= v <= 4096:
            raise CheckerError(f"--{name.replace('_', '-')} {v}: give a whole number in 1..4096")


def machine(args: argparse.Namespace, cores: int) -> Machine:
    """The machine the model predicts for at ``cores`` cores (its possible CPUs, from the seed when one process)."""
    pc = args.possible_cpus
    if pc is None and WORKLOADS[args.workload].single_process and not args.base:
        # one process on the seed's machine unless told otherwise: its possible CPUs, not 1 per core
        from checker.models.throughput import load
        seed = next((f for f in load()["figures"] if f["workload"] == args.workload), None)
        if seed is not None:
            pc = seed.get("possible_cpus")
    return Machine(cores, args.smt, pc, args.workers)


def parse_base(text: str, args: argparse.Namespace, variants: tuple[str, ...], cores: list[int]) -> dict:
    """--base [VARIANT@CORES=]VALUE as a figure on the command line's machine."""
    w = WORKLOADS[args.workload]
    head, eq, value = text.rpartition("=")
    variant, at, c = head.partition("@") if eq else (variants[0], "@", str(cores[-1]))
    if eq and not at:
        raise CheckerError(f"--base {text!r}: write VALUE or VARIANT@CORES=VALUE, e.g. {variants[0]}@64=250000")
    if variant not in w.variants:
        raise CheckerError(f"--base {text!r}: {args.workload} has the variants {', '.join(w.variants)}")
    try:
        val, n = float(value), int(c)
    except ValueError:
        raise CheckerError(f"--base {text!r}: the value and the cores must be numbers, e.g. "
                           f"{variants[0]}@64=250000") from None
    if val <= 0 or not 1 <= n <= MAX_CORES:
        raise CheckerError(f"--base {text!r}: the value must be positive and the cores in 1..{MAX_CORES}")
    f = {"id": f"--base {variant}@{n}", "seed": "user", "workload": args.workload, "variant": variant,
         "cores": n, "value": val, "unit": "us" if w.single_process else "ops/s", "smt": args.smt}
    if args.possible_cpus is not None:
        f["possible_cpus"] = args.possible_cpus
    if args.workers is not None:
        f["workers"] = args.workers
    return f


def main(args: argparse.Namespace) -> int:
    """``throughput``: predict ops/s per variant and core count, print the tables, plot; the exit code."""
    try:
        return _run(args)
    except (CalibrationError, MeasureError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    except CheckerError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2


def _run(args: argparse.Namespace) -> int:
    from checker.report.width import output_width

    args.width = output_width(args.width)
    if args.plot and Path(args.plot).suffix.lower() not in (".png", ".svg"):
        raise CheckerError(f"--plot {args.plot!r}: the file must end in .png or .svg")
    if args.plot:
        try:
            import matplotlib  # noqa: F401
        except ImportError:
            print("error: --plot needs matplotlib, an optional extra: pip install 'matplotlib>=3.5' "
                  "(or, in the checkout, pip install '.[plot]')", file=sys.stderr)
            return 2
    _machine_args(args)
    w = args.workload
    variants = _variants(args)
    cores = parse_cores(args.cores, [f["cores"] for f in measured_points(w)])
    base = parse_base(args.base, args, variants, cores) if args.base else None
    measured = None
    if args.measure:
        if base is None and args.calibration is None:
            raise CheckerError("--measure describes this machine, whose think time Z only your own figure can "
                               "give: add --base VALUE (what you measured here), or --calibration FILE")
        measured = measure()
        print("measured on this machine: " + ", ".join(f"{k}={v:.4g}" for k, v in measured["figures"].items())
              + " (us)" + "".join(f"; {k} not used: {why}" for k, why in measured["dropped"].items()),
              file=sys.stderr)
    mpri = measured["priors"] if measured else None
    cal = calibration(user=args.calibration, base=base, machine_priors=mpri)
    points = {v: [solve(w, v, machine(args, c), cal.params, cal.priors) for c in cores] for v in variants}
    rows, ratios = validation_of(cal)
    limit = largest_measured_cores(w, cal)
    band = None
    if args.band:  # every format carries it: the text's sensitivity lines, json's and csv's low/high columns
        band = bands(w, variants, [machine(args, c) for c in cores], args.calibration, base, mpri)
    args._band, args._measured = band, measured
    out = {"text": _text, "json": _json, "csv": _csv}[args.format](args, variants, cores, points, cal, rows,
                                                                      ratios, limit)
    sys.stdout.write(out)
    if args.plot:
        _plot(args.plot, args, variants, cores, points, cal, limit, band)
        print(f"plot written to {args.plot}", file=sys.stderr)
    return 0


def _extrapolated(c: int, limit: int) -> bool:
    return c > limit


def _relevant_fits(w: str, cal: Calibration) -> list:
    """The fits a prediction of ``w`` depends on: its Z and every hold time."""
    return [cal.fits[k] for k in cal.fits if k == f"Z[{w}]" or not k.startswith("Z[")]


def _text(args, variants, cores, points, cal, rows, ratios, limit) -> str:
    w = args.workload
    wl = WORKLOADS[w]
    buf = io.StringIO()
    unit = "us/op (single process: cores do not change it)" if wl.single_process else "ops/s"
    m = machine(args, cores[-1])
    star = (f"* = extrapolated beyond the largest measured core count ({limit})" if limit else
            "* = no figure of this workload was measured: every point rests on a borrowed or --base Z")
    print(f"{w}: {wl.doc}. Predicted {unit}, with x the speedup against {variants[0]}; then the bottleneck "
          f"lock and its utilisation. {star}.", file=buf)
    print(f"machine: {args.smt} hardware thread(s) per core; possible CPUs "
          f"{args.possible_cpus or m.possible_cpus or 'cores x smt'}"
          f"{' = ' + str(m.cpus(cal.priors)) if isinstance(m.possible_cpus, str) else ''}; workers {args.workers or ('1' if wl.single_process else 'one per core')}"
          f" (at {cores[-1]} cores: {m.describe(wl.single_process, cal.priors)})", file=buf)
    vals = {v: [p.latency_us if wl.single_process else p.ops_per_s for p in points[v]] for v in variants}

    def value(v: str, i: int) -> str:
        x, b = vals[v][i], vals[variants[0]][i]
        return f"{x:,.1f}" + ("" if v == variants[0] else f" x{(b / x if wl.single_process else x / b):.4f}")

    marks = [f"{c:>5}{'*' if _extrapolated(c, limit) else ' '}" for c in cores]
    print("\n".join(_columns(marks, {v: [value(v, i) for i in range(len(cores))] for v in variants}, args.width)),
          file=buf)
    print("bottleneck lock and its utilisation", file=buf)
    print("\n".join(_columns(marks, {v: [f"{p.bottleneck or '-'} {p.utilisation:.0%}" for p in points[v]]
                                     for v in variants}, args.width)), file=buf)
    measured = measured_points(w, cal)
    if measured:
        print("\nmeasured figures beside the prediction (on each figure's own machine):", file=buf)
        for f in measured:
            p = solve(w, f["variant"], _fig_machine(f, cal), cal.params_for(f["source"]), cal.priors)
            pred = p.latency_us if f["unit"] == "us" else p.ops_per_s
            print(f"  {f['variant']} at {f['cores']} cores ({f['id']}): measured {f['value']:,.1f}, "
                  f"predicted {pred:,.1f} {f['unit']} ({'fitted' if f['id'] in cal.calibrated else 'held out'})",
                  file=buf)
    if w.startswith("doexec"):
        print("\nunlink_file_vma batches per exec (model layouts: the binary's 4 vmas, ld.so's and libc's 5 each):",
              file=buf)
        for name, h in batch_histograms().items():
            print(f"  {name:<8} batch sizes {h['batch_sizes']}; i_mmap_rwsem acquisitions "
                  f"{h['acquisitions_unbatched']} unbatched, {h['acquisitions_batched']} batched", file=buf)
        total = sum(SEED_004_HISTOGRAM.values())
        print("  seed 004 (a whole kernel build, not doexec): " + ", ".join(
            f"{k}: {v} ({v / total:.0%})" for k, v in SEED_004_HISTOGRAM.items())
            + ". Both have a bucket at 5; the build's dominant bucket, 1, has no counterpart here.", file=buf)
    print("\nvalidation (every figure; cal = a calibration figure, solved exactly, not a test):", file=buf)
    iw = max([len("figure"), len("ratio")] + [len(r.id) for r in rows + ratios])
    print(f"  {'figure':<{iw}} {'measured':>10} {'predicted':>10} {'error':>7}", file=buf)
    for r in rows:
        print(f"  {r.id:<{iw}} {r.measured:>10,.1f} {r.predicted:>10,.1f} {r.error:>+7.2%} "
              f"{'cal' if r.calibrated else 'held out'}", file=buf)
    # The change (ratio - 1) is printed too, and its error: a ratio near 1 has a small relative error even
    # when the predicted change is far off, and the reader should see both.
    print(f"  {'ratio':<{iw}} {'measured':>10} {'predicted':>10} {'error':>7} {'':8} {'change':>7} {'predicted':>9} "
          f"{'error':>7}", file=buf)
    for r in ratios:
        print(f"  {r.id:<{iw}} {r.measured:>10.4f} {r.predicted:>10.4f} {r.error:>+7.2%} "
              f"{'cal     ' if r.calibrated else 'held out'} {r.measured - 1:>+7.1%} {r.predicted - 1:>+9.1%} "
              f"{r.change_error * 100:>+4.1f} pt", file=buf)
    if getattr(args, "_band", None):
        print(f"\nsensitivity (each prior in models/calibration.json's prior_ranges at its low and high end, one at "
              f"a time, every free parameter re-fitted on the same figures): {unit.split(' ')[0]} and speedup "
              f"against {variants[0]}, low..high, and the prior that moves it most", file=buf)
        for c in sorted({cores[0], cores[-1]} | {x for x in cores if x in (26, 64, 256)}):
            i = cores.index(c)
            for v in variants:
                b = args._band[(v, c)]
                lo, hi = (1e6 / b["ops"].high, 1e6 / b["ops"].low) if wl.single_process else (b["ops"].low, b["ops"].high)
                mid = points[v][i].latency_us if wl.single_process else points[v][i].ops_per_s
                sp = b["speedup"]
                print(f"  {c:>4} {v:>18}: {mid:>12,.1f} in {lo:,.1f}..{hi:,.1f} ({b['ops'].widest})"
                      + (f"; speedup {sp.low:.4f}..{sp.high:.4f} ({sp.widest})" if v != variants[0] else ""),
                      file=buf)
    if getattr(args, "_measured", None):
        m = args._measured
        print("\nmeasured on this machine (--measure; replaces these priors for its predictions only): "
              + ", ".join(f"{k}={v:.4g} us" for k, v in m["priors"].items()), file=buf)
        for k, why in m["dropped"].items():
            print(f"  {k}: not used, {why}", file=buf)
    held = [r for r in ratios if not r.calibrated]
    worst = max((abs(r.error) for r in held), default=0.0)
    worst_change = max((abs(r.change_error) for r in held), default=0.0)
    print(f"\n{len(cal.fits)} free parameters for {len(rows)} figures ({len(ratios)} ratios, {len(held)} held out; "
          f"largest held-out ratio error {worst:.2%}, on the change {worst_change * 100:.1f} points). Fitted:",
          file=buf)
    for f in cal.fits.values():
        print(f"  {f.parameter:<20} = {f.value:>12.4g} us   fitted on {f.figure} ({_source(f.source)})", file=buf)
    return "".join(line + "\n" for line in _fit(buf.getvalue().splitlines(), args.width))


def _columns(marks: list[str], cells: dict[str, list[str]], width: int) -> list[str]:
    """A table of one column per variant under its name, ``marks`` (the core counts) down the left, split
    into as many tables as it takes for each line to fit ``width``; a blank line after each."""
    widths = {v: max(len(v), *(len(x) for x in col)) for v, col in cells.items()}
    left = max(len("cores"), *(len(m) for m in marks))
    groups: list[list[str]] = [[]]
    used = left
    for v in cells:
        if groups[-1] and used + 2 + widths[v] > width:
            groups.append([])
            used = left
        groups[-1].append(v)
        used += 2 + widths[v]
    out = []
    for group in groups:
        out.append(f"{'cores':>{left}}" + "".join(f"  {v:>{widths[v]}}" for v in group))
        out += [f"{m:<{left}}" + "".join(f"  {cells[v][i]:>{widths[v]}}" for v in group) for i, m in enumerate(marks)]
        out.append("")
    return out


def _fit(lines: list[str], width: int) -> list[str]:
    """Each line at most ``width`` columns: a longer one goes on below, indented past its own indent."""
    out = []
    for line in lines:
        if len(line) <= width:
            out.append(line)
            continue
        indent = " " * (len(line) - len(line.lstrip()))
        out += textwrap.wrap(line.strip(), width, initial_indent=indent, subsequent_indent=indent + "    ",
                             break_on_hyphens=False)
    return out


def _source(s: str) -> str:
    return "the seeds, models/calibration.json" if s.endswith("models/calibration.json") else s


def _fig_machine(f: dict, cal: Calibration) -> Machine:
    from checker.models.throughput import figure_machine
    return figure_machine(f, cal.priors)


def _fits_string(w: str, cal: Calibration) -> str:
    return ";".join(f"{f.parameter}={f.figure}" for f in _relevant_fits(w, cal))


def _records(args, variants, cores, points, cal, limit) -> list[dict]:
    out = []
    fitted = _fits_string(args.workload, cal)
    for v in variants:
        base = points[variants[0]]
        for p, b in zip(points[v], base):
            out.append({"workload": args.workload, "variant": v, "cores": p.cores, "smt": args.smt,
                        "possible_cpus": p.possible_cpus, "workers": p.workers, "ops_per_s": p.ops_per_s,
                        "latency_us": p.latency_us, "speedup": p.ops_per_s / b.ops_per_s,
                        "bottleneck": p.bottleneck, "bottleneck_utilisation": p.utilisation,
                        "extrapolated": _extrapolated(p.cores, limit), **_band_fields(args, v, p.cores),
                        "fitted_on": fitted})
    return out


def _band_fields(args, variant: str, cores: int) -> dict:
    """The point's sensitivity band, as the text prints it: ops/s (and us/op) and speedup low..high, and the
    prior that moves each most (None throughout with --no-band)."""
    b = (getattr(args, "_band", None) or {}).get((variant, cores))
    if b is None:
        return dict.fromkeys(("ops_per_s_low", "ops_per_s_high", "latency_us_low", "latency_us_high", "ops_prior",
                              "speedup_low", "speedup_high", "speedup_prior"))
    ops, sp = b["ops"], b["speedup"]

    def num(x: float) -> float | None:  # a prior's end with no fit is nan: JSON has no nan, so none
        return x if x == x and abs(x) != float("inf") else None

    return {"ops_per_s_low": num(ops.low), "ops_per_s_high": num(ops.high), "latency_us_low": num(1e6 / ops.high),
            "latency_us_high": num(1e6 / ops.low), "ops_prior": ops.widest, "speedup_low": num(sp.low),
            "speedup_high": num(sp.high), "speedup_prior": sp.widest}


def _json(args, variants, cores, points, cal, rows, ratios, limit) -> str:
    def row(r):
        return {"id": r.id, "measured": r.measured, "predicted": r.predicted, "error": r.error,
                "change_error": r.change_error, "calibrated": r.calibrated, "source": _source(r.source)}
    w = args.workload
    doc = {"workload": w, "variants": list(variants), "largest_measured_cores": limit,
           "machine": {"smt": args.smt, "possible_cpus": args.possible_cpus, "workers": args.workers},
           "points": _records(args, variants, cores, points, cal, limit), "measured": measured_points(w, cal),
           "validation": {"figures": [row(r) for r in rows], "ratios": [row(r) for r in ratios]},
           "fits": [{"parameter": f.parameter, "value": f.value, "figure": f.figure, "source": _source(f.source)}
                    for f in cal.fits.values()],
           "free_parameters": {f.parameter: f.value for f in cal.fits.values()}, "priors": cal.priors,
           "measured_machine": getattr(args, "_measured", None),
           "figures": len(rows),
           # each point's *_low/*_high: every prior below at both ends of its range, one at a time, re-fitted
           "band_prior_ranges": _prior_ranges() if getattr(args, "_band", None) else None,
           "batch_histograms": {"model": batch_histograms(), "seed_004_kernel_build": SEED_004_HISTOGRAM}}
    return json.dumps(doc, indent=2) + "\n"


def _prior_ranges() -> dict:
    from checker.models.throughput import load

    return load()["prior_ranges"]


def _csv(args, variants, cores, points, cal, rows, ratios, limit) -> str:
    recs = _records(args, variants, cores, points, cal, limit)
    buf = io.StringIO()
    wr = csv.DictWriter(buf, fieldnames=list(recs[0]), lineterminator="\n")
    wr.writeheader()
    wr.writerows(recs)
    return buf.getvalue()


_STYLES = [("-", "o"), ("--", "s"), (":", "^"), ("-.", "D"), ((0, (5, 1)), "v"), ((0, (3, 1, 1, 1)), "P"),
           ((0, (1, 1)), "X"), ((0, (5, 3, 1, 3)), "*")]


def _plot(path: str, args, variants, cores, points, cal, limit, band) -> None:
    import matplotlib
    matplotlib.use("Agg")  # no display; files only
    import matplotlib.pyplot as plt

    w = args.workload
    wl = WORKLOADS[w]
    measured = measured_points(w, cal)
    if wl.single_process:
        _plot_bars(plt, path, w, variants, cores, points, cal, band, measured)
        return
    fig, (ax, sx) = plt.subplots(1, 2, figsize=(12, 5))
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    notes: dict[tuple, list[str]] = {}
    groups = coinciding(variants, {v: [p.ops_per_s for p in points[v]] for v in variants})
    color_of = {v: colors[k % len(colors)] for k, g in enumerate(groups) for v in g}
    for k, group in enumerate(groups):
        v = group[0]  # a group's lines coincide: one line, its legend naming every variant on it
        ls, mk = _STYLES[k % len(_STYLES)]
        col = colors[k % len(colors)]
        # coinciding lines stay visible: each later one thinner, on top, with hollow markers every other one
        style = {"linestyle": ls, "marker": mk, "markersize": 6 - 0.5 * (k % 4), "color": col,
                 "linewidth": 2.6 - 0.4 * min(k, 4), "zorder": 3 + k,
                 "markerfacecolor": "none" if k % 2 else col}
        ys = [p.ops_per_s for p in points[v]]
        base = [p.ops_per_s for p in points[variants[0]]]
        name = " = ".join(group)
        ax.plot(cores, ys, label=name, **style)
        if k:
            sx.plot(cores, [y / b for y, b in zip(ys, base, strict=True)], label=name, **style)
        if band:
            lo = [band[(v, c)]["ops"].low for c in cores]
            hi = [band[(v, c)]["ops"].high for c in cores]
            ax.fill_between(cores, lo, hi, color=col, alpha=0.08, linewidth=0, zorder=1)
            if k:
                sx.fill_between(cores, [band[(v, c)]["speedup"].low for c in cores],
                                [band[(v, c)]["speedup"].high for c in cores], color=col, alpha=0.08,
                                linewidth=0, zorder=1)
        # the bottleneck's ceiling (X / U at the largest core count) and where it is first 80% busy
        last = points[v][-1]
        if last.bottleneck and last.utilisation > 0.5:
            ceiling = last.ops_per_s / last.utilisation
            ax.axhline(ceiling, color=col, linestyle=(0, (1, 3)), linewidth=0.8, zorder=2)
            sat = next((p for p in points[v] if p.utilisation >= 0.8 and p.bottleneck == last.bottleneck), None)
            if sat is not None:
                ax.annotate("", (sat.cores, sat.ops_per_s), xytext=(sat.cores, sat.ops_per_s * 0.6),
                            arrowprops={"arrowstyle": "->", "color": col, "lw": 1.0})
            where = f", 80% busy at {sat.cores} cores" if sat is not None else ""
            notes.setdefault((last.bottleneck, round(ceiling, -2), where), []).extend(group)
    lines = [f"{', '.join(vs)}: {lock} saturates at {ceil:,.0f}/s{where}" for (lock, ceil, where), vs in notes.items()]
    if lines:
        ax.text(0.02, 0.98, "bottleneck (dotted: its ceiling; arrow: 80% busy)\n" + "\n".join(lines),
                transform=ax.transAxes, fontsize=7, va="top",
                bbox={"boxstyle": "round", "facecolor": "white", "alpha": 0.85, "edgecolor": "0.7"})
    placed: list[tuple[int, float]] = []
    for f in measured:
        fitted = f["id"] in cal.calibrated
        v = f["variant"]
        col = color_of.get(v, "black")
        ax.scatter([f["cores"]], [f["value"]], s=70, zorder=20, marker="o",
                   facecolors=col if fitted else "none", edgecolors="black", linewidths=1.2)
        # beside its point; a label whose point is within 15% of an earlier one's moves down a line
        clash = sum(c == f["cores"] and abs(y / f["value"] - 1) < 0.15 for c, y in placed)
        placed.append((f["cores"], f["value"]))
        ax.annotate(f"{v}, measured ({'fitted' if fitted else 'held out'})", (f["cores"], f["value"]),
                    fontsize=7, xytext=(8, -3 - 10 * clash), textcoords="offset points")
        if v in variants and v != variants[0]:  # a measured change, when the base was measured beside it
            b = next((g for g in measured if g["variant"] == variants[0] and g["cores"] == f["cores"]
                      and g.get("source") == f.get("source")), None)
            if b is not None:
                sx.scatter([f["cores"]], [f["value"] / b["value"]], s=70, zorder=20, marker="o",
                           facecolors=col if fitted else "none", edgecolors="black", linewidths=1.2)
    if limit and cores[-1] > limit:
        for a in (ax, sx):
            a.axvspan(limit, cores[-1], color="0.93", zorder=0)
        sx.text(limit * 1.05, 0.02, "extrapolated: beyond the\nlargest measured cores", fontsize=7, color="0.35",
                transform=sx.get_xaxis_transform())
    for a in (ax, sx):
        a.set_xscale("log", base=2)
        a.set_xlabel(f"cores ({args.smt} thread(s) each; workers: {args.workers or 'one per core'})")
        a.grid(True, which="both", alpha=0.25)
    ax.set_yscale("log")
    lo, hi = ax.get_ylim()
    ax.set_ylim(lo, hi * 8)  # headroom above the curves for the bottleneck box
    ax.set_ylabel("ops/s (log scale)")
    ax.set_title(f"{w}: predicted ops/s; filled = fitted figure, hollow = held out", fontsize=9)
    # a linear axis: the speedups (x1.01 to x3 here) are read off it as they are, 1 the base's own line
    sx.set_ylabel(f"speedup against {variants[0]} (x, linear)")
    sx.axhline(1.0, color="0.5", linewidth=0.8)
    sx.set_title("speedup (shaded: every prior's range, everything re-fitted)" if band else "speedup", fontsize=9)
    ax.legend(fontsize=7, loc="lower right")
    sx.legend(fontsize=7, loc="best")
    fig.tight_layout()
    _save(fig, path)
    plt.close(fig)


def coinciding(variants: tuple[str, ...], values: dict[str, list[float]], within: float = 0.005) -> list[list[str]]:
    """The variants in groups whose curves coincide (every point within ``within``, relative, of the group's
    first), in order: a plot draws each group once, its legend naming them all."""
    groups: list[list[str]] = []
    for v in variants:
        home = next((g for g in groups if all(abs(a / b - 1) <= within
                                               for a, b in zip(values[v], values[g[0]], strict=True))), None)
        if home is None:
            groups.append([v])
        else:
            home.append(v)
    return groups


def _plot_bars(plt, path, w, variants, cores, points, cal, band, measured) -> None:
    """A single-process benchmark has no cores axis: one bar per variant (its latency), the band as an error
    bar, the change against the base printed on each bar, the measured figures beside."""
    fig, (ax, sx) = plt.subplots(1, 2, figsize=(12, 4.8))
    c = cores[-1]
    lat = [points[v][-1].latency_us for v in variants]
    err = None
    if band:
        err = [[lat[i] - 1e6 / band[(v, c)]["ops"].high for i, v in enumerate(variants)],
               [1e6 / band[(v, c)]["ops"].low - lat[i] for i, v in enumerate(variants)]]
    xs = range(len(variants))
    ax.bar(xs, lat, yerr=err, capsize=3, color="0.75", edgecolor="black", label="predicted")
    for f in measured:
        if f["variant"] in variants:
            fitted = f["id"] in cal.calibrated
            ax.scatter([variants.index(f["variant"])], [f["value"]], s=70, zorder=5, marker="D",
                       facecolors="black" if fitted else "white", edgecolors="black",
                       label="measured, fitted" if fitted else "measured, held out")
    lo = min(lat + [f["value"] for f in measured]) * 0.97
    ax.set_ylim(lo, max(lat + [f["value"] for f in measured]) * 1.02)  # a cut axis: the effects are a few %
    ax.set_xticks(list(xs), variants, rotation=30, ha="right", fontsize=8)
    ax.set_ylabel(f"us per operation (axis starts at {lo:,.0f})")
    ax.set_title(f"{w}: one process (no cores axis); filled = fitted, hollow = held out", fontsize=9)
    h, lab = ax.get_legend_handles_labels()
    ax.legend(dict(zip(lab, h)).values(), dict(zip(lab, h)).keys(), fontsize=7)
    change = [(lat[0] / x - 1) * 100 for x in lat]
    sx.bar(xs, change, color=["0.6" if x >= 0 else "0.85" for x in change], edgecolor="black")
    if band:
        sx.errorbar(xs, change, yerr=[[change[i] - (band[(v, c)]["speedup"].low - 1) * 100 for i, v in enumerate(variants)],
                                      [(band[(v, c)]["speedup"].high - 1) * 100 - change[i] for i, v in enumerate(variants)]],
                    fmt="none", ecolor="black", capsize=3)
    for f in measured:
        base = next((g for g in measured if g["variant"] == variants[0]), None)
        if base is not None and f["variant"] in variants:
            sx.scatter([variants.index(f["variant"])], [(base["value"] / f["value"] - 1) * 100], marker="D",
                       s=60, zorder=5, facecolors="black" if f["id"] in cal.calibrated else "white",
                       edgecolors="black")
    sx.axhline(0, color="0.4", linewidth=0.8)
    sx.set_xticks(list(xs), variants, rotation=30, ha="right", fontsize=8)
    sx.set_ylabel(f"speedup against {variants[0]}, % (diamonds: measured)")
    sx.set_title("predicted change, with every prior's band", fontsize=9)
    fig.tight_layout()
    _save(fig, path)
    plt.close(fig)


def _save(fig: object, path: str) -> None:
    """The figure written whole, as every report is (checker.report.write): rendered, then renamed into place."""
    from checker.report.write import write_atomic

    buf = io.BytesIO()
    fig.savefig(buf, format=Path(path).suffix[1:] or None, dpi=110)  # type: ignore[attr-defined]
    write_atomic(str(path), buf.getvalue())
