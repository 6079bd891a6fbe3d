# SPDX-License-Identifier: GPL-2.0-only
"""A strict KTAP reader with the rules of the kernel's own parser (tools/testing/kunit/kunit_parser.py).

``parse`` below is a strict reading of those rules: a ``KTAP version 1`` header, a plan ``1..N``, then N
tests; a test with subtests opens with an indented ``KTAP version 1`` and ``# Subtest: NAME`` and its plan,
and closes with a result line whose name is NAME; every result line's number is the next one expected;
lines that are none of these are diagnostics, kept as the log of the next test (so a check's trace comes
before its result line). ``# SKIP`` is the only directive that changes a status (to skipped). Where the
kernel's parser records an error and goes on, this one fails the test.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

# The patterns of kunit_parser.py (KTAP_START, TEST_HEADER, TEST_PLAN, TEST_RESULT, TEST_RESULT_SKIP).
KTAP_START = re.compile(r"^\s*KTAP version ([0-9]+)$")
TEST_HEADER = re.compile(r"^\s*# Subtest: (.*)$")
TEST_PLAN = re.compile(r"^\s*1\.\.([0-9]+)")
TEST_RESULT = re.compile(r"^\s*(ok|not ok) ([0-9]+) ?(:?- )?([^#]*)( # .*)?$")
TEST_RESULT_SKIP = re.compile(r"^\s*(ok|not ok) ([0-9]+) ?(:?- )?(.*) # SKIP ?(.*)$")
STRUCTURE = (KTAP_START, TEST_HEADER, TEST_PLAN, TEST_RESULT)


@dataclass
class KtapTest:
    name: str = ""
    status: str = ""  # SUCCESS, FAILURE, SKIPPED
    directive: str = ""
    log: list[str] = field(default_factory=list)
    subtests: list["KtapTest"] = field(default_factory=list)


class Lines:
    def __init__(self, text: str):
        self.lines = text.splitlines()
        self.i = 0

    def peek(self) -> str:
        return self.lines[self.i] if self.i < len(self.lines) else ""

    def pop(self) -> str:
        line = self.peek()
        assert self.i < len(self.lines), "ran out of lines"
        self.i += 1
        return line

    def __bool__(self) -> bool:
        return self.i < len(self.lines)


def diagnostics(lines: Lines) -> list[str]:
    out = []
    while lines and not any(p.match(lines.peek()) for p in STRUCTURE):
        out.append(lines.pop())
    return out


def result(lines: Lines, test: KtapTest, number: int, depth: int) -> None:
    line = lines.pop()
    m = TEST_RESULT.match(line)
    assert m, f"not a result line: {line!r}"
    assert line.startswith("    " * depth + m.group(1)), f"indentation of {line!r}"
    assert int(m.group(2)) == number, f"expected test number {number}: {line!r}"
    skip = TEST_RESULT_SKIP.match(line)
    name = (skip.group(4) if skip else m.group(4)).strip()
    if test.name:
        assert name == test.name, f"result line {line!r} does not close subtest {test.name!r}"
    test.name = name
    test.directive = (m.group(5) or "").strip(" #")
    test.status = "SKIPPED" if skip else "SUCCESS" if m.group(1) == "ok" else "FAILURE"


def parse_test(lines: Lines, number: int, depth: int, log: list[str]) -> KtapTest:
    test = KtapTest(log=list(log))
    ktap = KTAP_START.match(lines.peek())
    if ktap:
        assert int(lines.pop().split()[-1]) == 1, "KTAP version 1"
    header = TEST_HEADER.match(lines.peek())
    if header:
        test.name = lines.pop().split("# Subtest: ", 1)[1]
    if ktap or header:  # a test with subtests
        assert ktap and header, "a subtest opens with its KTAP version line and its # Subtest line"
        test.log += diagnostics(lines)
        plan = TEST_PLAN.match(lines.pop())
        assert plan, "a subtest's plan"
        for k in range(1, int(plan.group(1)) + 1):
            test.subtests.append(parse_test(lines, k, depth + 1, diagnostics(lines)))
        test.log += diagnostics(lines)
    result(lines, test, number, depth)
    return test


def parse(text: str) -> tuple[list[str], list[KtapTest], list[str]]:
    """The document's header diagnostics, its tests, and the diagnostics after them."""
    lines = Lines(text)
    assert lines.pop() == "KTAP version 1"
    head = diagnostics(lines)
    plan = TEST_PLAN.match(lines.pop())
    assert plan, "the top-level plan"
    tests = [parse_test(lines, k, 0, diagnostics(lines)) for k in range(1, int(plan.group(1)) + 1)]
    tail = diagnostics(lines)
    assert not lines, f"lines after the last test: {lines.peek()!r}"
    return head, tests, tail
