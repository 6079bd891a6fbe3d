# SPDX-License-Identifier: GPL-2.0-only
"""Checkpoints of the compiled search (``--checkpoint DIR``, ``--resume DIR``), one file per BFS level.

Each spec and parameter point has its directory under DIR (``checker.explore.checkpoint.point_dir``)::

    meta.data                      what produced it: spec, parameters, symmetry, the engine, digests
                                   of the spec's source and of the checker's (the generated C among it)
    level-000003.bin               the states the search stored in level 3, their parents and steps,
                                   and what it had decided (written by the program: search_checkpoint.c)
    level-000003.bin.manifest      its length and SHA-256, bound to meta (``checker.persist``)

The program writes a level file (a temporary name, fsynced, renamed) and says so on its output; this
module then seals it with its manifest. A level counts only once sealed, so a run killed at any moment
resumes from its last whole level, and counts nothing twice. Before resuming, every level file is
checked against its manifest (``persist.check_sealed``: ours, whole, unchanged, of this run); a
checkpoint of another run, or a damaged one, is refused naming what differs and what to delete.
"""
from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

import checker.persist as persist
from checker.errors import UsageError
from checker.explore.checkpoint import META, _FIELDS, _spec_sources, point_dir

if TYPE_CHECKING:
    from checker.language.compile import Model

KIND = "compiled-level"


def level_file(d: Path, level: int) -> Path:
    """The file the program writes level ``level`` to."""
    return d / f"level-{level:06d}.bin"


def meta(model: "Model", symmetry: bool, por: bool = False) -> dict[str, Any]:
    """What a compiled checkpoint is bound to (a reduced search stores other states: ``por`` too)."""
    return {"spec": model.name, "params": model.params.shown(), "jobs": 1, "symmetry": symmetry,
            **({"por": True} if por else {}),
            "engine": "compiled", "spec_source": persist.files_digest(_spec_sources(model)),
            "checker": persist.checker_digest()}


def _levels(d: Path) -> list[int]:
    return sorted(int(m.group(1)) for p in d.glob("level-*.bin") if (m := re.fullmatch(r"level-(\d+)\.bin", p.name)))


def start(root: Path, model: "Model", symmetry: bool, resume: bool, por: bool = False) -> tuple[Path, int | None, str]:
    """(the point's directory, the last whole level to resume from or None to start afresh, the binding
    key its manifests carry). Refuses another run's checkpoint, or a damaged one, as a ``UsageError``."""
    d = point_dir(root, model)
    m = meta(model, symmetry, por)
    key = persist.digest(m)
    fresh = not os.path.lexists(d / META)
    if not fresh and not resume:
        raise UsageError(f"{d} already holds a checkpoint; continue it with --resume {root}, or give "
                         f"--checkpoint an empty directory")
    if fresh:
        try:
            persist.private_dir(d)
            persist.write_framed(d / META, "checkpoint-meta", key, json.dumps(m, sort_keys=True).encode())
        except (OSError, persist.Refused) as e:
            raise UsageError(f"the checkpoint directory {d} cannot be used: {e}") from None
        return d, None, key
    try:
        persist.check_owned(d, directory=True)
        old = json.loads(persist.read_framed(d / META, "checkpoint-meta", None))
        if not isinstance(old, dict):
            raise persist.Damaged(d / META, "is not a record")
    except persist.Refused as e:
        raise UsageError(f"the checkpoint in {d} cannot be used: {e.path.name} {e.why}; delete {d} to explore "
                         f"this point afresh") from None
    except ValueError:
        raise UsageError(f"the checkpoint in {d} cannot be used: {META} holds malformed data; delete {d} to "
                         f"explore this point afresh") from None
    diff = [_FIELDS.get(k) or f"{k}={old.get(k)!r} there, {v!r} here" for k, v in m.items() if old.get(k) != v]
    if diff:
        raise UsageError(f"the checkpoint in {d} is of another run ({'; '.join(diff)}); resume with the same "
                         f"spec, parameters, engine and symmetry, or delete {d} to explore this point afresh")
    last = None
    for level in _levels(d):
        f = level_file(d, level)
        if level != (last + 1 if last is not None else 0) or not os.path.lexists(f.with_name(f.name + ".manifest")):
            break  # a level the program was writing when it was stopped, and anything after it
        try:
            persist.check_sealed(f, KIND, key)
        except persist.Refused as e:
            raise UsageError(f"the checkpoint in {d} cannot be used: {f.name} {e.why}; delete {f} and the "
                             f"levels after it to resume from the level before, or {d} to explore this point "
                             f"afresh") from None
        last = level
    for level in _levels(d):  # unsealed or past a gap: written again by the resumed run
        if last is None or level > last:
            for p in (level_file(d, level), level_file(d, level).with_name(level_file(d, level).name + ".manifest")):
                try:
                    os.unlink(p)
                except FileNotFoundError:
                    pass
    return d, last, key


def seal(d: Path, key: str, level: int, path: Path) -> None:
    """The program wrote ``level``: its manifest makes it count (and nothing else is accepted)."""
    f = level_file(d, level)
    if Path(path) != f:
        raise UsageError(f"the compiled search wrote level {level} to {path}, not {f}: never used")
    try:
        persist.write_data(f.with_name(f.name + ".manifest"), KIND, key,
                           {"length": os.path.getsize(f), "sha256": persist.file_sha256(f)})
    except OSError as e:
        raise UsageError(f"--checkpoint: cannot save level {level} in {d} ({e.strerror}); free the space and "
                         f"continue with --resume {d.parent}") from None
