# SPDX-License-Identifier: GPL-2.0-only
"""The compiled engine's lkmm lowering and the interpreter agree on a store its access= does not list.

A step that stores to another CPU's per-CPU slot, where its access= lists only its own slot's store, is a spec
error on the interpreter (checker/ordering/machine.py ``unlisted_store``). On terms the lowering cannot tell
that store from the spec restating the slot (``{c: If(c == cpu, new, s.x[c])}``), so it asks Z3 whether the
slot can change on an enabled step; where it can, the point is not lowered and runs on the interpreter, which
refuses it as it would have.
"""
from __future__ import annotations

import pytest

import checker.ordering.lkmm as lkmm
from checker import And, If, PerCpu, Role, Spec, SpecError, WRITE_ONCE, action, invariant, sometimes, terminal, when
from checker.compiled.lower import lower
from checker.errors import NotLowerable
from checker.explore import explore
from checker.language.compile import Model
from checker.ordering.declare import MEMORY


class PokesTheNextSlot(Spec):
    """Each CPU writes its own x and, unlisted, the next CPU's x."""
    kernel = "test: WRITE_ONCE(*this_cpu_ptr(&x), 1) plus a plain store to the next CPU's x"
    cpus = Role(2)
    x = PerCpu(0)
    done = PerCpu(0)

    @action(role="cpus", access=WRITE_ONCE("x"))
    def poke(s, cpu):
        return when(s.done[cpu] == 0, x={cpu: 1, 1 - cpu: 1}, done={cpu: 1})

    @invariant
    def at_most_one(s):
        return s.x[0] + s.x[1] <= 2

    @terminal
    def finished(s):
        return And(s.done[0] == 1, s.done[1] == 1)

    @sometimes
    def both_set(s):
        return And(s.x[0] == 1, s.x[1] == 1)


class RestatesTheNextSlot(PokesTheNextSlot):
    """The same step, restating the next CPU's slot: a term that differs only where the step is disabled (Z3
    says it never changes the slot), so it is no store and the point is lowered."""

    @action(role="cpus", access=WRITE_ONCE("x"))
    def poke(s, cpu):
        return when(s.done[cpu] == 0, x={cpu: 1, 1 - cpu: If(s.done[cpu] == 0, s.x[1 - cpu], 1)}, done={cpu: 1})


def test_the_interpreter_refuses_the_unlisted_store_and_the_compiled_engine_hands_it_over():
    with pytest.raises(SpecError) as interpreted:
        explore(PokesTheNextSlot(memory=MEMORY.lkmm), engine="interpreted")
    with pytest.raises(NotLowerable, match="another CPU's slot"):
        lower(Model(PokesTheNextSlot(memory=MEMORY.lkmm)))
    with pytest.raises(SpecError) as compiled:  # the fallback: the interpreter, and its error
        explore(PokesTheNextSlot(memory=MEMORY.lkmm), engine="compiled")
    assert str(compiled.value) == str(interpreted.value)
    assert "writes x[1]" in str(interpreted.value) or "writes x[0]" in str(interpreted.value)
    # it lists a store of x, of its own slot: the error says so, and how to name the other slot
    assert "does not name: its Store of 'x' is of its own CPU's slot" in str(interpreted.value)
    assert "slot=lambda s, cpu:" in str(interpreted.value)


def test_without_the_z3_check_the_lowering_would_drop_the_store(monkeypatch):
    """What the check guards against: the lowering took the store for a restated slot."""
    monkeypatch.setattr(lkmm, "_can_hold", lambda cond: False)
    lower(Model(PokesTheNextSlot(memory=MEMORY.lkmm)))  # no error: the store would be lost


def test_a_restated_slot_still_lowers(monkeypatch):
    asked = []
    real = lkmm._can_hold
    monkeypatch.setattr(lkmm, "_can_hold", lambda cond: asked.append(real(cond)) or asked[-1])
    lower(Model(RestatesTheNextSlot(memory=MEMORY.lkmm)))
    assert asked and not any(asked)  # Z3 was asked, and said the slot never changes
    assert explore(RestatesTheNextSlot(memory=MEMORY.lkmm), engine="interpreted").verdicts["both_set"] == "holds"
