# SPDX-License-Identifier: GPL-2.0-only
"""k.choose, k.label and k.might_sleep in process functions (checker/language/process.py, cfg.py, primitives.py).

k.choose(values) is a value the step it lies in chooses, every one tried: an argument of the generated action, so
a trace names it. k.label("name") is a control point: what follows it waits for the next step, and properties
name the point. k.might_sleep() marks its step as one that may sleep (@action(sleeps=True)). The random
process-function test (tests/test_process_random.py) runs both against a direct interpreter; the port of
stack_cache (tests/test_process_stack.py) uses all three.
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

_DIR = Path(tempfile.mkdtemp(prefix="process_choose_"))
_n = itertools.count()

SPEC = '''# SPDX-License-Identifier: GPL-2.0-only
from checker import AllOf, Param, PerCpu, Role, Shared, Spec, sometimes, terminal
from checker.language.process import at, process


class R(Spec):
    """A process function with choices."""
    kernel = "generated"
    ncpus = Param(2, domain=range(1, 3))
    top = Param(2, domain=range(1, 4))
    cpus = Role("ncpus")
    x = Shared(0)
    local = PerCpu(0, role="cpus")

    @terminal
    def finished(s):
        return AllOf([s.cpus_pc[c] == 1 for c in s.cpus])

    @sometimes
    def x_is_top(s):
        return s.x == s.top

    @process(role="cpus")
    def f(k, s, cpu):
'''


def load(body: str):
    path = _DIR / f"choose_{next(_n)}.py"
    path.write_text(SPEC + textwrap.indent(textwrap.dedent(body), " " * 8))
    spec = importlib.util.spec_from_file_location(path.stem, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[path.stem] = mod
    spec.loader.exec_module(mod)
    return mod.R, path


def test_a_choice_is_an_argument_of_its_step_and_every_value_is_tried():
    cls, _ = load("""\
        ok = k.choose((True, False))
        if ok:
            v = k.choose(range(1, s.top + 1))
            k.WRITE_ONCE(s.x, v)
        else:
            k.this_cpu_write(s.local, 1)
        """)
    acts = info(cls).actions
    assert [c for c, _ in acts["f_L5_WRITE_ONCE"].choose] == ["__choice_ok", "__choice_v"]
    assert [c for c, _ in acts["f_L7_this_cpu_write"].choose] == ["__choice_ok"]
    r = explore(Model(cls, cls(top=3).params))
    assert r.outcomes["x_is_top"].verdict == "holds" and len(r.outcomes["x_is_top"].trace) == 1
    # each CPU writes x := 1, 2 or 3, or its local := 1: the start; one CPU done (4 ways each); both done: x as
    # the last writer left it (3), one x and one local (3 each way round), both locals (1)
    assert r.states == 1 + 2 * 4 + 3 + 2 * 3 + 1


def test_a_label_is_a_control_point_that_properties_name():
    cls, _ = load("""\
        k.WRITE_ONCE(s.x, 1)
        k.label("chosen")
        v = k.choose((0, 2))
        k.WRITE_ONCE(s.x, v)
        """)
    reg = cls.__countercheck_processes__["f"]
    assert [p.prim for p in reg["points"].values()] == ["chosen"]
    # the choice is made by the step after the label, not by the write before it
    assert [c for c, _ in info(cls).actions["f_L2_WRITE_ONCE"].choose] == []
    assert [c for c, _ in info(cls).actions["f_L5_WRITE_ONCE"].choose] == ["__choice_v"]


def test_might_sleep_marks_its_step():
    cls, _ = load("""\
        with k.atomic():
            k.might_sleep()
            s.x = 1
        k.WRITE_ONCE(s.x, 2)
        """)
    acts = info(cls).actions
    assert acts["f_L2_atomic"].sleeps and not acts["f_L5_WRITE_ONCE"].sleeps


@pytest.mark.parametrize("body, line, says", [
    ("k.WRITE_ONCE(s.x, k.choose((1, 2)))\n", 1, "k.choose() is assigned to a local"),
    ("with k.atomic():\n    k.label('in')\n    s.x = 1\n", 2, "k.label() inside `with k.atomic():`"),
    ("k.label(1)\nk.WRITE_ONCE(s.x, 1)\n", 1, "k.label() takes one name"),
    ("a = k.label('x')\nk.WRITE_ONCE(s.x, 1)\n", 1, "k.label() is a statement of its own"),
])
def test_the_lowering_refuses_a_misplaced_choice_or_label(body, line, says):
    with pytest.raises(SpecError) as e:
        load(body)
    assert says in str(e.value), str(e.value)
    assert e.value.line == 24 + line


def test_a_choice_of_state_values_is_refused_when_the_point_is_built():
    cls, path = load("""\
        v = k.choose(range(s.x))
        k.WRITE_ONCE(s.x, v)
        """)
    with pytest.raises(SpecError, match="not of the state"):
        Model(cls, cls().params).initial_states()
