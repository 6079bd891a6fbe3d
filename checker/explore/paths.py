# SPDX-License-Identifier: GPL-2.0-only
"""Parent pointers to a shortest trace, made concrete.

Under symmetry reduction the stored states are orbit representatives, so a
trace is rebuilt by replaying: from a concrete state, the first successor
(in the model's fixed order) whose canonical form is the next stored state.
The result replays step by step without the reduction.
"""
from __future__ import annotations

from typing import Any, Callable

from checker.explore.search import _same, fingerprint_of
from checker.result import Step, make_step  # make_step: here for its importers
from checker.language.compile import Model


def stored_path(parents: dict[tuple, Any], end: tuple) -> list[tuple]:
    """The stored states from an initial state to ``end``, inclusive."""
    path = [end]
    node = parents[end]
    while node is not None:
        prev, _label = node
        path.append(prev)
        node = parents[prev]
    path.reverse()
    return path


def concrete_trace(model: Model, parents: dict[tuple, Any], end: tuple,
                   canon: Callable[[tuple], tuple] | None,
                   fingerprint: bool = False) -> tuple[tuple, list[Step], tuple]:
    """(initial state, steps, final state) of a shortest trace to ``end``.
    With ``fingerprint``, ``parents`` holds the states' hashes: the trace is
    replayed from an initial state, matching hashes."""
    if fingerprint:
        path = stored_path(parents, fingerprint_of(end))
        canon = canon or _same
        key: Callable[[tuple], Any] = fingerprint_of
    else:
        path = stored_path(parents, end)
        key = _same
    if canon is None:
        steps = []
        for a, b in zip(path, path[1:]):
            label = parents[b][1]
            steps.append(make_step(model, label, a, b))
        return path[0], steps, path[-1]
    start = next(s for s in model.initial_states() if key(canon(s)) == path[0])
    x = start
    steps = []
    for target in path[1:]:
        for label, t in model.successors(x):
            if key(canon(t)) == target:
                steps.append(make_step(model, label, x, t))
                x = t
                break
        else:  # pragma: no cover - would mean canonical form and successors disagree
            raise AssertionError(f"cannot replay a stored step to {target}")
    return start, steps, x
