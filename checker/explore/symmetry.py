"""Canonical form under permutation of interchangeable CPUs.

A spec declares which roles are symmetric and which variables hold CPU ids;
from that alone this module builds the canonical form, so authors never
write a canonicaliser.

Fast path: sort the CPUs of each symmetric role by a key made of their
per-CPU values plus, for every CPU-id slot that the permutation leaves in
place (a shared variable such as a lock owner, or a per-CPU slot of a CPU
outside the role), whether that slot points at the CPU. Two CPUs with
equal keys can be swapped without changing the state, so the sorted order
is a true orbit representative. A per-CPU CPU-id variable on a symmetric
CPU would make keys depend on the permutation; in a state where such a
slot names a CPU, every permutation is tried (fine for the small role
sizes that are explored).

Soundness is checked, not assumed: ``check_sample`` compares the successors
of a permuted state with the permuted successors (Stateright trusts the
author here; we would rather refuse).
"""
from __future__ import annotations

import itertools
from typing import TYPE_CHECKING, Any

from checker.errors import SymmetryError
from checker.types import NOBODY

if TYPE_CHECKING:
    from checker.spec.compile import Model


class Symmetry:
    def __init__(self, model: "Model"):
        self.model = model
        self.groups = [tuple(model.roles[name]) for name, role in model.info.roles.items()
                       if role.symmetric and len(model.roles[name]) >= 2]
        cpu_vars = model.cpu_valued()
        idx = model.index
        self.plain_percpu = tuple(idx[n] for n in model.var_names if n in model.percpu and n not in cpu_vars)
        self.cpu_scalar = tuple(idx[n] for n, per in cpu_vars.items() if not per)
        self.cpu_percpu = tuple(idx[n] for n, per in cpu_vars.items() if per)
        self.percpu = tuple(idx[n] for n in model.var_names if n in model.percpu)
        in_groups = {c for g in self.groups for c in g}
        # Per-CPU CPU-id variables make the sort key permutation-dependent
        # when a symmetric CPU owns such a slot.
        owners_of = {}
        for n, per in cpu_vars.items():
            if per:
                role = model.vars[n].role
                owners_of[n] = set(model.roles[role]) if role else set(range(model.ncpus_total))
        self.brute = any(o & in_groups for o in owners_of.values())
        self.fixed_cpus = tuple(c for c in range(model.ncpus_total) if c not in in_groups)
        self.group_cpus = tuple(sorted(in_groups))
        self.active = bool(self.groups)

    # -- permutations ------------------------------------------------------------
    def permute(self, s: tuple, mapping: dict[int, int]) -> tuple:
        """The state with CPU ``c`` renamed ``mapping.get(c, c)``."""
        new = list(s)
        n = self.model.ncpus_total
        for pos in self.percpu:
            row = s[pos]
            out = [0] * n
            for c in range(n):
                out[mapping.get(c, c)] = row[c]
            new[pos] = tuple(out)
        for pos in self.cpu_scalar:
            new[pos] = mapping.get(s[pos], s[pos])
        for pos in self.cpu_percpu:
            new[pos] = tuple(mapping.get(v, v) for v in new[pos])
        return self.model.state_cls(new)

    def canonical(self, s: tuple) -> tuple:
        if not self.groups:
            return s
        if self.brute and self._points_into_groups(s):
            return self._canonical_brute(s)
        mapping: dict[int, int] = {}
        scal, cper, fixed = self.cpu_scalar, self.cpu_percpu, self.fixed_cpus
        # per CPU: its per-CPU values (none at all when the spec has only CPU-id slots: empty keys)
        cols = list(zip(*[s[p] for p in self.plain_percpu])) if self.plain_percpu else [()] * self.model.ncpus_total
        if scal or cper:
            cols = [(col, tuple(s[p] == c for p in scal), tuple(s[p][d] == c for p in cper for d in fixed))
                    for c, col in enumerate(cols)]
        for group in self.groups:
            order = sorted(group, key=cols.__getitem__)
            for new_id, old_id in zip(group, order):
                if new_id != old_id:
                    mapping[old_id] = new_id
        return self.permute(s, mapping) if mapping else s

    def _points_into_groups(self, s: tuple) -> bool:
        """A symmetric CPU's per-CPU CPU-id slot names a CPU (else, all NOBODY, the sort key is exact)."""
        return any(s[p][c] != NOBODY for p in self.cpu_percpu for c in self.group_cpus)

    def _canonical_brute(self, s: tuple) -> tuple:
        best = None
        for perms in itertools.product(*(itertools.permutations(g) for g in self.groups)):
            mapping = {}
            for group, perm in zip(self.groups, perms):
                mapping.update({old: new for old, new in zip(group, perm)})
            t = self.permute(s, mapping)
            if best is None or t < best:
                best = t
        return best

    def sample_mappings(self) -> list[dict[int, int]]:
        """A transposition and a rotation of each symmetric role: together
        they generate every permutation of it."""
        out = []
        for g in self.groups:
            out.append({g[0]: g[1], g[1]: g[0]})
            if len(g) > 2:
                out.append({g[i]: g[(i + 1) % len(g)] for i in range(len(g))})
        return out

    def check_sample(self, s: tuple) -> None:
        """Refuse a declared symmetry that the spec breaks at ``s``."""
        m = self.model
        succ = m.successors(s)
        for mapping in self.sample_mappings():
            ps = self.permute(s, mapping)
            expected = {self.permute(t, mapping) for _, t in succ}
            got = {t for _, t in m.successors(ps)}
            if expected != got:
                msg, file, line = self._explain(s, ps, mapping, succ, expected, got)
                raise SymmetryError(msg, file=file or m.info.file, line=line or m.info.line)
            for p in m.properties:
                if bool(p.fn(s)) != bool(p.fn(ps)):
                    raise SymmetryError(
                        f"{m.cls.__name__}: property {p.name} distinguishes CPUs of a symmetric role: "
                        f"it is {bool(p.fn(s))} in {s} but {bool(p.fn(ps))} with CPUs renamed "
                        f"{_show_map(mapping)}. Compare per-CPU values, not CPU ids, or declare the role "
                        f"with symmetric=False.", file=p.file, line=p.line)
            if m.is_terminal(s) != m.is_terminal(ps):
                raise SymmetryError(f"{m.cls.__name__}: the @terminal predicate distinguishes CPUs of a "
                                    f"symmetric role (renaming {_show_map(mapping)} in {s})",
                                    file=m.info.file, line=m.info.line)

    def _explain(self, s: Any, ps: Any, mapping: dict, succ: list, expected: set,
                 got: set) -> tuple[str, str | None, int | None]:
        """The message, and the file and line of the action that broke the symmetry when known."""
        m = self.model
        culprit = None
        act = None
        for label, t in succ:
            if self.permute(t, mapping) not in got:
                culprit = label
                break
        what = ""
        if culprit is not None:
            name, cpu, ch = m.label_parts(culprit)
            act = m.actions[culprit[0]].info
            what = f" The step {name} on cpu{cpu}{_show_choices(ch)} has no renamed counterpart."
        else:
            extra = next(iter(got - expected), None)
            what = f" The renamed state has a successor with no original counterpart: {extra}."
        msg = (f"{m.cls.__name__}: the declared CPU symmetry does not hold: renaming CPUs "
               f"{_show_map(mapping)} in {s} does not rename its successors.{what}\n"
               f"In a symmetric role an action may not compare, order or compute with CPU ids (`cpu == 0`, "
               f"`c < cpu`, `cpu + 1`): compare per-CPU values instead; model an ordered walk such as "
               f"for_each_online_cpu as \"any CPU not yet visited\"; give a CPU with a part of its own (the "
               f"boot CPU) a role of its own, Role(1); or declare the role with symmetric=False.")
        return msg, act.file if act else None, act.line if act else None


def _show_map(mapping: dict[int, int]) -> str:
    return ", ".join(f"cpu{a}->cpu{b}" for a, b in sorted(mapping.items()))


def _show_choices(ch: dict) -> str:
    return "(" + ", ".join(f"{k}={v}" for k, v in ch.items()) + ")" if ch else ""
