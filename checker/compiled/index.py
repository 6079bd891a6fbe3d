# SPDX-License-Identifier: GPL-2.0-only
"""Which program a point runs, remembered between runs: a warm ``verify`` neither lowers nor generates C.

The build cache is keyed by the generated source, so finding a point's program used to mean lowering the
model and printing its C (half of a warm run's exploring time). This index maps a point (the spec's code,
the checker's, the parameters, symmetry and partial-order reduction) to the digest of its source, and
keeps what reading the program's output back needs of the lowered model: each step's label, action, CPU
and description, the words of its checks, the properties' names and the context events
(``Recalled``). A program is still taken only from the build cache, through its trust rule; when it is
not there (another flag set, a cleaned cache) the point is lowered and generated as before.

It also records that the point went past the interpreter's warm-up (``needed_compiled``): ``auto`` then
starts on the program at once, the same search the warm-up would have handed it.

Entries are framed files bound to their key (``checker.persist``), in ``index/`` of the build cache;
``COUNTERCHECK_POINT_INDEX=off`` turns it off (the test suite does: its tests replace the lowering
in-process, which no digest of files can see).
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import checker.persist as persist

ENV = "COUNTERCHECK_POINT_INDEX"
KIND = "compiled-index-1"


def enabled() -> bool:
    """Whether points are remembered (``$COUNTERCHECK_POINT_INDEX`` is not off, 0, no or false)."""
    return os.environ.get(ENV, "").strip().lower() not in ("off", "0", "no", "false")


@dataclass
class RecalledStep:
    """What the engine reads of a lowered step (``LStep``) once the search has run."""
    index: int
    label: tuple
    action: int
    cpu: int | None
    what: str
    checks: list[tuple[None, str]]


@dataclass
class Recalled:
    """What the engine reads of a lowered model (``Lowered``) once the search has run."""
    steps: list[RecalledStep]
    props: list[tuple[str, str, None]]


def point_key(model: Any, symmetry: bool, por: bool) -> str:
    """The digest of what a point's program depends on."""
    return persist.point_digest(KIND, model.cls, model.params, bool(symmetry), bool(por))


def _path(d: Path, key: str) -> Path:
    return persist.private_dir(d / "index") / key


def recall(d: Path, model: Any, symmetry: bool, por: bool) -> tuple[str, Recalled, list, bool] | None:
    """(the source's digest, the recalled model, the events, whether the point went past the warm-up), or
    None: not remembered, or an entry that fails the trust rule (deleted)."""
    if not enabled():
        return None
    path = None
    try:
        key = point_key(model, symmetry, por)
        path = _path(d, key)
        e = persist.read_data(path, KIND, key)
        steps = [RecalledStep(i, tuple(lab), a, c, w, [(None, x) for x in ch])
                 for i, (lab, a, c, w, ch) in enumerate(e["steps"])]
        props = [(n, k, None) for n, k in e["props"]]
        if not (isinstance(e["source"], str) and isinstance(e["evs"], list) and isinstance(e["compiled"], bool)
                and all(isinstance(s.what, str) and all(isinstance(x, str) for _, x in s.checks) for s in steps)):
            raise ValueError("malformed")
        return e["source"], Recalled(steps, props), [tuple(x) for x in e["evs"]], e["compiled"]
    except FileNotFoundError:
        return None
    except (OSError, ValueError, TypeError, KeyError, persist.Refused):
        if path is not None:
            try:
                os.unlink(path)
            except OSError:
                pass
        return None


def remember(d: Path, model: Any, symmetry: bool, por: bool, source_digest: str, low: Any, evs: list,
             compiled: bool) -> None:
    """Keep a point's entry (best effort: a full disk keeps nothing)."""
    if not enabled():
        return
    try:
        key = point_key(model, symmetry, por)
        steps = [[list(s.label), s.action, s.cpu, s.what, [w for _, w in s.checks]] for s in low.steps]
        persist.write_data(_path(d, key), KIND, key, {
            "source": source_digest, "steps": steps, "props": [[n, k] for n, k, _ in low.props],
            "evs": [list(e) for e in evs], "compiled": compiled})
    except (OSError, ValueError, TypeError, persist.Refused):
        pass
