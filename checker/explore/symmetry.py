# SPDX-License-Identifier: GPL-2.0-only
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

With tasks (a spec with a ``Task`` role, ``checker.kernel.tasks``), CPUs and
tasks share one numbering and are permuted together: ``TaskCanon`` below.

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
    from checker.language.compile import Model


class Symmetry:
    """CPU-permutation symmetry of a model: the groups of interchangeable CPUs and each state's canonical form."""
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
        #: Actors a renaming can move, and Array entries (name -> indices): the slots the canonical form changes.
        self.moved_actors = frozenset(in_groups)
        self.moved_slots: dict[str, frozenset[int]] = {}
        #: The declared structural symmetry (``Interchangeable``, checker.explore.structure), else None.
        self.structure = None
        self.refused: str | None = None  # why a declared structure is not used at this point
        if model.info.structure is not None:
            self._use_structure(model)
        # A spec with tasks has its own canonical form; every other spec keeps the one above unchanged.
        self.tasks = TaskCanon(self, model) if model.scheduler is not None and self.groups else None
        if self.tasks is not None:
            self.canonical = self.tasks.canonical  # type: ignore[method-assign]

    def _use_structure(self, model: "Model") -> None:
        from checker.explore.structure import StructureGroup

        if self.groups:
            raise SymmetryError(f"{model.cls.__name__}: declares both a symmetric=True role and an Interchangeable "
                                f"tree; describe every symmetry in the tree", file=model.info.file,
                                line=model.info.line)
        st = StructureGroup(model)
        self.structure = st
        self.refused = st.refused
        self.active = st.refused is None and len(st.elements) > 1
        self.moved_actors = st.moved_actors
        self.moved_slots = st.moved_slots
        self.brute = False
        self.canonical = self._canonical_structural  # type: ignore[method-assign]

    def _canonical_structural(self, s: tuple) -> tuple:
        """The least state over the declared group (a bound method: a forked or pickled model keeps it)."""
        return self.structure.canonical(self, s)

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
        for pos, moves in getattr(mapping, "slots", {}).items():  # a structural renaming moves Array entries
            row = s[pos]
            out = list(row)
            for a, b in moves.items():
                out[b] = row[a]
            new[pos] = tuple(out)
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
        they generate every permutation of it. (Structural: those of each Subtree's members.)"""
        if self.structure is not None:
            return list(self.structure.generators)
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
                        f"{m.cls.__name__}: property {p.name} distinguishes CPUs {self._kind()}: "
                        f"it is {bool(p.fn(s))} in {s} but {bool(p.fn(ps))} with CPUs renamed "
                        f"{self._show(mapping)}. Compare per-CPU values, not CPU ids, or "
                        f"{self._undo()}.", file=p.file, line=p.line)
            if m.is_terminal(s) != m.is_terminal(ps):
                raise SymmetryError(f"{m.cls.__name__}: the @terminal predicate distinguishes CPUs "
                                    f"{self._kind()} (renaming {self._show(mapping)} in {s})",
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
        if self.structure is not None:
            decl = self.structure.decl
            msg = (f"{m.cls.__name__}: the declared structural symmetry {decl.name} does not hold: renaming "
                   f"{self._show(mapping)} in {s} does not rename its successors.{what}\n"
                   f"Each Subtree's members must be interchangeable with everything they carry: the Array entries "
                   f"a step indexes by CPU must be owned by the Subtree holding that CPU, and a follower must "
                   f"run where follow= says; fix the tree, or remove {decl.name} to explore unreduced.")
            return msg, act.file if act else None, act.line if act else None
        msg = (f"{m.cls.__name__}: the declared CPU symmetry does not hold: renaming CPUs "
               f"{_show_map(mapping)} in {s} does not rename its successors.{what}\n"
               f"In a symmetric role an action may not compare, order or compute with CPU ids (`cpu == 0`, "
               f"`c < cpu`, `cpu + 1`): compare per-CPU values instead; model an ordered walk such as "
               f"for_each_online_cpu as \"any CPU not yet visited\"; give a CPU with a part of its own (the "
               f"boot CPU) a role of its own, Role(1); or declare the role with symmetric=False.")
        return msg, act.file if act else None, act.line if act else None


    def _kind(self) -> str:
        return "that its Interchangeable tree makes alike" if self.structure is not None else "of a symmetric role"

    def _undo(self) -> str:
        return "fix the Interchangeable tree" if self.structure is not None else "declare the role with symmetric=False"

    def _show(self, mapping: dict) -> str:
        return self.structure.show(mapping) if self.structure is not None else _show_map(mapping)


def _show_map(mapping: dict[int, int]) -> str:
    return ", ".join(f"cpu{a}->cpu{b}" for a, b in sorted(mapping.items()))


def _show_choices(ch: dict) -> str:
    return "(" + ", ".join(f"{k}={v}" for k, v in ch.items()) + ")" if ch else ""


class TaskCanon:
    """The canonical form of a spec with tasks: CPUs and tasks permuted together.

    Actors are the CPUs and tasks, numbered together. A *group* is a symmetric
    role (of CPUs or of tasks) with two or more actors; the others are *fixed*.
    *Pointer* variables are those typed ``CpuId`` (their values are actor ids
    or NOBODY): the built-in ``task_cpu`` (task -> CPU) and ``curr`` (CPU ->
    task), the spec's own per-actor ones, and scalar ones (a lock's owner).
    The other per-actor variables are *plain*. A permutation renames actors
    within groups: it moves every per-actor slot and renames every pointer
    value. The algorithm, for a state ``s``:

    1. Task key, for each task ``u``: ``(tag, plain, scalar_at, fixed_at, own, current)``
       where ``tag`` is the index of ``u``'s group, or ``-(u + 1)`` for a
       fixed task; ``plain`` the tuple of ``u``'s plain slots in declaration
       order; ``scalar_at`` for each scalar pointer variable whether it holds
       ``u``; ``fixed_at`` for each spec pointer per-actor variable and each
       fixed actor ``d`` (ascending) whether ``d``'s slot holds ``u``; ``own``
       the values of ``u``'s spec pointer slots, each replaced by -2 when it
       names an actor of a group (then the state is *ambiguous*); ``current``
       whether ``curr[task_cpu[u]] == u``.
    2. CPU key, for each CPU ``c``: ``(plain, scalar_at, fixed_at, own, tasks)``
       as above for ``c`` (no tag, no current) and ``tasks`` the ascending
       sorted tuple of the task keys of the tasks ``u`` with
       ``task_cpu[u] == c``. ``curr[c]`` is not in the key: the current task
       is the one of ``c``'s tasks whose key says current. (A ``curr[c]``
       naming a task not on ``c`` makes the state ambiguous.)
    3. The CPUs of each CPU group, sorted ascending by CPU key (a stable sort
       of the group's ids), take the group's ids in ascending order: the
       ``i``-th smallest key's CPU is renamed to the group's ``i``-th id.
    4. The tasks of each task group, sorted ascending by
       ``(new id of task_cpu[u], task key)``, are renamed the same way.
    5. Unambiguous: the state with that renaming is the canonical form.
       Two CPUs with equal keys, or two tasks with equal step-4 keys, can be
       swapped (with the tasks the keys match) without changing the state,
       so any order among equals gives the same state: an orbit
       representative without search. Ambiguous: the least state (Python
       tuple order) over every renaming that orders the keys as in 3 and 4,
       that is over the permutations within runs of equal keys only; the set
       of such renamings of ``g(s)`` is that of ``s`` composed with
       ``g^-1``, so the least is the same for the whole orbit.

    ``tests/test_symmetry_tasks.py`` checks it against the least state over
    every permutation (orbit equivalence) at small sizes.
    """

    def __init__(self, sym: Symmetry, model: "Model"):
        from checker.kernel.tasks import CURR, TASK_CPU

        self.sym = sym
        self.model = model
        idx = model.index
        self.p_on, self.p_curr = idx[TASK_CPU], idx[CURR]
        self.scalar = sym.cpu_scalar
        self.own_ptr = tuple(p for p in sym.cpu_percpu if p not in (self.p_on, self.p_curr))
        self.plain = sym.plain_percpu
        sched = model.scheduler
        task_set = sched.task_set
        self.task_groups = [g for g in sym.groups if g[0] in task_set]
        self.cpu_groups = [g for g in sym.groups if g[0] not in task_set]
        in_groups = {c for g in sym.groups for c in g}
        self.in_groups = in_groups
        self.fixed = sym.fixed_cpus  # fixed actors, ascending
        self.tasks = sched.tasks
        self.cpus = tuple(c for c in range(model.ncpus_total) if c not in task_set)
        self.tag = {}
        for gi, g in enumerate(self.task_groups):
            for u in g:
                self.tag[u] = gi
        for u in self.tasks:
            self.tag.setdefault(u, -(u + 1))

    def _own(self, s: tuple, a: int) -> tuple[tuple, bool]:
        """(plain, scalar_at, fixed_at, own) of actor ``a``, and whether its own pointers name a group actor."""
        plain = tuple(s[p][a] for p in self.plain)
        scalar_at = tuple(s[p] == a for p in self.scalar)
        fixed_at = tuple(s[p][d] == a for p in self.own_ptr for d in self.fixed)
        own = []
        amb = False
        for p in self.own_ptr:
            v = s[p][a]
            if v in self.in_groups:
                v, amb = -2, True
            own.append(v)
        return (plain, scalar_at, fixed_at, tuple(own)), amb

    def keys(self, s: tuple) -> tuple[dict[int, tuple], dict[int, tuple], bool]:
        on, curr = s[self.p_on], s[self.p_curr]
        amb = False
        tkey: dict[int, tuple] = {}
        for u in self.tasks:
            k, a = self._own(s, u)
            amb |= a
            tkey[u] = (self.tag[u], *k, curr[on[u]] == u)
        per_cpu: dict[int, list] = {c: [] for c in self.cpus}
        for u in self.tasks:
            per_cpu[on[u]].append(tkey[u])
        ckey: dict[int, tuple] = {}
        for c in self.cpus:
            k, a = self._own(s, c)
            amb |= a
            cur = curr[c]
            if cur != NOBODY and on[cur] != c:
                amb = True
            ckey[c] = (*k, tuple(sorted(per_cpu[c])))
        return tkey, ckey, amb

    def canonical(self, s: tuple) -> tuple:
        tkey, ckey, amb = self.keys(s)
        on = s[self.p_on]
        cpu_orders = [sorted(g, key=ckey.__getitem__) for g in self.cpu_groups]
        if not amb:
            return self._apply(s, cpu_orders, tkey, on)
        best = None
        for cpu_choice in itertools.product(*(self._tie_perms(o, ckey) for o in cpu_orders)):
            for t in self._task_variants(s, list(cpu_choice), tkey, on):
                if best is None or t < best:
                    best = t
        return best

    def _mapping_of(self, groups: list, orders: list) -> dict[int, int]:
        mapping: dict[int, int] = {}
        for g, order in zip(groups, orders):
            for new_id, old_id in zip(g, order):
                if new_id != old_id:
                    mapping[old_id] = new_id
        return mapping

    def _task_orders(self, cpu_map: dict[int, int], tkey: dict, on: tuple) -> tuple[list, Any]:
        key = lambda u: (cpu_map.get(on[u], on[u]), tkey[u])  # noqa: E731
        return [sorted(g, key=key) for g in self.task_groups], key

    def _apply(self, s: tuple, cpu_orders: list, tkey: dict, on: tuple) -> tuple:
        mapping = self._mapping_of(self.cpu_groups, cpu_orders)
        task_orders, _ = self._task_orders(mapping, tkey, on)
        mapping.update(self._mapping_of(self.task_groups, task_orders))
        return self.sym.permute(s, mapping) if mapping else s

    def _task_variants(self, s: tuple, cpu_orders: list, tkey: dict, on: tuple) -> Any:
        cmap = self._mapping_of(self.cpu_groups, cpu_orders)
        task_orders, key = self._task_orders(cmap, tkey, on)
        for choice in itertools.product(*(self._tie_perms(o, None, key) for o in task_orders)):
            mapping = dict(cmap)
            mapping.update(self._mapping_of(self.task_groups, list(choice)))
            yield self.sym.permute(s, mapping)

    @staticmethod
    def _tie_perms(order: list, keys: dict | None, key: Any = None) -> list[list[int]]:
        """Every order of ``order`` that keeps it sorted: its runs of equal keys permuted."""
        k = key if key is not None else keys.__getitem__
        runs: list[list[int]] = []
        for a in order:
            if runs and k(runs[-1][0]) == k(a):
                runs[-1].append(a)
            else:
                runs.append([a])
        out = []
        for combo in itertools.product(*(itertools.permutations(r) for r in runs)):
            out.append([a for run in combo for a in run])
        return out
