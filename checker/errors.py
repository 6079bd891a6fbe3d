# SPDX-License-Identifier: GPL-2.0-only
"""Errors a user can cause, each naming where and what to write instead.

The command line turns these into exit code 2 and a message; nothing here
ever reaches the user as a Python traceback.
"""
from __future__ import annotations

import inspect
import os
import traceback
from types import TracebackType
from typing import Any


class CheckerError(Exception):
    """A user mistake: bad usage, a malformed spec, a bad parameter.

    ``file`` and ``line`` point at the spec text when there is one.
    """

    def __init__(self, message: str, *, file: str | None = None, line: int | None = None):
        super().__init__(message)
        self.message = message
        self.file = file
        self.line = line

    def __str__(self) -> str:
        where = ""
        if self.file:
            where = f"{self.file}:{self.line}: " if self.line else f"{self.file}: "
        return where + self.message


class SpecError(CheckerError):
    """A spec that cannot be checked as written."""


class UsageError(CheckerError):
    """Bad command-line usage or an unknown spec or parameter."""


class SymmetryError(SpecError):
    """A declared CPU symmetry that the spec's actions do not respect."""


class NotLowerable(Exception):
    """A construct the compiled engine (checker.compiled.lower) does not lower; the message names it."""


def source_of(obj: Any) -> tuple[str | None, int | None]:
    """File and first line of a function or class, as far as Python knows."""
    try:
        fn = inspect.unwrap(obj)
        file = inspect.getsourcefile(fn)
        code = getattr(fn, "__code__", None)
        if code is not None:  # what getsourcelines would say (its first decorator's line), without tokenizing
            return (file, code.co_firstlineno) if file else (None, None)
        _, line = inspect.getsourcelines(fn)
        return file, line
    except (OSError, TypeError):
        return None, None


def innermost_frame_in(tb: TracebackType | None, files: set[str]) -> tuple[str | None, int | None]:
    """The deepest traceback frame whose file is one of ``files``.

    Used to point at the spec line that raised, rather than at the engine.
    """
    found: tuple[str | None, int | None] = (None, None)
    norm = {os.path.realpath(f) for f in files if f}
    for frame, lineno in traceback.walk_tb(tb):
        fname = frame.f_code.co_filename
        if os.path.realpath(fname) in norm:
            found = (fname, lineno)
    return found
