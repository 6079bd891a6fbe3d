# SPDX-License-Identifier: GPL-2.0-only
"""Compiling the generated program, with a build cache.

The compiler is ``$CC``, else ``cc``. Built programs are cached in the
user's cache directory (``$XDG_CACHE_HOME/countercheck/compiled``, else
``~/.cache/countercheck/compiled``), keyed by a hash of the generated
source, the compiler's identity (its resolved path and ``--version``) and
the flags, so a second run compiles nothing and a compiler upgrade
rebuilds.

A cached program is run, and its output becomes a verdict, so the cache
goes through ``checker.persist``'s trust rule: the directory must be the
user's and private (0700), and a program is used only with its manifest
(written before the program is renamed into place, bound to the cache key,
recording its length and SHA-256). A damaged entry (truncated, empty, bit-rotted, a manifest
missing) is deleted and built again, once; an entry that is not ours is
never run. A cache that cannot be used (no home, read-only, a file in the
way, another owner, a full disk) is replaced by a private temporary
directory for this process, with a note (``note()``); if that fails too,
the point runs on the interpreter, saying why. Every entry is written to a
temporary name in the directory, fsynced and renamed into place: parallel
runs (``--jobs``, pytest-xdist) see a whole program or none.
"""
from __future__ import annotations

import atexit
import functools
import hashlib
import os
import shlex
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

import checker.lifetime as lifetime
import checker.persist as persist

#: -O1: half of -O2's compile time, and within 5% of its search speed (measured on percpu_eager)
FLAGS = ("-O1", "-std=gnu11", "-fno-strict-aliasing", "-w", "-pthread")
#: -O0: half of -O1's compile time again, a third of its search speed: for the first states of a point
#: (checker/compiled/engine.py's QUICK_STATES), which most points of a sweep never pass
#: (``-DCC_QUICK``: without the searches on several threads, with fingerprints and with checkpoints, which
#: that first search never is: a third less compiling; checker/compiled/codegen.py's runtime_source)
QUICK_FLAGS = ("-O0", "-DCC_QUICK", "-std=gnu11", "-fno-strict-aliasing", "-w", "-pthread")


#: Programs compiled by this process and the seconds spent in the compiler (``verify --timings`` reports them).
SPENT = {"programs": 0, "seconds": 0.0}


class CompilerMissing(Exception):
    """No C compiler: the message says which one was looked for."""


class CompileFailed(Exception):
    """The compiler rejected the generated program (a bug of ours: the message carries its output)."""


def compiler() -> list[str]:
    """The compiler command: $CC (which may carry flags), else cc."""
    cc = os.environ.get("CC") or "cc"
    parts = shlex.split(cc)
    if not parts or shutil.which(parts[0]) is None:
        raise CompilerMissing(f"no C compiler ({'$CC=' + cc if os.environ.get('CC') else 'cc'} not found)")
    return parts


@functools.lru_cache(maxsize=8)
def _identity(cmd: tuple[str, ...]) -> str:
    path = os.path.realpath(shutil.which(cmd[0]) or cmd[0])
    try:
        ver = subprocess.run([*cmd, "--version"], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.SubprocessError) as e:
        raise CompilerMissing(f"the C compiler {cmd[0]} does not run ({e})") from None
    return f"{path} {' '.join(cmd[1:])}\n{ver}"


#: Why the user's cache is not used in this process, once it was found unusable (None: it is used).
_unusable: str | None = None
_private: Path | None = None


def user_cache_dir() -> Path:
    """Where the user's build cache lives: ``$XDG_CACHE_HOME/countercheck/compiled`` (or ``~/.cache``)."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "countercheck" / "compiled"


def _private_tmp() -> Path:
    """A temporary cache of this process only (0700, removed at exit)."""
    global _private
    if _private is None or not _private.is_dir():
        _private = Path(tempfile.mkdtemp(prefix="countercheck-build-"))
        atexit.register(shutil.rmtree, _private, True)
    return _private


def cache_dir() -> Path:
    """The user's build cache if it passes the trust rule, else a private temporary one (``note()``
    says why); ``CompilerMissing`` when neither can be made."""
    global _unusable
    if _unusable is not None and _private is not None and _private.is_dir():
        return _private  # found unusable earlier in this process (e.g. a full disk): not tried again
    d = user_cache_dir()
    try:
        persist.private_dir(d.parent)
        return persist.private_dir(d)
    except persist.Refused as e:
        why = f"{e.path} {e.why}"
    except OSError as e:  # no home, read-only, a file in the way, a full disk
        why = f"{e.filename or d} cannot be made a directory ({e.strerror or e})"
    _unusable = f"the build cache is not used ({why}): built in a private temporary directory"
    try:
        return _private_tmp()
    except OSError as e:
        raise CompilerMissing(f"no usable build directory ({why}; a temporary one: {e.strerror or e})") from None


def note() -> str | None:
    """Why this process builds in a private temporary directory, if it does."""
    return _unusable


def source_digest(source: str) -> str:
    """The SHA-256 of a generated program's text (what the point index, checker/compiled/index.py, keeps)."""
    return hashlib.sha256(source.encode()).hexdigest()


def cache_key(source: str, cmd: list[str], flags: tuple[str, ...] = FLAGS) -> str:
    """The cache name of a program: its source, the compiler's identity and command, and the flags."""
    return digest_key(source_digest(source), cmd, flags)


def digest_key(digest: str, cmd: list[str], flags: tuple[str, ...] = FLAGS) -> str:
    """``cache_key`` of the source whose ``source_digest`` is ``digest``."""
    h = hashlib.sha256()
    h.update(_identity(tuple(cmd)).encode())
    h.update("\0".join(flags).encode())
    h.update(b"\0")
    h.update(digest.encode())
    return h.hexdigest()[:32]


def _discard(exe: Path) -> None:
    for p in (exe, exe.with_name(exe.name + ".manifest"), exe.with_name(exe.name + ".c")):
        try:
            os.unlink(p)
        except FileNotFoundError:
            pass


def cached(source: str, flags: tuple[str, ...] = FLAGS) -> Path | None:
    """The program built from ``source`` with ``flags`` if the cache holds it whole and ours (the trust
    rule), else None; nothing is built or deleted."""
    return cached_digest(source_digest(source), flags)


def cached_digest(digest: str, flags: tuple[str, ...] = FLAGS) -> Path | None:
    """``cached`` of the source whose ``source_digest`` is ``digest``."""
    try:
        exe = cache_dir() / f"search-{digest_key(digest, compiler(), flags)}"
    except CompilerMissing:
        return None
    try:
        persist.check_sealed(exe, "program", exe.name[len("search-"):])
    except (persist.Refused, OSError):
        return None
    return exe


def build(source: str, flags: tuple[str, ...] = FLAGS, units: tuple[str, str] | None = None) -> tuple[Path, bool]:
    """(the built program, whether it was compiled now rather than found in the cache). A cached
    program that fails the trust rule is discarded and built again, once. ``units``: ``source`` as two
    translation units, (its own part, the runtime: checker/compiled/codegen.py's ``split_units``); the
    runtime is then compiled once, as an object kept in the cache beside the programs, and linked with
    each program's part (the quick build, where the runtime was half of every compile)."""
    cmd = compiler()
    key = cache_key(source, cmd, flags)
    for attempt in (1, 2):
        d = cache_dir()
        exe = d / f"search-{key}"
        if os.path.lexists(exe):  # (a manifest alone is another run's build in progress, or a leftover)
            try:
                persist.check_sealed(exe, "program", key)
                return exe, False
            except persist.Refused:
                _discard(exe)  # in a private directory: ours to delete, and to build again
        t0 = time.perf_counter()
        try:
            if units is None:
                _compile(source, cmd, key, d, exe, flags)
            else:
                _compile(units[0], cmd, key, d, exe, flags, (str(_runtime_object(units[1], cmd, d, flags)),))
        except OSError as e:  # a full disk, a directory gone: once more in a private temporary one
            if attempt == 2 or d == _private:
                raise CompilerMissing(f"cannot build in {d} ({e.strerror or e})") from None
            global _unusable
            _unusable = f"the build cache is not used ({d}: {e.strerror or e}): built in a private temporary " \
                        f"directory"
            _private_tmp()
            continue
        finally:
            SPENT["programs"] += 1
            SPENT["seconds"] += time.perf_counter() - t0
        try:
            persist.check_sealed(exe, "program", key)
        except persist.Refused as e:
            if attempt == 2:
                raise CompileFailed(f"the program built in {d} fails its own check: {e.why}") from None
            _discard(exe)
            continue
        return exe, True
    raise AssertionError("unreachable")  # pragma: no cover


def _runtime_object(text: str, cmd: list[str], d: Path, flags: tuple[str, ...]) -> Path:
    """The runtime compiled alone (``build``'s ``units``), from the cache when it is there whole and ours
    (the trust rule, as a program), else compiled now into ``d``, once; a damaged one is built again."""
    key = cache_key(text, cmd, (*flags, "-c"))
    obj = d / f"runtime-{key}.o"
    try:
        persist.check_sealed(obj, "runtime object", key)
        return obj
    except persist.Refused:
        _discard(obj)
    except OSError:
        pass
    _compile(text, cmd, key, d, obj, (*flags, "-c"), kind="runtime object")
    return obj


def _compile(source: str, cmd: list[str], key: str, d: Path, exe: Path, flags: tuple[str, ...] = FLAGS,
             objects: tuple[str, ...] = (), kind: str = "program") -> None:
    """Compile into ``exe`` (with ``objects`` linked in): the output fsynced, its manifest written, then
    the output renamed into place (a reader sees it with its manifest, or not at all)."""
    fd, src_tmp = tempfile.mkstemp(prefix=f".{key}-", suffix=".c", dir=d)
    out_tmp = src_tmp[:-2] + ".out"
    try:
        with os.fdopen(fd, "w") as f:
            f.write(source)
        proc = subprocess.Popen([*cmd, *flags, "-o", out_tmp, src_tmp, *objects], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, **lifetime.popen_kwargs())
        try:
            out, err = proc.communicate()
        except BaseException:  # an interrupt: the compiler and its children (cc1, as, ld) end with us
            lifetime.kill_group(proc)
            raise
        if proc.returncode != 0 or not os.path.exists(out_tmp):
            said = [ln for ln in (err or out).strip().splitlines() if ln.strip()][:4]
            head = " | ".join(said) if said else "it printed nothing"
            why = f"{cmd[0]} failed on the generated program (exit status {proc.returncode}): {head}"
            if os.environ.get("COUNTERCHECK_COMPILE_FAILURE") == "raise":
                # the test suite's setting: a program of ours the compiler rejects is a bug to see, not a
                # fallback that turns an engine comparison into the interpreter against itself
                raise RuntimeError(why)
            raise CompileFailed(why)
        with open(out_tmp, "rb") as f:
            os.fsync(f.fileno())
        os.chmod(out_tmp, 0o700)
        manifest = exe.with_name(exe.name + ".manifest")
        persist.write_data(manifest, kind, key,
                           {"length": os.path.getsize(out_tmp), "sha256": persist.file_sha256(out_tmp)})
        os.replace(out_tmp, exe)  # atomic: a parallel run sees all of it or nothing
        persist.sync_dir(d)
        os.replace(src_tmp, exe.with_name(exe.name + ".c"))  # kept beside the program, for reading what ran
    finally:
        for p in (out_tmp, src_tmp):
            if os.path.exists(p):
                os.unlink(p)
