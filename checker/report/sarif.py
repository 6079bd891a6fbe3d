# SPDX-License-Identifier: GPL-2.0-only
"""SARIF 2.1.0, shaped for GitHub code scanning: a result for every property that needs attention.

Results, one per (spec, property, verdict), listing the parameter points
(and backends) where the checks came out so in ``properties.points``:

- an unexpected violation, and an expected bug not found: level ``error``;
- an inconclusive check: level ``warning`` (a limit was hit; it proves nothing).

A bug found as expected is no result at all: it is the bug corpus working,
and a code-scanning view would otherwise keep a permanent alert on every bug
spec. The JUnit and JSON outputs still list it.

What GitHub's ingestion needs, and where it comes from:

- every result has a physical location (an upload whose results lack one is
  rejected whole): ``checker.report.locate`` gives a user's spec its
  property's line, and a built-in spec the modelled kernel function inside a
  kernel tree, else its own source; every URI is relative, to ``SRCROOT``
  (the repository or kernel tree) or ``COUNTERCHECK`` (the built-in specs'
  directory), both described in ``originalUriBaseIds``;
- every rule has ``shortDescription``, ``fullDescription`` and ``help``
  (text and markdown: the property's doc, what the spec models, its
  assumptions and the line that reproduces the finding);
- the tool's ``version`` and ``informationUri``; ``automationDetails.id`` per
  mode and memory model (``countercheck/explore/sc/``), so uploads of
  different modes are separate analyses; ``invocations[].commandLine``;
- ``partialFingerprints`` from (spec, property, verdict) alone, so repeated
  uploads of the same finding are one alert, and a change in durations,
  counts or parameter points does not make a new one.

A trace becomes a code flow: one thread flow in the trace's order (the steps
of several CPUs interleave, and the interleaving is the story), each location
at the step's action, its state the changed variables as the trace shows them
(``cpu0``, an enum's name) with the raw value in ``properties.raw``.
"""
from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from checker.report.explain import details, has_trace, summary
from checker.report.locate import BUILTIN, SRCROOT, Locator, Place
from checker.provenance import INFORMATION_URI, NAME, version
from checker.report.text import reproduce
from checker.report.trace import first_paragraph
from checker.result import INCONCLUSIVE, Check, Step
from checker.verify import Report

SCHEMA_URI = "https://json.schemastore.org/sarif-2.1.0.json"

_BASE_TEXT = {SRCROOT: "the repository countercheck ran in (the current directory), or the kernel tree "
                       "(--kernel-tree, or a current directory holding Makefile, kernel/ and mm/)",
              BUILTIN: "countercheck's built-in specs: the directory holding specs/ (the installed checker "
                       "package, or a checkout's root)"}


def _physical(place: Place) -> dict[str, Any]:
    phys: dict[str, Any] = {"artifactLocation": {"uri": place.uri, "uriBaseId": place.base}}
    if place.line:
        phys["region"] = {"startLine": place.line}
    return phys


def _location(place: Place | None, logical: str | None = None, message: str | None = None) -> dict[str, Any]:
    loc: dict[str, Any] = {}
    if place is not None:
        loc["physicalLocation"] = _physical(place)
    if logical:
        loc["logicalLocations"] = [{"fullyQualifiedName": logical, "name": logical.rsplit(".", 1)[-1],
                                    "kind": "function"}]
    if message:
        loc["message"] = {"text": message}
    return loc


class _Where:
    """Places of one report's checks and steps."""

    def __init__(self, report: Report, locator: Locator):
        self.report, self.locator = report, locator

    def spec(self, spec: str) -> dict[str, Any]:
        return self.report.specs.get(spec, {})

    def check(self, c: Check) -> Place | None:
        s = self.spec(c.spec)
        place = self.locator.check(c.file or s.get("file"), c.line if c.file else None, s.get("kernel", ""),
                                   (c.property, c.doc))
        return place

    def step(self, c: Check, st: Step, fallback: Place | None) -> Place | None:
        """A step at its action: the kernel function of that name when the place is kernel code, else the
        action's definition in the spec."""
        if fallback is not None and fallback.function is not None and self.locator.kernel_tree is not None:
            kp = self.locator.kernel_place(self.spec(c.spec).get("kernel", ""), (st.action,))
            if kp is not None and kp.function == st.action:
                return kp
            return fallback
        if st.file:
            return self.locator.file(st.file, st.line)
        return fallback


def _state(st: Step) -> dict[str, Any]:
    shown = st.shown or {}
    return {k: {"text": shown.get(k, str(v)), "properties": {"raw": v}} for k, v in st.changes.items()}


def _code_flow(where: _Where, c: Check, place: Place | None) -> dict[str, Any]:
    # trace_text has one row per step, after an optional "(start)" row for uninitialised values.
    rows = c.trace_text[-len(c.trace):] if len(c.trace_text) >= len(c.trace) else []
    locs = []
    for i, st in enumerate(c.trace):
        text = rows[i].strip() if rows else _step_text(i + 1, st)
        tfl: dict[str, Any] = {"location": _location(where.step(c, st, place), f"{c.spec}.{st.action}", text),
                               "executionOrder": i + 1}
        if st.changes:
            tfl["state"] = _state(st)
        locs.append(tfl)
    return {"message": {"text": summary(c)}, "threadFlows": [{"locations": locs}]}


def _step_text(n: int, st: Step) -> str:
    who = "-" if st.cpu is None else f"cpu{st.cpu}"
    return f"{n}  {who}  {st.action}"


def fingerprint(c: Check) -> str:
    """Stable across runs: only what the finding is (spec, property, verdict), none of how it was found."""
    return hashlib.sha256(f"{c.spec}\0{c.property}\0{c.verdict}".encode()).hexdigest()[:32]


def _result(where: _Where, group: list[Check], rule_index: int, spec_arg: str | None) -> dict[str, Any]:
    c = group[0]  # the first point's check tells the story; the others are listed
    points = [{"params": dict(g.params), "backend": g.backend, **({"reason": g.reason} if g.reason else {})}
              for g in group]
    more = f"\n(and at {len(group) - 1} more parameter points: see properties.points)" if len(group) > 1 else ""
    place = where.check(c)
    r: dict[str, Any] = {
        "ruleId": f"{c.spec}.{c.property}", "ruleIndex": rule_index,
        "level": "warning" if c.verdict == INCONCLUSIVE else "error",
        "message": {"text": summary(c) + "\n" + "\n".join(details(c, spec_arg)) + more},
        "locations": [_location(place, f"{c.spec}.{c.property}")],
        "partialFingerprints": {"countercheck/v1": fingerprint(c)},
        "properties": {"verdict": c.verdict, "expected": c.expected, "backend": c.backend, "kind": c.kind,
                       "params": dict(c.params), "points": points,
                       **({"reason": c.reason} if c.reason else {}),
                       **({"kernelFunction": place.function} if place is not None and place.function else {}),
                       **({"initialState": c.initial_shown} if c.initial_shown else {})},
    }
    if has_trace(c) and c.trace:
        r["codeFlows"] = [_code_flow(where, c, place)]
    return r


def _rule(report: Report, c: Check, spec_arg: str | None) -> dict[str, Any]:
    """What a property claims, in the words GitHub shows beside an alert."""
    spec = report.specs.get(c.spec, {})
    claim = first_paragraph(c.doc) if c.doc else f"the {c.kind} {c.property} of {c.spec}"
    full = " ".join(c.doc.split()) if c.doc else claim
    kernel = spec.get("kernel", "")
    assumptions = spec.get("assumptions", [])
    again = reproduce(c, spec_arg)
    text = [f"{c.spec}.{c.property} ({c.kind}): {full}"]
    md = [f"**{c.spec}.{c.property}** ({c.kind})", "", _md_escape(full)]
    if kernel:
        text.append(f"Models: {kernel}")
        md += ["", f"Models: {_md_escape(kernel)}"]
    if assumptions:
        text.append("Assuming:\n" + "\n".join(f"- {a}" for a in assumptions))
        md += ["", "Assuming:", ""] + [f"- {_md_escape(a)}" for a in assumptions]
    text.append(f"Reproduce: {again}")
    md += ["", "Reproduce:", "", "```sh", again, "```"]
    return {"id": f"{c.spec}.{c.property}", "name": c.property,
            "shortDescription": {"text": claim},
            "fullDescription": {"text": full + (f" (models {kernel})" if kernel else "")},
            "help": {"text": "\n\n".join(text), "markdown": "\n".join(md)},
            "defaultConfiguration": {"level": "error"},
            "properties": {"tags": ["countercheck", c.kind]}}


def _md_escape(text: str) -> str:
    """Prose with code-like characters (``*``, ``_``, ``|``) kept literal in markdown."""
    for ch in "\\`*_|<>[]":
        text = text.replace(ch, "\\" + ch)
    return text


def automation_id(report: Report) -> str:
    """One analysis per mode and memory model (GitHub's category is the id up to its last ``/``)."""
    return f"{NAME}/{report.mode}/{report.memory.replace(',', '+')}/"


def wanted(c: Check) -> bool:
    """A failed or inconclusive check; a bug found as expected is not a result (see the module doc)."""
    return c.status != "ok"


def render(report: Report, *, spec_args: dict[str, str] | None = None, cwd: Path | None = None,
           kernel_tree: Path | None = None) -> dict[str, Any]:
    """The report as a SARIF 2.1.0 log (a JSON-ready dict). ``cwd`` is the repository (default: the
    current directory); ``kernel_tree`` a kernel source tree (default: ``cwd`` when it is one)."""
    spec_args = spec_args or {}
    locator = Locator(cwd, kernel_tree)
    where = _Where(report, locator)
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
            rules.append(_rule(report, group[0], spec_args.get(spec)))
        results.append(_result(where, group, index[rid], spec_args.get(spec)))
    notes = [{"level": "error", "message": {"text": e.message},
              **({"locations": [_location(locator.file(e.file, e.line))]} if e.file else {})}
             for e in report.errors]
    invocation: dict[str, Any] = {"executionSuccessful": not report.errors, "exitCode": report.exit_code}
    if report.arguments is not None:
        invocation["commandLine"] = report.command_line()
        invocation["arguments"] = list(report.arguments)
    if notes:
        invocation["toolExecutionNotifications"] = notes
    v = version()
    run: dict[str, Any] = {
        "tool": {"driver": {"name": NAME, "version": v, "informationUri": INFORMATION_URI, "rules": rules,
                            **({"semanticVersion": v} if v[:1].isdigit() and "+" not in v else {})}},
        "automationDetails": {"id": automation_id(report)},
        "originalUriBaseIds": {base: {"uri": root.as_uri() + "/", "description": {"text": _BASE_TEXT[base]}}
                               for base, root in locator.bases().items()},
        "invocations": [invocation],
        "results": results,
        "columnKind": "unicodeCodePoints",
    }
    return {"$schema": SCHEMA_URI, "version": "2.1.0", "runs": [run]}
