# SPDX-License-Identifier: GPL-2.0-only
"""The pytest plugin: specs as test items with --countercheck, nothing without it."""
import subprocess
import sys
import tomllib
from importlib.metadata import entry_points

import pytest

from conftest import ROOT
from test_ci_outputs import TINY

pytest_plugins = ["pytester"]

# Installed, the entry point loads the plugin already; loading it twice is an error.
INSTALLED = any(ep.value == "checker.pytest_plugin" for ep in entry_points(group="pytest11"))
PLUGIN = () if INSTALLED else ("-p", "checker.pytest_plugin")
QUIET = ("-p", "no:cacheprovider", "-p", "no:hypothesispytest")

BUGS = TINY + '''

class TinyBug(Tiny, expect_violated=("below_two", "counted")):
    """below_two is the bug this spec must find; counted holds, so that bug is not found."""
'''


@pytest.fixture
def specs(pytester):
    pytester.makepyfile(tiny_spec=BUGS, test_plain="def test_plain():\n    assert True\n")
    return pytester


def run(pytester, *args):
    """pytest in this process (pytester restores sys.modules after), with the plugin; without Hypothesis's
    plugin, which each inner run would import anew."""
    return pytester.runpytest_inprocess(*PLUGIN, *QUIET, *args)


def test_pyproject_declares_the_entry_point():
    data = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert data["project"]["entry-points"]["pytest11"] == {"checker.pytest_plugin": "checker.pytest_plugin"}


def test_loading_the_plugin_imports_no_solver():
    r = subprocess.run([sys.executable, "-c", "import sys, checker.pytest_plugin; print('z3' in sys.modules)"],
                       capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert r.stdout.strip() == "False", r.stderr


def test_without_the_flag_nothing_is_collected_but_tests(specs):
    r = run(specs)
    r.assert_outcomes(passed=1)
    assert "tiny_spec" not in r.stdout.str()


def test_one_item_per_property_a_violation_fails_with_its_trace(specs):
    r = run(specs, "--countercheck", ".", "-v")  # a directory: its spec files and its tests
    r.assert_outcomes(passed=7, failed=2)
    out = r.stdout.str()
    assert "tiny_spec.py::tiny::below_two FAILED" in out and "tiny_spec.py::tiny::counted PASSED" in out
    assert "tiny_spec.py::tiny_bug::below_two PASSED" in out  # the expected bug is found
    r.stdout.fnmatch_lines(["*tiny.below_two violated after 2 steps (shortest); ncpus=2",
                            "  #  cpu0 * cpu1 * source",
                            "  -  ---*",
                            "  1  add * | * tiny_spec.py:*",
                            "     total: 0 -> 1, * |",
                            "     left[[]0[]]: 1 -> 0 * |",
                            "  2  | * add * tiny_spec.py:*",
                            "     | * total: 1 -> 2,",
                            "     | * left[[]1[]]: 1 -> 0",
                            "  reproduce: python -m checker verify tiny_spec.py:Tiny --set ncpus=2"])
    r.stdout.fnmatch_lines(["*tiny_bug.counted [[]ncpus=2[]]: expected bug not found*"])


def test_k_selects_by_spec_and_property_name(specs):
    r = run(specs, "--countercheck", "tiny_spec.py", "-k", "tiny_bug and below_two", "-v")
    r.assert_outcomes(passed=1, deselected=7)
    assert "tiny_spec.py::tiny_bug::below_two PASSED" in r.stdout.str()


def test_set_passes_through(specs):
    r = run(specs, "--countercheck", "tiny_spec.py", "-k", "tiny and not bug", "--countercheck-set", "ncpus=1")
    r.assert_outcomes(passed=4, deselected=4)  # with one CPU the total never reaches 2: below_two holds


def test_a_limit_fails_the_item_with_its_reason_never_a_pass(specs):
    r = run(specs, "--countercheck", "tiny_spec.py", "-k", "tiny and not bug", "--countercheck-max-states", "2")
    r.assert_outcomes(passed=1, failed=3, deselected=4)  # one_add is reached (decided) within 2 states
    r.stdout.fnmatch_lines_random(["*inconclusive: tiny.counted [[]ncpus=2[]]: inconclusive (max_states)",
                                   "*inconclusive: tiny.below_two [[]ncpus=2[]]: inconclusive (max_states)",
                                   "*a limit is never a pass*--countercheck-skip-inconclusive*"])


def test_skip_inconclusive_is_an_opt_in(specs):
    r = run(specs, "--countercheck", "tiny_spec.py", "-k", "tiny and not bug", "--countercheck-max-states", "2",
            "--countercheck-skip-inconclusive", "-rs")
    r.assert_outcomes(passed=1, skipped=3, deselected=4)
    r.stdout.fnmatch_lines_random(["SKIPPED*inconclusive: tiny.counted [[]ncpus=2[]]: inconclusive (max_states)",
                                   "SKIPPED*inconclusive: tiny.no_deadlock [[]ncpus=2[]]: inconclusive (max_states)"])


def test_a_spec_that_checks_nothing_fails_its_items(specs):
    empty = TINY.replace("Param(2, domain=range(1, 4))", "Param(2, domain=range(1, 4), explore=())")
    assert empty != TINY
    specs.makepyfile(empty_spec=empty)
    r = run(specs, "--countercheck", "empty_spec.py", "-k", "counted")
    r.assert_outcomes(failed=1)
    r.stdout.fnmatch_lines(["*nothing was checked*tiny checks nothing*explore sweep has no point*"])


def test_a_parameter_no_spec_has_is_a_usage_error(specs):
    r = run(specs, "--countercheck", "tiny_spec.py", "--countercheck-set", "bogus=1")
    assert r.ret == pytest.ExitCode.USAGE_ERROR
    r.stderr.fnmatch_lines(["*--countercheck-set: no selected spec has a parameter 'bogus'*"])


def test_a_malformed_spec_is_a_collection_error_without_a_traceback(specs):
    specs.makepyfile(broken_spec="from checker import Spec\n\n\nclass Broken(Spec)\n    pass\n")
    r = run(specs, "--countercheck", "broken_spec.py")
    assert r.ret == pytest.ExitCode.INTERRUPTED
    r.stdout.fnmatch_lines(["*ERROR collecting broken_spec.py*", "*broken_spec.py:4: syntax error: expected ':'"])
    assert "Traceback" not in r.stdout.str() and "importlib" not in r.stdout.str()


def test_a_builtin_bug_spec_passes_when_its_bug_is_found():
    r = subprocess.run([sys.executable, "-m", "pytest", *PLUGIN, *QUIET, "--countercheck",
                        "specs/bugs/eager_fold_gt.py", "--countercheck-set", "ncpus=2", "--countercheck-set",
                        "batch=2", "--countercheck-set", "variant=B", "-k", "read_bound", "-rA"],
                       capture_output=True, text=True, cwd=ROOT, timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "PASSED specs/bugs/eager_fold_gt.py::eager_fold_gt::read_bound\n" in r.stdout
    assert "4 passed" in r.stdout


def test_only_files_that_import_the_checker_and_define_classes_are_imported(specs):
    specs.makepyfile(
        script="from checker.verify import verify\nopen('script-ran', 'w').close()\n",  # uses the checker
        notes="# this file mentions checker and class Spec(...) in a comment only\nopen('notes-ran', 'w')\n",
        other="import json\n\n\nclass Thing(dict):\n    pass\n\n\nopen('other-ran', 'w')\n",
        helper="import checker\n\n\nclass Helper(object):\n    pass\n\n\nopen('helper-ran', 'w')\n")
    r = run(specs, "--countercheck", ".", "--collect-only", "-q")
    assert r.ret == pytest.ExitCode.OK
    out = r.stdout.str()
    assert "tiny_spec.py::tiny::below_two" in out
    assert not [f for f in ("script", "notes", "other", "helper") if f in out]
    assert not [p.name for p in specs.path.iterdir() if p.name.endswith("-ran")]  # none of them was run


def test_may_define_specs_reads_the_syntax_tree():
    from checker.pytest_plugin import may_define_specs

    assert may_define_specs("from checker import Spec\n\n\nclass A(Spec):\n    pass\n")
    assert may_define_specs("import checker.specs.percpu_eager as pe\n\n\nclass B(pe.PercpuEager):\n    pass\n")
    assert not may_define_specs("from checker import verify\nverify([])\n")  # a script: no class
    assert not may_define_specs("s = 'from checker import Spec'\n\n\nclass A(dict):\n    pass\n")
    assert not may_define_specs("from checker import Param\n\n\nclass Helper(object):\n    pass\n")  # not a spec
    assert not may_define_specs("import unittest\nimport checker\n\n\nclass T(unittest.TestCase):\n    pass\n")
    assert may_define_specs("from checker import Spec\nfrom mine import Base\n\n\nclass A(Base):\n    pass\n")
    assert may_define_specs("import checker\n\n\nclass A(checker.Spec):\n    pass\n\n\nclass B(A):\n    pass\n")
    assert not may_define_specs("from .checker import Spec\n\n\nclass A(Spec):\n    pass\n")  # a relative import
    assert may_define_specs("from checker import Spec\n\n\nclass Broken(Spec)\n    pass\n")  # the loader says why


COUNTING = '''\
import os
from pathlib import Path

import checker.verify

_verify = checker.verify.verify


def _counting(classes, **kw):  # every verify of a spec, from whichever worker
    with open(Path(__file__).parent / "verified.log", "a") as f:
        f.write(f"{os.environ.get('PYTEST_XDIST_WORKER')} {' '.join(c.spec_name for c in classes)}\\n")
    return _verify(classes, **kw)


checker.verify.verify = _counting
'''


def test_under_xdist_each_spec_is_verified_once(specs):
    pytest.importorskip("xdist", reason="pytest-xdist is not installed: pip install '.[test]'")
    specs.makeconftest(COUNTING)
    specs.makepyfile(other_spec=TINY.replace("class Tiny(", "class Other("))
    r = specs.runpytest_subprocess(*PLUGIN, *QUIET, "-p", "xdist", "-n", "2", "--countercheck", "tiny_spec.py",
                                   "other_spec.py", "--countercheck-set", "ncpus=2")
    r.assert_outcomes(passed=9, failed=3)  # tiny and other: below_two; tiny_bug: counted
    lines = (specs.path / "verified.log").read_text().split("\n")[:-1]
    assert sorted(ln.split()[1] for ln in lines) == ["other", "tiny", "tiny_bug"]  # once each, not once per worker
    assert {ln.split()[0] for ln in lines} <= {"gw0", "gw1"}
