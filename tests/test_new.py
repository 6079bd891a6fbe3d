# SPDX-License-Identifier: GPL-2.0-only
"""``python -m checker new NAME``: a starter spec that verifies on both backends as it is."""
import json

import pytest


def test_new_writes_name_py_in_the_working_directory(tmp_path, monkeypatch, capsys):
    from checker.cli import main

    monkeypatch.chdir(tmp_path)
    assert main(["new", "my_counter"]) == 0
    assert "class MyCounter(Spec):" in (tmp_path / "my_counter.py").read_text()
    assert "python -m checker verify my_counter.py" in capsys.readouterr().out


def test_new_spec_verifies_with_explore_and_proof_checks(cli, tmp_path):
    spec = tmp_path / "my_counter.py"
    r = cli("new", "my_counter", "--output", str(spec))
    assert r.returncode == 0, r.stderr
    assert "class MyCounter(Spec):" in spec.read_text()
    r = cli("verify", str(spec), "--format", "json")
    assert r.returncode == 0, r.stdout + r.stderr
    checks = json.loads(r.stdout)["checks"]
    assert {c["spec"] for c in checks} == {"my_counter"}
    assert all(c["verdict"] == "holds" for c in checks)
    explored = {c["property"] for c in checks if c["backend"] == "explore"}
    assert explored == {"local_in_range", "waiting_holds_its_count", "nothing_lost", "read_error_bounded",
                        "a_fold_happens", "no_deadlock"}
    proved = {c["property"] for c in checks if c["kind"] == "proof"}
    assert proved >= {"local_in_range", "nothing_lost", "read_error_bounded"}
    assert all(c["params"]["ncpus"] == "1..8192" for c in checks if c["kind"] == "proof")


def test_new_refuses_to_overwrite(tmp_path, capsys):
    from checker.cli import main

    target = tmp_path / "mine.py"
    target.write_text("# my work\n")
    assert main(["new", "mine", "--output", str(target)]) == 2
    assert "mine.py exists; not overwriting it" in capsys.readouterr().err
    assert target.read_text() == "# my work\n"


@pytest.mark.parametrize("name,message", [
    ("My-Counter", "a spec name is snake_case .*, e.g. my_counter"),
    ("class", "a spec name is snake_case"),
    ("random", "would shadow the module 'random'"),
    ("checker", "would shadow the module 'checker'"),
])
def test_new_validates_the_name(tmp_path, capsys, name, message):
    import re

    from checker.cli import main

    assert main(["new", name, "--output", str(tmp_path / "out.py")]) == 2
    err = capsys.readouterr().err
    assert re.search(message, err), err
    assert list(tmp_path.iterdir()) == []
