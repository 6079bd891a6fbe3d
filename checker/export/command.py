# SPDX-License-Identifier: GPL-2.0-only
"""``python -m checker export SPEC --to promela --output FILE.pml``."""
from __future__ import annotations

import argparse
import sys

from checker.errors import CheckerError, UsageError


def add_arguments(p: argparse.ArgumentParser) -> None:
    """The ``export`` command's options."""
    p.add_argument("spec", metavar="SPEC", help="a built-in spec name, a spec file, or FILE.py:ClassName")
    p.add_argument("--set", action="append", default=[], metavar="NAME=VALUE",
                   help="set a parameter (one value each: the export is one parameter point; the others "
                        "take their defaults)")
    p.add_argument("--to", choices=("promela",), default="promela", help="the target language (promela)")
    p.add_argument("--output", metavar="FILE.pml", help="write the model to FILE (default: stdout)")
    p.add_argument("--expected-violations", action="store_true",
                   help="also assert the invariants the spec expects violated (a bug spec's bug), named "
                        "expected_violated_NAME: SPIN then reports them as errors, as it should")
    p.add_argument("--sometimes", action="store_true",
                   help="also assert that each sometimes property is never reached: SPIN then reports "
                        "it violated where it is reached")


def main(args: argparse.Namespace) -> int:
    """``export``: write one parameter point of a spec as a Promela model; the exit code."""
    import checker.loader as loader
    from checker.export.promela import export_promela
    from checker.language.compile import Model
    from checker.language.lint import lint
    from checker.language.model import resolve_params
    from checker.verify import check_sets_apply, own_sets, parse_set

    classes = loader.resolve([args.spec])
    if len(classes) != 1:
        raise UsageError(f"{args.spec} defines {len(classes)} specs ({', '.join(c.__name__ for c in classes)}); "
                         f"name one as FILE.py:ClassName")
    cls = classes[0]
    sets = parse_set(args.set)
    check_sets_apply(classes, sets)
    point = {}
    for name, values in own_sets(cls, sets).items():
        if len(values) != 1 or values[0] in ("default", "symbolic"):
            raise UsageError(f"--set {name}={','.join(map(str, values))}: export takes one value per parameter "
                             f"(one parameter point)")
        point[name] = values[0]
    model = Model(cls, resolve_params(cls, point))
    lint(model)
    exported = export_promela(model, sometimes=args.sometimes, expected_violations=args.expected_violations)
    if args.output is None:
        sys.stdout.write(exported.text)
        return 0
    from checker.report.write import write_atomic

    try:
        write_atomic(args.output, exported.text)
    except OSError as e:
        raise CheckerError(f"cannot write {args.output}: {e.strerror}") from None
    left_out = sum(1 for p in model.invariants if p.expect == "violated") if not args.expected_violations else 0
    print(f"wrote {args.output}: {model.name} at {model.params}, {exported.steps} steps, "
          f"{len(exported.assertions)} assertions"
          + (f" ({left_out} invariants the spec expects violated left out: --expected-violations adds them)"
             if left_out else ""))
    print(f"  SPIN stores the explorer's states without symmetry (--no-symmetry) + {exported.extra_states}; "
          f"check with:")
    print(f"  spin -o2 -a {args.output} && gcc -O2 -DSAFETY -o pan pan.c && ./pan -c0")
    return 0
