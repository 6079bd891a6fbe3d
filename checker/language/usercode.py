# SPDX-License-Identifier: GPL-2.0-only
"""The boundary between the checker and a spec's own code: nothing spec code raises ends the run.

Spec code is user code. ``sys.exit(0)`` in an action, a ``raise SystemExit``
in a property, a stray ``KeyboardInterrupt`` or ``GeneratorExit`` are
``BaseException``s that slip past every ``except Exception`` of the engines
and would end the command with an exit code the spec chose: 0, a pass that
checked nothing. Every function a spec class declares (actions, properties,
the terminal predicate, witnesses) is wrapped once, when the class is
created (``guard``), so every engine, the symbolic runs at load and the Z3
encoding included, calls it through here; importing a spec file and the rest
of a run go through ``running_spec_code``, the backstop for spec code that is
not a declared function (a parameter's lambda, a ``choose`` function).

Either way such an exception becomes a ``SpecError`` naming the spec line that
raised it (exit 2). A real interrupt (a signal arrived: ``interrupts.pending``)
passes through as the interrupt it is. What no in-process boundary can stop:
``os._exit()`` or ``os.kill(os.getpid(), 9)`` in spec code end the process at
once.
"""
from __future__ import annotations

import functools
import inspect
import os
import sysconfig
import traceback
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import TracebackType
from typing import Any

import checker.interrupts as interrupts
from checker.errors import CheckerError, SpecError

_CHECKER = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # the checker package
#: Code that is neither the spec's nor the checker's: Python's library and installed packages.
_LIBRARY = tuple(os.path.realpath(p) + os.sep for p in {sysconfig.get_paths()[k] for k in
                                                         ("stdlib", "platstdlib", "purelib", "platlib")})


def _is_user(filename: str) -> bool:
    if filename.startswith("<"):
        return False
    real = os.path.realpath(filename)
    return not real.startswith(_CHECKER + os.sep) and not real.startswith(_LIBRARY)


def user_frame(tb: TracebackType | None, files: set[str] = frozenset()) -> tuple[str | None, int | None]:
    """The spec line a traceback came from: its deepest frame in one of ``files``, else its deepest
    frame in neither the checker nor Python's library (None, None: the traceback never ran spec code)."""
    want = {os.path.realpath(f) for f in files if f}
    in_files: tuple[str | None, int | None] = (None, None)
    outside: tuple[str | None, int | None] = (None, None)
    for frame, lineno in traceback.walk_tb(tb):
        name = frame.f_code.co_filename
        if os.path.realpath(name) in want:
            in_files = (name, lineno)
        if _is_user(name):
            outside = (name, lineno)
    return in_files if in_files[0] else outside


def _what(e: BaseException) -> str:
    if isinstance(e, SystemExit):
        return f"sys.exit({e.code!r})" if e.code is not None else "sys.exit()"
    return f"raise {type(e).__name__}" + (f"({e})" if str(e) else "")


def as_spec_error(e: BaseException, where: str, files: set[str] = frozenset(), *,
                  file: str | None = None, line: int | None = None) -> SpecError:
    """The spec error for ``e``, a ``BaseException`` that is not an ``Exception``, raised by spec code."""
    f, ln = user_frame(e.__traceback__, files)
    return SpecError(f"{where} called {_what(e)}; spec code computes values and cannot end or interrupt "
                     f"the run (a {type(e).__name__} from a spec is an error, never the run's exit code)",
                     file=f or file, line=ln or line)


def _escapes(e: BaseException) -> bool:
    """``e`` is the run's to handle, not the spec's fault: an interrupt that a signal raised."""
    return isinstance(e, KeyboardInterrupt) and interrupts.pending()


def guard(fn: Callable[..., Any], where: str) -> Callable[..., Any]:
    """``fn``, a function a spec declares, whose ``BaseException``s (not ``Exception``s: the engines
    report those with the state) become a ``SpecError``. ``where``: ``Class.name``."""
    if getattr(fn, "__countercheck_guarded__", False):
        return fn
    code = getattr(inspect.unwrap(fn), "__code__", None)
    files = {code.co_filename} if code is not None else set()
    line = code.co_firstlineno if code is not None else None

    @functools.wraps(fn)
    def guarded(*args: Any, **kw: Any) -> Any:
        try:
            return fn(*args, **kw)
        except Exception:
            raise
        except BaseException as e:
            if _escapes(e):
                raise
            raise as_spec_error(e, where, files, file=next(iter(files), None), line=line) from None

    guarded.__countercheck_guarded__ = True  # type: ignore[attr-defined]
    return guarded


def spec_error(e: BaseException, where: str, files: set[str] = frozenset()) -> CheckerError:
    """``e`` as the error it is: a ``CheckerError`` as it is; raised in spec code (a frame of its
    traceback is the spec's), a ``SpecError`` naming the line; anything else (an interrupt, out of memory,
    the checker's own bug) is raised again from here."""
    if isinstance(e, CheckerError):
        return e
    if _escapes(e) or isinstance(e, MemoryError) or (isinstance(e, Exception) and interrupts.pending()):
        raise e
    if not isinstance(e, Exception):
        return as_spec_error(e, where, files)
    f, ln = user_frame(e.__traceback__, files)
    if f is None:
        raise e
    return SpecError(f"{where} raised {type(e).__name__}: {e}", file=f, line=ln)


@contextmanager
def running_spec_code(where: str, files: set[str] = frozenset()) -> Iterator[None]:
    """Run the body, which runs spec code (its load, its symbolic runs, a search): whatever spec code
    raises that the engines did not already report (a ``SystemExit``, a parameter's function failing)
    ends it as a ``SpecError`` naming the line; an interrupt, out of memory and the checker's own errors
    go on as they are."""
    try:
        yield
    except BaseException as e:
        err = spec_error(e, where, files)
        if err is e:
            raise
        raise err from None
