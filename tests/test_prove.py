# SPDX-License-Identifier: GPL-2.0-only
"""The Z3 backend: proofs for every CPU count, witnesses by construction,
counterexamples to induction, SMT-LIB files, solver limits."""
import json
import re
import shutil
import subprocess

import pytest

from checker import invariant
from checker.prove import prove_checks
from checker.specs.percpu_eager import VARIANT, PercpuEager
from checker.specs.rss_split import RssSplit


@pytest.fixture(scope="module")
def eager_proofs():
    return prove_checks(PercpuEager, smt_timeout=120)


def test_read_bound_proved_for_every_cpu_count_with_kernel_and_arbitrary_batch(eager_proofs):
    proofs = [c for c in eager_proofs if c.property == "read_bound" and c.kind == "proof"]
    assert {c.params["batch"] for c in proofs} == {"default", "symbolic"}
    for c in proofs:
        assert c.verdict == "holds" and c.params["ncpus"] == "1..8192"
        assert c.extra["method"] == "parametric" and c.extra["obligations"] >= 1
        assert c.backend == "z3" and c.states is None and c.transitions is None


def test_every_strengthening_conjunct_is_proved(eager_proofs):
    names = {c.property for c in eager_proofs if c.kind == "proof" and c.verdict == "holds"}
    assert {"local_bound", "lock_held_in_critical_section", "conservation_through_fold", "conservation",
            "types", "sum_lemma"} <= names
    assert all(c.verdict == "holds" for c in eager_proofs if c.kind == "proof")


def test_bound_is_exact_by_construction_at_large_n(eager_proofs):
    built = {(c.property, c.params["ncpus"]): c for c in eager_proofs if c.extra.get("method") == "construction"}
    for n, bound in ((4, 124), (26, 1326), (64, 8128), (256, 130816)):
        tight = built[("read_bound_is_tight", n)]
        assert tight.verdict == "holds" and tight.extra["final"]["exact"] == bound
        assert tight.extra["final"]["count"] == 0 and tight.extra["steps"] == bound
        assert built[("read_bound_minus_one", n)].verdict == "violated"
        assert len(tight.trace) == n and all(s.repeat == bound // n for s in tight.trace)


#: One point of the sweep (variant B, limited_add off) for the tests of what a failed proof shows.
VARIANT_B = {"variant": (VARIANT.B,), "limited": (0,)}


def test_a_bound_one_smaller_is_not_inductive_and_shows_why():
    class TooTight(PercpuEager, name="too_tight"):
        @invariant
        def read_bound(s):
            return abs(s.count - s.exact) <= s.ncpus * (s.batch - 1) - 1

    checks = {c.property: c for c in prove_checks(TooTight, {"batch": ("symbolic",), **VARIANT_B}, smt_timeout=60)
              if c.kind == "proof"}
    bad = checks["read_bound"]
    assert bad.verdict == "inconclusive" and bad.reason == "not_inductive"  # never 'violated'
    assert bad.extra["broken"] == "read_bound"
    assert bad.initial_state is not None and "counterexample to induction" in bad.trace_text[0]
    assert checks["local_bound"].verdict == "holds"


class Sloppy(PercpuEager, name="sloppy"):
    """A local bound one too small: broken by a step, and initially when batch is 1."""

    @invariant(role="adders", inductive=True)
    def local_bound(s, cpu):
        return abs(s.local[cpu]) <= s.batch - 2


def test_a_step_that_breaks_an_invariant_gives_a_one_step_cti():
    c = next(c for c in prove_checks(Sloppy, {"batch": ("default",), **VARIANT_B}, smt_timeout=60)
             if c.property == "local_bound" and c.kind == "proof")
    assert c.verdict == "inconclusive" and c.reason == "not_inductive"
    step = c.trace[0]
    assert step.action == "percpu_counter_add_batch_b_L17_atomic_ret" and any(k.startswith("local[") for k in step.changes)
    # values as the explorer's traces print them: enum names, `-` for no CPU or `cpuN` (whichever state Z3 picks)
    before = c.trace_text[1]
    assert re.search(r"\badders_pc\[0\]=[a-z_]+[,\s]", before) and re.search(r"\block=(-|cpu\d+),", before)


def test_an_invariant_false_initially_is_violated_not_inconclusive():
    c = next(c for c in prove_checks(Sloppy, {"batch": ("symbolic",), **VARIANT_B}, smt_timeout=60)
             if c.property == "local_bound" and c.kind == "proof")
    assert c.verdict == "violated" and c.trace == [] and c.initial_state["batch"] == 1


def test_rss_split_per_thread_bound_for_T_to_64_and_U_to_16_any_thread_count():
    checks = {c.property: c for c in prove_checks(RssSplit, smt_timeout=120) if c.kind == "proof"}
    for name in ("per_thread_bound", "read_bound", "no_lost_update", "cache_tracks_events"):
        c = checks[name]
        assert c.verdict == "holds", (name, c.reason)
        assert (c.params["T"], c.params["U"]) == ("0..64", "1..16") and c.extra["method"] == "parametric"
    # Not expressible for any thread count: left to the explorer, and said so.
    assert "exact_after_exit" not in checks
    assert any("exact_after_exit" in n for n in checks["types"].extra["notes"])


def test_prove_mode_json_validates(cli, tmp_path):
    from test_cli import validate

    out = tmp_path / "r.json"  # one run: the JSON to the file, the text report on stdout
    r = cli("verify", "percpu_eager", "--mode", "prove", "--set", "variant=B", "--set", "limited=0", "--format", "json",
            "--output", str(out), "-v")
    assert r.returncode == 0, r.stderr
    data = json.loads(out.read_text())
    validate(data)
    proof = next(c for c in data["checks"] if c["kind"] == "proof" and c["params"]["batch"] == "symbolic")
    assert proof["states"] is None and proof["backend"] == "z3" and proof["obligations"] > 0
    assert "solver_seconds" in proof
    assert "proved for variant B, ncpus 1..8192" in r.stdout


def test_solver_timeout_is_inconclusive_never_a_pass(cli):
    r = cli("verify", "rss_split", "--mode", "prove", "--smt-timeout", "0.001", "--format", "json")
    data = json.loads(r.stdout)
    proofs = [c for c in data["checks"] if c["kind"] == "proof"]
    if any(c["verdict"] == "inconclusive" for c in proofs):
        assert r.returncode == 3
        assert any(c["reason"].startswith("solver_unknown") for c in proofs if c["verdict"] == "inconclusive")
    else:  # every query answered within a millisecond: still a valid run
        assert r.returncode == 0


@pytest.mark.skipif(shutil.which("z3") is None, reason="no z3 command on PATH: it comes with z3-solver "
                    "(pip install z3-solver, with its bin/ on PATH)")
@pytest.mark.differential  # 13 s: a second solver process per file
def test_emitted_smt_files_recheck_with_the_z3_command(cli, tmp_path):
    r = cli("verify", "percpu_eager", "--mode", "prove", "--emit-smt", str(tmp_path))
    assert r.returncode == 0
    files = sorted(tmp_path.glob("*.smt2"))
    obligations = [f for f in files if "expected: unsat" in f.read_text()]
    assert len(obligations) > 50
    assert any("read_bound.implied" in f.name for f in obligations)
    for f in obligations[:40] + [f for f in obligations if "read_bound" in f.name]:
        out = subprocess.run(["z3", str(f)], capture_output=True, text=True, timeout=120).stdout.split()
        assert out[:1] == ["unsat"], f.name
