# SPDX-License-Identifier: GPL-2.0-only
"""JUnit XML: one test case per check, one test suite per spec.

The layout follows the Jenkins xunit-plugin's ``junit-10.xsd`` (the schema
pytest and Surefire also write to); the tests validate against it.

- A check as expected is a passing case; a found bug carries its trace in
  ``<system-out>`` so the dashboard shows what was caught.
- An unexpected violation, or an expected bug not found, is a ``<failure>``
  whose text is the trace (or the check's line and claim when there is none).
- An inconclusive check is an ``<error type="inconclusive">``, not a
  ``<skipped>``: dashboards count skips as neither pass nor fail and show a
  green run, while the command line exits 3 for it. An error keeps the
  dashboard and the exit code in agreement, and says which limit was hit.
- An error that stopped a spec (a malformed spec, a bad ``--set``) is an
  ``<error>`` case in a suite named ``errors``.
"""
from __future__ import annotations

import xml.etree.ElementTree as ET

from checker.report.explain import case_name, details, has_trace, summary
from checker.result import INCONCLUSIVE, Check
from checker.verify import ErrorInfo, Report


def _time(seconds: float) -> str:
    return f"{seconds:.3f}"


def _case(parent: ET.Element, c: Check, spec_arg: str | None) -> str:
    """Add one check's case; return its status."""
    case = ET.SubElement(parent, "testcase", name=case_name(c), classname=f"countercheck.{c.spec}",
                         time=_time(c.seconds))
    if c.verdict == INCONCLUSIVE:
        el = ET.SubElement(case, "error", type="inconclusive", message=summary(c))
        el.text = "\n".join(details(c, spec_arg)) + "\n"
    elif c.status == "failed":
        kind = "bug not found" if c.expected == "violated" else "violated"
        el = ET.SubElement(case, "failure", type=kind, message=summary(c))
        el.text = "\n".join(details(c, spec_arg)) + "\n"
    elif c.bug and has_trace(c):
        ET.SubElement(case, "system-out").text = "\n".join(details(c, spec_arg)) + "\n"
    return c.status


def _error_case(parent: ET.Element, e: ErrorInfo) -> None:
    where = f"{e.file}:{e.line}" if e.file and e.line else (e.file or "countercheck")
    case = ET.SubElement(parent, "testcase", name=where, classname="countercheck.errors", time=_time(0))
    ET.SubElement(case, "error", type="error", message=e.message).text = f"{where}: {e.message}\n"


def render(report: Report, *, spec_args: dict[str, str] | None = None) -> str:
    """The whole report as a JUnit XML document."""
    spec_args = spec_args or {}
    by_spec: dict[str, list[Check]] = {}
    for c in report.checks:
        by_spec.setdefault(c.spec, []).append(c)
    root = ET.Element("testsuites", name="countercheck", time=_time(report.seconds))
    totals = {"tests": 0, "failures": 0, "errors": 0}
    for spec, checks in by_spec.items():
        runs = {c.run: c.seconds for c in checks}  # the checks of one run share its time: count it once
        suite = ET.SubElement(root, "testsuite", name=spec, tests=str(len(checks)), time=_time(sum(runs.values())))
        statuses = [_case(suite, c, spec_args.get(spec)) for c in checks]
        counts = {"failures": statuses.count("failed"), "errors": statuses.count("inconclusive")}
        for k, v in counts.items():
            suite.set(k, str(v))
            totals[k] += v
        suite.set("skipped", "0")
        totals["tests"] += len(checks)
        file = report.specs.get(spec, {}).get("file")
        if file:
            suite.set("file", file)
    if report.errors:
        suite = ET.SubElement(root, "testsuite", name="errors", tests=str(len(report.errors)), failures="0",
                              errors=str(len(report.errors)), skipped="0", time=_time(0))
        for e in report.errors:
            _error_case(suite, e)
        totals["tests"] += len(report.errors)
        totals["errors"] += len(report.errors)
    for k, v in totals.items():
        root.set(k, str(v))
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"
