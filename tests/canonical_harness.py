"""``cc_canonical`` compiled with the system C compiler and called through ctypes, for tests.

``compiled_canonical(model)`` returns a function from a list of flat vectors
to their C canonical forms, or None when no C compiler is found ($CC, else cc).
"""
from __future__ import annotations

import ctypes
import hashlib
import os
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Callable

from checker.compiled.canonical import c_canonical, widths

_DIR = Path(tempfile.mkdtemp(prefix="cc_canon_"))
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

    return run
