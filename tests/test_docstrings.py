# SPDX-License-Identifier: GPL-2.0-only
"""Every public name has a docstring: checker's top-level exports, and each module's public functions and
classes (module-level names not starting with ``_``, in modules not starting with ``_``). The API reference
of the docs site (docs/api.md) is made of them."""
import ast
import inspect

import checker
from conftest import ROOT


def public_names_without_docstrings() -> list[str]:
    """``file:line name`` of each public module-level function or class of checker/ with no docstring."""
    missing = []
    for path in sorted((ROOT / "checker").rglob("*.py")):
        rel = path.relative_to(ROOT)
        if any(part.startswith("_") and part not in ("__init__.py", "__main__.py") for part in rel.parts):
            continue
        for node in ast.parse(path.read_text(), str(rel)).body:
            if (isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
                    and not node.name.startswith("_") and not ast.get_docstring(node)):
                missing.append(f"{rel}:{node.lineno} {node.name}")
    return missing


def test_every_public_function_and_class_of_the_modules_has_a_docstring():
    assert public_names_without_docstrings() == []


def test_every_top_level_export_has_a_docstring():
    exported = {name: getattr(checker, name) for name in checker.__all__}
    documented = [n for n, obj in exported.items() if inspect.isfunction(obj) or inspect.isclass(obj)]
    assert len(documented) > 60
    assert [n for n in documented if not (exported[n].__doc__ or "").strip()] == []


def test_the_scan_finds_a_public_function_without_a_docstring(tmp_path, monkeypatch):
    """The scan is not vacuous: a module with an undocumented public function is listed, a private one is not."""
    (tmp_path / "checker").mkdir()
    (tmp_path / "checker" / "mod.py").write_text("def shown():\n    pass\n\n\ndef _hidden():\n    pass\n")
    (tmp_path / "checker" / "_private.py").write_text("def shown():\n    pass\n")
    monkeypatch.setattr(__import__(__name__), "ROOT", tmp_path)
    assert public_names_without_docstrings() == ["checker/mod.py:1 shown"]
