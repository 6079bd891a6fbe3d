"""The parallel explorer's workers as Ray actors (``--cluster ray[://ADDRESS]``).

The coordinator (``parallel.parallel_search``) is unchanged: it calls these
actors through the same pool interface as forked workers, so the states,
verdicts and traces are the sequential search's. An actor cannot inherit
the compiled model by fork; it rebuilds it from a ``ModelRef`` (where the
spec class is found, and the parameter values). What travels between the
coordinator and the actors is plain tuples: successor buckets (pickled
lists of state tuples with keys), keys, ranks and, for traces, single
states with their parent links.

Ray is an optional extra: ``pip install 'countercheck[cluster]'``.
"""
from __future__ import annotations

import importlib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from checker.errors import UsageError
from checker.explore.parallel import WorkerLost, _Worker, answer, run_call
from checker.spec.compile import Model
from checker.spec.model import info, resolve_params

INSTALL = "pip install 'countercheck[cluster]'"
#: The package's parent directory: local actors import ``checker`` from here.
_SOURCE_ROOT = str(Path(__file__).resolve().parents[2])


def import_ray() -> Any:
    """The ``ray`` module, or a usage error saying how to install it."""
    try:
        import ray
    except ImportError:
        raise UsageError(f"--cluster needs Ray, an optional extra: {INSTALL}") from None
    return ray


def parse_cluster(value: str) -> str | None:
    """``ray`` (a local Ray started here) or ``ray://HOST:PORT``: the address to pass to ``ray.init``."""
    if value == "ray":
        return None
    if value.startswith("ray://") and len(value) > len("ray://"):
        return value
    raise UsageError(f"--cluster {value!r}: write --cluster ray (a local Ray started here) or "
                     f"--cluster ray://HOST:PORT (a running cluster's client address, port 10001 by default)")


def connect(address: str | None, num_cpus: int | None = None) -> Any:
    """Join (or start, with no address: ``num_cpus``, default all) a Ray
    cluster, once per process."""
    ray = import_ray()
    if not ray.is_initialized():
        kwargs: dict[str, Any] = {"include_dashboard": False, "logging_level": "ERROR", "log_to_driver": False}
        if address is None:
            kwargs["num_cpus"] = num_cpus
            # Local actors are fresh Python processes: let them import this checkout.
            path = os.pathsep.join(p for p in (_SOURCE_ROOT, os.environ.get("PYTHONPATH")) if p)
            kwargs["runtime_env"] = {"env_vars": {"PYTHONPATH": path}}
        try:
            ray.init(address=address, **kwargs)
        except (ConnectionError, ValueError, RuntimeError) as e:
            raise UsageError(f"cannot join the Ray cluster at {address or 'a new local Ray'}: {e}") from None
    return ray


def disconnect() -> None:
    """Leave the cluster (a local Ray started by ``connect`` stops)."""
    _idle.clear()
    import_ray().shutdown()


def cluster_cpus() -> int:
    """CPUs the connected cluster offers: the default number of workers."""
    return max(1, int(import_ray().cluster_resources().get("CPU", 1)))


@dataclass(frozen=True)
class ModelRef:
    """A picklable way to the same model in another process or machine."""

    module: str  # the spec class's module, importable by name, or "" for a spec file
    file: str | None  # the spec file, read on the worker's node when the module is not importable
    name: str  # the class's name
    values: tuple[tuple[str, Any], ...]  # parameter values

    @classmethod
    def of(cls, model: Model) -> "ModelRef":
        spec = model.cls
        importable = not spec.__module__.startswith("countercheck_user_")  # loader.specs_in_file's names
        return cls(spec.__module__ if importable else "", None if importable else info(spec).file,
                   spec.__name__, tuple(model.params.as_dict().items()))

    def build(self) -> Model:
        if self.module:
            spec = getattr(importlib.import_module(self.module), self.name)
        else:
            from checker.loader import specs_in_file

            spec = next(c for c in specs_in_file(self.file) if c.__name__ == self.name)
        return Model(spec, resolve_params(spec, dict(self.values)))


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
            return "error", (UsageError, f"a Ray worker on {os.uname().nodename} cannot load "
                             f"{ref.module or ref.file}:{ref.name}: {type(e).__name__}: {e}", None, None)
        self.models = {ref: model}
        self.worker = _Worker(model, wid, jobs, symmetry, check_symmetry)
        return "ok", None

    def call(self, name: str, args: tuple) -> tuple[str, Any]:
        return run_call(self.worker, name, args)


#: Actors between explorations of this process (a list: the first ``jobs`` serve the next).
_idle: list[Any] = []


class RayPool:
    """``jobs`` actors spread over the cluster's nodes; a blocking call on all or one."""

    def __init__(self, model: Model, jobs: int, symmetry: bool, check_symmetry: bool):
        ray = self.ray = import_ray()
        cpus = cluster_cpus()
        if jobs > cpus:
            # an actor holds a CPU: more actors than CPUs would wait for one forever
            raise UsageError(f"--jobs {jobs} with --cluster: the cluster has {cpus} CPUs; give --jobs {cpus} "
                             f"or fewer")
        remote = ray.remote(num_cpus=1, max_restarts=0, scheduling_strategy="SPREAD")(_Actor)
        while len(_idle) < jobs:
            _idle.append(remote.remote())
        self.actors = _idle[:jobs]
        del _idle[:jobs]
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
            _idle[:0] = self.actors
        self.actors = []
