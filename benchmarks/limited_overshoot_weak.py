# SPDX-License-Identifier: GPL-2.0-only
"""The largest limited_add overshoot (E - limit) reached per memory model, percpu_eager_calls at batch 2.

    python benchmarks/limited_overshoot_weak.py sc|tso|lkmm [SB_DEPTH]

Adds `sometimes E >= limit + k` for k = 0..11 to the spec and prints, per limited point, the largest k reached
(compiled engine). Issue 29: under sc the overshoot is limit_overshoot_bounded's (ncpus - 1) * min(amount,
2 * batch - 1); under tso and lkmm it reaches (ncpus - 1) * (2 * batch - 1) at amount 2 (see
benchmarks/weak_sweeps.txt for the figures and the load).
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from checker import sometimes  # noqa: E402
from checker.explore import explore  # noqa: E402
from checker.ordering.declare import MEMORY  # noqa: E402
from checker.specs.percpu_eager_calls import ADDS, PercpuEagerCalls  # noqa: E402

ns = {"__module__": __name__, "__doc__": "probe", "kernel": PercpuEagerCalls.kernel}
for k in range(0, 12):
    def mk(k):
        def p(s):
            return s.exact >= s.limit + k
        p.__doc__ = f"overshoot >= {k}"
        return p
    ns[f"over_{k}"] = sometimes(applies=lambda p: p.adds == ADDS.limited)(mk(k))
Probe = type("Probe", (PercpuEagerCalls,), ns)
mem = getattr(MEMORY, sys.argv[1])
for pt in [dict(amount=1, ops=3), dict(amount=2, ops=3), dict(amount=3, ops=3), dict(amount=2, ncpus=3)]:
    kw = dict(adds=ADDS.limited, **pt)
    if len(sys.argv) > 2: kw["sb_depth"] = int(sys.argv[2])
    r = explore(Probe(**kw, memory=mem), engine="compiled")
    best = max([k for k in range(12) if r.verdicts.get(f"over_{k}") == "holds"], default=None)
    print(sys.argv[1:], pt, "states", r.states, "complete", r.complete, "max overshoot", best, "limit_ok", r.verdicts.get("limit_overshoot_bounded"), flush=True)
