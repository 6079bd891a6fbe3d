# SPDX-License-Identifier: GPL-2.0-only
"""Lower a parsed litmus test to a spec class: one CPU per thread, one action per statement.

The spec (``lower(test)``) has

- one ``Role(1)`` per thread ``Pn`` (role ``pn``: CPU n), and a program counter ``pn_pc`` whose values name
  the statement's line (``L17``, ..., ``done``);
- each shared location as a ``Shared`` variable of the same name (a ``spinlock_t`` as a ``Lock()``; a
  location holding a pointer is typed with the ``PTR`` enum of the test's locations, so traces print
  ``p: y -> x``); a register ``r0`` of ``Pn`` as the ghost ``pn_r0``;
- one action per statement, a kernel step with its ``access=`` in program order, named
  ``pn_<line>_<what>`` (``p1_24_READ_ONCE``), whose docstring is the statement as written;
- ``@terminal``: every thread has run to its end, and two ``sometimes``: ``exists_clause`` (a final
  state, passing the ``filter``, that satisfies the condition: reached is herd's "Sometimes", never
  reached after an exhaustive search "Never") and ``exists_clause_fails`` (a final state that does not:
  never reached with the first reached is "Always"). ``exists_clause`` is expected as LKMM's stated
  ``Result:``, so ``verify`` of a lowered test says whether ours agrees.

A statement makes all of its shared accesses in one atomic step (``*z2 = *z1`` is one plain load and one
plain store); an ``if`` is a step of its own, branching on registers or on the loads in its condition.
A dereference through a register (``READ_ONCE(*r0)``, an address dependency) becomes one action per
location the register may point to, each guarded on the register's value and annotated with that
location (``Load(loc, "once", dep=True)``): annotations are static, addresses are not. A register
holding no location's address blocks its thread there, which the search reports as a deadlock.

Locks carry no ``access=``: the models give ``Lock()`` its meaning (taking it an acquire, releasing it a
release); ``spin_lock()`` is enabled only while the lock is free, so mutual exclusion is sequentially
consistent under every model. A lock that some ``spin_is_locked()`` reads also gets a lock word, a weak
``Shared`` (tools/memory-model/lock.cat: an is-locked read reads from a lock's LKW or an unlock's UL):
``spin_lock()`` writes 1 to it with an unordered read-modify-write (LKW), ``spin_unlock()`` 0 with a
release (UL), and ``spin_is_locked()`` is a ``READ_ONCE()`` of it, which may be stale. ``dep=True`` marks a load
through a register (the API's "address from this CPU's previous annotated load"), which is exact for the
kernel's tests (the register is the previous load's value); a store through a register has no such mark
(the API has none). A control dependency (``if (r0) WRITE_ONCE(...)``) has no annotation either: the branch
is a step on registers, and ordering it is the model's (lkmm's promises do not let a store that depends
on a load pass it: ``checker.ordering.promises``).

Not lowered (``Unsupported``, a named outcome rather than a verdict): RCU grace periods
(``synchronize_rcu()``, SRCU, ``call_rcu()``), which no memory model here expresses, and a load on the
right of ``&&``/``||`` (C would skip it; a step here makes every access of its statement).
``rcu_read_lock()``/``rcu_read_unlock()`` and ``barrier()`` are steps that order nothing: without a
grace period in the test, LKMM gives them no cross-CPU ordering either.
"""
from __future__ import annotations

import dataclasses
import itertools
import keyword
from dataclasses import dataclass, field
from typing import Any, Callable

from checker.errors import SpecError
from checker.expr import AllOf, And, If, Not, Or
from checker.litmus import parse as P
from checker.language.primitives import FENCES, LOADS, RMWS, STORES, RmwOp  # noqa: F401 (RmwOp: re-exported)
from checker.ordering.annotations import Fence, Load, Rmw, Store
from checker.ordering.install import settled
from checker.language.declare import Ghost, Lock, Role, Shared, action, sometimes, terminal, when
from checker.language.model import Spec
from checker.types import NOBODY, Enum, Int


class Unsupported(SpecError):
    """A construct the parser reads but no model here can run: the test's outcome is "not modelled"."""


#: Steps that order nothing for other CPUs in the tests read here (no grace period, no compiler to fool).
NOOPS = {"rcu_read_lock": "an RCU read-side critical section begins: without a grace period in the test "
                          "it orders nothing",
         "rcu_read_unlock": "the RCU read-side critical section ends",
         "barrier": "a compiler barrier: each statement is already one step in program order"}
UNSUPPORTED = {n: "RCU grace periods: no memory model here (sc, tso, lkmm) expresses synchronize_rcu() or "
                  "SRCU, so the test's outcome is not modelled"
               for n in ("synchronize_rcu", "synchronize_rcu_expedited", "call_rcu", "rcu_barrier",
                         "synchronize_srcu", "synchronize_srcu_expedited", "srcu_read_lock", "srcu_read_unlock",
                         "srcu_dereference", "srcu_down_read", "srcu_up_read")}
LOCKS = ("spin_lock", "spin_unlock", "spin_trylock", "spin_is_locked")

#: Every call this lowering knows, for "unknown call" errors.
KNOWN = sorted(set(LOADS) | set(STORES) | set(FENCES) | set(NOOPS) | set(LOCKS) | set(RMWS))


def _rmw_name_hint(name: str) -> str:
    close = [k for k in KNOWN if k.split("_")[0:2] == name.split("_")[0:2]][:8]
    return f" (did you mean {', '.join(close)}?)" if close else ""


# ---- the test's names ------------------------------------------------------------------------------------

@dataclass
class Loc:
    """A shared location of a litmus test, as the spec variable that models it."""
    name: str  # as the test writes it
    attr: str  # the spec variable
    kind: str  # "int", "ptr", "lock"
    init: int | str  # an int or a location's name (its address)
    line: int


@dataclass
class Layout:
    """Where every name of the test lives in the spec."""
    test: P.Litmus
    locs: dict[str, Loc] = field(default_factory=dict)
    regs: dict[tuple[int, str], tuple[str, bool]] = field(default_factory=dict)  # (thread, reg) -> (attr, ptr)
    reg_init: dict[tuple[int, str], int | str] = field(default_factory=dict)
    params: dict[int, set[str]] = field(default_factory=dict)
    #: lock name -> the spec variable of its lock word, for the locks some spin_is_locked() reads
    words: dict[str, str] = field(default_factory=dict)

    @property
    def pointees(self) -> list[str]:
        """The locations a pointer may hold, in declaration order (locks are not pointed at here)."""
        return [n for n, l in self.locs.items() if l.kind != "lock"]

    def ptr_enum(self) -> Enum:
        return Enum("NULL", *self.pointees, name="ptr")

    def addr(self, name: str, line: int) -> int:
        if name not in self.locs or self.locs[name].kind == "lock":
            raise self.error(f"{name} is not a location of the test (its locations: "
                             f"{', '.join(self.pointees) or 'none'})", line)
        return 1 + self.pointees.index(name)

    def error(self, message: str, line: int | None) -> SpecError:
        return SpecError(message, file=self.test.file, line=line)


_RESERVED = {"spec", "name", "kernel", "assumptions", "params", "ncpus", "cpu", "done", "exists_clause",
             "exists_clause_fails"}


def _attr(name: str, taken: set[str]) -> str:
    a = name if name.isidentifier() and not keyword.iskeyword(name) and not name.startswith("_") else f"v_{name}"
    while a in taken or a in _RESERVED or hasattr(Spec, a):
        a = f"{a}_"
    taken.add(a)
    return a


def _observed_locks(node: Any, out: set[str]) -> None:
    """The names spin_is_locked() is called on, anywhere under ``node``."""
    if isinstance(node, P.Call) and node.fn == "spin_is_locked" and len(node.args) == 1:
        a = node.args[0]
        if isinstance(a, (P.Name, P.AddrOf)):
            out.add(a.name)
    if isinstance(node, (tuple, list)):
        for x in node:
            _observed_locks(x, out)
    elif dataclasses.is_dataclass(node):
        for f in dataclasses.fields(node):
            _observed_locks(getattr(node, f.name), out)


def _layout(test: P.Litmus) -> Layout:
    lay = Layout(test)
    taken: set[str] = set()
    for t in test.threads:
        taken |= {f"p{t.index}", f"p{t.index}_pc"}
    kinds: dict[str, tuple[str, int]] = {}

    def note(name: str, kind: str, line: int) -> None:
        old = kinds.get(name)
        if old is not None and old[0] != kind and "int" not in (old[0], kind):
            raise lay.error(f"{name} is declared a {old[0]} (line {old[1]}) and a {kind} here", line)
        if old is None or old[0] == "int":
            kinds[name] = (kind, line)

    inits: dict[str, tuple[int | str, int]] = {}
    for item in test.init:
        if item.thread is not None:
            lay.reg_init[(item.thread, item.name)] = item.value if item.value is not None else 0
            continue
        kind = "lock" if item.type == "spinlock_t" else "ptr" if item.pointer or isinstance(item.value, str) \
            else "int"
        note(item.name, kind, item.line)
        if item.value is not None:
            inits[item.name] = (item.value, item.line)
    for t in test.threads:
        lay.params[t.index] = {p.name for p in t.params}
        for p in t.params:
            kind = "lock" if p.type == "spinlock_t" else "ptr" if p.stars >= 2 else "int"
            if p.stars > 2:
                raise lay.error(f"P{t.index}'s parameter {p.name}: at most two '*' (a pointer to a pointer)", p.line)
            note(p.name, kind, p.line)
    for name, (kind, line) in kinds.items():
        init, iline = inits.get(name, (0, line))
        if kind == "lock" and init != 0:
            raise lay.error(f"{name} is a spinlock_t: it starts unlocked, write 'spinlock_t {name};'", iline)
        lay.locs[name] = Loc(name, _attr(name, taken), kind, init, line)
    for loc in lay.locs.values():
        if isinstance(loc.init, str):
            lay.addr(loc.init, loc.line)  # a pointer to a location that exists
    for t in test.threads:
        for reg, ptr, line in _declared(t):
            if (t.index, reg) in lay.regs:
                raise lay.error(f"P{t.index} declares {reg} twice", line)
            if reg in lay.params[t.index]:
                raise lay.error(f"P{t.index}'s register {reg} has the name of its parameter", line)
            lay.regs[(t.index, reg)] = (_attr(f"p{t.index}_{reg}", taken), ptr)
    for (ti, reg), v in lay.reg_init.items():
        if (ti, reg) not in lay.regs:  # herd: a register set in the init block needs no declaration
            lay.regs[(ti, reg)] = (_attr(f"p{ti}_{reg}", taken), isinstance(v, str))
    observed: set[str] = set()
    _observed_locks(test.threads, observed)
    for name in sorted(observed):
        if name in lay.locs and lay.locs[name].kind == "lock":
            lay.words[name] = _attr(f"{name}_word", taken)
    return lay


def _declared(t: P.Thread) -> list[tuple[str, bool, int]]:
    out: list[tuple[str, bool, int]] = []

    def walk(stmts: tuple[P.Stmt, ...]) -> None:
        for st in stmts:
            if isinstance(st, P.Decl):
                out.append((st.name, st.pointer, st.line))
            elif isinstance(st, P.If):
                walk(st.then)
                walk(st.orelse)

    walk(t.body)
    return out


# ---- statements ------------------------------------------------------------------------------------------

class _Zero:
    """A state whose every variable is 0: running a statement on it collects its accesses."""

    def __getattr__(self, name: str) -> int:
        return 0


@dataclass
class _Ctx:
    """One run of one statement: on the real state (a step) or on ``_Zero`` (to list its accesses)."""
    lay: Layout
    thread: int
    s: Any
    cpu: int
    choice: dict[str, str]  # register -> the location this variant of the action dereferences
    accesses: list = field(default_factory=list)
    guards: list = field(default_factory=list)
    updates: dict[str, Any] = field(default_factory=dict)
    last_load: bool = False  # the previous access of this statement was a load (for dep=)

    def read(self, attr: str) -> Any:
        return self.updates[attr] if attr in self.updates else getattr(self.s, attr)


class _Lowerer:
    def __init__(self, lay: Layout, thread: P.Thread):
        self.lay = lay
        self.t = thread
        self.file = lay.test.file

    def err(self, message: str, line: int, cls: type[SpecError] = SpecError) -> SpecError:
        return cls(message, file=self.file, line=line)

    # -- names
    def reg(self, name: str) -> tuple[str, bool] | None:
        return self.lay.regs.get((self.t.index, name))

    def param_loc(self, name: str, line: int) -> Loc:
        if name not in self.lay.params[self.t.index]:
            raise self.err(f"P{self.t.index} uses {name}, which is neither a register it declares nor one of its "
                           f"parameters ({', '.join(sorted(self.lay.params[self.t.index])) or 'none'})", line)
        return self.lay.locs[name]

    def pointer_regs(self, e: P.Expr, out: list[str]) -> None:
        """The registers this expression dereferences (in order, once each)."""
        if isinstance(e, P.Deref):
            if isinstance(e.pointer, P.Name) and self.reg(e.pointer.name) and e.pointer.name not in out:
                out.append(e.pointer.name)
            self.pointer_regs(e.pointer, out)
        elif isinstance(e, P.Call):
            form = self.pointer_arg_index(e)
            for k, a in enumerate(e.args):
                if k == form and isinstance(a, P.Name) and self.reg(a.name) and a.name not in out:
                    out.append(a.name)
                self.pointer_regs(a, out)
        elif isinstance(e, P.Unary):
            self.pointer_regs(e.operand, out)
        elif isinstance(e, P.Binary):
            self.pointer_regs(e.left, out)
            self.pointer_regs(e.right, out)

    def pointer_arg_index(self, c: P.Call) -> int | None:
        """Which argument of a call is a pointer (``smp_load_acquire(x)``), not an lvalue."""
        if c.fn in LOADS and LOADS[c.fn][0] == "pointer" or c.fn in STORES and STORES[c.fn][0] == "pointer":
            return 0
        if c.fn in LOCKS:
            return 0
        if c.fn in RMWS:
            return RMWS[c.fn].args.index("v")
        return None

    # -- locations
    def target(self, ptr: P.Expr, ctx: _Ctx, what: str) -> tuple[Loc, bool]:
        """The location a pointer expression names, and whether it came from a register (a dependency)."""
        if isinstance(ptr, P.AddrOf):
            return self.param_loc(ptr.name, ptr.line), False
        if isinstance(ptr, P.Name):
            if self.reg(ptr.name):
                return self.lay.locs[ctx.choice[ptr.name]], True
            return self.param_loc(ptr.name, ptr.line), False
        raise self.err(f"{what}: the pointer must be a parameter, &location or a register holding an address",
                       ptr.line, Unsupported)

    def lvalue(self, arg: P.Expr, ctx: _Ctx, fn: str) -> tuple[Loc, bool]:
        if not isinstance(arg, P.Deref):
            raise self.err(f"{fn}() takes *pointer, as in {fn}(*x{', 1' if fn in STORES else ''})", arg.line)
        return self.target(arg.pointer, ctx, f"{fn}(*...)")

    def pointer(self, arg: P.Expr, ctx: _Ctx, fn: str) -> tuple[Loc, bool]:
        if isinstance(arg, P.Deref):
            raise self.err(f"{fn}() takes the pointer itself, as in {fn}(x{', 1' if fn in STORES else ''}), "
                           f"not *x", arg.line)
        return self.target(arg, ctx, f"{fn}()")

    # -- accesses
    def load(self, ctx: _Ctx, loc: Loc, order: str, dep: bool, line: int) -> Any:
        self.not_lock(loc, line)
        if loc.attr in ctx.updates:  # the models read the state before the step: the load would miss it
            raise self.err(f"this statement loads {loc.name} after storing it: split it into two statements",
                           line, Unsupported)
        ctx.accesses.append(Load(loc.attr, order, dep=dep))
        return ctx.read(loc.attr)

    def store(self, ctx: _Ctx, loc: Loc, order: str, value: Any, line: int) -> None:
        self.not_lock(loc, line)
        ctx.accesses.append(Store(loc.attr, order))
        ctx.updates[loc.attr] = value

    def not_lock(self, loc: Loc, line: int) -> None:
        if loc.kind == "lock":
            raise self.err(f"{loc.name} is a spinlock_t: use spin_lock({loc.name}), spin_unlock({loc.name}) or "
                           f"spin_is_locked({loc.name})", line)

    # -- expressions
    def value(self, e: P.Expr, ctx: _Ctx) -> Any:
        if isinstance(e, P.Num):
            return e.value
        if isinstance(e, P.Name):
            r = self.reg(e.name)
            if r:
                return ctx.read(r[0])
            return self.lay.addr(self.param_loc(e.name, e.line).name, e.line)  # a parameter's value: its address
        if isinstance(e, P.AddrOf):
            return self.lay.addr(self.param_loc(e.name, e.line).name, e.line)
        if isinstance(e, P.Deref):
            loc, dep = self.target(e.pointer, ctx, "*...")
            return self.load(ctx, loc, "plain", dep, e.line)
        if isinstance(e, P.Unary):
            v = self.value(e.operand, ctx)
            return Not(v != 0) if e.op == "!" else -v if e.op == "-" else self.unsupported_op(e.op, e.line)
        if isinstance(e, P.Binary):
            if e.op in ("&&", "||"):
                left = self.value(e.left, ctx)
                mark = len(ctx.accesses)
                right = self.value(e.right, ctx)
                if len(ctx.accesses) > mark:
                    raise self.err(f"a shared access on the right of {e.op}: C skips it when the left decides, "
                                   f"and a step here makes every access of its statement; load into a register "
                                   f"first", e.line, Unsupported)
                return And(left != 0, right != 0) if e.op == "&&" else Or(left != 0, right != 0)
            a, b = self.value(e.left, ctx), self.value(e.right, ctx)
            ops = {"==": lambda: a == b, "!=": lambda: a != b, "<": lambda: a < b, ">": lambda: a > b,
                   "<=": lambda: a <= b, ">=": lambda: a >= b, "+": lambda: a + b, "-": lambda: a - b,
                   "*": lambda: a * b}
            if e.op not in ops:
                return self.unsupported_op(e.op, e.line)
            return ops[e.op]()
        if isinstance(e, P.Call):
            return self.call(e, ctx, want_value=True)
        raise self.err(f"not an expression here: {e!r}", getattr(e, "line", 0))

    def unsupported_op(self, op: str, line: int) -> Any:
        raise self.err(f"operator {op!r} is not in the subset lowered here (== != < > <= >= + - * ! && ||)", line,
                       Unsupported)

    def call(self, c: P.Call, ctx: _Ctx, *, want_value: bool) -> Any:
        fn, args = c.fn, c.args

        def arity(n: int, example: str) -> None:
            if len(args) != n:
                raise self.err(f"{fn}() takes {n} argument{'s' if n != 1 else ''}, as in {example}", c.line)

        if fn in UNSUPPORTED:
            raise self.err(f"{fn}(): {UNSUPPORTED[fn]}", c.line, Unsupported)
        if fn in LOADS:
            form, order = LOADS[fn]
            arity(1, f"{fn}({'*x' if form == 'lvalue' else 'x'})")
            loc, dep = (self.lvalue if form == "lvalue" else self.pointer)(args[0], ctx, fn)
            return self.load(ctx, loc, order, dep, c.line)
        if fn in STORES:
            form, order = STORES[fn]
            arity(2, f"{fn}({'*x' if form == 'lvalue' else 'x'}, 1)")
            v = self.value(args[1], ctx)
            loc, _ = (self.lvalue if form == "lvalue" else self.pointer)(args[0], ctx, fn)
            self.store(ctx, loc, order, v, c.line)
            return self.no_value(fn, c.line, want_value)
        if fn in FENCES:
            arity(0, f"{fn}()")
            ctx.accesses.append(Fence(FENCES[fn]))
            return self.no_value(fn, c.line, want_value)
        if fn in NOOPS:
            arity(0, f"{fn}()")
            return self.no_value(fn, c.line, want_value)
        if fn in LOCKS:
            arity(1, f"{fn}(mylock)")
            loc, _ = self.pointer(args[0], ctx, fn)
            if loc.kind != "lock":
                raise self.err(f"{fn}({loc.name}): {loc.name} is not a spinlock_t (declare it 'spinlock_t "
                               f"*{loc.name}' in the thread's parameters)", c.line)
            # no access= for a Lock: the models make taking it an acquire and releasing it a release
            held = ctx.read(loc.attr)
            word = self.lay.words.get(loc.name)  # the lock word spin_is_locked() reads (lock.cat's LKW, UL)
            if fn == "spin_lock":  # spins until the lock is free: the step is enabled only then
                ctx.guards.append(held == NOBODY)
                ctx.updates[loc.attr] = ctx.cpu
                if word is not None:  # LKW: the write half of the lock's read-modify-write, unordered
                    ctx.accesses.append(Rmw(word, "relaxed"))
                    ctx.updates[word] = 1
                return self.no_value(fn, c.line, want_value)
            if fn == "spin_trylock":
                ctx.updates[loc.attr] = If(held == NOBODY, ctx.cpu, held)
                if word is not None:
                    ctx.accesses.append(Rmw(word, "relaxed"))
                    ctx.updates[word] = If(held == NOBODY, 1, ctx.read(word))
                return If(held == NOBODY, 1, 0)
            if fn == "spin_unlock":
                ctx.updates[loc.attr] = NOBODY
                if word is not None:  # UL: a release store of the lock word
                    ctx.accesses.append(Store(word, "release"))
                    ctx.updates[word] = 0
                return self.no_value(fn, c.line, want_value)
            if word is not None:  # spin_is_locked(): a marked load of the lock word, which may be stale
                ctx.accesses.append(Load(word, "once"))
                return ctx.read(word)
            return If(held == NOBODY, 0, 1)
        if fn in RMWS:
            op = RMWS[fn]
            arity(len(op.args), f"{fn}({', '.join(op.args)})")
            named: dict[str, Any] = {}
            for name, a in zip(op.args, args):
                if name != "v":
                    named[name] = self.value(a, ctx)
            loc, _ = self.pointer(args[op.args.index("v")], ctx, fn)
            self.not_lock(loc, c.line)
            ctx.accesses.append(Rmw(loc.attr, op.order))
            old = ctx.read(loc.attr)
            new = op.new(old, named)
            ctx.updates[loc.attr] = new
            if op.returns is None:
                return self.no_value(fn, c.line, want_value)
            return {"old": old, "new": new, "test": If(new == 0, 1, 0), "negative": If(new < 0, 1, 0),
                    "unless": If(old != named.get("u"), 1, 0)}[op.returns]
        raise self.err(f"unknown call {fn}(){_rmw_name_hint(fn)}; the calls lowered here: {', '.join(KNOWN)}",
                       c.line)

    def no_value(self, fn: str, line: int, want: bool) -> Any:
        if want:
            raise self.err(f"{fn}() returns no value", line)
        return 0

    def run(self, st: P.Stmt, ctx: _Ctx) -> Any:
        """Run one statement (not an ``if``) on ``ctx``; for a branch, return the condition."""
        if isinstance(st, P.Decl):
            self.set_reg(st.name, self.value(st.init, ctx), ctx, st.line)
        elif isinstance(st, P.Assign):
            if isinstance(st.target, P.Name):
                if not self.reg(st.target.name):
                    raise self.err(f"P{self.t.index} assigns {st.target.name}, which it does not declare: add "
                                   f"'int {st.target.name};'", st.line)
                self.set_reg(st.target.name, self.value(st.value, ctx), ctx, st.line)
            else:
                v = self.value(st.value, ctx)
                loc, _ = self.target(st.target.pointer, ctx, "*... =")
                self.store(ctx, loc, "plain", v, st.line)
        elif isinstance(st, P.ExprStmt):
            self.call(st.expr, ctx, want_value=False)
        elif isinstance(st, P.If):
            return self.value(st.cond, ctx) != 0
        return None

    def set_reg(self, name: str, v: Any, ctx: _Ctx, line: int) -> None:
        r = self.reg(name)
        if r is None:
            raise self.err(f"{name} is not a register of P{self.t.index}", line)
        ctx.updates[r[0]] = v

    def statement_regs(self, st: P.Stmt) -> list[str]:
        out: list[str] = []
        for e in _exprs(st):
            self.pointer_regs(e, out)
        return out


def _exprs(st: P.Stmt) -> list[P.Expr]:
    if isinstance(st, P.Decl):
        return [st.init] if st.init is not None else []
    if isinstance(st, P.Assign):
        return [st.value, st.target]
    if isinstance(st, P.ExprStmt):
        return [st.expr]
    if isinstance(st, P.If):
        return [st.cond]
    return []


# ---- control flow: statements to a program of steps -----------------------------------------------------

@dataclass
class Instr:
    """One statement of a thread, numbered, with the statement that follows it (and an if's other branch)."""
    stmt: P.Stmt
    label: str = ""
    next: int | None = None  # the statement after (for an if: when the condition is true)
    orelse: int | None = None  # an if's target when false


def _flatten(body: tuple[P.Stmt, ...]) -> list[Instr]:
    """The thread's steps in program order; an ``if`` branches to its arms, each arm then falls through."""
    prog: list[Instr] = []

    def block(stmts: tuple[P.Stmt, ...]) -> tuple[int | None, list[tuple[Instr, str]]]:
        entry: int | None = None
        pending: list[tuple[Instr, str]] = []
        for st in stmts:
            if isinstance(st, P.Decl) and st.init is None:
                continue  # `int r0;` declares a ghost; it is no step
            k = len(prog)
            ins = Instr(st)
            prog.append(ins)
            for p, f in pending:
                setattr(p, f, k)
            entry = k if entry is None else entry
            if isinstance(st, P.If):
                t_entry, t_pend = block(st.then)
                e_entry, e_pend = block(st.orelse)
                pending = t_pend + e_pend
                if t_entry is None:
                    pending.append((ins, "next"))
                else:
                    ins.next = t_entry
                if e_entry is None:
                    pending.append((ins, "orelse"))
                else:
                    ins.orelse = e_entry
            else:
                pending = [(ins, "next")]
        return entry, pending

    _, pending = block(body)
    done = len(prog)
    for p, f in pending:
        setattr(p, f, done)
    seen: dict[str, int] = {}
    for ins in prog:
        base = f"L{ins.stmt.line}"
        seen[base] = seen.get(base, 0) + 1
        ins.label = base if seen[base] == 1 else f"{base}_{seen[base]}"
    return prog


def _what(st: P.Stmt) -> str:
    """A short name for the statement's step: the call it makes, or what it is."""
    if isinstance(st, P.If):
        return "if"
    for e in _exprs(st):
        stack = [e]
        while stack:
            x = stack.pop(0)
            if isinstance(x, P.Call):
                return x.fn
            if isinstance(x, P.Deref):
                return "plain"
            if isinstance(x, (P.Unary,)):
                stack.append(x.operand)
            elif isinstance(x, P.Binary):
                stack += [x.left, x.right]
    return "local"


def _source_line(test: P.Litmus, line: int) -> str:
    lines = test.source.split("\n")
    return lines[line - 1].strip() if 0 < line <= len(lines) else ""


# ---- the spec --------------------------------------------------------------------------------------------

def _cond(lay: Layout, c: P.Cond, what: str) -> Callable[[Any], Any]:
    """The final-state condition as a function of the state."""
    if isinstance(c, P.Const):
        return lambda s: c.value
    if isinstance(c, P.Not):
        f = _cond(lay, c.operand, what)
        return lambda s: Not(f(s))
    if isinstance(c, (P.And, P.Or)):
        fs = [_cond(lay, p, what) for p in c.parts]
        comb = And if isinstance(c, P.And) else Or
        return lambda s: comb(*[f(s) for f in fs])
    assert isinstance(c, P.Atom)
    if c.thread is not None:
        r = lay.regs.get((c.thread, c.name))
        if r is None:
            known = sorted(f"{t}:{n}" for t, n in lay.regs)
            raise lay.error(f"{what} names {c.thread}:{c.name}, which P{c.thread} does not declare (the registers: "
                            f"{', '.join(known) or 'none'})", c.line)
        attr = r[0]
    else:
        if c.name not in lay.locs:
            raise lay.error(f"{what} names {c.name}, which is not a location of the test ({', '.join(lay.locs)})",
                            c.line)
        attr = lay.locs[c.name].attr
    value = lay.addr(c.value, c.line) if isinstance(c.value, str) else c.value
    if c.negated:
        return lambda s: getattr(s, attr) != value
    return lambda s: getattr(s, attr) == value


def lower(test: P.Litmus) -> type[Spec]:
    """The spec class of ``test`` (see the module docstring). Raises ``SpecError`` for a test that does not
    make sense (a name it never declares), ``Unsupported`` for one outside what the models express."""
    lay = _layout(test)
    ptr = lay.ptr_enum()
    ns: dict[str, Any] = {}
    doc = [f"The litmus test {test.name} ({test.file}), lowered: one CPU per thread, one step per statement."]
    if test.result:
        doc.append(f"LKMM's result (the test's header): {test.result}.")
    ns["__doc__"] = "\n\n".join(doc)
    ns["kernel"] = f"tools/memory-model/litmus-tests/{test.name}.litmus (herd7 C litmus test)"
    ns["assumptions"] = ("each litmus statement is one atomic step making all of its shared accesses in "
                         "program order",)
    for t in test.threads:
        ns[f"p{t.index}"] = Role(1, doc=f"P{t.index} of {test.name}")
    for loc in lay.locs.values():
        if loc.kind == "lock":
            ns[loc.attr] = Lock(doc=f"spinlock_t {loc.name}")
            if loc.name in lay.words:
                ns[lay.words[loc.name]] = Shared(0, type=Int, doc=f"the lock word of {loc.name} (1 while held) that "
                                                                 f"spin_is_locked({loc.name}) reads")
        else:
            init = lay.addr(loc.init, loc.line) if isinstance(loc.init, str) else loc.init
            ns[loc.attr] = Shared(init, type=ptr if loc.kind == "ptr" else Int, doc=f"the location {loc.name}")
    for (ti, reg), (attr, is_ptr) in lay.regs.items():
        v = lay.reg_init.get((ti, reg), 0)
        init = lay.addr(v, 0) if isinstance(v, str) else v
        ns[attr] = Ghost(init, type=ptr if is_ptr else Int, doc=f"register {ti}:{reg}")
    dones: list[tuple[str, int]] = []
    for t in test.threads:
        prog = _flatten(t.body)
        pc_type = Enum(*[i.label for i in prog], "done", name=f"p{t.index}_pc")
        pc_attr = f"p{t.index}_pc"
        ns[pc_attr] = Shared(0, type=pc_type, doc=f"where P{t.index} is: the line of its next statement")
        dones.append((pc_attr, len(prog)))
        low = _Lowerer(lay, t)
        names: set[str] = set()
        for k, ins in enumerate(prog):
            _add_actions(ns, names, low, t, k, ins, pc_attr, test)

    def done(s: Any) -> Any:
        return AllOf([getattr(s, a) == n for a, n in dones])

    def final(s: Any) -> Any:
        """Every thread done and memory final: no store still in a tso store buffer (herd's final state)."""
        return And(done(s), settled(s))

    cond = _cond(lay, test.condition, test.quantifier)
    filt = _cond(lay, test.filter, "filter") if test.filter is not None else (lambda s: True)
    ns["done"] = terminal(done)
    # exists_clause is expected as the header says: reached for Sometimes (and Always, or no Result line),
    # unreached for Never (and herd's DEADLOCK: no run completes that passes the filter); for forall the
    # state asked about is one that breaks the condition, which Always says never happens
    expect_reached = test.result in (None, "Sometimes", "Always") if test.quantifier != "forall" else \
        test.result not in ("Always",)
    if test.quantifier == "forall":  # forall P: the interesting final states are those where P fails
        def reached(s: Any) -> Any:
            return And(final(s), filt(s), Not(cond(s)))

        def fails(s: Any) -> Any:
            return And(final(s), filt(s), cond(s))
    else:
        def reached(s: Any) -> Any:
            return And(final(s), filt(s), cond(s))

        def fails(s: Any) -> Any:
            return And(final(s), filt(s), Not(cond(s)))
    reached.__doc__ = f"A final state where the test's {test.quantifier} condition " \
                      f"{'fails' if test.quantifier == 'forall' else 'holds'}."
    fails.__doc__ = "A final state (that passes the filter) where it does not: the runs are not all alike."
    ns["exists_clause"] = sometimes(reached, expect="holds" if expect_reached else "violated")
    ns["exists_clause_fails"] = sometimes(fails)
    name = "litmus_" + "".join(ch if ch.isalnum() else "_" for ch in test.name).lower()
    cls = type("Litmus_" + "".join(ch if ch.isalnum() else "_" for ch in test.name), (Spec,), ns, name=name)
    cls.litmus = test  # the parsed test, for the runner
    return cls


def _add_actions(ns: dict[str, Any], names: set[str], low: _Lowerer, t: P.Thread, k: int, ins: Instr,
                 pc_attr: str, test: P.Litmus) -> None:
    """One action for the statement, or one per combination of locations its pointer registers may hold."""
    st = ins.stmt
    regs = low.statement_regs(st)
    choices = [dict(zip(regs, combo)) for combo in itertools.product(*[low.lay.pointees for _ in regs])]
    base = f"p{t.index}_{st.line}_{_what(st)}"
    if any(k2.startswith(base) for k2 in names):  # a second statement of that kind on the line
        base = f"{base}_{k + 1}"
    text = _source_line(test, st.line)
    lock_attrs = {loc.attr for loc in low.lay.locs.values() if loc.kind == "lock"}
    for choice in choices:
        probe = _Ctx(low.lay, t.index, _Zero(), t.index, choice)
        low.run(st, probe)  # the accesses, and every error the statement has, before any search
        accesses = tuple(probe.accesses)
        name = base + "".join(f"_{r}_{loc}" for r, loc in choice.items())
        name = "".join(ch if ch.isalnum() or ch == "_" else "_" for ch in name)
        while name in names:
            name += "_"
        names.add(name)
        ns[name] = _make_action(low, t, k, ins, pc_attr, choice, accesses, f"{test.file}:{st.line}: {text}", name)
        # the locks the statement releases (spin_unlock()): under tso each release waits in the store buffer
        # too, so checker.litmus.run.bounds counts it with the thread's stores
        ns[name].litmus_unlocks = sum(1 for a, v in probe.updates.items()
                                      if a in lock_attrs and v.__class__ is int and v == NOBODY)


def _make_action(low: _Lowerer, t: P.Thread, k: int, ins: Instr, pc_attr: str, choice: dict[str, str],
                 accesses: tuple, doc: str, name: str) -> Any:
    lay = low.lay
    is_if = isinstance(ins.stmt, P.If)

    def step(s: Any, cpu: int) -> Any:
        ctx = _Ctx(lay, t.index, s, cpu, choice)
        result = low.run(ins.stmt, ctx)
        guards = [getattr(s, pc_attr) == k]
        for reg, locname in choice.items():  # this variant: the register holds that location's address
            guards.append(getattr(s, lay.regs[(t.index, reg)][0]) == lay.addr(locname, ins.stmt.line))
        nxt = If(result, ins.next, ins.orelse) if is_if else ins.next
        return when(And(*guards, *ctx.guards), **ctx.updates, **{pc_attr: nxt})

    step.__name__ = step.__qualname__ = name
    step.__doc__ = doc
    role = f"p{t.index}"
    return action(step, role=role, access=accesses) if accesses else action(step, role=role)
