# SPDX-License-Identifier: GPL-2.0-only
"""Lowering and C generation for every built-in spec's explore points: the Python half of building the
compiled engine's programs (issue 26 item 5, a cold ``verify``'s ``explore`` phase).

    python benchmarks/program_sources.py [SPEC ...] [--out SOURCES.c]

For each point of each spec's default explore sweep, as a bare ``verify`` plans them: ``lower`` (the
spec's steps run on symbols, with the kernel passes) and ``generate`` (the C text), timed apart, in one
process. ``--out`` writes every generated source, one after another, so that two trees can be compared
byte for byte (``cmp``). Points the compiled engine does not take (32-bit tearing, terms with no C
form) are counted and skipped. Wall seconds; run it on an idle machine.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from checker.compiled.codegen import generate  # noqa: E402
from checker.compiled.cterms import Untranslatable  # noqa: E402
from checker.compiled.lower import NotLowerable, lower  # noqa: E402
from checker.language.compile import Model  # noqa: E402
from checker.loader import builtin_specs  # noqa: E402
from checker.verify import param_points  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("specs", nargs="*", help="spec names (default: every built-in spec)")
    ap.add_argument("--out", type=Path, help="write every generated source here")
    args = ap.parse_args()
    sys.setrecursionlimit(100_000)  # (the lowering's terms nest deeply at hundreds of CPUs)
    specs = builtin_specs()
    out = args.out.open("w") if args.out else None
    lowered = generated = 0.0
    points = skipped = 0
    for name in args.specs or list(specs):
        for params in param_points(specs[name], {}):
            model = Model(specs[name], params)
            if getattr(model, "tearing", False):
                skipped += 1
                continue
            try:
                t0 = time.perf_counter()
                low = lower(model)
                t1 = time.perf_counter()
                source, _events = generate(low, True)
                t2 = time.perf_counter()
            except (NotLowerable, Untranslatable, RecursionError):
                skipped += 1
                continue
            lowered += t1 - t0
            generated += t2 - t1
            points += 1
            if out is not None:
                out.write(source)
    print(f"{points} points: lower {lowered:.1f} s, generate {generated:.1f} s ({skipped} not compiled)")


if __name__ == "__main__":
    main()
