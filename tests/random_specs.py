# SPDX-License-Identifier: GPL-2.0-only
"""Small random specs, as real spec files, for differential tests of the engines.

A generated spec has a symmetric role ``cpus`` (2 or 3 CPUs), sometimes a
second one, ``helpers`` (2 CPUs), and a fixed one-CPU role ``watcher``, the
roles declared in a random order (so groups start at any CPU id), and a few typed
variables: an Int ``x`` and a per-CPU Int ``local`` (bounded by the guards
of every step that writes them), and some of a Bool ``f``, an Enum ``e``, a
CPU id ``owner``, a 2-bit word ``w`` that wraps (no guard bounds it), a
per-CPU Bool ``flag`` and Enum ``pc``, a per-CPU CPU id
``mine`` of the symmetric CPUs (which sends states down the brute path of
the canonical form) and ``seen`` of the watcher (a fixed CPU's slot naming a
symmetric CPU: part of the sort key). Its steps are random guards and
effects built from the spec vocabulary (``when``, ``If``, ``And``, ``Or``,
``Not``, ``+ -``, comparisons; some steps choose a value ``k``, from a tuple
or a ``Between``), symmetric by construction: a CPU reads and
writes its own slots and compares CPU ids only for equality. It has an
invariant, a ``sometimes`` and a ``@terminal`` predicate, random too: each
engine must give the same verdicts, whatever they are. With ``liveness=True``
the steps are also given random fairness (none, weak or strong) and the spec
random liveness properties: ``eventually`` (fair or not, once or ``always``)
and ``leads_to`` (to a state, or to a step); drawn after everything else, so
the rest of the spec is the one drawn without them.

Use::

    from random_specs import random_models
    @given(model=random_models())
    def test_engines_agree(model): ...

or, without Hypothesis, ``for model in sample_models(20): ...``. The source
of each spec is ``model.source`` (printed by Hypothesis on a failure), and
the file it was loaded from ``model.info.file``.
"""
from __future__ import annotations

import atexit
import hashlib
import random
import shutil
import tempfile
from pathlib import Path
from typing import Any, Callable, Iterator, Sequence

from hypothesis import strategies as st

from checker.loader import specs_in_file
from checker.language.compile import Model
from checker.language.lint import lint

PC_NAMES = ("p0", "p1", "p2")
_DIR = Path(tempfile.mkdtemp(prefix="random_specs_"))
atexit.register(shutil.rmtree, _DIR, ignore_errors=True)


class Drawer:
    """The random choices a spec is built from: ``pick`` one of a sequence."""

    def __init__(self, pick: Callable[[Sequence[Any]], Any]):
        self.pick = pick

    def int(self, lo: int, hi: int) -> int:
        return self.pick(range(lo, hi + 1))

    def chance(self, p: int = 2) -> bool:
        """True one time in ``p``."""
        return self.pick(range(p)) == 0


class _Gen:
    """One spec's variables and the expressions over them."""

    def __init__(self, d: Drawer):
        self.d = d
        self.watcher = d.chance()
        self.helpers = d.chance(3)  # a second symmetric role: renamings of two groups at once
        self.vars = {"x", "local"}
        self.k = False  # a step's choice ``k`` is in scope
        for v in ("f", "e", "owner", "w"):
            if d.chance():
                self.vars.add(v)
        per = ["flag", "pc", "mine"] + (["seen"] if self.watcher else [])
        per = [per.pop(d.int(0, len(per) - 1)) for _ in range(len(per))]  # in a random order
        for v in per:
            # at most two per-CPU variables besides local: state spaces stay small
            if len(self.vars & {"flag", "pc", "mine", "seen"}) < (1 if self.helpers else 2) and d.chance():
                self.vars.add(v)
        if "seen" in self.vars or "mine" in self.vars:
            self.vars.add("owner")  # what they copy
        self.xlo, self.xhi = d.pick((-1, 0)), d.pick((2, 3))
        self.llo, self.lhi = d.pick((-1, 0)), d.pick((1, 2))

    # -- expressions: ``cpu`` is the name of the CPU in scope (None in a global step) --
    def int_term(self, cpu: str | None, depth: int = 2) -> str:
        d = self.d
        opts = ["const", "x"] + (["local"] if cpu else []) + (["sum"] if not cpu else [])
        opts += ["w"] * ("w" in self.vars) + ["k", "k"] * self.k
        if depth > 0:
            opts += ["add", "sub", "if"]
        k = d.pick(opts)
        if k == "const":
            return str(d.int(-1, 2))
        if k == "x":
            return "s.x"
        if k in ("w", "k"):
            return "s.w" if k == "w" else "k"
        if k == "local":
            return f"s.local[{cpu}]"
        if k == "sum":
            return "Sum(s.local)"
        if k == "if":
            return f"If({self.bool_term(cpu, 0)}, {self.int_term(cpu, depth - 1)}, {self.int_term(cpu, depth - 1)})"
        op = "+" if k == "add" else "-"
        return f"({self.int_term(cpu, depth - 1)} {op} {self.int_term(cpu, depth - 1)})"

    def atom(self, cpu: str | None) -> str:
        d = self.d
        v = self.vars
        opts = ["cmp", "cmp"]
        opts += ["f"] * ("f" in v) + ["e"] * ("e" in v) + ["owner_free"] * ("owner" in v)
        if cpu:
            opts += ["flag"] * ("flag" in v) + ["pc"] * ("pc" in v) + ["owner_me"] * ("owner" in v)
            opts += ["mine"] * ("mine" in v) + ["seen"] * ("seen" in v)
        k = d.pick(opts)
        if k == "cmp":
            left = self.int_term(cpu, 1)
            if left.lstrip("-").isdigit():
                left = "s.x"  # a comparison of two constants would be a constant guard
            return f"{left} {d.pick(('<', '<=', '==', '!='))} {self.int_term(cpu, 1)}"
        if k == "f":
            return f"s.f == {d.int(0, 1)}"
        if k == "e":
            return f"s.e == PC.{d.pick(PC_NAMES)}"
        if k == "owner_free":
            return d.pick(("s.owner == NOBODY", "s.owner != NOBODY"))
        if k == "owner_me":
            return d.pick((f"s.owner == {cpu}", f"s.owner != {cpu}"))
        if k == "flag":
            return f"s.flag[{cpu}] == {d.int(0, 1)}"
        if k == "pc":
            return f"s.pc[{cpu}] == PC.{d.pick(PC_NAMES)}"
        if k == "mine":
            return d.pick((f"s.mine[{cpu}] == NOBODY", f"s.mine[{cpu}] == s.owner", f"s.mine[{cpu}] == {cpu}"))
        return d.pick((f"s.seen[{cpu}] == NOBODY", f"s.seen[{cpu}] == s.owner"))

    def bool_term(self, cpu: str | None, depth: int = 1) -> str:
        d = self.d
        k = d.pick(("atom", "atom", "and", "or", "not") if depth > 0 else ("atom",))
        if k == "atom":
            return self.atom(cpu)
        if k == "not":
            return f"Not({self.bool_term(cpu, depth - 1)})"
        return f"{k.capitalize()}({self.bool_term(cpu, depth - 1)}, {self.bool_term(cpu, depth - 1)})"

    def prop(self) -> str:
        """A predicate of the state, symmetric: over shared values, or over every CPU of the role."""
        d = self.d
        k = d.pick(("plain", "all", "any"))
        if k == "plain":
            return self.bool_term(None)
        return f"{'AllOf' if k == 'all' else 'AnyOf'}({self.bool_term('c')} for c in s.cpus)"

    # -- steps -------------------------------------------------------------------
    def int_effect(self, var: str, cpu: str | None) -> str:
        """A new value for ``x`` or ``local``: mostly a step up or down (counters), sometimes anything."""
        d = self.d
        cur = "s.x" if var == "x" else f"s.local[{cpu}]"
        other = f"s.local[{cpu}]" if var == "x" and cpu else "s.x"
        k = d.pick(("inc", "inc", "dec", "other", "any"))
        if k == "inc":
            return f"{cur} + 1"
        if k == "dec":
            return f"{cur} - 1"
        if k == "other":
            return f"{other} + {d.int(-1, 1)}"
        return self.int_term(cpu)

    def step(self, role: str | None, first: str | None = None) -> str:
        """``return when(guard, effects)`` for one action of ``role`` (None: a global step), its ``first``
        effect given: ``local`` (count up), ``take`` or ``release`` the owner, or ``seen`` (record the owner),
        so that something happens."""
        d = self.d
        cpu = "cpu" if role else None
        writable = ["x", "f", "e", "owner", "w"] + (["local", "flag", "pc"] if role else [])
        writable += ["mine"] if role == "cpus" else ["seen"] if role == "watcher" else []
        writable = [w for w in writable if w in self.vars]
        targets = [] if first is None else ["owner" if first in ("take", "release") else first]
        for _ in range(d.int(0 if first else 1, 2)):
            w = d.pick(writable)
            if w not in targets:
                targets.append(w)
        guard = [self.bool_term(cpu, d.int(0, 1))] if d.chance(3) else []
        effects = []
        for w in targets:
            if w in ("x", "local"):
                t = f"s.local[{cpu}] + 1" if first == w == "local" else self.int_effect(w, cpu)
                lo, hi = (self.xlo, self.xhi) if w == "x" else (self.llo, self.lhi)
                guard.append(f"{lo} <= {t}")
                guard.append(f"{t} <= {hi}")
                effects.append(f"x={t}" if w == "x" else f"local={{cpu: {t}}}")
            elif w == "w":  # a 2-bit word that wraps: no guard keeps it in range
                effects.append(f"w={d.pick(('s.w + 1', 's.w - 1', 's.w + ' + self.int_term(cpu, 1)))}")
            elif w in ("f", "flag"):
                cur = "s.f" if w == "f" else f"s.flag[{cpu}]"
                b = f"{cur} == 0" if d.chance() else self.bool_term(cpu, 0)  # a toggle, or a condition
                effects.append(f"f={b}" if w == "f" else f"flag={{cpu: {b}}}")
            elif w in ("e", "pc"):
                e = (f"PC.{d.pick(PC_NAMES)}" if d.chance() else
                     f"If({self.bool_term(cpu, 0)}, PC.{d.pick(PC_NAMES)}, PC.{d.pick(PC_NAMES)})")
                effects.append(f"e={e}" if w == "e" else f"pc={{cpu: {e}}}")
            elif w == "owner":
                if first == "take" or first is None and cpu and d.chance():
                    guard.append("s.owner == NOBODY")
                    effects.append(f"owner={cpu}")
                else:
                    guard.append(f"s.owner == {cpu}" if cpu else "s.owner != NOBODY")
                    effects.append("owner=NOBODY")
            else:  # mine, seen: the CPU records the owner, itself or no CPU
                what = ("s.owner" if first == w else
                        d.pick(("s.owner", "NOBODY", "cpu") if w == "mine" else ("s.owner", "NOBODY")))
                effects.append(f"{w}={{cpu: {what}}}")
        if not guard:
            guard.append(self.atom(cpu))
        g = guard[0] if len(guard) == 1 else f"And({', '.join(guard)})"
        return f"return when({g}, {', '.join(effects)})"

    def source(self, name: str, liveness: bool = False) -> str:
        d = self.d
        v = self.vars
        lines = [
            f'"""{name}: a spec generated by tests/random_specs.py."""',
            "from checker import (NOBODY, AllOf, And, AnyOf, Between, Bool, CpuId, Enum, If, Not, Or, Param, PerCpu, "
            "Role,",
            "                     Shared, Spec, Sum, action, invariant, sometimes, terminal, when)",
            "from checker.types import IntType",
            "",
            f"PC = Enum({', '.join(map(repr, PC_NAMES))}, name=\"pc\")",
            "",
            "",
            f"class {name}(Spec):",
            '    """A generated spec: random steps of a symmetric role over a few typed variables."""',
            "",
            '    kernel = "none: generated by tests/random_specs.py for differential tests"',
            f"    ncpus = Param({2 if self.helpers else d.pick((2, 2, 3))}, domain=range(1, 5))",
        ]
        roles = ['    cpus = Role("ncpus", symmetric=True)']
        if self.watcher:
            lines.append("    watchers = Param(1, domain=(0, 1))")
            roles.insert(d.int(0, len(roles)), '    watcher = Role("watchers")')
        if self.helpers:
            lines.append("    nhelpers = Param(2, domain=range(1, 4))")
            roles.insert(d.int(0, len(roles)), '    helpers = Role("nhelpers", symmetric=True)')
        lines += roles
        lines.append("    x = Shared(0)")
        if "f" in v:
            lines.append("    f = Shared(False, type=Bool)")
        if "e" in v:
            lines.append("    e = Shared(PC.p0, type=PC)")
        if "owner" in v:
            lines.append("    owner = Shared(NOBODY, type=CpuId)")
        if "w" in v:
            lines.append('    w = Shared(0, type=IntType("u2", 2, False), overflow="wrap")')
        lines.append("    local = PerCpu(0)")
        if "flag" in v:
            lines.append("    flag = PerCpu(False, type=Bool)")
        if "pc" in v:
            lines.append("    pc = PerCpu(PC.p0, type=PC)")
        if "mine" in v:
            lines.append('    mine = PerCpu(NOBODY, type=CpuId, role="cpus")')
        if "seen" in v:
            lines.append('    seen = PerCpu(NOBODY, type=CpuId, role="watcher")')
        steps: list[tuple[str | None, str | None]] = [("cpus", "local")]
        if "owner" in v:
            steps += [("cpus", "take"), ("cpus", "release")]
        steps += [("cpus", None)] * d.int(1, 2)
        if self.helpers:
            steps += [("helpers", "local")] + [("helpers", None)] * d.int(0, 1)
        if "seen" in v:
            steps.append(("watcher", "seen"))
        elif self.watcher and d.chance():
            steps.append(("watcher", None))
        steps += [(None, None)] * d.chance(3)
        for n, (role, first) in enumerate(steps):
            # some steps choose a value k, as add_batch chooses its amount: (-1, 1) or Between(0, 2)
            self.k = role is not None and d.chance(3)
            args = ("s, cpu" if role else "s") + (", k" if self.k else "")
            choose = f", choose={{'k': {d.pick(('(-1, 1)', 'Between(0, 2)'))}}}" if self.k else ""
            deco = f'@action(role="{role}"{choose})' if role else "@action()"
            lines += ["", f"    {deco}", f"    def step{n}({args}):", '        """a generated step"""',
                      f"        {self.step(role, first)}"]
            self.k = False
        lines += ["", "    @invariant", "    def inv(s):", f"        return {self.prop()}",
                  "", "    @sometimes", "    def some(s):", f"        return {self.prop()}",
                  "", "    @terminal", "    def done(s):", f"        return {self.prop()}", ""]
        if liveness:
            lines = self.liveness(lines)
        return "\n".join(lines)

    def liveness(self, lines: list[str]) -> list[str]:
        """Random fairness on the steps, and liveness properties after the others (drawn last)."""
        d = self.d
        out = []
        for line in lines:
            if line.startswith("    @action(") and (f := d.pick((None, "weak", "strong"))):
                line = line[:-1] + (f'fair="{f}")' if line.endswith("()") else f', fair="{f}")')
            out.append(line)
        out[2] = out[2].replace("action,", "action, eventually, leads_to,")
        fair = [d.pick(("True", "False")) for _ in range(4)]
        then = self.prop().replace("s.", "t.")
        out += ["", f"    @eventually(fair={fair[0]})", "    def ev(s):", f"        return {self.prop()}",
                "", f"    @eventually(always=True, fair={fair[1]})", "    def ev_always(s):",
                f"        return {self.prop()}",
                "", f"    @leads_to(fair={fair[2]})", "    def lt(s):",
                f"        return {self.prop()}, {self.prop()}",
                "", f"    @leads_to(fair={fair[3]})", "    def lt_step(s):",
                f"        return {self.prop()}, lambda s, t: And({self.prop()}, {then})", ""]
        return out


def spec_source(d: Drawer, liveness: bool = False) -> str:
    """A spec file's text, from the choices ``d`` makes (``liveness``: with liveness properties too)."""
    gen = _Gen(d)
    probe = gen.source("RandomSpec", liveness)
    return probe.replace("RandomSpec", "Random" + hashlib.sha256(probe.encode()).hexdigest()[:12])


def load(source: str) -> Model:
    """The spec of ``source`` at its default point, loaded from a file as a user's spec is, and linted."""
    name = source.split("class ", 1)[1].split("(", 1)[0]
    path = _DIR / f"{name.lower()}.py"
    if not path.exists():
        path.write_text(source)
    (cls,) = specs_in_file(str(path))
    model = Model(cls)
    lint(model)
    model.source = source  # type: ignore[attr-defined]
    return model


@st.composite
def spec_sources(draw: Any, liveness: bool = False) -> str:
    return spec_source(Drawer(lambda xs: draw(st.sampled_from(xs))), liveness)


def random_models(liveness: bool = False) -> st.SearchStrategy[Model]:
    """Models of random small specs (a Hypothesis strategy); ``liveness``: with liveness properties."""
    return spec_sources(liveness).map(load)


def sample_models(count: int, seed: int = 0, liveness: bool = False) -> Iterator[Model]:
    """``count`` models of random small specs, the same ones for the same seed."""
    rng = random.Random(seed)
    for _ in range(count):
        yield load(spec_source(Drawer(lambda xs: rng.choice(list(xs))), liveness))
