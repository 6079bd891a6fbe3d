# SPDX-License-Identifier: GPL-2.0-only
"""Inlinable helpers in process functions (checker/language/cfg.py, process.py): a kernel function a process
function calls, handed ``k``, lowered in place of its call.

The claim: a helper's call explores state for state as its body written at the call (the same states,
transitions, depth and verdicts); ``return value`` assigns the call's target; a ``s.spec.helper`` a subclass
redefines is lowered again in the subclass alone; a helper's module names run as its module means them; what
cannot be inlined (a call inside an expression, recursion, a wrong argument count) is refused with its line.
"""
from __future__ import annotations

import importlib.util
import itertools
import sys
import tempfile
import textwrap
from pathlib import Path

import pytest

from checker.errors import SpecError
from checker.explore import explore
from checker.language.compile import Model
from checker.language.model import info

_DIR = Path(tempfile.mkdtemp(prefix="process_helpers_"))
_n = itertools.count()

HEAD = '''# SPDX-License-Identifier: GPL-2.0-only
from checker import AllOf, Param, PerCpu, Role, Shared, Spec, invariant, sometimes, terminal
from checker.language.process import process

LIMIT = 2


class H(Spec, abstract=True):
    """Each CPU adds to a shared count by cmpxchg, at most LIMIT, and records what it did."""
    kernel = "generated"
    ncpus = Param(2, domain=range(1, 4))
    cpus = Role("ncpus", symmetric=True)
    x = Shared(0)
    got = PerCpu(0, role="cpus")

    @terminal
    def finished(s):
        return AllOf([s.cpus_pc[c] == 1 for c in s.cpus])

    @invariant
    def bounded(s):
        return s.x <= LIMIT

    @sometimes
    def full(s):
        return s.x == LIMIT
'''


def load(src: str, name: str = "H"):
    path = _DIR / f"helpers_{next(_n)}.py"
    path.write_text(HEAD + textwrap.dedent(src))
    spec = importlib.util.spec_from_file_location(path.stem, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[path.stem] = mod
    spec.loader.exec_module(mod)
    return getattr(mod, name), mod


INLINE = '''
class Inline(H):
    @process(role="cpus")
    def add(k, s, cpu):
        v = k.READ_ONCE(s.x)
        while v < LIMIT:
            ok, v = k.try_cmpxchg(s.x, v, v + 1)
            if ok:
                s.got[cpu] = 1
                break
        k.WRITE_ONCE(s.x, s.x)
'''

HELPER = '''
def add_one(k, s, me, limit):
    """The cmpxchg loop as a kernel helper: 1 if it added, 0 if the count was full."""
    v = k.READ_ONCE(s.x)
    while v < limit:
        ok, v = k.try_cmpxchg(s.x, v, v + 1)
        if ok:
            return 1
    return 0


class Helper(H):
    @process(role="cpus")
    def add(k, s, cpu):
        added = add_one(k, s, cpu, LIMIT)
        s.got[cpu] = added
        k.WRITE_ONCE(s.x, s.x)
'''


def runs(cls, **params):
    return explore(Model(cls, cls(**params).params))


@pytest.mark.parametrize("ncpus", [1, 2, 3])
def test_a_helper_is_its_body_written_at_the_call(ncpus):
    inline, _ = load(INLINE, "Inline")
    helper, _ = load(HELPER, "Helper")
    a, b = runs(inline, ncpus=ncpus), runs(helper, ncpus=ncpus)
    assert (a.states, a.transitions, a.depth) == (b.states, b.transitions, b.depth)
    assert a.verdicts == b.verdicts and b.verdicts["full"] == ("holds" if ncpus >= 2 else "violated")


def test_the_helpers_steps_are_named_by_the_line_of_its_call():
    helper, _ = load(HELPER, "Helper")
    steps = [n for n, a in info(helper).actions.items() if not a.builtin and n.startswith("add_")]
    assert steps and all(n.startswith(("add_L2_", "add_L4_")) for n in steps), steps


SPEC_HOOK = '''
class Hooked(H):
    @process(role="cpus")
    def add(k, s, cpu):
        s.spec.add_one(k, s, cpu)
        k.WRITE_ONCE(s.x, s.x)

    @staticmethod
    def add_one(k, s, me):
        v = k.READ_ONCE(s.x)
        while v < LIMIT:
            ok, v = k.try_cmpxchg(s.x, v, v + 1)
            if ok:
                s.got[me] = 1
                return


class Broken(Hooked):
    """A bug spec: the helper adds without the compare (a read, then a plain write)."""

    @staticmethod
    def add_one(k, s, me):
        v = k.READ_ONCE(s.x)
        if v < LIMIT:
            k.WRITE_ONCE(s.x, v + 1)
'''


def test_a_subclass_that_redefines_a_spec_helper_is_lowered_again():
    hooked, mod = load(SPEC_HOOK, "Hooked")
    ok, bad = runs(hooked, ncpus=3), runs(mod.Broken, ncpus=3)
    assert ok.verdicts["bounded"] == bad.verdicts["bounded"] == "holds" and bad.states != ok.states
    base = {n for n in info(hooked).actions if n.startswith("add_")}
    sub = {n for n in info(mod.Broken).actions if n.startswith("add_") and info(mod.Broken).actions[n].applies is None}
    assert any("try_cmpxchg" in n for n in base) and not any("try_cmpxchg" in n for n in sub)
    assert any("WRITE_ONCE" in n for n in sub)
    # the base keeps its own helper: lowering the subclass did not touch it
    assert {n for n in info(hooked).actions if n.startswith("add_")} == base


OTHER_MODULE = '''
from checker import Shared


def bump(k, s, me):
    """A helper of another module: its LIMIT is 1, not the spec's."""
    k.WRITE_ONCE(s.x, LIMIT)


LIMIT = 1
'''


def test_a_helper_from_another_module_keeps_its_modules_names():
    other = _DIR / "helper_other_mod.py"
    other.write_text("# SPDX-License-Identifier: GPL-2.0-only\n" + textwrap.dedent(OTHER_MODULE))
    sys.path.insert(0, str(_DIR))
    try:
        cls, _ = load('''
from helper_other_mod import bump


class Other(H):
    @process(role="cpus")
    def add(k, s, cpu):
        bump(k, s, cpu)
''', "Other")
    finally:
        sys.path.remove(str(_DIR))
    r = runs(cls, ncpus=1)
    assert r.verdicts["full"] == "violated" and r.verdicts["bounded"] == "holds"  # x reaches 1, never LIMIT=2


@pytest.mark.parametrize("src, says", [
    ("y = 1 + add_one(k, s, cpu, 2)", "inside an expression"),
    ("add_one(k, s, cpu)", "takes 4 positional arguments"),
    ("loop(k, s, cpu)", "recursion is not inlined"),
    ("len(k)", "not a helper that can be inlined"),
    ("y = store(k, s, cpu)", "can end without returning one"),
    ("y = maybe(k, s, cpu)", "returns none at its line"),
])
def test_what_cannot_be_inlined_is_refused_with_its_line(src, says):
    body = HELPER.split("class Helper")[0] + '''
def loop(k, s, me):
    loop(k, s, me)


def store(k, s, me):
    k.WRITE_ONCE(s.x, 1)


def maybe(k, s, me):
    if k.READ_ONCE(s.x) == 1:
        return
    return 2


class Bad(H):
    @process(role="cpus")
    def add(k, s, cpu):
        ''' + src + "\n"
    with pytest.raises(SpecError) as e:
        load(body, "Bad")
    assert says in str(e.value), str(e.value)
    assert e.value.line is not None


ATOMIC = '''
def take(k, s, me):
    """A helper whose return lies inside its own atomic block, and a label: one step either way."""
    with k.atomic():
        v = k.READ_ONCE(s.x)
        if v >= LIMIT:
            return 0
        k.WRITE_ONCE(s.x, v + 1)
    k.label("taken")
    return 1


class Atomic(H):
    @process(role="cpus")
    def add(k, s, cpu):
        got = take(k, s, cpu)
        s.got[cpu] = got
        k.WRITE_ONCE(s.x, s.x)


class InStep(H):
    @process(role="cpus")
    def add(k, s, cpu):
        with k.atomic():
            got = take(k, s, cpu)
            s.got[cpu] = got
        k.WRITE_ONCE(s.x, s.x)
'''


def test_a_return_inside_the_helpers_atomic_block_ends_that_step():
    cls, mod = load(ATOMIC, "Atomic")
    steps = sorted(n for n, a in info(cls).actions.items() if n.startswith("add_") and not a.builtin)
    # the taking step ends at the return when full (at the WRITE_ONCE, line 4), or at the label "taken" (named by
    # the call's line, 2) when it added; the WRITE_ONCE from either
    assert steps == ["add_L2_atomic_L2", "add_L2_atomic_L4", "add_L4_WRITE_ONCE_ret_1", "add_L4_WRITE_ONCE_ret_2"]
    r = runs(cls, ncpus=2)
    assert r.verdicts["bounded"] == "holds" and r.verdicts["full"] == "holds"
    # called inside one step: its label is no control point, its return ends nothing
    inside = sorted(n for n, a in info(mod.InStep).actions.items() if n.startswith("add_") and not a.builtin)
    assert inside == ["add_L2_atomic_L5_1", "add_L2_atomic_L5_2", "add_L5_WRITE_ONCE"], inside
    assert runs(mod.InStep, ncpus=2).verdicts["bounded"] == "holds"


def test_a_role_lowered_again_annotates_what_another_roles_primitives_name():
    """eager_sum_unlocked redefines the summer's function alone: its plain load of fbc->count is still a memory
    access (the reader's data_race(s.count) names count), so lkmm sees its race with the fold (no_data_race,
    expected violated); lowered with only the summer's functions, it was no access and lkmm said 'holds'."""
    from checker.specs.bugs.eager_sum_unlocked import EagerSumUnlocked
    from checker.specs.percpu_eager import PercpuEager

    def count_loads(cls):
        return {n: [(x.kind, x.var, x.order) for x in a.access] for n, a in info(cls).actions.items()
                if n.startswith("percpu_counter_sum_") and a.applies is None}

    bug = count_loads(EagerSumUnlocked)
    assert [acc for n, acc in bug.items() if "_atomic" in n] == [[("load", "count", "plain")]]
    assert [acc for n, acc in count_loads(PercpuEager).items() if "_atomic" in n] == [[("load", "count", "plain")]]
