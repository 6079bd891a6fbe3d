# SPDX-License-Identifier: GPL-2.0-only
"""IC3/PDR at a fixed point (--prover pdr): invariants found without lemmas, re-proved by induction and
printed in the spec's words; violations as runs the explorer replays; the explorer's verdicts kept."""
from __future__ import annotations

import pytest
from hypothesis import HealthCheck, assume, given, settings

from checker import (S32, AllOf, And, Bool, Enum, Or, Param, PerCpu, Role, Shared, Spec, action, explore, invariant,
                     sometimes, terminal, when)
from checker.language.compile import Model
from checker.language.model import resolve_params
from checker.prove import pdr_checks
from checker.prove.fixed import check_point, claims_of, replay
from random_specs import random_models

PC = Enum("idle", "taken", name="ticket_pc")


class Tickets(Spec, name="tickets"):
    """Each CPU takes one ticket; the claim 'at most two are taken' is false from three CPUs on."""

    kernel = "none: a test spec (a ticket counter)"
    ncpus = Param(2, domain=range(1, 6), explore=(2, 3))
    cpus = Role("ncpus", symmetric=True)
    count = Shared(0)
    pc = PerCpu(PC.idle, type=PC, role="cpus")
    done = PerCpu(0, type=Bool, role="cpus")

    @action(role="cpus")
    def take(s, c):
        return when(s.pc[c] == PC.idle, pc={c: PC.taken}, count=s.count + 1)

    @action(role="cpus")
    def finish(s, c):
        return when(And(s.pc[c] == PC.taken, s.done[c] == 0), done={c: 1})

    @terminal
    def all_done(s):
        return AllOf(s.done[c] == 1 for c in s.cpus)

    @sometimes
    def one_is_taken(s):
        return s.count == 1

    @invariant
    def at_most_two_taken(s):
        return s.count <= 2

    @invariant(role="cpus", lemma=True)
    def done_after_taken(s, c):
        """A lemma (not a claim): pdr leaves it out."""
        return Or(s.done[c] == 0, s.pc[c] == PC.taken)


def at(cls, **given):
    return Model(cls, resolve_params(cls, given))


def test_a_claim_true_at_two_cpus_is_proved_with_its_invariant_in_the_specs_words():
    checks = {c.property: c for c in pdr_checks(Tickets, resolve_params(Tickets, {"ncpus": 2}), smt_timeout=30)}
    assert set(checks) == {"at_most_two_taken"}  # the lemma is not asked
    c = checks["at_most_two_taken"]
    assert c.verdict == "holds" and c.extra["method"] == "pdr" and c.extra["lemmas_left_out"] == ["done_after_taken"]
    text = "\n".join(c.extra["invariant"])
    assert "s.count" in text and "PC." in text  # slots by name, the enum by its own name
    assert "proved again by induction" in c.trace_text[0]


def test_the_same_claim_false_at_three_cpus_only_gives_a_replayed_trace():
    c = pdr_checks(Tickets, resolve_params(Tickets, {"ncpus": 3}), smt_timeout=30)[0]
    assert c.verdict == "violated" and c.depth == 3
    assert [s.action for s in c.trace] == ["take"] * 3 and sorted(s.cpu for s in c.trace) == [0, 1, 2]
    assert "count: 2 -> 3" in c.trace_text[-1] and "idle -> taken" in c.trace_text[0]  # as the explorer prints


def test_a_printed_invariant_is_checked_again_and_a_run_must_replay():
    model = at(Tickets, ncpus=2)
    v = check_point(model, claims_of(model), 30)["at_most_two_taken"]
    assert v.verdict == "holds" and v.invariant
    # A run the explorer cannot take is no run: a state that is not a successor ends the replay.
    s0 = tuple(x for slot in model.initial_states()[0] for x in (slot if isinstance(slot, tuple) else (slot,)))
    assert replay(model, [s0]) == ([], model.initial_states()[0])
    assert replay(model, [s0, s0[:1] + (7,) + s0[2:]]) is None


def test_an_uninitialised_local_starts_from_its_declared_values_as_in_the_explorer():
    """lazy_mmdrop_uninit_index's ``i`` is any of its declared values. Left unconstrained, Spacer's run started
    from i = -2, which no explorer run has: the replay refused it and the verdict was inconclusive."""
    from checker.loader import builtin_specs
    from checker.verify import param_points

    cls = builtin_specs()["lazy_mmdrop_uninit_index"]
    m = Model(cls, param_points(cls, {}, "explore")[0])
    v = check_point(m, [c for c in claims_of(m, lemmas=True) if c.name == "listed_only_while_alive"], 30)
    got = v["listed_only_while_alive"]
    assert got.verdict == "violated" and len(got.trace) == 6, (got.verdict, got.reason)
    ex = explore(m)
    assert ex.verdicts["listed_only_while_alive"] == "violated"
    assert len(ex.outcomes["listed_only_while_alive"].trace) == 6


@pytest.mark.differential
def test_percpu_eager_claims_prove_without_its_lemmas_at_one_cpu():
    # the hand-written pc machine, whose program counter is the enum ADD the invariant found names
    from pc_machines.percpu_eager import PercpuEager

    checks = pdr_checks(PercpuEager, resolve_params(PercpuEager, {"ncpus": 1, "batch": 2}), smt_timeout=60)
    by = {c.property: c for c in checks}
    assert {"lock_held_in_critical_section", "conservation_through_fold"} <= set(by["read_bound"].extra["lemmas_left_out"])
    assert "lock_held_in_critical_section" not in by
    for name in ("read_bound", "local_bound", "conservation", "compare_margin_sound", "context_restored"):
        assert by[name].verdict == "holds", (name, by[name].reason)
    assert by["read_bound_minus_one"].verdict == "violated" and by["read_bound_minus_one"].as_expected
    inv = next(c.extra["invariant"] for c in checks if c.extra.get("invariant"))
    assert any("ADD." in line for line in inv) and any("s.local[0]" in line for line in inv)


SETTINGS = dict(deadline=None, derandomize=True, database=None, max_examples=8,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])


@settings(**SETTINGS)
@given(model=random_models())
def test_pdr_agrees_with_the_explorer_on_random_specs(model):
    full = explore(model, symmetry=False, max_states=3000)
    assume(full.complete)
    claims = [p for p in claims_of(model) if p.name in full.verdicts]
    got = check_point(model, claims, 20)
    for p in claims:
        v = got[p.name]
        if v.verdict == "inconclusive":
            continue  # a limit: never a contradiction, and never a pass
        assert v.verdict == full.verdicts[p.name], (p.name, v.reason, model.source)
        if v.verdict == "violated":  # replayed by the explorer: never shorter than its shortest
            assert len(v.trace) >= len(full.outcomes[p.name].trace), model.source


def test_list_marks_lemmas_and_a_lemma_must_be_a_proved_claim():
    from checker.report.listing import describe

    text = describe(Tickets)
    assert "done_after_taken  (lemma)" in text and "at_most_two_taken:" in text
    with pytest.raises(ValueError, match="lemma"):
        invariant(expect="violated", lemma=True)


class TicketsForEveryN(Tickets, name="tickets_for_every_n"):
    ncpus = Param(2, domain=range(1, 100), explore=(2, 3), prove=range(1, 100))

    @invariant(inductive=True)
    def count_never_negative(s):
        return s.count >= 0

    @invariant
    def every_cpu_has_a_state(s):
        """A claim over all CPUs: the any-N encoding cannot state it."""
        return AllOf(Or(s.pc[c] == PC.idle, s.pc[c] == PC.taken) for c in s.cpus)


def test_a_claim_over_all_cpus_the_any_n_encoding_cannot_take_is_reported_not_dropped():
    from checker.prove import prove_checks

    told = []
    checks = prove_checks(TicketsForEveryN, smt_timeout=30, warn=told.append)
    assert not any(c.property == "every_cpu_has_a_state" for c in checks)
    assert told == ["tickets_for_every_n.every_cpu_has_a_state is not proved for every CPU count (1 prove point): "
                    "it iterates over the CPUs of role 'cpus', which the any-N encoding cannot state; the explorer "
                    "checks it at its explore points"]


class SafeShift(Spec, name="safe_shift"):
    """A word shifted by 16 per level, at most one level: never by the whole width."""

    kernel = "a test of the engine's own lemmas"
    word = Shared(-0x10000, type=S32)
    level = Shared(0)
    out = Shared(0, type=S32)

    @action
    def up(s):
        return when(s.level < 1, level=s.level + 1)

    @action
    def read(s):
        return when(s.level > 0, out=s.word >> (s.level * 16))

    @invariant(inductive=True)
    def level_small(s):
        return And(s.level >= 0, s.level <= 1)

    @terminal
    def done(s):
        return s.level == 1


def test_the_undefined_shift_check_is_proved_without_naming_the_engines_flag():
    from checker.prove import prove_checks

    checks = {c.property: c for c in prove_checks(SafeShift, smt_timeout=30)}
    assert checks["no_undefined_behaviour"].verdict == "holds", checks["no_undefined_behaviour"].reason
    assert checks["level_small"].verdict == "holds"
