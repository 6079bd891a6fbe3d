# SPDX-License-Identifier: GPL-2.0-only
"""What a command can refuse before it starts: paths it will write, directories it will read, --jobs.

A run that fails after an hour because ``--json`` names a missing directory
loses the hour; each check here runs before any work and raises a
``UsageError`` (exit 2, one line).
"""
from __future__ import annotations

import json
import os
from pathlib import Path

import checker.persist as persist
from checker.errors import UsageError


def writable_file(flag: str, path: str) -> None:
    """``path`` can be created or overwritten as a file."""
    p = Path(path)
    if p.is_dir():
        raise UsageError(f"{flag} {path}: is a directory; give a file name")
    parent = p.parent if str(p.parent) else Path(".")
    if not parent.is_dir():
        raise UsageError(f"{flag} {path}: the directory {parent} does not exist; create it first")
    if not os.access(parent, os.W_OK) or (p.exists() and not os.access(p, os.W_OK)):
        raise UsageError(f"{flag} {path}: not writable")


def directory(flag: str, path: str) -> None:
    """``path`` is a directory or can be made one (not a regular file)."""
    p = Path(path)
    if p.exists() and not p.is_dir():
        raise UsageError(f"{flag} {path}: is a file; give a directory (it is created if missing)")
    parent = next((q for q in p.absolute().parents if q.exists()), None)
    if parent is not None and not p.exists() and not os.access(parent, os.W_OK):
        raise UsageError(f"{flag} {path}: cannot create it in {parent} (not writable)")


def resumable(path: str) -> None:
    """``path`` holds a checkpoint (``--checkpoint``'s layout), every ``meta.data`` of it whole and ours
    (``checker.persist``); the rest of each is checked when its point resumes."""
    p = Path(path)
    if not p.is_dir():
        raise UsageError(f"--resume {path}: no such directory; start a run with --checkpoint {path}")
    metas = sorted(p.glob("*/meta.data"))
    if not metas:
        old = " (its files are of an older format: start afresh)" if any(p.glob("*/meta.json")) else ""
        raise UsageError(f"--resume {path}: holds no checkpoint (no SPEC-HASH/meta.data in it){old}; start one "
                         f"with --checkpoint {path}")
    for m in metas:
        try:
            json.loads(persist.read_framed(m, "checkpoint-meta", None))
        except persist.Refused as e:
            raise UsageError(f"--resume {path}: the checkpoint's {m.relative_to(p)} {e.why}; delete "
                             f"{m.parent} to explore that point afresh") from None
        except ValueError as e:
            raise UsageError(f"--resume {path}: the checkpoint's {m.relative_to(p)} is corrupt ({e}); delete "
                             f"{m.parent} to explore that point afresh") from None


def local_cores() -> int:
    """The CPUs this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def cap_jobs(jobs: int, cores: int, where: str) -> tuple[int, str | None]:
    """``jobs`` at most ``cores``, with the note that says so: more workers than CPUs only wait."""
    if jobs <= cores:
        return jobs, None
    return cores, f"note: --jobs {jobs} capped at {cores}, the number of CPUs {where}"
