# SPDX-License-Identifier: GPL-2.0-only
"""A spec class body that refuses to rebind a declared name.

Python keeps the last ``def`` of a name in a class body: a violated
``@invariant nothing_lost`` followed by a second ``@invariant nothing_lost``
that holds is checked as the second alone, and verifies as "holds". The
spec metaclass gives the body a namespace that records every rebinding of a
name bound to an action, a property, a witness, the terminal predicate or a
declaration (``Param``, ``Shared``, ...), and the class is refused when it is
created, naming both lines. Redefining a base spec's name in a subclass is
overriding, and stays allowed.
"""
from __future__ import annotations

import sys
from typing import Any

from checker.errors import SpecError, source_of
from checker.language.declare import Declaration

#: What a decorator of checker.language.declare records on a function.
_MARKS = ("__countercheck_action__", "__countercheck_property__", "__countercheck_witness__",
          "__countercheck_terminal__")


def _declared(value: Any) -> str | None:
    """What ``value`` declares in a spec class body, or None for anything else."""
    fn = value.__func__ if isinstance(value, (staticmethod, classmethod)) else value
    for mark in _MARKS:
        if callable(fn) and hasattr(fn, mark):
            meta = getattr(fn, mark)
            return "@" + (meta["kind"] if isinstance(meta, dict) and "kind" in meta else mark.split("_")[-3])
    if isinstance(value, Declaration):
        return type(value).__name__
    return None


def _line(value: Any, fallback: int | None) -> int | None:
    fn = value.__func__ if isinstance(value, (staticmethod, classmethod)) else value
    if callable(fn):
        line = source_of(fn)[1]
        if line is not None:
            return line
    return fallback


class SpecNamespace(dict):
    """A class body's namespace that notes each declared name bound twice: (name, first line, second line)."""

    def __init__(self) -> None:
        super().__init__()
        self.rebound: list[tuple[str, str, int | None, int | None]] = []
        self._lines: dict[str, int | None] = {}

    def __setitem__(self, key: str, value: Any) -> None:
        caller = sys._getframe(1)
        line = caller.f_lineno if caller.f_code.co_name != "__prepare__" else None
        if key in self and self[key] is not value:
            old = dict.__getitem__(self, key)
            what = _declared(old)
            if what is not None:
                self.rebound.append((key, what, self._lines.get(key), _line(value, line)))
        self._lines[key] = _line(value, line)
        super().__setitem__(key, value)


class SpecMeta(type):
    """The spec classes' metaclass: only its class body namespace differs from ``type``'s."""

    @classmethod
    def __prepare__(mcs, cls_name: str, bases: tuple[type, ...], /, **kw: Any) -> SpecNamespace:
        return SpecNamespace()

    def __new__(mcs, cls_name: str, bases: tuple[type, ...], ns: dict[str, Any], /, **kw: Any) -> type:
        rebound = getattr(ns, "rebound", ())
        if rebound:
            key, what, first, second = rebound[0]
            file = ns.get("__module__") and sys.modules.get(ns["__module__"])
            path = getattr(file, "__file__", None)
            at = f"line {first}" if first else "an earlier line"
            raise SpecError(f"{cls_name}: {key} is defined twice in the class body ({what} at {at}, again at line "
                            f"{second}); Python would keep only the last, and the first would never be checked. "
                            f"Rename one of them", file=path, line=second)
        return super().__new__(mcs, cls_name, bases, dict(ns), **kw)
