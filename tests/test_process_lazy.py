# SPDX-License-Identifier: GPL-2.0-only
"""percpu_lazy written as process functions on tasks (specs/percpu_lazy.py) against the hand-written pc machine it
replaced (tests/pc_machines/percpu_lazy.py).

The claim: at the same point, the same distinct states, transitions, depth, verdicts and shortest trace lengths,
under sc, tso and lkmm, on both explorers, and the same Z3 proofs (the word lemmas, percpu_lazy's only proofs).
The port's tasks are one per CPU and neither preempted nor migrated at percpu_lazy's points (its own sweep adds
a point that migrates them). Interrupt-context adds (irq > 0) are compared too: under tso and lkmm against the
pc-machine with its handler's steps annotated as its task's (``IrqAnnotated``: percpu_lazy leaves them
unannotated, fully ordered, which tests/test_weak_seeds.py relies on; the port's handler is the task's code and
carries the same annotations). At 32 bits the two differ by design and are compared by verdicts: the pc machine
splits a task's this_cpu_add into its two stores, the port keeps it one step and splits the reader's loads (the
port's docstring says why every torn value is still seen).

Also here: the word held as several variables that a primitive names (``CV``: one value to the code, one location
to the memory models), ``address_dep`` on the read's slot loads, and the bug only the task model can express,
``specs/bugs/lazy_switch_no_preempt_disable.py``.
"""
from __future__ import annotations

import types

import pytest

from checker.explore import explore
from checker.language.compile import Model
from checker.language.model import info
from checker.ordering.declare import MEMORY
from port_equality import equal_runs, point_id
from specs.bugs.lazy_switch_no_preempt_disable import LazySwitchNoPreemptDisable
from pc_machines.percpu_lazy import PercpuLazy as PcMachine
from pc_machines.percpu_lazy_publish import PercpuLazyPublish as PcPublish
from specs.percpu_lazy import PercpuLazy as Port
from specs.percpu_lazy import PercpuLazy32bit
from specs.percpu_lazy_publish import PercpuLazyPublish as PortPublish


def _annotated(irq_step, like):
    """percpu_lazy's handler step ``irq_step`` with the access= annotation of its task's step ``like``."""
    f = getattr(PcMachine, irq_step)
    g = types.FunctionType(f.__code__, f.__globals__, f.__name__, f.__defaults__, f.__closure__)
    g.__doc__, g.__qualname__ = f.__doc__, f.__qualname__
    g.__countercheck_action__ = dict(f.__countercheck_action__,
                                     access=getattr(PcMachine, like).__countercheck_action__["access"])
    return g


class IrqAnnotated(PcMachine, on_demand=True):
    """percpu_lazy with its hard-irq handler's steps annotated as its task's same steps (the port's handler is
    the same code as its task's, so its primitives carry the same annotations)."""

    irq_add = _annotated("irq_add", "add")
    irq_this_cpu_add = _annotated("irq_this_cpu_add", "this_cpu_add")
    irq_slowpath_read = _annotated("irq_slowpath_read", "slowpath_read")
    irq_slowpath_cmpxchg = _annotated("irq_slowpath_cmpxchg", "slowpath_cmpxchg")
    irq_switch_read = _annotated("irq_switch_read", "switch_read")
    irq_switch_cmpxchg = _annotated("irq_switch_cmpxchg", "switch_cmpxchg")


def compare(params: dict, memory: str = "sc", engine: str = "interpreted", hand: type = PcMachine,
            port: type = Port):
    if hand is PcMachine and params.get("irq") and memory != "sc":
        hand = IrqAnnotated
    return equal_runs(hand, port, params, memory, engine)


_ids = point_id


def test_port_equals_the_pc_machine_at_the_first_point():
    """percpu_lazy's first point (2 CPUs, mod_bits=0, amounts of both signs) without its reader."""
    h, p = compare(dict(ncpus=2, mod_bits=0, readers=0))
    assert p.states == 1847 and p.outcomes["two_cpus_race_to_switch"].verdict == "holds"


IRQ_FIRST = dict(irq=1, mod_bits=0, ncpus=1, ops=2, readers=0)


def test_port_equals_the_pc_machine_at_the_first_interrupt_point():
    """percpu_lazy's first interrupt point (one CPU, its task's and its handler's two adds): the handler, a
    process function of several steps, lands inside the task's switch and publishes first."""
    h, p = compare(IRQ_FIRST)
    assert p.states == 140
    assert {p.outcomes[n].verdict for n in ("an_irq_switch_nests_in_the_task_switch",
                                            "a_task_loses_the_switch_to_its_own_irq")} == {"holds"}


@pytest.mark.differential
@pytest.mark.parametrize("memory", ["tso", "lkmm"])
def test_the_unannotated_handler_is_what_differs_under_weak_memory(memory):
    """percpu_lazy's handler steps carry no access= (fully ordered, written to memory): under tso its shortest
    witness of a_switch_loser_frees is a step shorter than the port's (14, 15), under lkmm it reaches 633 states
    to the port's 641; annotated as the task's (IrqAnnotated) it is the port, state for state."""
    at = dict(IRQ_FIRST, neg=1, memory=getattr(MEMORY, memory))
    h = explore(Model(PcMachine, PcMachine(**at).params))
    p = explore(Model(Port, Port(**at).params))
    pins = {"tso": ((641, 14), (641, 15)), "lkmm": ((633, 14), (641, 14))}[memory]
    assert tuple((r.states, len(r.outcomes["a_switch_loser_frees"].trace)) for r in (h, p)) == pins
    compare(dict(IRQ_FIRST, neg=1), memory)


@pytest.mark.parametrize("memory", ["sc", "tso", "lkmm"])
def test_port_with_its_reader_equals_the_pc_machine(memory):
    """A reader racing the switch (one add per task), under each memory model: c->v one location, the slot
    loads carrying their address dependency on it."""
    h, p = compare(dict(ncpus=2, mod_bits=0, neg=0, ops=1, readers=1), memory)
    assert p.outcomes["a_per_cpu_read_is_exact"].verdict == "holds"


def test_publish_claim_on_the_port_equals_percpu_lazy_publish():
    """percpu_lazy_publish's claim on the port (its ghosts recorded through the port's hooks), under lkmm."""
    h, p = compare(dict(ncpus=2, mod_bits=0, neg=0, ops=1, readers=1), "lkmm", hand=PcPublish,
                   port=PortPublish)
    assert p.outcomes["a_read_reads_the_published_slot"].verdict == "holds"


@pytest.mark.differential
@pytest.mark.parametrize("memory", ["sc", "tso", "lkmm"])
def test_publish_claim_on_the_port_at_its_point(memory):
    """percpu_lazy_publish's only point (two CPUs racing to switch, a reader racing the publication)."""
    compare(dict(ncpus=2, mod_bits=0, neg=0, readers=1), memory, engine="compiled", hand=PcPublish,
            port=PortPublish)


def test_the_same_word_lemmas_are_proved():
    from checker.prove import prove_checks

    h, p = prove_checks(PcMachine), prove_checks(Port)
    assert [(c.property, c.verdict) for c in h] == [(c.property, c.verdict) for c in p]
    assert len(p) == 11 and {c.verdict for c in p} == {"holds"}


def test_generated_steps_carry_the_word_and_the_dependency():
    """c->v's accesses name the one word (percpu_lazy's READ_V, CMPXCHG_V); the publish stores the copy before
    its cmpxchg; the read's slot loads race and depend on c->v (percpu_lazy's read_slot annotation)."""
    acts = {n: [(x.kind, x.var, x.order, x.dep, x.race_ok) for x in a.access]
            for n, a in info(Port).actions.items() if not a.builtin}
    reads = [a for n, a in acts.items() if "atomic64_read" in n]
    assert reads and all(a == [("load", "c_v", "once", False, False)] for a in reads)
    publish = [a for a in acts.values() if len(a) == 2]
    assert publish and all(a == [("store", "slot", "plain", False, False), ("rmw", "c_v", "mb", False, False)]
                           for a in publish)
    (slot,) = [a for n, a in acts.items() if n.endswith("per_cpu")]
    assert slot == [("load", "slot", "plain", "c_v", True)]


def test_without_preempt_disable_a_migrated_retry_counts_twice():
    """The task model expresses what the pc-machine cannot: the copy retried on the CPU a task migrated to lands
    beside the first one."""
    m = Model(LazySwitchNoPreemptDisable, LazySwitchNoPreemptDisable().params)
    r = explore(m)
    bad = r.outcomes["no_update_lost"]
    assert bad.verdict == "violated" and len(bad.trace) == 17
    assert any("migrate" in str(step) for step in bad.trace)


def test_the_stale_copy_is_a_plain_store_before_the_publishing_cmpxchg():
    """preempt_off=0: the earlier copy a retried switch left in the first CPU's slot is a plain store of that
    slot (``*this_cpu_ptr(pcpu_v) = ...``, made before the migration), placed at the CPU it was made on (a
    ``k.choose`` of the step) and ordered, as the retried copy is, before the cmpxchg that publishes."""
    acts = {n: [(x.kind, x.var, x.order, x.slot is None) for x in a.access]
            for n, a in info(LazySwitchNoPreemptDisable).actions.items() if not a.builtin}
    landing = [a for n, a in acts.items() if len(a) == 3]
    assert landing and all(a == [("store", "slot", "plain", False), ("store", "slot", "plain", True),
                                 ("rmw", "c_v", "mb", True)] for a in landing)


@pytest.mark.differential
@pytest.mark.parametrize("memory, steps", [("tso", 17), ("lkmm", 14)])
def test_without_preempt_disable_the_retry_counts_twice_under_weak_memory(memory, steps):
    """The bug under tso and lkmm (3,523 and 7,973 states): the last step publishes from the CPU the task
    moved to, with the first CPU's earlier copy landing beside the retried one. lkmm's trace is shorter: the
    switch's atomic64_read may return the word before an add's cmpxchg, so its first cmpxchg fails without a
    third add."""
    p = LazySwitchNoPreemptDisable(memory=getattr(MEMORY, memory)).params
    r = explore(Model(LazySwitchNoPreemptDisable, p), engine="compiled")
    assert r.engine == "compiled" and r.complete
    assert r.states == {"tso": 3523, "lkmm": 7973}[memory]
    bad = r.outcomes["no_update_lost"]
    assert bad.verdict == "violated" and len(bad.trace) == steps
    assert [o for n, o in r.outcomes.items() if n != "no_update_lost" and o.verdict == "violated"] == []
    assert any(x.action == "migrate" for x in bad.trace)
    last = bad.trace[-1]
    assert last.changes["publishes"] == 1 and {f"slot[{c}]" for c in range(2)} <= set(last.changes)


@pytest.mark.differential
def test_with_preempt_disable_migration_loses_nothing():
    """The port's own sweep point: one migration, one preemption, every property holds (the scheduler cannot
    move a task inside the switch: its preempt_count() is 1)."""
    p = Port(ncpus=2, mod_bits=0, readers=0, neg=0, ops=2, migrations=1, preemptions=1)
    r = explore(Model(Port, p.params))
    assert r.complete and {o.verdict for o in r.outcomes.values()} == {"holds"}
    assert r.outcomes["a_task_migrates"].verdict == "holds"


# every point of percpu_lazy's sweeps (its 32-bit sweep is not ported), under every memory model
EVERY = [dict(ncpus=2, mod_bits=0), dict(ncpus=2, mod_bits=1), dict(ncpus=2, mod_bits=2), dict(ncpus=3, mod_bits=0),
         dict(ncpus=3, mod_bits=1), dict(ncpus=3, mod_bits=2), dict(forever=1, mod_bits=0, ncpus=2, readers=0),
         IRQ_FIRST, dict(irq=1, mod_bits=0, ncpus=2, ops=1, neg=0)]


@pytest.mark.differential
@pytest.mark.parametrize("params, memory", [(p, m) for p in EVERY for m in ("sc", "tso", "lkmm")
                                            if m == "sc" or not p.get("forever")],  # (liveness points: sc only)
                         ids=lambda x: _ids(x) if isinstance(x, dict) else x)
def test_port_equals_the_pc_machine_at_every_point(params, memory):
    compare(params, memory, engine="compiled")


@pytest.mark.differential
@pytest.mark.parametrize("params", EVERY, ids=_ids)
def test_port_equals_the_pc_machine_on_the_interpreter(params):
    compare(params)


# ---- the lowering: a word held as several variables, and address_dep ----------------------------------------

def _load(tmp_path, body: str, name: str):
    import importlib.util
    import textwrap

    src = tmp_path / f"{name}.py"
    src.write_text(textwrap.dedent(body))
    spec = importlib.util.spec_from_file_location(name, src)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


WORD_SPEC = '''
    from checker import NOBODY, AllOf, And, CpuId, If, Implies, OneWord, Param, PerCpu, Role, Shared, Spec
    from checker import invariant, sometimes, terminal
    from checker.language.process import process

    class Flag(OneWord):
        """A word that is a count, or (odd) a CPU's claim."""
        def load(self, count, owner):
            return If(owner != NOBODY, 1, count)

        def store(self, value, me, count, owner):
            same = value == self.load(count, owner)
            return If(same, count, If(value == 1, 0, value)), If(same, owner, If(value == 1, me, NOBODY))

    class W(Spec):
        """Each CPU adds 2 to the word by cmpxchg, or claims it."""
        kernel = "a test of the lowering"
        ncpus = Param(2, domain=range(1, 3))
        cpus = Role("ncpus", symmetric=True)
        count = Shared(0)
        owner = Shared(NOBODY, type=CpuId)
        w = Flag("count", "owner")
        seen = PerCpu(0, role="cpus")
        got = PerCpu(0, role="cpus")
        first = Shared(NOBODY, type=CpuId, doc="ghost: the CPU whose claim succeeded")

        @process(role="cpus", args={"claim": (0, 1)})
        def f(k, s, cpu, claim):
            """f."""
            v = k.atomic64_read(s.w)
            while v != 1:
                old = v
                v = k.atomic64_cmpxchg(s.w, old, 1 if claim else old + 2)
                if v == old:
                    s.first = cpu if claim else s.first
                    return
            s.got[cpu] = k.data_race(k.address_dep(s.w, k.per_cpu(s.seen, cpu)))

        @terminal
        def finished(s):
            """Every CPU returned."""
            return AllOf([s.cpus_pc[c] == 1 for c in s.cpus])

        @invariant
        def a_claim_is_kept(s):
            """Once claimed, the word stays the claimer's, with no count (a failed cmpxchg stores nothing)."""
            return And(s.owner == s.first, Implies(s.owner != NOBODY, s.count == 0))

        @sometimes
        def claimed_after_an_add(s):
            """A CPU claimed the word after another added 2."""
            return And(s.owner != NOBODY, s.got[0] + s.got[1] == 0, AllOf([s.cpus_pc[c] == 1 for c in s.cpus]))

        @sometimes
        def both_added(s):
            """Both CPUs added: the count is 4."""
            return s.count == 4
'''


def test_a_word_of_several_variables_is_one_value_to_the_code(tmp_path):
    """A primitive on ``s.w`` reads the view's value and stores through it: the claim records its CPU, a failed
    cmpxchg leaves both fields as they were; the memory models see one location ``w``, the slot load depends
    on it."""
    W = _load(tmp_path, WORD_SPEC, "spec_word_view").W
    acts = {n: [(x.kind, x.var, x.order, x.dep) for x in a.access] for n, a in info(W).actions.items()
            if not a.builtin}
    assert [("rmw", "w", "mb", False)] in acts.values() and [("load", "seen", "plain", "w")] in acts.values()
    for mem in ("sc", "tso", "lkmm"):
        r = explore(Model(W, W(memory=getattr(MEMORY, mem)).params))
        assert r.complete and {o.verdict for o in r.outcomes.values()} == {"holds"}, (mem, r.verdicts)


def test_address_dep_takes_a_word_and_one_load(tmp_path):
    from checker.errors import SpecError

    with pytest.raises(SpecError, match=r"address_dep\(\) takes the word the address was read from and one load"):
        _load(tmp_path, WORD_SPEC.replace("k.address_dep(s.w, k.per_cpu(s.seen, cpu))",
                                          "k.address_dep(s.w, k.WRITE_ONCE(s.seen, 1))"), "spec_word_dep_bad")


# ---- 32-bit kernels: the same verdicts, the port's task adds whole ----------------------------------------------

def _verdicts_at_32_bits(params: dict) -> tuple:
    """Both specs explored at a 32-bit point: the verdicts of the properties they share, and both runs."""
    at = dict(params, bits=32)
    h = explore(Model(PcMachine, PcMachine(**at).params), engine="compiled")
    p = explore(Model(Port, Port(**at).params), engine="compiled")
    assert h.complete and p.complete
    shared = set(h.outcomes) & set(p.outcomes)
    assert {n: h.outcomes[n].verdict for n in shared} == {n: p.outcomes[n].verdict for n in shared}
    return h, p


@pytest.mark.parametrize("params", [PercpuLazy32bit.explore_sweeps[0] | {"mod_bits": 0},
                                    PercpuLazy32bit.explore_sweeps[3] | {"neg": 1}], ids=_ids)
def test_32_bit_verdicts_equal_the_pc_machine(params):
    """At 32 bits the pc machine splits a task's this_cpu_add into two stores, the port keeps it one step (whole
    to its own CPU) and splits only the loads that can see it torn: the same verdicts, fewer states. A handler's
    add to its own CPU's slot is split in both (no_update_lost judged between its stores)."""
    h, p = _verdicts_at_32_bits(params)
    assert p.states < h.states and {o.verdict for o in p.outcomes.values()} == {"holds"}


@pytest.mark.differential
def test_the_torn_read_is_found_on_the_port():
    """lazy_read_torn_32bit's point: a read whose halves straddle a slot crossing 2^32 is about 2^32 off, on
    both."""
    h, p = _verdicts_at_32_bits(dict(ncpus=2, mod_bits=0, neg=1, readers=1))
    assert h.outcomes["read_within_adds"].verdict == "violated"
    assert (len(h.outcomes["read_within_adds"].trace), len(p.outcomes["read_within_adds"].trace)) == (19, 19)
