# SPDX-License-Identifier: GPL-2.0-only
"""Why a check needs attention, in the words the CI outputs share (JUnit, SARIF, pytest)."""
from __future__ import annotations

from checker.report.text import check_line, params_text, trace_block
from checker.report.trace import first_paragraph
from checker.result import INCONCLUSIVE, VIOLATED, Check


def case_name(c: Check) -> str:
    """``read_bound [variant=B ncpus=2] explore``: unique within a spec's checks of one run."""
    kind = "" if c.kind in ("invariant", "proof") else f" ({c.kind})"
    return f"{c.property}{kind} [{params_text(c.params)}] {c.backend}"


def summary(c: Check) -> str:
    """One line: what went wrong with a failed or inconclusive check (or what was found)."""
    where = f"{c.spec}.{c.property} [{params_text(c.params)}]"
    if c.verdict == INCONCLUSIVE:
        return f"{where}: inconclusive ({c.reason})"
    if c.status == "ok":
        return f"{where}: {c.verdict} as expected" + ("; bug found" if c.bug and c.verdict == VIOLATED else "")
    if c.expected == VIOLATED:
        return f"{where}: expected bug not found: the property {c.verdict} (expected violated)"
    if c.kind == "sometimes":
        return f"{where}: never reached (a sometimes property nothing reaches is a failure)"
    steps = f" after {len(c.trace)} steps" if c.trace else ""
    return f"{where}: {c.kind if c.kind == 'deadlock' else 'violated'}{steps}"


def has_trace(c: Check) -> bool:
    """A trace worth printing: the steps to a violation (a witness is not a failure's story)."""
    return c.verdict == VIOLATED and c.kind != "sometimes" and bool(c.trace_text or c.trace)


def details(c: Check, spec_arg: str | None = None) -> list[str]:
    """The trace with its claim and reproduce line, or the check's line and claim when there is no trace."""
    if has_trace(c):
        return trace_block(c, spec_arg)
    lines = [check_line(c)]
    if c.doc:
        lines.append(f"  claim: {first_paragraph(c.doc)}")
    return lines
