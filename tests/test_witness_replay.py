# SPDX-License-Identifier: GPL-2.0-only
"""Witnesses by construction replayed with their rows changed in place give the states that ``Model.apply``,
one new state a step, gives."""
from __future__ import annotations

import itertools

import pytest

from checker.language.compile import Model, Row
from checker.language.model import resolve_params
from checker.loader import resolve
from checker.prove.construct import replay, schedule_lines


def _by_apply(model: Model, fn) -> tuple[tuple, list[tuple]]:
    """The schedule run the plain way: a new state per step; the state after each schedule line."""
    actions = {a.info.name: a for a in model.actions}
    s = model.initial_states()[0]
    lines = []
    for block, repeat in schedule_lines(model, fn):
        for _ in range(repeat):
            for name, cpu, choices in block:
                act = actions[name]
                args = tuple(choices[a] for a in act.arg_names)
                r = act.info.fn(s, cpu, *args) if cpu is not None else act.info.fn(s, *args)
                s = model.apply(s, r.updates, act)
        lines.append(s)
    return s, lines


def _witnesses(spec: str, limit: int):
    cls = resolve([spec])[0]
    for attr in dir(cls):
        fn = getattr(cls, attr, None)
        meta = getattr(fn, "__countercheck_witness__", None)
        if meta is None:
            continue
        at = dict(meta["at"])
        for combo in itertools.product(*(sorted(v)[:1] for v in at.values())):
            params = resolve_params(cls, dict(zip(at, combo)))
            if meta.get("applies") is None or meta["applies"](params):
                yield Model(cls, params), fn
        limit -= 1
        if limit == 0:
            return


@pytest.mark.parametrize("spec", ["percpu_eager", "rss_split", "vmstat", "percpu_counter_tree", "eager_fold_gt"])
def test_in_place_replay_reaches_the_states_apply_reaches(spec):
    seen = 0
    for model, fn in _witnesses(spec, 2):
        final, lines = _by_apply(model, fn)
        r = replay(model, fn)
        assert r.final == final and type(r.final) is type(final)
        assert all(type(v) is not Row for v in r.final)
        # each trace line's changes are those between the plain run's states
        before = [model.initial_states()[0], *lines[:-1]]
        assert [step.changes for step in r.trace] == [model.changes(a, b) for a, b in zip(before, lines)]
        seen += 1
    assert seen


def test_a_row_reads_and_compares_as_the_tuple_it_becomes():
    row = Row([0, 3, 0])
    assert row == (0, 3, 0) and (0, 3, 0) == row and row != (0, 3, 1) and not row != (0, 3, 0)
    assert row[1] == 3 and sum(row) == 3 and max(row) == 3 and list(row) == [0, 3, 0]
    with pytest.raises(TypeError):
        hash(row)  # a spec hashing a row fails loudly rather than differing from a tuple quietly
