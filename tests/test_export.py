# SPDX-License-Identifier: GPL-2.0-only
"""The Promela export without SPIN: its shape, what it refuses and the command line."""
import pytest

from checker import S32, U64, Shared, Spec, action, invariant, terminal, when
from checker.export import NotExportable, export_promela
from checker.loader import builtin_specs
from checker.language.compile import Model
from checker.language.model import resolve_params


def eager(**point):
    cls = builtin_specs()["percpu_eager"]
    return Model(cls, resolve_params(cls, point))


def test_one_d_step_per_step_and_an_assertion_per_invariant():
    model = eager(ncpus=2, batch=2, ops=2)
    out = export_promela(model)
    steps = sum(len(a.cpus) * len(a.choices) for a in model.actions)
    assert out.text.count(":: d_step {") == steps + 1  # and the terminal state's valid end
    assert out.steps == steps == 16
    assert set(out.assertions) == {f"inv_{p.name}" for p in model.invariants if p.expect == "holds"}
    every = export_promela(model, expected_violations=True)  # the bounds shown tight, named as such
    assert set(every.assertions) - set(out.assertions) == {
        f"expected_violated_{p.name}" for p in model.invariants if p.expect == "violated"} != set()
    assert all(kind == "invariant" for _, kind in out.assertions.values())
    assert out.text.count("active proctype") == 1 and out.extra_states == 1
    assert "int local_[2];" in out.text  # `local` is a Promela keyword: renamed


def test_sometimes_become_never_reached_assertions_on_request():
    model = eager(ncpus=1, batch=2, ops=2)
    out = export_promela(model, sometimes=True)
    assert out.assertions["unreached_a_fold_happens"] == ("a_fold_happens", "sometimes")
    assert "unreached_a_fold_happens = !" in out.text


class Word(Spec):
    kernel = "a test of the Promela export, not kernel code"
    word = Shared(0, type=U64, overflow="wrap")
    small = Shared(0, type=S32)

    @action
    def dec(s):
        return when(s.small == 0, word=s.word - 1, small=1)

    @terminal
    def done(s):
        return s.small == 1

    @invariant
    def fine(s):
        return s.small >= 0


class Divides(Spec):
    kernel = "a test of the Promela export, not kernel code"
    x = Shared(7)
    y = Shared(2)

    @action
    def halve(s):
        return when(s.x > 1, x=s.x // s.y)

    @terminal
    def done(s):
        return s.x <= 1

    @invariant
    def positive(s):
        return s.x > 0


def test_refuses_a_64_bit_wrapping_word_naming_it():
    with pytest.raises(NotExportable, match=r"word is a u64 with wrap-around arithmetic \(64-bit word\)"):
        export_promela(Model(Word()))


def test_refuses_division_by_a_state_value_naming_the_step():
    with pytest.raises(NotExportable, match=r"the update of x by halve uses division by y, not a positive constant"):
        export_promela(Model(Divides()))


def test_refuses_constants_beyond_int_naming_the_property():
    cls = builtin_specs()["percpu_lazy"]
    with pytest.raises(NotExportable, match=r"percpu_lazy \(.*\) cannot be exported to Promela: the invariant "
                                            r"no_update_lost uses the value 36028797018963968"):
        export_promela(Model(cls, resolve_params(cls, {})))


def test_cli_writes_the_model_and_says_how_to_check_it(cli, tmp_path):
    out = tmp_path / "eager.pml"
    r = cli("export", "percpu_eager", "--set", "ncpus=2", "--set", "batch=2", "--set", "ops=2", "--to", "promela",
            "--output", str(out))
    assert r.returncode == 0, r.stderr
    assert "16 steps" in r.stdout and "spin -o2 -a" in r.stdout
    assert out.read_text().startswith("/* percpu_eager at variant=B ncpus=2 batch=2 ops=2")


def test_cli_refusals_and_bad_usage_exit_2_without_a_traceback(cli):
    r = cli("export", "lazy_mmdrop_reads_uninit_index", "--to", "promela")
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert "cannot be exported to Promela: it reports reads of the uninitialised i" in r.stderr
    r = cli("export", "percpu_eager", "--set", "ncpus=2,3")
    assert r.returncode == 2 and "export takes one value per parameter" in r.stderr
    r = cli("export", "percpu_eager", "--to", "tla")
    assert r.returncode == 2
