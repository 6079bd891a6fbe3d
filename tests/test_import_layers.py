# SPDX-License-Identifier: GPL-2.0-only
"""The house has one direction (issue 28; docs/architecture.md, "Layers"): no import circle under checker/,
and every module imports only from its own layer or below. The graph is read from the source with ``ast``,
so an import inside a function (a deferred one) is an edge like any other."""
import ast
import functools
from pathlib import Path

import networkx as nx
import pytest

from conftest import ROOT

#: The layers, bottom first. An entry names a module exactly, or ``pkg.*``: every module of the package
#: (the package's ``__init__`` included unless it is named on its own). The most specific entry wins.
LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("base values", (
        "checker.errors", "checker.cint", "checker.types", "checker.expr", "checker.symbolic.*",
        "checker.result",  # verdicts, trace steps
        # process plumbing that every layer may use: signals, deadlines, files, versions
        "checker.early", "checker.interrupts", "checker.deadline", "checker.layout", "checker.lifetime",
        "checker.persist", "checker.version", "checker.invocation", "checker.select",
    )),
    ("the spec language", (
        "checker.language.*", "checker.spec.*", "checker.loader", "checker.overrides",
        # declarations a spec writes in its class body, kept beside the passes that read them
        "checker.kernel.config",  # Api, Bits
        "checker.kernel.memory",  # Heap
        "checker.ordering.annotations",  # access=: Load, Store, Rmw, Fence, READ_ONCE, ...
    )),
    ("the kernel environment", (
        "checker.kernel.*",  # tasks and the scheduler, 32-bit tearing, the context rules, the passes
        "checker.ordering.*",  # the memory models
        "checker.explore.symmetry",  # the canonical form from the declared roles: computed by the passes
        "checker.explore.structure",  # a declared structural symmetry's group (checker.explore.symmetry builds it)
        "checker.litmus.parse", "checker.litmus.lower",  # a litmus test lowered to a spec
    )),
    ("engines", (
        "checker.explore.*", "checker.compiled.*", "checker.prove.*", "checker.simulate.*", "checker.export.*",
        "checker.live", "checker.engines.common",
        "checker.report.trace",  # the engines build their traces with it
    )),
    ("runners", (
        # the entry points that run an engine here, with --jobs or on Ray, and the seam that calls them
        "checker.cluster", "checker.explore", "checker.explore.parallel", "checker.explore.ray_pool",
        "checker.compiled.ray_search",  # the compiled search's levels on Ray actors
        "checker.prove", "checker.prove.sweep", "checker.engines.*",
        "checker.export.spin", "checker.litmus.run",  # SPIN and litmus tests against the explorer
        "checker.run_pool",  # a verify's engine runs on forked workers
    )),
    ("reports and the command line", (
        "checker",  # re-exports the spec vocabulary and the entry points from every layer
        "checker.*", "checker.export.command", "checker.litmus.command",  # the export and litmus commands
    )),
)


def _modules(root: Path) -> dict[str, Path]:
    mods = {}
    for p in sorted((root / "checker").rglob("*.py")):
        name = ".".join(p.relative_to(root).with_suffix("").parts)
        mods[name.removesuffix(".__init__")] = p
    return mods


def _type_checking(node: ast.AST) -> bool:
    """``if TYPE_CHECKING:``: imports for annotations only, never run."""
    return isinstance(node, ast.If) and (getattr(node.test, "id", None) == "TYPE_CHECKING"
                                         or getattr(node.test, "attr", None) == "TYPE_CHECKING")


@functools.lru_cache(maxsize=None)  # read once for the tests below
def import_graph(root: Path = ROOT) -> nx.DiGraph:
    """Module -> module it imports, for every import statement under checker/ (inside functions too).
    ``from P import m`` is an edge to ``P.m`` when ``m`` is a module (``import P.m`` runs ``P``'s
    ``__init__`` just the same), else to ``P``. Imports under ``if TYPE_CHECKING:`` are left out (never
    run). ``edge["lines"]`` lists where."""
    mods = _modules(root)
    g = nx.DiGraph()
    for name, path in mods.items():
        g.add_node(name)
        pkg = name if path.name == "__init__.py" else name.rpartition(".")[0]
        tree = ast.parse(path.read_text(), str(path))
        typing_only = {id(n) for block in ast.walk(tree) if _type_checking(block)
                       for stmt in block.body for n in ast.walk(stmt)}
        for node in ast.walk(tree):
            if id(node) in typing_only:
                continue
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    up = pkg.split(".")[:len(pkg.split(".")) - node.level + 1]
                    base = ".".join(up + ([base] if base else []))
                targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in mods else base for a in node.names]
            else:
                continue
            for t in targets:
                if t in mods and t != name:
                    g.add_edge(name, t)
                    g.edges[name, t].setdefault("lines", []).append(node.lineno)
    return g


def layer_of(module: str) -> int:
    """The index in ``LAYERS`` of the most specific entry naming ``module``."""
    best, best_len = None, -1
    for i, (_name, entries) in enumerate(LAYERS):
        for e in entries:
            if e.endswith(".*"):
                hit, size = module == e[:-2] or module.startswith(e[:-1]), len(e) - 2
            else:
                hit, size = module == e, len(e) + 1  # an exact name beats its package's pattern
            if hit and size > best_len:
                best, best_len = i, size
    if best is None:
        raise LookupError(f"{module} is in no layer: add it to LAYERS in {__file__}")
    return best


def circles(g: nx.DiGraph) -> list[list[str]]:
    return sorted(sorted(c) for c in nx.strongly_connected_components(g) if len(c) > 1)


def upward(g: nx.DiGraph) -> list[str]:
    """Each import of a module from a higher layer, as ``a (layer) -> b (layer) at lines``."""
    out = []
    for a, b, data in g.edges(data=True):
        la, lb = layer_of(a), layer_of(b)
        if lb > la:
            out.append(f"{a} ({LAYERS[la][0]}) -> {b} ({LAYERS[lb][0]}) at lines {data['lines']}")
    return sorted(out)


def test_no_import_circle_under_checker():
    assert circles(import_graph()) == []


def test_no_module_imports_from_a_layer_above_its_own():
    assert upward(import_graph()) == []


def package_imports(root: Path = ROOT) -> list[str]:
    """``module:line`` of each ``import checker`` or ``from checker import ...`` under checker/ (the package's
    own ``__init__`` aside)."""
    out = []
    for name, path in _modules(root).items():
        if name == "checker":
            continue
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if (isinstance(node, ast.ImportFrom) and node.level == 0 and node.module == "checker"
                    or isinstance(node, ast.Import) and any(a.name == "checker" for a in node.names)):
                out.append(f"{name}:{node.lineno}")
    return out


def test_no_module_under_checker_imports_the_package_checker():
    """``checker``'s ``__init__`` re-exports every layer's names for specs: a module that named it would
    depend on every layer. Import the defining module instead (``import checker.persist as persist``)."""
    assert package_imports() == []
    assert list(import_graph().predecessors("checker")) == []


def test_every_module_has_a_layer():
    for m in import_graph():
        layer_of(m)


def test_the_checks_see_a_circle_and_a_deferred_upward_import(tmp_path):
    """Not vacuous: a deferred import from the language up to an engine is both an upward edge and,
    with the engine importing the language back, a circle."""
    pkg = tmp_path / "checker"
    for d in ("language", "explore"):
        (pkg / d).mkdir(parents=True)
        (pkg / d / "__init__.py").write_text("")
    (pkg / "__init__.py").write_text("")
    (pkg / "language" / "compile.py").write_text("def f():\n    from checker.explore import search\n")
    (pkg / "explore" / "search.py").write_text("from checker.language.compile import f\n")
    (pkg / "errors.py").write_text("")
    (pkg / "explore" / "paths.py").write_text("def g():\n    from checker import errors\n")
    g = import_graph(tmp_path)
    assert package_imports(tmp_path) == ["checker.explore.paths:2"]
    assert circles(g) == [["checker.explore.search", "checker.language.compile"]]
    assert upward(g) == ["checker.language.compile (the spec language) -> checker.explore.search (engines) "
                         "at lines [2]"]


@pytest.mark.parametrize("module, layer", [("checker.language.compile", "the spec language"),
                                           ("checker.kernel.tasks", "the kernel environment"),
                                           ("checker.explore.search", "engines"), ("checker.explore", "runners"),
                                           ("checker.cli", "reports and the command line")])
def test_layer_table(module, layer):
    assert LAYERS[layer_of(module)][0] == layer
