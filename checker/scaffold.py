# SPDX-License-Identifier: GPL-2.0-only
"""``python -m checker new NAME``: a commented starter spec that verifies as it is.

The starter is a small per-CPU counter written as a process function (its
kernel function, whose primitives are the steps) with a fold under a lock:
enough to show the steps, a terminal state, an invariant with its
``sometimes``, and a Z3 proof for every CPU count with its inductive
strengthening. tests/test_new.py verifies it on both backends.
"""
from __future__ import annotations

import argparse
import keyword
import re
import sys
from pathlib import Path

from checker.errors import UsageError
from checker.invocation import invoked_as

#: A spec name is snake_case: the class name is its CamelCase, and back again.
NAME_RE = re.compile(r"[a-z][a-z0-9]*(_[a-z0-9]+)*")
#: Module names a spec file must not take: in the working directory it would shadow them.
SHADOWED = frozenset({"checker", "specs", "models", "z3", "networkx", "pytest", "hypothesis"})

TEMPLATE = '''\
# SPDX-License-Identifier: GPL-2.0-only
"""{name}: a per-CPU counter, as a countercheck spec.

Written by `python -m checker new {name}`; it verifies as it is:

    python -m checker verify {file}                   # explore, then prove with Z3
    python -m checker verify {file} --mode explore    # only the exhaustive explorer

Change it into the code you model. The guide, docs/spec-authoring.md in the
countercheck repository, walks through every part of it.
"""
from checker import (NOBODY, AllOf, And, Ghost, Implies, Lock, Or, Param, PerCpu, Role, Shared, Spec, Sum,
                     invariant, sometimes, terminal)
from checker.language.process import at, process


class {cls}(Spec):
    """A toy eager counter: this_cpu_inc(), and a fold under the lock at batch."""

    kernel = "modelled on lib/percpu_counter.c (name the function and kernel version you model)"

    # Parameters. `explore` is the explorer's sweep (every state, small sizes); `prove` is the Z3
    # sweep: a range or "symbolic" is proved for every value at once.
    ncpus = Param(2, domain=range(1, 8193), explore=(1, 2, 3), prove=range(1, 8193), doc="CPUs")
    batch = Param(2, domain=range(1, 100), prove=("symbolic",), doc="fold threshold")
    adds = Param(2, domain=range(0, 10), prove=("symbolic",), doc="increments per CPU")

    cpus = Role("ncpus", symmetric=True)  # interchangeable CPUs: symmetry reduction for free

    # State: one variable per kernel field. PerCpu has a slot per CPU; Ghost is not kernel state.
    total = Shared(0)                     # fbc->count
    lock = Lock()                         # fbc->lock: the holder's CPU id, or NOBODY
    local = PerCpu(0)                     # *this_cpu_ptr(fbc->counters)
    left = PerCpu(lambda p: p.adds)       # calls still to make: keeps every run finite
    exact = Ghost(0)                      # the true count, for the properties to compare with

    # The kernel function, written as the C reads: each k.<primitive>(...) is one atomic step, and so is
    # a `with k.atomic():` block. The checker turns it into actions (one per way through a step), a
    # program counter cpus_pc and a register per local that lives across a step (cpus_count).
    # Write your kernel functions here; docs/spec-authoring.md lists what a process function may do.

    @process(role="cpus", calls="left")
    def percpu_counter_inc(k, s, cpu):
        """count = this_cpu_read() + 1; below batch: this_cpu_write(); else fold under fbc->lock."""
        with k.atomic():                  # interrupts off: nothing else runs on this CPU meanwhile
            count = k.raw_cpu_read(s.local) + 1
            if count < s.batch:
                k.this_cpu_write(s.local, count)
                s.exact += 1
                return
        k.raw_spin_lock(s.lock)
        with k.atomic():                  # fbc->count += count; local = 0; raw_spin_unlock()
            s.total += count
            k.this_cpu_write(s.local, 0)
            s.exact += 1
            k.raw_spin_unlock(s.lock)

    @terminal
    def done(s):
        """Every run ends here; a state where nothing can run and this is false is a deadlock."""
        return AllOf([And(s.left[c] == 0, s.cpus_pc[c] == 0) for c in s.cpus])

    # Properties. Add your invariants here, each with a @sometimes showing its interesting case
    # happens. inductive=True marks the strengthening that the Z3 proof assumes and proves.

    sum_bounds = {{"local": lambda s: (0, s.batch - 1)}}  # per-CPU bounds for Sum() in the proof

    @invariant(role="cpus", inductive=True)
    def local_in_range(s, cpu):
        """Each local stays in 0..batch-1."""
        return And(s.local[cpu] >= 0, s.local[cpu] <= s.batch - 1)

    @invariant(role="cpus", inductive=True)
    def waiting_holds_its_count(s, cpu):
        """Between its decision and its fold a CPU holds count = local + 1 (interrupts are off)."""
        waiting = at(s, cpu, "percpu_counter_inc", "raw_spin_lock")  # a control point: before this primitive
        return Implies(Or(waiting, s.cpus_pc[cpu] != 0), s.cpus_count[cpu] == s.local[cpu] + 1)

    @invariant(inductive=True)
    def nothing_lost(s):
        """Every increment is in the total or in a local."""
        return s.total + Sum(s.local) == s.exact

    @invariant
    def read_error_bounded(s):
        """Reading fbc->count alone is off by at most ncpus * (batch - 1)."""
        return s.exact - s.total <= s.ncpus * (s.batch - 1)

    @sometimes
    def a_fold_happens(s):
        return s.total > 0
'''


def class_name(name: str) -> str:
    """The CamelCase class name of a snake_case spec name."""
    return "".join(part.capitalize() for part in name.split("_"))


def check_name(name: str) -> None:
    """A spec name: snake_case, not a Python keyword, not a module a spec file would shadow."""
    if not NAME_RE.fullmatch(name) or keyword.iskeyword(name):
        suggestion = re.sub(r"_+", "_", re.sub(r"[^a-z0-9]+", "_", name.lower())).strip("_")
        hint = f", e.g. {suggestion}" if suggestion and NAME_RE.fullmatch(suggestion) else ""
        raise UsageError(f"new {name!r}: a spec name is snake_case (lower-case letters, digits and single "
                         f"underscores, starting with a letter){hint}")
    if name in SHADOWED or name in sys.stdlib_module_names:
        raise UsageError(f"new {name!r}: a file {name}.py would shadow the module {name!r} when run from its "
                         f"folder; choose another name, e.g. {name}_counter")


def render(name: str, file: str) -> str:
    """The starter spec's text for ``name``, saved as ``file``."""
    check_name(name)
    return TEMPLATE.format(name=name, cls=class_name(name), file=file)


def add_arguments(p: argparse.ArgumentParser) -> None:
    """The ``new`` command's options."""
    p.add_argument("name", metavar="NAME", help="the spec's name, snake_case (the class is its CamelCase)")
    p.add_argument("--output", metavar="FILE", help="where to write it (default NAME.py); never overwritten")


def main(args: argparse.Namespace) -> int:
    """``new``: write a starter spec that verifies as it is (never over an existing file); the exit code."""
    check_name(args.name)
    path = Path(args.output or f"{args.name}.py")
    if path.suffix != ".py":
        raise UsageError(f"--output {path}: a spec file ends in .py")
    text = render(args.name, str(path))
    try:
        with open(path, "x", encoding="utf-8") as f:  # "x": refuse to overwrite, atomically
            f.write(text)
    except FileExistsError:
        raise UsageError(f"{path} exists; not overwriting it (choose another NAME or --output FILE)") from None
    except OSError as e:
        raise UsageError(f"cannot write {path}: {e.strerror}") from None
    print(f"wrote {path}: the spec {args.name} ({class_name(args.name)}). Check it with\n"
          f"    {invoked_as()} verify {path}")
    return 0
