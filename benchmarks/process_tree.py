# SPDX-License-Identifier: GPL-2.0-only
"""percpu_counter_tree's hand-written pc machine (tests/pc_machines/, kept as a test since the port replaced it)
against the built-in process-function port (issue 28): states, verdicts and seconds per memory model.

    python benchmarks/process_tree.py [--out FILE]

At the explore sweeps' two-CPU points of each design and latest's three-CPU point (a level of items), one task
per CPU, under sc, tso and lkmm, on the interpreter: the hand-written spec's distinct states and seconds, the port's, and the properties whose verdict
differs from sc's, or that sc does not have: ``store_buffer_fills`` and ``history_fills`` are the weak models' own
witnesses (their buffers are used); none of the spec's own properties is expected to change (each is a predicate
on the state, and every shared access of the tree is an atomic RMW). Also the size of the port's step code against the C it models. Figures are measured,
not asserted: tests/test_process_tree.py pins the equality of states, transitions and verdicts.
"""
from __future__ import annotations

import argparse
import ast
import inspect
import os
import platform
import sys
import textwrap
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))  # the pc machine kept as a test

from checker.explore import explore  # noqa: E402
from checker.language.compile import Model  # noqa: E402
from checker.ordering.declare import MEMORY  # noqa: E402
from checker.specs.percpu_counter_tree import DESIGN, PercpuCounterTree  # noqa: E402
from pc_machines.percpu_counter_tree import PercpuCounterTree as PcMachine  # noqa: E402

POINTS = [dict(design=d, ncpus=2, tasks=1, ops=2) for d in (DESIGN.latest, DESIGN.noskip, DESIGN.v6)] \
    + [dict(design=DESIGN.latest, ncpus=3, tasks=1, ops=1)]

#: non-blank, non-comment lines of the C the port models (linux-mm 23b86b4b6be9): percpu_counter_tree_add()'s body
#: (7) and percpu_counter_tree_add_slowpath()'s (25)
C_LINES = {"percpu_counter_tree_add": 7 + 25}


def run(cls: type, params: dict, memory: str):
    t0 = time.process_time()
    r = explore(Model(cls, cls(memory=getattr(MEMORY, memory), **params).params))
    assert r.complete
    return r, time.process_time() - t0


def step_lines(fn) -> int:
    """The function's code lines after its docstring (blank lines and comments left out)."""
    src = textwrap.dedent(inspect.getsource(fn))
    node = ast.parse(src).body[0]
    start = node.body[1].lineno if isinstance(node.body[0], ast.Expr) else node.body[0].lineno
    body = src.splitlines()[start - 1:]
    return sum(1 for line in body if line.strip() and not line.strip().startswith("#"))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", type=Path)
    out_path = ap.parse_args().out
    lines = [f"# {platform.python_version()} on {platform.machine()}, load {os.getloadavg()[0]:.1f} "
             f"(shared machine, {os.cpu_count()} cores)",
             f"{'point':34} {'memory':6} {'hand states':>11} {'port states':>11} {'hand s':>7} {'port s':>7}  "
             f"verdicts changed from sc"]
    for params in POINTS:
        base = None
        for memory in ("sc", "tso", "lkmm"):
            h, th = run(PcMachine, params, memory)
            p, tp = run(PercpuCounterTree, params, memory)
            assert (h.states, h.transitions) == (p.states, p.transitions)
            verdicts = {n: o.verdict for n, o in p.outcomes.items()}
            base = base or verdicts
            changed = sorted(n for n in verdicts if verdicts[n] != base.get(n))
            name = ",".join(f"{k}={getattr(v, 'name', v)}" for k, v in params.items())
            lines.append(f"{name:34} {memory:6} {h.states:11,} {p.states:11,} {th:7.2f} {tp:7.2f}  "
                         f"{', '.join(changed) or 'none'}")
    n = step_lines(PercpuCounterTree.__dict__["percpu_counter_tree_add"])
    helpers = sum(step_lines(getattr(PercpuCounterTree, h)) for h in ("next_level", "item_of", "level_carry"))
    lines.append(f"percpu_counter_tree_add: {n} step lines / {C_LINES['percpu_counter_tree_add']} C lines = "
                 f"{n / C_LINES['percpu_counter_tree_add']:.2f}; with next_level, item_of, level_carry "
                 f"({helpers} lines): {(n + helpers) / C_LINES['percpu_counter_tree_add']:.2f}")
    for f in ("tests/pc_machines/percpu_counter_tree.py", "specs/percpu_counter_tree.py"):
        lines.append(f"{f}: {len((ROOT / f).read_text().splitlines())} lines")
    text = "\n".join(lines) + "\n"
    print(text, end="")
    if out_path:
        out_path.write_text(text)


if __name__ == "__main__":
    main()
