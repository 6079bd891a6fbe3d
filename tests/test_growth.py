# SPDX-License-Identifier: GPL-2.0-only
"""How big will it get (issue 30, item 8): state counts fitted along each parameter, the next point's
likely size, and what a point stopped by a limit would have taken."""
import math
import re

import pytest

from checker.report import growth
from checker.result import Check


def check(run, states, seconds=0.1, reason=None, **params):
    return Check(spec="s", file=None, line=None, params=params, property="p", kind="invariant", backend="explore",
                 verdict="inconclusive" if reason else "holds", expected="holds", reason=reason, states=states,
                 seconds=seconds, run=run)


def test_a_geometric_series_is_fitted_exactly_and_extrapolated():
    checks = [check(i, 10 * 4 ** i, seconds=0.001 * 10 * 4 ** i, n=i, b=2) for i in (1, 2, 3)]
    (s,) = growth.series(growth.points(checks))
    assert (s.param, s.values, s.states) == ("n", (1, 2, 3), (40, 160, 640))
    assert s.factor == pytest.approx(4.0) and s.predict(4) == 2560
    (line,) = growth.report_lines(checks, everything=True)
    assert line == "growth: s: states x4.0 per n (n=1,2,3: 40, 160, 640); n=4 likely ~2,600 states, ~2.6s"


def test_least_squares_in_log_space_over_noisy_points():
    xs, ys = [1, 2, 3, 4], [18, 149, 820, 3471]  # eager_fold_gt, variant B, batch 2, by ncpus
    factor, intercept = growth.fit(xs, ys)
    slope = math.log(factor)
    # the normal equations of ln(y) = a + b x
    assert sum(math.log(y) - intercept - slope * x for x, y in zip(xs, ys)) == pytest.approx(0, abs=1e-9)
    assert sum(x * (math.log(y) - intercept - slope * x) for x, y in zip(xs, ys)) == pytest.approx(0, abs=1e-9)


def test_points_differing_in_two_parameters_are_not_one_series():
    checks = [check(1, 10, n=1, b=2), check(2, 100, n=2, b=3)]
    assert growth.series(growth.points(checks)) == [] and growth.report_lines(checks, everything=True) == []


def test_a_point_stopped_by_a_limit_is_sized_from_the_points_before_it():
    checks = [check(i, 10 * 4 ** i, n=i) for i in (1, 2)] + [check(3, 100, reason="max_states", n=3)]
    assert growth.report_lines(checks) == [
        "growth: s at n=3 stopped at max_states after 100 states; from n=1,2 (40, 160 states, x4.0 per n) it likely "
        "has ~640 states (~0.4s): raise --max-states past that, or lower --set n"]


def test_the_cli_sizes_a_point_that_hit_max_states(capsys):
    from checker.cli import main

    code = main(["verify", "eager_fold_gt", "--mode", "explore", "--set", "variant=B", "--set", "batch=2",
                 "--set", "ncpus=1..4", "--max-states", "3000"])
    out = capsys.readouterr().out
    assert code == 3
    line = next(x for x in out.splitlines() if x.startswith("growth:"))
    assert re.fullmatch(r"growth: eager_fold_gt at ncpus=4 stopped at max_states after 3,000 states; from "
                        r"ncpus=1,2,3 \(18, 149, 820 states, x6\.7 per ncpus\) it likely has ~5,900 states "
                        r"\(.*\): raise --max-states past that, or lower --set ncpus", line), line


def test_the_point_about_to_run_is_sized_from_the_decided_ones():
    checks = [check(i, 10 * 4 ** i, n=i, b=2) for i in (1, 2)]
    assert growth.likely_states(checks, "s", {"n": 3, "b": 2}) == 640
    assert growth.likely_states(checks, "s", {"n": 3, "b": 3}) is None  # another point of b: no series
    assert growth.likely_states(checks[:1], "s", {"n": 2, "b": 2}) is None  # one point fits nothing
