# SPDX-License-Identifier: GPL-2.0-only
"""Data races under lkmm (herd7's ``Flag data-race``), found as the accesses run.

A message (a store kept in a location's history) carries its writer and
its marking: ``MARKED`` (READ_ONCE/WRITE_ONCE, release/acquire, atomics, a
step without ``access=``), ``PLAIN`` or ``RACE_OK`` (``data_race()``,
``race_ok=True``). An access of CPU ``c`` to a location races with a store
of another CPU that ``c``'s view has not reached (the store is not ordered
before the access by the model's happens-before: a release/acquire pair, a
fence pair, a lock, a full fence), when at least one of the two is plain
and neither is race_ok. A race found where the store comes first in the
interleaving covers the other order too: the explorer runs both.
"""
from __future__ import annotations

from typing import Any

MARKED, PLAIN, RACE_OK = 0, 1, 2


def marking(access: Any) -> int:
    """How an access is marked for the data-race check: plain, marked, or ``data_race()``."""
    if access.race_ok:
        return RACE_OK
    return PLAIN if access.plain else MARKED


def racing_writer(history: tuple, seen: int, cpu: int, mark: int) -> int | None:
    """The writer of the first store after index ``seen`` that an access of marking ``mark`` by ``cpu``
    races with, or None."""
    if mark == RACE_OK:
        return None
    for msg in history[seen + 1:]:
        w, m = msg[2], msg[3]
        if w < 0 or w == cpu or m == RACE_OK:
            continue
        if mark == PLAIN or m == PLAIN:
            return w
    return None


def code(loc: int, cpu: int, writer: int, store: bool, ncpus: int) -> int:
    """The ``data_race`` ghost's value for a race (0 is none)."""
    return 1 + (((loc * ncpus + cpu) * ncpus + writer) * 2 + int(store))


def describe(v: int, names: tuple[str, ...], ncpus: int) -> str:
    """A data race ghost's value as text: which CPUs raced on which location."""
    if not v:
        return "none"
    v -= 1
    store, v = v % 2, v // 2
    writer, v = v % ncpus, v // ncpus
    cpu, loc = v % ncpus, v // ncpus
    what = "store to" if store else "load of"
    name = names[loc] if loc < len(names) else f"location {loc}"
    return f"cpu{cpu}'s {what} {name} races with cpu{writer}'s store"
