"""SARIF 2.1.0: a result for every check that needs attention.

Results, one per check:

- an unexpected violation, and an expected bug not found: level ``error``;
- an inconclusive check: level ``warning`` (a limit was hit; it proves nothing).

A bug found as expected is no result at all: it is the bug corpus working,
and a code-scanning view would otherwise keep a permanent alert on every bug
spec. The JUnit and JSON outputs still list it.

Each result is located at the property's line in its spec file. A trace
becomes a code flow: one thread flow in the trace's order (the steps of
several CPUs interleave, and the interleaving is the story), each location
at the line of the step's action. Paths are relative to one of two bases,
described in ``originalUriBaseIds``: ``SRCROOT``, the current directory
(specs in the user's repository), and ``COUNTERCHECK``, the installed
``checker`` package (built-in specs). A file under neither is an absolute
``file:`` URI.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

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
        text = {SRCROOT: "the directory countercheck ran in: specs of the user's repository",
                BUILTIN: "the installed checker package: built-in specs (specs/, specs/bugs/)"}
        return {k: {"uri": p.resolve().as_uri() + "/", "description": {"text": text[k]}}
                for k, p in self.roots.items()}

    def artifact(self, file: str) -> dict[str, Any]:
        """A file relative to the built-in base first (built-ins may also lie under the current
        directory, as in a checkout of countercheck itself), then to the current directory."""
        p = Path(file)
        for base_id in (BUILTIN, SRCROOT):
            root = self.roots[base_id]
            for a, b in ((p, root), (p.resolve(), root.resolve())):
                try:
                    return {"uri": a.relative_to(b).as_posix(), "uriBaseId": base_id}
                except ValueError:
                    continue
        return {"uri": p.resolve().as_uri()}


def _location(bases: _Bases, file: str | None, line: int | None, message: str | None = None) -> dict[str, Any]:
    phys: dict[str, Any] = {"artifactLocation": bases.artifact(file)} if file else {}
    if file and line:
        phys["region"] = {"startLine": line}
    loc: dict[str, Any] = {"physicalLocation": phys} if phys else {}
    if message:
        loc["message"] = {"text": message}
    return loc


def _code_flow(bases: _Bases, c: Check) -> dict[str, Any]:
    # trace_text has one row per step, after an optional "(start)" row for uninitialised values.
    rows = c.trace_text[-len(c.trace):] if len(c.trace_text) >= len(c.trace) else []
    locs = []
    for i, st in enumerate(c.trace):
        text = rows[i].strip() if rows else _step_text(i + 1, st)
        tfl: dict[str, Any] = {"location": _location(bases, st.file, st.line, text), "executionOrder": i + 1}
        if st.changes:
            tfl["state"] = {k: {"text": str(v)} for k, v in st.changes.items()}
        locs.append(tfl)
    return {"message": {"text": summary(c)}, "threadFlows": [{"locations": locs}]}


def _step_text(n: int, st: Step) -> str:
    who = "-" if st.cpu is None else f"cpu{st.cpu}"
    return f"{n}  {who}  {st.action}"


def _result(bases: _Bases, c: Check, rule_index: int, spec_arg: str | None) -> dict[str, Any]:
    r: dict[str, Any] = {
        "ruleId": f"{c.spec}.{c.property}", "ruleIndex": rule_index,
        "level": "warning" if c.verdict == INCONCLUSIVE else "error",
        "message": {"text": summary(c) + "\n" + "\n".join(details(c, spec_arg))},
        "properties": {"verdict": c.verdict, "expected": c.expected, "backend": c.backend, "kind": c.kind,
                       "params": dict(c.params),
                       **({"reason": c.reason} if c.reason else {})},
    }
    loc = _location(bases, c.file, c.line)
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
    results = []
    for c in report.checks:
        if not wanted(c):
            continue
        rid = f"{c.spec}.{c.property}"
        if rid not in index:
            index[rid] = len(rules)
            rule: dict[str, Any] = {"id": rid, "name": c.property}
            if c.doc:
                rule["shortDescription"] = {"text": first_paragraph(c.doc)}
            rules.append(rule)
        results.append(_result(bases, c, index[rid], spec_args.get(c.spec)))
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
