# SPDX-License-Identifier: GPL-2.0-only
"""``verify``: specs x parameter sweeps x backends -> a Report.

Library calls return results; only the command line prints.
"""
from __future__ import annotations

import difflib
import itertools
import math
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable, Iterator

import checker.engines as engines
import checker.interrupts as interrupts
from checker.engines import Limits, Request, Runner
from checker.engines.common import build_check, property_meta, shown_state, with_shown, with_sources  # noqa: F401
from checker.engines.explore import explore_checks, undecided_checks  # noqa: F401  (explore_checks re-exported)
from checker.errors import CheckerError, SpecError, UsageError
from checker.explore.checkpoint import bind_run
from checker.result import INCONCLUSIVE, VERDICTS, Check
from checker.overrides import never_ran, warning as override_warning
from checker.report import growth
from checker.report.progress import Progress
from checker.provenance import NAME as TOOL_NAME, command_line, version
from checker.language.model import Params, all_assumptions, info, resolve_params
from checker.language.usercode import running_spec_code, spec_error
from checker.language.vacuity import vacuous_invariants

if TYPE_CHECKING:
    from checker.simulate.checks import SimulateOptions

SCHEMA_VERSION = "1.3"  # 1.1: steps may carry the file and line of their action; 1.2: checks name their engine;
# 1.3: the tool (name, version, command line), and the shown values of steps and initial states


@dataclass
class ErrorInfo:
    """An error that stopped a spec from being checked: the message and, when known, its file and line."""
    message: str
    file: str | None = None
    line: int | None = None

    def to_json(self) -> dict[str, Any]:
        return {"message": self.message, "file": self.file, "line": self.line}


@dataclass
class Report:
    """Every check of a run, and the errors that stopped some of them."""

    checks: list[Check] = field(default_factory=list)
    errors: list[ErrorInfo] = field(default_factory=list)
    seconds: float = 0.0
    #: Per spec run: its file, the kernel code it models, and its assumptions.
    specs: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: Things the user should read that stopped nothing (a spec in the selection that checks nothing).
    warnings: list[str] = field(default_factory=list)
    #: The run was cut short (Ctrl-C, SIGTERM, SIGHUP): what was not decided is inconclusive.
    interrupted: bool = False
    #: The command line's arguments after the program name, when a command line ran it (the CLI sets it).
    arguments: list[str] | None = None
    #: What ran: ``explore``, ``prove``, ``all`` or ``simulate``, under which memory models (``sc``, ``sc,tso``).
    mode: str = "all"
    memory: str = "sc"
    #: ``stop_early`` ended the run at the first result not as expected: what was left out, in words.
    stopped: str | None = None
    #: Checks decided and left out of the report by ``select`` (``-k``).
    deselected: int = 0
    #: Wall seconds per phase of this process (``phase_seconds``): compile, explore, prove, bmc, simulate.
    phases: dict[str, float] = field(default_factory=dict)
    #: Programs the compiled explorer built in this process (not found in the build cache).
    programs_built: int = 0
    #: Engine runs at once (``workers``): above 1, ``phases`` are summed over the workers.
    workers: int = 1

    @property
    def exit_code(self) -> int:
        """0 all as expected, 1 a failure, 2 an error, 3 inconclusive (an interrupted run is): the
        first that applies of 2, 3 (interrupted), 1, 3, 0."""
        if self.errors:
            return 2
        if self.interrupted:
            return 3
        statuses = {c.status for c in self.checks}
        if "failed" in statuses:
            return 1
        if "inconclusive" in statuses:
            return 3
        return 0

    @property
    def ok(self) -> bool:
        return self.exit_code == 0

    def counts(self) -> dict[str, int]:
        out = {v: 0 for v in VERDICTS}
        for c in self.checks:
            out[c.verdict] += 1
        out["as_expected"] = sum(1 for c in self.checks if c.status == "ok")
        out["failed"] = sum(1 for c in self.checks if c.status == "failed")
        return out

    def command_line(self) -> str | None:
        """The command that made this report, quoted for a shell; None for a library call."""
        return None if self.arguments is None else command_line(self.arguments)

    def tool(self) -> dict[str, Any]:
        """Which countercheck made this report, and how: every JSON, SARIF and JUnit report carries it."""
        return {"name": TOOL_NAME, "version": version(), "command_line": self.command_line()}

    def to_json(self) -> dict[str, Any]:
        return {
            "schema_version": SCHEMA_VERSION,
            "tool": self.tool(),
            "checks": [c.to_json() for c in self.checks],
            "summary": {"ok": self.ok, "exit_code": self.exit_code, "seconds": round(self.seconds, 3),
                        **self.counts()},
            "errors": [e.to_json() for e in self.errors],
            "warnings": list(self.warnings),
            "specs": self.specs,
            **({"warnings": list(self.warnings)} if self.warnings else {}),
            **({"interrupted": True} if self.interrupted else {}),
            **({"stopped": self.stopped} if self.stopped else {}),
            **({"deselected": self.deselected} if self.deselected else {}),
        }


def parse_set(items: Iterable[str]) -> dict[str, tuple[int | str, ...]]:
    """``NAME=V``, ``NAME=LO..HI`` (inclusive) or ``NAME=A,B,C``. Values that
    are not integers stay names (``variant=A..C``); each spec resolves them
    against its parameter (``own_sets``)."""
    out: dict[str, tuple[int | str, ...]] = {}
    for item in items:
        name, eq, value = item.partition("=")
        name = name.strip()
        if not eq or not name or not value:
            raise UsageError(f"--set {item!r}: write NAME=VALUE, NAME=LO..HI or NAME=A,B,C")
        vals: list[int | str] = []
        for part in value.split(","):
            part = part.strip()
            lo, dots, hi = part.partition("..")
            try:
                if dots:
                    a, b = int(lo), int(hi)
                    if b < a:
                        raise UsageError(f"--set {item!r}: empty range {a}..{b}")
                    vals.extend(range(a, b + 1))
                else:
                    vals.append(int(part))
            except ValueError:
                if not part:
                    raise UsageError(f"--set {item!r}: an empty value in the list") from None
                vals.append(part)
        out[name] = tuple(dict.fromkeys(out.get(name, ()) + tuple(vals)))
    return out


def own_sets(cls: type, sets: dict[str, tuple[int | str, ...]]) -> dict[str, tuple[int, ...]]:
    """The values set for this spec's parameters, names resolved to numbers."""
    params = info(cls).params
    out: dict[str, tuple[int, ...]] = {}
    for name, vals in sets.items():
        if name not in params:
            continue
        resolved: list[int | str] = []
        for v in vals:
            if v in ("default", "symbolic"):  # the prove sweep's keywords
                resolved.append(v)
                continue
            try:
                resolved.extend(params[name].lookup(v))
            except ValueError as e:
                raise UsageError(f"--set {name}={','.join(map(str, vals))}: {e}"
                                 + (f"; {cls.spec_name}.{name} takes {params[name].describe_domain()}"
                                    if params[name].names else "")) from None
        out[name] = tuple(dict.fromkeys(resolved))
    return out


#: The most parameter points one command explores, simulates or model-checks (a mistyped range
#: otherwise starts 100,000 explorations without a question).
MAX_POINTS = 4096


def values_text(vals: Iterable[Any], most: int = 8) -> str:
    """``1..8192`` for a run of consecutive integers, ``A,B,C`` otherwise; at most ``most`` items shown."""
    vals = list(vals)
    parts: list[str] = []
    i = 0
    while i < len(vals):
        j = i
        while (j + 1 < len(vals) and isinstance(vals[j], int) and isinstance(vals[j + 1], int)
               and vals[j + 1] == vals[j] + 1):
            j += 1
        parts.append(f"{vals[i]}..{vals[j]}" if j > i + 1 else ",".join(map(str, vals[i:j + 1])))
        i = j + 1
    items = ",".join(parts).split(",")
    return ",".join(items) if len(items) <= most else ",".join(items[:most]) + f",... ({len(vals):,} values)"


def param_points(cls: type, sets: dict[str, tuple[int, ...]], mode: str = "explore",
                 notes: list[str] | None = None) -> list[Params]:
    """The default sweep: for each entry of the spec's ``explore_sweeps`` (one
    entry, the parameters' own sweeps, for ``prove``), the cross product of
    the values set on the command line, else the entry's values, else the
    parameter's sweep for ``mode``, else its (possibly derived) default.

    A point that the values set make invalid (outside a domain, or refused by
    the spec's liveness abstraction) is left out, with one note per entry in
    ``notes``: the user asked for their values, not for that entry. Only when
    nothing is left is it an error, the first point's."""
    si = info(cls)
    entries = cls.explore_sweeps if mode == "explore" else ({},)
    points = []
    refused: list[tuple[dict, UsageError, str]] = []  # (entry, its first invalid point's error, why)
    for entry in entries:
        unknown = [k for k in entry if k not in si.params]
        if unknown:
            raise SpecError(f"{cls.__name__}.explore_sweeps names {', '.join(map(repr, unknown))}, which "
                            f"{'is not a parameter' if len(unknown) == 1 else 'are not parameters'}; its "
                            f"parameters are: {', '.join(si.params)}", file=si.file, line=si.line)
        axes: list[tuple[str, tuple[int, ...]]] = []
        for name, p in si.params.items():
            if name in sets:
                axes.append((name, sets[name]))
            elif name in entry:
                v = entry[name]
                axes.append((name, tuple(v) if isinstance(v, (tuple, list, range)) else (v,)))
            else:
                sweep = p.explore if mode == "explore" else p.prove
                if sweep is not None:
                    axes.append((name, sweep))
        names = [n for n, _ in axes]
        count = math.prod(len(vals) for _, vals in axes)
        if count > MAX_POINTS:  # before enumerating: a cross product can be any size
            widest = max(axes, key=lambda a: len(a[1]))
            raise UsageError(
                f"{cls.spec_name}: the sweep is a cross product of {count:,} points ("
                + " x ".join(f"{n} {len(v):,}" for n, v in axes if len(v) > 1)
                + f"); at most {MAX_POINTS:,} run in one command. Narrow it, e.g. --set {widest[0]}="
                + f"{values_text(widest[1][:4])}"
                + (", or prove every value at once with --mode prove" if mode == "explore" else ""))
        left_out: tuple[dict, UsageError, str] | None = None
        for combo in itertools.product(*(vals for _, vals in axes)):
            if "symbolic" in combo:
                raise UsageError(f"{cls.spec_name}: 'symbolic' is a value for --mode prove only")
            try:
                point = resolve_params(cls, {n: v for n, v in zip(names, combo) if v != "default"})
            except UsageError as e:
                error, why = e, e.message.removeprefix(f"{cls.spec_name}: ")
            else:
                why = si.abstraction.refusal(point) if si.abstraction is not None else None
                if why is None:
                    points.append(point)
                    continue
                error = UsageError(f"{cls.spec_name} at {point}: {why}")
            if not sets:  # the spec's own sweep is wrong: that is the spec's error, not a note
                raise error
            left_out = left_out or (entry, error, why)
        if left_out is not None:
            refused.append(left_out)
    if refused and not points:
        raise refused[0][1]
    for entry, _error, why in refused if notes is not None else ():
        what = " ".join(f"{k}={_values_text(si.params[k], v)}" for k, v in entry.items()) or "its parameters' sweeps"
        set_text = " ".join(f"{k}={_values_text(si.params[k], v)}" for k, v in sets.items())
        notes.append(f"{cls.spec_name}: left out the explore sweep entry {what}, which --set {set_text} makes "
                     f"invalid: {why}")
    return list(dict.fromkeys(points))


def _values_text(param: Any, v: Any) -> str:
    vals = tuple(v) if isinstance(v, (tuple, list, range)) else (v,)
    return ",".join(str(param.show(x)) if isinstance(x, int) else str(x) for x in vals)


def check_sets_apply(classes: list[type], sets: dict[str, Any]) -> None:
    """Refuse a ``--set`` that names no parameter of any selected spec, listing theirs."""
    for name in sets:
        if not any(name in info(c).params for c in classes):
            known = sorted({p for c in classes for p in info(c).params})
            close = difflib.get_close_matches(name, known, n=3, cutoff=0.6)
            hint = (f"did you mean {' or '.join(close)}?" if close else
                    f"their parameters are: {', '.join(known)}" if len(known) <= 20 else
                    "`list SPEC` shows a spec's parameters")
            raise UsageError(f"no selected spec has a parameter {name!r}; {hint}")


MODES = ("explore", "prove", "all")
#: The mode an engine run belongs to, as the report's spec lines group them.
TASK_MODE = {"explore": "explore", "coverage": "explore", "simulate": "simulate", "prove": "prove", "pdr": "prove",
             "infer": "prove", "bmc": "bmc"}

#: Seconds per Z3 query unless --smt-timeout says otherwise: every query has one.
DEFAULT_SMT_TIMEOUT = 60.0


class _Stop(Exception):
    """``stop_early``: a result not as expected ends the run (never an interrupt: what ran is decided)."""


@dataclass
class Task:
    """One engine run of a spec: at a parameter point, or (``prove``) over its prove sweep."""

    engine: str
    params: Params | None = None
    sets: dict | None = None  # the values set for this run, where not the spec's (prove under sc only)


def plan(cls: type, own: dict[str, tuple], *, mode: str, simulate: Any, bmc: int | None,
         coverage: bool, prover: str = "induction", notes: list[str] | None = None) -> list[Task]:
    """The engine runs ``verify`` makes for one spec, in order (``coverage``: the check on their graphs;
    ``prover="pdr"``: IC3/PDR at the explore points instead of induction over the prove sweep; ``notes``:
    sweep entries the values set leave out)."""
    # the explore points run only when they are explored, simulated, model-checked or proved by pdr
    needed = simulate is not None or mode != "prove" or bmc is not None or prover == "pdr"
    points = param_points(cls, own, "explore", notes) if needed else []
    if simulate is not None:
        return [Task("simulate", p) for p in points]
    tasks: list[Task] = []
    if mode in ("explore", "all"):
        tasks += [Task("explore", p) for p in points]
        if coverage and points:
            tasks.append(Task("coverage"))
    if mode in ("prove", "all"):
        tasks += ([Task("pdr", p) for p in points] if prover == "pdr" else
                  [Task("infer")] if prover == "infer" else [Task("prove")])
        if bmc is not None:
            tasks += [Task("bmc", p) for p in points]
    return tasks


def sweep_note(cls: type, own: dict[str, tuple], points: list[Params]) -> str | None:
    """With values set on the command line, which points run and why, when there is more than one:
    the parameters not set take the spec's explore sweeps."""
    if not own or len(points) < 2:
        return None
    shown = [p.shown() for p in points]
    varying = {k: list(dict.fromkeys(d[k] for d in shown)) for k in shown[0] if len({d[k] for d in shown}) > 1}
    params = info(cls).params
    swept = {k for e in cls.explore_sweeps for k in e}
    extra = {k: v for k, v in varying.items()
             if k not in own and (params[k].explore is not None or k in swept or not params[k].derived)}
    if not extra:
        return None
    set_text = " ".join(f"{k}={values_text(dict.fromkeys(d[k] for d in shown))}" for k in own)
    vary = ", ".join(f"{k} {values_text(v)}" for k, v in extra.items())
    return (f"{cls.spec_name}: {len(points)} points: {set_text} as set, crossed with its explore sweeps of "
            f"{vary}; --set those to run fewer")


def _overrides_never_ran(cls: type, tasks: list[Task], ran: set) -> list[str]:
    """The warning that a bug spec's overrides never ran at any of its explored points (none, or one)."""
    explored = sum(1 for t in tasks if t.engine == "explore")
    missed = never_ran(cls, ran) if explored else ()
    return [override_warning(cls, missed, f"{explored} point{'s' if explored != 1 else ''}")] if missed else []


def _run_on_workers(workers: int, planned: list[tuple[type, dict, list[Task]]], engine_run: Callable[..., list[Check]],
                    add: Callable[[type, list[Check]], None], warn: Callable[[str], None], report: Report,
                    ids: Iterator[int], done: list[tuple[type, list[Task]]], errored: set[str],
                    progress: Progress | None, on_start: Callable[[str, str], None] | None) -> None:
    """Every planned engine run on ``workers`` forked processes, taken back in the planned order: the
    report, the streamed lines and the run numbers are the sequential run's. A spec's error ends its
    runs as there (the later ones are not run, or their answers dropped); an interrupt kills the
    workers, and every run not taken back is undecided."""
    from checker.compiled.build import SPENT
    from checker.run_pool import RunPool

    jobs = [(j, k) for j, (_cls, _own, tasks) in enumerate(planned) for k in range(len(tasks))]
    failed: set[int] = set()

    def in_worker(job: tuple[int, int]) -> tuple:
        cls, own, tasks = planned[job[0]]
        task = tasks[job[1]]
        warned: list[str] = []
        ran: set = set()
        built, spent, t0 = SPENT["programs"], SPENT["seconds"], time.perf_counter()
        checks = engine_run(cls, own, task, 0, None, None, ran, warned.append)
        return (checks, warned, ran, time.perf_counter() - t0, SPENT["programs"] - built, SPENT["seconds"] - spent)

    def reach(j: int) -> None:  # every spec up to the j-th has begun (one with no runs too)
        while len(done) <= j:
            done.append((planned[len(done)][0], []))

    pool = RunPool(workers, in_worker)
    taken = 0
    ran_by_spec: dict[int, set] = {}
    try:
        for i, (status, value) in pool.ordered(jobs, skip=lambda i: jobs[i][0] in failed):
            j, k = jobs[i]
            cls, _own, tasks = planned[j]
            reach(j)
            interrupts.check()
            taken = i + 1
            if j in failed:
                continue
            task = tasks[k]
            if progress is not None:
                progress.at(f"spec {j + 1} of {len(planned)}, point {k + 1} of {len(tasks)}")
            if on_start is not None:
                on_start(cls.spec_name, TASK_MODE[task.engine])
            run = next(ids)
            if status == "error":
                report.errors.append(ErrorInfo(value.message, value.file or info(cls).file, value.line))
                errored.add(cls.spec_name)
                failed.add(j)
                continue
            if status == "lost":  # killed from outside (the OOM killer, kill -9): undecided, never a pass
                add(cls, interrupted_checks(cls, task, run, reason=value))
                done[-1][1].append(task)
                continue
            checks, warned, ran, seconds, built, spent = value
            for c in checks:
                c.run = run
            for text in warned:
                warn(text)
            ran_by_spec.setdefault(j, set()).update(ran)
            phase = TASK_MODE[task.engine]
            report.phases[phase] = report.phases.get(phase, 0.0) + seconds
            SPENT["programs"] += built
            SPENT["seconds"] += spent
            add(cls, checks)
            done[-1][1].append(task)
            if k == len(tasks) - 1:
                report.warnings += _overrides_never_ran(cls, tasks, ran_by_spec.get(j, set()))
    except KeyboardInterrupt:
        pool.kill()
        for j, k in jobs[taken:]:
            cls, _own, tasks = planned[j]
            reach(j)
            if j not in failed:
                add(cls, interrupted_checks(cls, tasks[k], next(ids)))
        reach(len(planned) - 1)
        raise
    except BaseException:
        pool.kill()
        raise
    pool.close()
    reach(len(planned) - 1)


def interrupted_checks(cls: type, task: Task, run: int, reason: str | None = None) -> list[Check]:
    """What a task cut short by an interrupt (or ``reason``) decided: nothing, one inconclusive check per
    property."""
    si = info(cls)
    reason = reason or interrupts.cause()
    if task.engine == "coverage":  # the one check checker.live.coverage_check makes
        return [Check(spec=cls.spec_name, file=si.file, line=si.line, params={}, property="coverage",
                      kind="coverage", backend="explore", verdict=INCONCLUSIVE, expected="holds",
                      reason=reason, run=run)]
    if task.engine in ("explore", "simulate") and task.params is not None:  # the very checks a complete run makes
        try:
            return undecided_checks(cls, task.params, run, reason, task.engine)
        except Exception:  # noqa: BLE001, S110 - spec code failing at this point: its own properties, below
            pass
    params = task.params.shown() if task.params is not None else {}
    backend = {"prove": "z3", "bmc": "z3", "pdr": "z3", "infer": "z3"}.get(task.engine, task.engine)
    props = [p for p in si.properties.values()
             if task.params is None or p.applies is None or p.applies(task.params)]
    return [Check(spec=cls.spec_name, file=p.file, line=p.line, params=params, property=p.name, kind=p.kind,
                  backend=backend, verdict=INCONCLUSIVE, expected=p.expect, reason=reason, run=run,
                  doc=p.doc, bug=p.name in cls.expect_violated) for p in props]


def _has_points(cls: type, own: dict[str, tuple]) -> bool:
    try:
        return bool(param_points(cls, own))
    except UsageError:  # more than MAX_POINTS: points all the same
        return True


def nothing_checked(cls: type, own: dict[str, tuple], tasks: list[Task], mode: str, simulate: Any) -> str:
    """Why a spec's run produced no check, in the user's words."""
    what = "--simulate" if simulate is not None else f"--mode {mode}"
    why = []
    pointed = [t for t in tasks if t.params is not None]
    weak = any(v != 0 for v in own.get("memory", ())) and info(cls).abstraction is not None
    if (simulate is not None or mode != "prove") and not pointed and weak and _has_points(cls, {**own, "memory": (0,)}):
        # every point left was a liveness abstraction, which _sc_only_engines keeps out of tso and lkmm
        why.append("every point of its explore sweep is a liveness abstraction, which is checked under sc only "
                   "(the abstraction does not model weak memory); run it with --memory sc")
    elif (simulate is not None or mode != "prove") and not pointed:
        why.append("its explore sweep has no point (a parameter's explore= is empty, or --set left no value)")
    elif simulate is not None:
        why.append("every point of its explore sweep is liveness-only (an Abstraction), which simulation "
                   "does not check")
    if any(t.engine in ("prove", "infer") for t in tasks):
        why.append("it has no prove sweep (no inductive invariant, witness, lemma or bmc)"
                   + ("; run it with --mode explore" if mode == "prove" and _has_points(cls, own) else ""))
    if not why:
        why.append(f"its {len(tasks)} runs ({', '.join(sorted({t.engine for t in tasks}))}) made no check")
    return f"{cls.spec_name} checks nothing with {what}: " + "; and ".join(why)


def _sc_only_engines(cls: type, own: dict[str, tuple], tasks: list[Task]) -> tuple[list[Task], str | None]:
    """The Z3 backend knows sequential consistency only: under ``--memory tso|lkmm`` it runs at the sc points
    alone (the explorer and simulation check the weak ones), and is left out without one."""
    if not any(v != 0 for v in own.get("memory", ())):
        return tasks, None
    kept: list[Task] = []
    left = set()
    si = info(cls)
    for t in tasks:
        if t.params is not None and t.params.memory != 0 and si.abstraction_at(t.params) is not None:
            left.add("liveness")  # an Abstraction's frozen and reduced words are not modelled in the weak state
            continue
        if t.engine in ("explore", "coverage", "simulate") or (t.params is not None and t.params.memory == 0):
            kept.append(t)
        elif t.engine in ("prove", "infer") and 0 in own["memory"]:
            kept.append(Task(t.engine, sets={**own, "memory": (0,)}))
        else:
            left.add(t.engine)
    if not left and all(t.engine not in ("prove", "infer") for t in tasks):
        return kept, None
    what = ", ".join(sorted({t.engine for t in tasks if t.engine in ("prove", "bmc", "pdr", "infer")} |
                            ({"its liveness-abstraction points"} if "liveness" in left else set())))
    return kept, (f"{cls.spec_name}: {what} under sc only (the Z3 backend and the liveness abstraction do not "
                  f"model weak memory); the explorer checks --memory {','.join(info(cls).params['memory'].show(v) for v in own['memory'] if v)}")


def _memory_models(memory: str | None) -> tuple[str, ...]:
    """``--memory sc,tso``: the models named, each checked; an unknown one is a usage error."""
    if memory is None:
        return ()
    from checker.ordering.declare import MEMORY

    names = tuple(dict.fromkeys(m.strip() for m in memory.split(",")))
    for m in names:
        if m not in MEMORY.names:
            raise UsageError(f"--memory {memory!r}: choose sc, tso or lkmm (or several: --memory sc,tso,lkmm)")
    return names


def _likely(checks: list[Check], cls: type, task: Task, progress: Progress) -> str:
    """``, likely ~5,900 states``: what the spec's decided points say this exploration will take."""
    if task.engine != "explore" or task.params is None or not progress.enabled:
        return ""
    states = growth.likely_states(checks, cls.spec_name, task.params.shown(), task.params.computed)
    return f", likely ~{growth.rounded(states)} states" if states is not None else ""


def verify(classes: list[type], *, sets: dict[str, tuple[int, ...]] | None = None, symmetry: bool = True,
           por: bool = False, max_states: int | None = None, timeout: float | None = None, mode: str = "all",
           bmc: int | None = None, smt_timeout: float | None = DEFAULT_SMT_TIMEOUT, emit_smt: Path | None = None,
           on_check: Callable[[Check], None] | None = None, jobs: int | None = None,
           simulate: SimulateOptions | None = None, progress: Progress | None = None,
           fingerprint: bool = False, coverage: bool = False, cluster: str | None = None,
           checkpoint: Path | None = None, resume: bool = False, named: Iterable[str] = (),
           engine: str = "auto", max_memory: int | None = None, on_note: Callable[[str], None] | None = None,
           memory: str | None = None, prover: str = "induction", on_start: Callable[[str, str], None] | None = None,
           select: Callable[[str], bool] | None = None, stop_early: bool = False, workers: int = 1) -> Report:
    """Run every selected spec: the explorer over its explore sweep, the Z3
    backend over its prove sweep (``mode``), BMC at the explore points when
    ``bmc`` is a depth. ``jobs`` processes explore each point (same results),
    as Ray actors with ``cluster``; ``checkpoint`` and ``resume``: see ``explore``.
    ``simulate`` (a ``checker.simulate.checks.SimulateOptions``) replaces all
    of these with random simulation at the explore points. ``progress`` shows
    long runs live (``checker.report.progress``). With ``coverage``, a
    coverage check per spec. ``engine`` (auto, compiled, interpreted) picks the explorer and
    ``max_memory`` (bytes) bounds a compiled search, ``por`` turns partial-order reduction on there: see ``explore``. ``on_check`` is told each check as it is decided, ``on_note``
    each note and warning as it arises (a sweep wider than the values set, a point out of reach).
    ``memory`` (sc, tso, lkmm, or several joined by commas) is the memory model of every spec with
    ``access=`` annotations (``checker.ordering``): their ``memory`` parameter, as ``--set memory=...``.
    ``prover="pdr"`` proves at the explore points with IC3/PDR (``checker.prove.fixed``), no lemmas needed;
    ``prover="infer"`` over the prove sweep with inferred invariants in place of the lemmas (``checker.prove.infer``).
    ``on_start`` is told (spec name, mode) as each engine run begins (mode: explore, simulate, prove
    or bmc). ``select`` (``-k``) keeps the checks whose id (``spec.property``) it accepts; the others
    are counted in ``Report.deselected``. ``stop_early`` (``-x``) ends the run after the first engine
    run with a result not as expected; ``Report.stopped`` says what was not run. ``workers`` > 1 runs
    that many engine runs at once on forked processes (``checker.run_pool``), with the report of the
    sequential run (not with ``stop_early``, ``coverage``, ``cluster``, ``checkpoint`` or ``jobs``, which
    keep one run at a time); each compiled search is then bounded by its share of the default memory.

    Nothing checked is never a pass: a spec in ``named`` (spec names the user
    asked for) that checks nothing is an error, any other a warning, and a
    run that checks nothing at all an error. An interrupt (``KeyboardInterrupt``)
    ends the run with what was decided; what was not is inconclusive
    (``interrupted``), and ``Report.interrupted`` is set.
    """
    if mode not in MODES:
        raise UsageError(f"--mode {mode!r}: choose one of {', '.join(MODES)}")
    sets = sets or {}
    named = set(named)
    report = Report()
    t0 = time.perf_counter()
    from checker.compiled.build import SPENT as COMPILED

    built0, compile0 = COMPILED["programs"], COMPILED["seconds"]

    def finish() -> None:  # the time taken, and the compiler's share of exploring (``--timings``)
        report.seconds = time.perf_counter() - t0
        report.programs_built = COMPILED["programs"] - built0
        if report.programs_built:
            spent = COMPILED["seconds"] - compile0
            report.phases["compile"] = spent
            report.phases["explore"] = max(0.0, report.phases.get("explore", 0.0) - spent)

    check_sets_apply(classes, sets)
    ids = itertools.count(1)
    limits = Limits(max_states=max_states, timeout=timeout, smt_timeout=smt_timeout, max_memory=max_memory)
    runner = Runner(jobs=jobs, cluster=cluster, checkpoint=checkpoint, resume=resume)
    if checkpoint is not None:  # resuming with other --set values would silently start afresh
        bind_run(Path(checkpoint), {"set": {k: list(v) for k, v in sets.items()}, "memory": memory}, resume)
    options: dict[str, Any] = {"symmetry": symmetry, "por": por, "fingerprint": fingerprint, "depth": bmc,
                               "simulate": simulate, "emit_smt": emit_smt}
    from checker.compiled import ENGINES as EXPLORE_ENGINES

    if engine not in EXPLORE_ENGINES:
        raise UsageError(f"--engine {engine!r}: choose one of {', '.join(EXPLORE_ENGINES)}")
    options["engine"] = engine
    models = _memory_models(memory)
    options["memory"] = ",".join(models) if models else "sc"
    report.mode, report.memory = ("simulate" if simulate is not None else mode), options["memory"]

    first_unexpected: list[Check] = []
    deselected_specs: set[str] = set()

    def add(cls: type, checks: list[Check]) -> None:
        if select is not None:
            kept = [c for c in checks if select(f"{c.spec}.{c.property}")]
            report.deselected += len(checks) - len(kept)
            if len(kept) < len(checks):
                deselected_specs.add(cls.spec_name)
            checks = kept
        for c in checks:
            if c.status != "ok" and c.reason != "interrupted" and not first_unexpected:
                first_unexpected.append(c)
            if c.trace:
                c.trace = with_shown(with_sources(c.trace, info(cls).actions), info(cls).vars)
            c.initial_shown = shown_state(c.initial_state, info(cls).vars)
            report.checks.append(c)
            if on_check and c.reason not in interrupts.STOPPED:  # what an interrupt left undecided is summed up once
                on_check(c)

    planned: list[tuple[type, dict, list[Task]]] = []
    errored: set[str] = set()

    def warn(text: str) -> None:
        report.warnings.append(text)
        if on_note:
            if progress is not None:
                progress.clear()
            on_note(f"warning: {text}")

    plain = [c.spec_name for c in classes if models and set(models) != {"sc"} and "memory" not in info(c).params]
    if plain and on_note:  # said once: their verdicts are the same under every model
        on_note(f"note: {', '.join(plain)} {'has' if len(plain) == 1 else 'have'} no access= annotations: "
                f"{'its' if len(plain) == 1 else 'their'} steps run as under sc with --memory {memory} "
                f"(docs/weak-memory.md)")
    for cls in classes:  # every spec's runs first: the progress line counts them, an interrupt names them
        try:
            own = own_sets(cls, sets)
            if models and "memory" in info(cls).params and "memory" not in own:
                own["memory"] = tuple(info(cls).params["memory"].lookup(m)[0] for m in models)
            shown = [info(cls).params["memory"].show(v) for v in own.get("memory", ())] \
                if "memory" in info(cls).params else []
            report.specs[cls.spec_name] = {"file": info(cls).file, "kernel": cls.kernel, "assumptions": [
                a for m in (shown or [None]) for a in all_assumptions(cls, m)]}
            report.specs[cls.spec_name]["assumptions"] = list(dict.fromkeys(report.specs[cls.spec_name]["assumptions"]))
            left_out: list[str] = []
            tasks = plan(cls, own, mode=mode, simulate=simulate, bmc=bmc, coverage=coverage, prover=prover,
                         notes=left_out)
            for text in left_out if on_note else ():
                on_note(f"note: {text}")
            tasks, why = _sc_only_engines(cls, own, tasks)
            if why and on_note:
                on_note(f"note: {why}")
            planned.append((cls, own, tasks))
            note = sweep_note(cls, own, [t.params for t in tasks if t.engine in ("explore", "simulate")])
            if note and on_note:
                on_note(f"note: {note}")
            points = [t.params for t in tasks if t.params is not None] or [resolve_params(cls, {})]
            report.warnings += vacuous_invariants(cls, list(dict.fromkeys(points)))
        except BaseException as e:  # noqa: BLE001 - a CheckerError, or spec code that failed (spec_error decides)
            e = spec_error(e, cls.__name__, {info(cls).file})
            report.specs.setdefault(cls.spec_name, {"file": info(cls).file, "kernel": cls.kernel,
                                                    "assumptions": list(all_assumptions(cls))})
            report.errors.append(ErrorInfo(e.message, e.file or info(cls).file, e.line))
            errored.add(cls.spec_name)
            if planned and planned[-1][0] is cls:  # it failed after its runs were planned: none of them run
                planned.pop()
    done: list[tuple[type, list[Task]]] = []  # tasks finished per spec, for the zero-check test

    def engine_run(cls: type, own: dict, task: Task, run: int, progress: Progress | None, graphs: list | None,
                   ran: set, warn: Callable[[str], None]) -> list[Check]:
        with running_spec_code(cls.__name__, {info(cls).file}):
            return engines.run(task.engine, Request(
                cls, task.params, sets=own if task.sets is None else task.sets,
                limits=limits, runner=runner, options=options, run=run, progress=progress,
                graphs=graphs if task.engine == "explore" else None, warn=warn,
                ran=ran if task.engine == "explore" else None))

    workers = min(workers, sum(len(tasks) for _cls, _own, tasks in planned))
    parallel = workers > 1 and not (stop_early or coverage or cluster or checkpoint is not None or (jobs or 1) > 1)
    if parallel and max_memory is None:  # the compiled searches running at once share the default budget
        from checker.compiled.engine import default_max_memory

        limits = Limits(max_states=max_states, timeout=timeout, smt_timeout=smt_timeout,
                        max_memory=default_max_memory() // workers)
    try:
        if parallel:
            report.workers = workers
            _run_on_workers(workers, planned, engine_run, add, warn, report, ids, done, errored, progress, on_start)
        for j, (cls, own, tasks) in enumerate([] if parallel else planned, 1):
            if stop_early and first_unexpected:
                raise _Stop
            done.append((cls, []))
            graphs: list | None = [] if coverage else None
            ran: set[tuple[str, str]] = set()  # a bug spec's overrides that ran while it was explored
            try:
                for k, task in enumerate(tasks, 1):
                    if stop_early and first_unexpected:
                        raise _Stop
                    if progress is not None:
                        progress.at(f"spec {j} of {len(planned)}, point {k} of {len(tasks)}"
                                    + _likely(report.checks, cls, task, progress))
                    if on_start is not None:
                        on_start(cls.spec_name, TASK_MODE[task.engine])
                    run = next(ids)
                    try:
                        # an interrupt a destructor swallowed, or one noted while importing, ends the run
                        # here, with this task's checks and the rest listed as not decided
                        interrupts.check()
                        if task.engine == "coverage":
                            if graphs:
                                from checker.live import coverage_check
                                add(cls, [coverage_check(cls, graphs, run=run)])
                        else:
                            t_task = time.perf_counter()
                            try:
                                with interrupts.as_interrupt():
                                    checks = engine_run(cls, own, task, run, progress, graphs, ran, warn)
                            finally:
                                phase = TASK_MODE[task.engine]
                                report.phases[phase] = report.phases.get(phase, 0.0) + time.perf_counter() - t_task
                            add(cls, checks)
                    except KeyboardInterrupt:
                        add(cls, interrupted_checks(cls, task, run))
                        for rest in tasks[k:]:
                            add(cls, interrupted_checks(cls, rest, next(ids)))
                        raise
                    done[-1][1].append(task)
                report.warnings += _overrides_never_ran(cls, tasks, ran)
            except CheckerError as e:
                report.errors.append(ErrorInfo(e.message, e.file or info(cls).file, e.line))
                errored.add(cls.spec_name)
    except _Stop:
        c = first_unexpected[0]
        left = sum(len(tasks) for _cls, _own, tasks in planned) - sum(len(tasks) for _cls, tasks in done)
        specs_left = len(planned) - len(done)
        report.stopped = (f"stopped at the first result not as expected (-x): {c.spec}.{c.property} "
                          f"{c.verdict}; {left} engine run{'s' if left != 1 else ''} not run"
                          + (f", {specs_left} spec{'s' if specs_left != 1 else ''} not started" if specs_left else ""))
        finish()
        return report
    except KeyboardInterrupt:
        report.interrupted = True
        for cls, _own, tasks in planned[len(done):]:
            for task in tasks:
                add(cls, interrupted_checks(cls, task, next(ids)))
    finish()
    unbounded = sum(1 for c in report.checks if c.backend == "explore" and c.engine not in (None, "compiled"))
    if max_memory is not None and unbounded:
        warn(f"--max-memory bounds the compiled explorer only: {unbounded} checks were explored by the "
             f"interpreter, which it does not bound (running out of memory there is reported as inconclusive, "
             f"memory); --engine compiled enforces it")
    if report.interrupted:
        return report
    checked = {c.spec for c in report.checks}
    for cls, own, tasks in planned:
        if cls.spec_name in checked or cls.spec_name in errored or cls.spec_name in deselected_specs:
            continue
        why = nothing_checked(cls, own, tasks, mode, simulate)
        if cls.spec_name in named:
            report.errors.append(ErrorInfo(why, info(cls).file, None))
        else:
            report.warnings.append(why)
    if not report.checks and not report.errors and report.deselected:
        report.errors.append(ErrorInfo(f"-k kept none of the {report.deselected} checks decided"))
    if not report.checks and not report.errors:
        names = ", ".join(c.spec_name for c in classes) or "no spec"
        report.errors.append(ErrorInfo(f"nothing was checked: selected {names}; " + "; ".join(report.warnings)))
        report.warnings.clear()
    return report
