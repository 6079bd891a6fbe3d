# SPDX-License-Identifier: GPL-2.0-only
"""``python -m checker litmus [FILE|DIR ...]``: run herd7 C litmus tests under sc, tso and lkmm.

With no files, the kernel's tests that come with countercheck run (tests/litmus/, installed as package
data). One line per test: LKMM's stated result, ours under each model, and whether the lkmm column
agrees. ``--table FILE`` also writes the markdown table (``docs/litmus-table.md``: only the part
between its markers is replaced). Exit codes: 0 every test decided and the lkmm column (when run) agrees with LKMM, 1 some
lkmm verdict differs from LKMM's, 2 a malformed test (file and line) or bad usage, 3 inconclusive.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from checker.errors import UsageError

#: The models, as --memory names them (checker.litmus.run, imported when the command runs, has the rest).
MODELS = ("sc", "tso", "lkmm")


def add_arguments(p: argparse.ArgumentParser) -> None:
    """The ``litmus`` command's options."""
    p.add_argument("files", nargs="*", metavar="FILE", help=".litmus files or directories of them (default: the "
                   "kernel's tests that come with countercheck, tests/litmus/)")
    p.add_argument("--memory", default="lkmm,tso,sc", metavar="MODELS",
                   help="the memory models to run, comma-separated, of sc, tso, lkmm (default: all three)")
    p.add_argument("--table", metavar="FILE", help="write the markdown table to FILE (between its markers if "
                   "it has them; docs/litmus-table.md)")
    p.add_argument("--format", choices=("text", "json", "markdown"), default="text")
    p.add_argument("--traces", action="store_true", help="print, under each model where it is reached, the "
                   "shortest run to the final state the exists clause asks about")
    p.add_argument("--max-states", type=int, metavar="N", help="stop each exploration after N states "
                   "(inconclusive)")
    p.add_argument("--timeout", type=float, metavar="S", help="stop each exploration after S seconds "
                   "(inconclusive)")


def models_of(text: str) -> list[str]:
    """The memory models of a ``--memory`` list, checked and without repeats."""
    got = [m.strip() for m in text.split(",") if m.strip()]
    bad = [m for m in got if m not in MODELS]
    if bad or not got:
        raise UsageError(f"--memory {text}: the models are {', '.join(MODELS)} (comma-separated, e.g. "
                         f"--memory lkmm,tso)")
    return list(dict.fromkeys(got))


def main(args: argparse.Namespace) -> int:
    """``litmus``: run the tests under each model, print the lines and the summary; the exit code."""
    from checker.litmus import run as R

    models = models_of(args.memory)
    if args.max_states is not None and args.max_states < 1:
        raise UsageError("--max-states must be at least 1")
    if args.timeout is not None and not args.timeout > 0:
        raise UsageError(f"--timeout must be a positive number of seconds, not {args.timeout}")
    if args.table:
        import checker.preflight as preflight

        preflight.writable_file("--table", args.table)
    lowered = R.prepare(R.collect(args.files))  # every test parsed and lowered before any is run

    def show(row: R.Row) -> None:
        if args.format == "text":
            print(R.text_line(row, models), flush=True)
            for m in models if args.traces else ():
                o = row.outcomes[m]
                if o.trace:
                    print(f"  {row.name} under {m}: the exists clause reached after {len(o.trace)} steps (shortest)")
                    print("\n".join("    " + t for t in o.trace), flush=True)

    rows = R.run_tests(lowered, models, max_states=args.max_states, timeout=args.timeout, on_row=show)
    table = R.render_markdown(rows, models)
    if args.format == "json":
        print(json.dumps([{"test": r.name, "file": r.file, "lkmm_says": r.lkmm_says,
                           "agreement": r.agreement() if "lkmm" in models else None,
                           "outcomes": {m: vars(o) for m, o in r.outcomes.items()}} for r in rows], indent=2))
    elif args.format == "markdown":
        sys.stdout.write(table)
    else:
        for m in models:
            s = R.summary(rows, m)
            print(f"{m}: {s['agrees']} agree with LKMM, {s['stronger']} stronger, {s['weaker']} weaker, "
                  f"{s['-']} without a verdict ({len(rows)} tests)")
    if args.table:
        path = Path(args.table)
        text = R.update_document(path, table)
        from checker.report.write import write_atomic

        try:
            write_atomic(str(path), text)
        except OSError as e:
            raise UsageError(f"cannot write {path}: {e.strerror}") from None
    verdicts = [o.verdict for r in rows for o in r.outcomes.values()]
    if "inconclusive" in verdicts:
        return 3
    if "error" in verdicts:
        return 1
    if "lkmm" in models and any(r.agreement() in ("stronger", "weaker") for r in rows):
        return 1
    return 0
