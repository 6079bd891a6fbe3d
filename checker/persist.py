# SPDX-License-Identifier: GPL-2.0-only
"""The one trust rule for everything read back from disk.

A verdict must come from a search of this spec at this point by this
version of the checker (DESIGN.md, principle 7). Whatever the checker
reads back (a cached program, a checkpoint level, a manifest) therefore
passes three checks here, and every reader goes through them:

1. **Ownership**: the file (and the directory it is kept in) belongs to the
   user running the checker and nobody else can write it. A file others can
   change is a file others can use to plant a verdict (or, for a program,
   to run code as us).
2. **Integrity**: a header with a magic word, the format's version, the
   payload's length and SHA-256. A truncated, empty or bit-flipped file, or
   one of an older format, is *damaged*, never half-read.
3. **Binding**: the header carries a digest of what produced the file (the
   spec's source, its parameters, the checker's own source, ...); a file of
   another run is a *mismatch*, never mixed in.

The payload is data only (``encode``/``decode``: JSON with tuples, lists,
dicts and sets tagged), never pickle: reading a hostile file can fail, it
cannot run code. Writes go to a private temporary name in the same
directory, are fsynced and renamed, so a reader sees a whole file or none.

The checks say *why* a file is refused (``Refused.why``); the caller turns
that into its own action: a cache entry is deleted and rebuilt, a
checkpoint is a usage error naming the directory to delete.
"""
from __future__ import annotations

import functools
import hashlib
import json
import os
import stat
import sys
import tempfile
import types
from pathlib import Path
from typing import Any, Iterable

#: The version of the framing below; a file of another version is refused as damaged.
FORMAT = 1
MAGIC = b"countercheck"


class Refused(Exception):
    """A file read back is not used: ``why`` says what is wrong with it."""

    def __init__(self, path: Path | str, why: str):
        super().__init__(f"{path}: {why}")
        self.path = Path(path)
        self.why = why


class Untrusted(Refused):
    """Owned by someone else, writable by others, not a regular file or directory."""


class Damaged(Refused):
    """Truncated, bit-flipped, of another format, or of the wrong shape."""


class Mismatch(Refused):
    """Whole and ours, but written by another run (another spec source, parameters, checker, ...)."""


def _uid() -> int | None:
    return os.geteuid() if hasattr(os, "geteuid") else None  # no owners to check on Windows


def check_owned(path: Path | str, *, directory: bool = False) -> os.stat_result:
    """``path`` is ours and only ours to write: a regular file (or a directory), not a symlink,
    owned by the effective user, not writable by group or others. Raises ``Untrusted``."""
    try:
        st = os.lstat(path)
    except OSError as e:
        raise Untrusted(path, f"cannot be examined ({e.strerror})") from None
    want, what = (stat.S_ISDIR, "a directory") if directory else (stat.S_ISREG, "a regular file")
    if not want(st.st_mode):
        raise Untrusted(path, f"is not {what}" + (" (a symbolic link)" if stat.S_ISLNK(st.st_mode) else ""))
    uid = _uid()
    if uid is not None and st.st_uid != uid:
        raise Untrusted(path, f"is owned by uid {st.st_uid}, not by the user running the checker (uid {uid})")
    if uid is not None and st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        raise Untrusted(path, f"is writable by {'others' if st.st_mode & stat.S_IWOTH else 'its group'} "
                              f"(mode {stat.S_IMODE(st.st_mode):o})")
    return st


def private_dir(path: Path | str) -> Path:
    """``path`` as a directory only we can write, created (0700) if missing. A directory of ours with a
    looser mode is tightened; anything else (a file in the way, another owner, a symlink) raises
    ``Untrusted``; a directory that cannot be created raises ``OSError``."""
    p = Path(path)
    p.mkdir(parents=True, exist_ok=True, mode=0o700)  # a file in the way: FileExistsError
    try:
        st = os.lstat(p)
    except OSError as e:
        raise Untrusted(p, f"cannot be examined ({e.strerror})") from None
    uid = _uid()
    if stat.S_ISDIR(st.st_mode) and uid is not None and st.st_uid == uid and stat.S_IMODE(st.st_mode) & 0o077:
        os.chmod(p, 0o700)  # ours, made under a loose umask: nobody else may write here
    check_owned(p, directory=True)
    return p


# -- data only -------------------------------------------------------------------------------------
def _enc(x: Any) -> Any:
    t = type(x)
    if t is int or t is str or t is bool or t is float or x is None:
        return x
    if isinstance(x, tuple):  # the state classes are tuples: stored as plain ones
        return [_enc(y) for y in x]
    if t is list:
        return {"L": [_enc(y) for y in x]}
    if t is dict:
        return {"D": [[_enc(k), _enc(v)] for k, v in x.items()]}
    if t is set or t is frozenset:
        return {"S" if t is set else "F": [_enc(y) for y in sorted(x, key=repr)]}
    if isinstance(x, int):  # an IntEnum or a numpy-free int subclass: its value
        return int(x)
    raise TypeError(f"cannot store a {t.__name__} as data")


def _dec(x: Any) -> Any:
    t = type(x)
    if t is list:
        return tuple([_dec(y) for y in x])
    if t is dict:
        if len(x) != 1:
            raise ValueError("a tagged value has one key")
        (tag, v), = x.items()
        if type(v) is not list:
            raise ValueError(f"tag {tag!r} holds no list")
        if tag == "L":
            return [_dec(y) for y in v]
        if tag == "D":
            if not all(type(kv) is list and len(kv) == 2 for kv in v):
                raise ValueError("a dict entry is not a pair")
            return {_dec(k): _dec(val) for k, val in v}
        if tag in ("S", "F"):
            return (set if tag == "S" else frozenset)(_dec(y) for y in v)
        raise ValueError(f"unknown tag {tag!r}")
    return x


def encode(obj: Any) -> bytes:
    """Data (ints, strings, floats, None, tuples, lists, dicts, sets) as bytes; anything else: TypeError."""
    return json.dumps(_enc(obj), separators=(",", ":")).encode()


def decode(data: bytes) -> Any:
    """``encode``'s inverse (JSON arrays come back as tuples); malformed data raises ValueError."""
    try:
        return _dec(json.loads(data))
    except (UnicodeDecodeError, RecursionError, TypeError) as e:
        raise ValueError(str(e)) from None


# -- framed files ----------------------------------------------------------------------------------
def digest(*parts: Any) -> str:
    """A short hex digest of data (``encode``d): what a file is bound to."""
    return hashlib.sha256(encode(parts)).hexdigest()[:32]


def _header(kind: str, binding: str, payload: bytes) -> bytes:
    head = {"binding": binding, "length": len(payload), "sha256": hashlib.sha256(payload).hexdigest()}
    return MAGIC + f" {kind} {FORMAT}\n".encode() + json.dumps(head, sort_keys=True).encode() + b"\n"


def write_atomic(path: Path | str, data: bytes, *, mode: int = 0o600) -> None:
    """``data`` to ``path``, whole or not at all: a private temporary name in the same directory,
    fsynced, then renamed (and the directory fsynced, so the rename survives a power cut)."""
    path = Path(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    sync_dir(path.parent)


def sync_dir(d: Path | str) -> None:
    """fsync a directory, so that a rename in it survives a crash (where the platform allows it)."""
    try:
        fd = os.open(d, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:  # some file systems cannot sync a directory: the rename is still atomic
        pass
    finally:
        os.close(fd)


def write_framed(path: Path | str, kind: str, binding: str, payload: bytes) -> None:
    """``payload`` behind a header naming ``kind``, the format, ``binding``, its length and hash."""
    write_atomic(path, _header(kind, binding, payload) + payload)


def read_framed(path: Path | str, kind: str, binding: str | None) -> bytes:
    """The payload of a ``write_framed`` file, after every check: ours (``Untrusted``), whole and of
    this format and kind (``Damaged``), written for ``binding`` (``Mismatch``; ``None``: any)."""
    check_owned(path)
    try:
        with open(path, "rb") as f:
            raw = f.read()
    except OSError as e:
        raise Damaged(path, f"cannot be read ({e.strerror})") from None
    first, _, rest = raw.partition(b"\n")
    head_line, _, payload = rest.partition(b"\n")
    if not raw:
        raise Damaged(path, "is empty")
    if first != MAGIC + f" {kind} {FORMAT}".encode():
        shown = first[:60].decode("ascii", "replace")
        raise Damaged(path, f"is not a {kind} file of format {FORMAT} (it starts {shown!r})")
    try:
        head = json.loads(head_line)
        ok = isinstance(head, dict) and isinstance(head.get("length"), int) and \
            isinstance(head.get("sha256"), str) and isinstance(head.get("binding"), str)
    except (ValueError, UnicodeDecodeError):
        ok = False
    if not ok:
        raise Damaged(path, "has a damaged header")
    if len(payload) != head["length"]:
        raise Damaged(path, f"is truncated or padded ({len(payload)} bytes of data, {head['length']} written)")
    if hashlib.sha256(payload).hexdigest() != head["sha256"]:
        raise Damaged(path, "does not match its checksum (changed on disk since it was written)")
    if binding is not None and head["binding"] != binding:
        raise Mismatch(path, "was written by another run (another spec source, parameters or checker version)")
    return payload


def write_data(path: Path | str, kind: str, binding: str, obj: Any) -> None:
    """``encode`` then ``write_framed``: data only, atomically, bound to ``binding``."""
    write_framed(path, kind, binding, encode(obj))


def read_data(path: Path | str, kind: str, binding: str | None) -> Any:
    """``read_framed`` then ``decode``: data only, or ``Damaged``."""
    payload = read_framed(path, kind, binding)
    try:
        return decode(payload)
    except ValueError as e:
        raise Damaged(path, f"holds malformed data ({e})") from None


def file_sha256(path: Path | str) -> str:
    """The SHA-256 of a file's bytes, read in blocks."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def check_sealed(path: Path | str, kind: str, binding: str) -> None:
    """``path`` (a file that cannot carry a header, such as a built program) and its manifest
    (``path.manifest``: a ``write_data`` file of its length and SHA-256, written before ``path`` is
    renamed into place) pass the trust rule: both ours, the manifest whole and bound to ``binding``,
    ``path`` of the length and hash it records. Raises a ``Refused``."""
    path = Path(path)
    check_owned(path)
    m = read_data(path.with_name(path.name + ".manifest"), kind, binding)
    if not (isinstance(m, dict) and isinstance(m.get("length"), int) and isinstance(m.get("sha256"), str)):
        raise Damaged(path, "its manifest is malformed")
    try:
        size = path.stat().st_size
        same = size == m["length"] and file_sha256(path) == m["sha256"]
    except OSError as e:
        raise Damaged(path, f"cannot be read ({e.strerror})") from None
    if not same:
        raise Damaged(path, "does not match its manifest (truncated or changed since it was built)")


@functools.lru_cache(maxsize=1)
def checker_digest() -> str:
    """The checker's version: a digest of its own source files (any change of the checker, released or
    not, makes it another version)."""
    root = Path(__file__).resolve().parent
    h = hashlib.sha256()
    for p in sorted(root.rglob("*")):
        if p.suffix in (".py", ".c") and p.is_file():
            h.update(str(p.relative_to(root)).encode() + b"\0")
            h.update(p.read_bytes())
    return h.hexdigest()[:32]


def files_digest(paths: Iterable[str | Path]) -> str:
    """A digest of these files' contents (by name); a file that cannot be read counts as missing."""
    h = hashlib.sha256()
    for p in sorted({str(p) for p in paths}):
        h.update(p.encode() + b"\0")
        try:
            h.update(Path(p).read_bytes())
        except OSError:
            h.update(b"\0missing")
    return h.hexdigest()[:32]


# -- the code a spec runs ---------------------------------------------------------------------------
_SKIP = frozenset(sys.stdlib_module_names) | {"z3", "builtins"}
#: The checker's own sources (``checker_digest`` covers them); the built-in specs, which load as
#: ``checker.specs.*`` from the ``specs`` directory beside it, are not among them.
_CHECKER = Path(__file__).resolve().parent


#: Per module file: whether it is the checker's (resolving a path is slow, and a spec's modules name many).
_in_checker: dict[str, bool] = {}


def _user_module(name: str | None) -> types.ModuleType | None:
    if not name or name.partition(".")[0] in _SKIP:
        return None
    m = sys.modules.get(name)
    f = getattr(m, "__file__", None) if isinstance(m, types.ModuleType) else None
    if not f:
        return None
    if f not in _in_checker:
        _in_checker[f] = Path(f).resolve().is_relative_to(_CHECKER)
    return None if _in_checker[f] else m


@functools.lru_cache(maxsize=256)
def code_files(cls: type) -> list[str]:
    """The source files a spec's behaviour can depend on: its classes' modules and, transitively, every
    module they use (imported, or a name imported from it) outside the standard library, Z3 and the checker
    (which modules they are is found once per class and process; their contents are read by each digest)."""
    seen: dict[str, types.ModuleType] = {}
    todo = [m for k in cls.__mro__ if (m := _user_module(k.__module__)) is not None]
    while todo:
        m = todo.pop()
        if m.__name__ in seen:
            continue
        seen[m.__name__] = m
        for v in list(vars(m).values()):
            used = v if isinstance(v, types.ModuleType) else None
            name = used.__name__ if used is not None else getattr(v, "__module__", None)
            u = _user_module(name if isinstance(name, str) else None)
            if u is not None and u.__name__ not in seen:
                todo.append(u)
    return sorted(str(m.__file__) for m in seen.values())


def user_cache(sub: str) -> Path:
    """``$XDG_CACHE_HOME/countercheck/SUB`` (else ``~/.cache/...``), made private; OSError or ``Refused``
    when it cannot be."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    top = Path(base) / "countercheck"
    private_dir(top)
    return private_dir(top / sub)


def point_digest(kind: str, cls: type, params: Any, *more: Any) -> str:
    """The digest of what a result at a parameter point depends on: the checker's code, the spec's
    (``code_files``), the class, the point's values and roles, and ``more``."""
    return digest(kind, checker_digest(), files_digest(code_files(cls)), f"{cls.__module__}.{cls.__qualname__}",
                  sorted(params.as_dict().items()), sorted((k, r.start, r.stop) for k, r in params.roles().items()),
                  *more)
