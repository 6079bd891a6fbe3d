# SPDX-License-Identifier: GPL-2.0-only
"""Where the built-in specs and models come from: ``checker.specs`` and ``checker.models``; and where
the kernel's litmus tests are.

They are the top-level ``specs/`` and ``models/`` folders of the source tree.
Installed, setuptools copies those folders into the package under these
names (``package-dir`` in pyproject.toml), so they are found as ordinary
subpackages. In a checkout there is no copy, and this finder resolves the
two names to the folders beside the package, with no links in the tree.
The litmus tests (``tests/litmus/``) are data, installed the same way as
``checker/litmus/kernel/``: ``kernel_litmus_dir()`` gives whichever is there.
"""
from __future__ import annotations

import importlib.abc
import importlib.util
import sys
from pathlib import Path

FOLDERS = {"checker.specs": "specs", "checker.models": "models"}
_ROOT = Path(__file__).resolve().parent.parent


class CheckoutFolders(importlib.abc.MetaPathFinder):
    """An import finder for ``checker.specs`` and ``checker.models`` in a checkout (installed copies need none)."""
    def find_spec(self, fullname: str, path: object = None, target: object = None) -> object:
        folder = FOLDERS.get(fullname)
        if folder is None or (Path(__file__).parent / folder).is_dir():  # an installed copy has its own
            return None
        init = _ROOT / folder / "__init__.py"
        if not init.is_file():
            return None
        return importlib.util.spec_from_file_location(fullname, init, submodule_search_locations=[str(init.parent)])


def kernel_litmus_dir() -> Path:
    """The folder of the kernel's litmus tests: the installed package data, else the checkout's tests/litmus/."""
    installed = Path(__file__).resolve().parent / "litmus" / "kernel"
    return installed if installed.is_dir() else _ROOT / "tests" / "litmus"


def install() -> None:
    """Add the checkout finder to ``sys.meta_path`` once."""
    if not any(isinstance(f, CheckoutFolders) for f in sys.meta_path):
        sys.meta_path.append(CheckoutFolders())
