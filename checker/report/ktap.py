# SPDX-License-Identifier: GPL-2.0-only
"""KTAP version 1 (Documentation/dev-tools/ktap.rst): what ``kunit.py parse``, KernelCI and LKP read.

::

    KTAP version 1
    # countercheck 0.1.0: python -m checker verify tiny.py
    1..2
        KTAP version 1
        # Subtest: tiny
        1..3
        ok 1 counted [ncpus=2] explore
        # tiny.below_two violated after 2 steps (shortest); ncpus=2
        #   1  cpu0  add  total: 0 -> 1, left[0]: 1 -> 0
        not ok 2 below_two [ncpus=2] explore
        not ok 3 one_add (sometimes) [ncpus=2] explore # inconclusive (max_states)
    not ok 1 tiny
    ...

A subtest per spec, a result line per check (its JUnit case name), the
trace or the check's line and claim as ``#`` diagnostics before the result
line of a check that is not as expected (the kernel's parser keeps the lines
before a result as that test's log). A bug found as expected is ``ok``, with
its one-line summary as a diagnostic.

An inconclusive check is ``not ok ... # inconclusive (reason)``, never
``# SKIP``: KTAP readers count a skip as passing, and a limit is never a
pass. Errors that stopped a spec are a last subtest, ``errors``, with a
``not ok`` per error.

Test names follow the kernel parser's result-line pattern: no ``#`` in a
name (it starts the directive), so one is replaced.
"""
from __future__ import annotations

from checker.report.explain import case_name, details, has_trace, summary
from checker.provenance import NAME
from checker.result import INCONCLUSIVE, NOT_APPLICABLE, Check
from checker.verify import ErrorInfo, Report

INDENT = "    "  # a subtest's lines are indented by four spaces (ktap.rst)


def _name(text: str) -> str:
    return " ".join(text.replace("#", "No.").split())


def _diag(lines: list[str], indent: str) -> list[str]:
    return [f"{indent}# {line}".rstrip() for ln in lines for line in ln.splitlines()]


def _check(n: int, c: Check, spec_arg: str | None, indent: str) -> list[str]:
    out: list[str] = []
    name = _name(case_name(c))
    if c.status == "ok":
        if c.bug and has_trace(c):
            out += _diag([summary(c)], indent)
        # SKIP only for what is not checked on purpose (an SC-only claim under tso/lkmm), never a limit
        skip = f" # SKIP {_name(c.reason or 'not applicable')}" if c.verdict == NOT_APPLICABLE else ""
        return out + [f"{indent}ok {n} {name}{skip}"]
    text = details(c, spec_arg)
    out += _diag(text if has_trace(c) else [summary(c)] + text, indent)
    directive = f" # inconclusive ({_name(c.reason or 'undecided')})" if c.verdict == INCONCLUSIVE else ""
    return out + [f"{indent}not ok {n} {name}{directive}"]


def _subtest(n: int, name: str, body: list[str], count: int, ok: bool) -> list[str]:
    head = [f"{INDENT}KTAP version 1", f"{INDENT}# Subtest: {name}", f"{INDENT}1..{count}"]
    return head + body + [f"{'ok' if ok else 'not ok'} {n} {name}"]


def _error_lines(errors: list[ErrorInfo]) -> list[str]:
    body: list[str] = []
    for i, e in enumerate(errors, 1):
        where = f"{e.file}:{e.line}" if e.file and e.line else (e.file or NAME)
        body += _diag([f"{where}: {e.message}"], INDENT) + [f"{INDENT}not ok {i} {_name(where)}"]
    return body


def render(report: Report, *, spec_args: dict[str, str] | None = None) -> str:
    """The report as a KTAP version 1 document."""
    spec_args = spec_args or {}
    by_spec: dict[str, list[Check]] = {}
    for c in report.checks:
        by_spec.setdefault(c.spec, []).append(c)
    tool = report.tool()
    out = ["KTAP version 1", f"# {NAME} {tool['version']}" + (f": {tool['command_line']}"
                                                            if tool["command_line"] else "")]
    out.append(f"1..{len(by_spec) + (1 if report.errors else 0)}")
    n = 0
    for n, (spec, checks) in enumerate(by_spec.items(), 1):
        body: list[str] = []
        for i, c in enumerate(checks, 1):
            body += _check(i, c, spec_args.get(spec), INDENT)
        out += _subtest(n, _name(spec), body, len(checks), all(c.status == "ok" for c in checks))
    if report.errors:
        out += _subtest(n + 1, "errors", _error_lines(report.errors), len(report.errors), False)
    k = report.counts()
    out.append(f"# {len(report.checks)} checks: {k['as_expected']} as expected, {k['failed']} failed, "
               f"{k['inconclusive']} inconclusive, {len(report.errors)} errors; exit {report.exit_code}")
    return "\n".join(out) + "\n"
