# SPDX-License-Identifier: GPL-2.0-only
"""GitHub Actions: workflow commands in the log and a step summary, when run under Actions.

With ``GITHUB_ACTIONS=true`` (Actions sets it), ``verify`` ends its output
with a ``::group::`` per spec (folded in the log; its title counts the checks
as expected, its body has the lines of the others) holding an
``::error file=,line=::`` for each check not as expected and a ``::warning``
for each inconclusive one (Actions shows them on the file in a pull
request's diff), and appends a markdown table, a row per spec, with the
failures listed under it, to the file ``$GITHUB_STEP_SUMMARY`` names.

Files are named as ``checker.report.locate`` places them (a user's spec at
its property's line; a built-in one at the kernel function in a kernel tree),
relative to the repository, as Actions expects.
"""
from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TextIO

from checker.report.explain import details, has_trace, summary
from checker.report.locate import SRCROOT, Locator
from checker.report.text import check_line
from checker.result import Check
from checker.verify import Report


def active(environ: dict[str, str]) -> bool:
    """Is this run a GitHub Actions step (``GITHUB_ACTIONS=true``)?"""
    return environ.get("GITHUB_ACTIONS") == "true"


def _data(text: str) -> str:
    """A workflow command's message: ``%``, CR and LF escaped, as the Actions toolkit does."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _prop(text: str) -> str:
    """A workflow command's property value: also ``:`` and ``,``."""
    return _data(text).replace(":", "%3A").replace(",", "%2C")


def _annotation(c: Check, locator: Locator, report: Report, spec_arg: str | None) -> str:
    kind = "warning" if c.status == "inconclusive" else "error"
    spec = report.specs.get(c.spec, {})
    place = locator.check(c.file or spec.get("file"), c.line if c.file else None, spec.get("kernel", ""),
                          (c.property, c.doc))
    props = []
    if place is not None and place.base == SRCROOT and not place.uri.startswith("../"):
        props.append(f"file={_prop(place.uri)}")  # a file in the repository Actions checked out
        if place.line:
            props.append(f"line={place.line}")
    props.append(f"title={_prop(summary(c))}")
    body = details(c, spec_arg) if has_trace(c) else [summary(c)] + details(c, spec_arg)
    return f"::{kind} {','.join(props)}::{_data(chr(10).join(body))}"


def commands(report: Report, *, spec_args: dict[str, str] | None = None, cwd: Path | None = None,
             kernel_tree: Path | None = None) -> str:
    """The log's workflow commands: a group per spec, with an annotation per check that needs attention."""
    spec_args = spec_args or {}
    locator = Locator(cwd, kernel_tree)
    by_spec: dict[str, list[Check]] = {}
    for c in report.checks:
        by_spec.setdefault(c.spec, []).append(c)
    out = []
    for spec, checks in by_spec.items():
        bad = [c for c in checks if c.status != "ok"]
        out.append(f"::group::{spec}: {len(checks) - len(bad)} of {len(checks)} checks as expected")
        out += [check_line(c) for c in bad]  # the log above has every check's line already
        seen: set[tuple[str, str]] = set()
        for c in bad:  # one annotation per property and status: the first parameter point's
            if (c.property, c.status) not in seen:
                seen.add((c.property, c.status))
                out.append(_annotation(c, locator, report, spec_args.get(spec)))
        out.append("::endgroup::")
    for e in report.errors:
        where = []
        if e.file:
            place = locator.file(e.file, e.line)
            if not place.uri.startswith("../") and place.base == SRCROOT:
                where = [f"file={_prop(place.uri)}"] + ([f"line={e.line}"] if e.line else [])
        out.append(f"::error {','.join(where + ['title=countercheck error'])}::{_data(e.message)}")
    return "\n".join(out) + "\n" if out else ""


def step_summary(report: Report) -> str:
    """A markdown table, a row per spec, then the checks not as expected."""
    by_spec: dict[str, list[Check]] = {}
    for c in report.checks:
        by_spec.setdefault(c.spec, []).append(c)
    tool = report.tool()
    icon = {0: "✅", 1: "❌", 2: "❌", 3: "⚠️"}[report.exit_code]
    out = [f"### {icon} countercheck {tool['version']}: exit {report.exit_code}", ""]
    if tool["command_line"]:
        out += [f"`{tool['command_line']}`", ""]
    out += ["| spec | checks | as expected | failed | inconclusive | states |", "|---|---:|---:|---:|---:|---:|"]
    for spec, checks in by_spec.items():
        n = {s: sum(1 for c in checks if c.status == s) for s in ("ok", "failed", "inconclusive")}
        states = sum({c.run: c.states or 0 for c in checks if c.backend == "explore"}.values())
        out.append(f"| `{spec}` | {len(checks)} | {n['ok']} | {n['failed']} | {n['inconclusive']} | {states:,} |")
    bad = [c for c in report.checks if c.status != "ok"]
    if bad or report.errors:
        out += ["", "**Not as expected:**", ""]
        out += [f"- `{summary(c)}`" for c in bad]
        out += [f"- error: {e.message}" for e in report.errors]
    return "\n".join(out) + "\n"


def publish(report: Report, *, spec_args: dict[str, str] | None = None, out: TextIO,
            kernel_tree: str | None = None, environ: dict[str, str] | None = None) -> None:
    """Under Actions (else nothing): the workflow commands to ``out``, the summary appended to
    ``$GITHUB_STEP_SUMMARY`` (Actions collects what every step appends)."""
    env = dict(os.environ) if environ is None else environ
    if not active(env):
        return
    out.write(commands(report, spec_args=spec_args, kernel_tree=Path(kernel_tree) if kernel_tree else None))
    out.flush()
    path = env.get("GITHUB_STEP_SUMMARY")
    if path:
        try:
            with open(path, "a", encoding="utf-8") as f:
                f.write(step_summary(report))
        except OSError as e:
            print(f"warning: cannot append to $GITHUB_STEP_SUMMARY ({path}): {e.strerror}", file=sys.stderr)
