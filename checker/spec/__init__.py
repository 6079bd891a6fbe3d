# SPDX-License-Identifier: GPL-2.0-only
"""Deprecated: the spec language is ``checker.language``; this alias goes in the next release.

``import checker.spec.model`` (or any ``checker.spec.X``) gives the module
``checker.language.X`` itself, not a copy, so classes compare equal across
the two names (a ``Spec`` subclass made through either is the same class).
"""
from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import sys
import warnings
from types import ModuleType

warnings.warn("checker.spec is deprecated: import checker.language (or the names in checker) instead",
              DeprecationWarning, stacklevel=2)

_OLD, _NEW = __name__ + ".", "checker.language."


class _Alias(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Resolves ``checker.spec.X`` to the already-importable ``checker.language.X``."""

    def find_spec(self, fullname: str, path: object = None, target: object = None) -> object:
        if not fullname.startswith(_OLD):
            return None
        return importlib.machinery.ModuleSpec(fullname, self)

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        module = importlib.import_module(_NEW + spec.name[len(_OLD):])
        spec.loader_state = module.__spec__  # importlib stamps the alias's spec on it next
        return module

    def exec_module(self, module: ModuleType) -> None:
        module.__spec__ = module.__spec__.loader_state  # it keeps its own


if not any(isinstance(f, _Alias) for f in sys.meta_path):
    sys.meta_path.insert(0, _Alias())
