# SPDX-License-Identifier: GPL-2.0-only
"""One kernel word held as several spec variables: a weak-memory location that spans them.

A spec sometimes keeps one kernel word as fields of its own: ``percpu_lazy``'s
``c->v`` (an ``atomic64_t``) is ``word`` (the atomic-mode value), ``published``
(whose allocation the per-CPU pointer names) and ``published_irq``. Under
``--memory tso|lkmm`` those fields must be one location: a store to the word
writes every field at once, and a load reads every field from the same store
(message), never ``word`` from one store and ``published`` from another. The
spec says so with a class attribute, and its ``access=`` names the word::

    c_v = OneWord("word", "published", "published_irq", doc="c->v, one atomic64_t")

    @action(role="adders", access=Load("c_v", "once"))         # atomic64_read(&c->v)
    @action(role="adders", access=Rmw("c_v", "mb"))            # atomic64_cmpxchg(&c->v, ...)

The models see one location ``c_v`` whose value packs the fields into one
integer (mixed radix, the first field most significant; every later field
needs a bounded type at the point: a ``CpuId``, a ``Bool``, an ``Enum`` or a
fixed-width word). The packing is arithmetic on expressions (``*``, ``+``,
``//``, ``%``), so the compiled explorer lowers it as it lowers the spec's
own steps. A step that updates some of the fields stores the word with the
others as the step read them (the kernel writes the whole word). Under
``sc`` a ``OneWord`` changes nothing.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from checker.errors import SpecError
from checker.expr import If
from checker.kernel.tasks import TaskId, task_roles
from checker.types import BoolType, CpuIdType, Enum, NOBODY


class OneWord:
    """Spec variables that are one kernel word (one location for the memory models): ``fields`` in order,
    each a ``Shared`` scalar. ``access=`` names the word by the attribute's name."""

    def __init__(self, *fields: str, doc: str = ""):
        if len(fields) < 2 or not all(isinstance(f, str) and f.isidentifier() for f in fields):
            raise SpecError(f"OneWord{fields!r}: name two or more variables, as strings, e.g. "
                            f"OneWord(\"word\", \"published\")")
        if len(set(fields)) != len(fields):
            raise SpecError(f"OneWord{fields!r}: a variable is named twice")
        self.fields = tuple(fields)
        self.doc = doc
        self.name: str | None = None

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"OneWord({', '.join(repr(f) for f in self.fields)})"


def declared(cls: type) -> dict[str, OneWord]:
    """The spec class's ``OneWord`` attributes (bases first), by name."""
    out: dict[str, OneWord] = {}
    for base in reversed(cls.__mro__):
        for attr, val in base.__dict__.items():
            if isinstance(val, OneWord):
                out[attr] = val
    return out


def check(si: Any, cls: type, words: dict[str, OneWord]) -> None:
    """Each word's fields are distinct shared scalar variables, in one word only, and no variable's name."""
    owner: dict[str, str] = {}
    for name, w in words.items():
        where = f"{cls.__name__}.{name}"
        if name in si.vars:
            raise SpecError(f"{where}: a OneWord's name is the location's, not a variable's; rename one",
                            file=si.file, line=si.line)
        for f in w.fields:
            v = si.vars.get(f)
            if v is None:
                raise SpecError(f"{where}: {f!r} is not a variable; the variables are: {', '.join(si.vars)}",
                                file=si.file, line=si.line)
            if v.kind != "shared":
                raise SpecError(f"{where}: {f} is a {v.kind} variable; a OneWord's fields are Shared scalars "
                                f"(one word)", file=si.file, line=si.line)
            if f in owner:
                raise SpecError(f"{where}: {f} is already a field of {owner[f]}", file=si.file, line=si.line)
            owner[f] = name


@dataclass(frozen=True)
class Packing:
    """A word's fields at one point: value = sum of code(field) * weight, the first field's code itself. A later
    field's code is ``field - lo``, or, for ids that are NOBODY or ``first..`` (a task id: tasks are numbered after
    the CPUs), 0 for NOBODY and ``field - first + 1`` otherwise, so the word stays within 64 bits."""

    name: str
    fields: tuple[str, ...]
    lo: tuple[int, ...]
    radix: tuple[int, ...]  # the count of values each later field takes (the first's is unbounded)
    first: tuple[int | None, ...] = ()  # per field: the first id of a NOBODY-or-ids field, else None

    def _first(self, i: int) -> int | None:
        return self.first[i] if i < len(self.first) else None

    def pack(self, values: list[Any]) -> Any:
        """The word's value from its fields' (ints or terms)."""
        out = values[0]
        for i, (x, lo, r) in enumerate(zip(values[1:], self.lo[1:], self.radix[1:]), 1):
            f = self._first(i)
            out = out * r + (x - lo if f is None else If(x == NOBODY, 0, x - f + 1))
        return out

    def unpack(self, v: Any) -> list[Any]:
        """The fields' values from the word's (floor division: Python's, and the compiled explorer's)."""
        out = []
        for i in reversed(range(1, len(self.fields))):
            lo, r, f = self.lo[i], self.radix[i], self._first(i)
            y = v % r
            out.append(y + lo if f is None else If(y == 0, NOBODY, y + f - 1))
            v = v // r
        out.append(v)
        return list(reversed(out))

    def show(self, v: int) -> str:
        return "(" + ", ".join(f"{f}={x}" for f, x in zip(self.fields, self.unpack(v))) + ")"


def _range(model: Any, field: str) -> tuple[int, int, int | None]:
    """(lowest value, count of values, first id or None) of a field's type at the point."""
    t = getattr(model.info.vars[field], "type", None)
    if isinstance(t, CpuIdType):
        ids = _task_ids(model) if isinstance(t, type(TaskId)) else None
        if ids:
            return NOBODY, len(ids) + 1, ids[0]
        return NOBODY, model.ncpus_total + 1, None
    if isinstance(t, BoolType):
        return 0, 2, None
    if isinstance(t, Enum):
        return 0, len(t.names), None
    if t is not None and t.bits is not None and t.bits <= 16:
        return t.lo, t.hi - t.lo + 1, None
    raise SpecError(f"{model.cls.__name__}: {field}, a later field of a OneWord, needs a bounded type (a CpuId, "
                    f"a Bool, an Enum or a word of at most 16 bits) to share the location; put an unbounded one "
                    f"first", file=model.info.file, line=model.info.line)


def _task_ids(model: Any) -> list[int] | None:
    """The ids of the point's tasks, if they are one run of numbers (a task id holds one of them or NOBODY)."""
    ids = sorted(i for r in task_roles(model.info) for i in model.roles.get(r, ()))
    return ids if ids and ids == list(range(ids[0], ids[0] + len(ids))) else None


def packings(model: Any) -> dict[str, Packing]:
    """The spec's words at the point, by name (empty for a spec without ``OneWord``)."""
    out = {}
    for name, w in getattr(model.info, "words", {}).items():
        rs = [(0, 0, None)] + [_range(model, f) for f in w.fields[1:]]
        out[name] = Packing(name, w.fields, tuple(lo for lo, _, _ in rs), tuple(r for _, r, _ in rs),
                            tuple(f for _, _, f in rs))
    return out
