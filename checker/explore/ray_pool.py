# SPDX-License-Identifier: GPL-2.0-only
"""The parallel explorer's workers as Ray actors (``--cluster ray[://ADDRESS]``).

The coordinator (``parallel.parallel_search``) is unchanged: it calls these
actors through the same pool interface as forked workers, so the states,
verdicts and traces are the sequential search's. An actor cannot inherit
the compiled model by fork; it rebuilds it from a ``ModelRef`` (where the
spec class is found, and the parameter values). What travels between the
coordinator and the actors is plain tuples: successor buckets (pickled
lists of state tuples with keys), keys, ranks and, for traces, single
states with their parent links.

Joining the cluster and the model reference: ``checker.cluster``.
"""
from __future__ import annotations

import os
from typing import Any

from checker.cluster import IdleActors, ModelRef, import_ray
from checker.errors import UsageError
from checker.explore.parallel import WorkerLost, _Worker, answer, run_call
from checker.language.compile import Model


class _Actor:
    """A ``_Worker`` inside a Ray actor, answering as a forked worker does.
    An actor outlives one exploration: ``start`` gives it the next one's
    model (starting an actor costs about a second; a sweep has many points)."""

    def __init__(self) -> None:
        self.worker: _Worker | None = None
        self.models: dict[ModelRef, Model] = {}

    def start(self, ref: ModelRef, wid: int, jobs: int, symmetry: bool, check_symmetry: bool) -> tuple[str, Any]:
        self.worker = None  # the last exploration's states go now
        try:
            model = self.models.get(ref) or ref.build()
        except Exception as e:  # an import error on this node: say where, don't hang
            return "error", (UsageError, f"a Ray worker on {os.uname().nodename} cannot load {ref.spec}: "
                             f"{type(e).__name__}: {e}", None, None)
        self.models = {ref: model}
        self.worker = _Worker(model, wid, jobs, symmetry, check_symmetry)
        return "ok", None

    def call(self, name: str, args: tuple) -> tuple[str, Any]:
        return run_call(self.worker, name, args)


class RayPool:
    """``jobs`` actors spread over the cluster's nodes; a blocking call on all or one."""

    def __init__(self, model: Model, jobs: int, symmetry: bool, check_symmetry: bool):
        self.ray = import_ray()
        self.actors = _idle.take(jobs)
        ref = ModelRef.of(model)
        self.lost = False
        try:
            self._gather([a.start.remote(ref, wid, jobs, symmetry, check_symmetry)
                          for wid, a in enumerate(self.actors)])
        except BaseException:
            self.close()
            raise

    def call(self, name: str, per_worker: list[tuple]) -> list[Any]:
        return self._gather([a.call.remote(name, args) for a, args in zip(self.actors, per_worker)])

    def _gather(self, pending: list[Any]) -> list[Any]:
        return [answer(self._get(wid, p)) for wid, p in enumerate(pending)]

    def call_one(self, wid: int, name: str, *args: Any) -> Any:
        return answer(self._get(wid, self.actors[wid].call.remote(name, args)))

    def _get(self, wid: int, pending: Any) -> Any:
        try:
            return self.ray.get(pending)
        except self.ray.exceptions.RayActorError as e:
            self.lost = True
            raise WorkerLost(wid, f"(a Ray actor) died: {type(e).__name__}") from None

    def close(self) -> None:
        """Keep the actors for the next exploration, unless one was lost (then
        none: a call may still be running on the others)."""
        if self.lost:
            for a in self.actors:
                self.ray.kill(a)
        else:
            _idle.give_back(self.actors)
        self.actors = []


#: The actors between explorations of this process.
_idle = IdleActors(_Actor)
