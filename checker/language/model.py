# SPDX-License-Identifier: GPL-2.0-only
"""The ``Spec`` base class: collects a spec's declarations once, at class creation.

A spec is a class whose body declares parameters, variables, CPU roles,
actions and properties. ``Spec`` has no methods for authors to override:
subclassing a spec inherits its declarations (a bug spec replaces one
action of a correct spec), and class keywords declare the rest::

    class FoldGt(PercpuEager, expect_violated=("read_bound",)): ...
"""
from __future__ import annotations

import ast
import dataclasses
import functools
import inspect
import re
from typing import Any, ClassVar, Iterator

from checker.errors import SpecError, UsageError, source_of
from checker.language.process import expand
from checker.kernel.config import Api
from checker.kernel.memory import Heap
from checker.language.declare import Abstraction, ActionInfo, Interchangeable, Param, PropertyInfo, Role, Task, Var
from checker.language.namespace import SpecMeta
from checker.language.usercode import guard
from checker.types import IntType

DEFAULT_ASSUMPTIONS = (
    "sequentially consistent interleaving of the modelled atomic steps",
    "64-bit kernel (s64 loads and stores are single-copy atomic)",
)


#: Properties every spec has without declaring them.
BUILTIN_PROPERTIES = ("no_deadlock", "no_overflow", "builds",
                      # the context rules (checker.kernel.context)
                      "no_sleep_in_atomic", "lock_order", "irq_safe_locks", "no_irq_deadlock",
                      "no_lock_deadlock")
#: The built-in property of a spec that shifts words (checker.cint): no shift count out of range.
UB_PROPERTY = "no_undefined_behaviour"


def _snake(name: str) -> str:
    return re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", name).lower()


class Params:
    """Resolved parameter values, with attribute access; hashable.

    Role sizes become CPU-id ranges: ``p.adders`` is ``range(0, p.ncpus)``.
    """

    __slots__ = ("_values", "_roles", "_names", "_computed")

    def __init__(self, values: dict[str, int], roles: dict[str, range], names: dict[str, Any] | None = None,
                 computed: tuple[str, ...] = ()):
        object.__setattr__(self, "_values", dict(values))
        object.__setattr__(self, "_roles", dict(roles))
        object.__setattr__(self, "_names", dict(names or {}))  # parameter -> Enum naming its values
        # derived parameters computed from the others, not set: a reproduce line leaves them out, so that
        # rerunning it at another value of what they derive from derives them again
        object.__setattr__(self, "_computed", tuple(computed))

    def __getstate__(self) -> tuple:
        return (self._values, self._roles, self._names, self._computed)

    def __setstate__(self, state: tuple) -> None:
        for k, v in zip(self.__slots__, state):
            object.__setattr__(self, k, v)

    @property
    def computed(self) -> tuple[str, ...]:
        return self._computed

    def __getattr__(self, name: str) -> Any:
        try:
            return self._values[name]
        except KeyError:
            try:
                return self._roles[name]
            except KeyError:
                raise AttributeError(f"no parameter or role {name!r}") from None

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("parameters are read-only")

    @property
    def ncpus_total(self) -> int:
        return sum(len(r) for r in self._roles.values())

    def as_dict(self) -> dict[str, int]:
        return dict(self._values)

    def shown(self) -> dict[str, int | str]:
        """The values as reports print them: named values by name."""
        return {k: self._names[k].show(v) if k in self._names else v for k, v in self._values.items()}

    def roles(self) -> dict[str, range]:
        return dict(self._roles)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Params) and self._values == other._values

    def __hash__(self) -> int:
        return hash(tuple(sorted(self._values.items())))

    def __repr__(self) -> str:
        return " ".join(f"{k}={v}" for k, v in self.shown().items())


class SpecInfo:
    """Everything a spec class declares, in declaration order (bases first)."""

    def __init__(self, cls: type):
        self.cls = cls
        self.params: dict[str, Param] = {}
        self.vars: dict[str, Var] = {}
        self.roles: dict[str, Role] = {}
        self.actions: dict[str, ActionInfo] = {}
        self.properties: dict[str, PropertyInfo] = {}
        self.terminal: Any = None
        self.builtin_expect: dict[str, str] = {}
        self.witnesses: dict[str, Any] = {}
        self.heaps: dict[str, Any] = {}
        self.api: Any = None
        self.abstraction: Abstraction | None = None
        #: The declared structural CPU symmetry (checker.explore.structure), if any.
        self.structure: Interchangeable | None = None
        #: Per-CPU variable -> function of the state giving (lo, hi) bounds of
        #: each element, used by the sum lemma of the Z3 backend.
        self.sum_bounds: dict[str, Any] = {}
        self.file, self.line = source_of(cls)
        #: The spec computes with C's bit operators on words: the explorer reads its typed variables as
        #: ``checker.cint.Word`` (ints that know their type). ``shift_lines``: where it shifts.
        self.c_words = False
        self.shift_lines: tuple[int, ...] = ()

    def abstraction_at(self, params: Any) -> Abstraction | None:
        """The spec's Abstraction where it applies at these parameters (unbounded runs, liveness only)."""
        ab = self.abstraction
        return ab if ab is not None and ab.when(params) else None


class Environment:
    """The hook points where the layer above the language applies the kernel environment to a spec.

    The language calls these at fixed points and imports nothing of what fills them: the package
    ``checker`` installs ``checker.kernel.passes.KERNEL`` (``use_environment``), which composes the
    kernel's passes (tasks, 32-bit tearing, memory models, context rules) around the language's own.
    These defaults are the bare language: no tasks, 64-bit, sequentially consistent, no context rules."""

    def declare(self, si: SpecInfo, cls: type) -> None:
        """At class creation, after the declarations are collected and before they are checked."""
        _add_uninit_check(si, cls)
        _add_word_check(si, cls)

    def assumptions(self, si: SpecInfo, base: tuple[str, ...], memory: str | None) -> tuple[str, ...]:
        """The assumptions that replace the defaults ``base`` at a memory model (``all_assumptions``)."""
        return base

    def variables(self, model: Any) -> None:
        """A ``Model``'s variables at its point (``model.vars``, ``model.weak``), before its state class."""
        model.vars = model.info.vars
        model.memory = "sc"

    def steps(self, model: Any) -> None:
        """Once the spec's actions are compiled: ``model.actions`` as the engines fire them."""

    def finish(self, model: Any) -> None:
        """Last: what the engines ask of the model beside its steps (the scheduler, symmetry, context rules)."""


_environment = Environment()


def use_environment(env: Environment) -> None:
    """Put ``env`` under every spec class created from now on and every model built."""
    global _environment
    _environment = env


def environment() -> Environment:
    """The environment in use (``use_environment``)."""
    return _environment


class Spec(metaclass=SpecMeta):
    """Base of every spec. See ``docs/spec-authoring.md``.

    Class keywords: ``name`` (the spec's command-line name, default the
    class name in snake_case), ``expect_violated`` (properties this spec is
    expected to violate: a bug spec), ``abstract`` (a base not to check).
    Class attributes: ``kernel`` (the code modelled: version, commit,
    variant), ``assumptions`` (added to the defaults), ``explore_sweeps``
    (the default explorer run as a union of cross products: each entry maps
    parameters to the values that replace their ``explore`` sweep) and ``bmc``: ``(depth,
    {parameter: values})`` to bounded-model-check every property with Z3 at
    those points in every prove run (as ``--bmc depth`` does at the explore
    points), e.g. so that a bug is found by both backends; ``lemmas``: a
    lemma set (``checker.prove.bitvector.WordLemmas``) proved in every prove
    run, each lemma a check.
    """

    __countercheck_info__: ClassVar[SpecInfo]
    spec_name: ClassVar[str] = ""
    abstract: ClassVar[bool] = True
    kernel: ClassVar[str] = ""
    expect_violated: ClassVar[tuple[str, ...]] = ()
    assumptions: ClassVar[tuple[str, ...]] = ()
    explore_sweeps: ClassVar[tuple[dict[str, Any], ...]] = ({},)
    bmc: ClassVar[tuple[int, dict[str, tuple[int, ...]]] | None] = None
    lemmas: ClassVar[Any] = None

    def __init_subclass__(cls, *, name: str | None = None, expect_violated: tuple[str, ...] = (),
                          expect_holds: tuple[str, ...] = (), abstract: bool = False, on_demand: bool = False,
                          **kw: Any):
        super().__init_subclass__(**kw)
        cls.abstract = abstract
        #: Checked only when named (a deep sweep): a bare ``verify`` of every built-in spec leaves it out.
        cls.on_demand = on_demand
        cls.expect_violated = tuple(expect_violated)
        cls.spec_name = name or _snake(cls.__name__)
        from checker.overrides import instrument

        # A bug spec's overrides report whether they ran while it was explored (checker.overrides).
        cls.__countercheck_overrides__ = instrument(cls, Spec) if expect_violated and not abstract else ()
        expand(cls)  # process functions become variables and actions on the class (checker.language.process)
        cls.__countercheck_info__ = _collect(cls, tuple(expect_violated), tuple(expect_holds))

    def __init__(self, **params: int):
        """Bind parameter values (others take their defaults)."""
        if type(self).abstract:
            raise UsageError(f"{type(self).__name__} is abstract; check one of its subclasses")
        self.params = resolve_params(type(self), params)

    def __repr__(self) -> str:
        return f"{type(self).spec_name}({self.params})"


def info(cls: type) -> SpecInfo:
    """The ``SpecInfo`` the ``Spec`` base class collected for ``cls`` (parameters, variables, actions, properties)."""
    return cls.__countercheck_info__


def all_assumptions(cls: type, memory: str | None = None) -> tuple[str, ...]:
    """The spec's assumptions; ``memory`` (tso, lkmm) replaces the sequentially consistent interleaving."""
    extra: list[str] = []
    for base in reversed(cls.__mro__):
        for a in base.__dict__.get("assumptions", ()):
            if a not in extra:
                extra.append(a)
    base = DEFAULT_ASSUMPTIONS
    if hasattr(cls, "__countercheck_info__"):  # the environment's: a 32-bit kernel, a weak memory model
        base = _environment.assumptions(info(cls), base, memory)
    return base + tuple(extra)


_class_source = functools.lru_cache(maxsize=None)(inspect.getsourcelines)  # a class's body is read once


def decl_line(cls: type, name: str) -> int | None:
    """The source line of ``name = ...`` or ``def name`` in the spec's class body."""
    for base in cls.__mro__:
        if name not in base.__dict__:
            continue
        try:
            lines, start = _class_source(base)
        except (OSError, TypeError):
            return None
        pat = re.compile(rf"^\s+(def\s+{re.escape(name)}\b|{re.escape(name)}\s*[:=])")
        for i, text in enumerate(lines):
            if pat.match(text):
                return start + i
        return start
    return None


def _collect(cls: type, expect_violated: tuple[str, ...], expect_holds: tuple[str, ...]) -> SpecInfo:
    si = SpecInfo(cls)
    file = si.file

    def fail(msg: str, line: int | None = None) -> SpecError:
        return SpecError(f"{cls.__name__}: {msg}", file=file, line=line or si.line)

    for base in reversed(cls.__mro__):
        for attr, val in base.__dict__.items():
            if isinstance(val, Param):
                si.params[attr] = val
            elif isinstance(val, Heap):
                si.heaps[attr] = val  # its variables and properties join the spec's
                si.vars.update(val.variables())
            elif isinstance(val, Api):
                si.api = val
            elif isinstance(val, Abstraction):
                si.abstraction = val
            elif isinstance(val, Interchangeable):
                si.structure = val
            elif isinstance(val, Var):
                si.vars[attr] = val
            elif isinstance(val, Role):
                si.roles[attr] = val
            elif callable(val) and hasattr(val, "__countercheck_action__"):
                meta = val.__countercheck_action__
                f, ln = source_of(val)
                # An action redefined without `fair` keeps the fairness of the one it replaces: a bug spec
                # changes the code of a step, not how the scheduler or the lock treats it.
                fair = meta.get("fair")
                if fair is None and attr in si.actions:
                    fair = si.actions[attr].fair
                si.actions[attr] = ActionInfo(attr, guard(val, f"{cls.__name__}.{attr}"), meta["role"], tuple(meta["choose"].items()),
                                              inspect.getdoc(val) or "", f, ln, tuple(meta["uses"].items()),
                                              meta["sleeps"], meta["irq"], meta["applies"], fair or None,
                                              meta.get("softirq", False), access=meta.get("access", ()))
            elif callable(val) and hasattr(val, "__countercheck_property__"):
                meta = val.__countercheck_property__
                f, ln = source_of(val)
                si.properties[attr] = PropertyInfo(attr, guard(val, f"{cls.__name__}.{attr}"), meta["kind"], meta["expect"], meta["applies"],
                                                   inspect.getdoc(val) or "", f, ln, meta["role"],
                                                   meta["inductive"], proof=meta.get("proof", True),
                                                   always=meta.get("always", False), fair=meta.get("fair", True),
                                                   lemma=meta.get("lemma", False),
                                                   sc_only=bool(meta.get("sc_only", False)),
                                                   weak_counterpart=meta["sc_only"] if isinstance(
                                                       meta.get("sc_only"), str) else None)
            elif callable(val) and hasattr(val, "__countercheck_witness__"):
                si.witnesses[attr] = guard(val, f"{cls.__name__}.{attr}")
            elif callable(val) and hasattr(val, "__countercheck_terminal__"):
                si.terminal = guard(val, f"{cls.__name__}.{attr}")
            elif attr in si.actions or attr in si.properties:
                # A subclass that redefines a name without the decorator.
                what = "action" if attr in si.actions else "property"
                raise fail(f"{attr} overrides the {what} {attr} of a base spec without @{'action' if what == 'action' else 'invariant'}; "
                           f"decorate the new definition too", decl_line(cls, attr))

    for heap in si.heaps.values():
        if si.terminal is not None:
            for pname, prop in heap.properties(si.terminal, si.file, decl_line(cls, heap.name)).items():
                si.properties.setdefault(pname, prop)
    if si.api is not None and si.api.config not in si.params:
        raise fail(f"its Api selects the configuration with {si.api.config!r}, which is not a parameter")

    _environment.declare(si, cls)  # the language's passes and the kernel environment's (checker.kernel.passes)

    names: dict[str, str] = {}
    for kind, group in (("parameter", si.params), ("variable", si.vars), ("role", si.roles),
                        ("action", si.actions), ("property", si.properties)):
        for n in group:
            if n in names and names[n] != kind:
                raise fail(f"the name {n!r} is used both as a {names[n]} and a {kind}", decl_line(cls, n))
            names[n] = kind

    for flag, expect in ((expect_violated, "violated"), (expect_holds, "holds")):
        for pname in flag:
            if pname in BUILTIN_PROPERTIES:
                si.builtin_expect[pname] = expect
                continue
            if pname not in si.properties:
                raise fail(f"expects {pname!r} to be {expect}, but it has no such property; "
                           f"its properties are: {', '.join(si.properties) or '(none)'}")
            p = si.properties[pname]
            si.properties[pname] = dataclasses.replace(p, expect=expect)

    for p in si.properties.values():
        if p.role is not None and p.role not in si.roles:
            raise fail(f"property {p.name} is per-CPU over role {p.role!r}, which is not declared", p.line)
        want = 2 if p.role else 1
        if len(inspect.signature(p.fn).parameters) != want:
            raise fail(f"property {p.name} must take ({'s, cpu' if p.role else 's'})"
                       + (" because it is declared per-CPU with role=" if p.role else ""), p.line)
    if si.abstraction is not None:
        for v in (*si.abstraction.freeze, *si.abstraction.modulo):
            if v not in si.vars:
                raise fail(f"its Abstraction names {v!r}, which is not a variable; the variables are: "
                           f"{', '.join(si.vars)}", decl_line(cls, si.abstraction.name))
    for base in reversed(cls.__mro__):
        si.sum_bounds.update(base.__dict__.get("sum_bounds", {}))
    for v in si.sum_bounds:
        if v not in si.vars or si.vars[v].kind != "percpu":
            raise fail(f"sum_bounds names {v!r}, which is not a per-CPU variable", decl_line(cls, "sum_bounds"))
    for role in si.roles.values():
        if isinstance(role.count, str) and role.count not in si.params:
            raise fail(f"role {role.name!r} is sized by {role.count!r}, which is not a parameter",
                       decl_line(cls, role.name))
        if getattr(role, "cpu", None) is not None:
            if not callable(role.cpu):
                raise fail(f"role {role.name!r}: cpu= is the CPU a member runs on, a function of the state and the "
                           f"member, e.g. cpu=lambda s, t: s.on[t]; got {role.cpu!r}", decl_line(cls, role.name))
            if role.cpus is not None and role.cpus not in si.roles:
                raise fail(f"role {role.name!r}: cpus={role.cpus!r} is not a role; roles: {', '.join(si.roles)}",
                           decl_line(cls, role.name))
            if role.cpus is None and not any(getattr(r, "cpu", None) is None and not isinstance(r, Task)
                                             for r in si.roles.values()):
                raise fail(f"role {role.name!r} runs on CPUs (cpu=), but every role is of that kind: declare the "
                           f"CPUs as a role of their own, e.g. cpus = Role(\"ncpus\")", decl_line(cls, role.name))
    for v in si.vars.values():
        if v.role is not None and v.role not in si.roles:
            raise fail(f"variable {v.name!r} belongs to role {v.role!r}, which is not declared; "
                       f"roles: {', '.join(si.roles) or '(none)'}", decl_line(cls, v.name))
    for a in si.actions.values():
        if a.role is not None and a.role not in si.roles:
            raise fail(f"action {a.name!r} runs on role {a.role!r}, which is not declared; "
                       f"declare it, e.g. `{a.role} = Role(\"ncpus\", symmetric=True)`", a.line)
        params = list(inspect.signature(a.fn).parameters)
        want = ["s"] + (["cpu"] if a.role else []) + [c for c, _ in a.choose]
        if len(params) != len(want):
            raise fail(f"action {a.name} takes ({', '.join(params)}) but is called with "
                       f"({', '.join(want)}): the state, {'the CPU id, ' if a.role else ''}and one argument per choice",
                       a.line)

    if not cls.abstract:
        if not si.actions:
            raise fail("declares no actions; a spec needs at least one `@action` (one atomic kernel step)")
        if si.terminal is None:
            raise fail("has no `@terminal` predicate, so a deadlock cannot be told from finished work; add\n"
                       "    @terminal\n    def done(s):\n        return ...  # every CPU has finished its work")
        if not getattr(cls, "kernel", ""):
            raise fail("does not say which kernel code it models; add a class attribute, e.g.\n"
                       "    kernel = \"v6.6 lib/percpu_counter.c: percpu_counter_add_batch (irqs off)\"")
        if any(v.kind == "percpu" for v in si.vars.values()) and not si.roles:
            raise fail("has per-CPU variables but no CPU role; declare one, e.g. "
                       "`adders = Role(\"ncpus\", symmetric=True)`")
    return si


def _add_uninit_check(si: SpecInfo, cls: type) -> None:
    """A spec with uninitialised locals gets a ghost for the first read and a property on it."""
    from checker.language.declare import Ghost, Uninit
    from checker.types import Enum

    uninit = [n for n, v in si.vars.items() if isinstance(v, Uninit)]
    if not uninit or "uninit_read" in si.vars:
        return
    for n in uninit:
        if si.vars[n].mode not in si.params:
            raise SpecError(f"{cls.__name__}: {n} is Uninit with mode {si.vars[n].mode!r}, which is not a "
                            f"parameter; add e.g. `uninit = Param(0, domain=(0, 1), explore=(0, 1))`",
                            file=si.file, line=decl_line(cls, n))
    flag = Ghost(0, type=Enum("none", *uninit, name="uninit_read"), doc="the uninitialised variable first read")
    flag.name = "uninit_read"
    si.vars["uninit_read"] = flag
    names = ", ".join(uninit)

    def no_uninit_read(s: Any) -> Any:
        return s.uninit_read == 0

    si.properties.setdefault("no_uninit_read", PropertyInfo(
        "no_uninit_read", no_uninit_read, "invariant", "holds",
        lambda p: any(getattr(p, si.vars[n].mode) == 0 for n in uninit),
        f"no step reads an uninitialised variable ({names}) (as KMSAN reports it)", si.file, si.line))


_BIT_OPS = (ast.BitAnd, ast.BitOr, ast.BitXor, ast.LShift, ast.RShift)
_WORD_NAMES = frozenset(("U32", "S32", "U64", "S64"))
_scanned: dict[str, tuple[bool, bool, tuple[int, ...]]] = {}


def _scan_source(file: str) -> tuple[bool, bool, tuple[int, ...]]:
    """Whether a spec file's functions use bit operators on non-constants, cast to a word type, and where
    they shift. Read once per file: a syntactic test, so that a spec without bit operators keeps
    the explorer's plain-int reads (the fast path) and no extra variable."""
    hit = _scanned.get(file)
    if hit is not None:
        return hit
    try:
        with open(file, encoding="utf-8") as f:
            tree = ast.parse(f.read())
    except (OSError, SyntaxError, ValueError):
        _scanned[file] = (False, False, ())
        return _scanned[file]
    bits, words, shifts = False, False, set()
    for fn in ast.walk(tree):
        if isinstance(fn, ast.Call) and isinstance(fn.func, ast.Name) and fn.func.id in _WORD_NAMES:
            words = True  # a cast, U64(1): a word without a typed variable
        if not isinstance(fn, (ast.FunctionDef, ast.Lambda)):
            continue
        for n in ast.walk(fn):
            if isinstance(n, ast.BinOp) and isinstance(n.op, _BIT_OPS) and not (
                    isinstance(n.left, ast.Constant) and isinstance(n.right, ast.Constant)):
                bits = True
                if isinstance(n.op, (ast.LShift, ast.RShift)):
                    shifts.add(n.lineno)
            elif isinstance(n, ast.UnaryOp) and isinstance(n.op, ast.Invert):
                bits = True
    _scanned[file] = (bits, words, tuple(sorted(shifts)))
    return _scanned[file]


def _add_word_check(si: SpecInfo, cls: type) -> None:
    """A spec whose code applies bit operators and that has words computes with C's rules
    (checker.cint); one that shifts gets a ghost for the first out-of-range shift and the built-in
    property ``no_undefined_behaviour`` on it."""
    from checker.cint import fixed
    from checker.language.declare import Ghost

    bits, words, shifts = False, any(fixed(v.type) for v in si.vars.values()), []
    for base in cls.__mro__:
        if not (isinstance(base, type) and issubclass(base, Spec)) or base is Spec:
            continue
        try:
            f = inspect.getsourcefile(base)
        except (TypeError, OSError):  # a class typed at the prompt: no source to read
            f = None
        if f:
            b, w, sh = _scan_source(f)
            bits, words = bits or b, words or w
            shifts += sh
    if not (bits and words):
        return
    si.c_words = True
    si.shift_lines = tuple(sorted(set(shifts)))
    if not shifts or "ub" in si.vars:
        return
    flag = Ghost(0, type=_UbSite("ub_site"), doc="the line of the first shift whose count is out of range (0: none)")
    flag.name = "ub"
    si.vars["ub"] = flag

    def no_undefined_behaviour(s: Any) -> Any:
        return s.ub == 0

    si.properties.setdefault(UB_PROPERTY, PropertyInfo(
        UB_PROPERTY, no_undefined_behaviour, "invariant", "holds", None,
        "no step shifts by a negative count or by at least the width of its word (C11 6.5.7: undefined "
        "behaviour; UBSAN's shift-out-of-bounds)", si.file, si.line))


class _UbSite(IntType):
    """The line of an undefined shift, shown as such in traces."""

    def show(self, v: int) -> str:
        return "none" if v == 0 else f"shift count out of range at line {v}"


def resolve_params(cls: type, given: dict[str, Any]) -> Params:
    """Parameter values: given ones checked against their domains, the rest
    defaulted, derived ones computed from the values set unless set themselves."""
    si = info(cls)
    unknown = [k for k in given if k not in si.params]
    if unknown:
        raise UsageError(f"{cls.spec_name} has no parameter {', '.join(map(repr, unknown))}; "
                         f"its parameters are: {', '.join(si.params) or '(none)'}")
    values: dict[str, int] = {}
    for n, p in si.params.items():
        if n in given:
            values[n] = given[n]
        elif not p.derived:
            values[n] = p.default

    class _Partial:
        def __getattr__(self, k: str) -> Any:
            if k in values:
                return values[k]
            raise UsageError(f"{cls.spec_name}: a derived parameter reads {k!r}, which is derived "
                             f"later or does not exist")

    for n, p in si.params.items():
        if n not in values:
            values[n] = p.default(_Partial())
    for n, p in si.params.items():
        if not p.valid(values[n]):
            raise UsageError(f"{cls.spec_name}: parameter {n}={values[n]!r} is outside its domain "
                             f"({p.describe_domain()})")
    ordered = {n: values[n] for n in si.params}
    roles: dict[str, range] = {}
    base = 0
    for rname, role in si.roles.items():
        size = ordered[role.count] if isinstance(role.count, str) else role.count
        roles[rname] = range(base, base + size)
        base += size
    return Params(ordered, roles, {n: p.names for n, p in si.params.items() if p.names is not None},
                  tuple(n for n, p in si.params.items() if p.derived and n not in given))


def iter_specs(obj: Any) -> Iterator[type]:
    """Concrete spec classes defined in a module (in source order)."""
    found = []
    for val in vars(obj).values():
        if isinstance(val, type) and issubclass(val, Spec) and val is not Spec and not val.abstract \
                and val.__module__ == obj.__name__:
            found.append(val)
    found.sort(key=lambda c: info(c).line or 0)
    return iter(found)

