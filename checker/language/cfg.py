# SPDX-License-Identifier: GPL-2.0-only
"""The control-flow graph of a process function, read from its ``ast``, with the refusals of the subset.

A process function (``checker.language.process``) is Python restricted to what lowers to guarded steps:
assignments, ``if``/``else``, ``while`` (its body must take a step on every way round), ``break``,
``continue``, ``return`` (a value only with ``@process(returns=hook)``), ``with k.atomic():``, ``k.label("name")`` (a control point) and calls of
kernel primitives ``k.<name>(...)``
(``checker.language.primitives``), and calls of helpers that are handed ``k``, inlined (below). Everything else is
refused here, with the line and what to write instead: ``for`` (write ``while`` with a step, or
``other = k.any_cpu(s.seen)`` for ``for_each_cpu``), ``try``, nested functions, a helper handed ``k`` inside an
expression, recursion, ``return value``.

An inlinable helper is a kernel function the process function calls (``try_release_thread_stack_to_cache()``),
written in the same subset: ``helper(k, s, t, x)`` or ``y = helper(k, s, t, x)`` as a statement of its own, the
helper a module-level function, or ``s.spec.helper(k, s, t, x)``, a static method of the spec, which a subclass (a
bug spec) may redefine. Its body is lowered in place of the call: its steps are the caller's steps, named by the
call's line; its parameters are the arguments (a name or a constant the helper never assigns is substituted,
anything else is a local of the caller, ``<helper>_<parameter>``, as are the helper's own locals); its ``return``
goes to the statement after the call (ending the step there if it lies in the helper's ``with k.atomic():``),
``return value`` assigns the call's target. A helper called inside ``with k.atomic():`` is part of that one step:
its ``k.label()`` names no control point there.

The graph's nodes: ``local`` (a statement without a primitive), ``prim`` (a statement calling one
primitive), ``branch`` (an ``if`` or a ``while`` head: its test and both successors), ``atomic_in`` and
``atomic_out`` (the edges of a ``with k.atomic():`` block) and ``exit``. Liveness of the function's locals
is computed on it (``live``): a local live where a step ends is kept in a register, a dead one is reset.
"""
from __future__ import annotations

import ast
import copy
import difflib
from dataclasses import dataclass, field
from typing import Any, Callable

from checker.errors import SpecError
from checker.language.primitives import PRIMITIVES

#: Calls on ``k`` that are not steps: assume(cond) (a guard), any_cpu(s.var) (a chosen CPU), choose(values) (a
#: value chosen in the step, every one tried), update(updates) (a plain helper's updates, ``{name: value or
#: {slot: value}}``, written in the step); label("name") (a statement: a control point, named);
#: raw_smp_processor_id() (the CPU the step runs on: a read of no shared memory, so it joins the step it lies in).
LOCAL_CALLS = ("assume", "any_cpu", "choose", "update", "label", "raw_smp_processor_id")
#: Calls on ``k`` that are steps besides the table's: data_race(s.x) or data_race(k.per_cpu(...)); and a wrapper
#: of one primitive's load, address_dep(s.p, k.per_cpu(s.x, cpu)): its address comes from this CPU's last load of
#: the word ``p`` (``*per_cpu_ptr(pcpu_v, cpu)`` with pcpu_v read from ``c->v``), an address dependency.
STEP_CALLS = ("data_race", "address_dep")
#: The name a ``return value`` hands its value to in generated step code: the process's ``returns`` hook.
RETURNS = "__returns"


@dataclass
class Node:
    """One node of the graph."""

    kind: str  # local, prim, branch, atomic_in, atomic_out, exit
    line: int
    stmt: ast.AST | None = None  # the statement (local, prim) or the test (branch)
    next: int | None = None
    other: int | None = None  # branch: where a false test goes
    loop: bool = False  # branch: the head of a while loop
    prim: str | None = None  # prim: the primitive's name
    uses: frozenset[str] = frozenset()
    defs: frozenset[str] = frozenset()
    #: prim: a context-only primitive that is no step of its own: "next" joins the step after it, "prev" the one
    #: before (``Primitive.joins``); None: a step
    joins: str | None = None


@dataclass
class Graph:
    """A process function's graph: its nodes, entry, locals and their liveness."""

    name: str
    file: str | None
    def_line: int
    params: tuple[str, ...]  # k, s, the CPU, then the arguments
    nodes: list[Node] = field(default_factory=list)
    entry: int = 0
    locals: tuple[str, ...] = ()
    live: dict[int, frozenset[str]] = field(default_factory=dict)  # live on entry to each node
    returns_line: int | None = None  # the first `return value`, which needs @process(returns=...)
    helpers: tuple[str, ...] = ()  # the helpers inlined into it
    extra: dict[str, Any] = field(default_factory=dict)  # globals its inlined helpers name, renamed

    @property
    def k(self) -> str:
        return self.params[0]

    @property
    def s(self) -> str:
        return self.params[1]

    @property
    def cpu(self) -> str:
        return self.params[2]

    @property
    def args(self) -> tuple[str, ...]:
        return self.params[3:]


#: What finds an inlinable helper: given a call handed ``k``, the helper's name, its ``def`` (lines as in its file),
#: file and module globals, or None where the call names no helper it can read.
Resolve = Callable[[ast.Call], "tuple[str, ast.FunctionDef, str | None, dict[str, Any]] | None"]


@dataclass
class _Inlining:
    """A helper being inlined: where its ``return`` goes, what ``return value`` assigns, the call's line."""

    name: str
    after: int
    target: ast.expr | None
    line: int
    atomic: int  # the depth of `with k.atomic():` at the call: a return inside a deeper one leaves those blocks


class _Builder:
    def __init__(self, fn: ast.FunctionDef, file: str | None, name: str, others: frozenset[str],
                 resolve: Resolve | None = None, scope: dict[str, Any] | None = None):
        self.fn = fn
        self.file = file
        self.name = name
        self.others = others  # the names of process functions: calling one is refused
        self.resolve = resolve
        self.inlining: list[_Inlining] = []
        self.helpers: dict[str, None] = {}  # the helpers inlined, in order
        self.scope = scope or {}  # the process function's module globals, where its step code runs
        self.extra: dict[str, Any] = {}  # a helper's module globals it names, under names of their own
        params = [a.arg for a in fn.args.args]
        if len(params) < 3 or fn.args.vararg or fn.args.kwarg or fn.args.kwonlyargs:
            raise self.err(fn, f"a process function takes (k, s, cpu, *arguments): k the kernel primitives, s the "
                               f"state, cpu the CPU (or task) running it, then its arguments; it takes {params}",
                           "def percpu_counter_add_batch(k, s, t, amount):")
        self.g = Graph(name, file, fn.lineno, tuple(params))

    # -- errors ---------------------------------------------------------------------------------------------
    def err(self, node: ast.AST, what: str, instead: str = "") -> SpecError:
        msg = f"process function {self.name}: {what}"
        if instead:
            msg += f"; write instead: {instead}"
        return SpecError(msg, file=self.file, line=getattr(node, "lineno", None))

    def add(self, node: Node) -> int:
        self.g.nodes.append(node)
        return len(self.g.nodes) - 1

    # -- statements -------------------------------------------------------------------------------------------
    def seq(self, stmts: list[ast.stmt], nxt: int, brk: int | None, cont: int | None, atomic: int) -> int:
        for st in reversed(stmts):
            nxt = self.one(st, nxt, brk, cont, atomic)
        return nxt

    def one(self, st: ast.stmt, nxt: int, brk: int | None, cont: int | None, atomic: int) -> int:
        if isinstance(st, ast.If):
            then = self.seq(st.body, nxt, brk, cont, atomic)
            other = self.seq(st.orelse, nxt, brk, cont, atomic)
            self.check_expr(st.test)
            return self.add(Node("branch", st.lineno, st.test, then, other, uses=self.names(st.test)))
        if isinstance(st, ast.While):
            if st.orelse:
                raise self.err(st, "while ... else is not lowered", "a flag, or the code after the loop")
            if atomic:
                raise self.err(st, "a loop inside `with k.atomic():` would be one step of unbounded length",
                               "the loop outside the atomic block, its body's steps inside one")
            self.check_expr(st.test)
            head = self.add(Node("branch", st.lineno, st.test, None, nxt, loop=True, uses=self.names(st.test)))
            self.g.nodes[head].next = self.seq(st.body, head, nxt, head, atomic)
            return head
        if isinstance(st, ast.With):
            if not (len(st.items) == 1 and self.is_k_call(st.items[0].context_expr, "atomic")
                    and st.items[0].optional_vars is None):
                raise self.err(st, "the only `with` a process function takes is `with k.atomic():`",
                               f"with {self.g.k}.atomic():")
            out = self.add(Node("atomic_out", st.lineno, next=nxt))
            body = self.seq(st.body, out, None, None, atomic + 1)
            return self.add(Node("atomic_in", st.lineno, next=body))
        if isinstance(st, ast.Return) and self.inlining:
            inl = self.inlining[-1]
            after = inl.after
            for _ in range(atomic - inl.atomic):  # a return inside the helper's atomic block ends that step there
                after = self.add(Node("atomic_out", st.lineno, next=after))
            if st.value is None:
                return after
            keep = ast.Assign([inl.target], st.value) if inl.target is not None else ast.Expr(st.value)
            return self.statement(_at_line(keep, inl.line), after, atomic)
        if isinstance(st, ast.Return):
            end = self.add(Node("exit", st.lineno))
            if st.value is None:
                return end
            # `return value`: the value is handed to the function's observer, @process(returns=hook), whose
            # updates (ghosts judging it) are written in the step that returns: `k.update(__returns(s, cpu, value))`
            self.g.returns_line = self.g.returns_line or st.lineno
            k, s, cpu = (ast.Name(x, ast.Load()) for x in (self.g.k, self.g.s, self.g.cpu))
            hand = ast.Expr(ast.Call(ast.Attribute(k, "update", ast.Load()), [
                ast.Call(ast.Name(RETURNS, ast.Load()), [s, cpu, st.value], [])], []))
            ast.fix_missing_locations(ast.copy_location(hand, st))
            for n in ast.walk(hand):
                n.lineno, n.end_lineno = st.lineno, getattr(st, "end_lineno", st.lineno)
            return self.statement(hand, end, atomic)
        if isinstance(st, (ast.Break, ast.Continue)):
            target = brk if isinstance(st, ast.Break) else cont
            if target is None:
                raise self.err(st, f"`{'break' if isinstance(st, ast.Break) else 'continue'}` inside "
                                   f"`with k.atomic():` would leave the step in its middle",
                               "end the atomic block first")
            return target
        if isinstance(st, ast.Pass):
            return nxt
        if isinstance(st, ast.Expr) and self.is_k_call(st.value, "label"):
            # a control point here, named: PlusCal's label, where a choice or a branch after a step must wait
            # for the next step rather than be decided by the one before
            c = st.value
            if atomic and self.inlining and self.inlining[-1].atomic:
                return nxt  # a helper called inside one step: its control points are none
            if atomic:
                raise self.err(st, f"{self.g.k}.label() inside `with {self.g.k}.atomic():` would split the step",
                               "the label before the atomic block")
            if c.keywords or len(c.args) != 1 or not isinstance(c.args[0], ast.Constant) \
                    or not isinstance(c.args[0].value, str) or not c.args[0].value.isidentifier():
                raise self.err(st, f"{self.g.k}.label() takes one name, a string", f'{self.g.k}.label("dead")')
            return self.add(Node("branch", st.lineno, ast.Constant(True), nxt, None, loop=True, prim=c.args[0].value))
        helper = self.helper_call(st)
        if helper is not None:
            return self.inline(st, *helper, nxt, atomic)
        if isinstance(st, (ast.Expr, ast.Assign, ast.AugAssign, ast.AnnAssign)):
            if isinstance(st, ast.Expr) and isinstance(st.value, ast.Constant) and isinstance(st.value.value, str):
                return nxt  # a docstring
            if isinstance(st, ast.AnnAssign) and st.value is None:
                return nxt  # a declaration: `count: int`
            return self.statement(st, nxt, atomic)
        if isinstance(st, (ast.For, ast.AsyncFor)):
            raise self.err(st, "a `for` loop is not lowered (a loop over state has no fixed length, and each "
                               "iteration must be a step)",
                           f"`while cond:` with a step in its body; for for_each_cpu: "
                           f"`while ...: other = {self.g.k}.any_cpu(s.visited)`")
        what = type(st).__name__.lower()
        raise self.err(st, f"`{what}` is not part of the process-function subset (assignments, if, while, break, "
                           f"continue, return, with {self.g.k}.atomic(), {self.g.k}.<primitive>(...))",
                       "a helper function without steps, called from an expression")

    # -- inlinable helpers --------------------------------------------------------------------------------------
    def helper_call(self, st: ast.stmt) -> tuple[ast.Call, ast.expr | None] | None:
        """The call of a helper handed ``k`` that ``st`` is (``helper(k, ...)`` or ``x = helper(k, ...)``)."""
        if isinstance(st, ast.Expr):
            call, target = st.value, None
        elif isinstance(st, ast.Assign) and len(st.targets) == 1:
            call, target = st.value, st.targets[0]
        else:
            return None
        if not (isinstance(call, ast.Call) and call.args and isinstance(call.args[0], ast.Name)
                and call.args[0].id == self.g.k and self.k_name(call) is None):
            return None
        return call, target

    def inline(self, st: ast.stmt, call: ast.Call, target: ast.expr | None, nxt: int, atomic: int) -> int:
        self.check_call(call)  # (a process function called, or itself: refused as such)
        found = self.resolve(call) if self.resolve is not None else None
        if found is None:
            raise self.err(call, f"`{self.g.k}` is handed to {ast.unparse(call.func)}(), which is not a helper "
                                 f"that can be inlined (a module-level function, or s.spec.<static method>, whose "
                                 f"source can be read)", "a helper defined in the spec's file, or its steps written here")
        name, fn, file, where = found
        if name == self.name or name in self.others or any(i.name == name for i in self.inlining):
            raise self.err(call, f"{name}() calls itself through its helpers, or is a process function: recursion "
                                 f"is not inlined", "the loop written as a `while` with a step")
        params = [a.arg for a in fn.args.args]
        if fn.args.vararg or fn.args.kwarg or fn.args.kwonlyargs or fn.args.defaults or call.keywords \
                or len(params) != len(call.args):
            raise self.err(call, f"{name}() takes {len(params)} positional arguments ({', '.join(params)}), "
                                 f"given {len(call.args)}{' and keywords' if call.keywords else ''}; a helper is "
                                 f"inlined with its arguments by position, without defaults",
                           f"{name}({', '.join(params)})")
        if target is not None:  # its value is assigned: every way through it returns one, as C's would
            bare = next((r for r in ast.walk(fn) if isinstance(r, ast.Return) and r.value is None), None)
            if bare is not None or not _always_returns(fn.body):
                raise self.err(call, f"the value of {name}() is assigned, and {name}() "
                                     f"{'returns none at its line ' + str(bare.lineno) if bare else 'can end without returning one'}",
                               f"`return value` on every way through {name}(), or the call as a statement of its own")
        assigned = {n.id for n in ast.walk(fn) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
        rename: dict[str, ast.expr] = {}
        bind = []
        for p, a in zip(params, call.args):
            if p not in assigned and (isinstance(a, ast.Constant) or (isinstance(a, ast.Name) and (
                    a.id not in assigned or a.id in (self.g.k, self.g.s, self.g.cpu)))):
                rename[p] = a  # substituted: the helper never assigns it
            else:
                rename[p] = ast.Name(f"{name}_{p}", ast.Load())
                bind.append(_at_line(ast.Assign([ast.Name(f"{name}_{p}", ast.Store())], a), call.lineno))
        for n in assigned - set(params):
            rename[n] = ast.Name(f"{name}_{n}", ast.Load())
        # a name of the helper's module (a constant, a plain helper) runs in the caller's: kept under a name of its
        # own where the caller's module means something else by it
        for n in {x.id for x in ast.walk(fn) if isinstance(x, ast.Name)} - set(rename) - {fn.name}:
            if n in where and (n not in self.scope or self.scope[n] is not where[n]):
                rename[n] = ast.Name(f"__{name}_{n}", ast.Load())
                self.extra[f"__{name}_{n}"] = where[n]
        body = [_at_line(_Renamed(rename).visit(copy.deepcopy(s)), call.lineno) for s in fn.body]
        self.helpers[name] = None
        self.inlining.append(_Inlining(name, nxt, target, call.lineno, atomic))
        try:
            entry = self.seq(body, nxt, None, None, atomic)
        finally:
            self.inlining.pop()
        return self.seq(bind, entry, None, None, atomic)

    def statement(self, st: ast.stmt, nxt: int, atomic: int) -> int:
        calls = [c for c in ast.walk(st) if isinstance(c, ast.Call)]
        prims = []
        for c in calls:
            self.check_call(c)
            name = self.k_name(c)
            if name is not None and name not in LOCAL_CALLS and not (
                    name == "data_race" and c.args and self.k_name(c.args[0]) is not None) and not (
                    name == "address_dep"):
                prims.append((name, c))
        for n in ast.walk(st):  # `k` used other than to call a primitive
            if isinstance(n, ast.Name) and n.id == self.g.k and not any(
                    isinstance(c.func, ast.Attribute) and c.func.value is n for c in calls):
                raise self.err(n, f"`{self.g.k}` is passed or stored inside an expression: a helper that takes "
                                  f"steps would hide them",
                               f"the call as a statement of its own (`helper({self.g.k}, ...)` or `x = helper("
                               f"{self.g.k}, ...)`: inlined), or a helper without steps (a plain function of values)")
        targets = st.targets if isinstance(st, ast.Assign) else [st.target] if isinstance(
            st, (ast.AugAssign, ast.AnnAssign)) else []
        defs = frozenset(n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)
                         and isinstance(n.ctx, ast.Store))
        uses = self.names(st)  # loads only: `ok, a = k.try_cmpxchg(s.x, a, ...)` uses a, then defines it
        if isinstance(st, ast.AugAssign) and isinstance(st.target, ast.Name):
            uses |= {st.target.id}
        for t in targets:
            for n in ast.walk(t):
                if isinstance(n, (ast.Starred, ast.List)):
                    raise self.err(t, "only names, tuples of names and s.<variable>[...] are assigned",
                                   "ok, count = ...")
        if len(prims) > 1 and not atomic:
            raise self.err(st, f"one statement calls {len(prims)} primitives ({', '.join(p for p, _ in prims)}); "
                               f"each is a step of its own", f"one call per statement, or `with {self.g.k}.atomic():`"
                                                             f" around them if the kernel makes them one step")
        if prims:
            name = prims[0][0]
            joins = PRIMITIVES[name].joins if name in PRIMITIVES and not atomic else None
            return self.add(Node("prim", st.lineno, st, nxt, prim=name, uses=uses, defs=defs, joins=joins))
        return self.add(Node("local", st.lineno, st, nxt, uses=uses, defs=defs))

    # -- expressions ------------------------------------------------------------------------------------------
    def k_name(self, c: ast.AST) -> str | None:
        if isinstance(c, ast.Call) and isinstance(c.func, ast.Attribute) and isinstance(c.func.value, ast.Name) \
                and c.func.value.id == self.g.k:
            return c.func.attr
        return None

    def is_k_call(self, c: ast.AST, name: str) -> bool:
        return self.k_name(c) == name

    def check_call(self, c: ast.Call) -> None:
        name = self.k_name(c)
        if name is None:
            if isinstance(c.func, ast.Name) and (c.func.id == self.name or c.func.id in self.others):
                raise self.err(c, f"{c.func.id}() is a process function: a call of one (or recursion) is not "
                                  f"inlined", "its steps written out here")
            return
        if name == "atomic":
            raise self.err(c, f"{self.g.k}.atomic() is a block", f"with {self.g.k}.atomic():")
        if name == "label":
            raise self.err(c, f"{self.g.k}.label() is a statement of its own", f'{self.g.k}.label("dead") on its line')
        if name not in PRIMITIVES and name not in LOCAL_CALLS and name not in STEP_CALLS:
            close = difflib.get_close_matches(name, list(PRIMITIVES) + list(LOCAL_CALLS) + list(STEP_CALLS), 3)
            raise self.err(c, f"{self.g.k}.{name}() is not a kernel primitive of the table "
                              f"(checker/language/primitives.py)",
                           ", ".join(f"{self.g.k}.{n}(...)" for n in close) if close else
                           "a primitive of the table, or a plain helper of values")
        if c.keywords:
            raise self.err(c, f"{self.g.k}.{name}() takes its arguments by position, in C's order")
        if name == "address_dep" and not (len(c.args) == 2 and self.k_name(c.args[1]) in PRIMITIVES
                                          and any(k == "load" for k, _ in PRIMITIVES[self.k_name(c.args[1])].access)):
            raise self.err(c, f"{self.g.k}.address_dep() takes the word the address was read from and one load "
                              f"through it", f"{self.g.k}.address_dep({self.g.s}.c_v, {self.g.k}.per_cpu({self.g.s}.slot, "
                                             f"cpu))")
        pos = var_position(name)
        if pos is not None:
            first = c.args[pos] if len(c.args) > pos else None
            inner = name == "data_race" and first is not None and self.k_name(first) is not None
            # the memory: s.v, or one element s.v[i] of an Array (atomic_long_add_return(inc, &item[i]))
            if not inner and not self.state_var(first) and not (
                    isinstance(first, ast.Subscript) and self.state_var(first.value) and name in PRIMITIVES
                    and PRIMITIVES[name].slot == "shared"):
                raise self.err(c, f"argument {pos + 1} of {self.g.k}.{name}() is the memory it works on, a spec "
                                  f"variable (or an element of one)", f"{self.g.k}.{name}({self.g.s}.local, ...)")
        want = PRIMITIVES[name].args if name in PRIMITIVES else ("var",) if name in ("any_cpu", "data_race") \
            else ("word", "load") if name == "address_dep" else ("values",) if name == "choose" \
            else () if name == "raw_smp_processor_id" else ("cond",)
        if len(c.args) != len(want):
            raise self.err(c, f"{self.g.k}.{name}() takes {len(want)} argument(s) ({', '.join(want) or 'none'}), "
                              f"given {len(c.args)}")

    def state_var(self, e: ast.AST | None) -> bool:
        return isinstance(e, ast.Attribute) and isinstance(e.value, ast.Name) and e.value.id == self.g.s

    def check_expr(self, e: ast.AST) -> None:
        for c in ast.walk(e):
            if isinstance(c, ast.Call):
                self.check_call(c)
                if self.k_name(c) not in (None,):
                    raise self.err(c, "a primitive in an `if`/`while` test: the test is not a step",
                                   f"x = {self.g.k}.{self.k_name(c)}(...) before it, then `if x ...`")

    def names(self, node: ast.AST) -> frozenset[str]:
        return frozenset(n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load))

    # -- the whole function -----------------------------------------------------------------------------------
    def build(self) -> Graph:
        g = self.g
        end = self.add(Node("exit", getattr(self.fn, "end_lineno", self.fn.lineno) or self.fn.lineno))
        g.entry = self.seq(self.fn.body, end, None, None, 0)
        assigned = {n for node in g.nodes for n in node.defs}
        for n in ast.walk(self.fn):
            if isinstance(n, (ast.Lambda, ast.GeneratorExp, ast.ListComp, ast.SetComp, ast.DictComp)):
                continue
            if isinstance(n, (ast.Global, ast.Nonlocal, ast.Yield, ast.YieldFrom, ast.Await)):
                raise self.err(n, f"`{type(n).__name__.lower()}` is not part of the process-function subset")
        for a in (g.k, g.s, g.cpu):
            if a in assigned:
                raise self.err(self.fn, f"{a} is assigned: it is the {('primitives', 'state', 'CPU')[g.params.index(a)]}")
        g.locals = tuple(dict.fromkeys([*g.args, *sorted(assigned)]))
        self.liveness()
        return g

    def liveness(self) -> None:
        g = self.g
        local = set(g.locals)
        live = {i: frozenset() for i in range(len(g.nodes))}
        changed = True
        while changed:
            changed = False
            for i in reversed(range(len(g.nodes))):
                n = g.nodes[i]
                out = frozenset()
                for succ in (n.next, n.other):
                    if succ is not None:
                        out |= live[succ]
                new = frozenset(((out - n.defs) | n.uses) & local)
                if new != live[i]:
                    live[i] = new
                    changed = True
        g.live = live


def var_position(name: str) -> int | None:
    """Where the memory a primitive works on is among its arguments, in C's order (``atomic_add(i, v)``: 1)."""
    if name in ("any_cpu", "data_race", "address_dep"):
        return 0
    args = PRIMITIVES[name].args if name in PRIMITIVES else ()
    return args.index("var") if "var" in args else None


def _always_returns(stmts: list[ast.stmt]) -> bool:
    """Every way through ``stmts`` ends in a ``return`` (its last statement one, or an ``if`` whose arms both do)."""
    if not stmts:
        return False
    last = stmts[-1]
    if isinstance(last, ast.Return):
        return True
    if isinstance(last, ast.If):
        return _always_returns(last.body) and _always_returns(last.orelse)
    if isinstance(last, ast.With):
        return _always_returns(last.body)
    return isinstance(last, ast.While) and isinstance(last.test, ast.Constant) and last.test.value is True \
        and not any(isinstance(n, ast.Break) for n in ast.walk(last))


class _Renamed(ast.NodeTransformer):
    """A helper's body with its parameters replaced by the arguments and its locals renamed."""

    def __init__(self, names: dict[str, ast.expr]):
        self.names = names

    def visit_Name(self, n: ast.Name) -> ast.expr:
        new = self.names.get(n.id)
        if new is None:
            return n
        if isinstance(n.ctx, ast.Store):
            return ast.copy_location(ast.Name(new.id, ast.Store()), n)  # (only a renamed local is assigned)
        return ast.copy_location(copy.deepcopy(new), n)


def _at_line(node: ast.AST, line: int) -> Any:
    """``node`` with every position at ``line``: an inlined helper's steps are named by the line of its call."""
    for n in ast.walk(node):
        if "lineno" in n._attributes:
            n.lineno = n.end_lineno = line
            n.col_offset = getattr(n, "col_offset", 0) or 0
            n.end_col_offset = getattr(n, "end_col_offset", 0) or 0
    return node


def build(fn: ast.FunctionDef, file: str | None, name: str, others: frozenset[str] = frozenset(),
          resolve: Resolve | None = None, scope: dict[str, Any] | None = None) -> Graph:
    """The graph of the process function ``fn`` (its ``def``), or a SpecError naming what it cannot take;
    ``resolve`` finds the helpers it inlines (their names: the graph's ``helpers``), ``scope`` is the globals its
    step code runs in (what a helper's module means by a name it shares goes to the graph's ``extra``)."""
    b = _Builder(fn, file, name, others, resolve, scope)
    g = b.build()
    g.helpers, g.extra = tuple(b.helpers), b.extra
    return g
