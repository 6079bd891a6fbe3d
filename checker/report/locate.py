# SPDX-License-Identifier: GPL-2.0-only
"""Where a finding is, as a path a code-review tool can open.

Every result gets a file (SARIF uploads whose results lack one are rejected
whole by GitHub code scanning), relative to one of two documented bases:

``SRCROOT``
    the repository being checked: the current directory, or the kernel tree
    (``--kernel-tree DIR``, or the current directory when it holds
    ``Makefile``, ``kernel/`` and ``mm/``).
``COUNTERCHECK``
    the directory holding countercheck's built-in ``specs/`` (the installed
    ``checker`` package, or a checkout's root): ``specs/percpu_eager.py``.

A user's spec is located at its own line (``SRCROOT``, with ``../`` when it
lies outside; a built-in spec run in a checkout of countercheck is in that
repository, so ``SRCROOT`` too). A built-in spec models kernel code: inside a kernel tree it is
located at the modelled function in the modelled file (the first file its
``kernel`` text names that the tree has, at the first function that the
property's doc, then the ``kernel`` text, names and the file defines), so a
reviewer sees the finding on the code it is about; elsewhere at its own
source, relative to ``COUNTERCHECK``.
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

SRCROOT = "SRCROOT"
BUILTIN = "COUNTERCHECK"

#: A kernel source path inside a spec's ``kernel`` text: ``lib/percpu_counter.c``, ``include/linux/x.h``.
_KPATH = re.compile(r"(?<![\w/.-])((?:[a-z0-9_-]+/)+[A-Za-z0-9_-]+\.[ch])\b")
#: A C identifier that reads as a function name in prose: has an underscore, or is followed by ``(``.
_IDENT = re.compile(r"\b([A-Za-z_][A-Za-z0-9_]*)(\s*\()?")


@dataclass(frozen=True)
class Place:
    """A file relative to a base (``SRCROOT`` or ``COUNTERCHECK``), a line when known, and what is there."""

    uri: str
    base: str
    line: int | None = None
    function: str | None = None  # the kernel function, when the place is kernel code

    @property
    def path(self) -> str:
        """The path as a CI annotation names it (relative to the repository)."""
        return self.uri


def is_kernel_tree(d: Path) -> bool:
    """A Linux source tree: its top-level Makefile, kernel/ and mm/."""
    return (d / "Makefile").is_file() and (d / "kernel").is_dir() and (d / "mm").is_dir()


def builtin_root() -> Path:
    """The directory whose ``specs/`` holds the built-in specs (installed: the package; a checkout: its root)."""
    import checker.specs  # installed, a subpackage; in a checkout, the top-level specs/ (checker.layout)

    return Path(checker.specs.__file__).resolve().parent.parent


class Locator:
    """Places of checks and steps, relative to the repository (``cwd``) or the kernel tree."""

    def __init__(self, cwd: Path | None = None, kernel_tree: Path | None = None):
        cwd = Path(cwd or Path.cwd())
        if kernel_tree is None and is_kernel_tree(cwd):
            kernel_tree = cwd
        self.kernel_tree = kernel_tree.resolve() if kernel_tree is not None else None
        self.srcroot = self.kernel_tree or cwd.resolve()
        self.builtin = builtin_root()

    def bases(self) -> dict[str, Path]:
        return {SRCROOT: self.srcroot, BUILTIN: self.builtin}

    def is_builtin(self, file: str) -> bool:
        """Checked first: built-ins may also lie under the current directory (a checkout of countercheck)."""
        try:
            Path(file).resolve().relative_to(self.builtin / "specs")
            return True
        except ValueError:
            return False

    def file(self, file: str, line: int | None = None) -> Place:
        """A spec file relative to ``SRCROOT`` when it lies there (a built-in one too, in a checkout of
        countercheck), a built-in one elsewhere relative to ``COUNTERCHECK``, any other with ``../``."""
        p = Path(file).resolve()
        if self.is_builtin(file) and not p.is_relative_to(self.srcroot):
            return Place(p.relative_to(self.builtin).as_posix(), BUILTIN, line)
        return Place(Path(os.path.relpath(p, self.srcroot)).as_posix(), SRCROOT, line)

    def check(self, spec_file: str | None, line: int | None, kernel: str = "", hints: tuple[str, ...] = ()
              ) -> Place | None:
        """A check's place: in the kernel tree for a built-in spec when there is one, else its spec's line."""
        if spec_file and self.kernel_tree is not None and self.is_builtin(spec_file):
            place = self.kernel_place(kernel, hints)
            if place is not None:
                return place
        return self.file(spec_file, line) if spec_file else None

    def kernel_place(self, kernel: str, hints: tuple[str, ...] = ()) -> Place | None:
        """The first file ``kernel`` names that the tree has, at the first named function it defines."""
        assert self.kernel_tree is not None
        files = [f for f in dict.fromkeys(_KPATH.findall(kernel)) if (self.kernel_tree / f).is_file()]
        if not files:
            return None
        names = list(dict.fromkeys(n for text in (*hints, kernel) for n in function_names(text)))
        names.sort(key=lambda n: not ("_" in n))  # every text's likeliest names before any plain word
        for f in files:
            defs = definitions(str(self.kernel_tree / f))
            for n in names:
                if n in defs:
                    return Place(f, SRCROOT, defs[n], n)
        return Place(files[0], SRCROOT, None)


def function_names(text: str) -> list[str]:
    """Names in prose that may be C functions, likeliest first: those with an underscore or a call's
    parenthesis (``__mmput``, ``sum()``), then other words of four letters or more (``mmput``); never
    the parts of a path. A name counts only where the file defines it (``definitions``)."""
    strong, weak = [], []
    for m in _IDENT.finditer(text):
        name, call = m.group(1), m.group(2)
        start = m.start(1)
        if (start and text[start - 1] in "/.-") or text[m.end(1):m.end(1) + 1] in ("/", "."):
            continue  # part of a path or a file name
        if call or "_" in name:
            strong.append(name)
        elif len(name) >= 4 and name.islower():
            weak.append(name)
    return strong + weak
@lru_cache(maxsize=64)
def definitions(path: str) -> dict[str, int]:
    """Function (and function-like macro) definitions in a C file: name -> line. A definition starts in
    column 0 and is not a prototype (no ``;`` ending the line)."""
    out: dict[str, int] = {}
    try:
        text = Path(path).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return out
    for i, line in enumerate(text.splitlines(), 1):
        if not line or line[0] in " \t{}/*" or line.rstrip().endswith(";"):
            continue
        m = re.match(r"#\s*define\s+([A-Za-z_]\w*)\(", line)
        names = [m.group(1)] if m else re.findall(r"\b([A-Za-z_]\w*)\s*\(", line)[:1]
        for n in names:
            out.setdefault(n, i)
    return out
