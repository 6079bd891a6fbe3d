# SPDX-License-Identifier: GPL-2.0-only
"""Structural CPU symmetry: the group a spec's ``Interchangeable`` tree declares, element by element.

A tree of ``Subtree`` nodes over the CPUs of one role (docs/spec-authoring.md,
"Structural symmetry"): the members of each node that have one shape are
interchangeable, each carrying its own members and the Array entries it owns;
other roles may ``follow`` a CPU. The group is every renaming that permutes
alike members of each node: for the counter tree at 8 CPUs (three levels of two) that is
2^7 = 128 renamings, a wreath product rather than the 8! of full symmetry.

A renaming is a ``Renaming``: a dict of actor ids (old -> new, identity
omitted, as ``Symmetry.permute`` takes it) with ``slots``, the Array entries
moved (variable position -> {old index: new index}).

The canonical form is the least state (tuple order; the flat vector's order
in C, checker/compiled/structural.py) over every element of the group: an
orbit representative by construction, and the same in both engines. The
group is enumerated once per point; past ``MAX_ORDER`` elements it is not
used (the search runs unreduced, and ``refused`` says why).

The sampled symmetry test (``Symmetry.check_sample``) checks the generators:
for each node, a swap of its first two members and a rotation of all of
them, which together generate the group.
"""
from __future__ import annotations

import itertools
import math
from typing import TYPE_CHECKING, Any

from checker.errors import SpecError
from checker.language.declare import Subtree

if TYPE_CHECKING:
    from checker.language.compile import Model

#: The most elements enumerated; a larger group leaves the point unreduced (said in ``refused``).
MAX_ORDER = 5040


class Renaming(dict):
    """Actor ids old -> new (identity omitted), with ``slots``: Array position -> {old index: new index}."""

    def __init__(self, actors: dict[int, int], slots: dict[int, dict[int, int]]):
        super().__init__(actors)
        self.slots = slots


def _shape(node: Any) -> Any:
    if not isinstance(node, Subtree):
        return "cpu"
    return (tuple(sorted((k, len(v)) for k, v in node.slots.items())), tuple(_shape(m) for m in node.members))


def _classes(node: Subtree) -> list[list[int]]:
    """The node's members grouped by shape (first appearance order): only alike members are interchangeable."""
    by: dict[Any, list[int]] = {}
    for i, m in enumerate(node.members):
        by.setdefault(_shape(m), []).append(i)
    return list(by.values())


def _order(node: Any) -> int:
    if not isinstance(node, Subtree):
        return 1
    out = 1
    for cls in _classes(node):
        out *= math.factorial(len(cls))
    for m in node.members:
        out *= _order(m)
    return out


def _member_perms(node: Subtree) -> list[list[int]]:
    """Every assignment position -> member that maps each member to one of its own shape (identity first)."""
    classes = _classes(node)
    out = []
    for choice in itertools.product(*(itertools.permutations(c) for c in classes)):
        sigma = list(range(len(node.members)))
        for cls, perm in zip(classes, choice):
            for at, j in zip(cls, perm):
                sigma[at] = j
        out.append(sigma)
    return out


def _positions(node: Any) -> tuple[list[int], list[tuple[str, int]]]:
    """The node's leaves and owned Array entries in its own order (own entries first, then each member's)."""
    if not isinstance(node, Subtree):
        return [node], []
    leaves: list[int] = []
    slots = [(k, i) for k in sorted(node.slots) for i in node.slots[k]]
    for m in node.members:
        ls, ss = _positions(m)
        leaves += ls
        slots += ss
    return leaves, slots


def _images(node: Any) -> list[tuple[list[int], list[tuple[str, int]]]]:
    """Where every element of the node's group sends its positions (identity first)."""
    if not isinstance(node, Subtree):
        return [([node], [])]
    own = [(k, i) for k in sorted(node.slots) for i in node.slots[k]]
    per_member = [_images(m) for m in node.members]
    out = []
    for sigma in _member_perms(node):
        for combo in itertools.product(*(per_member[j] for j in sigma)):
            leaves = [c for ls, _ in combo for c in ls]
            slots = own + [x for _, ss in combo for x in ss]
            out.append((leaves, slots))
    return out


class StructureGroup:
    """The declared group at one point: its elements, its generators, and the canonical form under it."""

    def __init__(self, model: "Model"):
        decl = model.info.structure
        self.decl = decl
        self.model = model
        p = model.params
        name = model.cls.__name__
        where = {"file": model.info.file, "line": decl.line or model.info.line}

        def fail(msg: str) -> SpecError:
            return SpecError(f"{name}.{decl.name}: {msg}", **where)

        for r in (decl.role, *decl.follow):
            if r not in model.roles:
                raise fail(f"names the role {r!r}, which is not declared; the roles are: {', '.join(model.roles)}")
            if model.info.roles[r].symmetric:
                raise fail(f"the role {r!r} is declared symmetric=True as well: a role is either fully symmetric "
                           f"or follows the Interchangeable tree; drop symmetric=True")
        root = decl.tree(p)
        if not isinstance(root, Subtree):
            raise fail(f"its tree returned {root!r}; it must return the root Subtree(...)")
        cpus = model.roles[decl.role]
        leaves, slots = _positions(root)
        bad = [c for c in leaves if not isinstance(c, int) or isinstance(c, bool) or not 0 <= c < len(cpus)]
        if bad:
            raise fail(f"leaf {bad[0]!r} is not a CPU index of role {decl.role!r} (0 .. {len(cpus) - 1})")
        if len(set(leaves)) != len(leaves):
            raise fail(f"a CPU is a leaf twice: {sorted(c for c in leaves if leaves.count(c) > 1)[0]}")
        for k, i in slots:
            if k not in model.arrays:
                raise fail(f"a Subtree owns entries of {k!r}, which is not an Array; the Arrays are: "
                           f"{', '.join(model.arrays) or '(none)'}")
            if not 0 <= i < model.arrays[k]:
                raise fail(f"a Subtree owns {k}[{i}], outside the Array's {model.arrays[k]} entries")
        if len(set(slots)) != len(slots):
            raise fail("an Array entry is owned by two Subtrees")
        # followers: the members of each role that move with each CPU, in order
        self.follow: dict[int, list[list[int]]] = {}
        for r, fn in decl.follow.items():
            homes: dict[int, list[int]] = {c: [] for c in range(len(cpus))}
            for i, actor in enumerate(model.roles[r]):
                h = fn(p, i)
                if h not in homes:
                    raise fail(f"follow[{r!r}] puts member {i} on {h!r}, not a CPU index of role {decl.role!r}")
                homes[h].append(actor)
            sizes = {len(homes[c]) for c in leaves}
            if len(sizes) > 1:
                raise fail(f"follow[{r!r}] gives the tree's CPUs different numbers of members ({sorted(sizes)}): "
                           f"interchangeable CPUs must carry alike")
            for c, members in homes.items():
                self.follow.setdefault(c, []).extend(members)
        self.start = cpus.start
        self.pos = {n: i for i, n in enumerate(model.var_names)}
        self.order = _order(root)
        #: Why the group is not used at this point (None: it is).
        self.refused = None if self.order <= MAX_ORDER else \
            f"structural symmetry of order {self.order:,} exceeds {MAX_ORDER:,} renamings: not reduced"
        self.root = root
        self.identity = (leaves, slots)
        self.elements: list[Renaming] = []
        if self.refused is None:
            self.elements = [self._renaming(leaves, slots, ls, ss) for ls, ss in _images(root)]
        self.generators = self._generators(root)
        moved_actors: set[int] = set()
        moved_slots: dict[str, set[int]] = {}
        for g in self.generators:
            moved_actors.update(g)
            for pos, m in g.slots.items():
                moved_slots.setdefault(model.var_names[pos], set()).update(m)
        self.moved_actors = frozenset(moved_actors)
        self.moved_slots = {k: frozenset(v) for k, v in moved_slots.items()}

    def _renaming(self, leaves: list[int], slots: list, new_leaves: list[int], new_slots: list) -> Renaming:
        actors: dict[int, int] = {}
        for a, b in zip(leaves, new_leaves):
            if a != b:
                actors[self.start + a] = self.start + b
                for x, y in zip(self.follow.get(a, ()), self.follow.get(b, ())):
                    actors[x] = y
        moved: dict[int, dict[int, int]] = {}
        for (k, i), (_, j) in zip(slots, new_slots):
            if i != j:
                moved.setdefault(self.pos[k], {})[i] = j
        return Renaming(actors, moved)

    def _generators(self, root: Subtree) -> list[Renaming]:
        """For each node's alike members (two or more): a swap of the first two, and a rotation when more."""
        out = []

        def visit(node: Any) -> None:
            if not isinstance(node, Subtree):
                return
            ms = node.members
            pos = [_positions(m) for m in ms]
            for cls in _classes(node):
                if len(cls) < 2:
                    continue
                cycles = [cls[:2]] + ([cls] if len(cls) > 2 else [])
                for cyc in cycles:
                    src_l, src_s, dst_l, dst_s = [], [], [], []
                    nxt = cyc[1:] + cyc[:1]  # member cyc[i] goes where cyc[i + 1] was
                    for a, b in zip(cyc, nxt):
                        src_l += pos[a][0]
                        src_s += pos[a][1]
                        dst_l += pos[b][0]
                        dst_s += pos[b][1]
                    out.append(self._renaming(src_l, src_s, dst_l, dst_s))
            for m in ms:
                visit(m)

        visit(root)
        return out

    def canonical(self, sym: Any, s: tuple) -> tuple:
        """The least state over the group (``sym.permute`` renames)."""
        best = s
        for e in self.elements[1:]:
            t = sym.permute(s, e)
            if t < best:
                best = t
        return best

    def show(self, mapping: dict) -> str:
        """A renaming for a message: CPUs (and followers) and the Array entries it moves."""
        parts = [f"cpu{a}->cpu{b}" for a, b in sorted(mapping.items())]
        for pos, m in sorted(getattr(mapping, "slots", {}).items()):
            n = self.model.var_names[pos]
            parts += [f"{n}[{a}]->{n}[{b}]" for a, b in sorted(m.items())]
        return ", ".join(parts)
