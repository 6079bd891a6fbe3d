# SPDX-License-Identifier: GPL-2.0-only
"""Partial-order reduction for the compiled search: stubborn sets from each step's read and write sets,
refined by Z3 on the lowered terms.

What is preserved: every invariant and ``sometimes`` verdict, every deadlock,
every context event and every check the interpreter makes while applying a
step; not trace length: a trace is the shortest in the reduced graph, which
may be longer than the shortest.

**Static facts, per step** (one step = one action on one CPU with one
choice, ``Lowered.steps``), from its lowered terms:

- ``R(t)``: the slots its guard, new values and checks read;
  ``G(t)`` those of its guard alone; ``W(t)``: the slots it may write.
- **The assumption** ``A``: every invariant not declared ``expect="violated"``.
  The facts below need only hold at states where ``A`` holds; if the reduced
  search finds a state where it does not, the point is explored again
  without reduction (``compiled_search``), so the assumption is never
  believed unchecked.
- ``t`` and ``u`` are *dependent* unless ``W(t)`` misses ``R(u) | W(u)`` and
  ``W(u)`` misses ``R(t)``, or Z3 shows that at every ``A``-state where both
  are enabled neither disables the other and both orders end in the same
  state (two adds to one ghost total commute, for instance). A step that
  raises a context event or has a check that can fail keeps the syntactic
  relation (the event's condition is not a term here).
- ``u`` *may enable* ``t`` when ``W(u)`` meets ``G(t)`` and Z3 finds an
  ``A``-state where ``t`` is disabled, ``u`` enabled, and ``t`` enabled after ``u``.
- The *interesting* steps of a property (Valmari's reachability condition,
  in place of the visibility proviso, which would have every step that
  writes a slot a property reads): for an invariant ``P``, the steps that
  can go from an ``A``-state where ``P`` holds to one where it does not; for
  ``sometimes Q``, those that can make ``Q`` true; for the interrupt-spin
  check, those that can make it true; for an event, or a check the
  interpreter makes, the steps that raise it. Every path to a state that
  decides a property takes one of its interesting steps.

**The stubborn set at a state** ``s`` (Valmari's strong stubborn sets): the
least set ``T`` holding a seed step ``t0`` enabled at ``s`` and the
interesting steps of every property, event and check still undecided (the
members of ``A`` always: they must hold throughout), with

- D1: for an enabled ``t`` in ``T``, every step dependent on ``t``;
- D2: for a disabled ``t`` in ``T``, every step that may enable ``t``.

The successors taken are those of the enabled steps of ``T``; the runtime
tries each enabled step as the seed and keeps the smallest such set. D1 and
D2 preserve every deadlock. With the interesting steps in every set, a
state deciding a property is reached: along a shortest path to it from an
expanded state, the first step in ``T`` can be taken first (D1, D2) and the
rest of the path is shorter (Kristensen, Schmidt and Valmari, "Question-guided
stubborn set methods for state properties", 2006); that argument needs no
cycle proviso, which is kept all the same:

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

import re
from typing import TYPE_CHECKING

import z3

from checker.export.terms import Kids, symbols
from checker.types import NOBODY

if TYPE_CHECKING:
    from checker.compiled.lower import Lowered

#: Past this many steps the dependency tables (steps^2 bits) are not generated: the search runs unreduced.
MAX_STEPS = 4096
#: Z3's resource limit for each question (deterministic, unlike a timeout: the same reduction on a busy
#: machine); an answer not given within it is the cautious one.
Z3_RLIMIT = 300_000
#: Questions asked at most for one point (deterministic); past them every answer is the cautious one.
MAX_QUESTIONS = 3_000


class Sets:
    """Per step: reads, guard reads, writes (slot indices), dependence, enablers; per property and event its
    interesting steps; which properties form the assumption; why POR is off, if it is."""

    def __init__(self, low: "Lowered", kids: Kids, event_steps: dict[int, set[int]], events: list[tuple]):
        index = {name: i for i, name in enumerate(low.slot_names)}
        n = len(low.steps)

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
        self.off = f"{n} steps, past {MAX_STEPS}" if n > MAX_STEPS else None
        self.props = [name for name, _, _ in low.props]
        self.n_events = 1 + max((e for es in event_steps.values() for e in es), default=-1)
        if self.off is not None:
            return
        q = _Questions(low, index)
        expect = {p.name: getattr(p, "expect", "holds") for p in low.model.properties}
        #: the assumption: property indices of the invariants expected to hold
        self.assumed = [k for k, (name, kind, _) in enumerate(low.props)
                        if kind == "invariant" and expect.get(name, "holds") != "violated"]
        q.assume([low.props[k][2] for k in self.assumed])
        # interesting steps: per property, per event, and those whose checks can fail (always)
        self.interesting: list[set[int]] = []
        for _name, kind, term in low.props:
            reads = slots([term])
            goal_before, goal_after = (term, False) if kind == "invariant" else (term, True)
            self.interesting.append({t for t in range(n) if self.writes[t] & reads
                                     and q.can_reach(t, goal_before, goal_after)})
        conds = _event_conditions(low, q, event_steps, events)
        self.event_interesting = [{t for t, es in event_steps.items() if e in es
                                   and ((t, e) not in conds or q._sat(low.steps[t].guard, conds[t, e]))}
                                  for e in range(self.n_events)]
        self.checked = {st.index for st in low.steps if st.checks and q.check_can_fail(st)}
        spin = _irq_spin_term(low, q) if r.get("irq_actions") and r.get("locks") else None
        if spin is not None:
            reads = slots([spin])
            self.spin = {t for t in range(n) if self.writes[t] & reads and q.can_reach(t, spin, True)}
        else:  # no interrupt action takes a lock (no check), or the check is not a term here (every step)
            self.spin = set(range(n)) if r.get("irq_actions") and r.get("locks") else set()
        # dependence and enabling, syntactic first, then Z3; an event's condition and a check are read in the
        # state a step starts from, so a step writing what they read stays dependent
        cond = [(event_reads if t in event_steps else set()) | slots([c for c, _ in st.checks])
                for t, st in enumerate(low.steps)]
        self.dep = [set() for _ in range(n)]
        for t in range(n):
            self.dep[t].add(t)
            for u in range(t + 1, n):
                if not self._syntactic(t, u):
                    continue
                if self.writes[u] & cond[t] or self.writes[t] & cond[u] or not q.commute(t, u):
                    self.dep[t].add(u)
                    self.dep[u].add(t)
        self.ena = [{u for u in range(n) if self.writes[u] & self.guard[t] and q.may_enable(u, t)}
                    for t in range(n)]
        self.questions = q.asked

    def _syntactic(self, t: int, u: int) -> bool:
        return bool(self.writes[t] & (self.reads[u] | self.writes[u]) or self.writes[u] & self.reads[t])

    def dependent(self, t: int, u: int) -> bool:
        return u in self.dep[t]

    def enablers(self, t: int) -> set[int]:
        return self.ena[t]


class _Questions:
    """Z3 questions about the lowered steps, each asked at the states where the assumption holds (and every
    slot with a declared domain is in it). An answer not given within Z3_RLIMIT, or past MAX_QUESTIONS, is
    the cautious one."""

    def __init__(self, low: "Lowered", index: dict[str, int]):
        self.low = low
        self.consts: dict[int, z3.ExprRef] = {}
        terms = [st.guard for st in low.steps] + [z for st in low.steps for _, z in st.updates] \
            + [c for st in low.steps for c, _ in st.checks] + [p for _, _, p in low.props]
        terms += [t for _, t in (low.rules or {}).get("on") or []]
        seen: set[int] = set()
        todo = list(terms)
        while todo:
            x = todo.pop()
            if x.get_id() in seen:
                continue
            seen.add(x.get_id())
            ch = x.children()
            if not ch and x.decl().kind() == z3.Z3_OP_UNINTERPRETED and x.decl().name() in index:
                self.consts[index[x.decl().name()]] = x
            todo.extend(ch)
        self.solver = z3.Solver()
        self.solver.set("rlimit", Z3_RLIMIT)
        for i, d in enumerate(low.domains):
            if d is not None and i in self.consts and self.consts[i].is_int():
                self.solver.add(self.consts[i] >= d[0], self.consts[i] <= d[1])
        _value_sets(low, self.consts, self.solver)
        self.asked = 0

    def slot(self, i: int) -> z3.ExprRef | None:
        return self.consts.get(i)

    def assume(self, terms: list) -> None:
        if terms:
            self.solver.add(z3.And(*terms))

    def after(self, term: z3.ExprRef, t: int) -> z3.ExprRef:
        """``term`` evaluated in the state after step t."""
        pairs = [(self.consts[i], z) for i, z in self.low.steps[t].updates if i in self.consts]
        return z3.substitute(term, *pairs) if pairs else term

    def _sat(self, *fs: z3.ExprRef) -> bool:
        """Whether the formulas can hold together (unknown counts as yes: the cautious answer)."""
        if self.asked >= MAX_QUESTIONS:
            return True
        self.asked += 1
        self.solver.push()
        self.solver.add(*fs)
        r = self.solver.check()
        self.solver.pop()
        return r != z3.unsat

    def can_reach(self, t: int, goal: z3.ExprRef, value: bool) -> bool:
        """Whether step t can take a state where ``goal`` is ``not value`` to one where it is ``value``."""
        st = self.low.steps[t]
        g1 = self.after(goal, t)
        if value:
            return self._sat(st.guard, z3.Not(goal), g1)
        return self._sat(st.guard, goal, z3.Not(g1))

    def check_can_fail(self, st) -> bool:
        return self._sat(st.guard, z3.Not(z3.And(*[c for c, _ in st.checks])))

    def commute(self, t: int, u: int) -> bool:
        """Whether t and u, both enabled, neither disable the other and end in the same state in both orders."""
        a, b = self.low.steps[t], self.low.steps[u]
        ua, ub = dict(a.updates), dict(b.updates)
        diff = [z3.Not(self.after(a.guard, u)), z3.Not(self.after(b.guard, t))]
        for i in set(ua) | set(ub):
            x_ab = self.after(ub[i], t) if i in ub else ua[i]  # t first, then u
            x_ba = self.after(ua[i], u) if i in ua else ub[i]  # u first, then t
            diff.append(x_ab != x_ba)
        return not self._sat(a.guard, b.guard, z3.Or(*diff))

    def may_enable(self, u: int, t: int) -> bool:
        a = self.low.steps[t]
        return self._sat(z3.Not(a.guard), self.low.steps[u].guard, self.after(a.guard, u))


def _value_sets(low: "Lowered", consts: dict[int, z3.ExprRef], solver: z3.Solver) -> dict[int, set[int]]:
    """Per slot whose every update is a constant, or a choice between constants and the slot's own value,
    the values it can hold (those and its initial ones): a fact of every reachable state, by induction
    (a task's CPU is one of the CPUs it can be moved to, not any CPU id). A second pass leaves out the
    branches of a choice that the step's guard and the first pass's facts rule out (the local of a CPU
    no task can run on keeps its initial value)."""
    from checker.compiled.lower import flatten

    init: dict[int, set[int]] = {}
    for vec in (flatten(low.model, s) for s in low.model.initial_states()):
        for i in consts:
            init.setdefault(i, set()).add(vec[i])

    def leaves(i: int, z: z3.ExprRef, guard: z3.BoolRef | None) -> set[int] | None:
        found: set[int] = set()
        todo = [z]
        while todo:
            x = todo.pop()
            if z3.is_int_value(x):
                found.add(x.as_long())
            elif z3.is_app_of(x, z3.Z3_OP_ITE):
                for branch, cond in ((x.arg(1), x.arg(0)), (x.arg(2), z3.Not(x.arg(0)))):
                    if guard is None or _possible(solver, guard, cond):
                        todo.append(branch)
            elif not x.eq(consts[i]):
                return None
        return found

    facts: dict[int, set[int]] = {}
    for second in (False, True):
        out = {i: set(v) for i, v in init.items() if consts[i].is_int()}
        for st in low.steps:
            for i, z in st.updates:
                if i in out:
                    got = leaves(i, z, st.guard if second else None)
                    if got is None:
                        del out[i]
                    else:
                        out[i] |= got
        for i, vals in out.items():
            solver.add(z3.Or(*[consts[i] == v for v in sorted(vals)]))
        for i, vals in out.items():  # (the second pass's sets are within the first's)
            facts[i] = facts[i] & vals if i in facts else vals
    return facts


def _possible(solver: z3.Solver, *fs: z3.ExprRef) -> bool:
    solver.push()
    solver.add(*fs)
    r = solver.check()
    solver.pop()
    return r != z3.unsat


def _irq_spin_term(low: "Lowered", q: _Questions) -> z3.ExprRef | None:
    """codegen ``cc_irq_spins`` as a term: an interrupt step that is disabled, and would be enabled with a
    lock its CPU's own code holds freed. None: a slot it needs is not a term here (every step then counts)."""
    r = low.rules
    on = dict(r.get("on") or [])
    out = []
    for st in low.steps:
        if st.action not in r["irq_actions"] or st.cpu is None:
            continue
        c = st.cpu
        for _, pl in r["locks"]:
            lock = q.slot(pl)
            if lock is None:
                return None
            held = ([lock == c] if c not in on else [])
            if r.get("curr"):
                cur = q.slot(r["curr"][c])
                if cur is None:
                    return None
                held.append(lock == cur)
            held += [z3.And(lock == x, on[x] == c) for x in sorted(on)]
            if not held:
                continue
            freed = z3.substitute(st.guard, (lock, z3.IntVal(NOBODY))) if lock.is_int() else None
            if freed is None:
                return None
            out.append(z3.And(lock != NOBODY, z3.Or(*held), freed, z3.Not(st.guard)))
    return z3.Or(*out) if out else z3.BoolVal(False)


def _event_conditions(low: "Lowered", q: _Questions, event_steps: dict[int, set[int]], events: list[tuple]) -> dict:
    """(step, event) -> the condition under which the step raises the event, as a term, for the events of a
    lock taken (codegen ``_events``: the step's new lock value is its CPU, the old one is not; with
    interrupts on, for ``irqs_on_taken``; any, for ``irq_taken``). Events without a term here are left out:
    every step that can raise them stays interesting. ``events``: codegen ``events()``, in order."""
    r = low.rules or {}
    evs = {e: i for i, e in enumerate(events)}
    out = {}
    for t, es in event_steps.items():
        st = low.steps[t]
        c = st.cpu
        upd = dict(st.updates)
        for name, pl in r.get("locks", ()):
            lock = q.slot(pl)
            if lock is None or pl not in upd:
                continue
            taken = z3.And(upd[pl] == c, lock != c)
            e = evs.get(("irq_taken", name))
            if st.action in r["irq_actions"] and e in es:
                out[t, e] = taken
            e = evs.get(("irqs_on_taken", name))
            rows = [q.slot(row[c]) for row in r.get("irqs") or []]
            if st.action not in r["irq_actions"] and e in es and rows and None not in rows:
                out[t, e] = z3.And(taken, *[x == 0 for x in rows])
    return out


def event_steps(low: "Lowered", lines_of: dict[int, list[str]]) -> dict[int, set[int]]:
    """Per step, the context events its generated C can raise (codegen ``_events`` lines): a line that tests
    the step's new value of a lock slot (``t[pl]``) raises only where the step writes that slot."""
    out = {}
    for t, lines in lines_of.items():
        writes = {i for i, _ in low.steps[t].updates}
        evs = {int(x) for line in lines if all(int(pl) in writes for pl in re.findall(r"\bt\[(\d+)\]", line))
               for x in re.findall(r"cc_event\((\d+),", line)}
        if evs:
            out[t] = evs
    return out


def c_ample(sets: Sets) -> list[str]:
    """``cc_por_select``'s tables and code; the runtime calls it after packing a state's successors."""
    n = len(sets.reads)
    nw = max(1, (n + 63) // 64)

    def bits(members: set[int] | list[int]) -> str:
        words = [0] * nw
        for u in members:
            words[u // 64] |= 1 << (u % 64)
        return "{" + ", ".join(f"UINT64_C({w:#x})" for w in words) + "}"

    dep = [bits(sets.dep[t]) for t in range(n)]
    ena = [bits(sets.ena[t]) for t in range(n)]
    always = set(sets.checked)
    for k in sets.assumed:
        always |= sets.interesting[k]
    props = [bits(set() if k in sets.assumed else sets.interesting[k]) for k in range(len(sets.props))]
    events = [bits(e) for e in sets.event_interesting]
    assumed = [1 if k in sets.assumed else 0 for k in range(len(sets.props))]
    return [
        "/* ---- partial-order reduction: checker/compiled/ample.py ---- */",
        "#define CC_POR 1",
        f"#define CC_POR_W {nw}",
        f"static const uint64_t cc_por_dep[CC_NSTEPS][CC_POR_W] = {{{', '.join(dep)}}};",
        f"static const uint64_t cc_por_ena[CC_NSTEPS][CC_POR_W] = {{{', '.join(ena)}}};",
        "/* interesting steps: always (the assumption's invariants, checks that can fail), per property still",
        "   undecided, per event not yet raised, and while no interrupt spin is found */",
        f"static const uint64_t cc_por_always[CC_POR_W] = {bits(always)};",
        f"static const uint64_t cc_por_prop[CC_NPROPS + 1][CC_POR_W] = {{{', '.join(props + ['{0}'])}}};",
        f"static const uint64_t cc_por_event[CC_NEVENTS + 1][CC_POR_W] = {{{', '.join(events + ['{0}'])}}};",
        f"static const uint64_t cc_por_spin[CC_POR_W] = {bits(sets.spin)};",
        f"static const int cc_por_assumed[CC_NPROPS + 1] = {{{', '.join(map(str, assumed + [0]))}}};",
        "",
        "/* The stubborn set grown from seed t0 and the interesting steps I (D1, D2 of ample.py) into T; its",
        "   enabled steps counted (stopping at `limit`: no better than the best so far). */",
        "static int cc_por_close(int t0, const uint64_t *en, const uint64_t *I, uint64_t *T, int limit) {",
        "    uint64_t done[CC_POR_W];",
        "    int w, changed = 1, count = 0;",
        "    memcpy(T, I, sizeof(uint64_t) * CC_POR_W);",
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
        "        for (count = 0, w = 0; w < CC_POR_W; w++) count += __builtin_popcountll(T[w] & en[w]);",
        "        if (count >= limit) return count;",
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

/* a property of the assumption (ample.py) found violated: the reduction is not to be believed */
static int por_assumed_failed(void) {
    for (int k = 0; k < CC_NPROPS; k++) if (cc_por_assumed[k] && found_idx[k] != NONE) return 1;
    return 0;
}

static int cc_por_select(uint32_t idx, int n) {
    uint64_t en[CC_POR_W], T[CC_POR_W], best[CC_POR_W], I[CC_POR_W];
    int j, k, w, best_n = n;
    if (n <= 1) return n;
    memset(en, 0, sizeof en);
    for (j = 0; j < n; j++) en[succ_lab[j] / 64] |= UINT64_C(1) << (succ_lab[j] % 64);
    /* the interesting steps of what is still undecided */
    memcpy(I, cc_por_always, sizeof I);
    for (k = 0; k < CC_NPROPS; k++)
        if (found_idx[k] == NONE) for (w = 0; w < CC_POR_W; w++) I[w] |= cc_por_prop[k][w];
    for (k = 0; k < CC_NEVENTS; k++)
        if (ev_idx[k] == NONE) for (w = 0; w < CC_POR_W; w++) I[w] |= cc_por_event[k][w];
#if CC_EV_IRQ_SPINS >= 0
    if (ev_idx[CC_EV_IRQ_SPINS] == NONE) for (w = 0; w < CC_POR_W; w++) I[w] |= cc_por_spin[w];
#endif
    for (j = 0; j < n && best_n > 1; j++) {  /* every enabled step as the seed; the smallest set kept */
        int c = cc_por_close((int)succ_lab[j], en, I, T, best_n);
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
