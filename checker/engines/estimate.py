# SPDX-License-Identifier: GPL-2.0-only
"""Is a point within the explorer's reach? Said before the search starts, not after 40 s and 3 GB.

The figures are the spec's own: the state vector (every shared slot and
every per-CPU slot) and the steps one state offers (each action, for each
CPU and choice). Expanding one state copies the vector once per step, so
their product bounds the work per state from below. Where that product is
moderate but the vector is long, the first state is expanded for real and
timed (the quick sample). Either figure far past what a million states
could afford is a warning that names prove and simulate, which reach such
points (the explorer still runs: the user may know better, or stop it).
"""
from __future__ import annotations

import time

from checker.language.compile import Model

#: Slot copies per expanded state beyond which exhaustive search is out of reach (1e6 states x 1e7 = 1e13).
MAX_WORK_PER_STATE = 10_000_000
#: State vectors at least this long are sampled (shorter ones are cheap to expand whatever they hold).
SAMPLE_SLOTS = 256
#: Seconds per expanded state beyond which a million states would take days.
MAX_SECONDS_PER_STATE = 0.05
MILLION = 1_000_000


def shape(model: Model) -> tuple[int, int]:
    """(slots in a state, steps one state offers)."""
    init = model.initial_states()[0]
    slots = sum(len(v) if isinstance(v, tuple) else 1 for v in init)
    steps = sum(len(a.cpus) * len(a.choices) for a in model.actions)
    return slots, steps


def out_of_reach(model: Model) -> str | None:
    """A warning when exploring ``model`` exhaustively is clearly out of reach, else None."""
    slots, steps = shape(model)
    advice = (f"exploring {model.name} at {model.params} exhaustively is out of reach; "
              f"use --mode prove (every CPU count at once) or --simulate RUNS (random walks), "
              f"or smaller --set values")
    if slots * steps > MAX_WORK_PER_STATE:
        return (f"a state has {slots:,} slots and offers {steps:,} steps, so expanding one copies "
                f"{slots * steps:,} values: " + advice)
    if slots < SAMPLE_SLOTS:
        return None
    t0 = time.perf_counter()
    model.successors(model.initial_states()[0])
    per_state = time.perf_counter() - t0
    if per_state > MAX_SECONDS_PER_STATE:
        hours = per_state * MILLION / 3600
        return (f"a state has {slots:,} slots and expanding the first took {per_state * 1000:.0f} ms "
                f"(a million states: about {hours:,.0f} h): " + advice)
    return None
