"""``verify``: specs x parameter sweeps x backends -> a Report.

Library calls return results; only the command line prints.
"""
from __future__ import annotations

import itertools
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable

from checker.errors import CheckerError, SpecError, UsageError
from checker.explore import DEADLOCK, explore
from checker.overrides import never_ran, removed_steps, warning as override_warning
from checker.result import HOLDS, VERDICTS, Check, Step
from checker.report.progress import Progress
from checker.report.trace import render_trace
from checker.spec.compile import Model
from checker.spec.lint import lint
from checker.spec.model import Params, all_assumptions, info, resolve_params

if TYPE_CHECKING:
    from checker.simulate.checks import SimulateOptions

SCHEMA_VERSION = "1.1"  # 1.1: steps may carry the file and line of their action


@dataclass
class ErrorInfo:
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
    #: What ran but may not mean what was intended (a bug spec's override that never ran).
    warnings: list[str] = field(default_factory=list)

    @property
    def exit_code(self) -> int:
        """0 all as expected, 1 a failure, 2 an error, 3 inconclusive: the first that applies of 2, 1, 3, 0."""
        if self.errors:
            return 2
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

    def to_json(self) -> dict[str, Any]:
        return {
            "schema_version": SCHEMA_VERSION,
            "checks": [c.to_json() for c in self.checks],
            "summary": {"ok": self.ok, "exit_code": self.exit_code, "seconds": round(self.seconds, 3),
                        **self.counts()},
            "errors": [e.to_json() for e in self.errors],
            "warnings": list(self.warnings),
            "specs": self.specs,
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


def param_points(cls: type, sets: dict[str, tuple[int, ...]], mode: str = "explore") -> list[Params]:
    """The default sweep: for each entry of the spec's ``explore_sweeps`` (one
    entry, the parameters' own sweeps, for ``prove``), the cross product of
    the values set on the command line, else the entry's values, else the
    parameter's sweep for ``mode``, else its (possibly derived) default."""
    si = info(cls)
    entries = cls.explore_sweeps if mode == "explore" else ({},)
    points = []
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
        for combo in itertools.product(*(vals for _, vals in axes)):
            if "symbolic" in combo:
                raise UsageError(f"{cls.spec_name}: 'symbolic' is a value for --mode prove only")
            points.append(resolve_params(cls, {n: v for n, v in zip(names, combo) if v != "default"}))
    return list(dict.fromkeys(points))


def check_sets_apply(classes: list[type], sets: dict[str, Any]) -> None:
    for name in sets:
        if not any(name in info(c).params for c in classes):
            known = sorted({p for c in classes for p in info(c).params})
            raise UsageError(f"no selected spec has a parameter {name!r}; their parameters are: "
                             f"{', '.join(known)}")


def explore_checks(cls: type, params: Params, *, symmetry: bool = True, max_states: int | None = None,
                   timeout: float | None = None, run: int = 0, jobs: int | None = None, cluster: str | None = None,
                   checkpoint: Path | None = None, resume: bool = False, progress: Progress | None = None,
                   fingerprint: bool = False, graphs: list | None = None,
                   ran: set[tuple[str, str]] | None = None) -> list[Check]:
    """Explore one spec at one parameter point; one Check per property. Liveness properties are
    checked on the unreduced state graph, which ``graphs`` (for coverage) also collects. ``ran``
    collects the bug spec's overrides that ran (checker.overrides)."""
    from checker.live import graph_for, liveness_checks
    from checker.overrides import watching

    model = Model(cls, params)
    lint(model)
    here = (jobs or 1) == 1 and cluster is None  # other processes' calls are not seen: assume they ran
    if ran is not None and not here:
        ran.update((cls.__name__, n) for n in cls.__countercheck_overrides__)
    if ran is not None:
        ran.update((cls.__name__, n) for n in removed_steps(model, cls.__countercheck_overrides__))
    with watching() as seen:
        sg = graph_for(model, max_states) if (model.liveness or graphs is not None) else None
        if graphs is not None:
            graphs.append((model, sg))
        live = liveness_checks(cls, model, sg, run) if model.liveness else []
        if model.abstraction is not None:  # unbounded runs with dropped values: liveness only
            if ran is not None:
                ran.update(seen)
            return live
        result = explore(model, symmetry=symmetry, max_states=max_states, timeout=timeout, jobs=jobs,
                         cluster=cluster, checkpoint=checkpoint, resume=resume, fingerprint=fingerprint,
                         progress=progress.exploring(f"{model.name} [{params}]") if progress else None)
    if ran is not None:
        ran.update(seen)
    si = model.info
    checks = [build_check(cls, model, run)] if si.api is not None else []
    for name, out in result.outcomes.items():
        start = out.initial_state or result.initial_state
        expected, file, line, doc = property_meta(model, name)
        checks.append(Check(
            spec=model.name, file=file, line=line, params=params.shown(), property=name, kind=out.kind,
            backend="explore", verdict=out.verdict, expected=expected, reason=out.reason,
            symmetry=result.symmetry, states=result.states, transitions=result.transitions,
            depth=result.depth, seconds=result.seconds, run=run, initial_state=start,
            trace=out.trace, doc=doc, bug=name in cls.expect_violated, requested_symmetry=symmetry,
            computed=params.computed,
            trace_text=render_trace(model, start, out.trace) if out.trace else [],
            extra={} if result.omission_probability is None else
            {"fingerprint": True, "omission_probability": result.omission_probability}))
    return checks + live


def property_meta(model: Model, name: str) -> tuple[str, str | None, int | None, str]:
    """(expected verdict, file, line, doc) of a property, the deadlock check included."""
    si = model.info
    if name == DEADLOCK:
        return (si.builtin_expect.get(DEADLOCK, HOLDS), si.file, si.line,
                "no state where work is left and nothing is enabled")
    p = next(p for p in model.properties if p.name == name)
    return p.expect, p.file, p.line, p.doc


MODES = ("explore", "prove", "all")
#: Seconds per Z3 query unless --smt-timeout says otherwise: every query has one.
DEFAULT_SMT_TIMEOUT = 60.0


def build_check(cls: type, model: Model, run: int) -> Check:
    """Does every kernel symbol the spec's actions call exist in this configuration?"""
    si = model.info
    errors = si.api.build_errors(si.actions.values(), model.params)
    expected = si.builtin_expect.get("builds", HOLDS)
    c = Check(spec=model.name, file=si.file, line=si.line, params=model.params.shown(), property="builds",
              kind="build", backend="explore", verdict="violated" if errors else HOLDS, expected=expected,
              run=run, doc="every symbol a caller uses exists in this configuration",
              bug="builds" in cls.expect_violated, extra={"build_errors": [str(e) for e in errors]})
    c.trace_text = [str(e) for e in errors]
    return c


def with_sources(steps: list[Step], actions: dict[str, Any]) -> list[Step]:
    """Each step with the file and first line of its action's definition, where Python knows them."""
    out = []
    for st in steps:
        a = actions.get(st.action)
        out.append(replace(st, file=a.file, line=a.line) if a is not None and a.line is not None else st)
    return out


def verify(classes: list[type], *, sets: dict[str, tuple[int, ...]] | None = None, symmetry: bool = True,
           max_states: int | None = None, timeout: float | None = None, mode: str = "all",
           bmc: int | None = None, smt_timeout: float | None = DEFAULT_SMT_TIMEOUT, emit_smt: Path | None = None,
           on_check: Callable[[Check], None] | None = None, jobs: int | None = None,
           simulate: SimulateOptions | None = None, progress: Progress | None = None,
           fingerprint: bool = False, coverage: bool = False, cluster: str | None = None,
           checkpoint: Path | None = None, resume: bool = False) -> Report:
    """Run every selected spec: the explorer over its explore sweep, the Z3
    backend over its prove sweep (``mode``), BMC at the explore points when
    ``bmc`` is a depth. ``jobs`` processes explore each point (same results),
    as Ray actors with ``cluster``; ``checkpoint`` and ``resume``: see ``explore``.
    ``simulate`` (a ``checker.simulate.checks.SimulateOptions``) replaces all
    of these with random simulation at the explore points. ``progress`` shows
    long runs live (``checker.report.progress``). With ``coverage``, a
    coverage check per spec."""
    if mode not in MODES:
        raise UsageError(f"--mode {mode!r}: choose one of {', '.join(MODES)}")
    sets = sets or {}
    report = Report()
    t0 = time.perf_counter()
    check_sets_apply(classes, sets)
    ids = itertools.count(1)

    def add(checks: list[Check]) -> None:
        for c in checks:
            if c.trace:
                c.trace = with_sources(c.trace, info(cls).actions)
            report.checks.append(c)
            if on_check:
                on_check(c)

    for cls in classes:
        report.specs[cls.spec_name] = {"file": info(cls).file, "kernel": cls.kernel,
                                       "assumptions": list(all_assumptions(cls))}
        try:
            own = own_sets(cls, sets)
            points = param_points(cls, own, "explore")
            if simulate is not None:
                from checker.simulate.checks import simulate_checks

                ab = info(cls).abstraction
                for params in points:
                    if ab is not None and ab.when(params):
                        continue  # a liveness-only point: its invariants would read the dropped values
                    add(simulate_checks(cls, params, simulate, timeout=timeout, run=next(ids)))
                continue
            if mode in ("explore", "all"):
                graphs: list | None = [] if coverage else None
                ran: set[tuple[str, str]] = set()
                for params in points:
                    add(explore_checks(cls, params, symmetry=symmetry, max_states=max_states,
                                       timeout=timeout, run=next(ids), jobs=jobs, progress=progress,
                                       fingerprint=fingerprint, graphs=graphs, cluster=cluster,
                                       checkpoint=checkpoint, resume=resume, ran=ran))
                missed = never_ran(cls, ran)
                if missed:
                    report.warnings.append(override_warning(
                        cls, missed, f"{len(points)} point{'s' if len(points) != 1 else ''}"))
                if graphs:
                    from checker.live import coverage_check
                    add([coverage_check(cls, graphs, run=next(ids))])
            if mode in ("prove", "all"):
                from checker.prove import bmc_checks, prove_checks

                add(prove_checks(cls, own, smt_timeout=smt_timeout, emit_dir=emit_smt, run=next(ids),
                                 progress=progress.proving if progress else None, cluster=cluster))
                if bmc is not None:
                    for params in points:
                        add(bmc_checks(cls, params, bmc, smt_timeout=smt_timeout, run=next(ids)))
        except CheckerError as e:
            report.errors.append(ErrorInfo(e.message, e.file or info(cls).file, e.line))
    report.seconds = time.perf_counter() - t0
    return report
