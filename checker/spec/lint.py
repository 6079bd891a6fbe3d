"""Load-time checks that need the spec's code to run: symbolic evaluation.

Every action (each CPU, each choice), property and the terminal predicate
is run once on a state of Z3 symbols. Code that branches with Python
``if``/``and``/``or``/``not`` on a state value, calls ``max``/``min``/``all``
on state values, or indexes a tuple with one, is rejected here with the
line and what to write instead: on plain ints it would run, and under Z3 it
would either raise or, worse, silently decide ``bool(x == 0)`` as False.
"""
from __future__ import annotations

import linecache
from typing import Any, Callable

from checker.errors import SpecError, innermost_frame_in
from checker.spec.compile import Model
from checker.spec.declare import Fill, Step
from checker.symbolic.term import Sym

_checked: set[tuple[type, Any]] = set()


def symbolic_state(model: Model, tag: str = "") -> tuple:
    """A state whose every slot is a fresh Z3 integer symbol (per-CPU: one per CPU)."""
    import z3

    from checker.symbolic.term import Sym

    vals = []
    for n in model.var_names:
        t = model.vars[n].type
        if n in model.tupled:
            size = model.arrays.get(n, model.ncpus_total)
            vals.append(tuple(Sym(z3.Int(f"{n}[{c}]{tag}"), t) for c in range(size)))
        else:
            vals.append(Sym(z3.Int(f"{n}{tag}"), t))
    return model.state_cls(vals)


def lint(model: Model) -> None:
    """Raise SpecError for spec code that only works on concrete values."""
    key = (model.cls, model.params)
    if key in _checked:
        return
    from checker.symbolic.term import SymbolicBranch, SymbolicIndex

    s = symbolic_state(model)
    name = model.cls.__name__
    for act in model.actions:
        for cpu in act.cpus:
            for args in act.choices:
                what = f"{name}.{act.info.name}"
                r = _run(model, what, lambda: act.info.fn(s, cpu, *args) if cpu is not None else act.info.fn(s, *args),
                         SymbolicBranch, SymbolicIndex, act.info.file, act.info.line)
                if not isinstance(r, Step):
                    raise model._bad_return(act, r)
                for var, val in r.updates.items():
                    if var not in model.index:
                        raise model._unknown_var(var, act)
                    if var in model.tupled:
                        if isinstance(val, Fill):
                            continue
                        if not isinstance(val, dict):
                            raise model._percpu_not_dict(var, val, act)
                        for c in val:
                            if isinstance(c, Sym):
                                continue  # a CPU computed from the state: the explorer checks its range
                            if not isinstance(c, int) or not 0 <= c < model.arrays.get(var, model.ncpus_total):
                                raise model._bad_cpu(var, c, act)
                    elif isinstance(val, dict):
                        raise SpecError(f"{what} sets the shared variable {var!r} with a mapping {val!r}; "
                                        f"only per-CPU variables are updated per CPU",
                                        file=act.info.file, line=act.info.line)
    for p in model.properties:
        if p.name == "no_overflow":
            continue
        _run(model, f"{name}.{p.name}", lambda: p.fn(s), SymbolicBranch, SymbolicIndex, p.file, p.line)
    t = symbolic_state(model, "'")
    for p in model.liveness:  # a pair for leads_to; a goal may be a step predicate (s, t)
        r = _run(model, f"{name}.{p.name}", lambda: p.fn(s), SymbolicBranch, SymbolicIndex, p.file, p.line)
        if p.kind == "leads_to" and not (isinstance(r, tuple) and len(r) == 2):
            raise SpecError(f"{name}.{p.name} is a @leads_to property and returned {r!r}; it returns the pair "
                            f"(P, Q), e.g.\n    return s.pc[0] == PC.wait, s.pc[0] == PC.held",
                            file=p.file, line=p.line)
        goal = r[1] if p.kind == "leads_to" else r
        if callable(goal):
            _run(model, f"{name}.{p.name}", lambda: goal(s, t), SymbolicBranch, SymbolicIndex, p.file, p.line)
    if model.terminal is not None:
        _run(model, f"{name}.{model.terminal.__name__}", lambda: model.terminal(s), SymbolicBranch,
             SymbolicIndex, model.info.file, model.info.line)
    _checked.add(key)


def _run(model: Model, what: str, call: Callable[[], Any], branch: type, index: type,
         file: str | None, line: int | None) -> Any:
    try:
        return call()
    except branch as e:
        f, ln = innermost_frame_in(e.__traceback__, model.spec_files)
        code = linecache.getline(f, ln).strip() if f and ln else ""
        raise SpecError(
            f"{what} asks Python for the truth of a state value"
            + (f": `{code}`" if code else "") + ".\n"
            "Under the Z3 backend that value is symbolic, so the branch cannot be decided "
            "(and z3 would silently answer False for `==`).\n"
            "Put the condition in the result instead, e.g.\n"
            "    return when(abs(c) < s.batch, local={cpu: c})\n"
            "and use If(cond, a, b), And(...), Or(...), Not(...), Max(...), Min(...), AllOf(...), "
            "AnyOf(...) from checker in place of Python's if/and/or/not/max/min/all/any.",
            file=f or file, line=ln or line) from None
    except index as e:
        f, ln = innermost_frame_in(e.__traceback__, model.spec_files)
        code = linecache.getline(f, ln).strip() if f and ln else ""
        raise SpecError(
            f"{what} indexes a tuple with a state value" + (f": `{code}`" if code else "") + ".\n"
            "Under the Z3 backend that index is symbolic; write Select(s.local, s.owner) instead "
            "of s.local[s.owner].", file=f or file, line=ln or line) from None
    except SpecError:
        raise
    except Exception as e:
        f, ln = innermost_frame_in(e.__traceback__, model.spec_files)
        raise SpecError(f"{what} raised {type(e).__name__}: {e} when run on symbolic values "
                        f"with {model.params}",
                        file=f or file, line=ln or line) from None
