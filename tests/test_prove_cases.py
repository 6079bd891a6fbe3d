# SPDX-License-Identifier: GPL-2.0-only
"""A step's question split by the values its ``If``s test slots against (checker.prove.cases)."""
from __future__ import annotations

import z3

from checker.prove.cases import MAX_SPLIT, split


def test_each_value_a_slot_is_tested_against_is_a_case_and_none_of_them_the_last():
    level, x, y = z3.Ints("level x y")
    post = [z3.If(level == 1, x + 1, z3.If(level == 2, x + 2, x)), y]
    cases = split([level, x, y], [level >= 0, *post])
    assert [str(c) for c in cases] == ["And(level == 1)", "And(level == 2)", "And(And(level != 1, level != 2))"]
    # together they are every state
    s = z3.Solver()
    s.add(z3.Not(z3.Or(cases)))
    assert s.check() == z3.unsat


def test_two_slots_tested_give_the_product_of_their_cases():
    a, b, x = z3.Ints("a b x")
    cases = split([a, b, x], [z3.If(a == 0, x, z3.If(b == 3, x + 1, x + 2))])
    assert len(cases) == 2 * 2


def test_a_step_with_no_slot_tested_against_a_number_has_one_case():
    x, y = z3.Ints("x y")
    assert [str(c) for c in split([x, y], [z3.If(x == y, x, y), z3.If(x % 4 == 0, 4, 0)])] == ["True"]


def test_a_step_with_more_cases_than_the_limit_is_asked_whole():
    slots = z3.Ints(" ".join(f"s{i}" for i in range(7)))
    post = [z3.If(s == 1, s, s + 1) for s in slots]  # 2 ** 7 cases
    assert 2 ** 7 > MAX_SPLIT
    assert [str(c) for c in split(slots, post)] == ["True"]


def test_an_obligation_asked_in_cases_holds_when_it_holds_in_every_case_and_shows_a_case_counterexample():
    from checker.prove.solver import Solver

    level, x = z3.Ints("level x")
    after = z3.If(level == 1, x + 1, x)
    cases = split([level, x], [after])
    solver = Solver(10)
    assert solver.obligation("keeps", [x >= 0], after >= 0, cases).result == "unsat"
    a = solver.obligation("grows", [x >= 0], after > x, cases)  # not when level != 1
    assert a.result == "sat"
    assert a.model.eval(level).as_long() != 1


def test_goals_undecided_together_in_a_case_are_asked_one_by_one_never_all_at_once_whole():
    """The joint question of a step's goals is the hardest (the counter tree's add at 6 CPUs); in cases, an
    undecided case sends each goal to its own questions, not the joint question to the whole step. The joint
    question is a shortcut, with a quarter of the budget; each goal has the whole budget."""
    from checker.prove.solver import Answer, Solver

    level, x = z3.Ints("level x")
    after = z3.If(level == 1, x + 1, x)
    cases = split([level, x], [after])
    asked, budgets = [], {}

    class Hard(Solver):
        def _whole(self, name, hyps, goal, timeout=None):
            asked.append((name, len(hyps)))
            budgets[name] = timeout
            if name == "together":
                return Answer("unknown", reason="made so")
            return super()._whole(name, hyps, goal, timeout)

    answers = Hard(10).obligations(["keeps", "grows_not"], [x >= 0], [after >= 0, after >= x], cases)
    assert [a.result for a in answers] == ["unsat", "unsat"]
    assert ("together", 2) in asked and ("together", 1) not in asked  # in a case, never whole
    assert ("keeps", 2) in asked and ("keeps", 1) not in asked
    assert budgets == {"together": 2.5, "keeps": None, "grows_not": None}  # None: the solver's own, 10
