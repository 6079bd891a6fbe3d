# SPDX-License-Identifier: GPL-2.0-only
"""Memory the checker understands: allocations with identities, and their misuse.

``Heap("mm", "pgd", "rss")`` declares allocation sites. Each becomes a state
variable (never allocated / live / freed) and a pointer to it is an int
(``NULL`` is 0, ``ptr(k, offset)`` points into site ``k``), so pointer
arithmetic such as ``&arr[i]`` is ordinary arithmetic. Actions call
``heap.alloc``, ``heap.free`` and ``heap.access``, which return updates;
misuse is recorded in a ghost error variable rather than raised, so the
explorer reports it with the shortest trace. Every spec with a heap gets two
properties: ``memory_safe`` (no double free, no free of a pointer the
allocator did not return, such as an interior pointer into a group, no use
after free, no access outside the object) and ``no_leak`` (when all work is
done, only the sites declared to survive are live).
"""
from __future__ import annotations

from typing import Any

from checker.expr import And, If, Implies, Or
from checker.language.declare import Declaration, Ghost, PropertyInfo, Shared
from checker.types import Enum

MEM = Enum("unalloc", "live", "freed", name="mem")
MEM_ERROR = Enum("none", "double_free", "invalid_free", "use_after_free", "out_of_bounds", name="mem_error")
NULL = 0
_STRIDE = 256  # offsets within one allocation stay below this


def ptr(site: Any, offset: Any = 0) -> Any:
    """A pointer ``offset`` elements into allocation site number ``site``."""
    return (site + 1) * _STRIDE + offset


class Heap(Declaration):
    """Allocation sites, their states, and the checks on their use.

    ``survive`` names sites that are live at the end by design (an object
    handed back to the caller).
    """

    def __init__(self, *sites: str, sizes: dict[str, int] | None = None, survive: tuple[str, ...] = ()):
        self.sites = tuple(sites)
        self.sizes = dict(sizes or {})
        self.survive = tuple(survive)

    # -- declarations the spec class collects ---------------------------------------
    def var_name(self, site: str) -> str:
        return f"{self.name}_{site}"

    @property
    def error_var(self) -> str:
        return f"{self.name}_error"

    def variables(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for site in self.sites:
            v = Shared(MEM.unalloc, type=MEM, doc=f"the allocation {site}")
            v.name = self.var_name(site)
            out[v.name] = v
        e = Ghost(MEM_ERROR.none, type=MEM_ERROR, doc="the first misuse of memory, if any")
        e.name = self.error_var
        out[e.name] = e
        return out

    def properties(self, terminal: Any, file: str | None, line: int | None) -> dict[str, PropertyInfo]:
        err = self.error_var
        live = [self.var_name(x) for x in self.sites if x not in self.survive]

        def memory_safe(s: Any) -> Any:
            return getattr(s, err) == MEM_ERROR.none

        def no_leak(s: Any) -> Any:
            return Implies(terminal(s), And(*[getattr(s, v) != MEM.live for v in live]))

        out = {"memory_safe": PropertyInfo("memory_safe", memory_safe, "invariant", "holds", None,
                                           "no double free, no free of a pointer the allocator did not return, "
                                           "no use after free, no access outside an object", file, line)}
        if live:  # where every site survives by design, no_leak could never fail: the spec says what a leak is
            out["no_leak"] = PropertyInfo("no_leak", no_leak, "invariant", "holds", None,
                                          "when all work is done, nothing is left allocated"
                                          + (f" but {', '.join(self.survive)}" if self.survive else ""), file, line)
        return out

    # -- helpers for actions --------------------------------------------------------------
    def index(self, site: str) -> int:
        return self.sites.index(site)

    def state(self, s: Any, p: Any) -> Any:
        """The state of the allocation ``p`` points into (unalloc for NULL or a wild pointer)."""
        k = p // _STRIDE - 1
        out: Any = MEM.unalloc
        for i, site in enumerate(self.sites):
            out = If(k == i, getattr(s, self.var_name(site)), out)
        return out

    def alloc(self, s: Any, site: str, ok: Any) -> tuple[dict[str, Any], Any]:
        """Allocate ``site`` if ``ok`` (else the allocator failed): updates and the pointer."""
        var = self.var_name(site)
        return {var: If(ok, MEM.live, getattr(s, var))}, If(ok, ptr(self.index(site)), NULL)

    def free(self, s: Any, p: Any) -> dict[str, Any]:
        """``free(p)``: freeing NULL is allowed, as in kfree / free_percpu."""
        k = p // _STRIDE - 1
        offset = p % _STRIDE
        state = self.state(s, p)
        ok = And(state == MEM.live, offset == 0)
        updates: dict[str, Any] = {}
        for i, site in enumerate(self.sites):
            var = self.var_name(site)
            updates[var] = If(And(p != NULL, k == i, ok), MEM.freed, getattr(s, var))
        # An interior pointer (or one into nothing ever allocated) was never
        # returned by the allocator, whatever the state of its object.
        error = If(p == NULL, MEM_ERROR.none,
                   If(Or(offset != 0, state == MEM.unalloc), MEM_ERROR.invalid_free,
                      If(state == MEM.freed, MEM_ERROR.double_free, MEM_ERROR.none)))
        updates[self.error_var] = self._first(s, error)
        return updates

    def access(self, s: Any, p: Any, index: Any = 0, size: Any = 1) -> dict[str, Any]:
        """A read or write of element ``index`` of an object of ``size`` elements at ``p``."""
        state = self.state(s, p)
        error = If(state != MEM.live, MEM_ERROR.use_after_free,
                   If(Or(index < 0, index >= size), MEM_ERROR.out_of_bounds, MEM_ERROR.none))
        return {self.error_var: self._first(s, error)}

    def accesses(self, s: Any, *pointers: Any) -> dict[str, Any]:
        """Accesses to element 0 of each pointer, in order: the first misuse is kept."""
        err = getattr(s, self.error_var)
        for p in pointers:
            state = self.state(s, p)
            err = If(err == MEM_ERROR.none, If(state != MEM.live, MEM_ERROR.use_after_free, MEM_ERROR.none), err)
        return {self.error_var: err}

    def _first(self, s: Any, error: Any) -> Any:
        current = getattr(s, self.error_var)
        return If(current == MEM_ERROR.none, error, current)

    def is_live(self, s: Any, site: str) -> Any:
        return getattr(s, self.var_name(site)) == MEM.live

