# SPDX-License-Identifier: GPL-2.0-only
"""Bit-vector lemmas on the lazy per-CPU counter's real 64-bit word.

The explorer runs ``specs/percpu_lazy.py`` with the modification field cut
to a few bits and small values. What carries its results over to the
kernel's word (8-bit modification count, 55-bit value) is proved here, once,
with Z3 bit-vectors of width 64 and the kernel's own operators::

    #define COUNTER_MOD_BITS        8
    #define COUNTER_MOD_MASK        ~(~0ULL >> COUNTER_MOD_BITS)
    #define COUNTER_MOD_BITS_START  (64 - COUNTER_MOD_BITS)
    atomic_i  = i << COUNTER_IS_PCPU_BIT;          /* encode an add of i */
    atomic_i &= ~COUNTER_MOD_MASK;
    atomic_i |= 1ULL << COUNTER_MOD_BITS_START;
    new = old + atomic_i;                           /* atomic64_cmpxchg(&c->v, old, new) */
    (v << COUNTER_MOD_BITS) >> (COUNTER_MOD_BITS + COUNTER_IS_PCPU_BIT)   /* decode, s64 v */

A spec attaches a ``WordLemmas`` set as its ``lemmas`` attribute; every
prove run (``verify`` with ``--mode prove`` or ``all``) proves each lemma
and reports it as a check (kind ``lemma``). A lemma is a claim over all
64-bit words (and deltas): ``holds`` means Z3 found its negation
unsatisfiable; ``violated`` comes with a concrete word. ``decode="logical"``
builds the same set over a decode that shifts right logically (``LShR``),
the bug of forgetting that ``v`` is signed: its sign-extension lemmas are
then violated with a concrete word.
"""
from __future__ import annotations

import inspect
import time
from dataclasses import dataclass, field
from typing import Any, Callable

import z3

import checker.interrupts as interrupts
from checker.prove.solver import seeded, seeded_optimize, unknown_reason
from checker.result import HOLDS, INCONCLUSIVE, VIOLATED, Check

WIDTH = 64
MOD_BITS = 8
MOD_SHIFT = WIDTH - MOD_BITS              # 56
VALUE_BITS = MOD_SHIFT - 1                # 55: bits 1..55
VALUE_MIN = -(1 << (VALUE_BITS - 1))      # -2^54
VALUE_MAX = (1 << (VALUE_BITS - 1)) - 1   # 2^54 - 1


def bv(x: int) -> z3.BitVecRef:
    """``x`` as a Z3 bit-vector constant of the backend's width."""
    return z3.BitVecVal(x, WIDTH)


MOD_MASK = bv(((1 << WIDTH) - 1) ^ ((1 << WIDTH) - 1) >> MOD_BITS)  # ~(~0ULL >> 8) = 0xFF00000000000000


@dataclass(frozen=True)
class Word:
    """The kernel's operations on the word, with a choice of right shift for the decode."""

    decode_shift: str = "arithmetic"

    def encode(self, i: z3.BitVecRef) -> z3.BitVecRef:
        """atomic_i for an add of i (an s64)."""
        return ((i << 1) & ~MOD_MASK) | (bv(1) << MOD_SHIFT)

    def decode(self, v: z3.BitVecRef) -> z3.BitVecRef:
        """lazy_percpu_counter_atomic_val(v): (v << 8) >> 9, v an s64 (z3's >> is arithmetic)."""
        if self.decode_shift == "arithmetic":
            return (v << MOD_BITS) >> (MOD_BITS + 1)
        return z3.LShR(v << MOD_BITS, MOD_BITS + 1)

    def add(self, old: z3.BitVecRef, i: z3.BitVecRef) -> z3.BitVecRef:
        return old + self.encode(i)

    @staticmethod
    def mod(v: z3.BitVecRef) -> z3.BitVecRef:
        return z3.Extract(WIDTH - 1, MOD_SHIFT, v)

    @staticmethod
    def store(x: z3.BitVecRef, m: z3.BitVecRef | int = 0) -> z3.BitVecRef:
        """The atomic-mode word holding value x (bits 1..55) with modification field m."""
        m = z3.BitVecVal(m, MOD_BITS) if isinstance(m, int) else m
        return ((x << 1) & ~MOD_MASK) | (z3.ZeroExt(WIDTH - MOD_BITS, m) << MOD_SHIFT)


def _wide(x: z3.BitVecRef) -> z3.BitVecRef:
    """An s64 sign-extended to 66 bits: sums of two never overflow."""
    return z3.SignExt(2, x)


def _in_range(x66: z3.BitVecRef) -> z3.BoolRef:
    return z3.And(x66 >= z3.BitVecVal(VALUE_MIN, WIDTH + 2), x66 <= z3.BitVecVal(VALUE_MAX, WIDTH + 2))


@dataclass(frozen=True)
class Lemma:
    """One claim over all 64-bit words: ``claim(word, vars)`` with ``vars`` the named bit-vectors."""

    name: str
    doc: str
    variables: tuple[str, ...]
    claim: Callable[[Word, dict[str, z3.BitVecRef]], z3.BoolRef]
    explain: Callable[[Word, dict[str, int]], str] | None = None  # a counterexample in words

    @property
    def line(self) -> int | None:
        try:
            return inspect.getsourcelines(self.claim)[1]
        except (OSError, TypeError):
            return None


def _hex(x: int) -> str:
    return f"{x & ((1 << WIDTH) - 1):#018x}"


def _s64(x: int) -> int:
    x &= (1 << WIDTH) - 1
    return x - (1 << WIDTH) if x >> (WIDTH - 1) else x


def _decoded(w: Word, v: int) -> int:
    return _s64(z3.simplify(w.decode(bv(v))).as_long())


def _atomic(v: z3.BitVecRef) -> z3.BoolRef:
    return z3.Extract(0, 0, v) == 0


# -- the lemmas ------------------------------------------------------------------------------------------
def _round_trip(w: Word, x: dict) -> z3.BoolRef:
    old, i = x["old"], x["i"]
    total = _wide(w.decode(old)) + _wide(i)
    return z3.Implies(z3.And(_atomic(old), _in_range(total)), _wide(w.decode(w.add(old, i))) == total)


def _wraps(w: Word, x: dict) -> z3.BoolRef:
    old, i = x["old"], x["i"]
    total = w.decode(old) + i  # mod 2^64, then cut to 55 bits and sign-extended
    return z3.Implies(_atomic(old), w.decode(w.add(old, i)) == (total << (MOD_BITS + 1)) >> (MOD_BITS + 1))


def _range_exact(w: Word, x: dict) -> z3.BoolRef:
    v = x["x"]
    return (w.decode(Word.store(v)) == v) == z3.And(v >= VALUE_MIN, v <= VALUE_MAX)


def _sign_extension(w: Word, x: dict) -> z3.BoolRef:
    v, m = x["x"], z3.Extract(MOD_BITS - 1, 0, x["m"])
    return z3.Implies(z3.And(v >= VALUE_MIN, v < 0), w.decode(Word.store(v, m)) == v)


def _mod_ignored(w: Word, x: dict) -> z3.BoolRef:
    v, m = x["v"], z3.Extract(MOD_BITS - 1, 0, x["m"])
    other = (v & ~MOD_MASK) | (z3.ZeroExt(WIDTH - MOD_BITS, m) << MOD_SHIFT)
    return w.decode(v) == w.decode(other)


def _carry(w: Word, x: dict) -> z3.BoolRef:
    old, i = x["old"], x["i"]
    new = w.add(old, i)
    low = z3.ZeroExt(1, z3.Extract(MOD_SHIFT - 1, 0, old)) + z3.ZeroExt(1, z3.Extract(MOD_SHIFT - 1, 0, i << 1))
    carry = z3.Extract(MOD_SHIFT, MOD_SHIFT, low)
    return z3.And(z3.Extract(MOD_SHIFT - 1, 0, new) == z3.Extract(MOD_SHIFT - 1, 0, low),
                  Word.mod(new) == Word.mod(old) + 1 + z3.ZeroExt(MOD_BITS - 1, carry))


def _carry_when(w: Word, x: dict) -> z3.BoolRef:
    """The carry out of the value field, in terms of values: it happens iff the 55-bit unsigned
    readings of the old value and of i overflow, which for values in range is: both negative, or
    one negative and the sum >= 0. (The explorer's spec computes the same thing by arithmetic.)"""
    old, i = x["old"], x["i"]
    low = z3.ZeroExt(1, z3.Extract(MOD_SHIFT - 1, 0, old)) + z3.ZeroExt(1, z3.Extract(MOD_SHIFT - 1, 0, i << 1))
    carry = z3.Extract(MOD_SHIFT, MOD_SHIFT, low) == 1
    a, b = w.decode(old), i
    total = _wide(a) + _wide(b)
    by_values = z3.Or(z3.And(a < 0, b < 0), z3.And(z3.Or(a < 0, b < 0), total >= 0))
    return z3.Implies(z3.And(_atomic(old), b >= VALUE_MIN, b <= VALUE_MAX, _in_range(total)), carry == by_values)


def _mode_kept(w: Word, x: dict) -> z3.BoolRef:
    old, i = x["old"], x["i"]
    return z3.Implies(_atomic(old), _atomic(w.add(old, i)))


def _switch_test(w: Word, x: dict) -> z3.BoolRef:
    """``!(v & COUNTER_MOD_MASK)`` with v the word the successful cmpxchg replaced."""
    old = x["old"]
    return ((old & MOD_MASK) == 0) == (Word.mod(old) == 0)


def _fresh_counter_fires(w: Word, x: dict) -> z3.BoolRef:
    """A fresh counter's word is 0 (mm_init's memset): the first add's test fires, with c->last_wrap
    still 0, so it only records the time; the switch needs a second wrap within a second."""
    i = x["i"]
    old = bv(0)
    return z3.And((old & MOD_MASK) == 0, Word.mod(w.add(old, i)) == 1)


def _test_not_on_new_word(w: Word, x: dict) -> z3.BoolRef:
    """The new word's field is 0 exactly when the old one was 255 with no carry or 254 with one:
    testing the new word instead would fire one add (or two) earlier in each cycle of 256."""
    old, i = x["old"], x["i"]
    low = z3.ZeroExt(1, z3.Extract(MOD_SHIFT - 1, 0, old)) + z3.ZeroExt(1, z3.Extract(MOD_SHIFT - 1, 0, i << 1))
    carry = z3.Extract(MOD_SHIFT, MOD_SHIFT, low)
    m = Word.mod(old)
    return (Word.mod(w.add(old, i)) == 0) == z3.Or(z3.And(m == 255, carry == 0), z3.And(m == 254, carry == 1))


def _explain_add(w: Word, v: dict) -> str:
    old, i = v["old"], _s64(v["i"])
    a = _decoded(w, old)
    new = z3.simplify(w.add(bv(old), bv(v["i"]))).as_long()
    return (f"old = {_hex(old)} (decodes to {a}), i = {i}: new = {_hex(new)} decodes to {_decoded(w, new)}, "
            f"the sum is {a + i}")


def _explain_wrap(w: Word, v: dict) -> str:
    old, i = v["old"], _s64(v["i"])
    a = _decoded(w, old)
    total = a + i
    wrapped = (total + (1 << (VALUE_BITS - 1))) % (1 << VALUE_BITS) - (1 << (VALUE_BITS - 1))
    new = z3.simplify(w.add(bv(old), bv(v["i"]))).as_long()
    return (f"old = {_hex(old)} (decodes to {a}), i = {i}: new = {_hex(new)} decodes to {_decoded(w, new)}, "
            f"the sum wrapped to 55 bits is {wrapped}")


def _explain_store(w: Word, v: dict) -> str:
    x = _s64(v["x"])
    m = v.get("m", 0) & 0xFF
    word = z3.simplify(Word.store(bv(x), z3.BitVecVal(m, MOD_BITS))).as_long()
    return f"x = {x}: the word {_hex(word)} decodes to {_decoded(w, word)}"


def _explain_mod(w: Word, v: dict) -> str:
    return f"v = {_hex(v['v'])}, m = {v['m'] & 0xFF}"


LEMMAS = (
    Lemma("add_round_trip", "For every atomic-mode word and every s64 delta i whose sum with the word's "
          "value stays in [-2^54, 2^54 - 1], decoding the word after the encoded add gives the sum.",
          ("old", "i"), _round_trip, _explain_add),
    Lemma("add_wraps_at_55_bits", "Outside that range the decoded value is the sum wrapped to 55 bits "
          "(two's complement): 2^54 - 1 plus 1 reads as -2^54, and -2^54 minus 1 as 2^54 - 1; a delta "
          "counts only modulo 2^55.", ("old", "i"), _wraps, _explain_wrap),
    Lemma("value_range_is_exact", "A value survives being stored and decoded if and only if it is in "
          "[-2^54, 2^54 - 1] = [-18014398509481984, 18014398509481983].", ("x",), _range_exact,
          _explain_store),
    Lemma("sign_extension", "A negative value in range decodes to itself whatever the modification field "
          "(bit 55 is copied into bits 55..63 by the arithmetic shift).", ("x", "m"), _sign_extension,
          _explain_store),
    Lemma("mod_field_never_read_by_decode", "The decode ignores bits 56..63: two words differing only in "
          "the modification field decode alike.", ("v", "m"), _mod_ignored, _explain_mod),
    Lemma("carry_changes_only_the_mod_field", "An add changes bits 0..55 as the 56-bit sum old + (i << 1) "
          "and the modification field by 1 plus the carry out of the value field, mod 256; nothing else.",
          ("old", "i"), _carry, _explain_add),
    Lemma("carry_happens_iff", "For values in range, the carry into the modification field happens iff both "
          "the value and i are negative, or one is and the sum is >= 0 (what the explorer's word "
          "arithmetic does with a narrower field).", ("old", "i"), _carry_when, _explain_add),
    Lemma("atomic_adds_keep_the_mode_bit", "An atomic-mode add never sets bit 0 (the per-CPU mode bit).",
          ("old", "i"), _mode_kept, _explain_add),
    Lemma("switch_test_reads_the_replaced_word", "The switch heuristic fires iff the modification field of "
          "the word the successful cmpxchg replaced is 0.", ("old",), _switch_test, _explain_add),
    Lemma("first_add_of_a_fresh_counter_fires", "On a fresh counter (word 0) the first add's test fires "
          "(and leaves the field at 1); with last_wrap 0 it only records the time.", ("i",),
          _fresh_counter_fires, None),
    Lemma("new_word_zero_iff_old_255_or_254", "The new word's field is 0 iff the replaced one was 255 "
          "without a carry or 254 with one: the test on the replaced word is not a test on the new one.",
          ("old", "i"), _test_not_on_new_word, _explain_add),
)


@dataclass(frozen=True)
class WordLemmas:
    """The lemma set of one decode; ``expect_violated`` names the lemmas a bug spec expects broken."""

    decode_shift: str = "arithmetic"
    expect_violated: tuple[str, ...] = ()
    lemmas: tuple[Lemma, ...] = field(default=LEMMAS)

    def __post_init__(self) -> None:
        names = {lm.name for lm in self.lemmas}
        unknown = [n for n in self.expect_violated if n not in names]
        if unknown:
            raise ValueError(f"no lemma {', '.join(unknown)}; the lemmas are: {', '.join(sorted(names))}")

    def checks(self, spec: str, *, timeout: float | None = None, run: int = 0) -> list[Check]:
        w = Word(self.decode_shift)
        out = []
        for lm in self.lemmas:
            out.append(prove_lemma(w, lm, spec, "violated" if lm.name in self.expect_violated else HOLDS,
                                   timeout=timeout, run=run))
        return out


def prove_lemma(w: Word, lm: Lemma, spec: str, expected: str, *, timeout: float | None = None,
                run: int = 0) -> Check:
    """Prove one lemma: Z3 on its negation. A model is a concrete counterexample."""
    xs = {n: z3.BitVec(n, WIDTH) for n in lm.variables}
    s = seeded(timeout)
    s.add(z3.Not(lm.claim(w, xs)))
    t0 = time.perf_counter()
    r = s.check()
    interrupts.check()  # an interrupt a destructor swallowed still ends the run
    dt = time.perf_counter() - t0
    trace_text: list[str] = []
    extra: dict[str, Any] = {"method": "bit-vector", "width": WIDTH, "mod_bits": MOD_BITS,
                             "value_bits": VALUE_BITS, "decode_shift": w.decode_shift}
    reason = None
    if r == z3.unsat:
        verdict = HOLDS
    elif r == z3.sat:
        verdict = VIOLATED
        values = _smallest(lm.claim(w, xs), xs, timeout) or {
            n: s.model().eval(x, model_completion=True).as_long() for n, x in xs.items()}
        extra["counterexample"] = {n: _hex(v) for n, v in values.items()}
        trace_text = [f"counterexample: {', '.join(f'{n} = {_hex(v)}' for n, v in values.items())}"]
        if lm.explain is not None:
            trace_text.append(lm.explain(w, values))
    else:
        verdict, reason = INCONCLUSIVE, f"solver_unknown: {unknown_reason(s.reason_unknown(), dt, timeout)}"
    if lm.name == "value_range_is_exact":
        extra["boundaries"] = boundary_values(w.decode_shift)
    c = Check(spec=spec, file=__file__, line=lm.line, params={"mod_bits": MOD_BITS, "value_bits": VALUE_BITS,
                                                              "decode": w.decode_shift},
              property=lm.name, kind="lemma", backend="z3", verdict=verdict, expected=expected, reason=reason,
              seconds=dt, run=run, doc=lm.doc, bug=expected == VIOLATED, extra=extra)
    c.trace_text = trace_text
    return c


def _smallest(claim: z3.BoolRef, xs: dict[str, z3.BitVecRef], timeout: float | None) -> dict[str, int] | None:
    """The least counterexample (unsigned, variables in order): the same words on every run."""
    o = seeded_optimize(timeout)
    o.add(z3.Not(claim))
    for x in xs.values():
        o.minimize(x)
    if o.check() != z3.sat:
        return None
    m = o.model()
    return {n: m.eval(x, model_completion=True).as_long() for n, x in xs.items()}


def boundary_values(decode_shift: str = "arithmetic") -> dict[str, Any]:
    """The exact values where the encoding stops working, computed with the kernel's operators."""
    w = Word(decode_shift)

    def dec(v: int) -> int:
        return _decoded(w, v)

    def add(old_value: int, i: int) -> int:
        old = z3.simplify(Word.store(bv(old_value))).as_long()
        return dec(z3.simplify(w.add(bv(old), bv(i))).as_long())

    return {
        "largest": VALUE_MAX, "smallest": VALUE_MIN,
        "largest_plus_one": add(VALUE_MAX, 1), "smallest_minus_one": add(VALUE_MIN, -1),
        "store_2^54": dec(z3.simplify(Word.store(bv(VALUE_MAX + 1))).as_long()),
        "minus_one_word": _hex(z3.simplify(Word.store(bv(-1))).as_long()), "minus_one_decodes_to": dec(
            z3.simplify(Word.store(bv(-1))).as_long()),
    }
