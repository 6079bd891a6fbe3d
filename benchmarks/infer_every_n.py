# SPDX-License-Identifier: GPL-2.0-only
"""Claims proved for every CPU count: the spec's lemmas (--prover induction) vs inferred invariants (--prover infer).

    python benchmarks/infer_every_n.py [--spec NAME] [--set NAME=V,...] [--timeout S] [--out FILE]

For each built-in spec with a prove sweep, each point of the sweep: the claims
(invariants expected to hold, lemmas not counted) proved by the induction with
the spec's lemmas, and by the induction with the lemmas left out and inferred
invariants in their place; seconds for each; how many candidates were
generalised and kept. A point the any-N encoding cannot take is proved per N
with the lemmas in both columns (said so). ``--set`` narrows the sweep as
``verify --set`` does (one point of a long sweep at a time, several at once on
several cores). Measured, never asserted in tests.
"""
from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import z3  # noqa: E402

from checker.language.model import info  # noqa: E402
from checker.loader import resolve  # noqa: E402
from checker.prove import prove_checks  # noqa: E402
from checker.verify import own_sets, parse_set  # noqa: E402

SPECS = ("percpu_eager", "rss_split", "vmstat", "percpu_counter_tree")


def _claims(cls: type, checks: list) -> dict[tuple, dict[str, str]]:
    """Verdicts of the claims (not lemmas, not the engine's types / sum lemma) by point."""
    si = info(cls)
    out: dict[tuple, dict[str, str]] = {}
    for c in checks:
        if c.kind != "proof":
            continue
        p = si.properties.get(c.property)
        if p is None or p.lemma:
            continue
        key = tuple(sorted((k, str(v)) for k, v in c.params.items()))
        out.setdefault(key, {})[c.property] = c.verdict
    return out


def run(name: str, timeout: float, emit, sets: dict[str, tuple] | None = None) -> None:
    cls = resolve([name])[0]
    t0 = time.perf_counter()
    with_lemmas = prove_checks(cls, sets or {}, smt_timeout=timeout)
    t1 = time.perf_counter()
    first = _claims(cls, with_lemmas)  # said now: the inferred pass can take an hour a point
    emit(f"# {name} with lemmas: {sum(v == 'holds' for p in first.values() for v in p.values())}/"
         f"{sum(len(p) for p in first.values())} claims in {t1 - t0:.1f}s; the inferred pass follows")
    inferred = prove_checks(cls, sets or {}, smt_timeout=timeout, infer=True)
    t2 = time.perf_counter()
    a, b = _claims(cls, with_lemmas), _claims(cls, inferred)
    kept = {tuple(sorted((k, str(v)) for k, v in c.params.items())): (c.extra.get("inferred"), c.extra.get("candidates"),
                                                                      c.extra.get("method"))
            for c in inferred if c.kind == "proof"}
    total_a = total_b = n = 0
    for key in sorted(a):
        pa, pb = a[key], b.get(key, {})
        ha = sum(v == "holds" for v in pa.values())
        hb = sum(v == "holds" for v in pb.values())
        total_a, total_b, n = total_a + ha, total_b + hb, n + len(pa)
        point = " ".join(f"{k}={v}" for k, v in key if k not in ("memory", "sb_depth", "lkmm_history")
                         and ".." in v or k in ("variant", "limited", "batch"))
        inf, asked, method = kept.get(key, (None, None, None))
        lost = sorted(k for k, v in pa.items() if v == "holds" and pb.get(k) != "holds")
        emit(f"{name:<20} {point:<48} lemmas {ha}/{len(pa)}  inferred {hb}/{len(pb)}"
             + (f"  ({len(inf)} of {asked} candidates kept)" if inf is not None else
                f"  ({method}: the any-N encoding does not apply; both columns use the lemmas)")
             + (f"  open without lemmas: {', '.join(lost)}" if lost else ""))
    emit(f"{name:<20} all points: with lemmas {total_a}/{n} in {t1 - t0:.1f}s; lemmas left out, inferred "
         f"{total_b}/{n} in {t2 - t1:.1f}s")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--spec")
    ap.add_argument("--timeout", type=float, default=20.0)
    ap.add_argument("--set", action="append", default=[], metavar="NAME=V,...",
                    help="narrow the prove sweep, as verify --set (values as the spec names them)")
    ap.add_argument("--out")
    args = ap.parse_args()
    out = open(args.out, "a") if args.out else None

    def emit(line: str) -> None:
        print(line, flush=True)
        if out:
            out.write(line + "\n")
            out.flush()

    emit(f"# z3 {z3.get_version_string()}, python {platform.python_version()}, load {os.getloadavg()[0]:.1f}, "
         f"smt/spacer timeout {args.timeout:g}s")
    for name in SPECS:
        if args.spec and name != args.spec:
            continue
        cls = resolve([name])[0]
        sets = own_sets(cls, parse_set(args.set)) if args.set else None
        run(name, args.timeout, emit, sets)


if __name__ == "__main__":
    main()
