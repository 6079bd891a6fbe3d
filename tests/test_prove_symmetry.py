# SPDX-License-Identifier: GPL-2.0-only
"""The CPU symmetry a proof may rest on (checker.prove.symmetric): proved by Z3 for the steps of a point, or
refused with the step that breaks it; and Houdini under it keeps what Houdini without it keeps of the
candidates closed under the renamings."""
from __future__ import annotations

import z3
from hypothesis import HealthCheck, given, settings

from checker import NOBODY, And, CpuId, Enum, Int, Param, PerCpu, Role, Shared, Spec, action, invariant, sometimes, \
    terminal, when
from checker.language.compile import Model
from checker.language.model import resolve_params
from checker.prove.encoding import PerN
from checker.prove.horn import slot_names
from checker.prove.houdini import houdini
from checker.prove.symmetric import CpuSymmetry, close, prove_symmetry
from random_specs import random_models
from test_houdini import _atoms

PC = Enum("idle", "held", name="sym_pc")


class Handoff(Spec, name="sym_handoff"):
    """A lock taken and released by each CPU; ``inside`` counts the holders."""

    kernel = "none: a test spec (a lock and a count of its holders)"
    ncpus = Param(3, domain=range(1, 5))
    lopsided = Param(0, domain=(0, 1))
    cpus = Role("ncpus", symmetric=True)
    lock = Shared(NOBODY, type=CpuId)
    inside = Shared(0)
    pc = PerCpu(PC.idle, type=PC, role="cpus")
    mine = PerCpu(0, type=Int, role="cpus")

    @action(role="cpus")
    def take(s, c):
        # lopsided: the last CPU counts itself twice, which no renaming of the CPUs keeps
        extra = 1 if s.lopsided and c == s.ncpus - 1 else 0
        return when(And(s.pc[c] == PC.idle, s.lock == NOBODY), lock=c, pc={c: PC.held}, mine={c: 1},
                    inside=s.inside + 1 + extra)

    @action(role="cpus")
    def give(s, c):
        return when(s.pc[c] == PC.held, lock=NOBODY, pc={c: PC.idle}, mine={c: 0}, inside=s.inside - 1)

    @terminal
    def nothing_held(s):
        return s.inside == 0

    @sometimes
    def someone_holds(s):
        return s.inside == 1

    @invariant(expect="violated", applies=lambda p: p.lopsided == 1)
    def one_inside(s):
        return s.inside <= 1


def _enc(**params) -> PerN:
    return PerN(Model(Handoff, resolve_params(Handoff, params)))


def test_a_symmetric_point_is_proved_symmetric_and_a_lopsided_one_is_refused_with_its_step():
    assert isinstance(prove_symmetry(_enc(ncpus=3), "cpus", 30), CpuSymmetry)
    why = prove_symmetry(_enc(ncpus=3, lopsided=1), "cpus", 30)
    assert isinstance(why, str) and "take" in why, why


def test_a_renamed_candidate_reads_the_renamed_slots_and_cpu_ids():
    enc = _enc(ncpus=3)
    sym = CpuSymmetry(enc, "cpus")
    names = slot_names(enc)
    v = {n: z3.Var(i, z3.IntSort()) for i, n in enumerate(names)}
    swap = sym.renaming({0: 1, 1: 0})
    got = sym.image(z3.Or(v["lock"] != 0, v["mine[0]"] == 1), swap)
    consts = [z3.Int(n) for n in names]
    q = z3.Solver()
    q.add(z3.substitute_vars(got != z3.Or(v["lock"] != 1, v["mine[1]"] == 1), *consts))
    assert q.check() == z3.unsat, got
    # ordered against a CPU: no plain rewrite, an exact one by cases (lock < 1 holds for NOBODY and cpu0)
    odd = sym.image(v["lock"] < 1, swap)
    for lock in (NOBODY, 0, 1, 2):
        renamed = {NOBODY: NOBODY, 0: 1, 1: 0, 2: 2}[lock]
        vals = [z3.IntVal(renamed if n == "lock" else 0) for n in names]
        assert z3.is_true(z3.simplify(z3.substitute_vars(odd, *vals))) == (lock < 1)


@settings(deadline=None, derandomize=True, database=None, max_examples=6,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(model=random_models())
def test_houdini_under_the_symmetry_keeps_what_it_keeps_without_it_of_the_closed_candidates(model):
    enc = PerN(model)
    sym = prove_symmetry(enc, "cpus", 30)
    if not isinstance(sym, CpuSymmetry):  # one CPU, or Arrays: nothing to compare
        assert len(model.roles["cpus"]) < 2 or model.arrays, sym
        return
    closed, _ = close(sym, _atoms(enc))
    plain = houdini(enc, closed, 30)
    assert {c.get_id() for c in houdini(enc, _atoms(enc), 30, sym)} == {c.get_id() for c in plain}, model.source
