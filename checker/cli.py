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
from typing import TYPE_CHECKING, Any, Callable, Sequence

from checker.errors import CheckerError
from checker.invocation import invoked_as
from checker.report.style import COLOR_CHOICES
from checker.verify import ErrorInfo, Report
from checker.version import version

if TYPE_CHECKING:
    from checker.report.style import Style
    from checker.result import Check
    from checker.compiled.swarm import SwarmOptions
    from checker.simulate.checks import SimulateOptions

#: --format: the human report, the JSON contract, JUnit XML, SARIF 2.1.0, KTAP version 1.
FORMATS = ("text", "json", "junit", "sarif", "ktap")


class _Parser(argparse.ArgumentParser):
    def __init__(self, *args: Any, **kw: Any) -> None:
        kw.setdefault("allow_abbrev", False)  # --max-st 10 is an error, never --max-states
        super().__init__(*args, **kw)

    def error(self, message: str) -> None:  # argparse's own errors are usage errors: exit 2
        self.print_usage(sys.stderr)
        print(f"error: {message}", file=sys.stderr)
        raise SystemExit(2)


EXIT_CODES = """exit codes:
  0  everything as expected (every property as declared, every planted bug found)
  1  a property violated, or an expected bug not found
  2  bad usage, a malformed spec, or nothing checked
  3  inconclusive: a limit, Z3 unknown, an interrupt, out of memory (never a pass)"""

VERIFY_EXAMPLES = """examples:
  {prog} verify                                   every built-in spec
  {prog} verify percpu_eager --set ncpus=2 -v     one spec at 2 CPUs, a line per check
  {prog} verify my_spec.py --mode explore -x      explore only, stop at the first failure
  {prog} verify -k "eager and not fold"           the checks whose id (spec.property) matches
  {prog} verify eager_fold_gt --traces bugs       also the traces of the bugs found as expected
  {prog} verify --junit junit.xml --sarif r.sarif CI: the log on stdout, the reports as files"""


def build_parser(prog: str | None = None) -> argparse.ArgumentParser:
    """The argparse parser of the command and its subcommands; ``prog`` is the name usage lines show."""
    prog = prog or invoked_as()
    p = _Parser(prog=prog, description="countercheck: a model checker for the Linux kernel's concurrent "
                "counters.", epilog=f"{EXIT_CODES}\n\nrun `{prog} COMMAND --help` for a command's options;\n"
                f"`{prog} man` prints the manual page.", formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--version", action="version", version=f"countercheck-kernel {version()}",
                   help="print the version and exit")
    sub = p.add_subparsers(dest="command", required=True, parser_class=_Parser, metavar="COMMAND")

    v = sub.add_parser("verify", help="check specs (all built-in specs by default)",
                       description="Explore each spec's parameter sweep, prove its prove sweep with Z3, and\n"
                                   "report a line per spec, then the failures, the list of what failed and a summary.",
                       epilog=f"{EXIT_CODES}\n\n{VERIFY_EXAMPLES.format(prog=prog)}",
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    _verify_arguments(v)

    ls = sub.add_parser("list", help="show specs, parameters, properties and assumptions")
    ls.add_argument("specs", nargs="*", metavar="SPEC")

    import checker.scaffold as scaffold
    scaffold.add_arguments(sub.add_parser("new", help="write a commented starter spec NAME.py that verifies as it is"))
    import checker.bounds as bounds
    bounds.add_arguments(sub.add_parser("bounds", help="seed 001's rss error margins, each figure proved"))
    import checker.graphcmd as graphcmd
    graphcmd.add_arguments(sub.add_parser("graph", help="export the state graph (dot, graphml, json)"))
    import checker.throughput as throughput
    throughput.add_arguments(sub.add_parser("throughput", help="predicted ops/s against cores for a workload"))
    from checker.export import command as export_command
    export_command.add_arguments(sub.add_parser("export", help="a spec at one parameter point as a Promela "
                                                "model for SPIN"))
    from checker.litmus import command as litmus_command
    litmus_command.add_arguments(sub.add_parser("litmus", help="herd7 C litmus tests (the kernel's, by default) "
                                                "under sc, tso and lkmm, against LKMM's results"))
    comp = sub.add_parser("completion", help="print a shell completion script (bash, zsh or tcsh)",
                          description="Print a static completion script: e.g. "
                                      f"`{prog} completion bash > ~/.local/share/bash-completion/completions/"
                                      "countercheck-kernel`. Needs shtab: pip install 'countercheck-kernel[completion]'.")
    comp.add_argument("shell", choices=("bash", "zsh", "tcsh"))
    mp = sub.add_parser("man", help="print the manual page (roff), generated from these options")
    mp.add_argument("--output", metavar="FILE", help="write it to FILE (e.g. docs/countercheck-kernel.1)")
    return p


def _verify_arguments(v: argparse.ArgumentParser) -> None:
    """verify's options, in groups: what to check, output, limits, how to explore, proofs, simulation."""
    what = v.add_argument_group("what to check")
    what.add_argument("specs", nargs="*", metavar="SPEC",
                      help="a built-in spec name, a spec file, or FILE.py:ClassName")
    what.add_argument("--set", action="append", default=[], metavar="NAME=VALUE",
                      help="set a parameter: NAME=V, NAME=LO..HI (inclusive) or NAME=A,B; several form a "
                           "cross product")
    what.add_argument("--mode", choices=("explore", "prove", "all"), default="all",
                      help="explore the explore sweeps, prove the prove sweeps with Z3, or both (default)")
    what.add_argument("-k", metavar="EXPR", dest="keyword",
                      help="only the checks whose id (spec.property) matches EXPR: substrings joined by and, "
                           "or, not and parentheses, as pytest -k")
    what.add_argument("--memory", metavar="MODEL", help="the memory model of specs with access= annotations: sc "
                      "(default), tso (x86-TSO store buffers) or lkmm (the kernel memory model, approximated; "
                      "docs/weak-memory.md), or several, e.g. sc,tso,lkmm; as --set memory=MODEL")
    what.add_argument("--coverage", action="store_true", help="count transitions per action (without "
                      "reductions) and flag actions that never fire")

    out = v.add_argument_group("output")
    out.add_argument("-v", "--verbose", action="count", default=0,
                     help="a line per check (not per spec), every spec's assumptions, and how its state "
                          "counts grow with its parameters")
    out.add_argument("-q", "--quiet", action="store_true",
                     help="no line per spec and no progress on stderr: the failures and the summary")
    out.add_argument("--timings", action="store_true",
                     help="end with where the time went: compiling the compiled explorer's programs (how many "
                          "were built), exploring, proving, and the rest")
    out.add_argument("-x", "--exitfirst", action="store_true",
                     help="stop at the first result not as expected (a failure or an inconclusive check)")
    out.add_argument("--traces", action="append", metavar="WHICH",
                     help="which traces to print: failed (the default), bugs (also bugs found as expected), "
                          "all, none, or check names (read_bound, spec.read_bound, globs), comma-separated")
    out.add_argument("--color", choices=COLOR_CHOICES, default="auto",
                     help="colour the report: auto (a terminal, unless NO_COLOR is set or FORCE_COLOR "
                          "forces it), always or never")
    out.add_argument("--format", choices=FORMATS, default="text")
    out.add_argument("--output", metavar="FILE", help="write the --format output to FILE; stdout keeps the "
                     "human summary")
    for fmt, desc in (("junit", "JUnit XML"), ("sarif", "SARIF 2.1.0"), ("json", "JSON")):
        # CI artifacts beside the log: --format text --junit F --sarif F
        out.add_argument(f"--{fmt}", metavar="FILE", help=f"also write the {desc} report to FILE")
    out.add_argument("--kernel-tree", metavar="DIR", help="a kernel source tree: SARIF and GitHub annotations "
                     "place built-in specs' findings at the kernel functions they model (default: the current "
                     "directory when it holds Makefile, kernel/ and mm/)")
    out.add_argument("--trace-style", choices=("lanes", "list"), default="lanes",
                     help="draw a trace as a column per actor (lanes, default) or one line per step (list, "
                          "unwrapped)")
    out.add_argument("--width", type=int, metavar="N", help="draw traces at most N columns wide (default: the "
                     "terminal's width, 100 when not a terminal; 75 fits an email)")

    lim = v.add_argument_group("limits (reaching one is inconclusive, exit 3)")
    lim.add_argument("--max-states", type=int, metavar="N", help="stop each exploration after N distinct states")
    lim.add_argument("--timeout", type=float, metavar="S", help="stop each exploration after S seconds")
    lim.add_argument("--deadline", type=float, metavar="S",
                     help="end the whole command after S seconds (default: $COUNTERCHECK_DEADLINE, else none): "
                          "what was not decided is inconclusive (timeout), every report is written, exit 3")
    lim.add_argument("--max-memory", metavar="SIZE", type=_size,
                     help="memory budget of each compiled exploration, e.g. 4G or 512M (default: half the memory "
                          "available)")

    how = v.add_argument_group("how to explore")
    how.add_argument("--engine", choices=("auto", "compiled", "interpreted"), default="auto",
                     help="the explorer, and the liveness checks' state graph: generated C (compiled), the Python "
                          "interpreter, or auto (default: compiled once a point outgrows the interpreter and a C "
                          "compiler, $CC or cc, is found)")
    how.add_argument("--no-symmetry", action="store_true", help="turn CPU-symmetry reduction off")
    how.add_argument("--por", action="store_true",
                     help="partial-order reduction on the compiled engine: the same verdicts from fewer states; "
                          "a trace is the shortest in the reduced graph, not always the shortest")
    how.add_argument("--search", choices=("bfs", "swarm"), default="bfs",
                     help="bfs: the exhaustive breadth-first search (default); swarm: bug hunting for spaces no "
                          "exhaustive search finishes, randomised depth-first runs in C on --jobs processes "
                          "(default: every core) with bitstate hashing, each run seeded from --seed (default 0) "
                          "and going at most --depth steps (default 10000); a violation comes with a replayed, "
                          "shrunk trace, anything not found is inconclusive with the coverage reached, never "
                          "holds; 8 runs, or until --timeout or --max-states")
    how.add_argument("--jobs", type=int, metavar="N",
                     help="explore each point on N processes, or N threads of the compiled engine (the same "
                          "states, verdicts and traces as 1); with --cluster, N Ray workers (default: the "
                          "cluster's CPUs)")
    how.add_argument("--workers", type=int, metavar="N",
                     help="engine runs (a point's exploration, a proof sweep) at once, on forked processes; the "
                          "report is the one-at-a-time run's (default: this machine's cores, at most 8; one with -x, "
                          "--coverage, --jobs, --cluster, --checkpoint or --search swarm, which runs on every core)")
    how.add_argument("--cluster", metavar="ray[://HOST:PORT]",
                     help="explore on Ray actors (the compiled engine's program on each, or the interpreter): 'ray' "
                          "starts a local Ray here, ray://HOST:PORT joins a running cluster (needs Ray: pip install "
                          "'ray>=2.9')")
    ck = how.add_mutually_exclusive_group()
    ck.add_argument("--checkpoint", metavar="DIR", help="save every whole BFS level of each exploration in DIR")
    ck.add_argument("--resume", metavar="DIR", help="continue the explorations saved in DIR (and keep saving "
                    "there): the same counts, verdicts and traces as an uninterrupted run")
    how.add_argument("--fingerprint", action="store_true",
                     help="keep 64-bit hashes of visited states, not the states: less memory, and the report "
                          "gives the probability that a hash collision left a state unexplored")

    pr = v.add_argument_group("proofs (Z3)")
    pr.add_argument("--bmc", type=int, metavar="K", help="also bounded-model-check every property to depth K "
                    "at the explore points (with --mode prove or all)")
    pr.add_argument("--prover", choices=("induction", "pdr", "infer"), default="induction",
                    help="with --mode prove or all: induction over the prove sweep from the spec's inductive "
                         "invariants (default); pdr: IC3/PDR at the explore points, which finds the "
                         "invariant itself (no lemmas) or a run of any length; infer: induction over the "
                         "prove sweep with the lemmas left out and invariants inferred from IC3/PDR at 1 and "
                         "2 CPUs in their place, each proved again for every CPU count")
    pr.add_argument("--smt-timeout", type=float, metavar="S", default=60.0,
                    help="limit of each Z3 query, in seconds' worth of Z3's resource count (rlimit, the same "
                         "verdict under any load; default 60; a limit is inconclusive)")
    pr.add_argument("--emit-smt", metavar="DIR", help="write every proof obligation as an SMT-LIB2 file to DIR")

    sim = v.add_argument_group("simulation")
    sim.add_argument("--simulate", type=int, metavar="RUNS", help="instead of exploring and proving, take RUNS "
                     "seeded random walks at the explore points (--set); a violation is a real, shrunk trace, "
                     "anything not found is inconclusive, never holds")
    sim.add_argument("--depth", type=int, metavar="D", help="with --simulate: steps per walk (default 1000); with "
                     "--search swarm: the deepest run")
    sim.add_argument("--seed", type=int, metavar="S", help="with --simulate or --search swarm: the seed (default 0; "
                     "the same seed "
                     "gives the same runs and traces)")


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
    """The console script's entry point: parse ``argv``, run the command, return the exit code."""
    from checker.interrupts import interruptible

    try:
        args = build_parser().parse_args(argv)
        args.argv = list(sys.argv[1:] if argv is None else argv)  # the reports repeat the command line
        # SIGTERM and SIGHUP end every command as Ctrl-C does; Z3's queries stop at once.
        with interruptible(uses_z3=_uses_z3(args)):
            code = _dispatch(args)
        sys.stdout.flush()  # here, not at exit: a closed pipe is then one more case below
        return code
    except BrokenPipeError:
        return _stdout_closed()


#: The exit code when the reader of stdout went away (`list | head -1`): a shell's for SIGPIPE.
EXIT_BROKEN_PIPE = 141


def _stdout_closed() -> int:
    """The reader of stdout left: no traceback, and nothing more for Python to flush at exit."""
    import os

    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass
    return EXIT_BROKEN_PIPE


def _uses_z3(args: argparse.Namespace) -> bool:
    if args.command == "bounds":
        return True
    if args.command != "verify":
        return False
    return args.simulate is None and (args.mode != "explore" or args.bmc is not None)


def _dispatch(args: argparse.Namespace) -> int:
    import checker.deadline as deadline
    import checker.interrupts as interrupts
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
            import checker.preflight as preflight
            preflight.writable_file("--plot", args.plot)
        return throughput_main(args)
    if args.command == "export":
        from checker.export.command import main as export_main
        return export_main(args)
    if args.command == "litmus":
        from checker.litmus.command import main as litmus_main
        return litmus_main(args)
    if args.command == "completion":
        from checker.completion import script
        sys.stdout.write(script(build_parser("countercheck-kernel"), args.shell))
        return 0
    if args.command == "man":
        from checker.manpage import render as man_page
        page = man_page(build_parser("countercheck-kernel"))
        if args.output:
            from checker.report.write import write_atomic

            try:
                write_atomic(args.output, page)
            except OSError as e:
                raise CheckerError(f"cannot write {args.output}: {e.strerror}") from None
        else:
            sys.stdout.write(page)
        return 0
    return cmd_verify(args)


def _check_verify_flags(args: argparse.Namespace) -> list[str]:
    """Refuse, before any work, every flag value or combination that cannot mean anything; the notes to print."""
    import checker.preflight as preflight
    from checker.loader import input_files
    from checker.report.write import refuse_clashes, remove_stale

    def positive(flag: str, v: float | None) -> None:
        if v is not None and not v > 0:  # `not >` is also true of nan
            raise CheckerError(f"{flag} must be a positive number of seconds, not {v}")

    if args.max_states is not None and args.max_states < 1:
        raise CheckerError("--max-states must be at least 1")
    from checker.report.width import output_width

    args.width = output_width(args.width)
    positive("--timeout", args.timeout)
    positive("--smt-timeout", args.smt_timeout)
    if args.jobs is not None and args.jobs < 1:
        raise CheckerError("--jobs must be at least 1")
    if args.workers is not None and args.workers < 1:
        raise CheckerError("--workers must be at least 1")
    if args.fingerprint and (args.jobs or 1) > 1:
        raise CheckerError("--fingerprint works with one process: drop --jobs or --fingerprint")
    if args.bmc is not None and args.bmc < 0:
        raise CheckerError("--bmc must be at least 0")
    if args.bmc is not None and args.mode == "explore":
        raise CheckerError("--bmc runs Z3: use it with --mode prove or --mode all, not --mode explore")
    if args.prover != "induction" and args.mode == "explore":
        raise CheckerError("--prover picks the Z3 prover: use it with --mode prove or --mode all")
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
    if args.kernel_tree is not None:
        from checker.report.locate import is_kernel_tree

        if not is_kernel_tree(Path(args.kernel_tree)):
            raise CheckerError(f"--kernel-tree {args.kernel_tree}: not a kernel source tree (no Makefile, kernel/ "
                               f"and mm/ there)")
    if args.resume:
        preflight.resumable(args.resume)
    notes = []
    if args.cluster is not None:  # before any work: say how to install Ray, or how to write the address
        import checker.cluster as cluster

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
    import checker.interrupts as interrupts

    return "deadline reached" if interrupts.cause() == interrupts.DEADLINE else "interrupted"


def _killed_report(args: argparse.Namespace) -> None:
    """The watchdog's reports (``checker.deadline``), for a command stuck past its deadline: every requested
    file, with nothing decided."""
    if args.command == "verify":
        why = "the run did not stop at its deadline (stuck in a C call?) and was killed: nothing it decided is known"
        report = Report(interrupted=True, warnings=[why])
        _emit_verify(args, report, {}, streamed=False)


def cmd_verify(args: argparse.Namespace) -> int:
    """``verify``: check the specs named (every built-in spec by default), print or write the report; the exit code."""
    import checker.interrupts as interrupts
    import checker.loader as loader
    from checker.interrupts import as_interrupt
    from checker.preflight import local_cores
    from checker.report import text
    from checker.report.compact import SpecLines
    from checker.report.progress import Progress
    from checker.report.style import Style, wants_color
    from checker.verify import parse_set, verify

    for note in _check_verify_flags(args):
        print(note, file=sys.stderr)
    report = Report()
    spec_args: dict[str, str] = {}
    progress = Progress(sys.stderr, quiet=args.quiet)
    style = Style(wants_color(args.color, sys.stdout))
    verbose = -1 if args.quiet else args.verbose
    # The human report goes to stdout unless stdout carries --format's payload: then the body (a line per
    # spec, or per check with -v) is printed as it is decided, and the rest (traces, summary) at the end.
    stream = (args.format == "text" or args.output is not None) and verbose >= 0
    stdout = sys.stdout  # the real one: spec code's print() is sent to stderr below

    def write(line: str) -> None:
        progress.clear()
        stdout.write(line + "\n")
        stdout.flush()

    lines: SpecLines | None = None

    def on_check(c: "Check") -> None:
        if lines is not None:
            lines.add(c)
        else:
            write(text.style_check_line(c, style))

    # While specs load and run, a print() in spec code goes to stderr: stdout may be --format's payload.
    spec_output = contextlib.ExitStack()
    spec_output.enter_context(contextlib.redirect_stdout(sys.stderr))
    # main() made SIGINT, SIGTERM and SIGHUP raise KeyboardInterrupt: the run ends with what it decided.
    try:
        sets = parse_set(args.set)
        select = _keyword_matcher(args.keyword)
        classes = _selected(loader.resolve(args.specs), select, args.keyword)
        named = []  # specs the user named one by one: checking nothing there is an error, not a warning
        for name in args.specs:
            resolved = loader.resolve([name])
            for cls in resolved:
                spec_args[cls.spec_name] = name
            if len(resolved) == 1:
                named.append(resolved[0].spec_name)
        if stream and verbose == 0:
            lines = SpecLines(write, style=style, width=max((len(c.spec_name) for c in classes), default=0))
        with as_interrupt():  # an interrupt wrapped in another exception (ctypes) is still one
            report = verify(classes, sets=sets, symmetry=not args.no_symmetry, por=args.por, max_states=args.max_states,
                            timeout=args.timeout, mode=args.mode, bmc=args.bmc, smt_timeout=args.smt_timeout,
                            emit_smt=Path(args.emit_smt) if args.emit_smt else None, jobs=args.jobs,
                            simulate=_simulate_options(args), progress=progress, fingerprint=args.fingerprint,
                            coverage=args.coverage, cluster=args.cluster,
                            checkpoint=Path(args.checkpoint or args.resume) if (args.checkpoint or args.resume)
                            else None, resume=args.resume is not None, named=named, engine=args.engine,
                            max_memory=args.max_memory, memory=args.memory, prover=args.prover,
                            on_check=on_check if stream else None,
                            on_start=lines.start if lines is not None else None,
                            select=select, stop_early=args.exitfirst,
                            workers=args.workers or (1 if args.search == "swarm" else min(8, local_cores())),
                            on_note=lambda text: print(text, file=sys.stderr, flush=True))
    except CheckerError as e:
        report.errors.append(ErrorInfo(e.message, e.file, e.line))
    except KeyboardInterrupt:  # before the run started (loading the specs): nothing decided
        report.interrupted = True
    finally:
        spec_output.close()
        if lines is not None:
            lines.finish()
        progress.close()
        progress.clear()
    if interrupts.pending():  # a signal the run noted and did not raise (checker.early): still not a pass
        report.interrupted = True
    if report.interrupted:
        saved = args.checkpoint or args.resume
        print(f"{_stopped()}: what was not decided is inconclusive ({interrupts.cause()})"
              + (f"; continue with --resume {saved}" if saved else ""), file=sys.stderr)
    report.arguments = args.argv
    with interrupts.shielded():  # a second Ctrl-C, or the deadline, does not cut a report in half
        failed = _emit_verify(args, report, spec_args, streamed=stream, verbose=verbose, style=style)
    return 2 if failed else report.exit_code  # a requested report lost is an error, whatever the verdicts


def _keyword_matcher(expr: str | None) -> Callable[[str], bool] | None:
    from checker.select import compile_keywords

    return compile_keywords(expr) if expr is not None else None


def _selected(classes: list[type], select: Callable[[str], bool] | None, expr: str | None) -> list[type]:
    """-k: the specs with a check id (spec.property) it may keep; the checks themselves are filtered as decided."""
    if select is None:
        return classes
    from checker.language.model import info

    def ids(cls: type) -> list[str]:
        si = info(cls)
        names = [*si.properties, *si.builtin_expect, "no_deadlock", "no_overflow", "coverage"]
        return [f"{cls.spec_name}.{n}" for n in names]

    kept = [c for c in classes if any(select(i) for i in ids(c))]
    if not kept:
        raise CheckerError(f"-k {expr!r} matches no check of the {len(classes)} specs selected")
    return kept


def _emit_verify(args: argparse.Namespace, report: Report, spec_args: dict[str, str], *, streamed: bool,
                 verbose: int = 0, style: "Style | None" = None) -> list[str]:
    """Every output the user asked for: the files first (they are what CI keeps), then stdout. ``streamed``:
    the report's body (its spec or check lines) is on stdout already. The files that could not be
    written, one line each (every other file is written all the same)."""
    from checker.report import text
    from checker.report.style import PLAIN
    from checker.report.write import write_all

    style = style or PLAIN
    # (the width was resolved by the flag check)
    shape = dict(traces=args.traces or ["failed"], spec_args=spec_args, trace_style=args.trace_style,
                 width=args.width)
    files = [(f"--{fmt}", getattr(args, fmt), render_as(fmt, report, spec_args, args.kernel_tree))
             for fmt in ("junit", "sarif", "json") if getattr(args, fmt)]
    errors = [f"error: {_where(e)}{e.message}" for e in report.errors]
    if args.format != "text":
        payload = render_as(args.format, report, spec_args, args.kernel_tree)
        if args.output:
            files.append(("--output", args.output, payload))
            out = text.render(report, **shape, check_lines=False, verbose=verbose, style=style)
            errors = []  # the errors are in the human summary on stdout
        else:
            out = payload
            # stdout is the payload: the human lines go to stderr
            errors = [f"warning: {w}" for w in report.warnings] + errors
    elif args.output:  # the whole report, plain, in the file; the summary on stdout
        files.append(("--output", args.output, text.render(report, **shape, errors=True, verbose=max(verbose, 0))))
        out = text.summary_line(report, style) + "\n"
    else:
        out = text.render(report, **shape, errors=False, check_lines=not streamed, verbose=verbose, style=style)
    failed = write_all(files)
    sys.stdout.write(out)
    sys.stdout.flush()
    if getattr(args, "timings", False):  # (beside a payload on stdout: on stderr)
        print(text.timings_line(report), file=sys.stdout if args.format == "text" or args.output else sys.stderr)
    for line in errors + [f"error: {f}" for f in failed]:
        print(line, file=sys.stderr)
    _github_actions(args, report, spec_args)
    return failed


def _github_actions(args: argparse.Namespace, report: Report, spec_args: dict[str, str]) -> None:
    """Under GitHub Actions: a group and annotations per spec in the log, a table in the step summary."""
    from checker.report import github

    out = sys.stdout if args.format == "text" or args.output else sys.stderr  # never inside the payload
    github.publish(report, spec_args=spec_args, out=out, kernel_tree=args.kernel_tree)


def render_as(fmt: str, report: Report, spec_args: dict[str, str], kernel_tree: str | None = None) -> str:
    """A machine-readable rendering of the report: the JSON contract, JUnit XML, SARIF or KTAP."""
    if fmt == "junit":
        from checker.report import junit
        return junit.render(report, spec_args=spec_args)
    if fmt == "sarif":
        from checker.report import sarif
        tree = Path(kernel_tree) if kernel_tree else None
        return json.dumps(sarif.render(report, spec_args=spec_args, kernel_tree=tree), indent=2) + "\n"
    if fmt == "ktap":
        from checker.report import ktap
        return ktap.render(report, spec_args=spec_args)
    return json.dumps(report.to_json(), indent=2) + "\n"

def _simulate_options(args: argparse.Namespace) -> "SimulateOptions | None":
    from checker.simulate.checks import DEFAULT_DEPTH, SimulateOptions

    if args.search == "swarm":
        return _swarm_options(args)
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


def _swarm_options(args: argparse.Namespace) -> "SwarmOptions":
    from checker.compiled.swarm import SwarmOptions

    if args.simulate is not None:
        raise CheckerError("--search swarm and --simulate are two ways of looking for bugs at random: pick one")
    if args.mode == "prove":
        raise CheckerError("--search swarm looks for bugs instead of exploring and proving: it cannot prove; drop "
                           "--mode prove, or --search swarm")
    for flag, value in (("--bmc", args.bmc), ("--emit-smt", args.emit_smt), ("--cluster", args.cluster),
                        ("--checkpoint", args.checkpoint), ("--resume", args.resume),
                        ("--fingerprint", args.fingerprint or None)):
        if value is not None:
            raise CheckerError(f"{flag} is for exhaustive exploring and proving; --search swarm replaces both (use "
                               f"--jobs, --depth, --seed, --timeout and --max-states with it)")
    if args.depth is not None and args.depth < 1:
        raise CheckerError("--depth must be at least 1")
    if args.seed is not None and args.seed < 0:
        raise CheckerError("--seed must be at least 0")
    return SwarmOptions(0 if args.seed is None else args.seed, args.jobs, args.depth)


def _where(e: ErrorInfo) -> str:
    return f"{e.file}:{e.line}: " if e.file and e.line else (f"{e.file}: " if e.file else "")


def cmd_list(args: argparse.Namespace) -> int:
    """``list``: print each spec's parameters, properties and assumptions; exit 0."""
    import checker.loader as loader
    from checker.report.listing import describe

    # every built-in spec, the on-demand deep sweeps included, unless some are named
    for cls in loader.resolve(args.specs) if args.specs else loader.builtin_specs().values():
        sys.stdout.write(describe(cls) + "\n")
    return 0
