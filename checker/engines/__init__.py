# SPDX-License-Identifier: GPL-2.0-only
"""One seam for every engine: a spec at a point and the checks asked for, in; checks out.

``verify`` (above this package) builds a ``Request`` per spec and point and
hands it to an engine by name; an engine imports nothing above it (not
``verify``, not the command line, not a report). The engines:

``explore``   the exhaustive explorer (``checker.explore``), liveness on the
              state graph (``checker.live``) beside it; which explorer runs is
              a choice inside this engine (``EXPLORERS``), not a new engine
``prove``     the Z3 backend over the spec's prove sweep (``checker.prove``)
``bmc``       bounded model checking with Z3 at a concrete point
``simulate``  seeded random walks (``checker.simulate``)

``--jobs`` and ``--cluster`` are not engines: they are a ``Runner``, a way of
running one (more processes, or Ray actors) that the request carries.
"""
from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping, Protocol

from checker.errors import UsageError
from checker.result import Check
from checker.language.model import Params


@dataclass(frozen=True)
class Limits:
    """Where an engine stops and says ``inconclusive``: never a pass."""

    max_states: int | None = None
    timeout: float | None = None  # seconds per exploration or simulation
    smt_timeout: float | None = None  # seconds per Z3 query
    max_memory: int | None = None  # bytes, for a compiled search (None: its default budget)


@dataclass(frozen=True)
class Runner:
    """How an engine runs: ``jobs`` processes, as Ray actors with ``cluster``, saving
    (``resume``: continuing) every whole BFS level in ``checkpoint``."""

    jobs: int | None = None
    cluster: str | None = None
    checkpoint: Path | None = None
    resume: bool = False


@dataclass
class Request:
    """One spec at one point (``params``; for ``prove``, the values set for its
    sweep in ``sets``), the limits, the runner and the engine's own options
    (``symmetry``, ``fingerprint``, ``engine`` (auto, compiled, interpreted), ``explorer``, ``depth``, ``simulate``, ``emit_smt``)."""

    cls: type
    params: Params | None = None
    sets: Mapping[str, tuple] = field(default_factory=dict)
    limits: Limits = Limits()
    runner: Runner = Runner()
    options: Mapping[str, Any] = field(default_factory=dict)
    run: int = 0
    #: ``checker.report.progress.Progress`` or anything with its ``exploring``/``proving``; None: silent.
    progress: Any = None
    #: Filled by the explore engine for a coverage check: (model, state graph) per point.
    graphs: list | None = None
    #: Told what the user should know before the engine's result (a point out of reach); None: nobody.
    warn: Callable[[str], None] | None = None
    #: Filled by the explore engine: (class, method) of a bug spec's overrides that ran (checker.overrides).
    ran: set | None = None


class Engine(Protocol):
    """What every engine is: a name, and ``run(request)`` returning the checks it decides."""
    name: str

    def run(self, request: Request) -> list[Check]:
        """Every check this engine decides for the request."""


#: Engines by name, as "module:class": loaded on first use, so asking for one never imports Z3 or Ray.
ENGINES: dict[str, str] = {
    "explore": "checker.engines.explore:ExploreEngine",
    "prove": "checker.engines.prove:ProveEngine",
    "bmc": "checker.engines.prove:BmcEngine",
    "pdr": "checker.engines.prove:PdrEngine",
    "infer": "checker.engines.prove:InferEngine",
    "simulate": "checker.engines.simulate:SimulateEngine",
}


def _load(ref: str) -> Any:
    module, _, name = ref.partition(":")
    return getattr(importlib.import_module(module), name)


def get(name: str) -> Engine:
    """The engine called ``name``."""
    if name not in ENGINES:
        raise UsageError(f"no engine {name!r}; the engines are: {', '.join(ENGINES)}")
    return _load(ENGINES[name])()


def register(name: str, ref: str) -> None:
    """Add an engine (``"package.module:Class"``) under ``name``."""
    ENGINES[name] = ref


def run(name: str, request: Request) -> list[Check]:
    """Run the engine named ``name`` on ``request``: its checks."""
    return list(get(name).run(request))


__all__ = ["ENGINES", "Engine", "Limits", "Request", "Runner", "get", "register", "run"]
