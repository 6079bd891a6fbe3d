# SPDX-License-Identifier: GPL-2.0-only
"""The proof cache (checker/engines/proof_cache.py): a second run reads the Z3 engines' checks back, bound
to the spec's code, the checker's and the request, through the trust rule."""
import importlib
import os
import sys

import pytest

import checker.persist as persist
from checker.engines import proof_cache as pc
from checker.result import Check, ShownStep, Step, Store


@pytest.fixture
def on(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setenv(pc.ENV, "on")
    return tmp_path / "cache" / "countercheck" / "proofs"


def _check(verdict="violated", run=3):
    step = Step(1, "adders", "add", {"amount": 1}, {"count": 1}, file="x.py", line=4, shown={"count": "1"},
                unchanged=("local[1]",))
    shown = ShownStep(1, "cpu1", (1, 0), "cpu1", "add(amount=1)", (Store("count", "0", "1"), Store("a", "1", "1", True)),
                      file="x.py", line=4)
    return Check(spec="s", file="x.py", line=9, params={"ncpus": 2, "variant": "B"}, property="p", kind="invariant",
                 backend="z3", verdict=verdict, expected="holds", reason=None, run=run, trace=[step],
                 trace_text=["1 cpu1 add"], trace_shown=["start", shown], extra={"not_parametric": {"q": "why"}},
                 computed=("batch",), initial_state={"count": 0, "local": [0, 0]})


def test_a_check_survives_being_stored():
    c = _check()
    back = pc.check_from_data(persist.decode(persist.encode(pc.check_data(c))))
    assert back == c and back.trace[0].unchanged == ("local[1]",)
    with pytest.raises(ValueError):
        pc.check_from_data({**pc.check_data(c), "planted": 1})


def test_second_run_reads_back_and_a_damaged_entry_is_proved_again(on):
    calls = []

    def compute(warn):
        calls.append(1)
        warn("a claim left out")
        return [_check()]

    said = []
    first = pc.cached_run("prove", Check, ("k", 60.0), 3, said.append, compute)
    second = pc.cached_run("prove", Check, ("k", 60.0), 7, said.append, compute)
    assert len(calls) == 1 and said == ["a claim left out"] * 2
    assert second[0].run == 7 and second[0].extra.pop("cached") is True
    second[0].run = 3
    assert second == first
    pc.cached_run("prove", Check, ("k", 30.0), 3, None, compute)  # another timeout: another key
    assert len(calls) == 2
    (entry,) = [p for p in on.iterdir() if p.name == pc.binding("prove", Check, ("k", 60.0))]
    data = bytearray(entry.read_bytes())
    data[-5] ^= 1
    entry.write_bytes(bytes(data))
    assert pc.cached_run("prove", Check, ("k", 60.0), 3, None, compute) == first and len(calls) == 3
    assert pc.cached_run("prove", Check, ("k", 60.0), 3, None, compute)[0].extra.get("cached")  # kept again


def test_inconclusive_is_not_kept_and_off_means_off(on, monkeypatch):
    calls = []

    def compute(warn):
        calls.append(1)
        return [_check("inconclusive")]

    for _ in range(2):
        pc.cached_run("prove", Check, "k", 0, None, compute)
    assert len(calls) == 2
    monkeypatch.setenv(pc.ENV, "off")
    for _ in range(2):
        pc.cached_run("prove", Check, "j", 0, None, lambda warn: calls.append(1) or [_check()])
    assert len(calls) == 4 and not list(on.iterdir())


def test_the_key_covers_the_modules_a_spec_uses(tmp_path, monkeypatch):
    (tmp_path / "cc_helper_mod.py").write_text("def bound(n):\n    return n\n")
    (tmp_path / "cc_spec_mod.py").write_text("from cc_helper_mod import bound\nclass S:\n    pass\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        cls = importlib.import_module("cc_spec_mod").S
        assert pc.spec_files(cls) == sorted(str(tmp_path / f) for f in ("cc_helper_mod.py", "cc_spec_mod.py"))
        before = pc.binding("prove", cls, "k")
        (tmp_path / "cc_helper_mod.py").write_text("def bound(n):\n    return n + 1\n")
        assert pc.binding("prove", cls, "k") != before
    finally:
        for m in ("cc_spec_mod", "cc_helper_mod"):
            sys.modules.pop(m, None)


def test_verify_proves_once(on):
    from checker import loader
    from checker.verify import verify

    cls = loader.resolve(["percpu_lazy"])
    first = verify(cls, mode="prove")
    again = verify(cls, mode="prove")
    assert [(c.property, c.verdict, c.trace) for c in again.checks] == \
        [(c.property, c.verdict, c.trace) for c in first.checks]
    assert all(c.extra.get("cached") for c in again.checks) and not any(c.extra.get("cached") for c in first.checks)
    assert [p.name for p in on.iterdir()] and all(os.stat(p).st_mode & 0o077 == 0 for p in on.iterdir())
    assert set(first.phases) == {"prove"} and 0 < first.phases["prove"] <= first.seconds


def test_the_timings_line_splits_the_wall_time():
    from checker.report.text import timings_line
    from checker.verify import Report

    r = Report(seconds=10.0, phases={"explore": 4.0, "compile": 3.0, "prove": 2.5}, programs_built=7)
    assert timings_line(r) == "time: 10.0s: compile 3.0s (7 programs built), explore 4.0s, prove 2.5s, the rest 0.5s"
    warm = Report(seconds=2.0, phases={"explore": 1.5})
    assert timings_line(warm) == "time: 2.0s: compile 0.0s (no program built), explore 1.5s, the rest 0.5s"
    two = Report(seconds=6.0, phases={"explore": 8.0, "prove": 2.5}, workers=2)
    assert timings_line(two) == "time: 6.0s on 2 workers, whose phases summed: compile 0.0s (no program built), " \
                                "explore 8.0s, prove 2.5s"
