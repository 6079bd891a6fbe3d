# SPDX-License-Identifier: GPL-2.0-only
"""Checkpoints of a parallel exploration, one per BFS level, for ``--resume``.

Under the directory given (``--checkpoint DIR``), each spec and parameter
point has its own directory ``SPEC-HASH`` (the hash of its parameters),
laid out as::

    meta.json                       what was explored: spec, parameters, workers, symmetry
    level-000003/worker-1.pickle    worker 1's states first admitted at level 3
    level-000003/coordinator.pickle the counters after level 3, written last

A worker file holds only the states its worker admitted at that level, in
the order it stored them (so local ids come back the same on reload): the
states as plain tuples (the state encoding; the state class is never
pickled), their parent links ``(owner, local id, label)`` and their ranks
in the level, plus the worker's context-rule record so far. The
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
import json
import os
import pickle
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from checker.errors import UsageError

if TYPE_CHECKING:
    from checker.language.compile import Model

COORDINATOR = "coordinator.pickle"
META = "meta.json"


def point_dir(root: Path, model: "Model") -> Path:
    """One directory per spec and parameter point, so a whole sweep resumes."""
    shown = json.dumps(model.params.shown(), sort_keys=True)
    return root / f"{model.name}-{hashlib.sha1(shown.encode()).hexdigest()[:10]}"


def level_dir(root: Path, level: int) -> Path:
    """The folder of one BFS level in a checkpoint."""
    return root / f"level-{level:06d}"


def worker_file(root: Path, level: int, wid: int) -> Path:
    """The file one worker's part of a BFS level is saved in."""
    return level_dir(root, level) / f"worker-{wid}.pickle"


def write_atomic(path: Path, obj: Any) -> None:
    """Pickle ``obj`` to ``path``: whole or not at all."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + f".tmp{os.getpid()}")
    with open(tmp, "wb") as f:
        pickle.dump(obj, f, pickle.HIGHEST_PROTOCOL)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def read(path: Path) -> Any:
    """Load one pickled checkpoint file (checked against its run by the caller: nothing read back is trusted)."""
    with open(path, "rb") as f:
        return pickle.load(f)


def last_complete(root: Path) -> int | None:
    """The last level whose coordinator file was written, if any."""
    levels = [int(m.group(1)) for p in root.glob("level-*") if (m := re.fullmatch(r"level-(\d+)", p.name))
              and (p / COORDINATOR).is_file()]
    return max(levels, default=None)


def start(root: Path, meta: dict[str, Any], resume: bool) -> int | None:
    """Prepare ``root`` for a run described by ``meta``; the level to resume
    from (``None``: start afresh). A checkpoint of another run is refused
    rather than mixed in or overwritten."""
    root.mkdir(parents=True, exist_ok=True)
    level = last_complete(root)
    path = root / META
    if level is None:
        path.write_text(json.dumps(meta, indent=1, sort_keys=True) + "\n", encoding="utf-8")
        return None
    if not resume:
        raise UsageError(f"{root} already holds a checkpoint (level {level}); continue it with "
                         f"--resume {root.parent}, or give --checkpoint an empty directory")
    old = json.loads(path.read_text(encoding="utf-8"))
    diff = [f"{k}={old.get(k)!r} there, {v!r} here" for k, v in meta.items() if old.get(k) != v]
    if diff:
        raise UsageError(f"the checkpoint in {root} is of another run ({'; '.join(diff)}); resume with the "
                         f"same spec, parameters, --jobs and symmetry, or start afresh with --checkpoint")
    return level
