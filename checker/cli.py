"""``python -m checker``: verify and list specs.

Exit codes: 0 all as expected, 1 a violation (or an expected bug not found),
2 bad usage or a malformed spec, 3 inconclusive.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Sequence

from checker.errors import CheckerError
from checker.verify import ErrorInfo, Report


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # argparse's own errors are usage errors: exit 2
        self.print_usage(sys.stderr)
        print(f"error: {message}", file=sys.stderr)
        raise SystemExit(2)


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="python -m checker", description="countercheck: a model checker for the Linux "
                "kernel's concurrent counters.")
    sub = p.add_subparsers(dest="command", required=True, parser_class=_Parser)

    v = sub.add_parser("verify", help="check specs (all built-in specs by default)")
    v.add_argument("specs", nargs="*", metavar="SPEC",
                   help="a built-in spec name, a spec file, or FILE.py:ClassName")
    v.add_argument("--set", action="append", default=[], metavar="NAME=VALUE",
                   help="set a parameter: NAME=V, NAME=LO..HI (inclusive) or NAME=A,B; several form a "
                        "cross product")
    v.add_argument("--format", choices=("text", "json"), default="text")
    v.add_argument("--output", metavar="FILE", help="write the --format output to FILE; stdout keeps the "
                   "human summary")
    v.add_argument("--no-symmetry", action="store_true", help="turn CPU-symmetry reduction off")
    v.add_argument("--max-states", type=int, metavar="N", help="stop each exploration after N distinct states")
    v.add_argument("--timeout", type=float, metavar="S", help="stop each exploration after S seconds")
    v.add_argument("--traces", choices=("none", "failed", "bugs", "all"), default="bugs",
                   help="which traces the text report prints (default: failures and bugs found)")
    v.add_argument("--mode", choices=("explore", "prove", "all"), default="all",
                   help="explore the explore sweeps, prove the prove sweeps with Z3, or both (default)")
    v.add_argument("--bmc", type=int, metavar="K", help="also bounded-model-check every property to depth K "
                   "at the explore points (with --mode prove or all)")
    v.add_argument("--smt-timeout", type=float, metavar="S", default=60.0,
                   help="timeout of each Z3 query, in seconds (default 60; a timeout is inconclusive)")
    v.add_argument("--emit-smt", metavar="DIR", help="write every proof obligation as an SMT-LIB2 file to DIR")

    ls = sub.add_parser("list", help="show specs, parameters, properties and assumptions")
    ls.add_argument("specs", nargs="*", metavar="SPEC")

    from checker import bounds
    bounds.add_arguments(sub.add_parser("bounds", help="seed 001's rss error margins, each figure proved"))
    from checker import throughput
    throughput.add_arguments(sub.add_parser("throughput", help="predicted ops/s against cores for a workload"))
    from checker.export import command as export_command
    export_command.add_arguments(sub.add_parser("export", help="a spec at one parameter point as a Promela "
                                                "model for SPIN"))
    return p


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        if args.command == "list":
            return cmd_list(args)
        if args.command == "bounds":
            from checker.bounds import main as bounds_main
            return bounds_main(args)
        if args.command == "throughput":
            from checker.throughput import main as throughput_main
            return throughput_main(args)
        if args.command == "export":
            from checker.export.command import main as export_main
            return export_main(args)
        return cmd_verify(args)
    except CheckerError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2


def cmd_verify(args: argparse.Namespace) -> int:
    from checker import loader
    from checker.report import text
    from checker.verify import parse_set, verify

    if args.max_states is not None and args.max_states < 1:
        raise CheckerError("--max-states must be at least 1")
    if args.timeout is not None and args.timeout <= 0:
        raise CheckerError("--timeout must be positive")
    report = Report()
    spec_args: dict[str, str] = {}
    try:
        sets = parse_set(args.set)
        classes = loader.resolve(args.specs)
        for name in args.specs:
            for cls in loader.resolve([name]):
                spec_args[cls.spec_name] = name
        if args.bmc is not None and args.bmc < 0:
            raise CheckerError("--bmc must be at least 0")
        if args.smt_timeout is not None and args.smt_timeout <= 0:
            raise CheckerError("--smt-timeout must be positive")
        report = verify(classes, sets=sets, symmetry=not args.no_symmetry, max_states=args.max_states,
                        timeout=args.timeout, mode=args.mode, bmc=args.bmc, smt_timeout=args.smt_timeout,
                        emit_smt=Path(args.emit_smt) if args.emit_smt else None)
    except CheckerError as e:
        report.errors.append(ErrorInfo(e.message, e.file, e.line))

    to_file = args.output is not None
    human = text.render(report, traces=args.traces, spec_args=spec_args, errors=to_file)
    if args.format == "json":
        payload = json.dumps(report.to_json(), indent=2) + "\n"
        if args.output:
            _write(args.output, payload)
            sys.stdout.write(human)
        else:
            sys.stdout.write(payload)
            for e in report.errors:
                print(f"error: {_where(e)}{e.message}", file=sys.stderr)
    else:
        if args.output:
            _write(args.output, human)
            sys.stdout.write(text.summary_line(report) + "\n")
        else:
            sys.stdout.write(human)
        for e in report.errors:
            print(f"error: {_where(e)}{e.message}", file=sys.stderr)
    return report.exit_code


def _where(e: ErrorInfo) -> str:
    return f"{e.file}:{e.line}: " if e.file and e.line else (f"{e.file}: " if e.file else "")


def _write(path: str, payload: str) -> None:
    try:
        with open(path, "w", encoding="utf-8") as f:
            f.write(payload)
    except OSError as e:
        raise CheckerError(f"cannot write {path}: {e.strerror}") from None


def cmd_list(args: argparse.Namespace) -> int:
    from checker import loader
    from checker.report.listing import describe

    for cls in loader.resolve(args.specs):
        sys.stdout.write(describe(cls) + "\n")
    return 0
