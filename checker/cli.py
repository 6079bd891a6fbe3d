# SPDX-License-Identifier: GPL-2.0-only
"""``python -m checker``: verify and list specs.

Exit codes: 0 all as expected, 1 a violation (or an expected bug not found),
2 bad usage or a malformed spec, 3 inconclusive.
"""
from __future__ import annotations

import argparse
import contextlib
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Sequence

from checker.errors import CheckerError
from checker.verify import ErrorInfo, Report

if TYPE_CHECKING:
    from checker.result import Check
    from checker.simulate.checks import SimulateOptions

#: --format: the human report, the JSON contract, JUnit XML, SARIF 2.1.0.
FORMATS = ("text", "json", "junit", "sarif")


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
    v.add_argument("--format", choices=FORMATS, default="text")
    v.add_argument("--output", metavar="FILE", help="write the --format output to FILE; stdout keeps the "
                   "human summary")
    for fmt, what in (("junit", "JUnit XML"), ("sarif", "SARIF 2.1.0"), ("json", "JSON")):
        # CI artifacts beside the log: --format text --junit F --sarif F
        v.add_argument(f"--{fmt}", metavar="FILE", help=f"also write the {what} report to FILE")
    v.add_argument("--no-symmetry", action="store_true", help="turn CPU-symmetry reduction off")
    v.add_argument("--max-states", type=int, metavar="N", help="stop each exploration after N distinct states")
    v.add_argument("--timeout", type=float, metavar="S", help="stop each exploration after S seconds")
    v.add_argument("--deadline", type=float, metavar="S",
                   help="end the whole command after S seconds (default: $COUNTERCHECK_DEADLINE, else none): "
                        "what was not decided is inconclusive (timeout), every report is written, exit 3")
    v.add_argument("--jobs", type=int, metavar="N",
                   help="explore each point on N processes (the same states, verdicts and traces as 1); with "
                        "--cluster, N Ray workers (default: the cluster's CPUs)")
    v.add_argument("--cluster", metavar="ray[://HOST:PORT]",
                   help="explore on Ray: 'ray' starts a local Ray here, ray://HOST:PORT joins a running cluster "
                        "(needs Ray: pip install 'ray>=2.9')")
    ck = v.add_mutually_exclusive_group()
    ck.add_argument("--checkpoint", metavar="DIR", help="save every whole BFS level of each exploration in DIR")
    ck.add_argument("--resume", metavar="DIR", help="continue the explorations saved in DIR (and keep saving "
                    "there): the same counts, verdicts and traces as an uninterrupted run")
    v.add_argument("--fingerprint", action="store_true",
                   help="keep 64-bit hashes of visited states, not the states: less memory, and the report gives "
                        "the probability that a hash collision left a state unexplored")
    v.add_argument("--engine", choices=("auto", "compiled", "interpreted"), default="auto",
                   help="the explorer: generated C (compiled), the Python interpreter, or auto (default: compiled "
                        "once a point outgrows the interpreter and a C compiler, $CC or cc, is found)")
    v.add_argument("--memory", metavar="MODEL", help="the memory model of specs with access= annotations: sc "
                   "(default), tso (x86-TSO store buffers) or lkmm (the kernel memory model, approximated; "
                   "docs/weak-memory.md), or several, e.g. sc,tso,lkmm; as --set memory=MODEL")
    v.add_argument("--max-memory", metavar="SIZE", type=_size,
                   help="memory budget of each compiled exploration, e.g. 4G or 512M (default: half the memory "
                        "available); reaching it is inconclusive")
    v.add_argument("--traces", choices=("none", "failed", "bugs", "all"), default="bugs",
                   help="which traces the text report prints (default: failures and bugs found)")
    v.add_argument("--mode", choices=("explore", "prove", "all"), default="all",
                   help="explore the explore sweeps, prove the prove sweeps with Z3, or both (default)")
    v.add_argument("--bmc", type=int, metavar="K", help="also bounded-model-check every property to depth K "
                   "at the explore points (with --mode prove or all)")
    v.add_argument("--smt-timeout", type=float, metavar="S", default=60.0,
                   help="timeout of each Z3 query, in seconds (default 60; a timeout is inconclusive)")
    v.add_argument("--emit-smt", metavar="DIR", help="write every proof obligation as an SMT-LIB2 file to DIR")
    v.add_argument("--simulate", type=int, metavar="RUNS", help="instead of exploring and proving, take RUNS "
                   "seeded random walks at the explore points (--set); a violation is a real, shrunk trace, "
                   "anything not found is inconclusive, never holds")
    v.add_argument("--depth", type=int, metavar="D", help="with --simulate: steps per walk (default 1000)")
    v.add_argument("--seed", type=int, metavar="S", help="with --simulate: the seed (default 0; the same seed "
                   "gives the same runs and traces)")
    v.add_argument("--quiet", action="store_true", help="no live progress on stderr (shown only on a terminal)")
    v.add_argument("--coverage", action="store_true", help="count transitions per action (without reductions) "
                   "and flag actions that never fire")

    ls = sub.add_parser("list", help="show specs, parameters, properties and assumptions")
    ls.add_argument("specs", nargs="*", metavar="SPEC")

    from checker import scaffold
    scaffold.add_arguments(sub.add_parser("new", help="write a commented starter spec NAME.py that verifies as it is"))
    from checker import bounds
    bounds.add_arguments(sub.add_parser("bounds", help="seed 001's rss error margins, each figure proved"))
    from checker import graphcmd
    graphcmd.add_arguments(sub.add_parser("graph", help="export the state graph (dot, graphml, json)"))
    from checker import throughput
    throughput.add_arguments(sub.add_parser("throughput", help="predicted ops/s against cores for a workload"))
    from checker.export import command as export_command
    export_command.add_arguments(sub.add_parser("export", help="a spec at one parameter point as a Promela "
                                                "model for SPIN"))
    from checker.litmus import command as litmus_command
    litmus_command.add_arguments(sub.add_parser("litmus", help="herd7 C litmus tests (the kernel's, by default) "
                                                "under sc, tso and lkmm, against LKMM's results"))
    return p


def _size(text: str) -> int:
    """``4G``, ``512M``, ``100000K`` or bytes."""
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}
    t = text.strip().upper().removesuffix("B")
    try:
        n = float(t[:-1]) * units[t[-1]] if t and t[-1] in units else float(t)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: write a size such as 4G, 512M or 1000000") from None
    if n < 1 << 20:
        raise argparse.ArgumentTypeError(f"{text!r}: at least 1M")
    return int(n)


def main(argv: Sequence[str] | None = None) -> int:
    from checker.interrupts import interruptible

    args = build_parser().parse_args(argv)
    # SIGTERM and SIGHUP end every command as Ctrl-C does; Z3's queries stop at once.
    with interruptible(uses_z3=_uses_z3(args)):
        return _dispatch(args)


def _uses_z3(args: argparse.Namespace) -> bool:
    if args.command == "bounds":
        return True
    if args.command != "verify":
        return False
    return args.simulate is None and (args.mode != "explore" or args.bmc is not None)


def _dispatch(args: argparse.Namespace) -> int:
    from checker import deadline, interrupts
    from checker.interrupts import as_interrupt

    try:
        with as_interrupt(), deadline.armed(deadline.seconds(getattr(args, "deadline", None)),
                                            fallback=lambda: _killed_report(args)):
            if args.command != "verify":
                interrupts.check()  # a signal while importing (checker.early); verify reports what it skips
            return _command(args)
    except CheckerError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:  # an interrupted run: inconclusive, never a pass
        saved = getattr(args, "checkpoint", None) or getattr(args, "resume", None)
        print(_stopped() + (f"; continue with --resume {saved}" if saved else ""), file=sys.stderr)
        return 3
    except MemoryError:  # outside the explorer (which reports its own as a limit): still no traceback
        print("error: out of memory; lower --set values or --max-states, or use --mode prove or --simulate",
              file=sys.stderr)
        return 3


def _command(args: argparse.Namespace) -> int:
    if args.command == "list":
        return cmd_list(args)
    if args.command == "new":
        from checker.scaffold import main as new_main
        return new_main(args)
    if args.command == "bounds":
        from checker.bounds import main as bounds_main
        return bounds_main(args)
    if args.command == "graph":
        from checker.graphcmd import main as graph_main
        return graph_main(args)
    if args.command == "throughput":
        from checker.throughput import main as throughput_main
        if getattr(args, "plot", None):
            from checker import preflight
            preflight.writable_file("--plot", args.plot)
        return throughput_main(args)
    if args.command == "export":
        from checker.export.command import main as export_main
        return export_main(args)
    if args.command == "litmus":
        from checker.litmus.command import main as litmus_main
        return litmus_main(args)
    return cmd_verify(args)


def _check_verify_flags(args: argparse.Namespace) -> list[str]:
    """Refuse, before any work, every flag value or combination that cannot mean anything; the notes to print."""
    from checker import preflight
    from checker.loader import input_files
    from checker.report.write import refuse_clashes, remove_stale

    def positive(flag: str, v: float | None) -> None:
        if v is not None and not v > 0:  # `not >` is also true of nan
            raise CheckerError(f"{flag} must be a positive number of seconds, not {v}")

    if args.max_states is not None and args.max_states < 1:
        raise CheckerError("--max-states must be at least 1")
    positive("--timeout", args.timeout)
    positive("--smt-timeout", args.smt_timeout)
    if args.jobs is not None and args.jobs < 1:
        raise CheckerError("--jobs must be at least 1")
    if args.fingerprint and (args.jobs or 1) > 1:
        raise CheckerError("--fingerprint works with one process: drop --jobs or --fingerprint")
    if args.bmc is not None and args.bmc < 0:
        raise CheckerError("--bmc must be at least 0")
    if args.bmc is not None and args.mode == "explore":
        raise CheckerError("--bmc runs Z3: use it with --mode prove or --mode all, not --mode explore")
    if args.emit_smt is not None and args.mode == "explore":
        raise CheckerError("--emit-smt writes Z3's proof obligations: use it with --mode prove or --mode all")
    if args.simulate is None and args.mode == "prove":
        for flag, value in (("--checkpoint", args.checkpoint), ("--resume", args.resume),
                            ("--fingerprint", args.fingerprint or None)):
            if value is not None:
                raise CheckerError(f"{flag} is for exploring; --mode prove does not explore")
    for flag in ("output", "json", "junit", "sarif"):
        if getattr(args, flag):
            preflight.writable_file(f"--{flag}", getattr(args, flag))
    refuse_clashes(_report_paths(args), input_files(args.specs))
    remove_stale(p for _, p in _report_paths(args))  # no old report is read as this run's, whatever happens next
    for flag in ("checkpoint", "emit_smt"):
        if getattr(args, flag):
            preflight.directory(f"--{flag.replace('_', '-')}", getattr(args, flag))
    if args.resume:
        preflight.resumable(args.resume)
    notes = []
    if args.cluster is not None:  # before any work: say how to install Ray, or how to write the address
        from checker import cluster

        address = cluster.parse_cluster(args.cluster)
        cluster.import_ray()
        if args.jobs is not None and args.simulate is None and args.mode != "prove":
            cluster.connect(address)
            args.jobs, note = preflight.cap_jobs(args.jobs, cluster.cluster_cpus(), "the Ray cluster has")
            notes.append(note)
    elif args.jobs is not None:
        args.jobs, note = preflight.cap_jobs(args.jobs, preflight.local_cores(), "this machine has")
        notes.append(note)
    return [n for n in notes if n]


def _report_paths(args: argparse.Namespace) -> list[tuple[str, str]]:
    """(flag, path) of every report file the run writes."""
    return [(f"--{f}", getattr(args, f)) for f in ("output", "json", "junit", "sarif") if getattr(args, f)]


def _stopped() -> str:
    from checker import interrupts

    return "deadline reached" if interrupts.cause() == interrupts.DEADLINE else "interrupted"


def _killed_report(args: argparse.Namespace) -> None:
    """The watchdog's reports (``checker.deadline``), for a command stuck past its deadline: every requested
    file, with nothing decided."""
    if args.command == "verify":
        why = "the run did not stop at its deadline (stuck in a C call?) and was killed: nothing it decided is known"
        report = Report(interrupted=True, warnings=[why])
        _emit_verify(args, report, {}, streamed=False)


def cmd_verify(args: argparse.Namespace) -> int:
    from checker import interrupts, loader
    from checker.interrupts import as_interrupt
    from checker.report import text
    from checker.report.progress import Progress
    from checker.verify import parse_set, verify

    for note in _check_verify_flags(args):
        print(note, file=sys.stderr)
    report = Report()
    spec_args: dict[str, str] = {}
    progress = Progress(sys.stderr, quiet=args.quiet)
    # The human report goes to stdout unless stdout carries --format's payload: then each check's
    # line is printed as soon as it is decided, and the rest (traces, summary) at the end.
    stream = args.format == "text" or args.output is not None

    stdout = sys.stdout

    def on_check(c: "Check") -> None:
        progress.clear()
        stdout.write(text.check_line(c) + "\n")
        stdout.flush()

    # While specs load and run, a print() in spec code goes to stderr: stdout may be --format's payload.
    spec_output = contextlib.ExitStack()
    spec_output.enter_context(contextlib.redirect_stdout(sys.stderr))
    # main() made SIGINT, SIGTERM and SIGHUP raise KeyboardInterrupt: the run ends with what it decided.
    try:
        sets = parse_set(args.set)
        classes = loader.resolve(args.specs)
        named = []  # specs the user named one by one: checking nothing there is an error, not a warning
        for name in args.specs:
            resolved = loader.resolve([name])
            for cls in resolved:
                spec_args[cls.spec_name] = name
            if len(resolved) == 1:
                named.append(resolved[0].spec_name)
        with as_interrupt():  # an interrupt wrapped in another exception (ctypes) is still one
            report = verify(classes, sets=sets, symmetry=not args.no_symmetry, max_states=args.max_states,
                            timeout=args.timeout, mode=args.mode, bmc=args.bmc, smt_timeout=args.smt_timeout,
                            emit_smt=Path(args.emit_smt) if args.emit_smt else None, jobs=args.jobs,
                            simulate=_simulate_options(args), progress=progress, fingerprint=args.fingerprint,
                            coverage=args.coverage, cluster=args.cluster,
                            checkpoint=Path(args.checkpoint or args.resume) if (args.checkpoint or args.resume)
                            else None, resume=args.resume is not None, named=named, engine=args.engine,
                            max_memory=args.max_memory, memory=args.memory,
                            on_check=on_check if stream else None,
                            on_note=lambda text: print(text, file=sys.stderr, flush=True))
    except CheckerError as e:
        report.errors.append(ErrorInfo(e.message, e.file, e.line))
    except KeyboardInterrupt:  # before the run started (loading the specs): nothing decided
        report.interrupted = True
    finally:
        spec_output.close()
        progress.clear()
    if interrupts.pending():  # a signal the run noted and did not raise (checker.early): still not a pass
        report.interrupted = True
    if report.interrupted:
        saved = args.checkpoint or args.resume
        print(f"{_stopped()}: what was not decided is inconclusive ({interrupts.cause()})"
              + (f"; continue with --resume {saved}" if saved else ""), file=sys.stderr)
    with interrupts.shielded():  # a second Ctrl-C, or the deadline, does not cut a report in half
        failed = _emit_verify(args, report, spec_args, streamed=stream)
    return 2 if failed else report.exit_code  # a requested report lost is an error, whatever the verdicts


def _emit_verify(args: argparse.Namespace, report: Report, spec_args: dict[str, str], *,
                 streamed: bool) -> list[str]:
    """Every output the user asked for: the files first (they are what CI keeps), then stdout. The files
    that could not be written, one line each (every other file is written all the same)."""
    from checker.report import text
    from checker.report.write import write_all

    human = text.render(report, traces=args.traces, spec_args=spec_args, errors=args.output is not None)
    rest = text.render(report, traces=args.traces, spec_args=spec_args, errors=args.output is not None,
                       check_lines=False)
    files = [(f"--{fmt}", getattr(args, fmt), render_as(fmt, report, spec_args))
             for fmt in ("junit", "sarif", "json") if getattr(args, fmt)]
    errors = [f"error: {_where(e)}{e.message}" for e in report.errors]
    if args.format != "text":
        payload = render_as(args.format, report, spec_args)
        if args.output:
            files.append(("--output", args.output, payload))
            out, errors = rest, []  # the errors are in the human summary on stdout
        else:
            out = payload
            # stdout is the payload: the human lines go to stderr
            errors = [f"warning: {w}" for w in report.warnings] + errors
    elif args.output:
        files.append(("--output", args.output, human))
        out = text.summary_line(report) + "\n"
    else:
        out = rest if streamed else human
    failed = write_all(files)
    sys.stdout.write(out)
    sys.stdout.flush()
    for line in errors + [f"error: {f}" for f in failed]:
        print(line, file=sys.stderr)
    return failed


def render_as(fmt: str, report: Report, spec_args: dict[str, str]) -> str:
    """A machine-readable rendering of the report: the JSON contract, JUnit XML or SARIF."""
    if fmt == "junit":
        from checker.report import junit
        return junit.render(report, spec_args=spec_args)
    if fmt == "sarif":
        from checker.report import sarif
        return json.dumps(sarif.render(report, spec_args=spec_args), indent=2) + "\n"
    return json.dumps(report.to_json(), indent=2) + "\n"

def _simulate_options(args: argparse.Namespace) -> "SimulateOptions | None":
    from checker.simulate.checks import DEFAULT_DEPTH, SimulateOptions

    if args.simulate is None:
        if args.depth is not None or args.seed is not None:
            raise CheckerError("--depth and --seed go with --simulate RUNS, e.g. --simulate 100 --depth 500 --seed 1")
        return None
    if args.simulate < 1:
        raise CheckerError("--simulate must be at least 1 (the number of random walks)")
    if args.mode == "prove":
        raise CheckerError("--simulate takes random walks instead of exploring and proving: it cannot prove; drop "
                           "--mode prove, or --simulate")
    for flag, value in (("--bmc", args.bmc), ("--max-states", args.max_states), ("--emit-smt", args.emit_smt),
                        ("--jobs", args.jobs if args.jobs != 1 else None), ("--cluster", args.cluster),
                        ("--checkpoint", args.checkpoint), ("--resume", args.resume),
                        ("--fingerprint", args.fingerprint or None)):
        if value is not None:
            raise CheckerError(f"{flag} is for exploring and proving; --simulate replaces both (use --depth, "
                               f"--seed and --timeout with it)")
    if args.depth is not None and args.depth < 1:
        raise CheckerError("--depth must be at least 1")
    if args.seed is not None and args.seed < 0:
        raise CheckerError("--seed must be at least 0")
    return SimulateOptions(args.simulate, DEFAULT_DEPTH if args.depth is None else args.depth,
                           0 if args.seed is None else args.seed)


def _where(e: ErrorInfo) -> str:
    return f"{e.file}:{e.line}: " if e.file and e.line else (f"{e.file}: " if e.file else "")


def cmd_list(args: argparse.Namespace) -> int:
    from checker import loader
    from checker.report.listing import describe

    # every built-in spec, the on-demand deep sweeps included, unless some are named
    for cls in loader.resolve(args.specs) if args.specs else loader.builtin_specs().values():
        sys.stdout.write(describe(cls) + "\n")
    return 0
