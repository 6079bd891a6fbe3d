# SPDX-License-Identifier: GPL-2.0-only
"""Load-time checks that need the spec's code to run: symbolic evaluation.

Every action (each CPU, each choice), property and the terminal predicate
is run once on a state of Z3 symbols. Code that branches with Python
``if``/``and``/``or``/``not`` on a state value, calls ``max``/``min``/``all``
on state values, or indexes a tuple with one, is rejected here with the
line and what to write instead: on plain ints it would run, and under Z3 it
would either raise or, worse, silently decide ``bool(x == 0)`` as False.
The same run catches a state changed in place, a per-CPU slot read outside
0..ncpus-1 (Python would wrap ``s.local[cpu - 1]`` around silently), and an
action that can always run and moves a counter one way (a forgotten guard:
the state space would be infinite and the explorer would never stop).
"""
from __future__ import annotations

import linecache
import re
from typing import TYPE_CHECKING, Any, Callable

from checker.cint import TRUEDIV, WordRuleError
from checker.errors import SpecError, innermost_frame_in
from checker.language.declare import Fill, StateMutated, Step
from checker.symbolic.term import Sym

if TYPE_CHECKING:  # annotations only: the model is built from the declarations this module checks
    from checker.language.compile import Model

_checked: set[tuple[type, Any]] = set()


class SlotOutOfRange(Exception):
    """A per-CPU variable or array read at an index outside it."""

    def __init__(self, var: str, index: int, size: int):
        super().__init__(var, index, size)
        self.var, self.index, self.size = var, index, size


class _Slots(tuple):
    """A per-CPU variable's slots in the lint state: a read out of range is an error, not a wrap."""

    var = ""

    def __getitem__(self, i: Any) -> Any:
        if i.__class__ is int and not 0 <= i < len(self):
            raise SlotOutOfRange(self.var, i, len(self))
        return tuple.__getitem__(self, i)

    def __setitem__(self, i: Any, value: Any) -> None:
        raise StateMutated(f"{self.var}[...]")


def _slots(var: str, values: Any) -> tuple:
    t = _Slots(values)
    t.var = var  # a tuple subclass without __slots__ has an instance dict
    return t


def symbolic_state(model: Model, tag: str = "", checked: bool = False) -> tuple:
    """A state whose every slot is a fresh Z3 integer symbol (per-CPU: one per CPU).

    ``checked``: per-CPU reads outside the variable raise ``SlotOutOfRange``."""
    import z3

    from checker.symbolic.term import Sym

    vals = []
    for n in model.var_names:
        t = model.vars[n].type
        if n in model.tupled:
            size = model.arrays.get(n, model.ncpus_total)
            slots = tuple(Sym(z3.Int(f"{n}[{c}]{tag}"), t) for c in range(size))
            vals.append(_slots(n, slots) if checked else slots)
        else:
            vals.append(Sym(z3.Int(f"{n}{tag}"), t))
    return model.state_cls(vals)


def lint(model: Model) -> None:
    """Raise SpecError for spec code that only works on concrete values."""
    key = (model.cls, model.params)
    if key in _checked or _passed_before(model):
        return
    from checker.symbolic.term import SymbolicBranch, SymbolicIndex

    s = symbolic_state(model, checked=True)
    name = model.cls.__name__
    for act in model.spec_actions:  # the spec's own steps, not those the engine derives (32-bit halves)
        if act.info.builtin:  # the scheduler's steps: the kernel's code, written for concrete states
            continue
        for cpu in act.cpus:
            for args in act.choices:
                what = f"{name}.{act.info.name}"
                r = _run(model, what, lambda act=act, cpu=cpu, args=args: act.info.fn(s, cpu, *args) if cpu is not None
                         else act.info.fn(s, *args),
                         SymbolicBranch, SymbolicIndex, act.info.file, act.info.line)
                if not isinstance(r, Step):
                    raise model._bad_return(act, r)
                if r.guard is True:
                    _always_enabled(model, what, act, s, cpu, r)
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
        if p.name == "no_overflow" or getattr(p.fn, "__countercheck_engine__", False):
            continue  # the engine's own properties (checker.ordering): they read its hidden state concretely
        r = _run(model, f"{name}.{p.name}", lambda p=p: p.fn(s), SymbolicBranch, SymbolicIndex, p.file, p.line)
        _truth_value(f"{name}.{p.name}", r, p)
    t = symbolic_state(model, "'")
    for p in model.liveness:  # a pair for leads_to; a goal may be a step predicate (s, t)
        r = _run(model, f"{name}.{p.name}", lambda p=p: p.fn(s), SymbolicBranch, SymbolicIndex, p.file, p.line)
        if p.kind == "leads_to" and not (isinstance(r, tuple) and len(r) == 2):
            raise SpecError(f"{name}.{p.name} is a @leads_to property and returned {r!r}; it returns the pair "
                            f"(P, Q), e.g.\n    return s.pc[0] == PC.wait, s.pc[0] == PC.held",
                            file=p.file, line=p.line)
        goal = r[1] if p.kind == "leads_to" else r
        if callable(goal):
            _run(model, f"{name}.{p.name}", lambda goal=goal: goal(s, t), SymbolicBranch, SymbolicIndex, p.file, p.line)
    if model.terminal is not None:
        _run(model, f"{name}.{model.terminal.__name__}", lambda: model.terminal(s), SymbolicBranch,
             SymbolicIndex, model.info.file, model.info.line)
    _checked.add(key)
    _remember_pass(model)


#: Lint passes kept between runs (``$XDG_CACHE_HOME/countercheck/lint``): a marker per point, bound to the
#: spec's code and the checker's (``persist.point_digest``), so a warm ``verify`` does not run every action
#: symbolically again. Only passes are kept: a spec error is found again each run. Off with
#: ``COUNTERCHECK_POINT_INDEX=off``, as the compiled engine's point index.
LINT_KIND = "lint-pass-1"


def _marker(model: Model) -> tuple[Any, str] | None:
    import os

    import checker.persist as persist

    if os.environ.get("COUNTERCHECK_POINT_INDEX", "").strip().lower() in ("off", "0", "no", "false"):
        return None
    try:
        key = persist.point_digest(LINT_KIND, model.cls, model.params)
        return persist.user_cache("lint") / key, key
    except (OSError, ValueError, TypeError, persist.Refused):
        return None


def _passed_before(model: Model) -> bool:
    import checker.persist as persist

    m = _marker(model)
    if m is None:
        return False
    try:
        return persist.read_data(m[0], LINT_KIND, m[1]) == "passed"
    except (OSError, ValueError, persist.Refused):
        return False


def _remember_pass(model: Model) -> None:
    import checker.persist as persist

    m = _marker(model)
    if m is not None:
        try:
            persist.write_data(m[0], LINT_KIND, m[1], "passed")
        except (OSError, ValueError, TypeError):
            pass


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
            + _instead(code) +
            "Put the condition in the result instead, e.g.\n"
            "    return when(abs(c) < s.batch, local={cpu: c})\n"
            "and use If(cond, a, b), And(...), Or(...), Not(...), Max(...), Min(...), AllOf(...), "
            "AnyOf(...) from checker in place of Python's if/and/or/not/max/min/all/any.",
            file=f or file, line=ln or line) from None
    except StateMutated as e:
        f, ln = innermost_frame_in(e.__traceback__, model.spec_files)
        code = linecache.getline(f, ln).strip() if f and ln else ""
        var = e.args[0].split("[")[0]
        example = (f"{var}={{cpu: s.{var}[cpu] + 1}}" if var in model.tupled else f"{var}=s.{var} + 1")
        raise SpecError(
            f"{what} changes the state in place" + (f": `{code}`" if code else f" ({e.args[0]})") + ".\n"
            "A state is an immutable value that every CPU's next step starts from; an action only says "
            "what changes. Return the new values instead, e.g.\n"
            f"    return when(guard, {example})", file=f or file, line=ln or line) from None
    except SlotOutOfRange as e:
        f, ln = innermost_frame_in(e.__traceback__, model.spec_files)
        code = linecache.getline(f, ln).strip() if f and ln else ""
        kind = "indexes" if e.var in model.arrays else "CPU ids"
        raise SpecError(
            f"{what} reads {e.var}[{e.index}]" + (f": `{code}`" if code else "") + f", but {kind} at "
            f"{model.params} are 0..{e.size - 1}"
            + (" (Python would silently read the last one)" if e.index < 0 else "") + ".\n"
            f"Index {e.var} with a CPU of its role (the action's `cpu`, or `for c in s.cpus`); for a "
            f"neighbour that may not exist write Select(s.{e.var}, cpu - 1), which gives 0 outside the range.",
            file=f or file, line=ln or line) from None
    except index as e:
        f, ln = innermost_frame_in(e.__traceback__, model.spec_files)
        code = linecache.getline(f, ln).strip() if f and ln else ""
        raise SpecError(
            f"{what} indexes a tuple with a state value" + (f": `{code}`" if code else "") + ".\n"
            "Under the Z3 backend that index is symbolic; write Select(s.local, s.owner) instead "
            "of s.local[s.owner].", file=f or file, line=ln or line) from None
    except WordRuleError as e:
        f, ln = innermost_frame_in(e.__traceback__, model.spec_files)
        code = linecache.getline(f, ln).strip() if f and ln else ""
        raise SpecError(f"{what}" + (f": `{code}`" if code else "") + f": {e}", file=f or file,
                        line=ln or line) from None
    except (SpecError, MemoryError):  # out of memory is a limit the command line reports, not a spec error
        raise
    except Exception as e:
        f, ln = innermost_frame_in(e.__traceback__, model.spec_files)
        if isinstance(e, TypeError) and "for /:" in str(e):
            code = linecache.getline(f, ln).strip() if f and ln else ""
            raise SpecError(f"{what}" + (f": `{code}`" if code else "") + f": {TRUEDIV}", file=f or file,
                            line=ln or line) from None
        raise SpecError(f"{what} raised {type(e).__name__}: {e} when run on symbolic values "
                        f"with {model.params}",
                        file=f or file, line=ln or line) from None


def _truth_value(what: str, r: Any, p: Any) -> None:
    """A property's result must be a truth value: ``None`` (a forgotten ``return``) would read as
    violated, and ``"yes"`` or a number as holds."""
    import z3

    if isinstance(r, bool) or (isinstance(r, Sym) and z3.is_bool(r.z)) or isinstance(r, z3.BoolRef):
        return
    if r is None:
        got = "None (a forgotten `return`?)"
    elif isinstance(r, Sym):
        got = "a number, not a comparison"
    else:
        got = f"{type(r).__name__} {r!r}"
    raise SpecError(f"{what} returned {got}; a property returns a truth value, e.g.\n"
                    f"    return s.count <= s.limit", file=p.file, line=p.line)


#: Python forms that ask bool() of a value, and what to write instead.
_FORMS = ((re.compile(r"^\s*(if|elif|while)\b"), "`if cond:` -> when(And(guard, cond), ...) or If(cond, a, b)"),
          (re.compile(r"\bif\b.*\belse\b"), "`a if cond else b` -> If(cond, a, b)"),
          (re.compile(r"\band\b"), "`a and b` -> And(a, b)"),
          (re.compile(r"\bor\b"), "`a or b` -> Or(a, b)"),
          (re.compile(r"\bnot\b"), "`not a` -> Not(a)"),
          (re.compile(r"\b(max|min)\("), "`max(a, b)` / `min(a, b)` -> Max(a, b) / Min(a, b)"),
          (re.compile(r"\b(all|any)\("), "`all(...)` / `any(...)` -> AllOf([...]) / AnyOf([...])"))


def _instead(code: str) -> str:
    """Write instead: a line per Python form found in the offending line."""
    found = [hint for rx, hint in _FORMS if rx.search(code)]
    return "Write instead: " + "; ".join(found) + ".\n" if found else ""


def _always_enabled(model: Model, what: str, act: Any, s: tuple, cpu: Any, r: Step) -> None:
    """An action whose guard is True that moves an unbounded counter by a constant
    can run forever: the state space is infinite. Almost always a forgotten guard."""
    import z3

    for var, val in r.updates.items():
        if var in model._wrap or var in model._domains or var not in model.index:
            continue  # a wrapping word comes back around; a typed one is caught at its first bad value
        old = s[model.index[var]]
        pairs = []
        if var in model.tupled:
            if isinstance(val, dict):
                pairs = [(f"{var}[{'cpu' if c == cpu else c}]", old[c], v) for c, v in val.items()
                         if c.__class__ is int and 0 <= c < len(old)]
        else:
            pairs = [(var, old, val)]
        for shown, before, after in pairs:
            if not (isinstance(before, Sym) and isinstance(after, Sym)) or z3.is_bool(after.z):
                continue
            delta = z3.simplify(after.z - before.z)
            if z3.is_int_value(delta) and delta.as_long() != 0:
                d = delta.as_long()
                ref = f"s.{shown}"
                new = f"{ref} {'+' if d > 0 else '-'} {abs(d)}"
                update = (f"{var}={{{shown[len(var) + 1:-1]}: {new}}}" if var in model.tupled else f"{var}={new}")
                cond = f"{ref} > 0" if d < 0 else f"{ref} < s.LIMIT"
                raise SpecError(
                    f"{what} can always run (its guard is True) and each step changes {shown} by {d:+d}, so "
                    f"the states never repeat and the explorer would never finish: a forgotten guard.\n"
                    f"Add the condition that stops it to when(...), e.g.\n"
                    f"    return when({cond}, {update})" + ("" if d < 0 else "\nwith LIMIT a parameter of the spec."),
                    file=act.info.file, line=act.info.line)
