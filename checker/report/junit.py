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
- An SC-only claim at a weak-memory point (``not_applicable``: not checked,
  on purpose) is ``<skipped>``, the only skip.
- An error that stopped a spec (a malformed spec, a bad ``--set``) is an
  ``<error>`` case in a suite named ``errors``.

Times add up: the checks decided by one search (or one proof run) share its
time, so each case gets its share, and a suite's time is the sum of its
cases (the whole run's, on ``<testsuites>``, also counts loading and
planning). Each suite names its spec's file relative to the repository (or,
for a built-in spec, to the directory holding ``specs/``), and carries the
tool's version and command line as properties.
"""
from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

from checker.report.explain import case_name, details, has_trace, summary
from checker.report.locate import Locator
from checker.result import INCONCLUSIVE, NOT_APPLICABLE, Check
from checker.verify import ErrorInfo, Report


def _time(seconds: float) -> str:
    return f"{seconds:.3f}"


def shares(checks: list[Check]) -> list[float]:
    """Each check's share of the time of the search that decided it. The checks of one run that carry the
    same time were decided by one measurement (a search decides every property at once); a check with a
    time of its own (a liveness check on the state graph) keeps it."""
    together: dict[tuple[int, float], int] = {}
    for c in checks:
        together[(c.run, c.seconds)] = together.get((c.run, c.seconds), 0) + 1
    return [c.seconds / together[(c.run, c.seconds)] for c in checks]


def _case(parent: ET.Element, c: Check, spec_arg: str | None, seconds: float) -> str:
    """Add one check's case; return its status."""
    case = ET.SubElement(parent, "testcase", name=case_name(c), classname=f"countercheck.{c.spec}",
                         time=f"{seconds:.6f}")
    if c.verdict == INCONCLUSIVE:
        el = ET.SubElement(case, "error", type="inconclusive", message=summary(c))
        el.text = "\n".join(details(c, spec_arg)) + "\n"
    elif c.status == "failed":
        kind = "bug not found" if c.expected == "violated" else "violated"
        el = ET.SubElement(case, "failure", type=kind, message=summary(c))
        el.text = "\n".join(details(c, spec_arg)) + "\n"
    elif c.verdict == NOT_APPLICABLE:  # an SC-only claim at a weak-memory point: not checked, on purpose
        ET.SubElement(case, "skipped", message=c.reason or "not applicable")
        return "skipped"
    elif c.bug and has_trace(c):
        ET.SubElement(case, "system-out").text = "\n".join(details(c, spec_arg)) + "\n"
    return c.status


def _error_case(parent: ET.Element, e: ErrorInfo, locator: Locator) -> None:
    file = locator.file(e.file).path if e.file else None
    where = f"{file}:{e.line}" if file and e.line else (file or "countercheck")
    case = ET.SubElement(parent, "testcase", name=where, classname="countercheck.errors", time=_time(0))
    ET.SubElement(case, "error", type="error", message=e.message).text = f"{where}: {e.message}\n"


def _properties(parent: ET.Element, report: Report) -> None:
    props = ET.SubElement(parent, "properties")
    tool = report.tool()
    for name, value in (("countercheck.version", tool["version"]), ("countercheck.command_line",
                        tool["command_line"]), ("countercheck.mode", report.mode),
                        ("countercheck.memory", report.memory)):
        if value is not None:
            ET.SubElement(props, "property", name=name, value=value)


def render(report: Report, *, spec_args: dict[str, str] | None = None, cwd: Path | None = None) -> str:
    """The whole report as a JUnit XML document; paths relative to ``cwd`` (default: the current directory)."""
    spec_args = spec_args or {}
    locator = Locator(cwd)
    by_spec: dict[str, list[Check]] = {}
    for c in report.checks:
        by_spec.setdefault(c.spec, []).append(c)
    own = dict(zip(map(id, report.checks), shares(report.checks), strict=True))
    root = ET.Element("testsuites", name="countercheck", time=_time(report.seconds))
    totals = {"tests": 0, "failures": 0, "errors": 0}
    version = report.tool()["version"]
    for spec, checks in by_spec.items():
        times = [own[id(c)] for c in checks]
        suite = ET.SubElement(root, "testsuite", name=spec, tests=str(len(checks)), time=_time(sum(times)))
        _properties(suite, report)
        statuses = [_case(suite, c, spec_args.get(spec), t) for c, t in zip(checks, times, strict=True)]
        counts = {"failures": statuses.count("failed"), "errors": statuses.count("inconclusive"),
                  "skipped": statuses.count("skipped")}
        for k, v in counts.items():
            suite.set(k, str(v))
            if k in totals:  # (the XSD's testsuites has no skipped count)
                totals[k] += v
        suite.set("version", version)
        totals["tests"] += len(checks)
        file = report.specs.get(spec, {}).get("file")
        if file:
            suite.set("file", locator.file(file).path)
    if report.errors:
        suite = ET.SubElement(root, "testsuite", name="errors", tests=str(len(report.errors)), failures="0",
                              errors=str(len(report.errors)), skipped="0", time=_time(0), version=version)
        _properties(suite, report)
        for e in report.errors:
            _error_case(suite, e, locator)
        totals["tests"] += len(report.errors)
        totals["errors"] += len(report.errors)
    for k, v in totals.items():
        root.set(k, str(v))
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"
