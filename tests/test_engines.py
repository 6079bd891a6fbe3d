# SPDX-License-Identifier: GPL-2.0-only
"""The engine seam: every engine behind one interface, below ``verify``, with no import cycles."""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

from checker import engines
from checker.engines import Limits, Request
from checker.simulate.checks import SimulateOptions
from checker.language.model import resolve_params
from checker.specs.percpu_eager import PercpuEager

ROOT = Path(__file__).resolve().parent.parent / "checker"


def _imports(path: Path) -> set[str]:
    out = set()
    for n in ast.walk(ast.parse(path.read_text())):
        if isinstance(n, ast.ImportFrom) and n.module and n.level == 0:
            out.add(n.module)
            out.update(f"{n.module}.{a.name}" for a in n.names)
        elif isinstance(n, ast.Import):
            out.update(a.name for a in n.names)
    return out


@pytest.mark.parametrize("a, b", [("verify.py", "simulate/checks.py"), ("cluster.py", "explore/ray_pool.py")])
def test_the_two_former_import_cycles_are_gone(a, b):
    name = lambda p: "checker." + p.removesuffix(".py").replace("/", ".")  # noqa: E731
    assert not (name(b) in _imports(ROOT / a) and name(a) in _imports(ROOT / b))


@pytest.mark.parametrize("package", ["engines", "explore", "prove", "simulate"])
def test_no_engine_imports_verify_or_the_command_line(package):
    for f in (ROOT / package).rglob("*.py"):
        above = {"checker.verify", "checker.cli"} & _imports(f)
        assert not above, f"{f.relative_to(ROOT)} imports {above}"


def test_each_engine_takes_a_request_and_returns_checks():
    cls = PercpuEager
    point = resolve_params(cls, {"ncpus": 2, "ops": 1, "batch": 2})
    limits = Limits(smt_timeout=60)
    explored = engines.run("explore", Request(cls, point, limits=limits))
    simulated = engines.run("simulate", Request(cls, point, options={"simulate": SimulateOptions(5, 20)}))
    bmc = engines.run("bmc", Request(cls, point, limits=limits, options={"depth": 3}))
    assert {c.backend for c in explored} == {"explore"}
    assert {c.backend for c in simulated} == {"simulate"}
    assert {c.backend for c in bmc} == {"z3"}
    by_name = {c.property: c.verdict for c in explored}
    assert by_name["read_bound"] == "holds"
    assert by_name["a_fold_happens"] == "violated"  # ops=1 < batch=2: no fold at this point
    # what the explorer proves the simulator never claims: it finds, or says inconclusive
    assert all(c.verdict in ("violated", "inconclusive") for c in simulated if c.kind == "invariant")


def test_an_unknown_engine_or_explorer_lists_the_known_ones():
    from checker.engines.explore import explorer
    from checker.errors import UsageError

    with pytest.raises(UsageError, match="explore, prove, bmc, pdr, infer, simulate"):
        engines.get("fast")
    with pytest.raises(UsageError, match="interpreted"):
        explorer("compiledd")


def test_a_new_explorer_is_one_registry_entry(monkeypatch):
    from checker.engines import explore as engine
    from checker.explore import explore

    seen = []

    def counting(model, **kw):
        seen.append(model.name)
        return explore(model, **kw)

    monkeypatch.setitem(engine.EXPLORERS, "counting", counting)
    point = resolve_params(PercpuEager, {"ncpus": 1, "ops": 1, "batch": 2})
    checks = engines.run("explore", Request(PercpuEager, point, options={"explorer": "counting"}))
    assert seen == ["percpu_eager"] and {c.property: c.verdict for c in checks}["read_bound"] == "holds"
