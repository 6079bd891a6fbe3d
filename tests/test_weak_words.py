# SPDX-License-Identifier: GPL-2.0-only
"""Issue 29, weak memory: one kernel word held as several variables (``OneWord``), a critical section in one
step (``spin_lock``/``spin_unlock`` accesses), and 32-bit points under tso and lkmm.

Each is checked on a tiny spec, as a litmus test is: the outcome the kernel forbids is Never, the one it
allows Sometimes, and the compiled explorer gives the interpreter's states, verdicts and traces.
"""
from __future__ import annotations

import pytest

from checker import (And, If, Implies, Load, Lock, NOBODY, OneWord, Or, Role, S64, Shared, Spec, SpecError, Store,
                     action, invariant, sometimes, spin_lock, spin_unlock, terminal, when)
from checker.explore import explore
from checker.kernel.config import Bits
from checker.ordering.declare import MEMORY
from checker.types import CpuId

SC, TSO, LKMM = MEMORY.sc, MEMORY.tso, MEMORY.lkmm


def _same_on_both(spec):
    interpreted = explore(spec, engine="interpreted")
    compiled = explore(spec, engine="compiled")
    assert compiled.engine == "compiled", compiled.engine_note
    assert (compiled.states, compiled.transitions, compiled.depth) == \
        (interpreted.states, interpreted.transitions, interpreted.depth)
    assert {k: o.verdict for k, o in compiled.outcomes.items()} == {k: o.verdict for k, o in interpreted.outcomes.items()}
    assert {k: [(st.action, st.cpu, st.choices) for st in o.trace] for k, o in compiled.outcomes.items()} == \
        {k: [(st.action, st.cpu, st.choices) for st in o.trace] for k, o in interpreted.outcomes.items()}
    return compiled


# -- OneWord: a store writes every field, a load reads every field from one store ------------------------------

def _word_spec(one_word: bool):
    """CPU 0 publishes c->v twice, as one atomic64_t: (count, owner) = (1, cpu0), then (2, NOBODY); CPU 1 reads
    it once. With the fields one word the reader sees a pair some store wrote; as two locations written by two
    stores it may see count from one store and owner from the other (the percpu_lazy split's false alarm)."""
    ns: dict = {"kernel": "test: atomic64_set(&c->v, ...) twice || atomic64_read(&c->v)", "__module__": __name__,
                "__doc__": "c->v held as two fields."}
    ns["writer"] = Role(1)
    ns["reader"] = Role(1)
    ns["count"] = Shared(0)
    ns["owner"] = Shared(NOBODY, type=CpuId)
    ns["wpc"] = Shared(0)
    ns["got_count"] = Shared(-1)
    ns["got_owner"] = Shared(-2)
    if one_word:
        ns["c_v"] = OneWord("count", "owner")
        store, load = (Store("c_v", "once"),), Load("c_v", "once")
    else:  # the split: two variables, two stores
        store, load = (Store("count", "once"), Store("owner", "once")), (Load("count", "once"), Load("owner", "once"))

    def publish(s, cpu):
        """WRITE_ONCE(c->v, ...): (1, cpu0), then (2, NOBODY)."""
        return when(s.wpc < 2, count=s.wpc + 1, owner=If(s.wpc == 0, 0, NOBODY), wpc=s.wpc + 1)

    def read(s, cpu):
        """v = READ_ONCE(c->v)."""
        return when(s.got_count == -1, got_count=s.count, got_owner=s.owner)

    ns["publish"] = action(role="writer", access=store)(publish)
    ns["read"] = action(role="reader", access=load)(read)
    ns["done"] = terminal(lambda s: And(s.wpc == 2, s.got_count != -1))

    def pairs_some_store_wrote(s):
        """The reader's (count, owner) is (0, NOBODY), (1, cpu0) or (2, NOBODY)."""
        return Implies(s.got_count != -1, Or(And(s.got_count == 0, s.got_owner == NOBODY),
                                             And(s.got_count == 1, s.got_owner == 0),
                                             And(s.got_count == 2, s.got_owner == NOBODY)))

    def reads_an_older_store(s):
        """The reader sees the first store after the second was made."""
        return And(s.wpc == 2, s.got_count == 1)

    ns["pairs_some_store_wrote"] = invariant(pairs_some_store_wrote)
    ns["reads_an_older_store"] = sometimes(reads_an_older_store)
    return type("OneWordPublish" if one_word else "SplitPublish", (Spec,), ns)


OneWordPublish = _word_spec(True)
SplitPublish = _word_spec(False)


def test_one_word_is_one_location_under_lkmm():
    """A load reads every field from one store: never count from one store and owner from another; the reader
    may still see an older store (it is a READ_ONCE)."""
    r = _same_on_both(OneWordPublish(memory=LKMM))
    assert r.verdicts["pairs_some_store_wrote"] == "holds" and r.verdicts["reads_an_older_store"] == "holds"
    assert r.states == 9


def test_the_split_reads_fields_from_two_stores_under_lkmm():
    """The same code as two locations: after the first publish the reader takes count from it and owner from
    the initial store (2 steps: the read with count_age=0, owner_age=1 sees (1, NOBODY), which no store wrote)."""
    r = explore(SplitPublish(memory=LKMM))
    assert r.verdicts["pairs_some_store_wrote"] == "violated"
    trace = r.outcomes["pairs_some_store_wrote"].trace
    assert [st.action for st in trace] == ["publish", "read"]
    assert trace[-1].choices["count_age"] == 0 and trace[-1].choices["owner_age"] == 1


@pytest.mark.differential
def test_one_word_under_tso_and_sc():
    """tso: the word is buffered and flushed whole (the split's two stores may reach memory one at a time, as two
    x86 stores do); sc: OneWord changes nothing."""
    assert _same_on_both(OneWordPublish(memory=TSO)).verdicts["pairs_some_store_wrote"] == "holds"
    assert explore(SplitPublish(memory=TSO)).verdicts["pairs_some_store_wrote"] == "violated"
    assert explore(OneWordPublish()).states == explore(SplitPublish()).states


def test_one_word_traces_show_the_fields():
    """mem_history shows a word's stores as its fields."""
    from checker.language.compile import Model

    m = Model(OneWordPublish(memory=LKMM))
    s = m.initial_states()[0]
    assert "c_v: (count=0, owner=-1)" in str(m.weak.shown(s)["mem_history"])


@pytest.mark.parametrize("fields, needle", [(("count",), "two or more"), (("count", "count"), "named twice")])
def test_one_word_refuses_a_bad_declaration(fields, needle):
    with pytest.raises(SpecError, match=needle):
        OneWord(*fields)


def test_an_access_to_a_field_of_a_word_is_refused():
    """access= names the word, not one of its fields."""
    with pytest.raises(SpecError, match="a field of the word c_v: name the word"):
        type("Bad", (Spec,), {"__module__": __name__, "kernel": "t", "__doc__": "t", "p": Role(1),
                              "a": Shared(0), "b": Shared(0, type=CpuId), "c_v": OneWord("a", "b"),
                              "go": action(role="p", access=Load("a", "once"))(lambda s, c: when(True, a=1))})


def test_a_later_field_needs_a_bounded_type():
    """An unbounded later field cannot share the location (its values have no radix): refused at the point."""
    cls = type("Unbounded", (Spec,), {
        "__module__": __name__, "kernel": "t", "__doc__": "t", "p": Role(1), "a": Shared(0), "b": Shared(0),
        "c_v": OneWord("a", "b"), "pc": Shared(0),
        "go": action(role="p", access=Store("c_v", "once"))(lambda s, c: when(s.pc == 0, a=1, b=1, pc=1)),
        "done": terminal(lambda s: s.pc == 1)})
    with pytest.raises(SpecError, match="needs a bounded type"):
        explore(cls(memory=LKMM))


# -- spin_lock()/spin_unlock() inside one step -----------------------------------------------------------------

class FoldThenSum(Spec):
    """CPU 0's hotplug fold is one step under the lock (lock, count += 1, unlock); CPU 1 then takes the lock (a
    step of its own) and reads count: it must see the fold."""
    kernel = "test: raw_spin_lock(l); count += 1; raw_spin_unlock(l) || raw_spin_lock(l); r = count"
    folder = Role(1)
    summer = Role(1)
    lock = Lock()
    count = Shared(0)
    folded = Shared(0)
    got = Shared(-1)
    spc = Shared(0)
    took_after = Shared(0)

    @action(role="folder", access=(spin_lock("lock"), Load("count"), Store("count"), spin_unlock("lock")))
    def fold(s, cpu):
        return when(And(s.folded == 0, s.lock == NOBODY), count=s.count + 1, folded=1)

    @action(role="summer")
    def take(s, cpu):
        return when(And(s.spc == 0, s.lock == NOBODY), lock=cpu, spc=1, took_after=s.folded)

    @action(role="summer", access=Load("count"))
    def read_unlock(s, cpu):
        return when(s.spc == 1, got=s.count, lock=NOBODY, spc=2)

    @terminal
    def done(s):
        return And(s.folded == 1, s.spc == 2)

    @invariant
    def a_read_after_the_fold_is_not_stale(s):
        """Where the summer took the lock after the fold, it read 1."""
        return Implies(And(s.spc == 2, s.took_after == 1), s.got == 1)

    @sometimes
    def the_sum_comes_after_the_fold(s):
        return And(s.spc == 2, s.got == 1)


@pytest.mark.parametrize("memory", [pytest.param(TSO, marks=pytest.mark.differential), LKMM])
def test_a_critical_section_in_one_step_releases_to_the_next_holder(memory):
    """The fold's spin_unlock() is a release the summer's lock acquires: its read is never stale, and its plain
    load does not race with the fold's plain store."""
    r = _same_on_both(FoldThenSum(memory=memory))
    assert r.verdicts["a_read_after_the_fold_is_not_stale"] == "holds", r.verdicts
    assert r.verdicts.get("no_data_race", "holds") == "holds"


def test_without_the_lock_accesses_the_read_may_be_stale_under_lkmm():
    """The same fold without spin_lock/spin_unlock: nothing orders it before the summer's lock: a stale read
    (and a data race)."""
    class FoldUnordered(FoldThenSum):
        kernel = "test: the fold without its lock's ordering"

        @action(role="folder", access=(Load("count"), Store("count")))
        def fold(s, cpu):
            return when(And(s.folded == 0, s.lock == NOBODY), count=s.count + 1, folded=1)

    r = explore(FoldUnordered(memory=LKMM))
    assert r.verdicts["a_read_after_the_fold_is_not_stale"] == "violated"
    assert [st.action for st in r.outcomes["a_read_after_the_fold_is_not_stale"].trace] == ["fold", "take",
                                                                                           "read_unlock"]


def test_spin_lock_without_its_unlock_is_refused():
    with pytest.raises(SpecError, match="without spin_unlock"):
        type("Open", (Spec,), {"__module__": __name__, "kernel": "t", "__doc__": "t", "p": Role(1), "l": Lock(),
                               "x": Shared(0),
                               "go": action(role="p", access=(spin_lock("l"), Store("x")))(
                                   lambda s, c: when(True, x=1))})
    with pytest.raises(SpecError, match="is not a Lock"):
        type("NotLock", (Spec,), {"__module__": __name__, "kernel": "t", "__doc__": "t", "p": Role(1),
                                  "x": Shared(0),
                                  "go": action(role="p", access=(spin_lock("x"), spin_unlock("x")))(
                                      lambda s, c: when(True, x=1))})


# -- 32-bit points under tso and lkmm ---------------------------------------------------------------------------

class TornRead(Spec):
    """A plain s64 store of -1 over 0 (two 32-bit stores on a 32-bit kernel) against a plain remote load."""
    kernel = "test: x = -1 || r = x, on a 32-bit kernel"
    bits = Bits(32, explore=(32,))
    writer = Role(1)
    reader = Role(1)
    x = Shared(0, type=S64)
    wrote = Shared(0)
    got = Shared(1)

    @action(role="writer", access=Store("x", "plain", race_ok=True))
    def store(s, cpu):
        return when(s.wrote == 0, x=-1, wrote=1)

    @action(role="reader", access=Load("x", "plain", race_ok=True))
    def load(s, cpu):
        return when(s.got == 1, got=s.x)

    @terminal
    def done(s):
        return And(s.wrote == 1, s.got != 1)

    @sometimes
    def a_torn_value(s):
        """The reader sees one half of the store: 0xffffffff or 0xffffffff_00000000."""
        return Or(s.got == (1 << 32) - 1, s.got == -(1 << 32))


@pytest.mark.parametrize("memory, states", [(SC, 31), (TSO, 53), (LKMM, 39)])
def test_a_32bit_point_runs_under_every_model(memory, states):
    """A 32-bit point is no longer refused under tso and lkmm: its halves are steps the model runs (two stores
    of the location, two loads), and the torn value is reached under each model."""
    r = explore(TornRead(memory=memory))
    assert r.complete and r.verdicts["a_torn_value"] == "holds" and r.states == states
    assert r.engine == "interpreted"


def test_a_task_id_field_packs_as_nobody_or_one_of_the_tasks():
    """A later field holding a task id (tasks are numbered after the CPUs) takes NOBODY or one of the tasks: its
    radix is the tasks' count + 1, so percpu_lazy's c->v (a 58-bit word at mod_bits=2, a task id, a CPU id) stays
    within the compiled explorer's 64 bits at 3 CPUs and 3 tasks."""
    from checker.ordering.words import Packing
    from checker.types import NOBODY

    w = Packing("c_v", ("word", "published", "published_irq"), (0, NOBODY, NOBODY), (0, 4, 7), (None, 3, None))
    for fields in ([5, NOBODY, NOBODY], [2 ** 58 - 1, 5, NOBODY], [0, 3, 2], [7, NOBODY, 5]):
        v = w.pack(fields)
        assert [int(x) for x in w.unpack(v)] == fields
    assert w.pack([2 ** 58 - 1, 5, 5]) < 2 ** 63
