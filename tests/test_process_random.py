# SPDX-License-Identifier: GPL-2.0-only
"""Random process functions, lowered, against a direct small-step interpreter of the same function.

Hypothesis writes small process functions (branches on locals, bounded loops with a step in them, atomic
blocks, lock sections, try_cmpxchg loops, assume, values chosen with ``k.choose``, named control points with
``k.label``) for a spec with two CPUs. The lowering
(``checker.language.process``) turns each into actions; the interpreter here runs the function itself as a
Python generator (each ``k.<primitive>`` rewritten to a ``yield`` of a request it serves with its own
semantics of the primitives), one CPU at a time, under the stepping rule the guide states: a step runs local
code, one primitive (or one ``with k.atomic():`` block) and the local code after it, and stops before the
next primitive, atomic block, loop head or label; a ``k.choose`` is made, every value tried, by the step it
lies in. Both must reach the same states: every spec variable and, per
CPU, whether it has returned (the lowering's program counter and registers are its own business).
"""
from __future__ import annotations

import ast
import importlib.util
import itertools
import sys
import tempfile
import textwrap
from pathlib import Path

from hypothesis import HealthCheck, given, reject, settings, strategies as st

from checker.language.compile import Model

NOBODY = -1
_DIR = Path(tempfile.mkdtemp(prefix="process_random_"))
_count = itertools.count()

IMPORTS = '''# SPDX-License-Identifier: GPL-2.0-only
from checker import Spec, Param, Shared, PerCpu, Ghost, Lock, Role, IRQS_OFF, AllOf, terminal
from checker.language.process import process
'''

HEADER = '''

class R(Spec):
    """A random process function."""
    kernel = "generated"
    ncpus = Param(2, domain=range(1, 3))
    cpus = Role("ncpus", symmetric=False)
    x = Shared(0)
    y = Shared(0)
    lock = Lock()
    local = PerCpu(0, role="cpus")
    irqs = PerCpu(0, type=IRQS_OFF, role="cpus")
    g = Ghost(0)

    @terminal
    def finished(s):
        return AllOf([s.cpus_pc[c] == 1 for c in s.cpus])

    @process(role="cpus")
    def f(k, s, cpu):
'''

VARS = ("x", "y", "lock", "local", "irqs", "g")


# ---- the generator of process bodies ---------------------------------------------------------------------------

def _simple(draw, locked: bool) -> list[str]:
    """One straight-line statement: a primitive or local code."""
    choice = draw(st.integers(0, 8))
    return [
        ["a = k.READ_ONCE(s.x)"], ["b = k.READ_ONCE(s.y)"], ["k.WRITE_ONCE(s.x, (a + 1) % 3)"],
        ["k.WRITE_ONCE(s.y, (a + b) % 3)"], ["a = k.this_cpu_read(s.local)"],
        ["k.this_cpu_write(s.local, (b + 1) % 3)"], ["a = (a + b + 1) % 3"], ["s.g = (s.g + a) % 3"],
        ["c = k.choose((0, 2))", "b = (b + c) % 3"],
    ][choice]


@st.composite
def _block(draw, depth: int, locked: bool, in_loop: bool, helper: bool = False, ret: str = "return") -> list[str]:
    """Statements; ``helper``: calls of the helper ``h`` may be among them; ``ret``: how a return is written."""
    out: list[str] = []
    for _ in range(draw(st.integers(1, 3))):
        kind = draw(st.integers(0, 11 if depth < 2 else 2))
        if kind <= 2:
            out += _simple(draw, locked)
        elif kind == 3:
            t, e = draw(_block(depth + 1, locked, in_loop, helper, ret)), draw(_block(depth + 1, locked, in_loop, helper,
                                                                                       ret))
            cond = draw(st.sampled_from(["a > b", "a == 1", "not b", "a == 1 and b != 2", "a < 2 or b == 1"]))
            out += [f"if {cond}:", *("    " + x for x in t), "else:", *("    " + x for x in e)]
        elif kind == 4:
            i = f"i{depth}"
            body = draw(_block(depth + 1, locked, True, helper, ret))
            out += [f"{i} = 0", f"while {i} < 2:", f"    {i} += 1", "    k.WRITE_ONCE(s.y, (a + 1) % 3)",
                    *("    " + x for x in body)]
        elif kind == 5:
            body = [x for _ in range(draw(st.integers(1, 3))) for x in _simple(draw, locked)]
            out += ["with k.atomic():", *("    " + x for x in body)]
        elif kind == 6 and not locked:
            body = draw(_block(depth + 1, True, in_loop, helper, ret))
            out += ["k.spin_lock(s.lock)", *body, "k.spin_unlock(s.lock)"]
        elif kind == 7:
            out += ["a = k.READ_ONCE(s.x)", "while True:", "    ok, a = k.try_cmpxchg(s.x, a, (a + 1) % 3)",
                    "    if ok:", "        break"]
        elif kind == 8:
            out += ["k.assume(s.x != 2 or a == 0)"]
        elif kind == 9 and not locked:
            out += ["if a == 2:", f"    {ret}"]
        elif kind == 10:
            out += ['k.label("here")']
        elif kind == 11 and helper and not locked:
            out += ["a = h(k, s, cpu, a)"]  # an inlined helper: its steps are f's
        else:
            out += _simple(draw, locked)
    return out


@st.composite
def bodies(draw) -> str:
    block = draw(_block(0, False, False, helper=True))
    where = draw(st.sampled_from(["", "first", "last"]))  # (a call of h among them is rare: one more, often)
    call = ["a = h(k, s, cpu, a)"]
    return "\n".join(["a = 0", "b = 0", *(call if where == "first" else []), *block,
                      *(call if where == "last" else [])])


@st.composite
def helpers(draw) -> str:
    """A module-level helper ``h(k, s, cpu, a)`` that f may call (inlined): steps of its own, a value returned."""
    body = ["b = 0", *draw(_block(1, False, False, ret="return 0")), "return (a + b) % 3"]
    return "\n".join(["def h(k, s, cpu, a):", *("    " + x for x in body)])


def load(body: str, helper: str = ""):
    src = IMPORTS + ("\n\n" + helper + "\n" if helper else "") + HEADER + textwrap.indent(body, " " * 8) + "\n"
    path = _DIR / f"rand_{next(_count)}.py"
    path.write_text(src)
    spec = importlib.util.spec_from_file_location(path.stem, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[path.stem] = mod
    spec.loader.exec_module(mod)
    return mod.R, src


# ---- the lowered spec's reachable states ------------------------------------------------------------------------

def lowered_states(cls) -> set[tuple]:
    m = Model(cls(ncpus=2))
    idx = m.index
    pcs = idx["cpus_pc"]
    seen = set(m.initial_states())
    todo = list(seen)
    while todo:
        s = todo.pop()
        for _, t in m.successors(s):
            if t not in seen:
                seen.add(t)
                todo.append(t)
    return {(tuple(_flat(s[idx[v]]) for v in VARS), tuple(p == 1 for p in s[pcs])) for s in seen}


def _flat(v):
    return tuple(v) if isinstance(v, (tuple, list)) else v


# ---- the direct interpreter ------------------------------------------------------------------------------------

class _Gen(ast.NodeTransformer):
    """k.prim(s.v, ...) -> (yield ("prim", "v", ...)); with k.atomic() and loop heads -> markers."""

    def visit_Call(self, c):
        self.generic_visit(c)
        if isinstance(c.func, ast.Name) and c.func.id == "h":  # the helper: a generator of its own requests
            return ast.YieldFrom(c)
        if isinstance(c.func, ast.Attribute) and isinstance(c.func.value, ast.Name) and c.func.value.id == "k":
            args = list(c.args)
            if args and isinstance(args[0], ast.Attribute) and c.func.attr != "assume":
                args[0] = ast.Constant(args[0].attr)
            return ast.Yield(ast.Tuple([ast.Constant(c.func.attr), *args], ast.Load()))
        return c

    def visit_With(self, w):
        self.generic_visit(w)
        mark = lambda m: ast.Expr(ast.Yield(ast.Tuple([ast.Constant(m)], ast.Load())))  # noqa: E731
        return [mark("atomic_in"), *w.body, mark("atomic_out")]

    def visit_Expr(self, e):
        if isinstance(e.value, ast.Call) and isinstance(e.value.func, ast.Attribute) and e.value.func.attr == "label":
            return ast.Expr(ast.Yield(ast.Tuple([ast.Constant("loop")], ast.Load())))  # a control point, as a loop head
        return self.generic_visit(e)

    def visit_While(self, w):
        self.generic_visit(w)
        head = ast.Expr(ast.Yield(ast.Tuple([ast.Constant("loop")], ast.Load())))
        test = ast.If(ast.UnaryOp(ast.Not(), w.test), [ast.Break()], [])
        return ast.While(ast.Constant(True), [head, test, *w.body], [])


class _Disabled(Exception):
    pass


class _NeedChoice(Exception):
    """The step reached a k.choose past the choices given: try each of its ``n`` values."""

    def __init__(self, n: int):
        self.n = n


class _S:
    """The interpreter's state, read and written by the function as ``s.<name>``."""

    def __init__(self, values: dict):
        object.__setattr__(self, "v", values)

    def __getattr__(self, n):
        return self.v[n]

    def __setattr__(self, n, value):
        self.v[n] = value


def make_function(src: str):
    tree = ast.parse(src)
    fns = []
    for name in ("h", "f"):  # (the helper, if any, is called from f as a generator: yield from h(...))
        fn = next((n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name == name), None)
        if fn is None:
            continue
        fn.decorator_list = []
        fn = _Gen().visit(fn)
        fn.body.append(ast.If(ast.Constant(False), [ast.Expr(ast.Yield(None))], []))  # a generator, yields or not
        fns.append(fn)
    mod = ast.fix_missing_locations(ast.Module(fns, []))
    ns: dict = {}
    exec(compile(mod, "<interp>", "exec"), ns)
    return ns["f"]


def _serve(req, s: _S, cpu: int):
    name, *args = req
    v = s.v
    if name == "READ_ONCE":
        return v[args[0]]
    if name == "WRITE_ONCE":
        v[args[0]] = args[1]
        return None
    if name == "this_cpu_read":
        return v[args[0]][cpu]
    if name == "this_cpu_write":
        loc = list(v[args[0]])
        loc[cpu] = args[1]
        v[args[0]] = tuple(loc)
        return None
    if name == "try_cmpxchg":
        var, old, new = args
        if v[var] == old:
            v[var] = new
            return True, old
        return False, v[var]
    if name == "spin_lock":
        if v[args[0]] != NOBODY:
            raise _Disabled
        v[args[0]] = cpu
        return None
    if name == "spin_unlock":
        v[args[0]] = NOBODY
        return None
    raise AssertionError(name)


def _step(gen, pending, s: _S, cpu: int, choices: tuple = ()):
    """One step of ``cpu`` from its pending request (None: not started), taking the values ``choices`` (indexes)
    at its k.choose calls: the request it stops before, or "done"; _Disabled if the step cannot be taken,
    _NeedChoice if it makes more choices than given."""
    made = iter(choices)
    def advance(value):
        try:
            return gen.send(value)
        except StopIteration:
            return "done"

    stepped, depth = False, 0
    req = advance(None) if pending is None else pending
    while req != "done":
        name = req[0]
        if name == "loop":
            if stepped:
                return req
            req = advance(None)
        elif name == "assume":
            if not req[1]:
                raise _Disabled
            req = advance(None)
        elif name == "choose":
            i = next(made, None)
            if i is None:
                raise _NeedChoice(len(req[1]))
            req = advance(req[1][i])
        elif name == "atomic_in":
            if stepped and depth == 0:
                return req
            depth, stepped = depth + 1, True
            req = advance(None)
        elif name == "atomic_out":
            depth -= 1
            req = advance(None)
        else:
            if stepped and depth == 0:
                return req
            result = _serve(req, s, cpu)
            stepped = True
            req = advance(result)
    return "done"


def _replay(fn, schedule: tuple):
    s = _S({"x": 0, "y": 0, "lock": NOBODY, "local": (0, 0), "irqs": (0, 0), "g": 0})
    gens = [fn(None, s, c) for c in (0, 1)]
    pend: list = [None, None]
    for c, choices in schedule:
        pend[c] = _step(gens[c], pend[c], s, c, choices)
    return s, gens, pend


def _where(g) -> tuple:
    """Where a generator is and its int locals, and those of the helper it is inside (``yield from``), if any."""
    out = []
    while g is not None:
        f = g.gi_frame
        out.append((f.f_lasti if f else -1,
                    tuple(sorted((k, v) for k, v in (f.f_locals if f else {}).items() if isinstance(v, int)))))
        g = g.gi_yieldfrom
    return tuple(out)


#: Schedules the direct interpreter replays, at most: past it an example is rejected, not compared (each replay
#: runs the schedule from the start; a function with nested loops and choices can need millions, and hours).
MAX_SCHEDULES = 20_000


class TooLarge(Exception):
    """The example's schedules are past MAX_SCHEDULES."""


def interpreted_states(fn) -> set[tuple]:
    out = set()
    seen = set()
    todo = [()]
    replayed = 0
    while todo:
        sched = todo.pop()
        replayed += 1
        if replayed > MAX_SCHEDULES:
            raise TooLarge
        s, gens, pend = _replay(fn, sched)
        key = (tuple(_flat(s.v[v]) for v in VARS), tuple(p == "done" for p in pend))
        full = (key, tuple((repr(p), _where(g)) for g, p in zip(gens, pend)))
        if full in seen:
            continue
        seen.add(full)
        out.add(key)
        for c in (0, 1):
            if pend[c] == "done":
                continue
            tries = [()]  # the choices of this step, extended as the step asks for more
            while tries:
                choices = tries.pop()
                try:
                    _replay(fn, sched + ((c, choices),))
                except _Disabled:
                    continue
                except _NeedChoice as e:
                    tries += [choices + (i,) for i in range(e.n)]
                    continue
                todo.append(sched + ((c, choices),))
    return out


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(body=bodies(), helper=helpers())
def test_lowered_process_reaches_the_interpreters_states(body, helper):
    cls, src = load(body, helper)
    try:
        expected = interpreted_states(make_function(src))
    except TooLarge:
        reject()
    assert lowered_states(cls) == expected, src


def test_the_interpreter_and_the_lowering_agree_on_an_inlined_helper():
    """A fixed example of a helper with a loop, a label and a return inside: both reach the same states, and the
    helper's steps are f's (the lowering has no call)."""
    helper = "\n".join(["def h(k, s, cpu, a):", "    b = 0", "    a = k.READ_ONCE(s.x)", "    while True:",
                        "        ok, a = k.try_cmpxchg(s.x, a, (a + 1) % 3)", "        if ok:", "            break",
                        "    if a == 2:", "        return 0", '    k.label("here")', "    b = k.READ_ONCE(s.y)",
                        "    return (a + b) % 3"])
    body = "\n".join(["a = 0", "b = 0", "a = h(k, s, cpu, a)", "k.WRITE_ONCE(s.y, a)"])
    cls, src = load(body, helper)
    lowered = lowered_states(cls)
    assert lowered == interpreted_states(make_function(src)), src
    assert len(lowered) > 4


def test_two_choices_in_an_inlined_helper_are_two_arguments():
    """Hypothesis's example: a helper that chooses into one local twice, and a helper with a choice called twice
    in one step. Inlined, the helper's statements sit at the call's line; the two choices were one argument
    there, so x = 0 (the choices differing) was never reached."""
    twice = "\n".join(["def h(k, s, cpu, a):", "    b = 0", "    c = k.choose((0, 2))", "    b = (b + c) % 3",
                       "    c = k.choose((0, 2))", "    b = (b + c) % 3", "    return (a + b) % 3"])
    once = "\n".join(["def h(k, s, cpu, a):", "    c = k.choose((0, 1))", "    return (a + c) % 3"])
    for helper, body in ((twice, ["a = 0", "b = 0", "a = h(k, s, cpu, a)", "k.WRITE_ONCE(s.x, (a + 1) % 3)"]),
                         (once, ["a = 0", "a = h(k, s, cpu, a)", "a = h(k, s, cpu, a)", "k.WRITE_ONCE(s.x, a)"])):
        cls, src = load("\n".join(body), helper)
        lowered = lowered_states(cls)
        assert lowered == interpreted_states(make_function(src)), src
        assert {x for (x, *_), _ in lowered} == {0, 1, 2}


def test_the_interpreter_and_the_lowering_agree_on_a_cmpxchg_loop():
    """A fixed example (the shape of percpu_counter_add_batch's loop), so the comparison is known to bite:
    both reach exactly these 4 projected states (x is 0, 1 or 2; who has returned)."""
    body = "\n".join(["a = 0", "b = 0", "a = k.READ_ONCE(s.x)", "while True:",
                      "    ok, a = k.try_cmpxchg(s.x, a, (a + 1) % 3)", "    if ok:", "        break"])
    cls, src = load(body)
    lowered = lowered_states(cls)
    assert lowered == interpreted_states(make_function(src))
    assert len(lowered) == 4


def test_the_interpreter_and_the_lowering_agree_on_a_choice_after_a_step_and_after_a_label():
    """k.choose joins the step it lies in: after a step, that step makes it; after k.label, the next step does.
    Each CPU writes x = 1, then y = the value chosen (0 or 2): the lowering and the interpreter agree with and
    without the label, and both reach the 8 states of x, y and who has returned (where the choice is made is in
    the registers, which the comparison leaves out)."""
    def states(label: str) -> set:
        body = "\n".join(["a = 0", "b = 0", "k.WRITE_ONCE(s.x, 1)", *([label] if label else []),
                          "c = k.choose((0, 2))", "k.WRITE_ONCE(s.y, c)"])
        cls, src = load(body)
        lowered = lowered_states(cls)
        assert lowered == interpreted_states(make_function(src)), src
        return lowered

    assert states("") == states('k.label("here")')
    assert len(states("")) == 8
