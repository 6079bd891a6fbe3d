# SPDX-License-Identifier: GPL-2.0-only
"""Modular facts and conservation laws found at one point (checker.prove.laws): the counter tree's kind of
claim (what a carry walk holds back) proved without the hand-written lemmas it needed."""
from __future__ import annotations

import pytest

from checker import AllOf, And, Ghost, If, Implies, Int, Param, PerCpu, Role, Shared, Spec, Sum, action, \
    invariant, sometimes, terminal, when
from checker.language.compile import Model
from checker.language.model import resolve_params
from checker.prove.encoding import PerN
from checker.prove.inductive import prove_invariants
from checker.prove.laws import find_laws, moduli, prove_lemma_free, _Point
from checker.prove.solver import Solver
from checker.result import HOLDS


class Carry(Spec, name="carry_toy"):
    """Each CPU counts in its own counter; each time it passes a multiple of 4 a carry of 4 is in flight
    to ``top`` (the counter keeps its value, as the tree's level 0 does). A settled ``top`` is at most
    ``3 * ncpus`` behind: the proof needs ``top + pending + Sum(local % 4) == E`` and ``idle => no
    carry``, which the spec does not state."""

    kernel = "none: a test spec (a one-level carry, lib/percpu_counter_tree.c's shape)"
    ncpus = Param(2, domain=range(1, 9), explore=(1, 2), prove=(2,))
    gap = Param(3, domain=range(0, 100), doc="the claimed bound per CPU")
    cpus = Role("ncpus")
    local = PerCpu(0, type=Int, role="cpus")
    pend = PerCpu(0, type=Int, role="cpus")
    busy = PerCpu(0, type=Int, role="cpus")
    top = Shared(0, type=Int)
    exact = Ghost(0)

    @action(role="cpus")
    def add(s, c):
        res = s.local[c] + 1
        carry = If(res % 4 == 0, 4, 0)
        return when(And(s.busy[c] == 0, s.local[c] < 6), local={c: res}, exact=s.exact + 1,
                    pend={c: carry}, busy={c: If(carry == 0, 0, 1)})

    @action(role="cpus")
    def fold(s, c):
        return when(s.busy[c] == 1, top=s.top + s.pend[c], pend={c: 0}, busy={c: 0})

    @terminal
    def all_counted(s):
        return AllOf(And(s.local[c] == 6, s.busy[c] == 0) for c in s.cpus)

    @invariant
    def settled_gap(s):
        settled = AllOf(s.busy[c] == 0 for c in s.cpus)
        return Implies(settled, And(s.top <= Sum(s.local), Sum(s.local) - s.top <= s.gap * s.ncpus))

    @sometimes
    def a_carry_lands(s):
        return s.top > 0


def _model(**kw):
    return Model(Carry, resolve_params(Carry, {"ncpus": 2, **kw}))


def test_the_moduli_are_read_off_the_steps():
    assert moduli(_Point(_model()).steps) == [4]


def test_the_settled_gap_is_not_inductive_alone():
    model = _model()
    got = prove_invariants(PerN(model), list(model.properties), Solver(10), "t")
    assert got["settled_gap"].verdict != HOLDS


def test_found_laws_prove_the_settled_gap_and_not_a_tighter_one():
    kept, laws = find_laws(_model(), 10)
    assert laws.conservation, laws.notes
    free = prove_lemma_free(_model(), Solver(10), "t")
    assert free.proofs["settled_gap"].verdict == HOLDS, free.proofs["settled_gap"].reason
    assert any("% 4" in line and "top" in line and "exact" in line for line in free.kept), free.kept
    # gap 2 is false (each CPU can hold 3 below its carry): nothing found may prove it
    tight = prove_lemma_free(_model(gap=2), Solver(10), "t")
    assert tight.proofs["settled_gap"].verdict != HOLDS


@pytest.mark.differential
def test_counter_tree_settled_gap_bound_without_its_lemmas():
    from checker.loader import resolve

    cls = resolve(["percpu_counter_tree"])[0]
    for n in (2, 3):
        model = Model(cls, resolve_params(cls, {"ncpus": n, "ops": 1}))
        assert any(p.lemma for p in model.properties)
        free = prove_lemma_free(model, Solver(60), "tree")
        assert not any(name in free.proofs for name in ("carries_conserved", "items_hold_whole_carries"))
        for claim in ("settled_gap_bound", "settled_claim", "precise_sum_is_exact"):
            assert free.proofs[claim].verdict == HOLDS, (n, claim, free.proofs[claim].reason)


def test_pdr_starts_from_the_found_laws_where_no_cpu_count_can_be_climbed():
    from checker.prove.fixed import check_ladder, claims_of

    model = _model()
    got = check_ladder(model, claims_of(model), 10)
    assert got["settled_gap"].verdict == HOLDS, got["settled_gap"].reason
    assert any("% 4" in line for line in got["settled_gap"].invariant)


def test_prover_infer_at_a_fixed_cpu_count_leaves_the_lemmas_out_and_says_so():
    from checker.prove import prove_checks

    got = {c.property: c for c in prove_checks(Carry, smt_timeout=10, infer=True) if c.kind == "proof"}
    c = got["settled_gap"]
    assert c.verdict == HOLDS and c.extra["method"] == "per-n-laws"
    assert any("lemmas left out" in n and "s.exact ==" in n for n in c.extra["notes"])


def test_the_per_n_fallback_with_infer_proves_each_point_without_lemmas():
    from checker.prove import _per_n_fallback

    proofs, method, shown = _per_n_fallback(Carry, {"ncpus": ("range", 2, 3), "gap": 3}, Solver(10), "t",
                                            "has a tree (test)", infer=True)
    assert method == "per-n-laws" and shown["ncpus"] == "2..3"
    assert proofs["settled_gap"].verdict == HOLDS and proofs["settled_gap"].obligations > 0
    assert any("ncpus=3" in n and "s.exact ==" in n for n in proofs["settled_gap"].notes)


def test_a_per_n_sweep_tries_each_points_laws_first_at_the_next(monkeypatch):
    """The laws found at 2 CPUs are laws at 3 (the same grouped features: every CPU's counter modulo 4, ...):
    the point at 3 takes them from the point before, checked against its own steps, and searches for none."""
    import checker.prove.laws as laws
    from checker.prove import _per_n_fallback

    searched, real = [], laws._search
    monkeypatch.setattr(laws, "_search", lambda pt, *a: searched.append(pt.model.params.shown()["ncpus"])
                        or real(pt, *a))
    proofs, _, _ = _per_n_fallback(Carry, {"ncpus": ("range", 2, 3), "gap": 3}, Solver(10), "t",
                                   "has a tree (test)", infer=True)
    assert proofs["settled_gap"].verdict == HOLDS
    assert 2 in searched and 3 not in searched, searched
    at = {n: next(x for x in proofs["settled_gap"].notes if f"ncpus={n}" in x) for n in (2, 3)}
    assert "% 4" in at[3] and at[3].count("s.exact ==") == at[2].count("s.exact ==")


def test_prover_infer_over_several_cpu_counts_passes_each_points_laws_to_the_next(monkeypatch):
    """``--prover infer --set ncpus=2,3``: two points of the laws route, the second taking the first's laws."""
    import checker.prove.laws as laws
    from checker.prove import prove_checks

    searched, real = [], laws._search
    monkeypatch.setattr(laws, "_search", lambda pt, *a: searched.append(pt.model.params.shown()["ncpus"])
                        or real(pt, *a))
    got = [c for c in prove_checks(Carry, {"ncpus": (2, 3)}, smt_timeout=10, infer=True)
           if c.kind == "proof" and c.property == "settled_gap"]
    assert [(c.params["ncpus"], c.verdict) for c in got] == [(2, HOLDS), (3, HOLDS)]
    assert 2 in searched and 3 not in searched, searched


def test_a_hint_that_is_no_law_here_is_dropped_and_the_search_runs(monkeypatch):
    """A hint some step breaks (``exact`` constant: every add breaks it) is not taken; the search finds the law."""
    import checker.prove.laws as laws

    pt = _Point(_model())
    own = laws._own_moduli(pt)
    wrong = {laws._signature(pt, own, ((pt.names.index("exact"), None),)): 1}
    searched, real = [], laws._search
    monkeypatch.setattr(laws, "_search", lambda *a: searched.append(1) or real(*a))
    _, found = find_laws(_model(), 10, hints=[wrong])
    assert searched and wrong not in found.portable
    assert any("% 4" in t for t in found.text), found.text


def test_a_law_z3_cannot_decide_is_set_aside_and_the_search_goes_on(monkeypatch):
    """Every step's question about the search's first law (the anchor alone, ``exact`` constant) answered
    unknown, as Z3 answers a hard one: that law is set aside and the next ones are asked, and the law the
    settled gap rests on is still found (the search used to end at the first unknown, with no law at all)."""
    import z3

    import checker.prove.laws as laws

    pt = _Point(_model())
    facts = find_laws(_model(), 10)[1].modular
    first_round = len(pt.steps)
    real, calls = laws._ask, []

    def ask(q, goal, cases, timeout, canonical=True):
        calls.append(goal)
        if len(calls) <= first_round:
            return z3.unknown, None
        return real(q, goal, cases, timeout, **({} if canonical else {"canonical": False}))

    monkeypatch.setattr(laws, "_ask", ask)
    texts: dict[int, str] = {}
    found = laws.conservation_laws(pt, [4], facts, 10.0, [], texts)
    assert len(calls) > first_round
    assert any("% 4" in texts[x.get_id()] and "top" in texts[x.get_id()] for x in found), list(texts.values())


def test_a_law_search_a_limit_ends_says_so_in_the_notes(monkeypatch):
    """Every question undecided: the search sets laws aside until its limit and says which limit ended it."""
    import z3

    import checker.prove.laws as laws

    monkeypatch.setattr(laws, "_ask", lambda *a, **k: (z3.unknown, None))
    notes: list[str] = []
    assert laws.conservation_laws(_Point(_model()), [4], [], 10.0, notes) == []
    assert f"the search for a law through exact ended: {laws.MAX_UNDECIDED + 1} laws set aside, Z3 undecided " \
        "whether a step keeps them" in notes, notes


class Staged(Carry, name="carry_staged"):
    """``Carry`` with a fold that tests its CPU's ``pend`` against a number, as the counter tree's walk tests
    a task's level: the fold's question has two cases (``pend == 4`` and not; the same fold, as ``pend`` is 0
    or 4)."""

    @action(role="cpus")
    def fold(s, c):
        return when(s.busy[c] == 1, top=s.top + If(s.pend[c] == 4, 4, s.pend[c]), pend={c: 0}, busy={c: 0})


@pytest.mark.parametrize("cases_undecided", [False, True])
def test_houdini_asks_a_step_in_its_cases_first_and_whole_only_where_they_are_undecided(monkeypatch,
                                                                                        cases_undecided):
    """A step whose ``If``s test a slot against numbers is asked in those cases first (the counter tree's carry
    at 5 CPUs: its whole question undecided after 25 minutes, its cases unsat in 29 s); the whole question only
    when some case is undecided (here made so), and the laws are kept either way."""
    import z3

    import checker.prove.laws as laws

    model = Model(Staged, resolve_params(Staged, {"ncpus": 2}))
    _, found = find_laws(model, 10)
    assert found.conservation
    real_cases, real_ask, asked = laws._cases, laws._ask, []

    def cases(pt, guard, post):
        out = real_cases(pt, guard, post)
        asked.append(("cases", len(out)))
        return out

    def ask(q, goal, cs, timeout, canonical=True):
        if cases_undecided and len(cs) > 1:
            asked.append(("ask", len(cs), z3.unknown))
            return z3.unknown, None
        r = real_ask(q, goal, cs, timeout, canonical=canonical)
        asked.append(("ask", len(cs), r[0]))
        return r

    monkeypatch.setattr(laws, "_cases", cases)
    monkeypatch.setattr(laws, "_ask", ask)
    assert laws.houdini_split(_Point(model), found.conservation, found.modular, 10.0) == found.conservation
    split = [i for i, e in enumerate(asked) if e[0] == "cases" and e[1] > 1]
    assert split, asked  # the folds' questions
    for i in split:
        assert asked[i + 1][:2] == ("ask", 2)
        whole_next = asked[i + 2][:2] == ("ask", 1) if i + 2 < len(asked) else False
        assert whole_next == cases_undecided, asked[i:i + 3]


def test_the_induction_asks_a_step_that_branches_on_a_slot_in_its_cases(monkeypatch):
    """The fold's obligations asked whole answered unknown, as Z3 answers the counter tree's carry at 5 CPUs:
    the induction asks them in the fold's cases (``pend[c] == 4`` and not) and the settled gap is proved
    without lemmas (before, the claim was inconclusive, resting on unproved found facts)."""
    import z3

    from checker.prove.cases import split
    from checker.prove.horn import flat

    model = Model(Staged, resolve_params(Staged, {"ncpus": 2}))
    enc = PerN(model)
    s = enc.fresh("")
    folds, cases = [], []  # each fold's guard (among its hypotheses) and its cases
    for tr in enc.transitions():
        guard, t = enc.fire(tr, s)
        split_ = split(flat(enc, s), [guard, *flat(enc, t)])
        if tr.name == "fold":
            folds.append(guard)
            cases += split_
    assert len(folds) == 2 and len(cases) == 4, cases
    whole_folds = []

    class Hard(z3.Solver):
        def check(self, *a):
            got = self.assertions()
            if any(x.eq(f) for x in got for f in folds) and not any(x.eq(c) for x in got for c in cases):
                if z3.is_not(got[-1]):  # an obligation (not the note's question whether the fold is enabled)
                    whole_folds.append(len(got))
                return z3.unknown
            return super().check(*a)

    def new(self, timeout=None):
        s = Hard()
        s.set("random_seed", 0)
        return s

    monkeypatch.setattr(Solver, "_new", new)
    free = prove_lemma_free(model, Solver(10), "t")
    assert free.proofs["settled_gap"].verdict == HOLDS, free.proofs["settled_gap"].reason
    assert not whole_folds  # every fold obligation was decided in its cases


def test_a_found_fact_the_induction_does_not_prove_again_is_not_assumed_for_the_claims(monkeypatch):
    """``top == Sum(local)`` holds initially and makes the settled gap hold, but no add keeps it: the
    induction that proves the found facts again refuses it, and the claim is asked without it (not proved)."""
    import z3

    import checker.prove.laws as laws

    model = _model()
    names = _Point(model).names
    var = {n: z3.Var(i, z3.IntSort()) for i, n in enumerate(names)}
    wrong = var["top"] == var["local[0]"] + var["local[1]"]
    monkeypatch.setattr(laws, "find_laws", lambda m, timeout, hints=(): ([wrong], laws.Laws(modular=[wrong])))
    free = prove_lemma_free(model, Solver(10), "t")
    assert free.proofs["settled_gap"].verdict != HOLDS
    assert any("not proved again by induction" in n for n in free.proofs["settled_gap"].notes)


def test_law_search_groups_the_slots_alike_by_the_moduli_they_are_divided_by():
    from checker.prove.laws import _groups, _own_moduli

    pt = _Point(_model())
    own = _own_moduli(pt)
    local = [i for i, n in enumerate(pt.names) if n.startswith("local[")]
    assert local and all(own[i] == {4} for i in local)
    # one feature for every CPU's counter, one for all of them modulo their carry bit
    assert tuple((i, None) for i in local) in _groups(pt)
    assert tuple((i, 4) for i in local) in _groups(pt)


def test_a_law_counts_what_an_add_holds_in_flight_at_its_place_in_the_code():
    """percpu_eager (process functions): between the fold (fbc->count += count) and the sub, the add's
    registers hold what count already has; the law through E counts them there, which is the spec's
    conservation_through_fold lemma found from the steps, and every step keeps it from any state."""
    from checker.loader import resolve
    from checker.prove.laws import conservation_laws, laws_alone

    cls = resolve(["percpu_eager"])[0]
    model = Model(cls, resolve_params(cls, {"ncpus": 2, "batch": 2}))
    texts: dict[int, str] = {}
    laws = conservation_laws(_Point(model), [], [], 30.0, [], texts)
    at = "If(s.adders_pc[{c}] == percpu_counter_add_batch_b_L29, s.adders_{r}[{c}], 0)"
    first = texts[laws[0].get_id()]
    assert first.startswith("s.exact == s.count + s.local[0] + s.local[1]")
    assert all(f"+ {at.format(c=c, r='amount')}" in first and f"- {at.format(c=c, r='count')}" in first
               for c in (0, 1)), first
    assert len(laws_alone(model, 30.0)) == len(laws)


def test_a_counter_picked_by_the_running_cpu_has_the_carry_bit_it_is_tested_by():
    """percpu_counter_tree (process functions): this_cpu_add_return() picks level0[cpu] by the task's CPU
    register, so the carry tests ``If(cpu == 1, level0[1], level0[0]) + inc``; each counter it can pick
    has level 0's carry bit as its own modulus (the carries' law is summed over them)."""
    from checker.loader import resolve
    from checker.prove.laws import _own_moduli

    cls = resolve(["percpu_counter_tree"])[0]
    pt = _Point(Model(cls, resolve_params(cls, {"ncpus": 2, "ops": 1})))
    own = _own_moduli(pt)
    assert {pt.names[i]: own[i] for i in pt.numeric if pt.names[i].startswith("level0[")} \
        == {f"level0[{c}]": {2} for c in range(4)}
    assert all(not own[i] for i in pt.numeric if pt.names[i] in ("approx", "exact", "moves"))


@pytest.mark.differential
def test_counter_tree_carries_law_is_found_at_eight_cpus():
    from checker.loader import resolve
    from checker.prove.laws import _groups, _own_moduli

    cls = resolve(["percpu_counter_tree"])[0]
    pt = _Point(Model(cls, resolve_params(cls, {"ncpus": 8, "ops": 1})))
    feats = _groups(pt)
    # the items of a level share their level's carry bit: 4 for the first, 8 above (settled_max's shape); the
    # port picks an item by an index computed from its level, read here at each level the walk tests
    mods = sorted({m for f in feats for i, m in f if m is not None and pt.names[i].startswith("item[")})
    assert mods == [4, 8], mods
    own = _own_moduli(pt)
    assert {pt.names[i]: own[i] for i in pt.numeric if pt.names[i].startswith("item[")} \
        == {**{f"item[{k}]": {4} for k in range(4)}, "item[4]": {8}, "item[5]": {8}}
    assert len(feats) < 30  # against 160 one-slot features at this size
