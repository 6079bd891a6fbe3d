# SPDX-License-Identifier: GPL-2.0-only
"""Weak memory (issue 20): the annotations, --memory sc|tso|lkmm, the bounds, data races.

The small litmus-style specs here are built by ``litmus()`` below (one role
of one CPU per thread, one action per statement), not by the litmus parser:
each test states the outcome the memory model must allow (``Sometimes``:
the ``exists`` witness is reached) or forbid (``Never``: exhaustively not).
"""
from __future__ import annotations

import subprocess
import sys

import pytest

from checker import (And, Bool, Fence, If, Implies, Load, Lock, NOBODY, Or, Param, PerCpu, Rmw, Role, Shared, Spec, SpecError, Store,
                     action, settled, smp_load_acquire, smp_mb, smp_rmb, smp_store_release, smp_wmb, sometimes,
                     terminal, when, READ_ONCE, WRITE_ONCE, data_race, invariant, atomic, this_cpu, xchg)
from checker.explore import explore
from checker.ordering.declare import MEMORY
from checker.language.compile import Model

SC, TSO, LKMM = MEMORY.sc, MEMORY.tso, MEMORY.lkmm


def litmus(name: str, threads: list[list[tuple]], exists: dict, *, final: dict | None = None,
           variables: tuple[str, ...] = ("x", "y")) -> type:
    """A spec of a litmus test. A statement is ``("st", var, value, access)``, ``("ld", var, access)`` (into
    the thread's next register r0, r1, ...) or ``("f", access)``; ``exists`` maps (thread, register) to a
    value, ``final`` a variable to its final value (then the stores must have reached memory: ``settled``)."""
    ns: dict = {"kernel": f"litmus {name}", "__doc__": f"The litmus test {name}.", "__module__": __name__}
    for v in variables:
        ns[v] = Shared(0)
    regs = max(sum(1 for st in th if st[0] == "ld") for th in threads)
    for r in range(max(regs, 1)):
        ns[f"r{r}"] = PerCpu(0)
    ns["pc"] = PerCpu(0)
    for t, th in enumerate(threads):
        role = f"p{t}"
        ns[role] = Role(1)
        reg = 0
        for i, st in enumerate(th):
            ns[f"{role}_s{i}"] = _statement(role, i, st, reg)
            reg += st[0] == "ld"
    lens = [len(th) for th in threads]

    def done(s):
        return And(*[s.pc[c] == lens[c] for c in range(len(threads))])

    def witness(s):
        conds = [s.pc[c] == lens[c] for c in range(len(threads))]
        conds += [getattr(s, f"r{r}")[t] == v for (t, r), v in exists.items()]
        conds += [getattr(s, v) == x for v, x in (final or {}).items()]
        return And(settled(s), *conds)

    ns["done"] = terminal(done)
    ns["exists"] = sometimes(witness)
    return type(name.replace("+", "_").replace("-", "_"), (Spec,), ns)


def _statement(role: str, i: int, st: tuple, reg: int):
    kind = st[0]
    if kind == "st":
        _, var, value, acc = st

        def step(s, cpu):
            return when(s.pc[cpu] == i, pc={cpu: i + 1}, **{var: value})
    elif kind == "ld":
        _, var, acc = st

        def step(s, cpu):
            return when(s.pc[cpu] == i, pc={cpu: i + 1}, **{f"r{reg}": {cpu: getattr(s, var)}})
    else:
        _, acc = st

        def step(s, cpu):
            return when(s.pc[cpu] == i, pc={cpu: i + 1})
    return action(role=role, access=acc)(step)


def outcome(cls: type, memory: int, **params) -> str:
    """``Sometimes`` or ``Never`` (exhaustive) for the spec's ``exists`` under ``memory``."""
    r = explore(cls(memory=memory, **params))
    assert r.complete
    return "Sometimes" if r.outcomes["exists"].verdict == "holds" else "Never"


def outcomes(cls: type) -> tuple[str, str, str]:
    return outcome(cls, SC), outcome(cls, TSO), outcome(cls, LKMM)


def outcomes_at(cls: type, **params) -> tuple[str, str, str]:
    """``outcomes`` of a spec's ``lost_update`` at a point."""
    out = []
    for mem in (SC, TSO, LKMM):
        r = explore(cls(memory=mem, **params))
        assert r.complete
        out.append("Sometimes" if r.outcomes["lost_update"].verdict == "holds" else "Never")
    return tuple(out)


# -- the classic shapes ----------------------------------------------------------------------------------

SB = litmus("SB", [[("st", "x", 1, WRITE_ONCE("x")), ("ld", "y", READ_ONCE("y"))],
                   [("st", "y", 1, WRITE_ONCE("y")), ("ld", "x", READ_ONCE("x"))]], {(0, 0): 0, (1, 0): 0})
SB_MB = litmus("SB+mbs", [[("st", "x", 1, WRITE_ONCE("x")), ("f", smp_mb()), ("ld", "y", READ_ONCE("y"))],
                          [("st", "y", 1, WRITE_ONCE("y")), ("f", smp_mb()), ("ld", "x", READ_ONCE("x"))]],
               {(0, 0): 0, (1, 0): 0})
MP = litmus("MP", [[("st", "x", 1, WRITE_ONCE("x")), ("st", "y", 1, WRITE_ONCE("y"))],
                   [("ld", "y", READ_ONCE("y")), ("ld", "x", READ_ONCE("x"))]], {(1, 0): 1, (1, 1): 0})
MP_RELACQ = litmus("MP+rel+acq", [[("st", "x", 1, WRITE_ONCE("x")), ("st", "y", 1, smp_store_release("y"))],
                                  [("ld", "y", smp_load_acquire("y")), ("ld", "x", READ_ONCE("x"))]],
                   {(1, 0): 1, (1, 1): 0})
MP_WMB_RMB = litmus("MP+wmb+rmb", [[("st", "x", 1, WRITE_ONCE("x")), ("f", smp_wmb()),
                                    ("st", "y", 1, WRITE_ONCE("y"))],
                                   [("ld", "y", READ_ONCE("y")), ("f", smp_rmb()), ("ld", "x", READ_ONCE("x"))]],
                    {(1, 0): 1, (1, 1): 0})
MP_WMB_ONLY = litmus("MP+wmb", [[("st", "x", 1, WRITE_ONCE("x")), ("f", smp_wmb()),
                                 ("st", "y", 1, WRITE_ONCE("y"))],
                                [("ld", "y", READ_ONCE("y")), ("ld", "x", READ_ONCE("x"))]], {(1, 0): 1, (1, 1): 0})
MP_ADDR = litmus("MP+release+addr", [[("st", "x", 1, WRITE_ONCE("x")), ("st", "y", 1, smp_store_release("y"))],
                                     [("ld", "y", READ_ONCE("y")), ("ld", "x", Load("x", "once", dep=True))]],
                 {(1, 0): 1, (1, 1): 0})
MP_NODEP = litmus("MP+release+once", [[("st", "x", 1, WRITE_ONCE("x")), ("st", "y", 1, smp_store_release("y"))],
                                      [("ld", "y", READ_ONCE("y")), ("ld", "x", READ_ONCE("x"))]],
                  {(1, 0): 1, (1, 1): 0})
IRIW = litmus("IRIW", [[("st", "x", 1, WRITE_ONCE("x"))], [("st", "y", 1, WRITE_ONCE("y"))],
                       [("ld", "x", READ_ONCE("x")), ("ld", "y", READ_ONCE("y"))],
                       [("ld", "y", READ_ONCE("y")), ("ld", "x", READ_ONCE("x"))]],
              {(2, 0): 1, (2, 1): 0, (3, 0): 1, (3, 1): 0})
IRIW_MB = litmus("IRIW+mbs", [[("st", "x", 1, WRITE_ONCE("x"))], [("st", "y", 1, WRITE_ONCE("y"))],
                              [("ld", "x", READ_ONCE("x")), ("f", smp_mb()), ("ld", "y", READ_ONCE("y"))],
                              [("ld", "y", READ_ONCE("y")), ("f", smp_mb()), ("ld", "x", READ_ONCE("x"))]],
                 {(2, 0): 1, (2, 1): 0, (3, 0): 1, (3, 1): 0})
CORR = litmus("CoRR", [[("st", "x", 1, WRITE_ONCE("x"))],
                       [("ld", "x", READ_ONCE("x")), ("ld", "x", READ_ONCE("x"))]], {(1, 0): 1, (1, 1): 0},
              variables=("x",))
TWO_TWO_W = litmus("2+2W+wmbs", [[("st", "x", 1, WRITE_ONCE("x")), ("f", smp_wmb()), ("st", "y", 2, WRITE_ONCE("y"))],
                                 [("st", "y", 1, WRITE_ONCE("y")), ("f", smp_wmb()), ("st", "x", 2, WRITE_ONCE("x"))]],
                   {}, final={"x": 1, "y": 1})
TWO_TWO_W_ONCE = litmus("2+2W+poonceonces", [[("st", "x", 1, WRITE_ONCE("x")), ("st", "y", 2, WRITE_ONCE("y"))],
                                             [("st", "y", 1, WRITE_ONCE("y")), ("st", "x", 2, WRITE_ONCE("x"))]],
                        {}, final={"x": 1, "y": 1})
WRC_REL = litmus("WRC+release+acquire", [[("st", "x", 1, WRITE_ONCE("x"))],
                                         [("ld", "x", READ_ONCE("x")), ("st", "y", 1, smp_store_release("y"))],
                                         [("ld", "y", smp_load_acquire("y")), ("ld", "x", READ_ONCE("x"))]],
                 {(1, 0): 1, (2, 0): 1, (2, 1): 0})
WRC = litmus("WRC", [[("st", "x", 1, WRITE_ONCE("x"))],
                     [("ld", "x", READ_ONCE("x")), ("st", "y", 1, WRITE_ONCE("y"))],
                     [("ld", "y", READ_ONCE("y")), ("f", smp_rmb()), ("ld", "x", READ_ONCE("x"))]],
             {(1, 0): 1, (2, 0): 1, (2, 1): 0})
LB = litmus("LB", [[("ld", "x", READ_ONCE("x")), ("st", "y", 1, WRITE_ONCE("y"))],
                   [("ld", "y", READ_ONCE("y")), ("st", "x", 1, WRITE_ONCE("x"))]], {(0, 0): 1, (1, 0): 1})


def test_store_buffering_is_sometimes_under_tso_and_lkmm_and_never_under_sc():
    assert outcomes(SB) == ("Never", "Sometimes", "Sometimes")


def test_store_buffering_with_smp_mb_is_never_everywhere():
    assert outcomes(SB_MB) == ("Never", "Never", "Never")


def test_message_passing_with_once_accesses_is_never_under_tso_and_sometimes_under_lkmm():
    assert outcomes(MP) == ("Never", "Never", "Sometimes")


def test_message_passing_with_release_acquire_is_never():
    assert outcomes(MP_RELACQ) == ("Never", "Never", "Never")


def test_message_passing_with_wmb_and_rmb_is_never_and_wmb_alone_is_not_enough():
    assert outcomes(MP_WMB_RMB) == ("Never", "Never", "Never")
    assert outcome(MP_WMB_ONLY, LKMM) == "Sometimes"


def test_an_address_dependency_orders_the_dependent_load_after_a_release():
    assert outcome(MP_ADDR, LKMM) == "Never"
    assert outcome(MP_NODEP, LKMM) == "Sometimes"


def test_iriw_with_once_accesses_is_sometimes_under_lkmm_only():
    """LKMM is not multicopy-atomic: two readers may see two independent stores in opposite orders."""
    assert outcomes(IRIW) == ("Never", "Never", "Sometimes")
    assert outcomes(IRIW_MB) == ("Never", "Never", "Never")


def test_coherence_and_two_plus_two_w_are_never_everywhere():
    assert outcomes(CORR) == ("Never", "Never", "Never")
    assert outcomes(TWO_TWO_W) == ("Never", "Never", "Never")


def test_write_to_read_causality_needs_a_release():
    assert outcome(WRC_REL, LKMM) == "Never"
    assert outcome(WRC, LKMM) == "Sometimes"


def test_load_buffering_needs_a_promise():
    """LKMM allows LB with once accesses: under lkmm a CPU promises its store before its earlier load runs
    (checker.ordering.promises); with lkmm_promises=0 it is Never (stronger than LKMM)."""
    assert outcomes(LB) == ("Never", "Never", "Sometimes")
    assert outcome(LB, LKMM, lkmm_promises=0) == "Never"


def test_two_plus_two_w_needs_a_promise():
    """2+2W with once stores (LKMM: Sometimes): each CPU's second store is promised ahead of its first, so both
    first stores land last in coherence order; the same with smp_wmb() stays Never (TWO_TWO_W above)."""
    assert outcomes(TWO_TWO_W_ONCE) == ("Never", "Never", "Sometimes")
    assert outcome(TWO_TWO_W_ONCE, LKMM, lkmm_promises=0) == "Never"


# -- bounds ---------------------------------------------------------------------------------------------

def test_each_bound_has_a_sometimes_that_is_reached():
    tso = explore(MP(memory=TSO, sb_depth=2))
    assert tso.outcomes["store_buffer_fills"].verdict == "holds"
    assert "history_fills" not in tso.outcomes
    lk = explore(MP(memory=LKMM, lkmm_history=2))
    assert lk.outcomes["history_fills"].verdict == "holds"
    assert "store_buffer_fills" not in lk.outcomes
    # a deeper buffer than MP's two stores is never filled: the witness says so
    assert explore(MP(memory=TSO, sb_depth=3)).outcomes["store_buffer_fills"].verdict == "violated"


def test_a_full_store_buffer_waits_for_a_flush():
    """With one entry, P0's second store waits: MP stays Never and the search stays finite."""
    r = explore(MP(memory=TSO, sb_depth=1))
    assert r.outcomes["exists"].verdict == "violated" and r.complete


def test_tso_trace_shows_the_buffered_stores_and_their_flush():
    r = explore(SB(memory=TSO))
    steps = r.outcomes["exists"].trace
    assert [(st.action, st.cpu) for st in steps][:2] == [("p0_s0", 0), ("p0_s1", 0)]
    # x holds its newest store (properties read it); memory (tso_memory, hidden) still holds 0 for the other CPU
    assert steps[0].changes == {"pc[0]": 1, "x": 1, "sb_n[0]": 1, "sb_loc0[0]": 0, "sb_val0[0]": 1}
    m = Model(SB(memory=TSO))
    assert m.show_value("sb_loc0[0]", 0) == "x" and m.show_value("sb_loc0[0]", -1) == "-"
    names = [st.action for st in steps]
    assert "flush" in names  # settled: the stores reach memory before the run ends


def test_lkmm_trace_names_the_store_each_load_read():
    r = explore(MP(memory=LKMM))
    steps = r.outcomes["exists"].trace
    reads = {st.action: st.choices for st in steps if st.choices}
    assert reads == {"p1_s0": {"y_age": 0}, "p1_s1": {"x_age": 1}}  # y newest; x one store behind


# -- sc is today's semantics ----------------------------------------------------------------------------

class Plain(Spec):
    """An eager-counter-like spec without annotations."""
    kernel = "test"
    cpus = Role(2, symmetric=True)
    count = Shared(0)
    local = PerCpu(0)
    done_ = PerCpu(0)

    @action(role="cpus")
    def add(s, cpu):
        return when(s.done_[cpu] == 0, local={cpu: s.local[cpu] + 1}, done_={cpu: 1})

    @action(role="cpus")
    def fold(s, cpu):
        return when(And(s.done_[cpu] == 1, s.local[cpu] > 0), count=s.count + s.local[cpu], local={cpu: 0},
                    done_={cpu: 2})

    @terminal
    def finished(s):
        return And(*[d == 2 for d in s.done_])

    @sometimes
    def folded(s):
        return s.count == 2


class Annotated(Plain):
    """The same steps, annotated (a plain this_cpu add, the fold an atomic RMW)."""

    @action(role="cpus", access=Rmw("local", "this_cpu"))
    def add(s, cpu):
        return when(s.done_[cpu] == 0, local={cpu: s.local[cpu] + 1}, done_={cpu: 1})

    @action(role="cpus", access=(Rmw("count", "mb"), Store("local", "once")))
    def fold(s, cpu):
        return when(And(s.done_[cpu] == 1, s.local[cpu] > 0), count=s.count + s.local[cpu], local={cpu: 0},
                    done_={cpu: 2})


def test_sc_gives_todays_states_for_annotated_and_unannotated_specs():
    plain = explore(Plain())
    annotated_sc = explore(Annotated(memory=SC))
    assert (annotated_sc.states, annotated_sc.transitions) == (plain.states, plain.transitions)
    assert {k: o.verdict for k, o in annotated_sc.outcomes.items()} == {k: o.verdict for k, o in plain.outcomes.items()}
    assert "memory" not in Model(Plain).params.as_dict()


@pytest.mark.parametrize("spec", ["percpu_eager", "stack_cache", "percpu_lazy", "check_mm_refcount"])
def test_annotated_builtin_specs_have_no_memory_machine_under_sc(spec):
    """At their sc points the annotated seeds are the specs they were: no machine, no hidden variable, no
    hidden choice (their sc state counts are pinned by their own tests)."""
    from checker import loader
    from checker.ordering.declare import GHOSTS

    cls = loader.resolve([spec])[0]
    m = Model(cls)
    assert m.memory == "sc" and m.weak is None
    assert not set(GHOSTS) & set(m.var_names)
    assert not any(n.startswith("on_cpu") or n.endswith("_age") for a in m.actions for n in a.arg_names)


def test_annotated_spec_under_tso_and_lkmm_keeps_its_verdicts():
    for mem in (TSO, LKMM):
        r = explore(Annotated(memory=mem))
        assert r.complete and r.outcomes["folded"].verdict == "holds"
        assert r.states > explore(Annotated(memory=SC)).states  # the hidden state multiplies states


# -- data races -------------------------------------------------------------------------------------------

def _mp_plain(data_access, flag_store, flag_load):
    return litmus("MP-plain", [[("st", "x", 1, data_access[0]), ("st", "y", 1, flag_store)],
                               [("ld", "y", flag_load), ("ld", "x", data_access[1])]], {(1, 0): 1, (1, 1): 1})


def test_a_plain_access_racing_is_a_data_race_with_a_trace():
    racy = _mp_plain((Store("x"), Load("x")), WRITE_ONCE("y"), READ_ONCE("y"))
    r = explore(racy(memory=LKMM))
    out = r.outcomes["no_data_race"]
    assert out.verdict == "violated"
    last = out.trace[-1]
    assert last.action.startswith("p1") or last.action.startswith("p0")
    assert any("data_race" in k for k in last.changes)
    m = Model(racy(memory=LKMM))
    assert "races with" in m.show_value("data_race", last.changes["data_race"])
    assert "no_data_race" not in explore(racy(memory=SC)).outcomes  # a finding of lkmm only


def test_release_acquire_orders_plain_data_so_there_is_no_race():
    unguarded = _mp_plain((Store("x"), Load("x")), smp_store_release("y"), smp_load_acquire("y"))
    # a reader that reads x whatever it read from y races with the store to x (it may not have seen the flag)
    assert explore(unguarded(memory=LKMM)).outcomes["no_data_race"].verdict == "violated"
    guarded = _guarded_mp(smp_store_release("y"), smp_load_acquire("y"), Load("x"))
    assert explore(guarded(memory=LKMM)).outcomes["no_data_race"].verdict == "holds"
    racy = _guarded_mp(WRITE_ONCE("y"), READ_ONCE("y"), Load("x"))
    assert explore(racy(memory=LKMM)).outcomes["no_data_race"].verdict == "violated"


def test_race_ok_accesses_are_never_reported():
    excused = _guarded_mp(WRITE_ONCE("y"), READ_ONCE("y"), data_race(Load("x")))
    r = explore(excused(memory=LKMM))
    assert "no_data_race" in r.outcomes and r.outcomes["no_data_race"].verdict == "holds"


def _guarded_mp(flag_store, flag_load, data_load):
    """P0: x = 1 (plain); flag store. P1: if (flag load == 1) r = x."""

    class GuardedMP(Spec):
        """MP whose reader reads the data only after it saw the flag."""
        kernel = "litmus MP, guarded"
        p0 = Role(1)
        p1 = Role(1)
        x = Shared(0)
        y = Shared(0)
        pc = PerCpu(0)
        r = PerCpu(0)

        @action(role="p0", access=Store("x"))
        def w_data(s, cpu):
            return when(s.pc[cpu] == 0, x=1, pc={cpu: 1})

        @action(role="p0", access=flag_store)
        def w_flag(s, cpu):
            return when(s.pc[cpu] == 1, y=1, pc={cpu: 2})

        @action(role="p1", access=flag_load)
        def r_flag(s, cpu):
            return when(And(s.pc[cpu] == 0, s.y == 1), pc={cpu: 1})

        @action(role="p1", access=data_load)
        def r_data(s, cpu):
            return when(s.pc[cpu] == 1, r={cpu: s.x}, pc={cpu: 2})

        @terminal
        def done(s):
            return And(s.pc[0] == 2, s.pc[1] == 2)

        @sometimes
        def read_one(s):
            return s.r[1] == 1

    return GuardedMP


# -- locks ------------------------------------------------------------------------------------------------

class Locked(Spec):
    """Two CPUs add to a plain counter under a spinlock: the lock orders the plain accesses."""
    kernel = "test: spin_lock(); count++; spin_unlock()"
    cpus = Role(2)
    lock = Lock()
    count = Shared(0)
    pc = PerCpu(0)
    tmp = PerCpu(0)

    @action(role="cpus")
    def take(s, cpu):
        return when(And(s.pc[cpu] == 0, s.lock == NOBODY), lock=cpu, pc={cpu: 1})

    @action(role="cpus", access=Load("count"))
    def load(s, cpu):
        return when(s.pc[cpu] == 1, tmp={cpu: s.count}, pc={cpu: 2})

    @action(role="cpus", access=Store("count"))
    def store(s, cpu):
        return when(s.pc[cpu] == 2, count=s.tmp[cpu] + 1, pc={cpu: 3})

    @action(role="cpus")
    def release(s, cpu):
        return when(s.pc[cpu] == 3, lock=NOBODY, pc={cpu: 4})

    @terminal
    def done(s):
        return And(*[p == 4 for p in s.pc])

    @invariant
    def no_lost_update(s):
        return Implies(And(*[p == 4 for p in s.pc]), s.count == 2)

    @sometimes
    def both_added(s):
        return s.count == 2


def test_a_lock_orders_the_accesses_under_it():
    for mem in (SC, TSO, LKMM):
        r = explore(Locked(memory=mem))
        assert r.outcomes["no_lost_update"].verdict == "holds", mem
    assert explore(Locked(memory=LKMM)).outcomes["no_data_race"].verdict == "holds"


class SBUnlock(Spec):
    """Store buffering across an unlock: CPU 0 ``x = 1; spin_unlock(l); r0 = y``, CPU 1 ``y = 1; smp_mb();
    r1 = x`` (``spin_unlock()`` is a plain store on x86: smp_store_release(&lock->locked, 0) in
    queued_spin_unlock()), and CPU 1 then reads ``spin_is_locked(l)`` into ``held``."""
    kernel = "test: spin_lock(l); WRITE_ONCE(x, 1); spin_unlock(l); READ_ONCE(y) || WRITE_ONCE(y, 1); smp_mb(); ..."
    p0 = Role(1)
    p1 = Role(1)
    lock = Lock()
    x = Shared(0)
    y = Shared(0)
    r = PerCpu(0)
    held = Shared(0)
    pc = PerCpu(0)

    @action(role="p0")
    def take(s, cpu):
        return when(And(s.pc[cpu] == 0, s.lock == NOBODY), lock=cpu, pc={cpu: 1})

    @action(role="p0", access=WRITE_ONCE("x"))
    def store_x(s, cpu):
        return when(s.pc[cpu] == 1, x=1, pc={cpu: 2})

    @action(role="p0")
    def release(s, cpu):
        return when(s.pc[cpu] == 2, lock=NOBODY, pc={cpu: 3})

    @action(role="p0", access=READ_ONCE("y"))
    def load_y(s, cpu):
        return when(s.pc[cpu] == 3, r={cpu: s.y}, pc={cpu: 4})

    @action(role="p1", access=(WRITE_ONCE("y"), smp_mb(), READ_ONCE("x")))
    def store_y_mb_load_x(s, cpu):
        return when(s.pc[cpu] == 0, y=1, r={cpu: s.x}, pc={cpu: 1})

    @action(role="p1")
    def is_locked(s, cpu):
        return when(s.pc[cpu] == 1, held=If(s.lock == NOBODY, 0, 1), pc={cpu: 2})

    @terminal
    def done(s):
        return And(s.pc[0] == 4, s.pc[1] == 2)

    @sometimes
    def both_zero(s):
        """r0 = r1 = 0: CPU 0's load passed its buffered store to x and its buffered unlock."""
        return And(s.pc[0] == 4, s.pc[1] == 2, s.r[0] == 0, s.r[1] == 0)

    @sometimes
    def held_after_the_read(s):
        """CPU 1, after its smp_mb(), sees the lock held although CPU 0 read y = 0 after unlocking."""
        return And(s.pc[0] == 4, s.pc[1] == 2, s.r[0] == 0, s.held == 1)


def test_a_load_passes_a_buffered_unlock_under_tso_only():
    """x86: the unlocking store waits in the store buffer; a later load of the unlocking CPU passes it (and the
    critical section's buffered store). sc forbids both outcomes; tso allows them (the store to x and the
    unlock both wait, so r0 = r1 = 0 needs a buffer of 2; the held lock needs only the unlock buffered)."""
    sc = explore(SBUnlock(memory=SC))
    assert sc.complete and sc.verdicts["both_zero"] == "violated" and sc.verdicts["held_after_the_read"] == "violated"
    one = explore(SBUnlock(memory=TSO, sb_depth=1))
    assert one.verdicts["both_zero"] == "violated" and one.verdicts["held_after_the_read"] == "holds"
    two = explore(SBUnlock(memory=TSO, sb_depth=2))
    assert two.complete and two.verdicts["both_zero"] == "holds" and two.verdicts["held_after_the_read"] == "holds"
    trace = two.outcomes["both_zero"].trace
    rel = next(st for st in trace if st.action == "release")
    # buffered behind the store to x; the spec's lock already names nobody (the holder in program order)
    assert rel.changes.get("sb_n[0]") == 2 and rel.changes.get("sb_val1[0]") == NOBODY and rel.changes["lock"] == NOBODY
    acts = [st.action for st in trace]
    assert "flush" not in acts[:acts.index("load_y")]  # CPU 0 read y with x = 1 and the unlock still buffered
    assert explore(SBUnlock(memory=LKMM)).verdicts["both_zero"] == "holds"


def test_tso_a_lock_is_taken_only_once_its_release_reached_memory():
    """Mutual exclusion under tso with the unlock buffered: CPU 1's spin_lock() (a LOCKed cmpxchg) sees the lock
    held until CPU 0's buffered release is flushed, and by then (FIFO) the counter's store is in memory too:
    no lost update at any buffer depth. The releasing CPU re-takes it only once its own buffer drained."""
    for depth in (1, 2, 3):
        r = explore(Locked(memory=TSO, sb_depth=depth))
        assert r.complete and r.verdicts["no_lost_update"] == "holds" and r.verdicts["both_added"] == "holds", depth
    # the witness of a buffered release: some state has CPU 0's release buffered while CPU 1 waits to take
    r = explore(Locked(memory=TSO, sb_depth=2))
    assert r.verdicts["store_buffer_fills"] == "holds"


def test_tso_buffered_release_is_compiled_state_for_state():
    for depth in (1, 2):
        _same_on_both(SBUnlock, memory=TSO, sb_depth=depth)
        _same_on_both(Locked, memory=TSO, sb_depth=depth)


class IrqLock(Spec):
    """A task takes a spinlock with interrupts on and stores under it; its CPU's interrupt handler takes the
    same lock (lockdep's irq-safety splat, and a real deadlock while the task holds it)."""
    kernel = "test: spin_lock(l); WRITE_ONCE(x, 1); spin_unlock(l) || irq: spin_lock(l)"
    cpus = Role(2)
    lock = Lock()
    x = Shared(0)
    pc = PerCpu(0, role="cpus")
    done = PerCpu(0, role="cpus")

    @action(role="cpus")
    def spin_lock(s, t):
        return when(And(t == 0, s.pc[t] == 0, s.lock == NOBODY), lock=t, pc={t: 1})

    @action(role="cpus", access=WRITE_ONCE("x"))
    def store_x(s, t):
        return when(s.pc[t] == 1, x=1, pc={t: 2})

    @action(role="cpus")
    def spin_unlock(s, t):
        return when(s.pc[t] == 2, lock=NOBODY, pc={t: 3})

    @action(role="cpus", irq=True)
    def irq_handler_locks(s, c):
        return when(And(c == 0, s.done[c] == 0, s.lock == NOBODY), lock=c, done={c: 1})

    @action(role="cpus", irq=True)
    def irq_handler_unlocks(s, c):
        return when(And(s.done[c] == 1, s.lock == c), lock=NOBODY, done={c: 2})

    finished = terminal(lambda s: And(s.pc[0] == 3, s.done[0] == 2))
    handler_took_it_after_the_task = sometimes(lambda s: And(s.pc[0] == 3, s.done[0] == 2))


@pytest.mark.parametrize("engine", ["interpreted", "compiled"])
def test_tso_context_rules_see_the_holder_in_program_order(engine):
    """With the unlock buffered the spec's Lock still names its holder in program order: the handler that would
    spin on the lock its task holds is found after the same one step as under sc (and only while the task
    holds it: once the task's release is buffered, the handler waits for the flush, no deadlock)."""
    for mem in (SC, TSO):
        r = explore(IrqLock(memory=mem, sb_depth=2), engine=engine)
        assert r.complete and r.verdicts["no_deadlock"] == "holds", mem
        dead = r.outcomes["no_irq_deadlock"]
        assert dead.verdict == "violated" and [s.action for s in dead.trace] == ["spin_lock"], mem
        assert r.verdicts["handler_took_it_after_the_task"] == "holds", mem
    if engine == "compiled":
        _same_on_both(IrqLock, memory=TSO, sb_depth=2)


# -- load-time errors -------------------------------------------------------------------------------------

def test_a_wrong_order_is_refused_where_it_is_written():
    with pytest.raises(SpecError, match=r"Load\('x', 'mb'\).*Rmw\('x', 'mb'\)") as e:
        Load("x", "mb")
    assert e.value.file == __file__ and e.value.line is not None
    with pytest.raises(SpecError, match="a fence is one of"):
        Fence("full")
    with pytest.raises(SpecError, match="smp_mb\\(\\)"):
        action(role="cpus", access=smp_mb)


def test_an_unknown_variable_in_access_names_the_variables():
    with pytest.raises(SpecError, match="'z' is not a variable; the variables are: x, y, r0, pc"):
        litmus("bad", [[("st", "x", 1, WRITE_ONCE("z"))]], {})


def test_a_store_the_annotations_do_not_list_is_an_error_naming_what_to_add():
    bad = litmus("unlisted", [[("st", "x", 1, READ_ONCE("y"))], [("ld", "x", READ_ONCE("x"))]], {(1, 0): 1})
    with pytest.raises(SpecError, match=r"writes x, a weak variable, but its access= lists no Store"):
        explore(bad(memory=LKMM))


def test_cli_memory_flag_names_the_model_in_the_assumptions(tmp_path):
    spec = tmp_path / "sb.py"
    spec.write_text(SB_SOURCE)
    out = subprocess.run([sys.executable, "-m", "checker", "verify", str(spec), "--memory", "tso", "--mode",
                          "explore", "-v"], capture_output=True, text=True)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "memory=tso" in out.stdout and "x86-TSO" in out.stdout
    bad = subprocess.run([sys.executable, "-m", "checker", "verify", str(spec), "--memory", "arm"],
                         capture_output=True, text=True)
    assert bad.returncode == 2 and "choose sc, tso or lkmm" in bad.stderr and "Traceback" not in bad.stderr


SB_SOURCE = '''
from checker import And, PerCpu, Role, Shared, Spec, action, sometimes, terminal, when, READ_ONCE, WRITE_ONCE


class Sb(Spec):
    """Store buffering."""
    kernel = "litmus SB"
    p0 = Role(1)
    p1 = Role(1)
    x = Shared(0)
    y = Shared(0)
    pc = PerCpu(0)
    r = PerCpu(0)

    @action(role="p0", access=WRITE_ONCE("x"))
    def w0(s, cpu):
        return when(s.pc[cpu] == 0, x=1, pc={cpu: 1})

    @action(role="p0", access=READ_ONCE("y"))
    def r0(s, cpu):
        return when(s.pc[cpu] == 1, r={cpu: s.y}, pc={cpu: 2})

    @action(role="p1", access=WRITE_ONCE("y"))
    def w1(s, cpu):
        return when(s.pc[cpu] == 0, y=1, pc={cpu: 1})

    @action(role="p1", access=READ_ONCE("x"))
    def r1(s, cpu):
        return when(s.pc[cpu] == 1, r={cpu: s.x}, pc={cpu: 2})

    @terminal
    def done(s):
        return And(s.pc[0] == 2, s.pc[1] == 2)

    @sometimes
    def both_zero(s):
        return And(s.pc[0] == 2, s.pc[1] == 2, s.r[0] == 0, s.r[1] == 0)
'''


# -- engines ----------------------------------------------------------------------------------------------

def _same_on_both(cls, **params):
    interpreted = explore(cls(**params), engine="interpreted")
    compiled = explore(cls(**params), engine="compiled")
    assert compiled.engine == "compiled", compiled.engine_note
    assert (compiled.states, compiled.transitions, compiled.depth) == \
        (interpreted.states, interpreted.transitions, interpreted.depth)
    assert {k: o.verdict for k, o in compiled.outcomes.items()} == {k: o.verdict for k, o in interpreted.outcomes.items()}
    assert {k: [(st.action, st.cpu, st.choices) for st in o.trace] for k, o in compiled.outcomes.items()} == \
        {k: [(st.action, st.cpu, st.choices) for st in o.trace] for k, o in interpreted.outcomes.items()}
    return compiled


@pytest.mark.parametrize("name", ["SB", "SB_MB", "MP", "MP_WMB_RMB", "IRIW", "TWO_TWO_W", "WRC_REL"])
@pytest.mark.parametrize("depth", [1, 2])
def test_tso_is_compiled_with_the_interpreters_states_verdicts_and_traces(name, depth):
    _same_on_both(globals()[name], memory=TSO, sb_depth=depth)


@pytest.mark.parametrize("name", ["Annotated", "Locked", "Cas", "PerCpuSum", "ThisCpuVsRemote", "ThisCpuVsIrq"])
def test_tso_counters_locks_and_rmws_are_compiled_state_for_state(name):
    _same_on_both(globals()[name], memory=TSO, sb_depth=2)


@pytest.mark.parametrize("name", ["SB", "SB_MB", "MP", "MP_RELACQ", "MP_WMB_RMB", "MP_WMB_ONLY", "MP_ADDR", "IRIW",
                                  "IRIW_MB", "CORR", "TWO_TWO_W", "WRC_REL", "WRC", "LB", "MP_ADDR2_PREV",
                                  "MP_ADDR2_PTR"])
@pytest.mark.parametrize("history", [2, 3])
def test_lkmm_is_compiled_with_the_interpreters_states_verdicts_and_traces(name, history):
    _same_on_both(globals()[name], memory=LKMM, lkmm_history=history)


@pytest.mark.parametrize("name", ["Annotated", "Locked", "Cas", "PerCpuSum", "StepPublish", "ThisCpuVsRemote",
                                  "ThisCpuVsIrq"])
def test_lkmm_counters_locks_rmws_and_races_are_compiled_state_for_state(name):
    _same_on_both(globals()[name], memory=LKMM, lkmm_history=2)


@pytest.mark.parametrize("mem", [TSO, LKMM], ids=["tso", "lkmm"])
def test_tasks_under_weak_memory_are_compiled_state_for_state(mem):
    """A task's steps use its CPU's buffer and views, the scheduler's barrier is an expression: compiled."""
    _same_on_both(SameCpuHandOff, memory=mem)


def test_z3_runs_at_the_sc_points_only_with_a_note():
    from checker.verify import verify

    notes = []
    rep = verify([Annotated], memory="tso", on_note=notes.append)
    assert {c.params["memory"] for c in rep.checks} == {"tso"}
    assert all(c.backend == "explore" for c in rep.checks)
    assert any("under sc only" in n for n in notes)


# -- more of the rules ------------------------------------------------------------------------------------

class Cas(Spec):
    """Two CPUs cmpxchg a word from 0; the loser's failed cmpxchg is an unordered load."""
    kernel = "test: atomic_cmpxchg(&v, 0, cpu + 1)"
    cpus = Role(2)
    v = Shared(0)
    data = Shared(0)
    pc = PerCpu(0)
    won = PerCpu(0)
    got = PerCpu(0)

    @action(role="cpus", access=WRITE_ONCE("data"))
    def prepare(s, cpu):
        return when(And(s.pc[cpu] == 0, cpu == 0), data=1, pc={cpu: 1})

    @action(role="cpus")
    def skip(s, cpu):
        return when(And(s.pc[cpu] == 0, cpu == 1), pc={cpu: 1})

    @action(role="cpus", access=Rmw("v", "mb"))
    def cmpxchg(s, cpu):
        from checker import If
        return when(s.pc[cpu] == 1, v=If(s.v == 0, cpu + 1, s.v), won={cpu: s.v == 0}, pc={cpu: 2})

    @action(role="cpus", access=READ_ONCE("data"))
    def read(s, cpu):
        return when(s.pc[cpu] == 2, got={cpu: s.data}, pc={cpu: 3})

    @terminal
    def done(s):
        return And(s.pc[0] == 3, s.pc[1] == 3)

    @invariant
    def one_winner(s):
        return Implies(And(s.pc[0] == 3, s.pc[1] == 3), s.won[0] + s.won[1] == 1)

    @sometimes
    def second_wins_and_misses_data(s):
        """CPU1 loses to CPU0's fully ordered cmpxchg; its own failed cmpxchg orders nothing, so it may still
        read the data from before CPU0's store."""
        return And(s.pc[1] == 3, s.won[0] == 1, s.won[1] == 0, s.got[1] == 0)


def test_a_failed_cmpxchg_is_atomic_but_orders_nothing():
    for mem in (SC, TSO, LKMM):
        assert explore(Cas(memory=mem)).outcomes["one_winner"].verdict == "holds"
    assert explore(Cas(memory=SC)).outcomes["second_wins_and_misses_data"].verdict == "violated"
    assert explore(Cas(memory=TSO)).outcomes["second_wins_and_misses_data"].verdict == "violated"
    assert explore(Cas(memory=LKMM)).outcomes["second_wins_and_misses_data"].verdict == "holds"


class PerCpuSum(Spec):
    """CPU0 adds to its own slot with this_cpu_add (no LOCK); CPU1 sums every slot in one step."""
    kernel = "test: this_cpu_add() || for_each_possible_cpu() sum += *per_cpu_ptr()"
    adder = Role(1)
    summer = Role(1)
    local = PerCpu(0)
    pc = PerCpu(0)
    total = PerCpu(0)

    @action(role="adder", access=Rmw("local", "this_cpu"))
    def add(s, cpu):
        return when(s.pc[cpu] == 0, local={cpu: s.local[cpu] + 1}, pc={cpu: 1})

    @action(role="summer", access=Load("local", "plain", slot="all", race_ok=True))
    def sum(s, cpu):
        return when(s.pc[cpu] == 0, total={cpu: s.local[0] + s.local[1]}, pc={cpu: 1})

    @terminal
    def done(s):
        return And(s.pc[0] == 1, s.pc[1] == 1)

    @sometimes
    def stale_sum_after_add(s):
        return And(s.pc[0] == 1, s.pc[1] == 1, s.total[1] == 0)


def test_a_this_cpu_add_is_buffered_and_a_remote_sum_may_miss_it():
    assert Model(PerCpuSum(memory=LKMM)).actions[1].arg_names == ("local0_age", "local1_age")
    for mem in (SC, TSO, LKMM):  # the sum may run before the add anyway: reached everywhere
        assert explore(PerCpuSum(memory=mem)).outcomes["stale_sum_after_add"].verdict == "holds"
    tso = explore(PerCpuSum(memory=TSO))
    assert tso.outcomes["store_buffer_fills"].verdict == "holds"  # this_cpu_add went through the buffer


class ThisCpuVsRemote(Spec):
    """CPU 0 this_cpu_add()s its own slot; CPU 1 writes that slot remotely (per_cpu_ptr(&x, 0)) with a fully
    ordered xchg() (remote=0), atomic_xchg() on an atomic_t slot (1) or a WRITE_ONCE (2). this_cpu ops are
    atomic to their own CPU only (Documentation/core-api/this_cpu_ops.rst: "A remote write may interfere with a
    this_cpu RMW operation"): the remote write may land between the add's read and its store, and is lost."""
    kernel = "test: this_cpu_add(x, 1) || xchg(per_cpu_ptr(&x, 0), 10) / WRITE_ONCE(*per_cpu_ptr(&x, 0), 10)"
    remote = Param(0, domain=range(3))
    owner = Role(1)
    other = Role(1)
    x = PerCpu(0)
    pc = PerCpu(0)
    old = PerCpu(-1)

    @action(role="owner", access=this_cpu("this_cpu_add", "x"))
    def add(s, cpu):
        return when(s.pc[cpu] == 0, x={cpu: s.x[cpu] + 1}, pc={cpu: 1})

    @action(role="other", access=xchg("x", slot=lambda s, cpu: 0))
    def remote_xchg(s, cpu):
        """xchg(per_cpu_ptr(&x, 0), 10)."""
        return when(And(s.remote == 0, s.pc[cpu] == 0), x={0: 10}, old={cpu: s.x[0]}, pc={cpu: 1})

    @action(role="other", access=atomic("atomic_xchg", "x", slot=lambda s, cpu: 0))
    def remote_atomic_xchg(s, cpu):
        """atomic_xchg(per_cpu_ptr(&x, 0), 10)."""
        return when(And(s.remote == 1, s.pc[cpu] == 0), x={0: 10}, old={cpu: s.x[0]}, pc={cpu: 1})

    @action(role="other", access=WRITE_ONCE("x", slot=lambda s, cpu: 0))
    def remote_store(s, cpu):
        """WRITE_ONCE(*per_cpu_ptr(&x, 0), 10)."""
        return when(And(s.remote == 2, s.pc[cpu] == 0), x={0: 10}, pc={cpu: 1})

    @terminal
    def done(s):
        return And(s.pc[0] == 1, s.pc[1] == 1)

    @sometimes
    def lost_update(s):
        """Both done and the slot holds the add's 1: the remote 10 was overwritten (under sc the add comes
        before the remote write, 10, or after it, 11)."""
        return And(settled(s), s.pc[0] == 1, s.pc[1] == 1, s.x[0] == 1)


class ThisCpuVsIrq(Spec):
    """One CPU: a this_cpu_add() in task context and another in its own interrupt handler. Against its own CPU a
    this_cpu op is atomic (one instruction, or interrupts off around the generic one: include/asm-generic/percpu.h
    this_cpu_generic_to_op()): the handler's add is never lost, nor the task's."""
    kernel = "test: this_cpu_add(x, 1) || irq: this_cpu_add(x, 10) on the same CPU"
    cpus = Role(1)
    x = PerCpu(0)
    pc = PerCpu(0)
    irqs = PerCpu(0)

    @action(role="cpus", access=this_cpu("this_cpu_add", "x"))
    def add(s, cpu):
        return when(s.pc[cpu] == 0, x={cpu: s.x[cpu] + 1}, pc={cpu: 1})

    @action(role="cpus", irq=True, access=this_cpu("this_cpu_add", "x"))
    def irq_add(s, cpu):
        return when(s.irqs[cpu] == 0, x={cpu: s.x[cpu] + 10}, irqs={cpu: 1})

    @terminal
    def done(s):
        return And(s.pc[0] == 1, s.irqs[0] == 1)

    @sometimes
    def lost_update(s):
        return And(settled(s), s.pc[0] == 1, s.irqs[0] == 1, s.x[0] != 11)

    @sometimes
    def both_added(s):
        return And(settled(s), s.pc[0] == 1, s.irqs[0] == 1, s.x[0] == 11)


@pytest.mark.parametrize("remote", [0, 1, 2])
def test_a_remote_write_between_a_this_cpu_adds_read_and_store_is_lost_under_tso_and_lkmm(remote):
    """xchg(), atomic_xchg() or WRITE_ONCE() of CPU 0's slot from CPU 1 against CPU 0's this_cpu_add: the add
    is one atomic step under sc; x86's add has no LOCK (its store waits in the buffer), and under lkmm it reads
    the slot's older store and places its own last."""
    assert outcomes_at(ThisCpuVsRemote, remote=remote) == ("Never", "Sometimes", "Sometimes")
    trace = explore(ThisCpuVsRemote(remote=remote, memory=LKMM)).outcomes["lost_update"].trace
    assert [st.action for st in trace] == [("remote_xchg", "remote_atomic_xchg", "remote_store")[remote], "add"]
    assert trace[-1].choices == {"x_age": 1}  # the add read the initial 0, before the remote 10


def test_a_this_cpu_op_is_atomic_against_its_own_cpus_interrupt_handler():
    assert outcomes_at(ThisCpuVsIrq) == ("Never", "Never", "Never")
    for mem in (SC, TSO, LKMM):
        assert explore(ThisCpuVsIrq(memory=mem)).outcomes["both_added"].verdict == "holds"


def test_a_this_cpu_op_reads_by_age_under_lkmm():
    """Its read is a load's: an age choice, 0 the newest store."""
    assert Model(ThisCpuVsRemote(memory=LKMM)).actions[0].arg_names == ("x_age",)
    assert Model(ThisCpuVsRemote(memory=TSO)).actions[0].arg_names == ()


# -- tasks: a context switch is a full barrier ------------------------------------------------------------

from checker import PerTask, Task  # noqa: E402


class SameCpuHandOff(Spec):
    """Task 0 stores x and finishes; task 1, on the same CPU after the switch, loads x: it must see 1."""
    kernel = "test: WRITE_ONCE(x, 1); schedule() || READ_ONCE(x) on the same CPU"
    cpus = Role(1)
    tasks = Task(2, cpus="cpus")
    x = Shared(0)
    pc = PerTask(0, role="tasks")
    got = PerTask(-1, role="tasks")

    @action(role="tasks", access=WRITE_ONCE("x"))
    def store(s, t):
        return when(And(t == 1, s.pc[t] == 0), x=1, pc={t: 1})

    @action(role="tasks", access=READ_ONCE("x"))
    def load(s, t):
        return when(And(t == 2, s.pc[t] == 0, s.pc[1] == 1), got={t: s.x}, pc={t: 1})

    @terminal
    def done(s):
        return And(s.pc[1] == 1, s.pc[2] == 1)

    @invariant
    def sees_the_store(s):
        return Implies(s.pc[2] == 1, s.got[2] == 1)

    @sometimes
    def handed_off(s):
        return s.got[2] == 1


def test_a_context_switch_is_a_full_barrier_for_the_tasks_it_switches():
    for mem in (SC, TSO, LKMM):
        r = explore(SameCpuHandOff(memory=mem))
        assert r.complete and r.outcomes["sees_the_store"].verdict == "holds", mem
        assert r.outcomes["handed_off"].verdict == "holds", mem


# -- tso keeps program order inside one step (WEAK_API.md REQUESTs 14:43, 14:47, 15:33) ---------------------

class StepPublish(Spec):
    """One step stores the data, then publishes with a LOCKed cmpxchg (lazy_percpu_counter_switch_to_pcpu()'s
    copy, then atomic64_cmpxchg()); or, with locked=0, two plain stores in one step. The updates list the flag
    first: the order that counts is access=, the program's."""
    kernel = "test: one step's stores in program order"
    locked = Param(1)
    data = Shared(0)
    flag = Shared(0)
    r0 = PerCpu(0)
    r1 = PerCpu(0)
    pc = PerCpu(0)
    writer = Role(1)
    reader = Role(1)

    @action(role="writer", access=(Store("data", "plain"), Rmw("flag", "mb")))
    def publish_cmpxchg(s, cpu):
        """*slot = copy; atomic64_cmpxchg(&flag, 0, 1)."""
        return when(And(s.locked == 1, s.pc[cpu] == 0), pc={cpu: 1}, flag=1, data=1)

    @action(role="writer", access=(Store("data", "plain"), Store("flag", "once")))
    def publish_store(s, cpu):
        """*slot = copy; WRITE_ONCE(flag, 1)."""
        return when(And(s.locked == 0, s.pc[cpu] == 0), pc={cpu: 1}, flag=1, data=1)

    @action(role="reader", access=smp_load_acquire("flag"))  # the reader's side ordered under lkmm too
    def read_flag(s, r):
        return when(s.pc[r] == 0, pc={r: 1}, r0={r: s.flag})

    @action(role="reader", access=READ_ONCE("data"))
    def read_data(s, r):
        return when(s.pc[r] == 1, pc={r: 2}, r1={r: s.data})

    @action()
    def check(s):
        """A step of no CPU (lazy_percpu_counter_exit()): it runs once every buffer is empty."""
        return when(And(s.pc[0] == 1, s.pc[1] == 2, s.r0[1] < 2, s.data == 1), r0={1: s.r0[1] + 2})

    @terminal
    def done(s):
        return s.r0[1] >= 2

    @sometimes
    def pointer_before_copy(s):
        return And(s.pc[1] == 2, s.r0[1] == 1, s.r1[1] == 0)

    @sometimes
    def checked(s):
        return s.r0[1] >= 2


def test_tso_a_store_before_a_locked_rmw_in_the_step_reaches_memory_first():
    """x86: the LOCKed cmpxchg drains the buffer, the copy's store with it: no reader sees the flag first."""
    for sb_depth in (1, 2):
        r = explore(StepPublish(locked=1, memory=TSO, sb_depth=sb_depth))
        assert r.complete and r.verdicts["pointer_before_copy"] == "violated", sb_depth
        assert r.verdicts["checked"] == "holds"  # the step of no CPU runs (it crashed the tso step before)
    assert explore(StepPublish(locked=1, memory=LKMM)).verdicts["pointer_before_copy"] == "violated"


def test_tso_buffers_a_steps_stores_in_access_order_and_spills_what_does_not_fit():
    """Two stores in one step at sb_depth=2: FIFO in program order (data, then flag), so never the flag first.
    At sb_depth=1 the step still runs (no false deadlock): it waits for an empty buffer and the older store
    reaches memory in the step (x86 stalls until it drains), the newer one waits in the buffer."""
    for sb_depth in (1, 2):
        r = explore(StepPublish(locked=0, memory=TSO, sb_depth=sb_depth))
        assert r.complete and r.verdicts["pointer_before_copy"] == "violated", sb_depth
        assert r.verdicts["checked"] == "holds" and r.verdicts["no_deadlock"] == "holds"
    r = explore(StepPublish(locked=0, memory=TSO, sb_depth=1))
    trace = r.outcomes["checked"].trace
    first = trace[0]
    assert first.action == "publish_store" and first.changes["sb_n[0]"] == 1 and first.changes["sb_loc0[0]"] == 1
    # two plain stores in one step are not ordered for other CPUs under lkmm: the flag may be seen first
    assert explore(StepPublish(locked=0, memory=LKMM)).verdicts["pointer_before_copy"] == "holds"


# -- lkmm: an address dependency on a named pointer load (WEAK_API.md REQUEST 15:08) --------------------------

def _mp_two_through(dep):
    return litmus(f"MP+release+addr2-{dep}", [
        [("st", "x", 1, WRITE_ONCE("x")), ("st", "y", 1, WRITE_ONCE("y")), ("st", "p", 1, smp_store_release("p"))],
        [("ld", "p", READ_ONCE("p")), ("ld", "x", Load("x", "plain", dep=dep)), ("ld", "y", Load("y", "plain", dep=dep))]],
        {(1, 0): 1, (1, 2): 0}, variables=("x", "y", "p"))


MP_ADDR2_PREV = _mp_two_through(True)
MP_ADDR2_PTR = _mp_two_through("p")


def test_lkmm_dep_on_the_pointer_orders_every_load_through_it():
    """Two loads through one pointer (lazy_percpu_counter_read()'s slots): dep="p" orders both after the
    pointer's load; dep=True orders the second only after the first (whose store published nothing of y), so
    it may read y's initial value: the false alarm the named dependency removes."""
    assert outcomes(MP_ADDR2_PTR) == ("Never", "Never", "Never")
    assert outcomes(MP_ADDR2_PREV) == ("Never", "Never", "Sometimes")


def test_dep_must_name_a_variable_some_access_reads():
    with pytest.raises(SpecError, match=r"dep='q' names no variable a Load or Rmw reads.*those are: p, x, y"):
        _mp_two_through("q")
    with pytest.raises(SpecError, match=r"dep is True .* or the name of the pointer's variable"):
        Load("x", "plain", dep=3)


def test_the_ordering_bug_specs_are_still_found_under_lkmm_and_not_under_sc():
    """The fixes above remove false alarms only: the relaxed publish and the relaxed mmput stay found."""
    from checker.specs.bugs.check_mm_mmput_relaxed import CheckMmMmputRelaxed
    from checker.specs.bugs.lazy_publish_relaxed import LazyPublishRelaxed

    lazy = dict(ncpus=1, mod_bits=0, neg=0, readers=1)  # one adding task and the reader: 189 states under lkmm
    for cls, params, prop, steps in ((LazyPublishRelaxed, lazy, "relaxed_publish_misorders_the_copy", 13),
                                     (CheckMmMmputRelaxed, dict(ncpus=2, ops=1), "relaxed_drop_misses_an_add", 10)):
        sc_prop = {"relaxed_drop_misses_an_add": "check_mm_sum_exact",
                   "relaxed_publish_misorders_the_copy": "read_sees_the_published_copy"}[prop]
        assert explore(cls(**params, memory=SC)).verdicts[sc_prop] == "holds", cls.__name__
        r = explore(cls(**params, memory=LKMM))
        assert r.verdicts[prop] == "violated" and len(r.outcomes[prop].trace) == steps, cls.__name__


# -- Role(cpu=): members that run on a CPU the state names ------------------------------------------------

def _runs_on(name: str, *, runs_on: bool, mover: str | None = None):
    """A task stores x with WRITE_ONCE on the CPU it runs on; then a step of the CPU it is on now (its softirq)
    loads x. ``mover``: after the store the task moves to CPU 1 by a step of its own (``"migrate"``), or CPU 0
    moves it to a CPU ``dest`` (``"evict"``: a step of the CPU role whose first choice, dest=0, is disabled,
    as stack_cache's ``cpu_down``). In program order on that CPU the load comes after the store (same CPU; or
    after the scheduler's full barrier of the move), so it reads 1."""
    from checker import CpuId

    ns: dict = {"kernel": "test: a task's store, then the softirq of its CPU", "__module__": __name__,
                "__doc__": "A Role(cpu=) test."}
    ns["cpus"] = Role(2)
    ns["tasks"] = Role(1, cpu=(lambda s, t: s.on[t]) if runs_on else None)
    ns["x"] = Shared(0)
    ns["on"] = PerCpu(0, type=CpuId, role="tasks")
    ns["pc"] = PerCpu(0, role="tasks")
    ns["seen"] = PerCpu(-1, role="cpus")
    after = 2 if mover else 1

    def store(s, t):
        return when(s.pc[t] == 0, pc={t: 1}, x=1)

    def migrate(s, t):
        return when(And(s.pc[t] == 1, s.on[t] == 0), on={t: 1}, pc={t: 2})

    def evict(s, c, dest):
        return when(And(dest != c, *[And(s.pc[t] == 1, s.on[t] == c) for t in s.tasks]),
                    on={t: dest for t in s.tasks}, pc={t: 2 for t in s.tasks})

    def softirq(s, c):
        return when(And(s.seen[c] == -1, *[And(s.pc[t] == after, s.on[t] == c) for t in s.tasks]), seen={c: s.x})

    ns["store"] = action(role="tasks", access=WRITE_ONCE("x"))(store)
    if mover == "migrate":
        ns["move"] = action(role="tasks")(migrate)
    elif mover == "evict":
        ns["evict"] = action(role="cpus", choose={"dest": lambda p: p.cpus})(evict)
    ns["softirq"] = action(role="cpus", access=READ_ONCE("x"))(softirq)
    ns["stale"] = sometimes(lambda s: Or(*[s.seen[c] == 0 for c in s.cpus]))
    ns["fresh"] = sometimes(lambda s: Or(*[s.seen[c] == 1 for c in s.cpus]))
    ns["done"] = terminal(lambda s: Or(*[s.seen[c] != -1 for c in s.cpus]))
    return type(name, (Spec,), ns)



ON_CPU = _runs_on("OnCpu", runs_on=True)
OWN_BUFFER = _runs_on("OwnBuffer", runs_on=False)
MIGRATES = _runs_on("Migrates", runs_on=True, mover="migrate")


@pytest.mark.parametrize("memory", [TSO, LKMM])
def test_a_role_cpu_member_shares_its_cpus_store_buffer_and_view(memory):
    """Role(cpu=): the task's store and its CPU's softirq are one CPU's program order (never stale); a role
    without cpu= has a buffer and views of its own, so the CPU may read x before the task's store reaches it."""
    r = explore(ON_CPU(memory=memory))
    assert r.complete and r.outcomes["stale"].verdict == "violated"
    r = explore(OWN_BUFFER(memory=memory))
    assert r.outcomes["stale"].verdict == "holds"


@pytest.mark.parametrize("memory", [TSO, LKMM])
def test_a_migration_is_a_full_barrier_on_both_cpus(memory):
    """The task stores on CPU 0 and moves to CPU 1, whose softirq then loads x: the scheduler's barrier drained
    CPU 0's buffer (tso) or joined its view into CPU 1's (lkmm) first."""
    r = explore(MIGRATES(memory=memory))
    assert r.complete and r.outcomes["stale"].verdict == "violated"


def test_a_role_cpu_step_names_its_cpu_in_the_trace():
    """The CPU a member's step ran on is a choice of the step under tso and lkmm (not under sc)."""
    tso = explore(ON_CPU(memory=TSO)).outcomes["fresh"].trace
    assert [(st.action, st.choices) for st in tso if st.action == "store"] == [("store", {"on_cpu": 0})]
    sc = explore(ON_CPU(memory=SC)).outcomes["fresh"].trace
    assert [(st.action, st.choices) for st in sc if st.action == "store"] == [("store", {})]


@pytest.mark.parametrize("spec", ["ON_CPU", "MIGRATES"])
def test_tso_with_role_cpu_is_compiled_state_for_state(spec):
    _same_on_both(globals()[spec], memory=TSO, sb_depth=1)


@pytest.mark.parametrize("spec", ["ON_CPU", "OWN_BUFFER", "MIGRATES"])
def test_lkmm_with_role_cpu_is_compiled_state_for_state(spec):
    """The migration's barrier on terms: one branch per (old CPU, new CPU)."""
    _same_on_both(globals()[spec], memory=LKMM, lkmm_history=2)


def test_role_cpu_must_be_a_function_and_needs_a_cpu_role():
    with pytest.raises(SpecError, match="cpu= is the CPU a member runs on"):
        type("BadCpu", (Spec,), {"kernel": "x", "__module__": __name__, "cpus": Role(1), "tasks": Role(1, cpu=3)})
    with pytest.raises(SpecError, match="declare the CPUs as a role of their own"):
        type("NoCpus", (Spec,), {"kernel": "x", "__module__": __name__,
                                 "tasks": Role(1, cpu=lambda s, t: 0)})


# -- the kernel's names for the atomics -------------------------------------------------------------------

@pytest.mark.parametrize("op, kind, order", [
    ("atomic_dec_and_test", "rmw", "mb"), ("atomic64_cmpxchg", "rmw", "mb"), ("atomic64_cmpxchg_relaxed", "rmw", "relaxed"),
    ("atomic_long_add_return_acquire", "rmw", "acquire"), ("atomic_fetch_or_release", "rmw", "release"),
    ("atomic_inc", "rmw", "unordered"), ("atomic64_add", "rmw", "unordered"), ("atomic_inc_not_zero", "rmw", "mb"),
    ("atomic_add_unless", "rmw", "mb"), ("atomic_xchg", "rmw", "mb"), ("atomic_read", "load", "once"),
    ("atomic_read_acquire", "load", "acquire"), ("atomic_set", "store", "once"), ("atomic_set_release", "store", "release"),
])
def test_atomic_ops_are_ordered_as_atomic_t_txt_says(op, kind, order):
    from checker import atomic

    a = atomic(op, "v")
    assert (a.kind, a.var, a.order) == (kind, "v", order)


@pytest.mark.parametrize("op, kind, order", [
    ("this_cpu_add", "rmw", "this_cpu"), ("this_cpu_try_cmpxchg", "rmw", "this_cpu"), ("__this_cpu_sub", "rmw", "this_cpu"),
    ("this_cpu_read", "load", "once"), ("__this_cpu_read", "load", "plain"), ("__this_cpu_write", "store", "plain"),
])
def test_this_cpu_ops_by_their_kernel_names(op, kind, order):
    from checker import this_cpu

    a = this_cpu(op, "local")
    assert (a.kind, a.order) == (kind, order)


def test_the_xchg_and_cmpxchg_forms():
    from checker import cmpxchg, cmpxchg_acquire, xchg, xchg_relaxed, xchg_release

    assert [a.order for a in (xchg("p"), xchg_relaxed("p"), xchg_release("p"), cmpxchg("p"), cmpxchg_acquire("p"))] == \
        ["mb", "relaxed", "release", "mb", "acquire"]


def test_an_atomic_op_that_is_not_named_as_the_kernel_names_it_is_refused_where_it_is_written():
    from checker import atomic, this_cpu

    with pytest.raises(SpecError, match="name the kernel's operation") as e:
        atomic("dec_and_test", "v")
    assert e.value.file == __file__
    with pytest.raises(SpecError, match="this_cpu\\(\"this_cpu_add\""):
        this_cpu("add", "v")
EVICTED = _runs_on("Evicted", runs_on=True, mover="evict")


@pytest.mark.parametrize("memory", [TSO, LKMM])
def test_a_move_by_a_step_whose_first_choice_is_disabled_is_still_a_barrier(memory):
    """Which steps may move a member is read off their updates on symbols, for every CPU and choice: at the
    first alone (evict(cpu=0, dest=0), disabled) the step seemed to write nothing, so the move was no barrier
    and CPU 1 read x before the task's store (stack_cache's cpu_down)."""
    r = explore(EVICTED(memory=memory))
    assert r.complete and r.outcomes["stale"].verdict == "violated" and r.outcomes["fresh"].verdict == "holds"


def _lb_of_values(dependent: bool) -> type:
    """LB on two Bool locations (so a promise may take either value): each CPU loads one location into its
    register, then stores the other, with the register (``dependent``: LB+datas) or the constant 1."""

    class LbValues(Spec):
        """LB+datas (out of thin air) or LB+poonceonces, on Bool locations."""
        kernel = "litmus LB+datas"
        x = Shared(False, type=Bool)
        y = Shared(False, type=Bool)
        r = PerCpu(False, type=Bool)
        pc = PerCpu(0)
        p0 = Role(1)
        p1 = Role(1)

        @action(role="p0", access=READ_ONCE("x"))
        def p0_load(s, cpu):
            return when(s.pc[cpu] == 0, pc={cpu: 1}, r={cpu: s.x})

        @action(role="p0", access=WRITE_ONCE("y"))
        def p0_store(s, cpu):
            return when(s.pc[cpu] == 1, pc={cpu: 2}, y=s.r[cpu] if dependent else True)

        @action(role="p1", access=READ_ONCE("y"))
        def p1_load(s, cpu):
            return when(s.pc[cpu] == 0, pc={cpu: 1}, r={cpu: s.y})

        @action(role="p1", access=WRITE_ONCE("x"))
        def p1_store(s, cpu):
            return when(s.pc[cpu] == 1, pc={cpu: 2}, x=s.r[cpu] if dependent else True)

        @terminal
        def done(s):
            return And(s.pc[0] == 2, s.pc[1] == 2)

        @sometimes
        def exists(s):
            return And(settled(s), s.pc[0] == 2, s.pc[1] == 2, s.r[0] == 1, s.r[1] == 1)

    return LbValues


def test_a_promise_is_never_fulfilled_by_a_store_that_depends_on_a_later_load():
    """Out of thin air (LB+datas, LKMM: Never): P0 may promise y=1 (a Bool), P1 read it and store x=1, but P0's
    store of y takes its value from its load of x, made after the promise: the register is tainted and the
    store cannot fulfil it. With constant stores (LB) the same promise is fulfilled: Sometimes. Both engines
    agree state for state."""
    assert outcomes(_lb_of_values(True)) == ("Never", "Never", "Never")
    assert outcomes(_lb_of_values(False)) == ("Never", "Never", "Sometimes")
    for dep in (True, False):
        a = explore(Model(_lb_of_values(dep)(memory=LKMM)), engine="compiled")
        b = explore(Model(_lb_of_values(dep)(memory=LKMM)), engine="interpreted")
        assert a.engine == "compiled", a.engine_note
        assert (a.states, a.transitions, a.verdicts) == (b.states, b.transitions, b.verdicts)


def test_properties_are_judged_only_where_no_promise_is_out():
    """While P0's promise of y=1 is out, y holds 1 before P0's store has run: an invariant that y is 1 only
    after P0's store would fail there, but that state is no observation of the program (checker.ordering.
    promises): it holds, under lkmm as under sc, and LB's exists is still reached once the promise is kept."""
    base = _lb_of_values(False)

    class Stored(base):
        @invariant
        def y_only_after_p0_stored(s):
            return Implies(s.y == 1, s.pc[0] == 2)

    r = explore(Stored(memory=LKMM))
    assert r.complete and r.verdicts["y_only_after_p0_stored"] == "holds"
    assert r.verdicts["exists"] == "holds" and r.verdicts["no_deadlock"] == "holds"
