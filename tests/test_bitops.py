# SPDX-License-Identifier: GPL-2.0-only
"""C's bit operators on typed words (checker.cint), on every backend, against a reference model of C.

The reference is written here from the C standard, independently of checker.cint: values are Python
ints masked to the width and sign-adjusted; promotions and the usual arithmetic conversions by width.
The explorer's ``Word``, the Z3 terms (evaluated by substitution, so the solver's own reading of the
bit-vector operators is what is compared), gcc on real C (the standard widths) and SPIN (the widths
Promela's int holds) must each give the reference's value and type on random values.
"""
import random
import shutil
import subprocess

import pytest
import z3
from hypothesis import given, settings, strategies as st

from checker import S32, S64, U32, U64
from checker.cint import UB_LOG, WordRuleError, word
from checker.symbolic.term import Sym
from checker.types import IntType

U8, S8 = IntType("u8", 8, False), IntType("s8", 8, True)
U16, S16 = IntType("u16", 16, False), IntType("s16", 16, True)
U56, S48 = IntType("u56", 56, False), IntType("s48", 48, True)
TYPES = (U32, S32, U64, S64, U8, S8, U16, S16, U56, S48)
OPS = ("&", "|", "^")


# -- the reference: C11 6.3.1.1 (promotions), 6.3.1.8 (usual conversions), 6.5.7 (shifts) -------------------
def conv(v, bits, signed):
    v &= (1 << bits) - 1
    return v - (1 << bits) if signed and v >> (bits - 1) else v


def promoted(t):
    return (32, True) if t.bits < 32 else (t.bits, t.signed)


def usual(a, b):
    (wa, sa), (wb, sb) = a, b
    if sa == sb:
        return (max(wa, wb), sa)
    (wu, _), (ws, _) = (a, b) if not sa else (b, a)
    return (wu, False) if wu >= ws else (ws, True)


def ref_binary(op, a, ta, b, tb):
    w, s = usual(promoted(ta), promoted(tb))
    x, y = conv(a, w, s), conv(b, w, s)
    r = {"&": x & y, "|": x | y, "^": x ^ y}[op]
    return conv(r, w, s), (w, s)


def ref_invert(a, ta):
    w, s = promoted(ta)
    return conv(~conv(a, w, s), w, s), (w, s)


def ref_shift(op, a, ta, k):
    w, s = promoted(ta)
    if not 0 <= k < w:
        return None, (w, s)  # undefined
    x = conv(a, w, s)
    if op == "<<":
        return conv(x << k, w, s), (w, s)  # gcc: signed << is two's complement
    return (x >> k if s else (x % (1 << w)) >> k), (w, s)


def value_of(t):
    return st.integers(t.lo, t.hi)


def typed_pair():
    return st.sampled_from(TYPES).flatmap(lambda ta: st.sampled_from(TYPES).flatmap(
        lambda tb: st.tuples(st.just(ta), value_of(ta), st.just(tb), value_of(tb))))


def sym_eval(term, env):
    """A Z3 term's value with its symbols replaced by numbers (z3's own semantics of each operator)."""
    subs = [(z3.Int(n), z3.IntVal(v)) for n, v in env.items()]
    r = z3.simplify(z3.substitute(term, *subs))
    assert z3.is_int_value(r), r
    return r.as_long()


def kind(t):
    return (t.bits, t.signed)


# -- the explorer's words -----------------------------------------------------------------------------------------
@settings(max_examples=400, deadline=None)
@given(typed_pair(), st.sampled_from(OPS))
def test_explorer_bit_operators_follow_c(case, op):
    ta, a, tb, b = case
    r = {"&": word(a, ta) & word(b, tb), "|": word(a, ta) | word(b, tb), "^": word(a, ta) ^ word(b, tb)}[op]
    want, typ = ref_binary(op, a, ta, b, tb)
    assert (int(r), kind(r.ctype)) == (want, typ)


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(TYPES).flatmap(lambda t: st.tuples(st.just(t), value_of(t))), st.integers(-3, 70),
       st.sampled_from(("<<", ">>")))
def test_explorer_shifts_and_invert_follow_c(case, k, op):
    t, a = case
    inv = ~word(a, t)
    assert (int(inv), kind(inv.ctype)) == ref_invert(a, t)
    del UB_LOG[:]
    r = word(a, t) << k if op == "<<" else word(a, t) >> k
    want, typ = ref_shift(op, a, t, k)
    if want is None:
        assert UB_LOG and UB_LOG[0][0] is True  # undefined: reported, never a value
    else:
        assert not UB_LOG and (int(r), kind(r.ctype)) == (want, typ)
    del UB_LOG[:]


# -- Z3 -----------------------------------------------------------------------------------------------------------
@settings(max_examples=200, deadline=None)
@given(typed_pair(), st.sampled_from(OPS))
def test_z3_bit_operators_follow_c(case, op):
    ta, a, tb, b = case
    x, y = Sym(z3.Int("a"), ta), Sym(z3.Int("b"), tb)
    r = {"&": x & y, "|": x | y, "^": x ^ y}[op]
    want, typ = ref_binary(op, a, ta, b, tb)
    assert (sym_eval(r.z, {"a": a, "b": b}), kind(r.type)) == (want, typ)


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(TYPES).flatmap(lambda t: st.tuples(st.just(t), value_of(t))), st.integers(-3, 70),
       st.sampled_from(("<<", ">>")))
def test_z3_shifts_and_invert_follow_c(case, k, op):
    t, a = case
    x, n = Sym(z3.Int("a"), t), Sym(z3.Int("k"), S32)
    assert (sym_eval((~x).z, {"a": a}), kind((~x).type)) == ref_invert(a, t)
    del UB_LOG[:]
    r = x << n if op == "<<" else x >> n
    (cond, _line), = UB_LOG
    del UB_LOG[:]
    undefined = z3.simplify(z3.substitute(cond, (z3.Int("k"), z3.IntVal(k))))
    want, typ = ref_shift(op, a, t, k)
    assert z3.is_true(undefined) == (want is None)
    if want is not None:
        assert (sym_eval(r.z, {"a": a, "k": k}), kind(r.type)) == (want, typ)


def test_z3_lowering_uses_only_the_listed_operators():
    """The set the compiled engine's C printer follows (listed in docs/spec-authoring.md)."""
    allowed = {"int_to_bv", "ubv_to_int", "bvand", "bvor", "bvxor", "bvnot", "bvshl", "bvashr", "bvlshr",
               "bvslt", "if", "-", "<", ">=", "or"}
    x, y, k = Sym(z3.Int("a"), S32), Sym(z3.Int("b"), U64), Sym(z3.Int("k"), S32)
    seen = set()
    terms = [(x & y).z, (x | 3).z, (~x ^ y).z, (x << k).z, (x >> k).z, (y >> 2).z, U32(x).z]
    terms += [c for c, _ in UB_LOG]
    del UB_LOG[:]
    todo = list(terms)
    while todo:
        t = todo.pop()
        if z3.is_int_value(t) or z3.is_bv_value(t) or (z3.is_const(t) and t.decl().kind() == z3.Z3_OP_UNINTERPRETED):
            continue
        seen.add(t.decl().name())
        todo += t.children()
    assert seen == allowed, seen ^ allowed


# -- mixed operands and refusals --------------------------------------------------------------------------------
def test_a_plain_number_takes_the_word_type():
    r = word(5, U32) & -1
    assert (int(r), r.ctype) == (5, U32)
    assert int(~word(0, U8)) == -1 and (~word(0, U8)).ctype == S32  # u8 promotes to int, as in C
    assert int(word(1, U64) << 40) == 1 << 40


def test_a_constant_wider_than_the_word_is_refused_with_its_type():
    with pytest.raises(WordRuleError, match=r"does not fit a 32-bit word \(u32\).*U64\(0x100000000\)"):
        word(1, U32) | (1 << 32)


def test_a_plain_left_operand_of_a_shift_names_the_type_to_write():
    with pytest.raises(WordRuleError, match=r"U64\(1\) << n"):
        1 << word(3, U32)
    with pytest.raises(WordRuleError, match=r"U64\(1\) << n"):
        1 << Sym(z3.Int("k"), U32)


def test_an_unbounded_int_is_refused_with_the_declaration_to_write():
    with pytest.raises(WordRuleError, match=r"unbounded int.*Shared\(0, type=U64\)"):
        Sym(z3.Int("x"), IntType("int")) ^ 1


def test_true_division_says_use_floor_division():
    with pytest.raises(WordRuleError, match="Write `//`"):
        word(4, U32) / 2
    with pytest.raises(WordRuleError, match="Write `//`"):
        Sym(z3.Int("x"), S64) / 2


# -- gcc: the standard widths against real C --------------------------------------------------------------------
C_TYPES = {U32: "uint32_t", S32: "int32_t", U64: "uint64_t", S64: "int64_t"}


@pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc is not installed: apt-get install gcc")
def test_words_agree_with_gcc_on_random_values(tmp_path):
    rng = random.Random(17)
    cases, lines = [], []
    for ta in C_TYPES:
        for tb in C_TYPES:
            for _ in range(20):
                a, b = rng.randint(ta.lo, ta.hi), rng.randint(tb.lo, tb.hi)
                k = rng.randrange(promoted(ta)[0])
                for op in ("&", "|", "^", "<<", ">>", "~"):
                    if op == "~":
                        mine, expr = ~word(a, ta), "~A"
                    elif op in ("<<", ">>"):
                        mine = word(a, ta) << k if op == "<<" else word(a, ta) >> k
                        expr = f"A {op} {k}"
                    else:
                        mine = {"&": word(a, ta) & word(b, tb), "|": word(a, ta) | word(b, tb),
                                "^": word(a, ta) ^ word(b, tb)}[op]
                        expr = f"A {op} B"
                    ca, cb = f"(({C_TYPES[ta]}){a}{'LL' if ta.signed else 'ULL'})", \
                             f"(({C_TYPES[tb]}){b}{'LL' if tb.signed else 'ULL'})"
                    if a == ta.lo and ta.signed:
                        ca = f"(({C_TYPES[ta]})({a + 1}LL - 1))"
                    if b == tb.lo and tb.signed:
                        cb = f"(({C_TYPES[tb]})({b + 1}LL - 1))"
                    e = expr.replace("A", ca).replace("B", cb)
                    lines.append(f'  {{ __typeof__({e}) r = {e}; printf("%d %d %s\\n", (int)(sizeof r * 8), '
                                 f'(int)((__typeof__(r))-1 < 0), (__typeof__(r))-1 < 0 ? '
                                 f'i2s((long long)r) : u2s((unsigned long long)r)); }}')
                    cases.append((int(mine), kind(mine.ctype)))
    src = tmp_path / "w.c"
    src.write_text("#include <stdio.h>\n#include <stdint.h>\nstatic char buf[64][64]; static int n;\n"
                   "static char *i2s(long long v){ char *b = buf[n++ % 64]; sprintf(b, \"%lld\", v); return b; }\n"
                   "static char *u2s(unsigned long long v){ char *b = buf[n++ % 64]; sprintf(b, \"%llu\", v); "
                   "return b; }\nint main(void) {\n" + "\n".join(lines) + "\n  return 0;\n}\n")
    subprocess.run(["gcc", "-O0", "-fno-strict-overflow", "-o", str(tmp_path / "w"), str(src)], check=True)
    out = subprocess.run([str(tmp_path / "w")], check=True, capture_output=True, text=True).stdout.split("\n")
    for (mine, typ), line in zip(cases, out):
        bits, signed, value = line.split()
        assert (mine, typ) == (int(value), (int(bits), signed == "1"))
    assert len(cases) == len([x for x in out if x])
