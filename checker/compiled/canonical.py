# SPDX-License-Identifier: GPL-2.0-only
"""The symmetry reduction's canonical form over the flat state vector, as C.

Both engines must store the same states, so the C search computes exactly
what ``checker.explore.symmetry.Symmetry.canonical`` computes on the Python
state. That form, written down over integers (docs/symmetry.md says the same
for a reader who is not reading this file):

**Layout.** The state is a vector ``v`` of ``N`` int64 slots: the variables
in ``model.var_names`` order; a scalar takes one slot, a per-CPU variable
``NC = model.ncpus_total`` slots (slot ``c`` is CPU ``c``'s value), an Array
of length ``L`` its ``L`` entries in index order. Bools are 0/1; an
uninitialised local holds ``UNINIT`` (a large negative int) like any value.

**What the model declares** (fixed at a parameter point):

- ``G_1 .. G_k``: the symmetric roles with at least two CPUs, in declaration
  order, each its CPU ids ascending (roles are disjoint ranges);
- ``F``: the CPUs in no ``G_i``, ascending;
- ``P``: the row offsets of the per-CPU variables whose type is not CpuId
  ("plain"), in variable order;
- ``S``: the slot offsets of the scalar CpuId variables (Shared, Lock,
  Uninit of CpuId type; not Arrays), in variable order;
- ``Q``: the row offsets of the per-CPU CpuId variables, in variable order;
- ``R``: the row offsets of every per-CPU variable, in variable order;
- ``BRUTE``: some variable of ``Q`` is owned (its role's CPUs, or every CPU
  when it has no role) by a CPU of some ``G_i``.

**A renaming** ``pi`` is a bijection of ``0..NC-1`` that maps each ``G_i``
onto itself and fixes every CPU of ``F``. ``pi(v)`` is the vector ``w``:

1. ``w = v`` on every slot not named below (scalars, Arrays);
2. for each row ``r`` of ``R`` and CPU ``c``: ``w[r + pi(c)] = v[r + c]``;
3. for each ``s`` of ``S``: ``w[s] = mu(v[s])``; for each row ``q`` of ``Q``
   and CPU ``c``: ``w[q + c] = mu(w[q + c])`` (after step 2), where
   ``mu(x) = pi(x)`` for ``0 <= x < NC`` and ``mu(x) = x`` otherwise (NOBODY
   = -1, UNINIT and any out-of-range value stay).

**The canonical form** ``canon(v)``:

1. If ``k = 0``: ``v``.
2. Brute path. If ``BRUTE`` and ``v[q + c] != -1`` for some ``q`` of ``Q``
   and some CPU ``c`` of some ``G_i``: the lexicographic minimum of
   ``pi(v)`` over every renaming ``pi`` (``prod |G_i|!`` of them), comparing
   vectors slot by slot as signed integers.
3. Sort path, otherwise. The key of CPU ``c`` is the integer vector
   ``[v[p + c] for p in P] + [v[s] == c for s in S] +
   [v[q + d] == c for q in Q for d in F]`` (comparisons as 0/1; ``q`` outer,
   ``d`` inner). For each ``G_i = (g_0 < .. < g_{L-1})``, ``order`` is
   ``G_i`` stably sorted by key ascending, keys compared lexicographically
   (CPUs with equal keys keep ascending id order); ``pi(order[j]) = g_j``.
   The result is ``pi(v)``, keys all taken from the original ``v``.

Python's nested tuples compare as this flat vector does (every slot has a
fixed length, so comparing ``(col, flags_s, flags_q)`` tuples is comparing
their concatenation), and ``sorted`` is stable: the sort path is exactly the
Python form. Where it differs from the Python code: with no plain per-CPU
variable the Python form raises ``IndexError`` (``zip()`` of no rows gives no
per-CPU keys); here the plain part of the key is empty. Values must fit in
int64: ``flatten`` refuses others.

**With tasks** (``model.symmetry.tasks`` set) the form is ``TaskCanon``'s instead (its docstring in
checker/explore/symmetry.py; docs/symmetry.md, "Specs with tasks"): ``_c_tasks`` below is that, over
the same layout and renaming.

``c_canonical(model)`` prints this for one model as C (``cc_canonical``,
straight-line code with the offsets as constants); ``reference_canonical`` is
the same algorithm in Python over the flat vector, for tests.
"""
from __future__ import annotations

import itertools
from typing import TYPE_CHECKING

from checker.compiled.slots import offsets, widths
from checker.types import NOBODY

if TYPE_CHECKING:
    from checker.language.compile import Model

INT64_MIN, INT64_MAX = -(1 << 63), (1 << 63) - 1


# -- layout ------------------------------------------------------------------------
def flatten(model: "Model", s: tuple) -> list[int]:
    """The state as int64 slots: variables in order, tuples expanded by index, bools as 0/1."""
    v: list[int] = []
    for n, x in zip(model.var_names, s):
        if n in model.tupled:
            v.extend(int(y) for y in x)
        else:
            v.append(int(x))
    for x in v:
        if not INT64_MIN <= x <= INT64_MAX:
            raise OverflowError(f"{model.name}: state value {x} does not fit in 64 bits")
    return v


def unflatten(model: "Model", v: list[int]) -> tuple:
    """The inverse of ``flatten``, as the model's state class."""
    out, at = [], 0
    for w in widths(model):
        if w is None:
            out.append(int(v[at]))
            at += 1
        else:
            out.append(tuple(int(x) for x in v[at:at + w]))
            at += w
    assert at == len(v), f"{len(v)} slots for a layout of {at}"
    return model.state_cls(out)


# -- the declared sets ---------------------------------------------------------------
class Layout:
    """G, F, P, S, Q, R and BRUTE of the module docstring, as offsets into the flat vector."""

    def __init__(self, model: "Model"):
        sym = model.symmetry
        off = offsets(model)
        names = model.var_names
        self.n = sum(1 if w is None else w for w in widths(model))
        self.nc = model.ncpus_total
        self.groups = [tuple(sorted(g)) for g in sym.groups]
        self.fixed = tuple(sym.fixed_cpus)
        self.group_cpus = tuple(sym.group_cpus)
        # Symmetry holds positions in the Python tuple; map them to names, then to flat offsets.
        self.plain = tuple(off[names[i]] for i in sym.plain_percpu)
        self.scal = tuple(off[names[i]] for i in sym.cpu_scalar)
        self.cper = tuple(off[names[i]] for i in sym.cpu_percpu)
        self.rows = tuple(off[names[i]] for i in sym.percpu)
        self.brute = sym.brute


# -- the reference, in Python over the flat vector --------------------------------------
def rename(lay: Layout, v: list[int], pi: list[int]) -> list[int]:
    """``pi(v)``: ``pi[c]`` is the new id of CPU ``c`` (identity outside the groups)."""
    w = list(v)
    for r in lay.rows:
        for c in range(lay.nc):
            w[r + pi[c]] = v[r + c]

    def mu(x: int) -> int:
        return pi[x] if 0 <= x < lay.nc else x

    for s in lay.scal:
        w[s] = mu(v[s])
    for q in lay.cper:
        for c in range(lay.nc):
            w[q + c] = mu(w[q + c])
    return w


def reference_canonical(model: "Model", v: list[int], lay: Layout | None = None) -> list[int]:
    """The canonical form of the flat vector ``v``, step by step as the module docstring writes it."""
    if model.symmetry.structure is not None and model.symmetry.active:  # a declared Interchangeable tree
        from checker.compiled.structural import reference_structural
        return reference_structural(model, v)
    lay = lay or Layout(model)
    if not lay.groups:
        return list(v)
    if lay.brute and any(v[q + c] != NOBODY for q in lay.cper for c in lay.group_cpus):
        best = None
        for perms in itertools.product(*(itertools.permutations(g) for g in lay.groups)):
            pi = list(range(lay.nc))
            for g, perm in zip(lay.groups, perms):
                for old, new in zip(g, perm):
                    pi[old] = new
            w = rename(lay, v, pi)
            if best is None or w < best:
                best = w
        return best

    def key(c: int) -> list[int]:
        return ([v[p + c] for p in lay.plain] + [int(v[s] == c) for s in lay.scal]
                + [int(v[q + d] == c) for q in lay.cper for d in lay.fixed])

    pi = list(range(lay.nc))
    for g in lay.groups:
        for new, old in zip(g, sorted(g, key=key)):
            pi[old] = new
    return rename(lay, v, pi)


# -- the C ------------------------------------------------------------------------------
def c_canonical(model: "Model") -> str:
    """C source of ``static void cc_canonical(int64_t *v)``: ``v`` (``flatten``'s layout) made canonical
    in place. Helpers are ``static`` and prefixed ``cc_canon_``; the source includes what it uses."""
    if model.symmetry.structure is not None and model.symmetry.active:  # a declared Interchangeable tree
        from checker.compiled.structural import c_structural
        return c_structural(model)
    lay = Layout(model)
    head = ["#include <stdint.h>", "#include <string.h>", "",
            f"/* canonical form of {model.name} at {model.params}: checker/compiled/canonical.py */"]
    if not lay.groups:
        return "\n".join(head + ["static void cc_canonical(int64_t *v) { (void)v; }", ""])
    out = head + _c_rename(lay)
    if model.symmetry.tasks is not None:
        return "\n".join(out + _c_tasks(model, lay))
    if lay.brute:
        out += _c_brute(lay)
    out += _c_sort(lay)
    out += ["static void cc_canonical(int64_t *v) {"]
    if lay.brute:
        tests = " || ".join(f"v[{q + c}] != -1" for q in lay.cper for c in lay.group_cpus)
        out += [f"    if ({tests}) {{ cc_canon_brute(v); return; }}"]
    out += ["    cc_canon_sort(v);", "}", ""]
    return "\n".join(out)


def _c_rename(lay: Layout) -> list[str]:
    """``cc_canon_rename``: the renaming of the module docstring (actors, CPUs and tasks alike)."""
    out = [
        f"#define CC_CANON_N {lay.n}",
        f"#define CC_CANON_NC {lay.nc}",
        "",
        "static inline int64_t cc_canon_mu(const int *pi, int64_t x) {",
        "    return (x >= 0 && x < CC_CANON_NC) ? (int64_t)pi[x] : x;  /* NOBODY and the rest stay */",
        "}",
        "",
        "/* w = pi(v): per-CPU rows moved, CPU-id values renamed; the rest copied. */",
        "static void cc_canon_rename(const int64_t *v, int64_t *w, const int *pi) {",
    ]
    if lay.rows:
        out.append("    int c;")
    out.append("    (void)pi;  /* unused when nothing is permuted */")
    out.append("    memcpy(w, v, sizeof(int64_t) * CC_CANON_N);")
    for r in lay.rows:
        out.append(f"    for (c = 0; c < CC_CANON_NC; c++) w[{r} + pi[c]] = v[{r} + c];")
    for s in lay.scal:
        out.append(f"    w[{s}] = cc_canon_mu(pi, v[{s}]);")
    for q in lay.cper:
        out.append(f"    for (c = 0; c < CC_CANON_NC; c++) w[{q} + c] = cc_canon_mu(pi, w[{q} + c]);")
    out += ["}", ""]
    return out


def _c_sort(lay: Layout) -> list[str]:
    """The sort path: a comparison of two CPUs' keys, a stable insertion sort per group."""
    out = ["/* <0, 0, >0 as CPU a's key is below, equal to, above CPU b's. */",
           "static int cc_canon_cmp(const int64_t *v, int a, int b) {",
           "    int64_t x, y;"]
    terms = [(f"v[{p} + a]", f"v[{p} + b]") for p in lay.plain]
    terms += [(f"(v[{s}] == a)", f"(v[{s}] == b)") for s in lay.scal]
    terms += [(f"(v[{q + d}] == a)", f"(v[{q + d}] == b)") for q in lay.cper for d in lay.fixed]
    for x, y in terms:
        out.append(f"    x = {x}; y = {y}; if (x != y) return x < y ? -1 : 1;")
    if not terms:
        out.append("    (void)v; (void)a; (void)b; (void)x; (void)y;")
    out += ["    return 0;", "}", "",
            "static void cc_canon_sort(int64_t *v) {",
            f"    int pi[CC_CANON_NC], ord[{max(len(g) for g in lay.groups)}], i, j, x, moved = 0;",
            "    int64_t w[CC_CANON_N];",
            "    for (i = 0; i < CC_CANON_NC; i++) pi[i] = i;"]
    for g in lay.groups:
        # ord starts as the group ascending; insertion sort moves an element past strictly greater keys
        # only, so equal keys keep their order: Python's sorted() is stable in the same way.
        out += [f"    /* group {', '.join(map(str, g))} */"]
        out += [f"    ord[{i}] = {c};" for i, c in enumerate(g)]
        out += [f"    for (i = 1; i < {len(g)}; i++) {{",
                "        x = ord[i];",
                "        for (j = i - 1; j >= 0 && cc_canon_cmp(v, ord[j], x) > 0; j--) ord[j + 1] = ord[j];",
                "        ord[j + 1] = x;",
                "    }"]
        out += [f"    pi[ord[{i}]] = {c}; moved |= ord[{i}] != {c};" for i, c in enumerate(g)]
    out += ["    if (!moved) return;",
            "    cc_canon_rename(v, w, pi);",
            "    memcpy(v, w, sizeof w);",
            "}", ""]
    return out


_C_PERM_HELPERS = [
    "/* The next permutation of a[0..n-1] in lexicographic order; 0 (and a sorted again) after the last. */",
    "static int cc_canon_next_perm(int *a, int n) {",
    "    int i = n - 2, j, t;",
    "    while (i >= 0 && a[i] >= a[i + 1]) i--;",
    "    if (i >= 0) {",
    "        for (j = n - 1; a[j] <= a[i]; j--) {}",
    "        t = a[i]; a[i] = a[j]; a[j] = t;",
    "    }",
    "    for (j = i + 1, t = n - 1; j < t; j++, t--) { int u = a[j]; a[j] = a[t]; a[t] = u; }",
    "    return i >= 0;",
    "}", "",
]

_C_LESS = [
    "static int cc_canon_less(const int64_t *a, const int64_t *b) {",
    "    int i;",
    "    for (i = 0; i < CC_CANON_N; i++) if (a[i] != b[i]) return a[i] < b[i];",
    "    return 0;",
    "}", "",
]


def _c_brute(lay: Layout) -> list[str]:
    """The brute path: every renaming, the lexicographic minimum kept. A renaming is compared with the best
    so far slot by slot, in slot order, over the slots a renaming can change (the others are equal in
    every candidate), and stops at the first that differs; only a smaller one is written out."""
    total = sum(len(g) for g in lay.groups)
    starts = list(itertools.accumulate([0] + [len(g) for g in lay.groups]))[:-1]
    in_group = set(lay.group_cpus)
    cper = set(lay.cper)
    moving = [(s, f"cc_canon_mu(pi, v[{s}])") for s in lay.scal]
    for r in lay.rows:
        for j in range(lay.nc):
            at = f"v[{r} + pinv[{j}]]" if j in in_group else f"v[{r + j}]"
            if r in cper:
                moving.append((r + j, f"cc_canon_mu(pi, {at})"))
            elif j in in_group:  # a plain slot of a fixed CPU never changes
                moving.append((r + j, at))
    out = _C_PERM_HELPERS + [
           "/* Whether pi(v) < best (pinv: pi's inverse). */",
           "static int cc_canon_renamed_less(const int64_t *v, const int64_t *best, const int *pi, const int *pinv) {",
           "    int64_t x;"]
    out += [f"    x = {e}; if (x != best[{s}]) return x < best[{s}];" for s, e in sorted(moving)]
    out += ["    return 0;", "}", "",
            "static void cc_canon_brute(int64_t *v) {",
            f"    int pi[CC_CANON_NC], pinv[CC_CANON_NC], perm[{total}], i;",
            "    int64_t best[CC_CANON_N];",
            "    for (i = 0; i < CC_CANON_NC; i++) pi[i] = pinv[i] = i;"]
    out += [f"    perm[{starts[k] + i}] = {c};" for k, g in enumerate(lay.groups) for i, c in enumerate(g)]
    out += ["    memcpy(best, v, sizeof best);  /* the identity renaming */",
            "    for (;;) {"]
    # an odometer over the groups: the first group's permutation advances fastest
    out += [f"        if (cc_canon_next_perm(perm + {st}, {len(g)})) goto next;" for st, g in zip(starts, lay.groups)]
    out += ["        break;", "    next:"]
    out += [f"        pi[{c}] = perm[{starts[k] + i}]; pinv[perm[{starts[k] + i}]] = {c};"
            for k, g in enumerate(lay.groups) for i, c in enumerate(g)]
    out += ["        if (cc_canon_renamed_less(v, best, pi, pinv)) cc_canon_rename(v, best, pi);",
            "    }",
            "    memcpy(v, best, sizeof best);",
            "}", ""]
    return out


# -- with tasks: TaskCanon of checker/explore/symmetry.py, in C -------------------------------
def _c_tasks(model: "Model", lay: Layout) -> list[str]:
    """``cc_canonical`` for a spec with tasks: ``TaskCanon.canonical`` over the flat vector.

    The keys are TaskCanon's tuples laid flat: a task key is ``KT`` ints (tag, plain, scalar_at, fixed_at,
    own, current), a CPU key ``KO`` ints and then its tasks' keys sorted, so its length varies; every part
    has a fixed length, so comparing the flat vectors slot by slot, the shorter first when one is a prefix
    of the other, is Python's tuple order. NOBODY is -1 and an own pointer naming a group actor is -2, as
    in the Python. The C assumes what the Python needs to run at all: every ``task_cpu`` names a CPU."""
    tc = model.symmetry.tasks
    off, names = offsets(model), model.var_names
    on, curr = off[names[tc.p_on]], off[names[tc.p_curr]]
    plain = [off[names[i]] for i in tc.plain]
    scal = [off[names[i]] for i in tc.scalar]
    own = [off[names[i]] for i in tc.own_ptr]
    fixed = list(tc.fixed)
    ko = len(plain) + len(scal) + len(own) * len(fixed) + len(own)
    kt, nt = ko + 2, len(tc.tasks)
    kc = ko + nt * kt
    cgroups, tgroups = [list(g) for g in tc.cpu_groups], [list(g) for g in tc.task_groups]
    cstarts = list(itertools.accumulate([0] + [len(g) for g in cgroups]))
    tstarts = list(itertools.accumulate([0] + [len(g) for g in tgroups]))
    ncg, ntg = max(1, cstarts[-1]), max(1, tstarts[-1])
    tag = [tc.tag.get(a, 0) for a in range(lay.nc)]
    in_groups = sorted(tc.in_groups)

    out = _C_PERM_HELPERS + _C_LESS + [
        f"#define CC_TC_KO {ko}", f"#define CC_TC_KT {kt}", f"#define CC_TC_KC {kc}", f"#define CC_TC_NT {nt}",
        f"static const int cc_tc_tasks[CC_TC_NT] = {{{', '.join(map(str, tc.tasks))}}};",
        f"static const int64_t cc_tc_tag[CC_CANON_NC] = {{{', '.join(map(str, tag))}}};",
        "",
        "typedef struct {",
        "    int64_t t[CC_CANON_NC][CC_TC_KT];  /* a task's key */",
        "    int64_t c[CC_CANON_NC][CC_TC_KC];  /* a CPU's key, of length cl */",
        "    int cl[CC_CANON_NC];",
        "} cc_tc_keys;",
        "",
        "/* <0, 0, >0: Python's order of two tuples laid flat (a prefix first). */",
        "static int cc_tc_lex(const int64_t *a, int la, const int64_t *b, int lb) {",
        "    int i, n = la < lb ? la : lb;",
        "    for (i = 0; i < n; i++) if (a[i] != b[i]) return a[i] < b[i] ? -1 : 1;",
        "    return la < lb ? -1 : la > lb;",
        "}",
        "",
        "/* TaskCanon._own: actor a's (plain, scalar_at, fixed_at, own) into k; 1 when an own pointer names a",
        "   group actor (written -2). */",
        "static int cc_tc_own(const int64_t *v, int a, int64_t *k) {",
        "    int amb = 0, n = 0;",
        "    int64_t x;",
        "    (void)v; (void)a; (void)k; (void)x; (void)n;",
    ]
    out += [f"    k[n++] = v[{p} + a];" for p in plain]
    out += [f"    k[n++] = v[{s}] == a;" for s in scal]
    out += [f"    k[n++] = v[{q + d}] == a;" for q in own for d in fixed]
    member = " || ".join(f"x == {a}" for a in in_groups) or "0"
    for q in own:
        out += [f"    x = v[{q} + a];",
                f"    if ({member}) {{ x = -2; amb = 1; }}",
                "    k[n++] = x;"]
    out += ["    return amb;", "}", "",
            "/* TaskCanon.keys: every task's and CPU's key; 1 when the state is ambiguous. */",
            "static int cc_tc_keys_of(const int64_t *v, cc_tc_keys *K) {",
            "    int amb = 0, i, j, n, x, u, lst[CC_TC_NT];",
            "    int64_t o;",
            "    for (i = 0; i < CC_TC_NT; i++) {",
            "        u = cc_tc_tasks[i];",
            "        K->t[u][0] = cc_tc_tag[u];",
            "        amb |= cc_tc_own(v, u, K->t[u] + 1);",
            f"        o = v[{on} + u];",
            f"        K->t[u][CC_TC_KT - 1] = (o >= 0 && o < CC_CANON_NC) ? v[{curr} + o] == u : 0;",
            "    }"]
    for c in tc.cpus:
        out += [f"    /* cpu {c} */",
                f"    amb |= cc_tc_own(v, {c}, K->c[{c}]);",
                "    for (n = 0, i = 0; i < CC_TC_NT; i++)",
                f"        if (v[{on} + cc_tc_tasks[i]] == {c}) lst[n++] = cc_tc_tasks[i];",
                "    for (i = 1; i < n; i++) {",
                "        x = lst[i];",
                "        for (j = i - 1; j >= 0 && cc_tc_lex(K->t[lst[j]], CC_TC_KT, K->t[x], CC_TC_KT) > 0; j--)"
                " lst[j + 1] = lst[j];",
                "        lst[j + 1] = x;",
                "    }",
                f"    for (i = 0; i < n; i++) memcpy(K->c[{c}] + CC_TC_KO + i * CC_TC_KT, K->t[lst[i]], "
                "sizeof(int64_t) * CC_TC_KT);",
                f"    K->cl[{c}] = CC_TC_KO + n * CC_TC_KT;",
                f"    o = v[{curr} + {c}];",
                f"    if (o != -1 && !(o >= 0 && o < CC_CANON_NC && v[{on} + o] == {c})) amb = 1;"]
    out += ["    return amb;", "}", "",
            "static int cc_tc_ccmp(const cc_tc_keys *K, int a, int b) {",
            "    return cc_tc_lex(K->c[a], K->cl[a], K->c[b], K->cl[b]);",
            "}", "",
            "/* A task's step-4 key: (new id of its CPU, its task key). */",
            "static int cc_tc_tcmp(const int64_t *v, const cc_tc_keys *K, const int *pi, int a, int b) {",
            f"    int64_t x = cc_canon_mu(pi, v[{on} + a]), y = cc_canon_mu(pi, v[{on} + b]);",
            "    if (x != y) return x < y ? -1 : 1;",
            "    return cc_tc_lex(K->t[a], CC_TC_KT, K->t[b], CC_TC_KT);",
            "}", "",
            "/* Stable insertion sorts (an element moves past strictly greater keys only), as sorted() is. */",
            "static void cc_tc_sort_cpus(const cc_tc_keys *K, int *ord, int n) {",
            "    int i, j, x;",
            "    for (i = 1; i < n; i++) {",
            "        x = ord[i];",
            "        for (j = i - 1; j >= 0 && cc_tc_ccmp(K, ord[j], x) > 0; j--) ord[j + 1] = ord[j];",
            "        ord[j + 1] = x;",
            "    }",
            "}", "",
            "static void cc_tc_sort_tasks(const int64_t *v, const cc_tc_keys *K, const int *pi, int *ord, int n) {",
            "    int i, j, x;",
            "    for (i = 1; i < n; i++) {",
            "        x = ord[i];",
            "        for (j = i - 1; j >= 0 && cc_tc_tcmp(v, K, pi, ord[j], x) > 0; j--) ord[j + 1] = ord[j];",
            "        ord[j + 1] = x;",
            "    }",
            "}", "",
            "/* The CPU orders of step 3 into cord, each group from its ids ascending. */",
            "static void cc_tc_cpu_orders(const cc_tc_keys *K, int *cord) {",
            "    (void)K; (void)cord;"]
    for g, st in zip(cgroups, cstarts):
        out += [f"    cord[{st + i}] = {a};" for i, a in enumerate(g)]
        out += [f"    cc_tc_sort_cpus(K, cord + {st}, {len(g)});"]
    out += ["}", "",
            "/* pi: identity, the i-th of each CPU group's order renamed to its i-th id. */",
            "static void cc_tc_cpu_pi(const int *cord, int *pi) {",
            "    int i;",
            "    (void)cord;",
            "    for (i = 0; i < CC_CANON_NC; i++) pi[i] = i;"]
    for g, st in zip(cgroups, cstarts):
        out += [f"    pi[cord[{st + i}]] = {a};" for i, a in enumerate(g)]
    out += ["}", "",
            "/* The task orders of step 4 into tord under the CPU renaming pi. */",
            "static void cc_tc_task_orders(const int64_t *v, const cc_tc_keys *K, const int *pi, int *tord) {",
            "    (void)v; (void)K; (void)pi; (void)tord;"]
    for g, st in zip(tgroups, tstarts):
        out += [f"    tord[{st + i}] = {a};" for i, a in enumerate(g)]
        out += [f"    cc_tc_sort_tasks(v, K, pi, tord + {st}, {len(g)});"]
    out += ["}", "",
            "static void cc_tc_task_pi(const int *tord, int *pi) {",
            "    (void)tord; (void)pi;"]
    for g, st in zip(tgroups, tstarts):
        out += [f"    pi[tord[{st + i}]] = {a};" for i, a in enumerate(g)]
    out += ["}", "",
            "/* Runs of equal keys (two or more) in each group's order: rs[k], rl[k] their start and length. */",
            "static int cc_tc_cpu_runs(const cc_tc_keys *K, const int *cord, int *rs, int *rl) {",
            "    int n = 0, i, j;",
            "    (void)K; (void)cord; (void)rs; (void)rl; (void)i; (void)j;"]
    for g, st in zip(cgroups, cstarts):
        out += [f"    for (i = {st}; i < {st + len(g)}; i = j) {{",
                f"        for (j = i + 1; j < {st + len(g)} && cc_tc_ccmp(K, cord[i], cord[j]) == 0; j++) {{}}",
                "        if (j - i > 1) { rs[n] = i; rl[n] = j - i; n++; }",
                "    }"]
    out += ["    return n;", "}", "",
            "static int cc_tc_task_runs(const int64_t *v, const cc_tc_keys *K, const int *pi, const int *tord, int *rs,"
            " int *rl) {",
            "    int n = 0, i, j;",
            "    (void)v; (void)K; (void)pi; (void)tord; (void)rs; (void)rl; (void)i; (void)j;"]
    for g, st in zip(tgroups, tstarts):
        out += [f"    for (i = {st}; i < {st + len(g)}; i = j) {{",
                f"        for (j = i + 1; j < {st + len(g)} && cc_tc_tcmp(v, K, pi, tord[i], tord[j]) == 0; j++) {{}}",
                "        if (j - i > 1) { rs[n] = i; rl[n] = j - i; n++; }",
                "    }"]
    out += ["    return n;", "}", "",
            "static void cc_canonical(int64_t *v) {",
            "    static __thread cc_tc_keys K;  /* large: one per search thread */",
            f"    int pi[CC_CANON_NC], cpi[CC_CANON_NC], cord[{ncg}], tord[{ntg}], crs[{ncg}], crl[{ncg}], trs[{ntg}],"
            f" trl[{ntg}], ncr, ntr, r, have = 0;",
            "    int64_t w[CC_CANON_N], best[CC_CANON_N];",
            "    int amb = cc_tc_keys_of(v, &K);",
            "    (void)cc_tc_sort_cpus; (void)cc_tc_sort_tasks;  /* unused when a kind has no group */",
            "    cc_tc_cpu_orders(&K, cord);",
            "    if (!amb) {  /* step 5: one renaming */",
            "        cc_tc_cpu_pi(cord, pi);",
            "        cc_tc_task_orders(v, &K, pi, tord);",
            "        cc_tc_task_pi(tord, pi);",
            "        cc_canon_rename(v, w, pi);",
            "        memcpy(v, w, sizeof w);",
            "        return;",
            "    }",
            "    /* ambiguous: the least state over the orders that permute runs of equal keys only; an odometer",
            "       over the CPU runs, and within each CPU order one over the task runs */",
            "    ncr = cc_tc_cpu_runs(&K, cord, crs, crl);",
            "    for (;;) {",
            "        cc_tc_cpu_pi(cord, cpi);",
            "        cc_tc_task_orders(v, &K, cpi, tord);",
            "        ntr = cc_tc_task_runs(v, &K, cpi, tord, trs, trl);",
            "        for (;;) {",
            "            memcpy(pi, cpi, sizeof pi);",
            "            cc_tc_task_pi(tord, pi);",
            "            cc_canon_rename(v, w, pi);",
            "            if (!have || cc_canon_less(w, best)) { memcpy(best, w, sizeof best); have = 1; }",
            "            for (r = 0; r < ntr; r++) if (cc_canon_next_perm(tord + trs[r], trl[r])) break;",
            "            if (r == ntr) break;",
            "        }",
            "        for (r = 0; r < ncr; r++) if (cc_canon_next_perm(cord + crs[r], crl[r])) break;",
            "        if (r == ncr) break;",
            "    }",
            "    memcpy(v, best, sizeof best);",
            "}", ""]
    return out
