# SPDX-License-Identifier: GPL-2.0-only
"""What the process-function port tests compare: a hand-written pc-machine spec and its port explored at one
point, with the same distinct states, transitions, depth, verdicts and shortest-trace lengths."""
from typing import Any

from checker.explore import explore
from checker.language.compile import Model
from checker.ordering.declare import MEMORY


def equal_runs(hand: type, port: type, params: dict, memory: str = "sc", engine: str = "interpreted") -> tuple:
    """Both specs explored at ``params`` under ``memory`` on ``engine``; asserts they agree, returns both runs."""
    # (a spec with no shared memory the models act on, vma_unlink_batch, has no memory parameter)
    at = dict(params, memory=getattr(MEMORY, memory)) if memory != "sc" else params
    h = explore(Model(hand, hand(**at).params), engine=engine)
    p = explore(Model(port, port(**at).params), engine=engine)
    assert h.complete and p.complete and p.engine == h.engine == engine
    assert {n: (o.verdict, len(o.trace or ())) for n, o in h.outcomes.items()} == \
        {n: (o.verdict, len(o.trace or ())) for n, o in p.outcomes.items()}
    assert (p.states, p.transitions, p.depth) == (h.states, h.transitions, h.depth)
    return h, p


def point_id(p: dict[str, Any]) -> str:
    """A test id for a point: its parameters, enum values by name."""
    return ",".join(f"{k}={getattr(v, 'name', v)}" for k, v in p.items())
