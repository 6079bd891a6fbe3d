# SPDX-License-Identifier: GPL-2.0-only
"""What the prover shows depends on its query alone, not on what the process asked Z3 before.

Z3's answers in the shared context change with the terms built earlier (the same query, its constants
made in another order, gets another model; Spacer finds another invariant, and the simplifier orders a
sum another way): a CTI or a printed invariant would then change with the pytest worker's or the
``--workers`` pool's schedule. Each history runs in a process of its own."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

_QUERY = r"""
import json, sys
import z3
from checker.prove.solver import Solver, seeded

names = ["a", "b", "c", "d", "e"]
if sys.argv[1] == "reversed":  # the same constants, made first in the other order, and more terms
    made_before = [z3.Int(n) * 3 + 1 for n in reversed(names)]
xs = [z3.Int(n) for n in names]
hyps = [z3.Sum(xs) == 17, *[x >= 0 for x in xs], z3.Distinct(xs), xs[0] + 2 * xs[2] > xs[4]]
shared = seeded(10)
shared.add(*hyps)
assert shared.check() == z3.sat
answer = Solver(10).obligation("q", hyps, z3.BoolVal(False))
print(json.dumps({"shared": [shared.model().eval(x).as_long() for x in xs],
                  "shown": [answer.model.eval(x).as_long() for x in xs]}))
"""


_SPACER = r"""
import json, sys
import z3
from checker.language.compile import Model
from checker.language.model import resolve_params
from checker.loader import builtin_specs
from checker.prove.encoding import PerN
from checker.prove.fixed import check_point, claims_of

specs = builtin_specs()
if sys.argv[1] == "reversed":  # another spec's terms first, and the names this one uses made in another order
    other = PerN(Model(specs["rss_split"], resolve_params(specs["rss_split"], {})))
    other.fresh("")
    made_before = [z3.Int(n) * 3 + 1 for n in ("zone", "owed[0]", "exact", "thresh[0]")]
cls = specs["vmstat"]
model = Model(cls, resolve_params(cls, {"ncpus": 1}))
print(json.dumps({name: [v.verdict, v.invariant] for name, v in check_point(model, claims_of(model), 10).items()}))
"""


def _run(history: str, script: str = _QUERY) -> dict:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    out = subprocess.run([sys.executable, "-c", script, history], capture_output=True, text=True, env=env,
                         cwd=ROOT, timeout=300, check=True)
    return json.loads(out.stdout)


def test_the_counterexample_shown_is_the_same_whatever_ran_before():
    first, second = _run("forward"), _run("reversed")
    # The premise: Z3's own model in the shared context does change with the history here.
    assert first["shared"] != second["shared"]
    assert first["shown"] == second["shown"]


def test_spacer_proves_and_prints_the_same_invariant_whatever_ran_before():
    first, second = _run("forward", _SPACER), _run("reversed", _SPACER)
    assert first == second
    assert first["conservation"][0] == "holds" and first["conservation"][1]
