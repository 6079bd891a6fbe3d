# SPDX-License-Identifier: GPL-2.0-only
"""Checkpoints of a parallel exploration, one per BFS level, for ``--resume``.

Under the directory given (``--checkpoint DIR``), each spec and parameter
point has its own directory ``SPEC-HASH`` (the hash of its parameters),
laid out as::

    meta.data                     what produced it: spec, parameters, workers, symmetry,
                                  a digest of the spec's source and of the checker's
    level-000003/worker-1.data    worker 1's states first admitted at level 3
    level-000003/coordinator.data the counters after level 3, written last
    run.data (in DIR itself)      the command's --set and --memory values

Every file goes through ``checker.persist``, the one trust rule for what is
read back: data only (never pickle: a hostile checkpoint can fail to load,
it cannot run code), behind a header with the format, a checksum and the
digest of what produced it; owned by the user and writable by nobody else.
A checkpoint of another run (the spec edited, other parameters, another
checker) is refused naming what differs and the directory to delete, as is
a damaged one; nothing of it is mixed into a search.

A worker file holds only the states its worker admitted at that level, in
the order it stored them (so local ids come back the same on reload): the
states as plain tuples, their parent links ``(owner, local id, label)`` and
their ranks in the level, plus the worker's context-rule record so far. The
coordinator's file holds depth, states expanded and stored, the level's
width, transitions, the deciding states found and the first deadlock.

Every file is written to a temporary name and renamed, so a file is either
whole or absent; a level counts as complete only once its coordinator file
exists, and the coordinator writes it after every worker has written its
own. Resume loads levels 0..L for the last complete level L and ignores
anything later, so a run stopped at any moment loses at most one level's
work and counts nothing twice.
"""
from __future__ import annotations

import hashlib
import inspect
import json
import os
import re
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import checker.persist as persist
from checker.errors import UsageError

if TYPE_CHECKING:
    from checker.language.compile import Model

COORDINATOR = "coordinator.data"
META = "meta.data"
RUN = "run.data"
#: What each field of the binding is called when it differs.
_FIELDS = {"spec_source": "the spec's source (or a module it imports) changed since",
           "checker": "the checker itself changed since"}


def point_dir(root: Path, model: "Model") -> Path:
    """One directory per spec and parameter point, so a whole sweep resumes."""
    shown = json.dumps(model.params.shown(), sort_keys=True)
    return root / f"{model.name}-{hashlib.sha1(shown.encode()).hexdigest()[:10]}"


def level_dir(root: Path, level: int) -> Path:
    """The directory of one saved BFS level of a point."""
    return root / f"level-{level:06d}"


def worker_file(root: Path, level: int, wid: int) -> Path:
    """The file one worker's part of a BFS level is saved in."""
    return level_dir(root, level) / f"worker-{wid}.data"


def _spec_sources(model: "Model") -> set[str]:
    """The spec's files: its classes' modules, and the modules of the names they import that are
    neither the checker's nor installed (a helper module beside the spec)."""
    files = set(model.spec_files)
    checker_root = str(Path(persist.__file__).resolve().parent)
    installed = {str(Path(p).resolve()) for p in {sys.prefix, sys.base_prefix, sys.exec_prefix}}
    for base in model.cls.__mro__:
        mod = sys.modules.get(getattr(base, "__module__", "") or "")
        if mod is None or base.__module__ in ("builtins",):
            continue
        for value in list(vars(mod).values()):
            owner = value if inspect.ismodule(value) else sys.modules.get(getattr(value, "__module__", None) or "")
            f = getattr(owner, "__file__", None)
            if not f or not f.endswith(".py"):
                continue
            f = str(Path(f).resolve())
            if not f.startswith(checker_root) and not any(f.startswith(p) for p in installed):
                files.add(f)
    return files


def binding(model: "Model", jobs: int, symmetry: bool) -> dict[str, Any]:
    """What a point's checkpoint is bound to: spec, parameters (the memory model among them), workers,
    symmetry, and digests of the spec's source and of the checker's."""
    return {"spec": model.name, "params": model.params.shown(), "jobs": jobs, "symmetry": symmetry,
            "spec_source": persist.files_digest(_spec_sources(model)), "checker": persist.checker_digest()}


def _refuse(e: persist.Refused, root: Path, level: int | None = None) -> UsageError:
    if level is None:
        return UsageError(f"the checkpoint in {root} cannot be used: {e.path.name} {e.why}; delete {root} "
                          f"to explore this point afresh")
    return UsageError(f"the checkpoint in {root} cannot be used: {level_dir(root, level).name}/{e.path.name} "
                      f"{e.why}; delete {level_dir(root, level)} and the levels after it to resume from the "
                      f"level before, or {root} to explore this point afresh")


def last_complete(root: Path) -> int | None:
    """The last level whose coordinator file was written, if any."""
    levels = [int(m.group(1)) for p in root.glob("level-*") if (m := re.fullmatch(r"level-(\d+)", p.name))
              and os.path.lexists(p / COORDINATOR)]  # (not is_file: a directory there is refused, not skipped)
    return max(levels, default=None)


def start(root: Path, meta: dict[str, Any], resume: bool) -> tuple[int | None, str]:
    """Prepare ``root`` for a run bound to ``meta`` (``binding``): the level to resume from
    (``None``: start afresh) and the digest every level file carries. A checkpoint of another run
    (another spec source, parameters, checker, ...) is refused rather than mixed in or overwritten."""
    key = persist.digest(meta)
    level = last_complete(root)
    if level is None:
        try:
            persist.private_dir(root)
        except (OSError, persist.Refused) as e:
            raise UsageError(f"the checkpoint directory {root} cannot be used: {e}") from None
        persist.write_framed(root / META, "checkpoint-meta", key, json.dumps(meta, sort_keys=True).encode())
        return None, key
    if not resume:
        raise UsageError(f"{root} already holds a checkpoint (level {level}); continue it with "
                         f"--resume {root.parent}, or give --checkpoint an empty directory")
    try:
        persist.check_owned(root, directory=True)
        old = json.loads(persist.read_framed(root / META, "checkpoint-meta", None))
        if not isinstance(old, dict):
            raise persist.Damaged(root / META, "is not a record")
    except persist.Refused as e:
        raise _refuse(e, root) from None
    except ValueError:
        raise _refuse(persist.Damaged(root / META, "holds malformed data"), root) from None
    diff = [_FIELDS.get(k) or f"{k}={old.get(k)!r} there, {v!r} here" for k, v in meta.items() if old.get(k) != v]
    if diff:
        raise UsageError(f"the checkpoint in {root} is of another run ({'; '.join(diff)}); resume with the "
                         f"same spec, parameters, --jobs and symmetry, or delete {root} to explore this point "
                         f"afresh")
    return level, key


def _level_path(root: Path, level: int) -> Path:
    d = level_dir(root, level)
    persist.private_dir(d)
    return d


def save_worker(root: Path, level: int, wid: int, key: str, data: dict[str, Any]) -> None:
    """Save one worker's part of a level (data only, bound to ``key``); a failure names the level."""
    try:
        _level_path(root, level)
        persist.write_data(worker_file(root, level, wid), "checkpoint-worker", key, data)
    except (OSError, persist.Refused) as e:
        raise _unwritable(root, level, e) from None


def save_level(root: Path, level: int, key: str, counters: dict[str, Any]) -> None:
    """Save the coordinator's counters of a whole level, last: a level without them is incomplete."""
    try:
        persist.write_data(_level_path(root, level) / COORDINATOR, "checkpoint-level", key, counters)
    except (OSError, persist.Refused) as e:
        raise _unwritable(root, level, e) from None


def _unwritable(root: Path, level: int, e: Exception) -> UsageError:
    """A level that cannot be saved (a full disk, say): the run stops, and the levels before it resume."""
    why = e.strerror if isinstance(e, OSError) and e.strerror else str(e)
    return UsageError(f"--checkpoint: cannot save level {level} in {root} ({why}); free the space and "
                      f"continue with --resume {root.parent}")


def _ints(x: Any, n: int | None = None) -> bool:
    return isinstance(x, tuple) and (n is None or len(x) == n) and all(type(i) is int for i in x)


def load_worker(root: Path, level: int, wid: int, key: str) -> dict[str, Any]:
    """A worker's file of ``level``, checked (trust rule, then shape); a refusal is a usage error."""
    path = worker_file(root, level, wid)
    try:
        d = persist.read_data(path, "checkpoint-worker", key)
        ok = isinstance(d, dict) and set(d) == {"states", "parents", "ranks", "rules"} and \
            isinstance(d["states"], list) and all(isinstance(s, tuple) for s in d["states"]) and \
            isinstance(d["parents"], list) and len(d["parents"]) == len(d["states"]) and \
            all(p is None or (isinstance(p, tuple) and len(p) == 3 and _ints(p[:2])) for p in d["parents"]) and \
            isinstance(d["ranks"], list) and all(type(r) is int for r in d["ranks"]) and \
            (d["rules"] is None or isinstance(d["rules"], dict))
        if not ok:
            raise persist.Damaged(path, "is not a worker's level")
    except persist.Refused as e:
        raise _refuse(e, root, level) from None
    return d


_COUNTERS = ("level", "depth", "expanded", "total", "width", "transitions")


def load_level(root: Path, level: int, key: str) -> dict[str, Any]:
    """The coordinator's counters after ``level``, checked as ``load_worker`` checks a worker's."""
    path = level_dir(root, level) / COORDINATOR
    try:
        d = persist.read_data(path, "checkpoint-level", key)
        ok = isinstance(d, dict) and set(d) == {*_COUNTERS, "found_at", "deadlock"} and \
            all(type(d[k]) is int and d[k] >= 0 for k in _COUNTERS) and d["level"] == level and \
            isinstance(d["found_at"], dict) and all(isinstance(n, str) and _ints(r, 2)
                                                   for n, r in d["found_at"].items()) and \
            (d["deadlock"] is None or _ints(d["deadlock"], 2))
        if not ok:
            raise persist.Damaged(path, "is not a level's counters")
    except persist.Refused as e:
        raise _refuse(e, root, level) from None
    return d


def inconsistent(root: Path, level: int, why: str) -> UsageError:
    """Level files that are each whole but do not agree with each other."""
    return _refuse(persist.Damaged(level_dir(root, level) / COORDINATOR, why), root, level)


def bind_run(root: Path, record: dict[str, Any], resume: bool) -> None:
    """The command's own choices (``--set``, ``--memory``) kept in ``root``: resuming with others would
    find no checkpoint for its points and silently start afresh, so it is refused, naming them."""
    path = root / RUN
    if not resume:
        try:
            root.mkdir(parents=True, exist_ok=True)
            persist.write_framed(path, "checkpoint-run", "", json.dumps(record, sort_keys=True).encode())
        except OSError as e:
            raise UsageError(f"--checkpoint {root}: cannot write there ({e.strerror})") from None
        return
    if not path.exists():  # a checkpoint written through the API (explore): nothing to compare
        return
    try:
        old = json.loads(persist.read_framed(path, "checkpoint-run", None))
    except persist.Refused as e:
        raise UsageError(f"--resume {root}: {RUN} {e.why}; delete {path} to resume without this check") from None
    except ValueError:
        raise UsageError(f"--resume {root}: {RUN} holds malformed data; delete {path} to resume without this "
                         f"check") from None
    diff = [f"{k} {_show(old.get(k))} there, {_show(v)} here" for k, v in record.items() if old.get(k) != v]
    if diff:
        raise UsageError(f"--resume {root}: the checkpoint was made with other choices ({'; '.join(diff)}); "
                         f"resume with the same ones, or start afresh with --checkpoint and a new directory")


def _show(v: Any) -> str:
    if isinstance(v, dict):
        return " ".join(f"--set {k}={','.join(map(str, vs))}" for k, vs in sorted(v.items())) or "no --set"
    return repr(v)
