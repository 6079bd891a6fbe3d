# SPDX-License-Identifier: GPL-2.0-only
"""--prover infer: claims proved for every CPU count with the lemmas left out, from invariants IC3/PDR finds at
one and two CPUs, generalised, kept by Houdini and proved again by the any-N induction."""
from __future__ import annotations

import pytest

from checker import IRQS_OFF, NOBODY, S32, AllOf, And, CpuId, Enum, Ghost, Implies, Int, Lock, Or, Param, PerCpu, Role, \
    Shared, Spec, Sum, action, invariant, sometimes, terminal, when
from checker.language.process import process
from checker.prove import prove_checks

HELD = Enum("idle", "held", name="handoff_pc")


class Handoff(Spec, name="handoff"):
    """A lock taken and released by each CPU; ``inside`` counts the holders. The claim needs two lemmas."""

    kernel = "none: a test spec (a lock and a count of its holders)"
    ncpus = Param(2, domain=range(1, 100), explore=(1, 2), prove=range(1, 100))
    cpus = Role("ncpus", symmetric=True)
    lock = Shared(NOBODY, type=CpuId)
    inside = Shared(0)
    pc = PerCpu(HELD.idle, type=HELD, role="cpus")
    mine = PerCpu(0, type=Int, role="cpus")

    @action(role="cpus")
    def take(s, c):
        return when(And(s.pc[c] == HELD.idle, s.lock == NOBODY), lock=c, pc={c: HELD.held}, mine={c: 1},
                    inside=s.inside + 1)

    @action(role="cpus")
    def give(s, c):
        return when(s.pc[c] == HELD.held, lock=NOBODY, pc={c: HELD.idle}, mine={c: 0}, inside=s.inside - 1)

    @terminal
    def nothing_held(s):
        return s.inside == 0

    @sometimes
    def someone_holds(s):
        return s.inside == 1

    @invariant(inductive=True)
    def one_holder(s):
        return And(s.inside >= 0, s.inside <= 1)

    @invariant(role="cpus", lemma=True)
    def holder_holds_the_lock(s, c):
        return And(Implies(s.pc[c] == HELD.held, And(s.lock == c, s.mine[c] == 1)),
                   Implies(s.pc[c] == HELD.idle, s.mine[c] == 0))

    @invariant(lemma=True)
    def inside_counts_the_holder(s):
        return Or(And(s.lock == NOBODY, s.inside == 0), And(s.lock != NOBODY, s.inside == 1))


def _proofs(checks):
    return {c.property: c for c in checks if c.kind == "proof"}


def test_a_claim_that_needs_lemmas_is_proved_for_every_cpu_count_without_them():
    got = _proofs(prove_checks(Handoff, smt_timeout=20, infer=True))
    c = got["one_holder"]
    assert c.verdict == "holds" and c.extra["method"] == "inferred" and c.params["ncpus"] == "1..99"
    assert "holder_holds_the_lock" not in got and "inside_counts_the_holder" not in got  # lemmas left out
    lines = c.extra["inferred"]
    assert lines and len(lines) < c.extra["candidates"]  # Houdini refused some candidates
    assert any("Sum(s.mine)" in x for x in lines) and any("[c]" in x for x in lines)  # sums and forall c
    assert "proved with" in c.trace_text[0] and c.trace_text[1:] == [f"  {x}" for x in lines]


def test_at_a_fixed_cpu_count_the_invariants_inferred_for_every_count_prove_the_claim(monkeypatch):
    """--prover infer at one point of several CPUs: the any-N induction asked at its count, with what was
    inferred at one CPU, before the facts and laws found at the point (which are not asked when it proves)."""
    import checker.prove.laws as laws

    monkeypatch.setattr(laws, "prove_lemma_free", lambda *a, **k: pytest.fail("the laws route was asked"))
    c = _proofs(prove_checks(Handoff, {"ncpus": (3,)}, smt_timeout=20, infer=True))["one_holder"]
    assert c.verdict == "holds" and c.extra["method"] == "inferred-at-point" and c.params["ncpus"] == 3
    assert c.extra["inferred"] and c.trace_text[0].endswith("each proved again by induction for 3 CPUs:")


def test_at_a_fixed_cpu_count_a_claim_over_every_cpu_is_proved_at_the_point(monkeypatch):
    """A claim the any-N encoding cannot state (it iterates over the CPUs) is proved at the point with the
    invariants inferred there placed at each of its CPUs; it is not reported as left unproved."""
    from checker import Max

    class Both(Handoff, name="handoff_both"):
        @invariant
        def at_most_one_mine(s):
            return Max(s.mine[c] for c in s.cpus) <= 1

    warned: list[str] = []
    got = _proofs(prove_checks(Both, {"ncpus": (3,)}, smt_timeout=20, infer=True, warn=warned.append))
    for name in ("one_holder", "at_most_one_mine"):  # the second with the first's invariants placed at 3 CPUs
        assert got[name].verdict == "holds" and got[name].extra["method"] == "inferred-at-point", name
    assert not any("not_parametric" in c.extra for c in got.values()) and not warned


def test_at_one_cpu_a_fixed_point_is_proved_by_the_facts_and_laws_found_there():
    c = _proofs(prove_checks(Handoff, {"ncpus": (1,)}, smt_timeout=20, infer=True))["one_holder"]
    assert c.verdict == "holds" and c.extra["method"] == "per-n-laws"


def test_without_inference_the_claim_alone_is_not_inductive():
    """The same claim, its lemmas taken away and nothing inferred: induction cannot prove it (the test above
    would pass vacuously if it could)."""
    from checker.language.model import info
    from checker.prove import _bind
    from checker.prove.encoding import AnyN
    from checker.prove.inductive import prove_invariants
    from checker.prove.solver import Solver

    values, shown, constraints, _ = _bind(Handoff, {"ncpus": ("range", 1, 99)})
    enc = AnyN(Handoff, values, shown, "cpus", values["ncpus"].z, constraints)
    claims = [p for p in enc.properties if not p.lemma]
    proofs = prove_invariants(enc, claims, Solver(20), "handoff")
    assert proofs["one_holder"].verdict == "inconclusive" and proofs["one_holder"].reason == "not_inductive"
    assert info(Handoff).properties["holder_holds_the_lock"].lemma


class Folder(Spec, name="folder"):
    """The guide's example (docs/spec-authoring.md): percpu_counter_add_batch() as v6.6 has it, a process
    function, for every CPU count. Between the fold and the sub the add's amount is in its registers, so
    conservation needs a law through them that no conjunct of IC3/PDR states."""

    kernel = "v6.6 lib/percpu_counter.c: percpu_counter_add_batch (under local_irq_save)"
    ncpus = Param(2, domain=range(1, 100), explore=range(1, 3), prove=range(1, 100))
    batch = Param(2, domain=range(1, 10))
    ops = Param(2, domain=range(0, 4))

    cpus = Role("ncpus", symmetric=True)
    count = Shared(0, doc="fbc->count")
    lock = Lock(doc="fbc->lock")
    local = PerCpu(0, type=S32, role="cpus", doc="*this_cpu_ptr(fbc->counters)")
    irqs = PerCpu(0, type=IRQS_OFF, role="cpus", doc="interrupts off on this CPU")
    ops_left = PerCpu(lambda p: p.ops, role="cpus", doc="calls still to make")
    exact = Ghost(0, doc="E: every add so far")

    @process(role="cpus", calls="ops_left", args={"amount": (-1, 1)})
    def percpu_counter_add_batch(k, s, cpu, amount):
        with k.atomic():
            flags = k.local_irq_save()
            count = k.raw_cpu_read(s.local) + amount
            if abs(count) < s.batch:
                k.this_cpu_add(s.local, amount)
                s.exact += amount
                k.local_irq_restore(flags)
                return
        k.raw_spin_lock(s.lock)
        with k.atomic():
            s.count += count
            s.exact += amount
        k.raw_cpu_sub(s.local, count - amount)
        k.raw_spin_unlock(s.lock)
        k.local_irq_restore(flags)

    @invariant
    def conservation(s):
        """Whenever fbc->lock is free, count + the locals == E."""
        return Or(s.lock != NOBODY, s.count + Sum(s.local) == s.exact)

    @sometimes
    def a_fold_happens(s):
        return s.count != 0

    @terminal
    def all_calls_made(s):
        return AllOf([And(s.cpus_pc[c] == 0, s.ops_left[c] == 0) for c in s.cpus])


def test_an_amount_in_flight_in_registers_is_counted_at_the_lock_holder():
    """The law found at one CPU (``exact == count + local[0] + If(pc[0] == L14, amount[0] - count[0], 0)``)
    read for every CPU count as that term at the lock's holder (without it the claim stays open: the next test)."""
    c = _proofs(prove_checks(Folder, smt_timeout=20, infer=True))["conservation"]
    assert c.verdict == "holds" and c.extra["method"] == "inferred" and c.params["ncpus"] == "1..99"
    law = [x for x in c.extra["inferred"] if "[s.lock]" in x]
    assert len(law) == 1 and "Sum(s.local)" in law[0] and "s.cpus_amount[s.lock]" in law[0], law


@pytest.mark.differential
def test_without_the_lock_holders_law_the_amount_in_flight_is_not_proved(monkeypatch):
    """The test above, with the held laws taken away: the claim stays open (11 s, so not in the default tier)."""
    import checker.prove.infer as infer
    monkeypatch.setattr(infer, "held_law_candidates", lambda *a: [])
    c = _proofs(prove_checks(Folder, smt_timeout=20, infer=True))["conservation"]
    assert c.verdict == "inconclusive" and c.reason == "not_inductive"


@pytest.mark.differential
def test_percpu_eager_inferred_invariants_are_printed_and_proved_again():
    # the hand-written pc machine, whose program counter is the enum ADD these inferred invariants name (the
    # built-in port equals it state for state: tests/test_process_port.py)
    from pc_machines.percpu_eager import PercpuEager as cls
    got = _proofs(prove_checks(cls, {"variant": (1,), "limited": (0,), "batch": ("symbolic",)}, smt_timeout=30,
                               infer=True))
    for name in ("read_bound", "local_bound", "conservation", "compare_margin_sound", "types", "sum_lemma"):
        assert got[name].verdict == "holds", (name, got[name].reason)
    assert not any(n.startswith("inferred_") for n in got)  # reported through the claims they prove
    shown = next(c for c in got.values() if c.trace_text and c.verdict == "holds")
    assert shown.extra["method"] == "inferred" and shown.params["ncpus"] == "1..8192"
    text = "\n".join(shown.trace_text)
    assert "Sum(s.local)" in text and "s.lock == c" in text and "ADD." in text
    assert shown.extra["inferred"] == [line.strip() for line in shown.trace_text[1:]]


def _port_b_inferred(limited: int, claims: tuple[str, ...]) -> str:
    """The built-in port's variant B point (batch default) proved with --prover infer: each of ``claims`` holds
    for every CPU count by the inferred route; the inferred invariants, one a line."""
    from checker.loader import resolve
    from specs.percpu_eager import VARIANT

    cls = resolve(["percpu_eager"])[0]
    got = _proofs(prove_checks(cls, {"variant": (VARIANT.B,), "limited": (limited,), "batch": ("default",)},
                               smt_timeout=30, infer=True))
    for name in claims:
        assert got[name].verdict == "holds" and got[name].extra["method"] == "inferred", (name, got[name].reason)
    return "\n".join(line for c in got.values() for line in c.extra.get("inferred") or [])


@pytest.mark.differential  # 130 s alone
def test_percpu_eager_with_limited_add_is_proved_for_every_cpu_count_without_lemmas():
    """The built-in port, variant B with __percpu_counter_limited_add: the fold's law read at the lock's holder
    (conservation_through_fold) and the local one inside its bound between limited_add's check and its add
    (limited_fast_path_checked), both found, neither written."""
    text = _port_b_inferred(1, ("read_bound_limited", "local_bound_limited", "conservation", "compare_margin_sound"))
    assert "[s.lock]" in text and "'percpu_counter_limited_add_L38', s.local[c] <= s.batch - 1)" in text, text


@pytest.mark.differential  # 200 s alone
def test_percpu_eager_port_without_limited_add_is_proved_for_every_cpu_count_without_lemmas():
    """The built-in port, variant B, plain add_batch: what the add read is still in its registers until its sub
    (b_count_is_what_it_read), seen in every reachable state at one CPU, not written."""
    text = _port_b_inferred(0, ("read_bound", "local_bound", "conservation", "compare_margin_sound"))
    assert "s.local[c] + s.adders_amount[c] - s.adders_count[c] == 0" in text, text


@pytest.mark.differential  # 12 s alone (968 s before the bounds observed at one thread)
def test_rss_split_per_thread_bounds_are_proved_for_every_thread_count_without_lemmas():
    """Its lemma cache_tracks_events is a product of a variable and a parameter, read from the sum_bounds
    template family (cache <= (events + 1) * U); events_bound is the greatest events seen at one thread,
    read as the parameter of that value (checker/prove/observed.py)."""
    from checker.loader import resolve

    cls = resolve(["rss_split"])[0]
    got = _proofs(prove_checks(cls, {"cow": (0,)}, smt_timeout=30, infer=True))
    for name in ("no_lost_update", "per_thread_bound", "read_bound", "per_thread_low_bound", "sum_lemma"):
        assert got[name].verdict == "holds", (name, got[name].reason)
    shown = next(c for c in got.values() if c.trace_text and c.verdict == "holds" and c.kind == "proof")
    text = "\n".join(shown.trace_text)
    assert "s.cache[c] <= (s.events[c] + 1) * s.U" in text and "s.events[c] <= s.T + 1" in text, text


@pytest.mark.differential  # 9 s alone
def test_rss_split_with_copy_on_write_is_proved_for_every_thread_count_without_lemmas():
    """cow=1 (a fault that copies the page first): the same claims, the lemmas left out."""
    from checker.loader import resolve

    cls = resolve(["rss_split"])[0]
    got = _proofs(prove_checks(cls, {"cow": (1,)}, smt_timeout=30, infer=True))
    for name in ("no_lost_update", "per_thread_bound", "read_bound", "per_thread_low_bound", "sum_lemma"):
        assert got[name].verdict == "holds", (name, got[name].reason)
        assert got[name].extra["method"] == "inferred" and got[name].params["threads"] == "1..1048575"
    shown = next(c for c in got.values() if c.trace_text and c.verdict == "holds" and c.kind == "proof")
    assert "s.cache[c] <= s.events[c] * s.U" in "\n".join(shown.trace_text)


def test_the_pdr_ladder_starts_from_candidates_read_for_any_n_and_proves_three_cpus():
    from checker.language.compile import Model
    from checker.language.model import resolve_params
    from checker.prove.fixed import _seed, check_ladder, claims_of
    from checker.prove.generalise import at_point, templates

    model = Model(Handoff, resolve_params(Handoff, {"ncpus": 3}))
    placed = at_point(model, templates(model, "cpus"))
    assert len(placed) > len(templates(model, "cpus"))  # a per-CPU template once per CPU
    assert _seed(None, model, "cpus", 20) is not None  # some template is inductive at three CPUs
    v = check_ladder(model, claims_of(model), 20)["one_holder"]
    assert v.verdict == "holds" and v.invariant


def test_prover_infer_on_the_command_line_prints_the_invariants_and_how_to_run_it_again(cli):
    r = cli("verify", "tests/test_infer.py:Handoff", "--mode", "prove", "--prover", "infer", "-v")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "handoff.one_holder proved for every CPU count without lemmas; ncpus=1..99" in r.stdout
    assert "(inferred, " in r.stdout and "    Or(s.pc[c] != HELD.held, s.lock == c)" in r.stdout
    assert "holder_holds_the_lock" not in r.stdout  # the lemmas are left out
    assert "--mode prove --prover infer" in r.stdout


def test_houdini_any_drops_only_the_goal_z3_cannot_decide_and_asks_few_queries_for_it(monkeypatch):
    """Behind one undecided goal (here a pigeonhole over a tiny budget) the others are still kept, and found by
    asking halves, not each goal alone."""
    import z3

    from checker.prove import infer

    pigeons = [z3.Int(f"p{i}") for i in range(9)]
    hard = z3.Not(z3.And(*[z3.And(p >= 0, p < 8) for p in pigeons], z3.Distinct(pigeons)))  # true, not quickly
    x, y = z3.Ints("x y")
    asked = []
    seeded = infer.seeded
    monkeypatch.setattr(infer, "seeded", lambda t: asked.append(1) or seeded(t))
    after = [x + k >= k for k in range(20)] + [hard] + [y <= k for k in range(20)]
    assert infer._broken([x >= 0, y == 0], 0.002, after, list(range(len(after)))) == {20}
    assert len(asked) < len(after) // 2
    assert infer._broken([x >= 0, y == 0], 0.002, [y >= 1, x >= 0], [0, 1]) == {0}  # false in a model: broken


def test_a_held_law_is_placed_at_each_cpu_the_lock_can_name_only_when_asked():
    from checker.language.compile import Model
    from checker.language.model import resolve_params
    from checker.prove.encoding import PerN
    from checker.prove.generalise import Candidate, at_point
    from checker.prove.horn import slot_names
    import z3

    model = Model(Handoff, resolve_params(Handoff, {"ncpus": 2}))
    held = Candidate(z3.Or(z3.Int("s.lock") == NOBODY, z3.Int("s.mine[s.lock]") == 1), 0, "the holder's mine")
    assert at_point(model, [held]) == []  # (IC3/PDR's seeds: as measured)
    [placed] = at_point(model, [held], held=True)
    names = slot_names(PerN(model))

    def value(**slots):
        return z3.is_true(z3.simplify(z3.substitute_vars(placed, *[z3.IntVal(slots.get(n, 0)) for n in names])))

    assert value(**{"lock": 1, "mine[1]": 1}) and not value(**{"lock": 1, "mine[0]": 1})
    assert value(**{"lock": NOBODY})
