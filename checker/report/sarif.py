# SPDX-License-Identifier: GPL-2.0-only
"""SARIF 2.1.0: a result for every property that needs attention.

Results, one per (spec, property, verdict), listing the parameter points
(and backends) where the checks came out so in ``properties.points``:

- an unexpected violation, and an expected bug not found: level ``error``;
- an inconclusive check: level ``warning`` (a limit was hit; it proves nothing).

Each result carries ``partialFingerprints`` computed from (spec, property,
verdict) alone, so repeated uploads of the same finding are one alert, and a
change in durations, counts or parameter points does not make a new one.

A bug found as expected is no result at all: it is the bug corpus working,
and a code-scanning view would otherwise keep a permanent alert on every bug
spec. The JUnit and JSON outputs still list it.

Each result of a spec in the user's files is located at the property's line
in its spec file, relative to ``SRCROOT`` (the current directory, described
in ``originalUriBaseIds``); a file outside it is an absolute ``file:`` URI. A
trace becomes a code flow: one thread flow in the trace's order (the steps of
several CPUs interleave, and the interleaving is the story), each location at
the line of the step's action. A built-in spec lives in the installed
package, not in the user's repository, so its results and steps carry a
logical location only (``percpu_eager.read_bound``): a code-scanning view
cannot open a file that is not in the repository it scans.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

import hashlib

import checker
from checker.report.explain import details, has_trace, summary
from checker.report.trace import first_paragraph
from checker.result import INCONCLUSIVE, Check, Step
from checker.verify import Report

SCHEMA_URI = "https://json.schemastore.org/sarif-2.1.0.json"
SRCROOT = "SRCROOT"
BUILTIN = "COUNTERCHECK"


class _Bases:
    """Where relative URIs start: the current directory and the installed package."""

    def __init__(self, cwd: Path | None = None):
        self.roots = {BUILTIN: Path(checker.__file__).parent, SRCROOT: Path(cwd or Path.cwd())}

    def original(self) -> dict[str, Any]:
        text = "the directory countercheck ran in: specs of the user's repository"
        return {SRCROOT: {"uri": self.roots[SRCROOT].resolve().as_uri() + "/", "description": {"text": text}}}

    def builtin(self, file: str) -> bool:
        """Is ``file`` one of the installed package's own (a built-in spec)? Checked first: built-ins
        may also lie under the current directory, as in a checkout of countercheck itself."""
        import checker.specs  # installed, inside the package; in a checkout, the top-level specs/ (checker.layout)

        p = Path(file)
        for root in (self.roots[BUILTIN], Path(checker.specs.__file__).parent):
            for a, b in ((p, root), (p.resolve(), root.resolve())):
                try:
                    a.relative_to(b)
                    return True
                except ValueError:
                    continue
        return False

    def artifact(self, file: str) -> dict[str, Any]:
        """A user's file relative to the current directory, else an absolute URI."""
        p = Path(file)
        root = self.roots[SRCROOT]
        for a, b in ((p, root), (p.resolve(), root.resolve())):
            try:
                return {"uri": a.relative_to(b).as_posix(), "uriBaseId": SRCROOT}
            except ValueError:
                continue
        return {"uri": p.resolve().as_uri()}


def _location(bases: _Bases, file: str | None, line: int | None, message: str | None = None,
              logical: str | None = None) -> dict[str, Any]:
    """A physical location in a user's file; for a built-in spec's file the logical name only."""
    if file and bases.builtin(file):
        file = None
    phys: dict[str, Any] = {"artifactLocation": bases.artifact(file)} if file else {}
    if file and line:
        phys["region"] = {"startLine": line}
    loc: dict[str, Any] = {"physicalLocation": phys} if phys else {}
    if logical and not phys:
        loc["logicalLocations"] = [{"fullyQualifiedName": logical, "name": logical.rsplit(".", 1)[-1],
                                    "kind": "function"}]
    if message:
        loc["message"] = {"text": message}
    return loc


def _code_flow(bases: _Bases, c: Check) -> dict[str, Any]:
    # trace_text has one row per step, after an optional "(start)" row for uninitialised values.
    rows = c.trace_text[-len(c.trace):] if len(c.trace_text) >= len(c.trace) else []
    locs = []
    for i, st in enumerate(c.trace):
        text = rows[i].strip() if rows else _step_text(i + 1, st)
        tfl: dict[str, Any] = {"location": _location(bases, st.file, st.line, text, f"{c.spec}.{st.action}"),
                               "executionOrder": i + 1}
        if st.changes:
            tfl["state"] = {k: {"text": str(v)} for k, v in st.changes.items()}
        locs.append(tfl)
    return {"message": {"text": summary(c)}, "threadFlows": [{"locations": locs}]}


def _step_text(n: int, st: Step) -> str:
    who = "-" if st.cpu is None else f"cpu{st.cpu}"
    return f"{n}  {who}  {st.action}"


def fingerprint(c: Check) -> str:
    """Stable across runs: only what the finding is (spec, property, verdict), none of how it was found."""
    return hashlib.sha256(f"{c.spec}\0{c.property}\0{c.verdict}".encode()).hexdigest()[:32]


def _result(bases: _Bases, group: list[Check], rule_index: int, spec_arg: str | None) -> dict[str, Any]:
    c = group[0]  # the first point's check tells the story; the others are listed
    points = [{"params": dict(g.params), "backend": g.backend, **({"reason": g.reason} if g.reason else {})}
              for g in group]
    more = f"\n(and at {len(group) - 1} more parameter points: see properties.points)" if len(group) > 1 else ""
    r: dict[str, Any] = {
        "ruleId": f"{c.spec}.{c.property}", "ruleIndex": rule_index,
        "level": "warning" if c.verdict == INCONCLUSIVE else "error",
        "message": {"text": summary(c) + "\n" + "\n".join(details(c, spec_arg)) + more},
        "partialFingerprints": {"countercheck/v1": fingerprint(c)},
        "properties": {"verdict": c.verdict, "expected": c.expected, "backend": c.backend, "kind": c.kind,
                       "params": dict(c.params), "points": points,
                       **({"reason": c.reason} if c.reason else {})},
    }
    loc = _location(bases, c.file, c.line, logical=f"{c.spec}.{c.property}")
    if loc:
        r["locations"] = [loc]
    if has_trace(c) and c.trace:
        r["codeFlows"] = [_code_flow(bases, c)]
    return r


def wanted(c: Check) -> bool:
    """A failed or inconclusive check; a bug found as expected is not a result (see the module doc)."""
    return c.status != "ok"


def render(report: Report, *, spec_args: dict[str, str] | None = None, cwd: Path | None = None) -> dict[str, Any]:
    """The report as a SARIF 2.1.0 log (a JSON-ready dict)."""
    spec_args = spec_args or {}
    bases = _Bases(cwd)
    rules: list[dict[str, Any]] = []
    index: dict[str, int] = {}
    groups: dict[tuple[str, str, str], list[Check]] = {}
    for c in report.checks:
        if wanted(c):
            groups.setdefault((c.spec, c.property, c.verdict), []).append(c)
    results = []
    for (spec, prop, _verdict), group in groups.items():
        rid = f"{spec}.{prop}"
        if rid not in index:
            index[rid] = len(rules)
            rule: dict[str, Any] = {"id": rid, "name": prop}
            if group[0].doc:
                rule["shortDescription"] = {"text": first_paragraph(group[0].doc)}
            rules.append(rule)
        results.append(_result(bases, group, index[rid], spec_args.get(spec)))
    notes = [{"level": "error", "message": {"text": e.message},
              **({"locations": [_location(bases, e.file, e.line)]} if e.file else {})} for e in report.errors]
    run: dict[str, Any] = {
        "tool": {"driver": {"name": "countercheck", "rules": rules}},
        "originalUriBaseIds": bases.original(),
        "invocations": [{"executionSuccessful": not report.errors, "exitCode": report.exit_code,
                         **({"toolExecutionNotifications": notes} if notes else {})}],
        "results": results,
    }
    return {"$schema": SCHEMA_URI, "version": "2.1.0", "runs": [run]}
