# SPDX-License-Identifier: GPL-2.0-only
"""The human report: a line per spec (or, with -v, per check), then what needs reading, ending
on what failed and the summary, as pytest and cargo test end."""
from __future__ import annotations

import fnmatch
import shlex
from typing import Iterable

from checker.invocation import invoked_as
from checker.report import compact, growth
from checker.report.style import PLAIN, Style
from checker.report.lanes import trace_lines
from checker.interrupts import INTERRUPTED, STOPPED, cause
from checker.report.trace import first_paragraph
from checker.result import NOT_APPLICABLE, Check
from checker.verify import Report

EXIT_MEANING = {0: "everything as expected", 1: "a property failed or an expected bug was not found",
                2: "an error stopped some checks", 3: "inconclusive"}

#: What an inconclusive check's reason means, for the summary line (the first word of the reason).
_UNDECIDED = {"not_inductive": "not inductive: an induction step failed, strengthen the invariant",
              "interrupted": "interrupted", "max_states": "a limit was reached", "timeout": "a limit was reached",
              "memory": "out of memory", "worker_lost": "a worker was lost",
              "solver_unknown": "Z3 answered unknown", "not_parametric": "not provable for a symbolic range",
              "max_memory": "the memory budget ran out"}

#: What a user can do about a search that ran out of memory (the summary's line per spec and reason; a state
#: or time limit gets the growth line's estimate and the flag to raise instead).
_NEXT = {"max_memory": "raise --max-memory (its default is half the memory available), or store 8-byte "
                       "fingerprints with --fingerprint (the omission probability is reported)",
         "memory": "the machine ran out of memory: set --max-memory below it, or use --fingerprint"}


def exit_meaning(report: Report) -> str:
    """What the exit code says about this run: for exit 3, which kinds of undecided there were."""
    code = report.exit_code
    if code != 3:
        return EXIT_MEANING[code]
    why: list[str] = []
    if report.interrupted:
        why.append("interrupted" if cause() == INTERRUPTED else "timeout (--deadline)")
    for c in report.checks:
        if c.verdict == "inconclusive" and not (report.interrupted and c.reason in STOPPED):
            key = (c.reason or "").split(":")[0].split(" ")[0]
            text = _UNDECIDED.get(key, "a limit was reached" if key in ("", "max_states") else "undecided: "
                                  + (c.reason or "")[:60])
            if text not in why:
                why.append(text)
    return "inconclusive: " + "; ".join(why or ["undecided"])


def params_text(params: dict) -> str:
    """A parameter point as ``name=value`` words."""
    return " ".join(f"{k}={v}" for k, v in params.items())


def check_line(c: Check) -> str:
    """One check's line of text: status, verdict, spec and property, point, states and time."""
    status = {"ok": "ok", "failed": "FAIL", "inconclusive": "??"}[c.status]
    verdict = c.verdict + (f" ({c.reason})" if c.reason else "")
    if c.extra.get("bounded"):  # the task model's scheduler was bounded: never an unqualified holds
        verdict += f" (for {c.extra['bounded']})"
    note = ""
    if c.expected == "violated":
        note = "  [expected violated" + ("; bug found]" if c.bug and c.verdict == "violated" else "]")
    if c.kind == "build":
        stats = f"{len(c.extra.get('build_errors', []))} build errors"
    elif c.kind == "coverage":
        dead = c.extra.get("dead", [])
        stats = f"{c.transitions} transitions (unreduced)" + (f"; never fire: {', '.join(dead)}" if dead else "")
    elif c.extra.get("graph") == "unreduced":
        fair = c.extra.get("fairness")
        stats = f"{c.states} states (unreduced graph{'' if fair != 'none' else ', no fairness'}" + (
            f"; abstraction: {c.extra['abstraction']}" if c.extra.get("abstraction") else "") + (
            f"; {c.engine_note}" if c.engine_note else "") + ")"  # (compiled liveness, or why it was not)
    elif c.reason in STOPPED:
        stats = "not decided"
    elif c.verdict == NOT_APPLICABLE:  # an SC-only claim at a weak-memory point: not checked, on purpose
        stats = "not checked"
    elif c.extra.get("unreached"):
        stats = c.extra["unreached"]
    elif c.backend == "explore":
        stats = f"{c.states} states"
        if c.engine == "compiled":
            stats += f" (compiled; {c.engine_note})" if c.engine_note else " (compiled)"
        elif c.engine_note:
            stats += f" ({c.engine_note})"
        if c.extra.get("fingerprint"):
            stats += f" (fingerprints: P(a state missed) <= {c.extra['omission_probability']:.1e})"
    elif c.backend == "simulate":
        stats = f"{c.extra.get('runs_done')} runs, {c.states} states"
    elif c.extra.get("method") == "bmc":
        stats = f"bmc k={c.depth}" + (" (all runs covered)" if c.extra.get("exhausted") else "")
    elif c.extra.get("method") == "pdr":
        stats = ("pdr, invariant re-proved by induction" if c.verdict == "holds" else
                 f"pdr, a run of {c.depth} steps replayed" if c.verdict == "violated" else "pdr")
    elif c.extra.get("method") == "bit-vector":
        stats = (f"every {c.extra.get('width')}-bit word" if c.verdict == "holds"
                 else "a concrete word" if c.verdict == "violated" else "")
    elif c.extra.get("method") == "construction":
        final = ", ".join(f"{k}={v}" for k, v in c.extra.get("final", {}).items())
        stats = f"by construction, {c.extra.get('steps')} steps" + (f", ending at {final}" if final else "")
    else:
        stats = f"{c.extra.get('method')}, {c.extra.get('obligations')} obligations"
        if c.verdict == "holds":
            ranges = [f"{k} {v}" for k, v in c.params.items() if isinstance(v, str)]
            stats = "proved for " + (", ".join(ranges) if ranges else "this point") + f" ({stats})"
    kind = "" if c.kind == "invariant" else f" ({c.kind})"
    return (f"{status:<4}  {verdict:<22}  {c.spec}.{c.property}{kind}  [{params_text(c.params)}]  "
            f"{stats}  {c.seconds:.2f}s{note}")


def reproduce(c: Check, spec_arg: str | None = None, prog: str | None = None) -> str:
    """The command that runs this check's point again; ``prog`` is how countercheck was invoked."""
    parts = [*(prog or invoked_as()).split(), "verify", spec_arg or c.spec]
    for k, v in c.params.items():
        if k not in c.computed:  # derived again from the rest when the line is rerun
            parts += ["--set", f"{k}={v}"]
    if not c.requested_symmetry and c.backend == "explore":
        parts.append("--no-symmetry")
    if c.extra.get("method") == "pdr":
        parts += ["--mode", "prove", "--prover", "pdr"]
    if c.backend == "simulate" and c.extra.get("method") == "swarm":  # run r depends on the seed and r alone
        parts += ["--search", "swarm", "--depth", str(c.extra["max_depth"]), "--seed", str(c.extra["seed"])]
    elif c.backend == "simulate":  # the same runs, so the same trace
        parts += ["--simulate", str(c.extra["runs"]), "--depth", str(c.extra["max_depth"]),
                  "--seed", str(c.extra["seed"])]
    return " ".join(shlex.quote(p) for p in parts)


def trace_block(c: Check, spec_arg: str | None = None, prog: str | None = None, *, style: str = "lanes",
                width: int = 100) -> list[str]:
    """A check's trace as text lines (``checker.report.lanes``: ``style`` and ``width``), with its claim and
    the reproduce line; ``prog`` is how countercheck was invoked."""
    n = len(c.trace)
    if c.kind == "build":
        return [f"{c.spec}: the build fails; {params_text(c.params)}"] + ["  " + t for t in c.trace_text]
    if c.kind == "coverage":
        k = len(c.extra.get("points", []))
        return ([f"{c.spec}: transitions per action, without reductions, over {k} point{'s' if k != 1 else ''}"]
                + ["  " + t for t in c.trace_text])
    if c.kind == "lemma":
        head = f"{c.spec}.{c.property} violated by a concrete word"
    elif c.extra.get("method") == "pdr" and c.verdict == "holds":
        head = f"{c.spec}.{c.property} proved by IC3/PDR"
    elif c.extra.get("method") == "inferred" and c.verdict == "holds":
        head = f"{c.spec}.{c.property} proved for every CPU count without lemmas"
    elif c.extra.get("method") == "inferred-at-point" and c.verdict == "holds":
        head = f"{c.spec}.{c.property} proved at this point without lemmas"
    elif c.kind == "proof":
        head = f"{c.spec}.{c.property} not proved ({c.reason or c.verdict})"
    elif c.kind == "sometimes":
        head = f"{c.spec}.{c.property} reached after {n} steps (shortest witness)"
    elif c.kind == "deadlock":
        head = (f"{c.spec}: deadlock after {n} steps (shortest)" if c.property == "no_deadlock" else
                f"{c.spec}.{c.property}: deadlock after {n} steps (shortest)")
    elif c.kind == "inversion":
        head = (f"{c.spec}.{c.property} violated: two shortest traces, of {n} and "
                f"{len(c.extra.get('second_trace', []))} steps")
    elif c.loop_start is not None:
        head = (f"{c.spec}.{c.property} violated: a run of {n} steps that "
                + ("stops" if c.loop_start == n else f"loops from step {c.loop_start + 1}")
                + " (shortest prefix)")
    else:
        head = f"{c.spec}.{c.property} violated after {n} steps (shortest)"
    if c.extra.get("method") == "pdr":  # Spacer's run, replayed: any length, not necessarily the shortest
        head = head.replace("(shortest)", "(IC3/PDR, replayed; not necessarily shortest)")
    if c.backend == "simulate":  # found at random, then shrunk: not a shortest trace
        head = head.replace("(shortest witness)", "(witness,").replace("(shortest)", "(")
        head += (f"shrunk from {c.extra['original_steps']}; {c.extra['strategy']})" if c.extra.get("method") == "swarm"
                 else f"shrunk from {c.extra['original_steps']}; simulation run {c.extra['found_in_run']}, "
                      f"strategy {c.extra['strategy']})")
    head += f"; {params_text(c.params)}"
    lines = [head]
    if c.doc:
        lines.append(f"  claim: {first_paragraph(c.doc)}")
    if c.extra.get("finding"):
        lines.append(f"  found: {c.extra['finding']}")
    lines += ["  " + t for t in trace_lines(c, style, width - 2)] or ["  (the initial state)"]
    again = (f"{prog or invoked_as()} verify {shlex.quote(spec_arg or c.spec)} --mode prove"
             + (" --prover infer" if c.extra.get("method") in ("inferred", "inferred-at-point", "per-n-laws") else "")
             if c.kind in ("lemma", "proof") else reproduce(c, spec_arg, prog))
    lines.append(f"  reproduce: {again}")
    return lines


#: --traces keywords, least to most; any other word names checks (``read_bound``, ``spec.read_bound``, globs).
TRACE_LEVELS = ("none", "failed", "bugs", "all")


def trace_words(traces: str | Iterable[str]) -> list[str]:
    """``--traces`` values as words: ``bugs``, ``read_bound,percpu_eager.sum_*`` and the like."""
    items = [traces] if isinstance(traces, str) else list(traces)
    return [w.strip() for item in items for w in item.split(",") if w.strip()]


def names_check(word: str, c: Check) -> bool:
    """Does a ``--traces`` word (a property, ``spec.property``, a spec or a glob) name check ``c``?"""
    return any(fnmatch.fnmatchcase(n, word) for n in (c.property, f"{c.spec}.{c.property}", c.spec))


def wants_trace(c: Check, traces: str | Iterable[str] = "failed") -> bool:
    """Whether the report prints ``c``'s trace: failures always (unless ``none``), bugs found as expected
    with ``bugs``, every trace with ``all``, and the checks a word names."""
    words = trace_words(traces)
    if c.extra.get("method") in ("pdr", "inferred", "inferred-at-point") and c.verdict == "holds":  # to paste or read
        return bool(c.trace_text) and words != ["none"]
    levels = [w for w in words if w in TRACE_LEVELS]
    level = max(levels, key=TRACE_LEVELS.index) if levels else "failed"
    if any(names_check(w, c) for w in words if w not in TRACE_LEVELS):
        level = "all"
    if c.kind == "coverage":
        return c.verdict == "violated" or level == "all"
    if c.kind == "proof":  # a counterexample to induction: what to strengthen, so shown unless asked not to
        return bool(c.trace_text) and c.verdict != "holds" and level != "none"
    if c.kind == "build":
        return c.verdict == "violated" and ((c.status == "failed" and level != "none") or level in ("bugs", "all"))
    if not c.trace and not (c.verdict == "violated" and c.kind != "sometimes"):
        return False
    if c.kind == "sometimes" and c.verdict != "holds":
        return False
    if level == "all":
        return True
    if c.status == "failed":
        return level != "none"
    return level == "bugs" and c.bug and c.verdict == "violated"


def traces_allowed(traces: str | Iterable[str]) -> bool:
    """``--traces none`` alone: no trace, and no failure's details either (the list and summary say enough)."""
    return trace_words(traces) != ["none"]


def unmatched_trace_words(report: Report, traces: str | Iterable[str]) -> list[str]:
    """``--traces`` words that name no check of the run (a typo, or a check -k left out)."""
    return [w for w in trace_words(traces)
            if w not in TRACE_LEVELS and not any(names_check(w, c) for c in report.checks)]


def render(report: Report, *, traces: str | Iterable[str] = "failed", spec_args: dict[str, str] | None = None,
           errors: bool = True, check_lines: bool = True, verbose: int = 0, style: Style = PLAIN,
           prog: str | None = None, trace_style: str = "lanes", width: int = 100) -> str:
    """The whole human report; ``errors=False`` leaves the errors to stderr, ``check_lines=False``
    the body (the spec or check lines, printed as each was decided) out. ``verbose`` below 0 leaves
    the body out too; 1 or more gives a line per check, every spec's assumptions and the growth of
    its state counts. ``trace_style`` and ``width`` draw the traces (``checker.report.lanes``)."""
    out: list[str] = []
    if check_lines and verbose >= 0:
        out += ([style_check_line(c, style) for c in report.checks] if verbose > 0
                else compact.render(report.checks, style=style))
    out += _details(report, traces, spec_args or {}, style, prog, trace_style, width)
    failing = {c.spec for c in report.checks if c.status == "failed"}
    for name, spec in report.specs.items():
        if verbose > 0 or name in failing:
            out.append(f"{name} models {spec['kernel']}, assuming:")
            out += [f"  - {a}" for a in spec["assumptions"]]
    out += [f"warning: {w}" for w in report.warnings]
    out += [f"warning: --traces {w} names no check of this run" for w in unmatched_trace_words(report, traces)]
    out += growth.report_lines(report.checks, everything=verbose > 0)
    if report.interrupted:
        left: dict[str, int] = {}
        for c in report.checks:
            if c.reason in STOPPED:
                left[c.spec] = left.get(c.spec, 0) + 1
        if left:
            out.append(("interrupted" if cause() == INTERRUPTED else "deadline reached")
                       + ", not decided: " + ", ".join(f"{n} checks of {s}" for s, n in left.items()))
    for e in report.errors if errors else ():
        where = f"{e.file}:{e.line}: " if e.file and e.line else (f"{e.file}: " if e.file else "")
        out.append(style.status(f"error: {where}{e.message}", "failed"))
    if report.stopped:
        out.append(report.stopped)
    listed = not_as_expected(report, style)
    if listed and out and out[-1] != "":
        out.append("")
    out += listed
    out.append(summary_line(report, style))
    return "\n".join(out) + "\n"


def _details(report: Report, traces: str | Iterable[str], spec_args: dict[str, str], style: Style,
             prog: str | None, trace_style: str = "lanes", width: int = 100) -> list[str]:
    """The traces asked for, then each failure's: its trace, or its line and claim when it has none
    (a sometimes never reached, a bug not found). One per spec and property: the first point's."""
    shown, seen = [], set()
    for c in report.checks:
        if wants_trace(c, traces) and (c.spec, c.property, c.status) not in seen:
            seen.add((c.spec, c.property, c.status))
            shown.append(c)
    for c in report.checks:
        if c.status == "failed" and (c.spec, c.property, c.status) not in seen and traces_allowed(traces):
            seen.add((c.spec, c.property, c.status))
            shown.append(c)
    shown.sort(key=lambda c: c.status == "failed")  # the failures last: just above the list and the summary
    out = [""] if shown else []
    for c in shown:
        if wants_trace(c, traces):
            block = trace_block(c, spec_args.get(c.spec), prog, style=trace_style, width=width)
            out += [style.status(block[0], c.status) if c.status != "ok" else block[0], *block[1:]]
        else:
            out += [style_check_line(c, style)] + ([f"  claim: {first_paragraph(c.doc)}"] if c.doc else [])
        out.append("")
    return out


def style_check_line(c: Check, style: Style = PLAIN) -> str:
    """``check_line`` with its status word coloured."""
    line = check_line(c)
    word = line[:4].rstrip()
    return style.status(word, c.status) + line[len(word):]


def not_as_expected(report: Report, style: Style = PLAIN, limit: int = 3) -> list[str]:
    """The checks that decide the exit code, as pytest's short summary lists failed tests: a line per
    failed property (its points), a line per spec and reason left inconclusive."""
    failed: dict[tuple[str, str], list[Check]] = {}
    undecided: dict[tuple[str, str], list[Check]] = {}
    for c in report.checks:
        if c.status == "failed":
            failed.setdefault((c.spec, c.property), []).append(c)
        elif c.status == "inconclusive" and c.reason != "interrupted":
            undecided.setdefault((c.spec, (c.reason or "inconclusive").split(":")[0]), []).append(c)
    out = []
    for (spec, prop), cs in failed.items():
        what = ("expected bug not looked for: the property is sc_only at this memory model"
                if cs[0].expected == "violated" and cs[0].verdict == NOT_APPLICABLE else
                "expected bug not found" if cs[0].expected == "violated" else
                "never reached" if cs[0].kind == "sometimes" else cs[0].verdict)
        points = "; ".join(f"[{params_text(c.params)}]" for c in cs[:limit]) + (" ..." if len(cs) > limit else "")
        out.append(f"{style.status('FAIL', 'failed')}  {spec}.{prop}: {what} at {len(cs)} "
                   f"point{'s' if len(cs) != 1 else ''}: {points}")
    for (spec, why), cs in undecided.items():
        runs = len({c.run for c in cs})
        nxt = f": {_NEXT[why]}" if why in _NEXT else ""
        out.append(f"{style.status('??', 'inconclusive')}    {spec}: {len(cs)} check{'s' if len(cs) != 1 else ''} "
                   f"inconclusive ({why}) in {runs} run{'s' if runs != 1 else ''}{nxt}")
    return out


#: ``--timings``: the phases in the order a run goes through them.
PHASES = ("compile", "explore", "simulate", "prove", "bmc")


def timings_line(report: Report) -> str:
    """``--timings``: where this process's wall time went: compiling the compiled explorer's programs (how
    many were built, not found in the build cache), exploring (the searches, without their compiles),
    proving with Z3, and the rest (planning, reports); with several workers, the phases summed over them."""
    parts = []
    for phase in PHASES:
        if phase in report.phases:
            built = (f" ({report.programs_built} program{'s' if report.programs_built != 1 else ''} built)"
                     if phase == "compile" else "")
            parts.append(f"{phase} {report.phases[phase]:.1f}s{built}")
    if "compile" not in report.phases and "explore" in report.phases:
        parts.insert(0, "compile 0.0s (no program built)")
    if report.workers > 1:  # the workers' phases overlap: their sum is no share of the wall time
        return f"time: {report.seconds:.1f}s on {report.workers} workers, whose phases summed: " + ", ".join(parts)
    rest = report.seconds - sum(report.phases.values())
    return f"time: {report.seconds:.1f}s: " + ", ".join(parts + [f"the rest {max(0.0, rest):.1f}s"])


def summary_line(report: Report, style: Style = PLAIN) -> str:
    """The last line of a report: counts, states, time and the exit code with its meaning."""
    k = report.counts()
    runs = len({(c.spec, c.run) for c in report.checks})
    states = compact.total_states(report.checks)
    explored = any(c.backend in ("explore", "simulate") for c in report.checks)
    line = (f"{len(report.checks)} checks in {runs} runs{f' ({states:,} states)' if explored else ''}: "
            f"{k['holds']} holds, {k['violated']} violated, "
            f"{k['inconclusive']} inconclusive"
            + (f", {k[NOT_APPLICABLE]} not applicable" if k.get(NOT_APPLICABLE) else "")
            + f"; {k['failed']} not as expected; "
            f"{len(report.errors)} errors; "
            + (f"{report.deselected} deselected by -k; " if report.deselected else "")
            + f"{report.seconds:.1f}s; exit {report.exit_code} "
            f"({exit_meaning(report)})")
    return style.status(line, {0: "ok", 1: "failed", 2: "failed", 3: "inconclusive"}[report.exit_code])
