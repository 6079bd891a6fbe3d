# SPDX-License-Identifier: GPL-2.0-only
"""Invariants that check nothing: warned, with the line, never silently passed.

An invariant that reads no state variable (``return True``) or that holds
in every state its variables' declared domains allow (``s.x == s.x``,
``s.flag >= 0`` for a Bool) passes at every point whatever the spec does.
Both are found on the state of Z3 symbols the loader's lint uses: the first
returns a plain Python value there, the second is a valid formula. Each is
a warning, not an error: a deliberate sanity check may look like this.
"""
from __future__ import annotations

import random
from typing import Any

from checker.language.compile import Model

#: Seconds Z3 may spend deciding whether one invariant is valid: a hard query is no evidence of vacuity.
QUERY_TIMEOUT_MS = 2000


def _domains(model: Model, s: tuple) -> list[Any]:
    import z3

    out = []
    for n, v in zip(model.var_names, s):
        t = model.vars[n].type
        for x in (v if isinstance(v, tuple) else (v,)):
            if t is None or not z3.is_int(x.z):
                continue
            if t.lo is not None:
                out.append(x.z >= t.lo)
            if t.hi is not None:
                out.append(x.z <= t.hi)
    return out


#: Random states in the declared domains tried before Z3: most invariants fail in one, for free.
SAMPLES = 8


def _value(t: Any, rng: random.Random) -> int:
    lo = t.lo if t is not None and t.lo is not None else -4
    hi = t.hi if t is not None and t.hi is not None else 4
    return rng.choice((lo, hi, rng.randint(lo, hi), rng.randint(max(lo, -4), min(hi, 4)) if lo <= 4 and hi >= -4
                       else lo))


def _samples(model: Model) -> list[tuple]:
    """Deterministic random states within the variables' declared domains (not necessarily reachable)."""
    rng = random.Random(0)
    init = model.initial_states()[0]
    out = []
    for _ in range(SAMPLES):
        vals = []
        for n, v in zip(model.var_names, init):
            t = model.vars[n].type
            vals.append(tuple(_value(t, rng) for _ in v) if isinstance(v, tuple) else _value(t, rng))
        out.append(model.state_cls(vals))
    return out


def _fails_somewhere(model: Model, p: Any, cpus: tuple, samples: list[tuple]) -> bool:
    for st in samples:
        try:
            r = p.cpu_fn(st, cpus[0]) if (p.role and p.cpu_fn is not None) else p.fn(st)
        except Exception:  # a sample the spec's code cannot read (an id out of range): no evidence
            continue
        if r is False:
            return True
    return False


def _judge(model: Model, p: Any, s: tuple, domains: list[Any], samples: list[tuple]) -> str | None:
    """``"no state"``, ``"domains"`` (vacuous here, and how) or None (it can fail here, or cannot be judged)."""
    import z3

    from checker.symbolic.term import Sym

    cpus = tuple(model.roles[p.role]) if p.role else ()
    if p.role and not cpus:
        return None
    try:
        r = p.cpu_fn(s, cpus[0]) if (p.role and p.cpu_fn is not None) else p.fn(s)
    except Exception:  # lint reports spec code that fails on symbols; here it is simply not judged
        return None
    if isinstance(r, bool):
        return "no state" if r else None
    if _fails_somewhere(model, p, cpus, samples):
        return None
    term = r.z if isinstance(r, Sym) else r
    if not isinstance(term, z3.BoolRef):
        return None
    solver = z3.Solver()
    solver.set("timeout", QUERY_TIMEOUT_MS)
    solver.add(*domains, z3.Not(term))
    return "domains" if solver.check() == z3.unsat else None


def vacuous_invariants(cls: type, points: list[Any]) -> list[str]:
    """A warning per declared invariant of ``cls`` that cannot fail at any of ``points`` where it
    applies, naming its file and line. Most invariants are cleared at the first point."""
    from checker.language.lint import symbolic_state
    from checker.language.model import info

    pending = {n for n, p in info(cls).properties.items() if p.kind == "invariant" and p.expect == "holds"}
    how: dict[str, str] = {}
    for params in points:
        if not pending:
            break
        model = Model(cls, params)
        here = [p for p in model.properties if p.name in pending]
        if not here:
            continue
        s = symbolic_state(model, "'v")
        domains = _domains(model, s)
        samples = _samples(model)
        for p in here:
            verdict = _judge(model, p, s, domains, samples)
            if verdict is None:
                pending.discard(p.name)
                how.pop(p.name, None)
            else:
                how[p.name] = verdict if how.get(p.name) in (None, verdict) else "domains"
    out = []
    for name, verdict in how.items():
        if name not in pending:
            continue
        p = info(cls).properties[name]
        where = f"{p.file}:{p.line}: " if p.file and p.line else ""
        what = ("reads no state variable: it holds in every state" if verdict == "no state" else
                "holds in every state its variables' declared domains allow (Z3 proves it)")
        out.append(f"{where}{cls.spec_name}.{name} {what}, so it checks nothing about the spec's steps")
    return out
