# SPDX-License-Identifier: GPL-2.0-only
"""Which of a bug spec's overrides ran: a bug planted where no step reaches it is no bug found.

A bug spec replaces a method of a correct spec (an action, or a helper the
actions call as ``s.spec.helper(s, ...)``). If the replaced code never runs
(a helper of the base called as ``Base.helper(s, ...)`` bypasses the
override), the bug spec explores exactly the base spec's states and reports
only "bug not found". Each override is wrapped when the class is created;
while the explorer runs, a wrapper notes that its method ran: an action
when it returned an enabled step, a helper when it was called. What never
ran is reported as a warning naming the methods.
"""
from __future__ import annotations

import functools
from contextlib import contextmanager
from typing import Any, Callable, Iterator

#: While a bug spec is explored: (class name, method) of the overrides that ran.
_RAN: set[tuple[str, str]] | None = None


def _wrap(owner: str, name: str, fn: Callable, action: bool) -> Callable:
    if action:
        @functools.wraps(fn)
        def step(*args: Any, **kw: Any) -> Any:
            r = fn(*args, **kw)
            if _RAN is not None:
                g = getattr(r, "guard", False)
                if isinstance(g, int) and g:  # a concrete guard that holds (not a term while linting)
                    _RAN.add((owner, name))
            return r
        return step

    @functools.wraps(fn)
    def helper(*args: Any, **kw: Any) -> Any:
        if _RAN is not None:
            _RAN.add((owner, name))
        return fn(*args, **kw)
    return helper


def instrument(cls: type, base: type) -> tuple[str, ...]:
    """Wrap each method ``cls`` defines that replaces one of a base spec's (not properties and the
    terminal predicate, which every state evaluates); the names wrapped, in definition order."""
    out = []
    for name, val in list(cls.__dict__.items()):
        if name.startswith("__") or not any(name in b.__dict__ for b in cls.__mro__[1:] if issubclass(b, base)
                                            and b is not base):
            continue
        fn, kind = (val.__func__, type(val)) if isinstance(val, (staticmethod, classmethod)) else (val, None)
        if not callable(fn) or isinstance(fn, type):
            continue
        # (a process function is lowered to steps when the class is made: it is never called as itself)
        if hasattr(fn, "__countercheck_property__") or hasattr(fn, "__countercheck_terminal__") \
                or hasattr(fn, "__countercheck_witness__") or hasattr(fn, "__countercheck_process__"):
            continue
        w = _wrap(cls.__name__, name, fn, hasattr(fn, "__countercheck_action__"))
        setattr(cls, name, kind(w) if kind else w)
        out.append(name)
    return tuple(out)


@contextmanager
def watching() -> Iterator[set[tuple[str, str]]]:
    """The overrides that run inside the block (the explorer in this process)."""
    global _RAN
    outer, _RAN = _RAN, set()
    try:
        yield _RAN
    finally:
        _RAN = outer


def never_ran(cls: type, ran: set[tuple[str, str]]) -> list[str]:
    """The overriding methods of a bug spec that never ran while it was explored."""
    return [n for n in getattr(cls, "__countercheck_overrides__", ()) if (cls.__name__, n) not in ran]


def warning(cls: type, names: list[str], where: str) -> str:
    """The warning for overrides that never ran: the planted bug is not in the states checked."""
    base = next((b.__name__ for b in cls.__mro__[1:] if any(n in b.__dict__ for n in names)), "the base")
    return (f"{cls.spec_name}: {cls.__name__} overrides {', '.join(names)}, but "
            f"{'it' if len(names) == 1 else 'they'} never ran while it was explored ({where}): the bug it plants "
            f"is not in the states checked. An action that never returns an enabled step, or a helper called "
            f"as {base}.{names[0]}(s, ...), bypasses the override; call a helper as s.spec.{names[0]}(s, ...)")


def removed_steps(model: Any, names: tuple[str, ...]) -> list[str]:
    """Overriding actions that remove the step (``return when(False)``: the bug is a missing call):
    they never run by design, so they are not reported."""
    from checker.language.declare import DISABLED
    from checker.language.lint import symbolic_state

    out = []
    s = None
    for act in model.spec_actions:
        if act.info.name not in names:
            continue
        s = s if s is not None else symbolic_state(model)
        cpu, args = act.cpus[0], act.choices[0]
        try:
            r = act.info.fn(s, cpu, *args) if cpu is not None else act.info.fn(s, *args)
        except Exception:
            continue
        if r is DISABLED:
            out.append(act.info.name)
    return out
