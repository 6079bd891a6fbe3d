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
from pathlib import Path

from checker.errors import CheckerError
from checker.models.throughput import (calibrate, free_parameters, largest_measured_cores, load, measured_points,
                               solve, validation)
from checker.models.vma_unlink import SEED_004_HISTOGRAM
from checker.models.workloads import WORKLOADS, batch_histograms

MAX_CORES = 256


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--workload", choices=tuple(WORKLOADS), default="doexec-static")
    p.add_argument("--cores", default="1..256", metavar="N|LO..HI|A,B,...",
                   help="core counts (1..256); a range LO..HI gives the powers of two in it, its ends and "
                        "the seeds' measured core counts (default 1..256)")
    p.add_argument("--variant", action="append", default=[], metavar="NAME",
                   help="a variant of the workload (repeat or comma-separate; default: all)")
    p.add_argument("--format", choices=("text", "json", "csv"), default="text")
    p.add_argument("--plot", metavar="FILE.png|FILE.svg", help="also plot ops/s against cores (needs matplotlib)")


def parse_cores(text: str, measured: list[int]) -> list[int]:
    """'26', '1,2,4' or 'LO..HI' (powers of two inside, the ends, and measured counts inside)."""
    def num(s: str) -> int:
        try:
            n = int(s)
        except ValueError:
            raise CheckerError(f"--cores {text!r}: {s!r} is not a whole number; write e.g. 26, 1,2,4 or 1..256")
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


def main(args: argparse.Namespace) -> int:
    try:
        return _run(args)
    except CheckerError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2


def _run(args: argparse.Namespace) -> int:
    if args.plot and Path(args.plot).suffix.lower() not in (".png", ".svg"):
        raise CheckerError(f"--plot {args.plot!r}: the file must end in .png or .svg")
    if args.plot:
        try:
            import matplotlib  # noqa: F401
        except ImportError:
            print("error: --plot needs matplotlib, an optional extra: pip install 'matplotlib>=3.5' "
                  "(or, in the checkout, pip install '.[plot]')", file=sys.stderr)
            return 2
    w = args.workload
    variants = _variants(args)
    measured = measured_points(w)
    cores = parse_cores(args.cores, [f["cores"] for f in measured])
    params, priors = calibrate(), load()["priors"]
    points = {v: [solve(w, v, c, params, priors) for c in cores] for v in variants}
    rows, ratios = validation()
    limit = largest_measured_cores(w)
    out = {"text": _text, "json": _json, "csv": _csv}[args.format](w, variants, cores, points, measured, rows,
                                                                      ratios, params, limit)
    sys.stdout.write(out)
    if args.plot:
        _plot(args.plot, w, variants, cores, points, measured, limit)
        print(f"plot written to {args.plot}", file=sys.stderr)
    return 0


def _extrapolated(c: int, limit: int) -> bool:
    return c > limit


def _text(w, variants, cores, points, measured, rows, ratios, params, limit) -> str:
    wl = WORKLOADS[w]
    buf = io.StringIO()
    unit = "us/op (single process: cores do not change it)" if wl.single_process else "ops/s"
    print(f"{w}: {wl.doc}. Predicted {unit}; speedup against {variants[0]}; the bottleneck lock and its "
          f"utilisation. * = extrapolated beyond the largest measured core count ({limit}).", file=buf)
    head = f"{'cores':>6} " + " ".join(f"{v:>14}" for v in variants)
    head += "  " + " ".join(f"{'x ' + v:>14}" for v in variants[1:]) + "  bottleneck"
    print(head, file=buf)
    for i, c in enumerate(cores):
        pts = [points[v][i] for v in variants]
        vals = [p.latency_us if wl.single_process else p.ops_per_s for p in pts]
        base = vals[0]
        speed = [(base / x if wl.single_process else x / base) for x in vals[1:]]
        line = f"{c:>5}{'*' if _extrapolated(c, limit) else ' '} " + " ".join(f"{x:>14,.1f}" for x in vals)
        line += "  " + " ".join(f"{s:>14.3f}" for s in speed)
        line += "  " + ", ".join(f"{p.variant}: {p.bottleneck or '-'} {p.utilisation:.0%}" for p in pts)
        print(line, file=buf)
    if measured:
        print("\nmeasured (seed figures) beside the prediction:", file=buf)
        for f in measured:
            p = solve(w, f["variant"], f["cores"], params, load()["priors"])
            pred = p.latency_us if f["unit"] == "us" else p.ops_per_s
            print(f"  seed {f['seed']} {f['variant']:>13} at {f['cores']:>3} cores: measured {f['value']:>12,.1f} "
                  f"predicted {pred:>12,.1f} {f['unit']}", file=buf)
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
    print("\nvalidation (every seed figure; cal = a calibration figure, solved exactly, not a test):", file=buf)
    print(f"  {'figure':<32} {'measured':>12} {'predicted':>12} {'error':>8}", file=buf)
    for r in rows:
        print(f"  {r.id:<32} {r.measured:>12,.1f} {r.predicted:>12,.1f} {r.error:>+8.2%} "
              f"{'cal' if r.calibrated else 'held out'}", file=buf)
    # The change (ratio - 1) is printed too: a ratio near 1 has a small relative error even when the
    # predicted change is far off, and the reader should see both.
    print(f"  {'ratio within a seed':<32} {'measured':>12} {'predicted':>12} {'error':>8}   change: measured "
          f"predicted", file=buf)
    for r in ratios:
        print(f"  {r.id:<32} {r.measured:>12.4f} {r.predicted:>12.4f} {r.error:>+8.2%} "
              f"{'cal     ' if r.calibrated else 'held out'} {r.measured - 1:>+8.1%} {r.predicted - 1:>+8.1%}",
              file=buf)
    fp = free_parameters(params)
    held = [r for r in ratios if not r.calibrated]
    worst = max((abs(r.error) for r in held), default=0.0)
    print(f"\n{len(fp)} free parameters for {len(rows)} figures ({len(ratios)} ratios, {len(held)} held out; "
          f"largest held-out ratio error {worst:.2%}):", file=buf)
    print("  " + ", ".join(f"{k}={v:.4g}" for k, v in fp.items()) + "  (microseconds)", file=buf)
    return buf.getvalue()


def _records(w, variants, cores, points, limit) -> list[dict]:
    out = []
    for v in variants:
        base = points[variants[0]]
        for p, b in zip(points[v], base):
            out.append({"workload": w, "variant": v, "cores": p.cores, "ops_per_s": p.ops_per_s,
                        "latency_us": p.latency_us, "speedup": p.ops_per_s / b.ops_per_s,
                        "bottleneck": p.bottleneck, "bottleneck_utilisation": p.utilisation,
                        "extrapolated": _extrapolated(p.cores, limit)})
    return out


def _json(w, variants, cores, points, measured, rows, ratios, params, limit) -> str:
    def row(r):
        return {"id": r.id, "measured": r.measured, "predicted": r.predicted, "error": r.error,
                "calibrated": r.calibrated}
    doc = {"workload": w, "variants": list(variants), "largest_measured_cores": limit,
           "points": _records(w, variants, cores, points, limit), "measured": measured,
           "validation": {"figures": [row(r) for r in rows], "ratios": [row(r) for r in ratios]},
           "free_parameters": free_parameters(params), "figures": len(rows),
           "batch_histograms": {"model": batch_histograms(), "seed_004_kernel_build": SEED_004_HISTOGRAM}}
    return json.dumps(doc, indent=2) + "\n"


def _csv(w, variants, cores, points, measured, rows, ratios, params, limit) -> str:
    recs = _records(w, variants, cores, points, limit)
    buf = io.StringIO()
    wr = csv.DictWriter(buf, fieldnames=list(recs[0]), lineterminator="\n")
    wr.writeheader()
    wr.writerows(recs)
    return buf.getvalue()


def _plot(path: str, w, variants, cores, points, measured, limit) -> None:
    import matplotlib
    matplotlib.use("Agg")  # no display; files only
    import matplotlib.pyplot as plt

    single = WORKLOADS[w].single_process
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for v in variants:
        ys = [p.latency_us if single else p.ops_per_s for p in points[v]]
        ax.plot(cores, ys, marker=".", label=f"{v} (predicted)")
    for f in measured:
        ax.scatter([f["cores"]], [f["value"]], marker="x", s=60, zorder=5, color="black")
        ax.annotate(f"seed {f['seed']} {f['variant']}", (f["cores"], f["value"]), fontsize=7,
                    xytext=(4, 4), textcoords="offset points")
    if limit and cores[-1] > limit:
        ax.axvspan(limit, cores[-1], color="0.9", zorder=0)
        ax.text(limit, ax.get_ylim()[1], " extrapolated", va="top", fontsize=8, color="0.4")
    ax.set_xscale("log", base=2)
    ax.set_xlabel("cores")
    ax.set_ylabel("us per op" if single else "ops/s")
    ax.set_title(f"{w}: predicted (lines), seed figures (x)")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
