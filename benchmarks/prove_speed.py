# SPDX-License-Identifier: GPL-2.0-only
"""Z3 backend timings: the any-N proofs, the per-N fallback, witnesses.

    python benchmarks/prove_speed.py [--out FILE]

For each any-N proof: obligations, solver seconds and wall seconds. For the
per-N fallback (what a spec the any-N encoding cannot express would cost):
the same proofs of percpu_eager at fixed N, seconds per N. For witnesses:
replay time at each CPU count. Measured, never asserted in tests.
"""
from __future__ import annotations

import argparse
import platform
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import z3  # noqa: E402

from checker.prove import prove_checks  # noqa: E402
from checker.prove.encoding import PerN  # noqa: E402
from checker.prove.inductive import prove_invariants  # noqa: E402
from checker.prove.solver import Solver  # noqa: E402
from checker.language.compile import Model  # noqa: E402
from checker.language.model import resolve_params  # noqa: E402
from checker.specs.percpu_eager import PercpuEager  # noqa: E402
from checker.specs.rss_split import RssSplit  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out")
    ap.add_argument("--per-n", default="1,2,4,8,16,32", help="CPU counts for the per-N fallback timing")
    args = ap.parse_args()
    rows = [f"# Z3 backend timings, z3 {z3.get_version_string()}, python {platform.python_version()}"]

    def emit(line: str) -> None:
        rows.append(line)
        print(line, flush=True)

    emit("## any-N proofs (one run proves every point of the ranges)")
    emit(f"{'spec':<14} {'params':<58} {'proofs':>6} {'obligations':>11} {'solver s':>9} {'wall s':>7}")
    total = 0.0
    for cls in (PercpuEager, RssSplit):
        t0 = time.perf_counter()
        checks = [c for c in prove_checks(cls, smt_timeout=300) if c.kind == "proof"]
        wall = time.perf_counter() - t0
        total += wall
        by_point: dict[str, list] = {}
        for c in checks:
            by_point.setdefault(" ".join(f"{k}={v}" for k, v in c.params.items()), []).append(c)
        for point, cs in by_point.items():
            ok = sum(c.verdict == "holds" for c in cs)
            emit(f"{cls.spec_name:<14} {point:<58} {ok:>3}/{len(cs):<2} {sum(c.extra['obligations'] for c in cs):>11} "
                 f"{sum(c.extra['solver_seconds'] for c in cs):>9.2f} {cs[0].seconds:>7.2f}")
    emit(f"every any-N proof, wall seconds in total (witnesses included): {total:.2f}")

    emit("## per-N fallback: percpu_eager, kernel batch, ops 64, no readers/summers")
    emit(f"{'ncpus':>5} {'obligations':>11} {'seconds':>8}")
    for n in (int(x) for x in args.per_n.split(",")):
        model = Model(PercpuEager, resolve_params(PercpuEager, {"ncpus": n, "ops": 64, "readers": 0, "summers": 0}))
        solver = Solver(300)
        t0 = time.perf_counter()
        proofs = prove_invariants(PerN(model), list(model.properties), solver, "bench")
        dt = time.perf_counter() - t0
        assert all(p.verdict == "holds" for p in proofs.values()), {k: p.reason for k, p in proofs.items()}
        emit(f"{n:>5} {sum(p.obligations for p in proofs.values()):>11} {dt:>8.2f}")

    emit("## witnesses by construction (percpu_eager every_cpu_fills_its_local)")
    for c in prove_checks(PercpuEager, {"batch": ("default",)}, smt_timeout=300):
        if c.extra.get("method") == "construction" and c.kind == "sometimes":
            emit(f"ncpus={c.params['ncpus']:<4} batch={c.params['batch']:<4} steps={c.extra['steps']:>7} "
                 f"seconds={c.seconds:.2f} bound reached={c.extra['final']['exact']}")
    if args.out:
        Path(args.out).write_text("\n".join(rows) + "\n")


if __name__ == "__main__":
    main()
