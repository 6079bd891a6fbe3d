# SPDX-License-Identifier: GPL-2.0-only
"""Partial-order reduction for the compiled search: stubborn sets from each step's read and write sets.

What is preserved: every invariant and ``sometimes`` verdict and every
deadlock (and the context rules' events), not trace length: a trace is the
shortest in the reduced graph, which may be longer than the shortest.

**Static facts, per step** (one step = one action on one CPU with one
choice, ``Lowered.steps``), from its lowered terms:

- ``R(t)``: the slots its guard, new values and checks read;
  ``G(t)`` those of its guard alone; ``W(t)``: the slots it may write.
- ``t`` and ``u`` are *dependent* when ``W(t)`` meets ``R(u) | W(u)`` or
  ``W(u)`` meets ``R(t)``. Independent steps commute and neither enables
  nor disables the other: neither writes what the other reads.
- ``t`` is *visible* when it writes a slot that a property reads, or that the
  interrupt-spin check reads, or when it can raise a context event (then its
  reads include the lock, interrupt and preemption slots the event tests).

**The stubborn set at a state** ``s`` (Valmari's strong stubborn sets), for a
seed step ``t0`` enabled at ``s``: the least set ``T`` containing ``t0`` with

- D1: for an enabled ``t`` in ``T``, every step dependent on ``t``;
- D2: for a disabled ``t`` in ``T``, every step that writes a slot of ``G(t)``
  (only those can enable it);
- V: if ``T`` holds an enabled visible step, every visible step.

The successors taken are those of the enabled steps of ``T``; the runtime
tries each enabled step as the seed and keeps the smallest such set. D1 and
D2 preserve every deadlock; with V, and the cycle proviso below, every
reachable valuation of the visible slots is reached, so every invariant,
``sometimes`` and event verdict stays.

**Cycle proviso, for breadth-first search.** A state is expanded in full when
one of the chosen successors is already stored with an index no greater
than its own (expanded already, or itself). Every cycle of the reduced
graph then holds a fully expanded state: take the cycle's state stored
first; its predecessor on the cycle was stored later, and when it was
expanded that successor was stored with a smaller index. So no enabled step
is postponed forever around a cycle (the "ignoring" problem).

With symmetry the sets are computed on the canonical state, and the
proviso looks up canonical successors; the tests compare every verdict with
the unreduced search.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from checker.export.terms import Kids, symbols

if TYPE_CHECKING:
    from checker.compiled.lower import Lowered

#: Past this many steps the dependency tables (steps^2 bits) are not generated: the search runs unreduced.
MAX_STEPS = 4096


class Sets:
    """Per step: reads, guard reads, writes (slot indices); which steps are visible; why POR is off, if it is."""

    def __init__(self, low: "Lowered", kids: Kids, event_steps: set[int]):
        index = {name: i for i, name in enumerate(low.slot_names)}

        def slots(terms: list) -> set[int]:
            out: set[int] = set()
            for z in terms:
                out |= {index[x] for x in symbols(z, kids) if x in index}
            return out

        r = low.rules or {}
        event_reads: set[int] = {pl for _, pl in r.get("locks", ())}
        for row in (r.get("irqs") or []) + (r.get("preempt") or []):
            event_reads |= set(row)
        self.guard = [slots([st.guard]) for st in low.steps]
        self.reads = [slots([st.guard] + [z for _, z in st.updates] + [c for c, _ in st.checks])
                      | (event_reads if st.index in event_steps else set()) for st in low.steps]
        self.writes = [{i for i, _ in st.updates} for st in low.steps]
        seen: set[int] = set()
        for _, _, term in low.props:
            seen |= slots([term])
        if r.get("irq_actions") and r.get("locks"):  # cc_irq_spins reads these at every expanded state
            seen |= event_reads | slots([t for _, t in r.get("on") or []])
            seen |= set(r["curr"].values() if isinstance(r.get("curr"), dict) else r.get("curr") or [])
            for st in low.steps:
                if st.action in r["irq_actions"]:
                    seen |= self.reads[st.index]
        self.visible_slots = seen
        self.visible = [bool(w & seen) or st.index in event_steps for st, w in zip(low.steps, self.writes)]
        self.off = (f"{len(low.steps)} steps, past {MAX_STEPS}" if len(low.steps) > MAX_STEPS else None)

    def dependent(self, t: int, u: int) -> bool:
        return bool(self.writes[t] & (self.reads[u] | self.writes[u]) or self.writes[u] & self.reads[t])

    def enablers(self, t: int) -> set[int]:
        return {u for u, w in enumerate(self.writes) if w & self.guard[t]}


def c_ample(sets: Sets) -> list[str]:
    """``cc_por_select``'s tables and code; the runtime calls it after packing a state's successors."""
    n = len(sets.reads)
    nw = max(1, (n + 63) // 64)

    def bits(members: set[int] | list[int]) -> str:
        words = [0] * nw
        for u in members:
            words[u // 64] |= 1 << (u % 64)
        return "{" + ", ".join(f"UINT64_C({w:#x})" for w in words) + "}"

    dep = [bits({u for u in range(n) if sets.dependent(t, u)} | {t}) for t in range(n)]
    ena = [bits(sets.enablers(t)) for t in range(n)]
    vis = bits([t for t in range(n) if sets.visible[t]])
    return [
        "/* ---- partial-order reduction: checker/compiled/ample.py ---- */",
        "#define CC_POR 1",
        f"#define CC_POR_W {nw}",
        f"static const uint64_t cc_por_dep[CC_NSTEPS][CC_POR_W] = {{{', '.join(dep)}}};",
        f"static const uint64_t cc_por_ena[CC_NSTEPS][CC_POR_W] = {{{', '.join(ena)}}};",
        f"static const uint64_t cc_por_vis[CC_POR_W] = {vis};",
        "",
        "/* The stubborn set grown from seed t0 (D1, D2, V of ample.py) into T; its enabled steps counted. */",
        "static int cc_por_close(int t0, const uint64_t *en, uint64_t *T, int limit) {",
        "    uint64_t done[CC_POR_W], vis_in = 0;",
        "    int w, changed = 1, count = 0;",
        "    memset(T, 0, sizeof(uint64_t) * CC_POR_W);",
        "    memset(done, 0, sizeof done);",
        "    T[t0 / 64] |= UINT64_C(1) << (t0 % 64);",
        "    while (changed) {",
        "        changed = 0;",
        "        for (w = 0; w < CC_POR_W; w++) {",
        "            uint64_t todo = T[w] & ~done[w];",
        "            while (todo) {",
        "                int b = __builtin_ctzll(todo), t = w * 64 + b, k;",
        "                const uint64_t *add = (en[w] >> b) & 1 ? cc_por_dep[t] : cc_por_ena[t];",
        "                todo &= todo - 1;",
        "                done[w] |= UINT64_C(1) << b;",
        "                for (k = 0; k < CC_POR_W; k++) if (add[k] & ~T[k]) { T[k] |= add[k]; changed = 1; }",
        "            }",
        "        }",
        "        for (w = 0; w < CC_POR_W && !vis_in; w++) vis_in = T[w] & en[w] & cc_por_vis[w];",
        "        if (vis_in) for (w = 0; w < CC_POR_W; w++) if (cc_por_vis[w] & ~T[w]) { T[w] |= cc_por_vis[w]; changed = 1; }",
        "        for (count = 0, w = 0; w < CC_POR_W; w++) count += __builtin_popcountll(T[w] & en[w]);",
        "        if (count >= limit) return count;  /* no better than the best so far */",
        "    }",
        "    return count;",
        "}",
        "",
    ]


def c_select() -> str:
    """``cc_por_select``: put at the runtime's POR mark, after the hash table and the successor buffers."""
    return r"""
/* ---- partial-order reduction (checker/compiled/ample.py): the successors of the state at idx cut to the
   smallest stubborn set's, unless the cycle proviso asks for all of them ---- */
static uint64_t por_full, por_reduced;  /* states expanded in full, and reduced */

/* The index of a packed state if stored, else NONE (store_packed's probe, without storing). */
static uint32_t por_lookup(const uint64_t *words, uint64_t h) {
    uint64_t tag = h & 0xffffffff00000000ULL, e;
    size_t mask = tab_size - 1, p = TAB_POS(h, mask);
    while ((e = tab[p]) != 0) {
        if ((e & 0xffffffff00000000ULL) == tag) {
            uint32_t j = (uint32_t)e - 1;
            if (memcmp(arena + (size_t)j * L_stride, words, L_stride) == 0) return j;
        }
        p = (p + 1) & mask;
    }
    return NONE;
}

#define POR_IN(set, t) (((set)[(t) / 64] >> ((t) % 64)) & 1)

static int cc_por_select(uint32_t idx, int n) {
    uint64_t en[CC_POR_W], T[CC_POR_W], best[CC_POR_W];
    int j, k, best_n = n;
    if (n <= 1) return n;
    memset(en, 0, sizeof en);
    for (j = 0; j < n; j++) en[succ_lab[j] / 64] |= UINT64_C(1) << (succ_lab[j] % 64);
    for (j = 0; j < n && best_n > 1; j++) {  /* every enabled step as the seed; the smallest set kept */
        int c = cc_por_close((int)succ_lab[j], en, T, best_n);
        if (c < best_n) { best_n = c; memcpy(best, T, sizeof T); }
    }
    if (best_n >= n) { por_full++; return n; }
    /* the cycle proviso: a chosen successor stored at or before this state */
    for (j = 0; j < n; j++) {
        uint32_t at;
        if (!POR_IN(best, succ_lab[j])) continue;
        at = por_lookup(pk_buf + (size_t)j * L_words, pk_hash[j]);
        if (at != NONE && at <= idx) { por_full++; return n; }
    }
    for (j = 0, k = 0; j < n; j++) {
        if (!POR_IN(best, succ_lab[j])) continue;
        if (k != j) {
            memcpy(succ_buf + (size_t)k * CC_NSLOTS, succ_buf + (size_t)j * CC_NSLOTS, sizeof(int64_t) * CC_NSLOTS);
            memcpy(pk_buf + (size_t)k * L_words, pk_buf + (size_t)j * L_words, sizeof(uint64_t) * (size_t)L_words);
            succ_lab[k] = succ_lab[j];
            pk_hash[k] = pk_hash[j];
        }
        k++;
    }
    por_reduced++;
    return k;
}
"""
