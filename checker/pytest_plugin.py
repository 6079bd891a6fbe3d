# SPDX-License-Identifier: GPL-2.0-only
"""pytest plugin: ``pytest --countercheck specs/`` runs specs as tests.

Installed with the package (entry point ``pytest11``, named
``checker.pytest_plugin`` after this module, so that ``-p checker.pytest_plugin``
from a checkout names the same plugin), so it loads in every pytest run: it
does nothing without ``--countercheck``, and loading it imports only pytest
(the checker's modules load when a run asks).

With ``--countercheck``, every ``.py`` file under the given paths that
defines specs (``checker.loader``) is collected, except files pytest itself
collects as tests (``python_files``). Which files may define specs is read
from their syntax tree, without running them (``may_define_specs``): a file
that imports ``checker`` and defines a class deriving from a name imported
from outside the standard library (``Spec``, or a spec of another file) or
from another such class of the file. Only those are imported; a script that
merely uses the checker, or mentions it, never runs. Each spec gets one item per property,
``percpu_eager::read_bound``, so ``-k`` selects by spec or property name.
The checks are only known once a spec has run, so a spec's ``verify`` runs
lazily, once, when its first selected item runs; its items share the
result. An item stands for every check of its property in that run (each
parameter point, each backend):

- it fails when any of them is not as expected, with the trace as the
  message (a violation) or the check and its claim (a bug not found);
- it fails too when none failed but one is inconclusive (a limit is never
  a pass), or is skipped with the reason under
  ``--countercheck-skip-inconclusive``;
- it fails when no check covered it (nothing checked is never a pass);
- it passes otherwise: a bug spec's item passes when its bug is found.

Under pytest-xdist a spec's items must run on one worker, so that the spec
is verified once (with ``--dist load`` each worker its items land on would
verify it again). Their node ids are ``FILE::SPEC::PROPERTY``, so
``--dist loadscope`` keeps each spec on one worker, and ``-n N`` without a
``--dist`` of the user's picks it when ``--countercheck`` is given;
``--dist loadfile`` also keeps a spec on one worker. (The items also carry
``xdist_group`` marks naming the spec, for ``--dist loadgroup``; with
pytest 9.2 and pytest-xdist 3.8 that mode no longer groups, because xdist
names the group through a node attribute pytest 9.2 stopped reading.)

The item list is derived before running: the declared properties (in
explore mode those that apply at some point of the sweep), the engine's own
checks of the chosen mode (``no_deadlock``, ``no_overflow``, ``builds``;
with the Z3 backend ``types``, ``sum_lemma`` and bit-vector lemmas). A check
no item covers is named in a warning.
"""
from __future__ import annotations

import ast
import fnmatch
import re
import sys
import warnings
from pathlib import Path
from typing import Any, Iterator

import pytest

MODES = ("explore", "prove", "all")


def pytest_addoption(parser: pytest.Parser) -> None:
    """The plugin's options: ``--countercheck`` and its settings."""
    g = parser.getgroup("countercheck", "countercheck: run specs as tests")
    g.addoption("--countercheck", action="store_true", default=False,
                help="collect spec files (.py files defining checker.Spec subclasses) under the given paths")
    g.addoption("--countercheck-mode", choices=MODES, default="explore",
                help="explore, prove with Z3, or both (default: explore)")
    g.addoption("--countercheck-set", action="append", default=[], metavar="NAME=VALUE",
                help="set a spec parameter, as verify's --set (NAME=V, NAME=LO..HI, NAME=A,B)")
    g.addoption("--countercheck-max-states", type=int, default=None, metavar="N",
                help="stop each exploration after N distinct states (inconclusive, never a pass)")
    g.addoption("--countercheck-skip-inconclusive", action="store_true", default=False,
                help="skip an item whose checks are inconclusive (a limit was hit) instead of failing it")
    g.addoption("--countercheck-timeout", type=float, default=None, metavar="S",
                help="stop each exploration after S seconds (inconclusive, never a pass)")


@pytest.hookimpl(tryfirst=True)
def pytest_cmdline_main(config: pytest.Config) -> None:
    """``-n N --countercheck``: distribute by spec (``--dist loadscope``) unless the user chose a --dist."""
    if not config.getoption("countercheck") or not getattr(config.option, "numprocesses", None):
        return
    args = config.invocation_params.args
    if not any(a == "--dist" or a.startswith("--dist=") for a in args):
        config.option.dist = "loadscope"


def pytest_configure(config: pytest.Config) -> None:
    """Check the plugin's options when ``--countercheck`` is given."""
    # registered here too, for runs without pytest-xdist (where --strict-markers would refuse it)
    config.addinivalue_line("markers", "xdist_group(name): run the items of a group on one xdist worker")
    if not config.getoption("countercheck"):
        return
    from checker.errors import CheckerError
    from checker.verify import parse_set

    try:
        config.stash[_SETS] = parse_set(config.getoption("countercheck_set"))
    except CheckerError as e:
        raise pytest.UsageError(f"--countercheck-set: {e.message}") from None
    n = config.getoption("countercheck_max_states")
    if n is not None and n < 1:
        raise pytest.UsageError("--countercheck-max-states must be at least 1")
    t = config.getoption("countercheck_timeout")
    if t is not None and t <= 0:
        raise pytest.UsageError("--countercheck-timeout must be positive")


_SETS = pytest.StashKey[dict]()


def _is_spec_candidate(file_path: Path, config: pytest.Config) -> bool:
    if not config.getoption("countercheck") or file_path.suffix != ".py" or file_path.name == "conftest.py":
        return False
    if any(fnmatch.fnmatch(file_path.name, pat) for pat in config.getini("python_files")):
        return False  # a test module: pytest's own collector imports it
    try:
        return may_define_specs(file_path.read_text(encoding="utf-8", errors="replace"))
    except OSError:
        return False


#: An import of the checker on a line of its own, for a file whose syntax tree cannot be built.
_IMPORTS_CHECKER = re.compile(r"^\s*(from\s+checker(\.\w+)*\s+import\b|import\s+checker\b)", re.M)


def may_define_specs(source: str) -> bool:
    """Read, never run: does this source import ``checker`` and define a class that may be a spec? A spec
    derives from ``Spec`` or from another spec: from a name imported from a module outside the standard
    library (checker's, or the user's), or from a class of the file that may be a spec. A helper class
    deriving from ``object``, ``dict`` or ``unittest.TestCase`` is none. A file with a syntax error that
    imports the checker counts, so that the loader reports the error at its line."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return bool(_IMPORTS_CHECKER.search(source))
    stdlib = getattr(sys, "stdlib_module_names", frozenset())
    imported: set[str] = set()  # names bound by imports from modules outside the standard library
    checker = False
    for n in ast.walk(tree):
        if isinstance(n, ast.ImportFrom):
            top = (n.module or "").split(".")[0]
            checker |= n.level == 0 and top == "checker"
            if n.level or top not in stdlib:
                imported |= {a.asname or a.name for a in n.names}
        elif isinstance(n, ast.Import):
            for a in n.names:
                top = a.name.split(".")[0]
                checker |= top == "checker"
                if top not in stdlib:
                    imported.add(a.asname or top)
    if not checker:
        return False
    specs = set(imported)  # grows with the file's own classes that derive from one of them

    def root(e: ast.expr) -> str | None:
        while isinstance(e, ast.Attribute):
            e = e.value
        return e.id if isinstance(e, ast.Name) else None

    found = False
    for n in tree.body:
        if isinstance(n, ast.ClassDef) and any(root(b) in specs for b in n.bases):
            specs.add(n.name)
            found = True
    return found


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    # A file named on the command line goes through pytest_pycollect_makemodule below instead.
    """Collect a spec file found under the paths (one not named on the command line)."""
    if parent.session.isinitpath(file_path) or not _is_spec_candidate(file_path, parent.config):
        return None
    return SpecFile.from_parent(parent, path=file_path)


@pytest.hookimpl(tryfirst=True)
def pytest_pycollect_makemodule(module_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    """pytest imports a file named on the command line as a test module; a spec file is ours instead."""
    if _is_spec_candidate(module_path, parent.config):
        return SpecFile.from_parent(parent, path=module_path)
    return None


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Check that ``--countercheck-set`` names a parameter of some collected spec."""
    if not config.getoption("countercheck"):
        return
    from checker.errors import CheckerError
    from checker.verify import check_sets_apply

    classes = list({it.parent.cls: None for it in items if isinstance(it, PropertyItem)})
    if classes:
        try:
            check_sets_apply(classes, config.stash[_SETS])
        except CheckerError as e:  # no collected spec has that parameter
            raise pytest.UsageError(f"--countercheck-set: {e.message}") from None


class SpecFile(pytest.File):
    """A Python file defining specs."""

    def collect(self) -> Iterator[pytest.Collector]:
        import checker.loader as loader
        from checker.errors import CheckerError

        try:
            specs = loader.specs_in_file(str(self.path))
        except CheckerError as e:
            where = f"{e.file or self.path}" + (f":{e.line}" if e.line else "")
            raise self.CollectError(f"{where}: {e.message}") from None
        for cls in specs:
            yield SpecNode.from_parent(self, name=cls.spec_name, spec=cls)


class SpecNode(pytest.Collector):
    """One spec: its properties as items, its verification run once and shared."""

    def __init__(self, *, spec: type, **kw: Any):
        super().__init__(**kw)
        self.cls = spec
        self._names: list[str] = []
        self._report: Any = None

    def collect(self) -> Iterator[pytest.Item]:
        from checker.errors import CheckerError

        try:
            self._names = check_names(self.cls, self.config.getoption("countercheck_mode"),
                                      self.config.stash[_SETS])
        except CheckerError as e:
            where = f"{e.file or self.path}" + (f":{e.line}" if e.line else "")
            raise self.CollectError(f"{where}: {e.message}") from None
        group = pytest.mark.xdist_group(self.nodeid)  # one worker runs a spec's items: one verify per spec
        for name in self._names:
            item = PropertyItem.from_parent(self, name=name)
            item.add_marker(group)
            yield item

    def spec_arg(self) -> str:
        """The spec as ``verify`` names it from where pytest ran: the reproduce line's argument."""
        try:
            rel = Path(self.path).resolve().relative_to(self.config.invocation_params.dir.resolve())
        except ValueError:
            rel = Path(self.path)
        return f"{rel}:{self.cls.__name__}"

    def report(self) -> Any:
        """The spec's verify Report, computed on first use."""
        if self._report is None:
            from checker.language.model import info
            from checker.verify import verify

            params = info(self.cls).params
            sets = {k: v for k, v in self.config.stash[_SETS].items() if k in params}
            self._report = verify([self.cls], sets=sets, mode=self.config.getoption("countercheck_mode"),
                                  max_states=self.config.getoption("countercheck_max_states"),
                                  timeout=self.config.getoption("countercheck_timeout"))
            stray = sorted({c.property for c in self._report.checks} - set(self._names))
            if stray:
                warnings.warn(pytest.PytestWarning(f"{self.cls.spec_name}: checks with no item: {', '.join(stray)}"),
                              stacklevel=2)
        return self._report


def check_names(cls: type, mode: str, sets: dict[str, tuple]) -> list[str]:
    """The properties a run of ``cls`` in ``mode`` checks, declared ones first. In explore mode a
    declared property counts only where it applies at some point of the sweep."""
    from checker.explore import DEADLOCK
    from checker.language.compile import Model
    from checker.language.model import info
    from checker.verify import own_sets, param_points

    si = info(cls)
    names = []
    if mode in ("explore", "all"):
        points = param_points(cls, own_sets(cls, sets), "explore")
        names += [n for n, p in si.properties.items() if p.applies is None or any(p.applies(x) for x in points)]
        if points:  # the engine's checks: a typed variable's no_overflow, deadlock, the build
            names += [p.name for p in Model(cls, points[0]).properties]
        names += [DEADLOCK] + (["builds"] if si.api is not None else [])
    if mode in ("prove", "all"):  # the induction's own obligations where prove_checks runs an induction
        inductive = any(p.inductive for p in si.properties.values()) and not cls.expect_violated
        names += list(si.properties) + (["types"] + (["sum_lemma"] if si.sum_bounds else []) if inductive else [])
        names += [lm.name for lm in cls.lemmas.lemmas] if cls.lemmas is not None else []
    return list(dict.fromkeys(names))


class CheckFailed(Exception):
    """A property not as expected; its message is the trace."""


class PropertyItem(pytest.Item):
    """Every check of one property in its spec's run."""

    def runtest(self) -> None:
        from checker.report.explain import details, has_trace, summary

        report = self.parent.report()
        if report.errors:
            raise CheckFailed("\n".join(f"{e.file or ''}{':' + str(e.line) if e.line else ''}: {e.message}"
                                        for e in report.errors))
        checks = [c for c in report.checks if c.property == self.name]
        failed = [c for c in checks if c.status == "failed"]
        if failed:
            seen: set[tuple] = set()
            blocks = []
            for c in failed:  # one story per backend and kind: the first parameter point's
                if (c.backend, c.kind) not in seen:
                    seen.add((c.backend, c.kind))
                    lines = details(c, self.parent.spec_arg())
                    blocks.append("\n".join(lines if has_trace(c) else [summary(c)] + lines))
            raise CheckFailed("\n\n".join(blocks))
        undecided = [c for c in checks if c.verdict == "inconclusive"]
        if undecided:
            why = (f"inconclusive: {summary(undecided[0])}"
                   + (f" (and {len(undecided) - 1} more checks)" if len(undecided) > 1 else ""))
            if self.config.getoption("countercheck_skip_inconclusive"):
                pytest.skip(why)
            raise CheckFailed(why + "\n(a limit is never a pass: raise it, or pass "
                                    "--countercheck-skip-inconclusive to skip such items)")
        if not checks:
            mode = self.config.getoption("countercheck_mode")
            raise CheckFailed(f"{self.name} was not checked: it applies at no point of this run (mode {mode}), "
                              f"or this mode's backend does not check it; nothing checked is never a pass")

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> Any:
        if isinstance(excinfo.value, CheckFailed):
            return str(excinfo.value)
        return super().repr_failure(excinfo, style=style)

    def reportinfo(self) -> tuple[Path, int | None, str]:
        from checker.language.model import info

        p = info(self.parent.cls).properties.get(self.name)
        here = p is not None and p.line and p.file and Path(p.file).resolve() == Path(self.path).resolve()
        return self.path, (p.line - 1 if here else None), f"{self.parent.name}::{self.name}"
