# SPDX-License-Identifier: GPL-2.0-only
"""The human report: a line per check, then the traces worth reading."""
from __future__ import annotations

import shlex

from checker.interrupts import INTERRUPTED, STOPPED, cause
from checker.report.trace import first_paragraph
from checker.result import Check
from checker.verify import Report

EXIT_MEANING = {0: "everything as expected", 1: "a property failed or an expected bug was not found",
                2: "an error stopped some checks", 3: "inconclusive"}

#: What an inconclusive check's reason means, for the summary line (the first word of the reason).
_UNDECIDED = {"not_inductive": "not inductive: an induction step failed, strengthen the invariant",
              "interrupted": "interrupted", "max_states": "a limit was reached", "timeout": "a limit was reached",
              "memory": "out of memory", "worker_lost": "a worker was lost",
              "solver_unknown": "Z3 answered unknown", "not_parametric": "not provable for a symbolic range"}


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
    return " ".join(f"{k}={v}" for k, v in params.items())


def check_line(c: Check) -> str:
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
            f"; abstraction: {c.extra['abstraction']}" if c.extra.get("abstraction") else "") + ")"
    elif c.reason in STOPPED:
        stats = "not decided"
    elif c.extra.get("unreached"):
        stats = c.extra["unreached"]
    elif c.backend == "explore":
        stats = f"{c.states} states"
        if c.engine == "compiled":
            stats += " (compiled)"
        elif c.engine_note:
            stats += f" ({c.engine_note})"
        if c.extra.get("fingerprint"):
            stats += f" (fingerprints: P(a state missed) <= {c.extra['omission_probability']:.1e})"
    elif c.backend == "simulate":
        stats = f"{c.extra.get('runs_done')} runs, {c.states} states"
    elif c.extra.get("method") == "bmc":
        stats = f"bmc k={c.depth}" + (" (all runs covered)" if c.extra.get("exhausted") else "")
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


def reproduce(c: Check, spec_arg: str | None = None) -> str:
    parts = ["python", "-m", "checker", "verify", spec_arg or c.spec]
    for k, v in c.params.items():
        if k not in c.computed:  # derived again from the rest when the line is rerun
            parts += ["--set", f"{k}={v}"]
    if not c.requested_symmetry and c.backend == "explore":
        parts.append("--no-symmetry")
    if c.backend == "simulate":  # the same runs, so the same trace
        parts += ["--simulate", str(c.extra["runs"]), "--depth", str(c.extra["max_depth"]),
                  "--seed", str(c.extra["seed"])]
    return " ".join(shlex.quote(p) for p in parts)


def trace_block(c: Check, spec_arg: str | None = None) -> list[str]:
    n = len(c.trace)
    if c.kind == "build":
        return [f"{c.spec}: the build fails; {params_text(c.params)}"] + ["  " + t for t in c.trace_text]
    if c.kind == "coverage":
        k = len(c.extra.get("points", []))
        return ([f"{c.spec}: transitions per action, without reductions, over {k} point{'s' if k != 1 else ''}"]
                + ["  " + t for t in c.trace_text])
    if c.kind == "lemma":
        head = f"{c.spec}.{c.property} violated by a concrete word"
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
    if c.backend == "simulate":  # found at random, then shrunk: not a shortest trace
        head = head.replace("(shortest witness)", "(witness,").replace("(shortest)", "(")
        head += (f"shrunk from {c.extra['original_steps']}; simulation run {c.extra['found_in_run']}, "
                 f"strategy {c.extra['strategy']})")
    head += f"; {params_text(c.params)}"
    lines = [head]
    if c.doc:
        lines.append(f"  claim: {first_paragraph(c.doc)}")
    if c.extra.get("finding"):
        lines.append(f"  found: {c.extra['finding']}")
    lines += ["  " + t for t in c.trace_text] or ["  (the initial state)"]
    again = (f"python -m checker verify {shlex.quote(spec_arg or c.spec)} --mode prove"
             if c.kind in ("lemma", "proof") else reproduce(c, spec_arg))
    lines.append(f"  reproduce: {again}")
    return lines


def wants_trace(c: Check, traces: str) -> bool:
    if c.kind == "coverage":
        return c.verdict == "violated" or traces == "all"
    if c.kind == "proof":  # a counterexample to induction: what to strengthen, so shown unless asked not to
        return bool(c.trace_text) and c.verdict != "holds" and traces != "none"
    if c.kind == "build":
        return c.verdict == "violated" and (c.status == "failed" or traces in ("bugs", "all"))
    if not c.trace and not (c.verdict == "violated" and c.kind != "sometimes"):
        return False
    if c.kind == "sometimes" and c.verdict != "holds":
        return False
    if traces == "all":
        return True
    if c.status == "failed":
        return True
    return traces == "bugs" and c.bug and c.verdict == "violated"


def render(report: Report, *, traces: str = "bugs", spec_args: dict[str, str] | None = None,
           errors: bool = True, check_lines: bool = True) -> str:
    """The whole human report; ``errors=False`` leaves the errors to stderr, ``check_lines=False``
    the lines of the checks (printed as each was decided) out."""
    spec_args = spec_args or {}
    out = [check_line(c) for c in report.checks] if check_lines else []
    shown, seen = [], set()
    for c in report.checks:  # one trace per spec and property: the first parameter point's
        if wants_trace(c, traces) and (c.spec, c.property, c.status) not in seen:
            seen.add((c.spec, c.property, c.status))
            shown.append(c)
    if shown:
        out.append("")
        for c in shown:
            out += trace_block(c, spec_args.get(c.spec))
            out.append("")
    for name, spec in report.specs.items():
        out.append(f"{name} models {spec['kernel']}, assuming:")
        out += [f"  - {a}" for a in spec["assumptions"]]
    out += [f"warning: {w}" for w in report.warnings]
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
        out.append(f"error: {where}{e.message}")
    out.append(summary_line(report))
    return "\n".join(out) + "\n"


def summary_line(report: Report) -> str:
    k = report.counts()
    runs = len({(c.spec, c.run) for c in report.checks})
    return (f"{len(report.checks)} checks in {runs} runs: {k['holds']} holds, {k['violated']} violated, "
            f"{k['inconclusive']} inconclusive; {k['failed']} not as expected; "
            f"{len(report.errors)} errors; {report.seconds:.1f}s; exit {report.exit_code} "
            f"({exit_meaning(report)})")
