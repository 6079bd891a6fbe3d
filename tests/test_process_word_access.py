# SPDX-License-Identifier: GPL-2.0-only
"""A process function's plain access to a word held as several variables (``OneWord``): C's ``c->v.counter = v``.

``specs/bugs/lazy_publish_plain_store.py`` publishes ``c->v`` with a plain store, ``s.c_v = PCPU``: the store goes
through the word's view (the fields it leaves) and is annotated as a plain store of the word, so LKMM sees it race
with the readers' ``atomic64_read()``. Checked here on a two-step spec.
"""
from checker import NOBODY, And, If, OneWord, Or, PerCpu, Role, Shared, Spec, invariant, sometimes, terminal
from checker.explore import explore
from checker.language.model import info
from checker.language.process import process
from checker.ordering.declare import MEMORY
from checker.types import CpuId


class Flag(OneWord):
    """A count, or (1) a writer's claim."""

    def load(self, count, owner):
        return If(owner != NOBODY, 1, count)

    def store(self, value, me, count, owner):
        same = value == self.load(count, owner)
        return If(same, count, If(value == 1, 0, value)), If(same, owner, If(value == 1, me, NOBODY))


class PlainClaim(Spec):
    """A writer claims the word with a plain store; a reader reads it with atomic64_read(), then plainly."""

    kernel = "test: x = 1; c->v.counter = 1 || v = atomic64_read(&c->v); v + c->v.counter"
    writer = Role(1)
    reader = Role(1)
    count = Shared(3)
    owner = Shared(NOBODY, type=CpuId)
    w = Flag("count", "owner", doc="c->v")
    x = Shared(0)
    got = PerCpu(-1, role="reader")

    @process(role="writer")
    def claim(k, s, me):
        """WRITE_ONCE(x, 1); c->v.counter = 1;"""
        k.WRITE_ONCE(s.x, 1)
        s.w = 1

    @process(role="reader")
    def look(k, s, r):
        """v = atomic64_read(&c->v); then c->v.counter, plainly, in the same step."""
        v = k.atomic64_read(s.w)
        s.got[r] = v + s.w

    @terminal
    def done(s):
        return And(s.writer_pc[0] == 1, s.reader_pc[1] == 1)

    @sometimes
    def the_reader_sees_the_claim(s):
        """The claim's plain store is seen (the store went through the view: owner set, count 0)."""
        return And(s.got[1] == 2, s.owner == 0, s.count == 0)

    @invariant
    def reads_the_word_whole(s):
        """The reader saw the count twice (6) or the claim twice (2); the claim recorded its writer."""
        return Or(s.got[1] == -1, s.got[1] == 6, s.got[1] == 2)


def test_a_plain_store_and_load_of_a_word_go_through_its_view_and_are_annotated():
    acts = {n: [(x.kind, x.var, x.order) for x in a.access] for n, a in info(PlainClaim).actions.items()
            if not a.builtin}
    assert [("store", "x", "once"), ("store", "w", "plain")] in acts.values()
    assert [("load", "w", "once"), ("load", "w", "plain")] in acts.values()
    sc = explore(PlainClaim())
    assert sc.complete and {sc.verdicts[p] for p in ("reads_the_word_whole", "the_reader_sees_the_claim")} == {"holds"}
    lk = explore(PlainClaim(memory=MEMORY.lkmm))
    assert lk.verdicts["no_data_race"] == "violated"  # the plain store against the atomic64_read()
    # the compiled engine lowers the same steps: the same states, transitions and verdicts (0.4 s to build cold)
    for memory, r in ((MEMORY.sc, sc), (MEMORY.lkmm, lk)):
        c = explore(PlainClaim(memory=memory), engine="compiled")
        assert c.engine == "compiled", c.engine_note
        assert (c.states, c.transitions, c.verdicts) == (r.states, r.transitions, r.verdicts)
