# SPDX-License-Identifier: GPL-2.0-only
"""The runnable specs of examples/: each verifies as its docstring says (one test per example, in
process, at the example's own small points)."""
import ast

from checker import loader
from checker.verify import verify
from conftest import ROOT

EXAMPLES = ROOT / "examples"


def run(name: str, only: str | None = None, **options):
    """verify() of the example's specs (``only``: one class), as ``python -m checker verify FILE`` does."""
    classes = loader.load_file(str(EXAMPLES / name))  # not resolve(): it imports every built-in spec first
    return verify([c for c in classes if only in (None, c.__name__)], **options)


def by(report, prop: str) -> dict:
    """The checks of ``prop``, keyed by (spec, the point's ncpus or memory)."""
    return {(c.spec, c.params.get("memory", c.params.get("ncpus"))): c for c in report.checks if c.property == prop}


def test_every_example_has_its_spdx_line_a_docstring_and_a_test():
    files = sorted(p.name for p in EXAMPLES.glob("*.py"))
    assert files == ["lost_update.py", "lost_update_fixed.py", "message_passing.py", "read_bound_proof.py"]
    for name in files:
        text = (EXAMPLES / name).read_text()
        assert text.startswith("# SPDX-License-Identifier: GPL-2.0-only\n"), name
        assert ast.get_docstring(ast.parse(text)), name
        assert f'"{name}"' in (ROOT / "tests" / "test_example_specs.py").read_text()


def test_lost_update_is_found_in_four_steps_at_two_cpus():
    r = run("lost_update.py", mode="explore")
    assert r.exit_code == 0  # the violation is expected: found, so as expected
    checks = by(r, "nothing_lost")
    assert {k: c.verdict for k, c in checks.items()} == {("lost_update", 2): "violated",
                                                          ("lost_update", 3): "violated"}
    trace = checks["lost_update", 2].trace
    assert [(s.action, s.cpu) for s in trace] == [("load", 0), ("load", 1), ("store", 0), ("store", 1)]


def test_lost_update_fixed_with_the_lock_holds_at_one_to_three_cpus():
    r = run("lost_update_fixed.py", mode="explore")
    assert r.exit_code == 0
    assert {k: c.verdict for k, c in by(r, "nothing_lost").items()} == {
        ("lost_update_fixed", n): "holds" for n in (1, 2, 3)}


def test_message_passing_needs_the_release_and_acquire_under_lkmm_only():
    r = run("message_passing.py", mode="explore")
    assert r.exit_code == 0
    assert {k: c.verdict for k, c in by(r, "flag_implies_data").items()} == {
        ("message_passing", "sc"): "holds", ("message_passing", "tso"): "holds",
        ("message_passing", "lkmm"): "holds", ("message_passing_once", "lkmm"): "violated"}
    # under sc the WRITE_ONCE flag is enough: the expected bug is not found, and that is a failure
    sc = run("message_passing.py", "MessagePassingOnce", mode="explore", memory="sc")
    assert sc.exit_code == 1 and [c.verdict for c in sc.checks if c.property == "flag_implies_data"] == ["holds"]


def test_read_bound_proof_holds_for_every_cpu_count_up_to_8192():
    r = run("read_bound_proof.py", mode="prove")
    assert r.exit_code == 0
    proved = {c.property: (c.verdict, c.params["ncpus"]) for c in r.checks if c.kind == "proof"}
    assert {p: proved[p] for p in ("local_in_range", "nothing_lost", "read_error_bounded")} == {
        p: ("holds", "1..8192") for p in ("local_in_range", "nothing_lost", "read_error_bounded")}
