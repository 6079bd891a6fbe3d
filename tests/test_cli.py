# SPDX-License-Identifier: GPL-2.0-only
"""The command line as a user runs it, and its JSON contract."""
import json

import jsonschema
import pytest

from conftest import FIXTURES, ROOT, run_cli

SCHEMA = json.loads((ROOT / "checker" / "report" / "schema.json").read_text())


def validate(data):
    jsonschema.validate(data, SCHEMA)


def test_json_validates_and_reports_every_property(cli):
    r = cli("verify", "percpu_eager", "--set", "ncpus=2", "--set", "variant=B", "--mode", "explore", "--format", "json")
    assert r.returncode == 0, r.stderr
    data = json.loads(r.stdout)
    validate(data)
    props = {c["property"] for c in data["checks"]}
    assert {"read_bound", "read_bound_is_tight", "read_bound_minus_one", "read_bound_counting_pending",
            "local_bound", "conservation", "read_within_bound", "read_positive_within_bound",
            "sum_within_bound", "sum_exact_without_overlap", "no_deadlock", "no_overflow"} <= props
    runs = {}
    for c in data["checks"]:
        runs.setdefault(c["run"], set()).add((c["states"], c["transitions"], c["depth"], c["seconds"]))
    assert all(len(v) == 1 for v in runs.values())  # statistics are per exploration
    tight = next(c for c in data["checks"] if c["property"] == "read_bound_is_tight")
    assert tight["verdict"] == "holds" and tight["trace"]  # a reached sometimes carries its witness
    holds = next(c for c in data["checks"] if c["property"] == "read_bound")
    assert holds["trace"] == [] and holds["loop_start"] is None and holds["backend"] == "explore"


def test_output_file_gets_the_format_and_stdout_the_summary(cli, tmp_path):
    out = tmp_path / "r.json"
    r = cli("verify", "eager_fold_gt", "--set", "ncpus=2", "--set", "batch=2", "--format", "json",
            "--output", str(out), "--traces", "bugs")
    assert r.returncode == 0
    data = json.loads(out.read_text())
    validate(data)
    bug = next(c for c in data["checks"] if c["property"] == "read_bound")
    assert bug["verdict"] == "violated" and bug["expected"] == "violated"
    assert len(bug["trace"]) == 3
    first = dict(bug["trace"][0])
    assert first.pop("file").endswith("percpu_eager.py") and isinstance(first.pop("line"), int)  # since 1.1
    assert first == {"cpu": 0, "role": "adders", "action": "percpu_counter_add_batch_b_L17_atomic_ret",
                     "choices": {"amount": -1},
                     "changes": {"local[0]": -1, "ops_left[0]": 2, "exact": -1},
                     "shown": {"local[0]": "-1", "ops_left[0]": "2", "exact": "-1"}}  # since 1.3
    assert "read_bound violated after 3 steps" in r.stdout


def test_text_trace_and_reproduce_line(cli):
    r = cli("verify", "eager_fold_gt", "--set", "ncpus=2", "--set", "batch=2", "--traces", "read_bound")
    assert r.returncode == 0
    lines = r.stdout.splitlines()
    i = lines.index(next(line for line in lines if line.startswith("eager_fold_gt.read_bound violated")))
    assert lines[i + 2].split() == ["#", "cpu0", "cpu1", "source"]  # the trace in lanes, a column per CPU
    step1 = [ln.split() for ln in lines[i + 4:i + 11]]
    # the step as the function, its line and primitive (B's fast path, one atomic block), then its changes
    assert step1[0][:3] == ["1", "percpu_counter_add_batch_b:17", "|"] and step1[0][3].startswith("percpu_eager.py:")
    assert step1[1:3] == [["atomic(", "|"], ["amount=-1)", "|"]]
    assert step1[3:] == [["local[0]:", "0", "->", "-1,", "|"], ["irqs[0]", "=", "false", "(same),", "|"],
                         ["ops_left[0]:", "3", "->", "2,", "|"], ["exact:", "0", "->", "-1", "|"]]
    assert any(line.strip().startswith("reproduce: python -m checker verify eager_fold_gt --set variant=B --set ncpus=2")
               for line in lines)


def test_limits_give_exit_3_never_a_pass(cli):
    r = cli("verify", "percpu_eager", "--set", "ncpus=3", "--set", "batch=3", "--max-states", "100",
            "--mode", "explore", "--format", "json")  # (the proofs have no state limit)
    assert r.returncode == 3
    data = json.loads(r.stdout)
    validate(data)
    assert not any(c["verdict"] == "holds" and c["kind"] == "invariant" for c in data["checks"])
    assert {c["reason"] for c in data["checks"] if c["verdict"] == "inconclusive"} == {"max_states"}


def test_expected_bug_not_found_within_limit_is_3_not_1(cli):
    r = cli("verify", "eager_sum_unlocked", "--set", "ncpus=2", "--max-states", "10")
    assert r.returncode == 3


def test_set_range_makes_a_cross_product(cli):
    r = cli("verify", "percpu_eager", "--set", "ncpus=1..2", "--set", "batch=2,3", "--set", "readers=0",
            "--set", "summers=0", "--mode", "explore", "--format", "json")
    data = json.loads(r.stdout)
    points = {(c["params"]["ncpus"], c["params"]["batch"]) for c in data["checks"]}
    assert points == {(1, 2), (1, 3), (2, 2), (2, 3)}


def test_no_symmetry_flag(cli):
    r = cli("verify", "percpu_eager", "--set", "ncpus=2", "--set", "readers=0", "--set", "summers=0",
            "--set", "batch=2", "--set", "variant=B", "--set", "irq=0", "--set", "limited=0", "--set", "migrations=0",
            "--set", "forever=0", "--no-symmetry", "--mode", "explore", "--format", "json")
    data = json.loads(r.stdout)
    assert {c["states"] for c in data["checks"]} == {154} and not data["checks"][0]["symmetry"]


def test_a_violation_is_exit_1(cli, tmp_path):
    spec = tmp_path / "weak.py"
    spec.write_text((FIXTURES / "eager_table.py").read_text() + '''

from checker import invariant


class TooStrong(EagerTable):
    @invariant
    def count_stays_zero(s):
        return s.count == 0
''')
    r = cli("verify", f"{spec}:TooStrong")
    assert r.returncode == 1
    assert "FAIL" in r.stdout and "count_stays_zero violated after" in r.stdout


def test_list_shows_parameters_properties_and_assumptions(cli):
    r = cli("list", "percpu_eager")
    assert r.returncode == 0
    assert "ncpus" in r.stdout and "domain 1..8192" in r.stdout and "explore 1..3" in r.stdout
    assert "sequentially consistent interleaving" in r.stdout and "64-bit kernel" in r.stdout
    assert "read_bound_minus_one  (expected violated)" in r.stdout


@pytest.mark.differential  # every built-in spec: the slowest test (2+ min on a busy core)
def test_default_verify_passes(cli):
    r = cli("verify")
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr
    assert "bug" in r.stdout


def test_a_deep_sweep_runs_only_when_named():
    from checker.loader import builtin_specs, resolve

    deep = [n for n, c in builtin_specs().items() if c.on_demand]
    assert "percpu_counter_tree_deep" in deep
    everything = {c.spec_name for c in resolve([])}
    assert not everything & set(deep) and "percpu_counter_tree" in everything
    assert [c.spec_name for c in resolve(["percpu_counter_tree_deep"])] == ["percpu_counter_tree_deep"]
    listed = run_cli("list")
    assert "percpu_counter_tree_deep" in listed.stdout and "on demand" in listed.stdout


def test_a_named_builtin_is_the_spec_the_whole_scan_finds():
    """``verify NAME`` imports NAME's module alone; for every built-in name the spec is the one importing them all
    gives (so two modules cannot define one name unnoticed), and a name its module is not named for still
    resolves, through the whole scan."""
    from checker.loader import builtin_specs, named_builtin, resolve

    every = builtin_specs()
    alone = {n: named_builtin(n) for n in every}
    assert all(c is None or c is every[n] for n, c in alone.items())
    assert sum(c is not None for c in alone.values()) >= len(every) - 5  # all but the few in other modules
    assert alone["eager_fold_gt"] is every["eager_fold_gt"] and alone["percpu_hotplug_deep"] is None
    assert resolve(["percpu_hotplug_deep", "eager_fold_gt"]) == [every["percpu_hotplug_deep"], every["eager_fold_gt"]]
    assert named_builtin("no_such_spec") is None and named_builtin("../specs/percpu_eager") is None


def test_a_sweep_entry_the_set_values_make_invalid_is_left_out_with_one_note(capsys):
    """Issue 30, item 7: readers=1 summers=1 make percpu_eager's liveness entry (forever=1) invalid; the
    run leaves that entry out with one note, and the values set name a single point, which runs alone."""
    from checker.cli import main

    code = main(["verify", "percpu_eager", "--mode", "explore", "--set", "readers=1", "--set", "summers=1",
                 "--set", "ncpus=1", "--set", "batch=2", "--set", "variant=B", "--set", "irq=0",
                 "--set", "migrations=0", "--set", "limited=0"])
    out = capsys.readouterr()
    assert code == 0, out.out + out.err
    notes = out.err.splitlines()
    assert len(notes) == 1 and notes[0].startswith("note: percpu_eager: left out the explore sweep entry forever=1 ")
    assert notes[0].endswith("makes invalid: its liveness abstraction (unbounded) needs limited=0, readers=0 and "
                             "summers=0 (they read the dropped fbc->count)")
    assert out.out.startswith("percpu_eager  explore  .  ") and " 1 point, " in out.out.splitlines()[0]
    # the same values on the entry the user asked for are still an error
    assert main(["verify", "percpu_eager", "--mode", "explore", "--set", "forever=1", "--set", "readers=1"]) == 2
    assert "its liveness abstraction (unbounded) needs limited=0" in capsys.readouterr().err
