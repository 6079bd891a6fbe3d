# SPDX-License-Identifier: GPL-2.0-only
"""One hash slice of a distributed compiled search: the generated program as a shared library.

The library is the point's generated C (``engine.prepare``'s source) with ``search_ray.c`` appended,
built by ``build.build`` (the same cache and trust rule, ``-shared -fPIC`` added to the flags). A Ray
actor never compiles: the coordinator builds the library and ships its bytes with their SHA-256
(``Library``); the actor writes them to a private file, checks the hash and loads them with ctypes
(``Slice``). So a worker node needs Python, Ray and this package, not a C compiler, as long as it has
the coordinator's architecture and C library.

A ``Slice`` is one actor's part of the visited set; ``checker.compiled.ray_search`` runs the levels.
Nothing here imports Ray.
"""
from __future__ import annotations

import ctypes
import hashlib
import os
import tempfile
from dataclasses import dataclass
from importlib import resources
from typing import Any

from checker.compiled import build as cbuild

NONE = 0xFFFFFFFF
#: The library's flags: the program's, as position-independent code.
LIB_FLAGS = (*cbuild.FLAGS, "-shared", "-fPIC")
#: Entry points' status: 4 a run-time error (its text: ``Slice.text``), 5/6 out of memory, 7 a damaged buffer.
ERROR, MEMORY, LIMIT, DAMAGED = 4, 5, 6, 7


class SliceError(Exception):
    """A slice's entry point failed: ``status`` (ERROR, MEMORY, LIMIT, DAMAGED) and the error text."""

    def __init__(self, status: int, text: str):
        super().__init__(f"status {status}: {text[:200]}")
        self.status = status
        self.text = text


def library_source(program: str) -> str:
    """The generated program as a library: ``main`` renamed, ``printf`` and ``exit`` caught by
    ``search_ray.c`` (an error returns to the caller instead of ending the actor)."""
    hook = ("#include <unistd.h>\n#include <setjmp.h>\n#include <stdarg.h>\n"
            "static int cr_printf(const char *fmt, ...);\n"
            "static void cr_exit(int code) __attribute__((noreturn));\n"
            "#define printf cr_printf\n#define exit cr_exit\n")
    if "#include <unistd.h>\n" not in program:
        raise ValueError("the generated program has no #include <unistd.h> to hook after")
    body = program.replace("#include <unistd.h>\n", hook, 1)
    extra = resources.files("checker.compiled").joinpath("search_ray.c").read_text()
    return "#define main cc_program_main\n" + body + "\n" + extra


@dataclass(frozen=True)
class Library:
    """A built slice library, as bytes that travel to the actors."""

    data: bytes
    sha256: str
    nslots: int

    @classmethod
    def build(cls, program: str, nslots: int) -> tuple["Library", bool]:
        """(the library of ``program``, whether it was compiled now); ``build.CompilerMissing`` or
        ``build.CompileFailed`` as ``build.build`` raises them."""
        path, now = cbuild.build(library_source(program), LIB_FLAGS)
        data = path.read_bytes()
        return cls(data, hashlib.sha256(data).hexdigest(), nslots), now


class Slice:
    """The library loaded in this process: one slice's entry points."""

    def __init__(self, lib: Library):
        if hashlib.sha256(lib.data).hexdigest() != lib.sha256:
            raise SliceError(DAMAGED, "the library's bytes do not match their SHA-256")
        fd, self.path = tempfile.mkstemp(prefix="countercheck-slice-", suffix=".so")
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(lib.data)
            # a fresh file each time: dlopen gives it its own globals, even for the same library again
            self.dll = ctypes.CDLL(self.path)
        finally:
            os.unlink(self.path)
        d = self.dll
        self.n = d.cr_nslots()
        if self.n != lib.nslots:
            raise SliceError(DAMAGED, f"the library has {self.n} slots, not {lib.nslots}")
        self.nprops = d.cr_nprops()
        self.nevents = d.cr_nevents()
        u32p, u64p, i64p, i32p = (ctypes.POINTER(t) for t in (ctypes.c_uint32, ctypes.c_uint64, ctypes.c_int64,
                                                               ctypes.c_int32))
        d.cr_init.argtypes = [i64p, ctypes.c_int, ctypes.c_uint64, ctypes.c_int, ctypes.c_int]
        d.cr_canonical_owner.argtypes = [i64p, ctypes.c_int]
        d.cr_seed.argtypes = [i64p, u32p, u32p, ctypes.c_int]
        d.cr_decided.argtypes = [ctypes.c_int]
        d.cr_expand.argtypes = [ctypes.c_uint64, ctypes.c_uint32, ctypes.c_uint32, ctypes.c_uint32, ctypes.c_uint32]
        d.cr_buffer.argtypes = [ctypes.c_int, ctypes.POINTER(ctypes.c_size_t)]
        d.cr_buffer.restype = ctypes.c_void_p
        d.cr_receive.argtypes = [ctypes.c_char_p, ctypes.c_size_t, ctypes.c_int]
        d.cr_candidates.argtypes = [u64p]
        d.cr_candidates.restype = ctypes.c_uint32
        d.cr_admit.argtypes = [u32p]
        d.cr_found.argtypes = [u32p, u32p]
        d.cr_transitions_upto.argtypes = [ctypes.c_uint32]
        d.cr_transitions_upto.restype = ctypes.c_uint64
        d.cr_deadlock.argtypes = [u32p, u32p]
        d.cr_events.argtypes = [u32p, u32p, i32p]
        d.cr_lookup.argtypes = [ctypes.c_uint32, i64p, u32p, i32p, i32p]
        d.cr_stats.argtypes = [u64p]
        d.cr_text_get.argtypes = [ctypes.POINTER(ctypes.c_size_t)]
        d.cr_text_get.restype = ctypes.c_void_p
        self.live = False
        self.jobs = 1

    def _check(self, status: int) -> None:
        if status != 0:
            n = ctypes.c_size_t()
            p = self.dll.cr_text_get(ctypes.byref(n))
            raise SliceError(status, ctypes.string_at(p, n.value).decode(errors="replace") if n.value else "")

    def _vec(self, values: list[int]) -> Any:
        return (ctypes.c_int64 * len(values))(*values)

    def canonical_owner(self, vec: list[int], jobs: int) -> tuple[list[int], int]:
        """(the canonical form of a flat state, its owner among ``jobs``)."""
        v = self._vec(vec)
        owner = self.dll.cr_canonical_owner(v, jobs)
        if owner < 0 or owner >= jobs:
            self._check(owner if owner > 0 else ERROR)
        return list(v), owner

    def init(self, inits: list[list[int]], max_memory: int, jobs: int, wid: int) -> None:
        flat = [x for v in inits for x in v]
        self.live = True
        self.jobs = jobs
        self._check(self.dll.cr_init(self._vec(flat), len(inits), max_memory, jobs, wid))

    def seed(self, owned: list[tuple[int, int, list[int]]]) -> None:
        """The initial states this slice owns: (rank, initial state's index, canonical vector), by rank."""
        k = len(owned)
        vecs = self._vec([x for _r, _i, v in owned for x in v] or [0])
        ranks = (ctypes.c_uint32 * max(k, 1))(*[r for r, _i, _v in owned])
        idx = (ctypes.c_uint32 * max(k, 1))(*[i for _r, i, _v in owned])
        self._check(self.dll.cr_seed(vecs, ranks, idx, k))

    def decided(self, props: list[int]) -> None:
        for k in props:
            self.dll.cr_decided(k)

    def expand(self, base: int, cutoff: int | None, sample: tuple[int, int, int]) -> list[bytes]:
        """Expand this level; the successor buffer for each actor."""
        self._check(self.dll.cr_expand(base, NONE if cutoff is None else cutoff, *sample))
        out = []
        n = ctypes.c_size_t()
        for d in range(self.jobs):
            p = self.dll.cr_buffer(d, ctypes.byref(n))
            out.append(ctypes.string_at(p, n.value) if n.value else b"")
        return out

    def receive(self, data: bytes, sender: int) -> None:
        if data:
            self._check(self.dll.cr_receive(data, len(data), sender))

    def candidates(self) -> bytes:
        """This level's new states' keys (uint64, little-endian, in the slice's order)."""
        n = self.dll.cr_candidates(None)
        keys = (ctypes.c_uint64 * max(n, 1))()
        self.dll.cr_candidates(keys)
        return bytes(keys)[:8 * n]

    def admit(self, ranks: bytes) -> None:
        n = len(ranks) // 4
        buf = (ctypes.c_uint32 * max(n, 1)).from_buffer_copy(ranks + b"\0" * (4 if n == 0 else 0))
        self._check(self.dll.cr_admit(buf))

    def found(self) -> dict[int, tuple[int, int]]:
        """Properties this level decided here: index -> (rank, state index)."""
        r = (ctypes.c_uint32 * (self.nprops + 1))()
        i = (ctypes.c_uint32 * (self.nprops + 1))()
        self.dll.cr_found(r, i)
        return {k: (r[k], i[k]) for k in range(self.nprops) if r[k] != NONE}

    def level_summary(self, cutoff: int | None) -> tuple[int, tuple[int, int] | None]:
        """(transitions of the parents up to ``cutoff``, the least deadlock's (rank, index) or None)."""
        t = self.dll.cr_transitions_upto(NONE if cutoff is None else cutoff)
        r, i = ctypes.c_uint32(), ctypes.c_uint32()
        self.dll.cr_deadlock(ctypes.byref(r), ctypes.byref(i))
        dl = None if r.value == NONE or (cutoff is not None and r.value > cutoff) else (r.value, i.value)
        return t, dl

    def events(self) -> list[tuple[int, int, int] | None]:
        """Per event: (the one-process number of the least state raising it here, its index, the step)."""
        m = self.nevents + 1
        num, lid, step = (ctypes.c_uint32 * m)(), (ctypes.c_uint32 * m)(), (ctypes.c_int32 * m)()
        self.dll.cr_events(num, lid, step)
        return [None if num[e] == NONE or lid[e] == NONE else (num[e], lid[e], step[e]) for e in range(self.nevents)]

    def lookup(self, idx: int) -> tuple[list[int], int | None, int, int]:
        """(slot values, parent's index at its owner or None, that owner, the step or initial index)."""
        v = (ctypes.c_int64 * self.n)()
        par, owner, step = ctypes.c_uint32(), ctypes.c_int32(), ctypes.c_int32()
        if self.dll.cr_lookup(idx, v, ctypes.byref(par), ctypes.byref(owner), ctypes.byref(step)):
            raise SliceError(DAMAGED, f"no state {idx} in this slice")
        return list(v), None if par.value == NONE else par.value, owner.value, step.value

    def stats(self) -> tuple[int, int, int, int]:
        """(states stored, bytes of the slice's structures, packed bytes a state, peak resident bytes)."""
        out = (ctypes.c_uint64 * 4)()
        self.dll.cr_stats(out)
        return tuple(out)  # type: ignore[return-value]

    def close(self) -> None:
        if self.live:
            self.dll.cr_free()
            self.live = False
