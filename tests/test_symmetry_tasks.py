# SPDX-License-Identifier: GPL-2.0-only
"""CPU and task symmetry together: the canonical form of checker.explore.symmetry.TaskCanon is an orbit
representative, checked against the least state over every permutation of CPUs and tasks."""
import itertools
import random

import pytest

from checker import explore
from checker.language.compile import Model

from tasks import SECTION, PickPartner, SpinUnderPreemption, ThisCpuInc


def _reachable(m):
    seen = set(m.initial_states())
    todo = list(seen)
    while todo:
        s = todo.pop()
        for _, t in m.successors(s):
            if t not in seen:
                seen.add(t)
                todo.append(t)
    return sorted(seen)


def _all_mappings(sym):
    for perms in itertools.product(*(itertools.permutations(g) for g in sym.groups)):
        mapping = {}
        for g, p in zip(sym.groups, perms):
            mapping.update(zip(g, p))
        yield mapping


POINTS = [
    (ThisCpuInc, dict(ncpus=2, ntasks=2, migrations=1, irq=1)),
    (ThisCpuInc, dict(ncpus=2, ntasks=3, migrations=1, preemptions=2)),
    (ThisCpuInc, dict(ncpus=3, ntasks=2, migrations=2, section=SECTION.migrate)),
    (SpinUnderPreemption, dict(ncpus=2, ntasks=3, migrations=1)),
    (PickPartner, dict(ncpus=2, ntasks=3, migrations=1)),
    (PickPartner, dict(ncpus=1, ntasks=4)),
]


@pytest.mark.parametrize("cls,kw", POINTS, ids=[f"{c.__name__}-{'-'.join(f'{k}{v}' for k, v in kw.items())}"
                                              for c, kw in POINTS])
def test_the_canonical_form_gives_one_representative_per_orbit(cls, kw):
    m = Model(cls(**kw))
    sym = m.symmetry
    assert sym.tasks is not None
    maps = list(_all_mappings(sym))
    states = _reachable(m)
    rng = random.Random(0)
    orbits, reps = set(), set()
    for s in states:
        least = min(sym.permute(s, g) for g in maps)
        c = sym.canonical(s)
        assert min(sym.permute(c, g) for g in maps) == least  # c is in the orbit of s
        for g in rng.sample(maps, min(4, len(maps))):  # and every state of the orbit gives c
            assert sym.canonical(sym.permute(s, g)) == c
        orbits.add(least)
        reps.add(c)
    assert len(reps) == len(orbits)
    # the explorer stores exactly one state per orbit, with the same verdicts
    reduced, full = explore(cls(**kw)), explore(cls(**kw), symmetry=False)
    assert reduced.states == len(orbits) and full.states == len(states)
    assert reduced.verdicts == full.verdicts


def test_four_cpus_with_two_tasks_each_need_no_search():
    m = Model(ThisCpuInc(ncpus=4, ntasks=8, preemptions=1))
    sym = m.symmetry
    calls = []
    permute = sym.permute
    sym.permute = lambda s, mapping: calls.append(1) or permute(s, mapping)
    r = explore(m)
    assert r.outcomes["no_lost_inc"].verdict == "violated"
    assert len(calls) <= r.transitions + r.states  # at most one renaming per canonical form computed


from hypothesis import given, settings, strategies as st  # noqa: E402


@st.composite
def _states(draw, m):
    """A state of ``m`` with random values: tasks on random CPUs, each CPU running one of its tasks or none."""
    sym = m.symmetry
    sched = m.scheduler
    row = list(m.initial_states()[0])
    for pos in sym.plain_percpu:
        row[pos] = tuple(draw(st.integers(0, 1)) for _ in row[pos])
    for pos in sym.tasks.own_ptr:  # a spec's own pointers: NOBODY or any actor
        row[pos] = tuple(draw(st.sampled_from((-1, *range(m.ncpus_total)))) for _ in row[pos])
    for pos in sym.cpu_scalar:
        row[pos] = draw(st.sampled_from((-1, *range(m.ncpus_total))))
    on = list(row[sched.p_cpu])
    for t in sched.tasks:
        on[t] = draw(st.sampled_from(sched.cpus))
    curr = list(row[sched.p_curr])
    for c in sched.cpus:
        curr[c] = draw(st.sampled_from((-1, *[t for t in sched.tasks if on[t] == c])))
    row[sched.p_cpu], row[sched.p_curr] = tuple(on), tuple(curr)
    return m.state_cls(row)


_PICK = Model(PickPartner(ncpus=2, ntasks=3))
_INC = Model(ThisCpuInc(ncpus=3, ntasks=3))


@pytest.mark.parametrize("m", [_PICK, _INC], ids=["pointers", "plain"])
def test_random_states_get_one_representative_per_orbit(m):
    sym = m.symmetry
    maps = list(_all_mappings(sym))

    @settings(max_examples=150, deadline=None)
    @given(_states(m), st.integers(0, len(maps) - 1))
    def check(s, gi):
        c = sym.canonical(s)
        assert min(sym.permute(c, g) for g in maps) == min(sym.permute(s, g) for g in maps)
        assert sym.canonical(sym.permute(s, maps[gi])) == c

    check()
