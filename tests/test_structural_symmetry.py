# SPDX-License-Identifier: GPL-2.0-only
"""Structural CPU symmetry (``Interchangeable``): the declared group, its canonical form in both engines,
and the refusal of a wrong tree (checker/explore/structure.py, checker/compiled/structural.py)."""
from __future__ import annotations

import random
from pathlib import Path

import pytest

from canonical_harness import compiled_canonical, reachable
from checker.compiled.canonical import flatten
from checker.errors import SpecError, SymmetryError
from checker.explore import explore
from checker.language.compile import Model
from checker.language.model import resolve_params
from checker.loader import resolve
from checker.specs.bugs.counter_tree_read_in_flight import CounterTreeReadInFlight
from checker.specs.percpu_counter_tree import DESIGN, PercpuCounterTree

FIXTURES = Path(__file__).parent / "fixtures" / "structural.py"


def fixture(name: str) -> type:
    return resolve([f"{FIXTURES}:{name}"])[0]


def tree_model(cls: type = PercpuCounterTree, **given) -> Model:
    return Model(cls, resolve_params(cls, given))


def test_the_counter_tree_at_8_cpus_is_three_levels_of_pairs():
    m = tree_model(ncpus=8, tasks=1, ops=2, large=0, migrations=0)
    st = m.symmetry.structure
    assert repr(st.root) == ("Subtree(Subtree(Subtree(0, 4, item=(0,)), Subtree(2, 6, item=(2,)), item=(4,)), "
                             "Subtree(Subtree(1, 5, item=(1,)), Subtree(3, 7, item=(3,)), item=(5,)))")
    assert (st.order, len(st.elements), len(st.generators)) == (128, 128, 7)  # 2^7, not 8! = 40320
    assert len({tuple(sorted(e.items())) for e in st.elements}) == 128
    # a swap of the two top subtrees moves CPUs, their tasks (8 .. 15) and their items together
    top = st.generators[0]
    assert (top[0], top[4], top[8], top[12]) == (1, 5, 9, 13)
    assert top.slots[m.index["item"]] == {0: 1, 2: 3, 4: 5, 1: 0, 3: 2, 5: 4}


def _orbits(model: Model, states: set) -> int:
    """Orbits of ``states`` under the group the generators generate (union-find), independent of the
    enumerated elements and of the canonical form."""
    sym = model.symmetry
    parent = {s: s for s in states}

    def find(s):
        while parent[s] != s:
            parent[s] = parent[parent[s]]
            s = parent[s]
        return s

    for s in states:
        for g in sym.structure.generators:
            t = sym.permute(s, g)
            assert t in states  # the reachable set is closed under the declared symmetry
            parent[find(s)] = find(t)
    return len({find(s) for s in states})


def test_bins_reduce_to_the_orbits_of_the_declared_group_in_both_engines():
    cls = fixture("Bins")
    runs = {(e, sym): explore(cls(), symmetry=sym, engine=e) for e in ("compiled", "interpreted")
            for sym in (True, False)}
    assert runs["compiled", True].engine == "compiled", runs["compiled", True].engine_note
    for sym in (True, False):
        a, b = runs["compiled", sym], runs["interpreted", sym]
        assert (a.states, a.transitions, a.depth, a.verdicts) == (b.states, b.transitions, b.depth, b.verdicts)
    assert (runs["compiled", False].states, runs["compiled", True].states) == (1250, 110)
    m = Model(cls, cls().params)
    every = set(reachable(m, 10_000))
    assert len(every) == 1250
    assert _orbits(m, every) == 110


@pytest.mark.parametrize("cls", [PercpuCounterTree, pytest.param(CounterTreeReadInFlight,
                                                                   marks=pytest.mark.differential)])
def test_counter_tree_reduced_and_unreduced_agree_and_engines_agree_state_for_state(cls):
    point = dict(ncpus=4, tasks=1, ops=1, large=0, migrations=0, design=DESIGN.noskip)
    full = explore(tree_model(cls, **point), symmetry=False, engine="compiled")
    red = explore(tree_model(cls, **point), symmetry=True, engine="compiled")
    interp = explore(tree_model(cls, **point), symmetry=True, engine="interpreted")
    assert red.engine == "compiled", red.engine_note
    assert full.verdicts == red.verdicts == interp.verdicts
    assert (red.states, red.transitions, red.depth) == (interp.states, interp.transitions, interp.depth)
    assert (full.states, red.states) == (576, 105)


def test_c_canonical_is_the_interpreters_on_reachable_and_renamed_states():
    m = tree_model(ncpus=4, tasks=1, ops=1, design=DESIGN.latest)
    cc = compiled_canonical(m)
    if cc is None:
        pytest.skip("no C compiler ($CC, else cc): apt-get install gcc")
    sym = m.symmetry
    rng = random.Random(26)
    states = reachable(m, 400)
    states += [sym.permute(s, rng.choice(sym.structure.elements)) for s in states[::4]]
    want = [flatten(m, sym.canonical(s)) for s in states]
    assert cc([flatten(m, s) for s in states]) == want
    # an orbit representative: every renaming of a state has its canonical form
    for s in states[::20]:
        assert {sym.canonical(sym.permute(s, e)) for e in sym.structure.elements} == {sym.canonical(s)}


def test_a_wrong_tree_is_refused_by_both_engines_with_one_message():
    cls = fixture("WrongSubtrees")
    params = resolve_params(cls, {"ncpus": 4, "tasks": 1, "ops": 1, "large": 0, "migrations": 0})
    messages = []
    for engine in ("compiled", "interpreted"):
        with pytest.raises(SymmetryError) as e:
            explore(Model(cls, params), engine=engine)
        messages.append(str(e.value))
    assert messages[0] == messages[1]
    assert "the declared structural symmetry by_item does not hold" in messages[0]
    assert "item[0]->item[1]" in messages[0]


@pytest.mark.parametrize("tree, message", [
    (lambda p: [0, 1], "must return the root Subtree"),
    (lambda p: __import__("checker").Subtree(0, 9), "leaf 9 is not a CPU index of role 'cpu'"),
    (lambda p: __import__("checker").Subtree(0, 0), "a CPU is a leaf twice: 0"),
    (lambda p: __import__("checker").Subtree(0, 1, level0=(0,)), "owns entries of 'level0', which is not an Array"),
])
def test_a_malformed_tree_is_a_spec_error_naming_it(tree, message):
    from checker import Interchangeable

    class Malformed(PercpuCounterTree, on_demand=True):
        by_item = Interchangeable(tree, role="cpu", follow={"adders": lambda p, i: i % p.ncpus})

    with pytest.raises(SpecError, match=message):
        tree_model(Malformed, ncpus=2)


def test_a_group_past_the_limit_leaves_the_point_unreduced_and_says_why(monkeypatch):
    from checker.explore import structure

    monkeypatch.setattr(structure, "MAX_ORDER", 4)
    m = tree_model(ncpus=4, tasks=1, ops=1)
    assert not m.symmetry.active
    assert m.symmetry.refused == "structural symmetry of order 8 exceeds 4 renamings: not reduced"
    monkeypatch.setattr(structure, "MAX_ORDER", 1)
    small = dict(ncpus=2, tasks=1, ops=1, large=0, migrations=0)
    r = explore(tree_model(**small), engine="interpreted")
    assert r.engine_note == "structural symmetry of order 2 exceeds 1 renamings: not reduced"
    assert r.states == explore(tree_model(**small), symmetry=False, engine="interpreted").states
