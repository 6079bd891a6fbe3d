# SPDX-License-Identifier: GPL-2.0-only
"""percpu_eager written as process functions (specs/percpu_eager.py) against the hand-written pc machine it
replaced (tests/pc_machines/percpu_eager.py).

The claim: at the same point, the port and the pc machine have the same distinct states, transitions,
verdicts and shortest counterexample and witness lengths, under sc, tso and lkmm, on both explorers. That now
includes the points where an interrupt or a migration changes the local between C's read and its lock
(``DEAD_REGISTER``): the port once had fewer states there (it reset the dead ``seen``), and since the pc machine
moved to tests/pc_machines the two are equal there too, states, transitions and depth.

Also here: the lowering's refusals, each naming the file, the line and what to write instead.
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
from checker.ordering.declare import MEMORY
from checker.specs.percpu_eager import PercpuEager
from pc_machines.percpu_eager import PercpuEager as PcMachine

A, B, C = 0, 1, 2
#: The port's own lemmas, about its generated registers (the Z3 induction needs them; they hold everywhere).
PORT_LEMMAS = {"saved_flags_had_interrupts_on", "b_count_is_what_it_read"}


def compare(params: dict, memory: str = "sc", engine: str = "interpreted"):
    """Explore both specs at one point; assert what must agree."""
    mem = getattr(MEMORY, memory)
    h = explore(Model(PcMachine, PcMachine(memory=mem, **params).params), engine=engine)
    p = explore(Model(PercpuEager, PercpuEager(memory=mem, **params).params), engine=engine)
    assert h.complete and p.complete
    assert set(p.outcomes) - set(h.outcomes) <= PORT_LEMMAS
    both = [n for n in h.outcomes]
    assert {n: h.outcomes[n].verdict for n in both} == {n: p.outcomes[n].verdict for n in both}
    assert {n: len(h.outcomes[n].trace) for n in both} == {n: len(p.outcomes[n].trace) for n in both}
    assert (p.states, p.transitions, p.depth) == (h.states, h.transitions, h.depth)
    return h, p


# The first points of percpu_eager's sweeps (batch 2), one per sweep entry: B, C, A, limited_add, interrupts,
# the liveness abstraction.
FIRST = [dict(ncpus=1, batch=2), dict(variant=C, ncpus=1, batch=2), dict(variant=A, ncpus=1, batch=2),
         dict(limited=1, ncpus=1, batch=2), dict(variant=B, irq=1, ncpus=1, batch=2, readers=0),
         dict(variant=C, ncpus=1, batch=2, summers=1), dict(forever=1, variant=C, ncpus=2, batch=2)]


@pytest.mark.parametrize("params", FIRST, ids=lambda p: ",".join(f"{k}={v}" for k, v in p.items()))
def test_port_equals_the_pc_machine_at_the_first_points(params):
    compare(params)


@pytest.mark.parametrize("memory", ["tso", "lkmm"])
def test_port_equals_the_pc_machine_under_weak_memory(memory):
    compare(dict(ncpus=1, batch=2, irq=1), memory)


@pytest.mark.differential
def test_port_equals_the_pc_machine_on_the_compiled_explorer():
    h, p = compare(dict(variant=C, ncpus=2, batch=2), engine="compiled")
    assert p.engine == "compiled" and (p.states, p.transitions) == (148, 287)


DEAD_REGISTER = [dict(variant=C, ncpus=2, batch=2, irq=1), dict(variant=C, ncpus=2, batch=2, migrations=1)]


@pytest.mark.differential
@pytest.mark.parametrize("memory", ["sc", "tso", "lkmm"])
@pytest.mark.parametrize("params", [dict(ncpus=2, batch=2), dict(variant=C, ncpus=2, batch=2),
                                    dict(variant=A, ncpus=2, batch=2), dict(limited=1, ncpus=2, batch=2),
                                    dict(variant=B, irq=1, ncpus=2, batch=2),
                                    dict(variant=C, ncpus=2, batch=2, summers=1),
                                    dict(ncpus=2, batch=2, readers=1, summers=1), *DEAD_REGISTER],
                         ids=lambda p: ",".join(f"{k}={v}" for k, v in p.items()))
def test_port_equals_the_pc_machine_at_two_cpus(params, memory):
    compare(params, memory)


@pytest.mark.differential
@pytest.mark.parametrize("params", [dict(ncpus=2, batch=2, readers=1), *DEAD_REGISTER])
def test_port_on_both_explorers(params):
    mem = MEMORY.sc
    a = explore(Model(PercpuEager, PercpuEager(memory=mem, **params).params), engine="compiled")
    b = explore(Model(PercpuEager, PercpuEager(memory=mem, **params).params), engine="interpreted")
    assert a.engine == "compiled"
    assert (a.states, a.transitions, a.depth) == (b.states, b.transitions, b.depth)
    assert {n: (o.verdict, len(o.trace)) for n, o in a.outcomes.items()} == \
        {n: (o.verdict, len(o.trace)) for n, o in b.outcomes.items()}


def test_generated_steps_carry_annotations_fairness_and_their_line():
    """C's steps: named function, line (from the def) and primitive; the access= of each primitive; the lock
    strongly fair, the steps under it weakly."""
    acts = info(PercpuEager).actions
    c = {n: a for n, a in acts.items() if n.startswith("percpu_counter_add_batch_L")}
    assert set(c) == {"percpu_counter_add_batch_L16_this_cpu_read", "percpu_counter_add_batch_L19_raw_spin_lock_irqsave",
                      "percpu_counter_add_batch_L27_this_cpu_try_cmpxchg_ret",
                      "percpu_counter_add_batch_L27_this_cpu_try_cmpxchg_L17", "percpu_counter_add_batch_L20_atomic",
                      "percpu_counter_add_batch_L24_raw_cpu_sub",
                      "percpu_counter_add_batch_L25_raw_spin_unlock_irqrestore"}
    read = c["percpu_counter_add_batch_L16_this_cpu_read"]
    assert [(x.kind, x.var, x.order) for x in read.access] == [("load", "local", "once")]
    fold = c["percpu_counter_add_batch_L20_atomic"]
    assert [(x.kind, x.var, x.order) for x in fold.access] == [("load", "local", "plain"), ("load", "count", "plain"),
                                                              ("store", "count", "plain")]
    assert c["percpu_counter_add_batch_L19_raw_spin_lock_irqsave"].fair == "strong" and fold.fair == "weak"
    assert read.fair is None
    src = Path(read.file).read_text().splitlines()
    assert "k.this_cpu_read(s.local)" in src[read.line - 1]


# ---- refusals --------------------------------------------------------------------------------------------------

_DIR = Path(tempfile.mkdtemp(prefix="process_refusals_"))
_n = itertools.count()

SPEC = '''# SPDX-License-Identifier: GPL-2.0-only
from checker import Spec, Param, Shared, PerCpu, Lock, Role
from checker.language.process import process


def helper(k):
    return k


class R(Spec):
    """A process function the lowering refuses."""
    kernel = "generated"
    ncpus = Param(1, domain=range(1, 3))
    cpus = Role("ncpus")
    x = Shared(0)
    lock = Lock()
    local = PerCpu(0, role="cpus")

    @process(role="cpus")
    def f(k, s, cpu):
'''


def refused(body: str) -> SpecError:
    path = _DIR / f"refused_{next(_n)}.py"
    path.write_text(SPEC + textwrap.indent(textwrap.dedent(body), " " * 8))
    spec = importlib.util.spec_from_file_location(path.stem, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[path.stem] = mod
    with pytest.raises(SpecError) as e:
        spec.loader.exec_module(mod)
    assert e.value.file == str(path)
    return e.value


@pytest.mark.parametrize("body, line, says, instead", [
    ("for c in s.cpus:\n    k.WRITE_ONCE(s.x, c)\n", 1, "a `for` loop is not lowered", "k.any_cpu"),
    ("a = 0\nwhile a < 2:\n    a += 1\n", 2, "a loop with no step", "a primitive (a step) in every way"),
    ("k.this_cpu_inc_return(s.local)\nk.thiscpu_add(s.local, 1)\n", 2, "not a kernel primitive",
     "k.this_cpu_add(...)"),
    ("f(k, s, cpu)\n", 1, "is a process function", "its steps written out here"),
    ("helper(k)\n", 1, "is passed or stored", "a helper without steps"),
    ("a = k.READ_ONCE(s.x)\nreturn a\n", 2, "nothing observes it", "@process(..., returns=judge)"),
    ("k.spin_lock(s.lock)\n", 1, "returns with interrupts off or lock held", None),
    ("if k.READ_ONCE(s.x):\n    pass\n", 1, "a primitive in an `if`/`while` test", "x = k.READ_ONCE(...)"),
    ("k.WRITE_ONCE(s.x, k.READ_ONCE(s.x) + 1)\n", 1, "calls 2 primitives", "k.atomic()"),
])
def test_the_lowering_refuses_with_file_line_and_what_to_write(body, line, says, instead):
    e = refused(body)
    assert says in str(e), str(e)
    if instead is not None:
        assert "write instead" in str(e) and instead in str(e), str(e)
    assert e.line == 20 + line  # the body starts on the line after the def (line 20 of SPEC)


def test_a_trace_names_the_function_line_and_primitive_of_each_step():
    """The shortest way to a fold on variant C, as a trace prints it: function:line primitive, the chosen
    amount, and the generated pc and registers only where they change."""
    from checker.report.trace import render_trace

    m = Model(PercpuEager, PercpuEager(variant=C, ncpus=1, batch=2).params)
    r = explore(m)
    lines = render_trace(m, r.initial_state, r.outcomes["a_fold_happens"].trace)
    calls = [line.split("  ")[2].strip() if len(line.split("  ")) > 2 else line for line in lines]
    assert any("percpu_counter_add_batch:16 this_cpu_read(amount=" in line for line in lines), lines
    assert any("percpu_counter_add_batch:19 raw_spin_lock_irqsave" in line for line in lines), lines
    assert any("percpu_counter_add_batch:20 atomic" in line for line in lines), calls
    assert not any("adders_flags[0] = 0 (same)" in line for line in lines), lines


# ---- context primitives join the step next to them ---------------------------------------------------------------

JOIN = '''# SPDX-License-Identifier: GPL-2.0-only
from checker import IRQS_OFF, Ghost, Param, PerCpu, Role, Shared, Spec, invariant, terminal
from checker.language.process import process


class J(Spec):
    """A task stores x, saves interrupts, stores y, restores; its handler records what it saw."""
    kernel = "a test of the lowering"
    ncpus = Param(1, domain=range(1, 2))
    cpus = Role("ncpus")
    x = Shared(0)
    y = Shared(0)
    irqs = PerCpu(0, type=IRQS_OFF, role="cpus")
    left = PerCpu(1, role="cpus")
    seen = Ghost(0, doc="x + 2y as the handler saw them: 1 only between the two stores")

    @process(role="cpus")
    def f(k, s, cpu):
        """WRITE_ONCE(x, 1); local_irq_save(flags); WRITE_ONCE(y, 1); local_irq_restore(flags);"""
        k.WRITE_ONCE(s.x, 1)
        flags = k.local_irq_save()
        k.WRITE_ONCE(s.y, 1)
        k.local_irq_restore(flags)

    @process(role="cpus", irq=True, calls="left")
    def handler(k, s, cpu):
        """The interrupt: records x and y."""
        with k.atomic():
            s.seen = k.READ_ONCE(s.x) + 2 * k.READ_ONCE(s.y)

    @terminal
    def returned(s):
        """The task returned."""
        return s.cpus_pc[0] == 1

    @invariant
    def never_between(s):
        """False on purpose: the handler never runs between the stores."""
        return s.seen != 1
'''


def test_a_disable_joins_the_step_after_it_and_an_enable_the_step_before():
    """local_irq_save() is no step: the save, the store of y and the restore are one step, and the control point
    lies before the save, with interrupts on, so the handler still runs between the two stores (the
    interleaving a save joined to the step before it would lose)."""
    path = _DIR / "joins.py"
    path.write_text(JOIN)
    spec = importlib.util.spec_from_file_location(path.stem, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[path.stem] = mod
    spec.loader.exec_module(mod)
    steps = sorted(n for n, a in info(mod.J).actions.items() if n.startswith("f_"))
    assert steps == ["f_L3_WRITE_ONCE", "f_L5_WRITE_ONCE"]
    r = explore(Model(mod.J, mod.J().params))
    # x's store, then the handler: it ran at the point before the save
    assert r.outcomes["never_between"].verdict == "violated" and len(r.outcomes["never_between"].trace) == 2
