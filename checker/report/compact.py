# SPDX-License-Identifier: GPL-2.0-only
"""The default report's body: one line per spec and mode, a mark per parameter point (as pytest's).

    percpu_eager      explore  ...........x..  14 points, 168 checks, 61,210 states, 3.2s
    percpu_eager      prove    .               1 run, 24 checks, 0.4s

A point's mark says the worst of its checks: ``F`` one failed (a violation, or a bug not found),
``?`` one is inconclusive (a limit, Z3 unknown), ``x`` a planted bug found (a bug spec's expected
violation), ``.`` all as expected.
``-v`` prints a line per check instead (``checker.report.text.check_line``).
"""
from __future__ import annotations

from typing import Callable, Iterable

from checker.report.style import PLAIN, Style
from checker.result import VIOLATED, Check

#: A point's mark and the colour it takes, worst first.
MARKS = (("F", "failed"), ("?", "inconclusive"), ("x", "bug"), (".", "ok"))
#: The marks' column is this wide unless a spec has more points.
MARK_COLUMN = 12
#: Marks per line: a spec with more points continues its marks on the next lines, as pytest wraps.
MARKS_PER_LINE = 40


def mode_of(c: Check) -> str:
    """The mode a check belongs to on the spec's line: explore, simulate, prove or bmc."""
    if c.backend == "z3":
        return "bmc" if c.extra.get("method") == "bmc" else "prove"
    return c.backend


def mark(checks: Iterable[Check]) -> tuple[str, str]:
    """The mark of one point (one run) and its colour's name."""
    seen = set()
    for c in checks:
        if c.status == "failed":
            seen.add("F")
        elif c.status == "inconclusive":
            seen.add("?")
        elif c.verdict == VIOLATED and c.expected == VIOLATED and c.bug:
            seen.add("x")
    return next(((m, s) for m, s in MARKS if m in seen), (".", "ok"))


def run_states(checks: Iterable[Check]) -> int | None:
    """Distinct states of one exploration or simulation: the reduced search's count, not the unreduced graph's."""
    checks = list(checks)
    counts = [c.states for c in checks if c.states is not None and c.kind not in ("coverage", "build")
              and c.extra.get("graph") != "unreduced"]
    # a liveness-only point explores the unreduced graph alone: its states are those
    counts = counts or [c.states for c in checks if c.states is not None and c.kind not in ("coverage", "build")]
    return max(counts) if counts else None


def total_states(checks: Iterable[Check]) -> int:
    """States explored by the whole run: each exploration counted once."""
    runs: dict[tuple[str, int], list[Check]] = {}
    for c in checks:
        if c.backend in ("explore", "simulate"):
            runs.setdefault((c.spec, c.run), []).append(c)
    return sum(run_states(cs) or 0 for cs in runs.values())


class SpecLines:
    """Collects checks as they are decided and writes a spec's line when its mode is done.

    ``start`` (a run of the spec in a mode begins) writes the line of the group before as soon as
    another begins, so a line never waits for the next spec's first result; ``finish`` writes the last.
    """

    def __init__(self, write: Callable[[str], None], *, style: Style = PLAIN, width: int = 20):
        self._write = write
        self._style = style
        self._width = width
        self._key: tuple[str, str] | None = None
        self._runs: dict[int, list[Check]] = {}

    def start(self, spec: str, mode: str) -> None:
        if self._key is not None and self._key != (spec, mode):
            self._flush()

    def add(self, c: Check) -> None:
        key = (c.spec, mode_of(c))
        if key != self._key:
            self._flush()
            self._key = key
        self._runs.setdefault(c.run, []).append(c)

    def finish(self) -> None:
        self._flush()

    def _flush(self) -> None:
        if self._key is not None and self._runs:
            self._write(self.line(self._key, list(self._runs.values())))
        self._key, self._runs = None, {}

    def line(self, key: tuple[str, str], runs: list[list[Check]]) -> str:
        spec, mode = key
        st = self._style
        checks = [c for cs in runs for c in cs]
        runs = [cs for cs in runs if any(c.kind != "coverage" for c in cs)]  # --coverage's check is no point
        marks = [st.status(m, colour) for m, colour in (mark(cs) for cs in runs)]
        n = len(runs)
        unit = "point" if mode in ("explore", "simulate", "bmc") else "run"
        parts = [f"{n} {unit}{'s' if n != 1 else ''}", f"{len(checks):,} check{'s' if len(checks) != 1 else ''}"]
        if mode in ("explore", "simulate"):
            parts.append(f"{sum(run_states(cs) or 0 for cs in runs):,} states")
        # A run's checks share its time: count each run once.
        parts.append(f"{sum(max((c.seconds for c in cs), default=0.0) for cs in runs):.1f}s")
        failed = sum(c.status == "failed" for c in checks)
        undecided = sum(c.status == "inconclusive" for c in checks)
        bugs = len({c.property for c in checks if c.verdict == VIOLATED and c.expected == VIOLATED and c.bug})
        if bugs:
            parts.append(f"{bugs} bug{'s' if bugs != 1 else ''} found")
        if undecided:
            parts.append(st.status(f"{undecided} inconclusive", "inconclusive"))
        if failed:
            parts.append(st.status(f"{failed} failed", "failed"))
        rows = ["".join(marks[i:i + MARKS_PER_LINE]) for i in range(0, n, MARKS_PER_LINE)] or [""]
        last = n - MARKS_PER_LINE * (len(rows) - 1)
        pad = " " * max(0, MARK_COLUMN - last)  # the counts start in one column while the marks are few
        indent = " " * (self._width + 11)
        head = f"{spec:<{self._width}}  {mode:<8} "
        return "\n".join((head if i == 0 else indent) + row for i, row in enumerate(rows)) + \
            f"{pad}  {', '.join(parts)}"


def render(checks: list[Check], *, style: Style = PLAIN, width: int | None = None) -> list[str]:
    """Every spec line of a finished report, in the order the checks were decided."""
    out: list[str] = []
    lines = SpecLines(out.append, style=style, width=width or max((len(c.spec) for c in checks), default=0))
    for c in checks:
        lines.add(c)
    lines.finish()
    return out
