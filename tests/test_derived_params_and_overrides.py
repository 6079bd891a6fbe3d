# SPDX-License-Identifier: GPL-2.0-only
"""Derived parameters at a prove range, reproduce lines without derived parameters, and a warning for a bug
spec whose overrides never ran."""
import pytest

from checker import AllOf, And, AnyOf, PerCpu, Param, Role, Spec, action, invariant, sometimes, terminal, when
from checker.prove import prove_checks
from checker.report.text import render, reproduce
from checker.verify import verify


def tree(n):
    """(width of the top level, number of levels) of a tree over n CPUs: Python loops on n."""
    levels, width = 1, n
    while width > 2:
        width = (width + 1) // 2
        levels += 1
    return width, levels


class Tree(Spec):
    """A test spec: each CPU counts up to its tree's level count."""

    kernel = "a test of derived parameters"
    ncpus = Param(2, explore=(2, 3), prove=range(2, 9))
    nr_levels = Param(lambda p: tree(p.ncpus)[1])
    cpus = Role("ncpus", symmetric=True)
    count = PerCpu(0, role="cpus")

    @action(role="cpus")
    def climb(s, cpu):
        return when(s.count[cpu] < s.nr_levels, count={cpu: s.count[cpu] + 1})

    @invariant(role="cpus", inductive=True)
    def within_the_tree(s, cpu):
        return And(s.count[cpu] >= 0, s.count[cpu] <= s.nr_levels)

    @sometimes
    def a_cpu_at_the_top(s):
        return AnyOf([c == s.nr_levels for c in s.count])

    @terminal
    def done(s):
        return AllOf([c == s.nr_levels for c in s.count])


@pytest.mark.parametrize("sets", [{}, {"ncpus": tuple(range(2, 9))}, {"ncpus": (2, 3, 4)}],
                         ids=["prove=range(2, 9)", "--set ncpus=2..8", "prove=(2, 3, 4)"])
def test_a_derived_parameter_at_a_prove_range_is_proved_point_by_point(sets):
    checks = [c for c in prove_checks(Tree, sets, smt_timeout=30) if c.property == "within_the_tree"]
    assert [c.verdict for c in checks] == ["holds"]
    c = checks[0]
    assert c.extra["method"] == "per-n" and c.params["ncpus"] == f"{min(sets.get('ncpus', (2,)))}..{max(sets.get('ncpus', (8,)))}"
    assert any("derives nr_levels with Python code that needs a number" in n for n in c.extra["notes"])


def test_reproduce_lines_leave_derived_parameters_to_be_derived_again():
    class TreeTooLow(Tree, expect_violated=("within_the_tree",)):
        @action(role="cpus")
        def climb(s, cpu):
            return when(s.count[cpu] < s.nr_levels + 1, count={cpu: s.count[cpu] + 1})

    report = verify([TreeTooLow], sets={"ncpus": (3,)}, mode="explore")
    bad = next(c for c in report.checks if c.property == "within_the_tree")
    assert bad.verdict == "violated" and bad.params == {"ncpus": 3, "nr_levels": 2}
    assert reproduce(bad) == "python -m checker verify tree_too_low --set ncpus=3"
    # a derived parameter the user sets is theirs: kept
    report = verify([TreeTooLow], sets={"ncpus": (3,), "nr_levels": (1,)}, mode="explore")
    bad = next(c for c in report.checks if c.property == "within_the_tree")
    assert reproduce(bad) == "python -m checker verify tree_too_low --set ncpus=3 --set nr_levels=1"


class Base(Spec):
    """A test spec: a helper decides the step."""

    kernel = "a test of overrides"
    ncpus = Param(1)
    cpus = Role("ncpus")
    x = PerCpu(0, role="cpus")

    @staticmethod
    def limit(s):
        return 2

    @action(role="cpus")
    def inc(s, cpu):
        return when(s.x[cpu] < Base.limit(s), x={cpu: s.x[cpu] + 1})  # the base called by name

    @action(role="cpus")
    def reset(s, cpu):
        return when(s.x[cpu] > 5, x={cpu: 0})

    @invariant
    def small(s):
        return s.x[0] <= 2

    @terminal
    def done(s):
        return s.x[0] == 2


class NeverRuns(Base, expect_violated=("small",)):
    """The override of limit is bypassed (Base.limit is called by name); reset is never enabled."""

    @staticmethod
    def limit(s):
        return 3

    @action(role="cpus")
    def reset(s, cpu):
        return when(s.x[cpu] > 6, x={cpu: 0})


def test_a_bug_spec_whose_overrides_never_run_is_warned_about_by_name():
    report = verify([NeverRuns], mode="explore")
    assert next(c for c in report.checks if c.property == "small").status == "failed"  # bug not found
    assert len(report.warnings) == 1
    w = report.warnings[0]
    assert w.startswith("never_runs: NeverRuns overrides limit, reset, but they never ran while it was explored "
                        "(1 point)")
    assert "Base.limit(s, ...)" in w and "s.spec.limit(s, ...)" in w
    assert f"warning: {w}" in render(report) and report.to_json()["warnings"] == [w]


def test_an_override_that_runs_gives_no_warning():
    class Runs(Base, expect_violated=("small",)):
        @action(role="cpus")
        def inc(s, cpu):
            return when(s.x[cpu] < 3, x={cpu: s.x[cpu] + 1})

        @terminal
        def done(s):
            return s.x[0] == 3

    report = verify([Runs], mode="explore")
    assert next(c for c in report.checks if c.property == "small").verdict == "violated"
    assert report.warnings == []


def test_an_override_that_removes_a_step_is_not_warned_about():
    class Removed(Base, expect_violated=("small",)):
        """The bug is a missing call: the step is gone (grouped_destroy_interior's pattern)."""

        @action(role="cpus")
        def reset(s, cpu):
            return when(False)

    assert verify([Removed], mode="explore").warnings == []
