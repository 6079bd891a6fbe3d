# SPDX-License-Identifier: GPL-2.0-only
"""Specs that compute with C's bit operators, checked by the explorer, by Z3 (BMC) and by SPIN.

The motivating case: a two-level tree of per-CPU counters that propagates a carry to its parent
with ``(inc ^ orig ^ res) & bit_mask`` (the carry into bit ``k`` of the per-CPU add). A bug variant
that forgets ``orig`` is found on every backend; a shift by a count that reaches the width is
undefined behaviour, reported at its line with the shortest trace.
"""
import random

import pytest

from checker import (S32, U32, And, AllOf, Implies, PerCpu, Param, Role, Shared, Spec, SpecError, Sum, action,
                     invariant, sometimes, terminal, when)
from checker.explore import explore
from checker.export import export_promela, spin
from checker.prove import bmc_checks
from checker.language.compile import Model
from checker.language.lint import lint
from checker.types import IntType


class TreeCarry(Spec):
    """A test spec after a per-CPU counter tree: each CPU adds to its own u32 counter
    (``res = this_cpu_add_return(*cnt, inc)``), takes the carry into bit k as
    ``(inc ^ orig ^ res) & bit_mask`` and then adds it to the parent (``atomic_add``)."""

    kernel = "a test of C's bit operators, after a 2025 per-CPU counter tree patch"
    ncpus = Param(2, explore=(1, 2))
    k = Param(1, doc="the bit a carry goes into: the parent counts units of 2^k")
    adds = Param(3, doc="adds per CPU")
    cpus = Role("ncpus", symmetric=True)

    local = PerCpu(0, type=U32, role="cpus", doc="this CPU's counter")
    pending = PerCpu(0, type=U32, role="cpus", doc="the carry computed, not yet added to the parent")
    done = PerCpu(0, role="cpus")
    parent = Shared(0, type=U32, doc="the parent counter, in units of 2^k")

    @action(role="cpus", choose={"inc": (1,)})
    def add(s, cpu, inc):
        """this_cpu_add_return(), then the carry into bit k."""
        orig = s.local[cpu]
        res = orig + inc
        carry = s.spec.carry(inc, orig, res, U32(1) << s.k)
        return when(And(s.done[cpu] < s.adds, s.pending[cpu] == 0), local={cpu: res},
                    pending={cpu: (carry >> s.k)}, done={cpu: s.done[cpu] + 1})

    @staticmethod
    def carry(inc, orig, res, bit_mask):
        return (inc ^ orig ^ res) & bit_mask

    @action(role="cpus")
    def propagate(s, cpu):
        """atomic_add(carry, &parent->count)."""
        return when(s.pending[cpu] != 0, parent=s.parent + s.pending[cpu], pending={cpu: 0})

    @invariant
    def parent_counts_carries(s):
        return s.parent + Sum(s.pending) == Sum([x >> s.k for x in s.local])

    @sometimes
    def a_carry_reaches_the_parent(s):
        return s.parent > 0

    @terminal
    def finished(s):
        return AllOf([And(d == s.adds, p == 0) for d, p in zip(s.done, s.pending)])


class TreeCarryNoOrig(TreeCarry, expect_violated=("parent_counts_carries",)):
    """The carry taken as ``(inc ^ res) & bit_mask``: bit k of the result, not the carry into it."""

    @staticmethod
    def carry(inc, orig, res, bit_mask):
        return (inc ^ res) & bit_mask


class LevelShift(Spec):
    """A test spec: a reader shifts a word by 16 per level; at level 2 that is the whole width."""

    kernel = "a test of undefined shifts"
    word = Shared(-0x10000, type=S32)
    level = Shared(0)
    out = Shared(0, type=S32)

    @action
    def up(s):
        return when(s.level < 2, level=s.level + 1)

    @action
    def read(s):
        return when(s.level > 0, out=s.word >> (s.level * 16))

    @invariant
    def out_is_sign(s):
        return (s.out == 0) | (s.out == -1) == 1

    @sometimes
    def read_once(s):
        return s.out == -1

    @terminal
    def never(s):
        return s.level == 3


def test_tree_carry_holds_on_the_explorer_and_z3():
    for n in (1, 2):
        r = explore(Model(TreeCarry(ncpus=n)))
        assert {k: o.verdict for k, o in r.outcomes.items()} == {
            "parent_counts_carries": "holds", "a_carry_reaches_the_parent": "holds", "no_overflow": "holds",
            "no_undefined_behaviour": "holds",
            "no_deadlock": "holds"}
    checks = {c.property: c for c in bmc_checks(TreeCarry, TreeCarry(ncpus=1).params, 5)}
    assert checks["parent_counts_carries"].extra["exhausted"]  # every run ends within 4 steps: final
    assert {n: c.verdict for n, c in checks.items()} == {n: "holds" for n in checks}


def test_forgetting_orig_is_found_with_the_same_shortest_trace_on_both():
    r = explore(Model(TreeCarryNoOrig(ncpus=1)))
    bad = r.outcomes["parent_counts_carries"]
    assert bad.verdict == "violated"
    # 1 -> 2 carries into bit 1 (counted); 2 -> 3 does not, but bit 1 of res is set: counted again
    assert [st.action for st in bad.trace] == ["add", "add", "propagate", "add"]
    z = {c.property: c for c in bmc_checks(TreeCarryNoOrig, TreeCarryNoOrig(ncpus=1).params, 4)}
    assert z["parent_counts_carries"].verdict == "violated"
    assert [st.action for st in z["parent_counts_carries"].trace] == ["add", "add", "propagate", "add"]


def test_a_shift_by_the_width_is_undefined_behaviour_at_its_line_with_the_shortest_trace():
    m = Model(LevelShift())
    r = explore(m)
    ub = r.outcomes["no_undefined_behaviour"]
    assert ub.verdict == "violated"
    assert [st.action for st in ub.trace] == ["up", "up", "read"]
    line = next(i for i, t in enumerate(open(__file__), 1) if "s.word >> (s.level * 16)" in t)
    assert ub.trace[-1].changes == {"ub": line}
    assert m.show_value("ub", line) == f"shift count out of range at line {line}"
    # the read at level 1 is defined and reached: the check is not vacuous
    assert r.outcomes["read_once"].verdict == "holds" and r.outcomes["out_is_sign"].verdict == "holds"
    z = {c.property: c for c in bmc_checks(LevelShift, LevelShift().params, 3)}
    assert z["no_undefined_behaviour"].verdict == "violated"
    assert [st.action for st in z["no_undefined_behaviour"].trace] == ["up", "up", "read"]


def test_bit_operators_on_an_unbounded_int_are_refused_at_load_with_the_line():
    class Unbounded(Spec):
        kernel = "a test"
        x = Shared(0)
        w = Shared(0, type=U32)

        @action
        def flip(s):
            return when(s.x < 1, x=s.x ^ 1, w=s.w)

        @terminal
        def done(s):
            return s.x == 1

    with pytest.raises(SpecError, match=r"Unbounded.flip: `return when\(s.x < 1, x=s.x \^ 1, w=s.w\)`: the left "
                                        r"operand of `\^` is an unbounded int.*type=U64"):
        lint(Model(Unbounded()))


# -- SPIN: S32 and narrower words against the reference ----------------------------------------------------------
U8, S16 = IntType("u8", 8, False), IntType("s16", 16, True)


def conv(v, bits, signed):
    v &= (1 << bits) - 1
    return v - (1 << bits) if signed and v >> (bits - 1) else v


def reference_rows(rng, n):
    """(a: s32, b: s32, c: u8, d: s16, k) and what C gives for each expression of Ops.compute."""
    rows = []
    for _ in range(n):
        a, b = rng.randint(S32.lo, S32.hi), rng.randint(S32.lo, S32.hi)
        c, d, k = rng.randint(0, 255), rng.randint(S16.lo, S16.hi), rng.randrange(32)
        want = (a & b, a | b, a ^ b, ~a, conv(a << k, 32, True), a >> k,
                c & d, ~c, conv(c << k, 32, True), d >> (k % 16), conv(a ^ d, 32, True))
        rows.append(((a, b, c, d, k), want))
    return rows


ROWS = reference_rows(random.Random(5), 12)
RESULTS = ("r_and", "r_or", "r_xor", "r_not", "r_shl", "r_shr", "r_mix", "r_notc", "r_shlc", "r_shrd", "r_xad")


class Ops(Spec):
    """A test spec: loads one row of operands, computes every operator once."""

    kernel = "a test of the Promela printing of C's bit operators"
    row = Shared(-1)
    a = Shared(0, type=S32)
    b = Shared(0, type=S32)
    c = Shared(0, type=U8)
    d = Shared(0, type=S16)
    k = Shared(0)
    locals().update({r: Shared(0) for r in RESULTS})

    @action(choose={"i": range(len(ROWS))})
    def load(s, i):
        a, b, c, d, k = ROWS[i][0]
        return when(s.row == -1, row=i, a=a, b=b, c=c, d=d, k=k)

    @action
    def compute(s):
        a, b, c, d, k = s.a, s.b, s.c, s.d, s.k
        vals = (a & b, a | b, a ^ b, ~a, a << k, a >> k, c & d, ~c, c << k, d >> (k % 16), a ^ d)
        return when(And(s.row >= 0, s.r_and == 0, s.r_or == 0), **dict(zip(RESULTS, vals)), row=s.row + 100)

    @invariant
    def matches_c(s):
        return AllOf([Implies(s.row == 100 + i, And(*[getattr(s, r) == v for r, v in zip(RESULTS, want)]))
                      for i, (_, want) in enumerate(ROWS)])

    @sometimes
    def computed(s):
        return s.row >= 100

    @terminal
    def done(s):
        return s.row >= 100


def test_every_operator_matches_c_on_the_explorer():
    # (Z3 on the same operators: tests/test_bitops.py; a BMC of all eleven 32-bit operators at once
    # is minutes of bit-blasting, not a unit test.)
    r = explore(Model(Ops()))
    assert r.outcomes["matches_c"].verdict == "holds" and r.outcomes["computed"].verdict == "holds"


@pytest.mark.skipif(not spin.available(), reason="SPIN is not installed: apt-get install spin (as .ci/run does)")
def test_spin_agrees_on_every_operator_and_on_the_undefined_shift(tmp_path):
    for spec, want in ((Ops(), {"matches_c": "holds", "computed": "holds"}),
                       (LevelShift(), {"no_undefined_behaviour": "violated", "read_once": "holds"})):
        model = Model(spec)
        exported = export_promela(model, sometimes=True)
        ours = explore(model, symmetry=False)
        theirs = spin.run(exported, tmp_path, flags=spin.cflags(reduce=False, optimize="-O0"),
                          expected_states=ours.states)
        assert theirs.stored == ours.states + exported.extra_states
        got = spin.verdicts(exported, theirs)
        assert got == {name: o.verdict for name, o in ours.outcomes.items()}
        for p, v in want.items():
            assert got[p] == v


def test_a_u32_word_is_refused_by_the_promela_export_naming_why():
    from checker.export import NotExportable

    with pytest.raises(NotExportable, match="unsigned 32-bit word"):
        export_promela(Model(TreeCarry(ncpus=1)))


def test_true_division_on_a_state_value_says_use_floor_division_at_load():
    class Halves(Spec):
        kernel = "a test"
        x = Shared(4)

        @action
        def halve(s):
            return when(s.x > 1, x=s.x / 2)

        @terminal
        def done(s):
            return s.x <= 1

    with pytest.raises(SpecError, match=r"Halves.halve: `return when\(s.x > 1, x=s.x / 2\)`: `/` is true "
                                        r"division.*Write `//`"):
        lint(Model(Halves()))


@pytest.mark.parametrize("spec", [TreeCarry, TreeCarryNoOrig, LevelShift, Ops], ids=lambda c: c.__name__)
def test_the_compiled_engine_prints_bit_operators_with_the_interpreters_meaning(spec):
    """Both engines, state for state: the C printer's bit-vectors (checker.compiled.cterms) against
    checker.cint on the explorer, the undefined-shift check included (LevelShift shifts by the whole
    width at level 2: both stop the run there, with the same trace)."""
    from checker.compiled.build import CompilerMissing, compiler

    try:
        compiler()
    except CompilerMissing:
        pytest.skip("no C compiler ($CC, else cc): apt-get install gcc")
    for symmetry in (True, False):
        a = explore(Model(spec()), symmetry=symmetry, engine="compiled")
        b = explore(Model(spec()), symmetry=symmetry, engine="interpreted")
        assert a.engine == "compiled", a.engine_note
        assert (a.states, a.transitions, a.depth) == (b.states, b.transitions, b.depth)
        assert {n: (o.verdict, o.trace) for n, o in a.outcomes.items()} == \
            {n: (o.verdict, o.trace) for n, o in b.outcomes.items()}
