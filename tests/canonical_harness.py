# SPDX-License-Identifier: GPL-2.0-only
"""``cc_canonical`` compiled with the system C compiler and called through ctypes, for tests.

``compiled_canonical(model)`` returns a function from a list of flat vectors
to their C canonical forms, or None when no C compiler is found ($CC, else cc).
"""
from __future__ import annotations

import atexit
import ctypes
import hashlib
import os
import shutil
import subprocess
import tempfile
from collections import deque
from pathlib import Path
from typing import Callable

from checker.compiled.canonical import c_canonical, widths
from checker.language.declare import UNINIT, Uninit
from checker.types import NOBODY, BoolType, CpuIdType, Enum

_DIR = Path(tempfile.mkdtemp(prefix="cc_canon_"))
atexit.register(shutil.rmtree, _DIR, ignore_errors=True)
_LOADED: dict[str, ctypes.CDLL] = {}


def compiler() -> str | None:
    cc = os.environ.get("CC") or "cc"
    return shutil.which(cc.split()[0]) and cc


def compiled_canonical(model) -> Callable[[list[list[int]]], list[list[int]]] | None:
    cc = compiler()
    if cc is None:
        return None
    n = sum(1 if w is None else w for w in widths(model))
    src = c_canonical(model) + f"""
void cc_canonical_batch(int64_t *v, long count) {{
    long i;
    for (i = 0; i < count; i++) cc_canonical(v + i * {n});
}}
"""
    key = hashlib.sha256(src.encode()).hexdigest()[:16]
    lib = _LOADED.get(key)
    if lib is None:
        c, so = _DIR / f"{key}.c", _DIR / f"{key}.so"
        c.write_text(src)
        # -Werror: a warning in generated code is a bug in the generator
        r = subprocess.run([*cc.split(), "-O1", "-Wall", "-Wextra", "-Werror", "-shared", "-fPIC", "-o", str(so),
                            str(c)], capture_output=True, text=True)
        assert r.returncode == 0, f"{model.name}: the generated C does not compile:\n{r.stderr}\n{src}"
        lib = ctypes.CDLL(str(so))
        lib.cc_canonical_batch.argtypes = [ctypes.POINTER(ctypes.c_int64), ctypes.c_long]
        lib.cc_canonical_batch.restype = None
        _LOADED[key] = lib

    def run(vectors: list[list[int]]) -> list[list[int]]:
        flat = [x for v in vectors for x in v]
        buf = (ctypes.c_int64 * len(flat))(*flat)
        lib.cc_canonical_batch(buf, len(vectors))
        return [list(buf[i * n:(i + 1) * n]) for i in range(len(vectors))]

    run.lib = lib  # type: ignore[attr-defined]  # for timing the C alone
    return run


def reachable(model, cap: int) -> list[tuple]:
    """The first ``cap`` states reachable from the initial ones, in BFS order, without symmetry."""
    init = model.initial_states()
    seen = dict.fromkeys(init)
    todo = deque(init)
    while todo and len(seen) < cap:
        for _, t in model.successors(todo.popleft()):
            if t not in seen:
                seen[t] = None
                todo.append(t)
    return list(seen)[:cap]


def any_values(model, name: str) -> tuple[int, ...]:
    """Values for any slot of a variable, its role ignored: its type's values, an out-of-range CPU id (which
    the renaming leaves alone), int64's ends (signed comparison), UNINIT for an uninitialised local."""
    var, t = model.vars[name], model.vars[name].type
    if isinstance(t, CpuIdType):
        return (NOBODY, *range(model.ncpus_total), model.ncpus_total)
    if isinstance(t, BoolType):
        return (0, 1)
    if isinstance(t, Enum):
        return tuple(range(len(t.names)))
    return (UNINIT, -1, 0, 1) if isinstance(var, Uninit) else (-(1 << 63), -1, 0, 1, 2, (1 << 63) - 1)
