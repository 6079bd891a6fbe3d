# SPDX-License-Identifier: GPL-2.0-only
"""A spec at one parameter point as a Promela model that SPIN checks.

The guards, updates and properties are the spec's own code run on Z3
symbols (``checker.prove.encoding.PerN``, as the Z3 backend encodes them),
printed in Promela (``checker.export.terms``).

Structure, chosen so that SPIN's state space is the explorer's:

- one ``active proctype`` and only global variables: one variable (or array)
  per spec variable, with no program counter of the model's own;
- one ``d_step { guard -> update }`` option of a ``do`` loop per step of the
  spec (action, CPU, choice): a d_step is one transition with no
  intermediate state, and returns to the loop's head, so the process's
  control state never varies;
- the initial state set by a first ``d_step`` (one per initial state, as
  options of an ``if``, when the spec has several).

So SPIN stores exactly the explorer's states without symmetry plus one: the
start state before that first d_step (``EXTRA_STATES``). Every invariant is
an assertion on a hidden variable named after it (``inv_read_bound``),
checked in each initial state and after every step that changes the state,
so every reachable state is checked. A deadlock is SPIN's own "invalid end
state": a state where work is done enables a ``d_step`` that changes
nothing, so only a non-terminal state with nothing enabled blocks.
``sometimes`` properties, on request, are assertions of their negation
(``unreached_a_fold_happens``): SPIN reports them violated where they are
reached. With all state global, SPIN's partial-order reduction finds no
independent local steps to prune.

Limits: Promela's ``int`` is 32 bits. Variables wider than that, or
unbounded, are ``int``s: the model is exact while their values stay within
it (constants beyond it are refused; a comparison with such a constant, as
an s64's overflow check, has the same answer for every int). Refused, with
the construct named: wrap-around arithmetic of a word of 32 bits or more,
any other constant beyond 32 bits, division by a state value, reads of
uninitialised variables in the reporting mode (explorer-only).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import z3

from checker.errors import CheckerError
from checker.export.terms import INT_MAX, INT_MIN, Kids, Printer, Untranslatable, shared, symbols
from checker.prove.encoding import PerN
from checker.report.trace import first_paragraph
from checker.language.compile import Model
from checker.language.lint import symbolic_state
from checker.symbolic.term import to_z3, to_z3_bool, to_z3_num
from checker.types import BoolType, CpuIdType, Enum

#: SPIN's stored states minus the explorer's without symmetry: the start state.
EXTRA_STATES = 1
PROCESS = "spec"

_RESERVED = frozenset("""
active assert atomic bit bool break byte c_code c_decl c_expr c_state c_track chan d_step D_proctype do else
empty enabled eval false fi for full get_priority goto hidden if in init inline int len local ltl mtype nempty
never nfull notrace np_ od of pc_value pid print printf printm priority proctype provided run select
set_priority short show skip timeout trace true typedef unless unsigned xr xs always eventually until weak
stronger implies equivalent auto case char const continue default double enum extern float long register
return signed sizeof static struct switch union void volatile while now
""".split())


class NotExportable(CheckerError):
    """A spec construct Promela cannot express; the message names it."""


@dataclass(frozen=True)
class PromelaModel:
    """An exported model and what SPIN's output about it means."""

    spec: str
    params: dict[str, Any]
    text: str
    #: assertion name -> (property name, kind: invariant or sometimes)
    assertions: dict[str, tuple[str, str]] = field(default_factory=dict)
    steps: int = 0
    extra_states: int = EXTRA_STATES


def export_promela(model: Model, *, sometimes: bool = False, expected_violations: bool = False) -> PromelaModel:
    """The Promela model of ``model``: by default an assertion per invariant that must hold, so that
    SPIN reports no error on a correct spec. ``expected_violations=True`` adds the invariants the spec
    expects violated (a bug spec's bug, a bound shown tight), named ``expected_violated_NAME``;
    ``sometimes=True`` each ``sometimes`` property as an assertion SPIN violates where it is reached.
    Raises ``NotExportable`` naming what Promela cannot express."""
    return _Exporter(model, sometimes, expected_violations).build()


class _Exporter:
    def __init__(self, model: Model, sometimes: bool, expected_violations: bool = False):
        self.m = model
        self.want_sometimes = sometimes
        self.want_expected = expected_violations
        self.where = f"{model.name} ({model.params})"
        self._refuse_unsupported()
        self.pern = PerN(model)
        self.s = symbolic_state(model)
        self.pnames = self._promela_names()
        self.slots: dict[str, str] = {}  # Z3 symbol name -> Promela lvalue
        for n in model.var_names:
            if n in model.tupled:
                for c in range(model.arrays.get(n, model.ncpus_total)):
                    self.slots[f"{n}[{c}]"] = f"{self.pnames[n]}[{c}]"
            else:
                self.slots[n] = self.pnames[n]
        self.kids = Kids()
        self.printer = Printer(self.slots, kids=self.kids)
        self.used = set(self.pnames.values())
        self.temps: list[str] = []  # hidden temporaries: shared subterms, swapped values

    # -- what cannot be expressed -------------------------------------------------
    def _refuse(self, what: str) -> NotExportable:
        return NotExportable(f"{self.where} cannot be exported to Promela: {what}",
                             file=self.m.info.file, line=self.m.info.line)

    def _refuse_unsupported(self) -> None:
        m = self.m
        if m.tearing:
            raise self._refuse("a 32-bit kernel's accesses in halves (checker.kernel.tearing) are explorer-only; "
                               "export a point with bits=64")
        if getattr(m, "weak", None) is not None:
            raise self._refuse(f"--memory {m.memory}'s store buffers and views are the explorer's; "
                               "export a point with memory=sc")
        if m.uninit_report:
            raise self._refuse(f"it reports reads of the uninitialised {', '.join(m.uninit_report)} "
                               f"(explorer-only); set its mode parameter to 1 (any value) to export it")
        for n, v in m.vars.items():
            t = v.type
            if v.overflow == "wrap" and t.bits is not None:
                raise self._refuse(f"{n} is a {t.name} with wrap-around arithmetic ({t.bits}-bit word); "
                                   f"Promela's int is 32 bits")
        for s0 in m.initial_states():
            for n, val in zip(m.var_names, s0):
                for x in (val if n in m.tupled else (val,)):
                    if not INT_MIN <= x <= INT_MAX:
                        raise self._refuse(f"{n} starts at {x}, beyond Promela's 32-bit int")

    def _promela_names(self) -> dict[str, str]:
        """Spec variable -> Promela name: the same unless a keyword (of Promela, or of the C that
        pan is compiled from) or a leading underscore (SPIN's own names) forces a change."""
        out: dict[str, str] = {}
        taken = set(self.m.var_names)
        for n in self.m.var_names:
            p = n if not n.startswith("_") else "v" + n
            while p in _RESERVED or (p != n and p in taken):
                p += "_"
            taken.add(p)
            out[n] = p
        return out

    def _fresh(self, base: str) -> str:
        name = base
        while name in self.used or name in _RESERVED:
            name += "_"
        self.used.add(name)
        return name

    def _print(self, term: Any, what: str, printer: Printer | None = None) -> str:
        try:
            return (printer or self.printer)(term)
        except Untranslatable as e:
            raise self._refuse(f"{what} uses {e}") from None

    # -- the model ---------------------------------------------------------------------
    def build(self) -> PromelaModel:
        m = self.m
        self._claims = self._properties()
        steps = self._steps()
        everything = self._check(None)  # in each initial state
        terminal = self._print(self.pern.terminal(self.s), f"the terminal predicate {m.terminal.__name__}")
        assertions = {c.name: (c.prop, c.kind) for c in self._claims}
        lines = self._header(assertions)
        lines += self._declarations()
        lines += [f"hidden byte {a};" for a in assertions]
        lines += [f"hidden int {t};" for t in self.temps]
        lines += ["", f"active proctype {PROCESS}() {{"]
        inits = [self._initial(s0, everything) for s0 in m.initial_states()]
        if len(inits) == 1:
            lines.append(f"  {inits[0]};")
        else:
            lines += ["  if"] + [f"  :: {i}" for i in inits] + ["  fi;"]
        lines.append("  do")
        for comment, guard, body in steps:
            lines.append(f"  /* {comment} */")
            lines.append(f"  :: d_step {{ {guard} -> {body} }}")
        lines.append(f"  /* {m.terminal.__name__}: all work done, a valid end (a d_step that changes nothing) */")
        lines.append(f"  :: d_step {{ {terminal} -> skip }}")
        lines += ["  od", "}", ""]
        return PromelaModel(m.name, m.params.shown(), "\n".join(lines), assertions, len(steps))

    def _header(self, assertions: dict[str, tuple[str, str]]) -> list[str]:
        m = self.m
        out = [f"/* {m.name} at {m.params}",
               f" * Exported by countercheck (python -m checker export {m.name} --to promela) from",
               f" * {m.info.file}.",
               " * One process; each spec step (action, CPU, choice) is one d_step of the do loop, so",
               f" * SPIN stores the explorer's states (without symmetry reduction) plus {EXTRA_STATES}, "
               "the start state.",
               " * Invariants that must hold are asserted in every reachable state (those the spec expects",
               " * violated only with --expected-violations); a deadlock is an invalid end state.",
               " * Check with: spin -o2 -a FILE.pml && gcc -O2 -DSAFETY -o pan pan.c && ./pan -c0",
               " * (-o2 keeps write-only variables in the state vector, as the explorer does.)",
               " * Promela's int is 32 bits: wider spec variables are exact while they stay within it.",
               " *"]
        props = {p.name: p for p in m.properties}
        for a, (prop, kind) in assertions.items():
            p = props[prop]
            note = ("violated where it is reached" if kind == "sometimes"
                    else "the spec expects it violated" if p.expect == "violated" else "must hold")
            out.append(f" * {a}: {kind} {prop} ({note}): {first_paragraph(p.doc)}".replace("*/", "* /"))
        out.append(" */")
        return out

    def _declarations(self) -> list[str]:
        m = self.m
        out = []
        for n in m.var_names:
            v = m.vars[n]
            t = _ptype(v.type)
            doc = f"  /* {first_paragraph(v.doc).replace('*/', '* /')} */" if v.doc else ""
            if n in m.tupled:
                size = m.arrays.get(n, m.ncpus_total)
                if size == 0:
                    continue  # an empty array: nothing reads it
                out.append(f"{t} {self.pnames[n]}[{size}];{doc}")
            else:
                out.append(f"{t} {self.pnames[n]};{doc}")
        return out

    def _initial(self, s0: tuple, check: str) -> str:
        m = self.m
        sets = []
        for n, val in zip(m.var_names, s0):
            if n in m.tupled:
                sets += [f"{self.pnames[n]}[{c}] = {_num(x)}" for c, x in enumerate(val) if x]
            elif val:
                sets.append(f"{self.pnames[n]} = {_num(val)}")
        body = "; ".join(sets + ([check] if check else [])) or "skip"
        return f"d_step {{ {body} }}"

    def _properties(self) -> list["_Claim"]:
        """Each property as an assertion; an invariant keeps its top-level conjuncts apart, so that a
        step re-checks only the conjuncts that read what it changed (the others held before the step,
        in a state that was itself checked, and still read the same values)."""
        m = self.m
        props = [p for p in m.invariants if p.expect != "violated" or self.want_expected]
        props += list(m.sometimes) if self.want_sometimes else []
        out = []
        for p in props:
            term = to_z3_bool(p.fn(self.s))
            what = f"the {p.kind} {p.name}"
            if p.kind == "invariant":
                parts = term.children() if z3.is_and(term) else [term]
                name = self._fresh(f"{'expected_violated' if p.expect == 'violated' else 'inv'}_{p.name}")
                self._print(term, what)  # refuse what cannot be printed here, naming the property
                out.append(_Claim(name, p.name, p.kind, False, [(c, symbols(c, self.kids)) for c in parts]))
            else:
                name = self._fresh(f"unreached_{p.name}")
                self._print(term, what)
                out.append(_Claim(name, p.name, p.kind, True, [(term, symbols(term, self.kids))]))
        return out

    def _check(self, changed: set[str] | None) -> str:
        """The assertions after a step that changed the slots ``changed`` (None: every state slot);
        subterms the claims share are computed once, into hidden temporaries."""
        chosen = []
        for c in self._claims:
            parts = [term for term, reads in c.parts if changed is None or reads & changed]
            if parts:
                chosen.append((c, parts))
        out: list[str] = []
        printer = Printer(self.slots, {}, self.kids)
        for k, sub in enumerate(shared([t for _, parts in chosen for t in parts], self.kids)):
            t = self._temp(k)
            out.append(f"{t} = {self._print(sub, 'a property', printer)}")
            printer.aliases[sub.get_id()] = t
        for c, parts in chosen:
            texts = [self._print(t, c.prop, printer) for t in parts]
            value = texts[0] if len(texts) == 1 else "(" + " && ".join(texts) + ")"
            out.append(f"{c.name} = {'!' if c.negate else ''}{value}; assert({c.name})")
        return "; ".join(out)

    def _steps(self) -> list[tuple[str, str, str]]:
        out = []
        for tr in self.pern.transitions():
            what = f"{tr.name}" + (f" on cpu{tr.cpu}" if tr.cpu is not None else "")
            guard, new = self.pern.fire(tr, self.s)
            if z3.is_false(guard):
                continue
            gtext = self._print(guard, f"the guard of {what}")
            changes = self._changes(new)
            body = self._assignments(changes, what)
            check = self._check({slot for slot, _ in changes}) if changes else ""
            body += f"; {check}" if check else ""
            args = ", ".join(f"{k}={v}" for k, v in tr.choices().items())
            out.append((f"{tr.name}({args})" + (f" cpu{tr.cpu}" if tr.cpu is not None else ""), gtext, body))
        return out

    def _changes(self, new: tuple) -> list[tuple[str, z3.ExprRef]]:
        m = self.m
        out = []
        for n, old, val in zip(m.var_names, self.s, new):
            olds = old if n in m.tupled else (old,)
            vals = val if n in m.tupled else (val,)
            for c, (a, b) in enumerate(zip(olds, vals)):
                za, zb = to_z3(a), to_z3_num(b)
                if not za.eq(zb):
                    out.append((f"{n}[{c}]" if n in m.tupled else n, zb))
        return out

    def _assignments(self, assigns: list[tuple[str, z3.ExprRef]], what: str) -> str:
        """Sequential assignments with the simultaneous meaning of the spec's update: each reads the
        values before the step. Subterms used more than once are computed first into hidden
        temporaries; then each assignment is placed before any other that overwrites what it reads,
        and a cycle (a swap) goes through temporaries too."""
        if not assigns:
            return "skip"
        parts: list[str] = []
        printer = Printer(self.slots, {}, self.kids)
        for k, sub in enumerate(shared([term for _, term in assigns], self.kids)):
            t = self._temp(k)
            parts.append(f"{t} = {self._print(sub, f'the update by {what}', printer)}")
            printer.aliases[sub.get_id()] = t
        texts = {slot: self._print(term, f"the update of {slot} by {what}", printer) for slot, term in assigns}
        reads = {slot: symbols(term, self.kids) for slot, term in assigns}
        order: list[str] = []
        left = [slot for slot, _ in assigns]
        while left:
            ready = [a for a in left if not any(a in reads[b] for b in left if b != a)]
            if not ready:
                break
            order.append(ready[0])
            left.remove(ready[0])
        swap = [self._temp(len(printer.aliases) + i) for i in range(len(left))]
        parts += [f"{t} = {texts[a]}" for t, a in zip(swap, left)]
        parts += [f"{self.slots[a]} = {texts[a]}" for a in order]
        parts += [f"{self.slots[a]} = {t}" for t, a in zip(swap, left)]
        return "; ".join(parts)

    def _temp(self, i: int) -> str:
        while len(self.temps) <= i:
            self.temps.append(self._fresh(f"tmp{len(self.temps)}"))
        return self.temps[i]


@dataclass(frozen=True)
class _Claim:
    """One assertion: a property's parts as (Z3 term, symbols read)."""

    name: str
    prop: str
    kind: str
    negate: bool  # a sometimes property: the assertion is that it is not reached
    parts: list


def _ptype(t: Any) -> str:
    """The narrowest Promela type that holds every value of the declared type."""
    if isinstance(t, BoolType):
        return "bit"
    if isinstance(t, Enum) and len(t.names) <= 256:
        return "byte"
    if isinstance(t, CpuIdType):
        return "short"  # a CPU id or NOBODY (-1)
    return "int"


def _num(x: int) -> str:
    return str(x) if x >= 0 else f"({x})"
