# SPDX-License-Identifier: GPL-2.0-only
"""The one writer of report files: never half a report, never one report lost for another.

- Before the run (``refuse_clashes``): two flags naming one file (``--json X
  --junit X``, or two names of it: a symlink, a hard link) would keep one
  report, and a report over an input (``--json spec.py``) would destroy the
  spec: both are refused. ``remove_stale`` then deletes the reports a
  previous run left at those paths, so a run that dies before writing leaves
  no report, rather than the last run's, to be read as this one's.
- At the end (``write_all``): each file is written under a temporary name in
  its own directory, fsynced and renamed over the target, so a kill while
  writing leaves the old file or the new one, never a truncated one. Every
  file is attempted; the failures are returned, one line each, for the
  caller to print after the rest.

A target that exists and is not a regular file (``/dev/stdout``, a FIFO, a
device) is written in place: renaming over it would replace the device.
"""
from __future__ import annotations

import os
import stat
from collections.abc import Iterable

import checker.persist as persist
from checker.errors import UsageError


def _identity(path: str) -> tuple:
    """What names one file: its device and inode when it exists (the kernel follows the links, /dev/stdout's
    included), else its resolved path."""
    try:
        st = os.stat(path)
    except OSError:
        return ("path", os.path.realpath(path))
    return ("inode", st.st_dev, st.st_ino)


def refuse_clashes(outputs: Iterable[tuple[str, str]], inputs: Iterable[str]) -> None:
    """``outputs``: (flag, path) of each file the run writes; ``inputs``: the files it reads. Refuse an
    output named twice or naming an input (usage error, exit 2), symlinks and hard links resolved."""
    seen: dict[tuple, str] = {}
    ins = {_identity(p): p for p in inputs if os.path.lexists(p)}
    for flag, path in outputs:
        ident = _identity(path)
        if ident in ins:
            raise UsageError(f"{flag} {path} is {ins[ident]!r}, an input of this run: writing the report there "
                             f"would destroy it; give another file name")
        if ident in seen:
            raise UsageError(f"{seen[ident]} and {flag} both write {path}: one report would replace the other; "
                             f"give each its own file")
        seen[ident] = f"{flag} {path}"


def _in_place(path: str) -> bool:
    """The target exists and is not a regular file (a device, a FIFO, /dev/stdout): write into it."""
    try:
        return not stat.S_ISREG(os.stat(path).st_mode)
    except OSError:
        return False


def remove_stale(paths: Iterable[str]) -> None:
    """Delete the regular files at ``paths`` (a previous run's reports); a failure is left for the
    write at the end to report."""
    for p in paths:
        real = os.path.realpath(p)
        if os.path.lexists(p) and not _in_place(p) and os.path.lexists(real):
            try:
                os.unlink(real)
            except OSError:
                pass


def write_atomic(path: str, payload: str | bytes) -> None:
    """Write ``payload`` to ``path``: a temporary file in its directory, fsynced, renamed over it. A symlink
    is followed (the file it names is replaced, the link kept). Raises ``OSError``."""
    data = payload.encode("utf-8") if isinstance(payload, str) else payload
    if _in_place(path):  # by the name given: /dev/stdout resolves to no file, but opens
        with open(path, "wb") as f:
            f.write(data)
            f.flush()
        return
    # persist's atomic write (temporary name, fsync, rename, directory synced), with a report's usual mode
    persist.write_atomic(os.path.realpath(path), data, mode=0o666 & ~_umask())


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def write_all(files: Iterable[tuple[str, str, str | bytes]]) -> list[str]:
    """Write every (flag, path, payload), each atomically; the failures, one line each (empty: all written)."""
    failed = []
    for flag, path, payload in files:
        try:
            write_atomic(path, payload)
        except OSError as e:
            failed.append(f"cannot write {flag} {path}: {e.strerror or e}")
    return failed
