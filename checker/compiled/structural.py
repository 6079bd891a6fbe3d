# SPDX-License-Identifier: GPL-2.0-only
"""A declared structural symmetry's canonical form, as C (``Interchangeable``, checker/explore/structure.py).

The interpreter's form is the least state over every element of the
declared group; this is the same over the flat vector (``flatten``'s
layout, checker/compiled/canonical.py): slots compare as signed int64 in
slot order, which is the Python tuple order of the state.

**A renaming** ``pi`` here is an int vector of ``NC + NA`` entries: ``pi[c]``
the new id of actor ``c``, then for each Array with moved entries (in
variable order) the new index of each of its entries. ``pi(v)`` moves every
per-actor row and those Arrays' entries, then renames CPU-id values (scalars
and per-actor rows) through the actor part, as ``Symmetry.permute`` does.

**The canonical form.** Only *moving* slots can differ between ``pi(v)``
for two elements: the rows of moved actors, the moved Array entries, and
every CpuId slot. For each element ``e`` a table gives the slot each moving
slot's value comes from (``src``); the search keeps the least vector of
moving values, comparing an element's values slot by slot and stopping at
the first that differs, so an element that loses early costs a few loads.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from checker.compiled.slots import offsets, widths

if TYPE_CHECKING:
    from checker.language.compile import Model


def _arrays(model: "Model") -> list[str]:
    """The Arrays whose entries a renaming moves, in variable order."""
    st = model.symmetry.structure
    return [n for n in model.var_names if st is not None and n in st.moved_slots]


def map_rows(model: "Model", maps: list[dict]) -> list[list[int]]:
    """The sampled renamings as C int rows: actors, then (structural) each moved Array's entries."""
    nc = model.ncpus_total
    out = []
    for mp in maps:
        row = [mp.get(c, c) for c in range(nc)]
        slots = getattr(mp, "slots", {})
        for n in _arrays(model):
            moves = slots.get(model.index[n], {})
            row += [moves.get(i, i) for i in range(model.arrays[n])]
        out.append(row)
    return out


def _source(model: "Model", n: int, row: list[int]) -> list[int]:
    """For the renaming ``row`` (``map_rows``' form): the slot each slot of ``pi(v)`` takes its value from."""
    nc = model.ncpus_total
    off = offsets(model)
    src = list(range(n))
    for name in model.var_names:
        if name in model.percpu:
            r = off[name]
            for c in range(nc):
                src[r + row[c]] = r + c
    at = nc
    for name in _arrays(model):
        o = off[name]
        for i in range(model.arrays[name]):
            src[o + row[at + i]] = o + i
        at += model.arrays[name]
    return src


def c_structural(model: "Model") -> str:
    """C source of ``cc_canon_rename`` and ``cc_canonical`` for a model with an active structural symmetry."""
    sym = model.symmetry
    st = sym.structure
    off = offsets(model)
    n = sum(1 if w is None else w for w in widths(model))
    nc = model.ncpus_total
    names = model.var_names
    rows = [off[names[i]] for i in sym.percpu]
    scal = [off[names[i]] for i in sym.cpu_scalar]
    cper = [off[names[i]] for i in sym.cpu_percpu]
    arrays = _arrays(model)
    na = sum(model.arrays[a] for a in arrays)
    elems = map_rows(model, st.elements)
    ident = set(scal) | {q + c for q in cper for c in range(nc)}
    moving = sorted(ident | {r + c for r in rows for c in sym.moved_actors}
                    | {off[a] + i for a in arrays for i in st.moved_slots[a]})
    srcs = [_source(model, n, e) for e in elems]
    out = ["#include <stdint.h>", "#include <string.h>", "",
           f"/* structural canonical form of {model.name} at {model.params}: checker/compiled/structural.py */",
           f"#define CC_CANON_N {n}", f"#define CC_CANON_NC {nc}", f"#define CC_SYM_W {nc + na}",
           f"#define CC_ST_G {len(elems)}", f"#define CC_ST_M {len(moving)}", "",
           "static inline int64_t cc_canon_mu(const int *pi, int64_t x) {",
           "    return (x >= 0 && x < CC_CANON_NC) ? (int64_t)pi[x] : x;  /* NOBODY and the rest stay */",
           "}", "",
           "/* w = pi(v): per-actor rows and owned Array entries moved, CPU-id values renamed. */",
           "static void cc_canon_rename(const int64_t *v, int64_t *w, const int *pi) {",
           "    int c;",
           "    (void)c;",
           "    memcpy(w, v, sizeof(int64_t) * CC_CANON_N);"]
    out += [f"    for (c = 0; c < CC_CANON_NC; c++) w[{r} + pi[c]] = v[{r} + c];" for r in rows]
    at = nc
    for a in arrays:
        out.append(f"    for (c = 0; c < {model.arrays[a]}; c++) w[{off[a]} + pi[{at} + c]] = v[{off[a]} + c];  /* {a} */")
        at += model.arrays[a]
    out += [f"    w[{s}] = cc_canon_mu(pi, v[{s}]);" for s in scal]
    out += [f"    for (c = 0; c < CC_CANON_NC; c++) w[{q} + c] = cc_canon_mu(pi, w[{q} + c]);" for q in cper]
    out += ["}", "",
            f"static const int cc_st_mov[CC_ST_M] = {{{', '.join(map(str, moving))}}};",
            f"static const unsigned char cc_st_isid[CC_ST_M] = {{{', '.join(str(int(x in ident)) for x in moving)}}};",
            "static const int cc_st_pi[CC_ST_G][CC_CANON_NC] = {"
            + ", ".join("{" + ", ".join(map(str, e[:nc])) + "}" for e in elems) + "};",
            "static const int cc_st_src[CC_ST_G][CC_ST_M] = {"
            + ", ".join("{" + ", ".join(str(sr[x]) for x in moving) + "}" for sr in srcs) + "};",
            "",
            "/* The least pi(v) over the group (element 0 is the identity), moving slots only. */",
            "static void cc_canonical(int64_t *v) {",
            "    int64_t best[CC_ST_M], x = 0;",
            "    int e, i;",
            "    (void)cc_canon_rename;  /* the runtime's symmetry check uses it; a bare cc_canonical need not */",
            "    for (i = 0; i < CC_ST_M; i++) best[i] = v[cc_st_mov[i]];",
            "    for (e = 1; e < CC_ST_G; e++) {",
            "        const int *src = cc_st_src[e], *pi = cc_st_pi[e];",
            "        for (i = 0; i < CC_ST_M; i++) {",
            "            x = v[src[i]];",
            "            if (cc_st_isid[i]) x = cc_canon_mu(pi, x);",
            "            if (x != best[i]) break;",
            "        }",
            "        if (i == CC_ST_M || x > best[i]) continue;",
            "        best[i] = x;  /* smaller from slot i on: take the rest */",
            "        for (i++; i < CC_ST_M; i++) {",
            "            x = v[src[i]];",
            "            best[i] = cc_st_isid[i] ? cc_canon_mu(pi, x) : x;",
            "        }",
            "    }",
            "    for (i = 0; i < CC_ST_M; i++) v[cc_st_mov[i]] = best[i];",
            "}", ""]
    return "\n".join(out)


def rename_flat(model: "Model", v: list[int], row: list[int]) -> list[int]:
    """``pi(v)`` over the flat vector for a renaming in ``map_rows``' form: the C ``cc_canon_rename``."""
    nc = model.ncpus_total
    off = offsets(model)
    names = model.var_names
    sym = model.symmetry
    w = list(v)
    for name in names:
        if name in model.percpu:
            for c in range(nc):
                w[off[name] + row[c]] = v[off[name] + c]
    at = nc
    for name in _arrays(model):
        for i in range(model.arrays[name]):
            w[off[name] + row[at + i]] = v[off[name] + i]
        at += model.arrays[name]

    def mu(x: int) -> int:
        return row[x] if 0 <= x < nc else x

    for i in sym.cpu_scalar:
        w[off[names[i]]] = mu(v[off[names[i]]])
    for i in sym.cpu_percpu:
        q = off[names[i]]
        for c in range(nc):
            w[q + c] = mu(w[q + c])
    return w


def reference_structural(model: "Model", v: list[int]) -> list[int]:
    """The canonical form as the module docstring writes it: the least renamed vector over the group."""
    return min(rename_flat(model, v, row) for row in map_rows(model, model.symmetry.structure.elements))
