# SPDX-License-Identifier: GPL-2.0-only
"""--format ktap: the reader the tests use is strict, and errors are a subtest of failures. The KTAP of a
real run is read in tests/test_ci_outputs.py, beside its other outputs (one run for all)."""
import pytest

from ktap_rules import parse


def test_the_parser_is_strict():
    good = "KTAP version 1\n1..1\n    KTAP version 1\n    # Subtest: a\n    1..1\n    ok 1 x\nok 1 a\n"
    assert parse(good)[1][0].subtests[0].status == "SUCCESS"
    for bad in (good.replace("ok 1 a", "ok 1 b"), good.replace("    ok 1 x", "    ok 2 x"),
                good.replace("1..1\n    K", "1..2\n    K"), good.replace("    KTAP version 1\n", "")):
        with pytest.raises(AssertionError):
            parse(bad)


def test_errors_are_a_last_subtest_of_failures():
    from checker.report import ktap
    from checker.verify import ErrorInfo, Report

    report = Report(errors=[ErrorInfo("bad #1", "x.py", 3), ErrorInfo("no spec named 'tiyn'")])
    _, (errors,), _ = parse(ktap.render(report))
    assert errors.name == "errors" and [t.name for t in errors.subtests] == ["x.py:3", "countercheck"]
    assert {t.status for t in errors.subtests} == {"FAILURE"} and errors.subtests[0].log == ["    # x.py:3: bad #1"]
