# SPDX-License-Identifier: GPL-2.0-only
"""Ray for the engines: joining a cluster, and naming a spec so another machine can load it.

Ray is an optional extra (``pip install 'ray>=2.9'``, or ``pip install '.[cluster]'`` in
the checkout): nothing
here imports it until a command asks for ``--cluster``. The explorer's
actors are in ``checker.explore.ray_pool``; the per-N proof sweep's tasks
in ``checker.prove.sweep``.
"""
from __future__ import annotations

import importlib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from checker.errors import UsageError
from checker.language.compile import Model
from checker.language.model import info, resolve_params

#: Names the dependency itself (or the checkout), never this project by a name the package index
#: could resolve to someone else's code.
INSTALL = "pip install 'ray>=2.9' (or, in the checkout, pip install '.[cluster]')"
#: The package's parent directory: local actors and tasks import ``checker`` from here.
_SOURCE_ROOT = str(Path(__file__).resolve().parents[1])


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
            # Local workers are fresh Python processes: let them import this checkout.
            path = os.pathsep.join(p for p in (_SOURCE_ROOT, os.environ.get("PYTHONPATH")) if p)
            kwargs["runtime_env"] = {"env_vars": {"PYTHONPATH": path}}
        try:
            ray.init(address=address, **kwargs)
        except (ConnectionError, ValueError, RuntimeError) as e:
            raise UsageError(f"cannot join the Ray cluster at {address or 'a new local Ray'}: {e}") from None
        if address is None:
            _reap_with_us()
    return ray


#: Kills what is left of the local Ray once this process is gone (read from argv: pid and start time pairs).
_REAPER = """
import os, signal, sys
sys.stdin.read()  # end of file: the process that started the local Ray is gone (ended or killed)
for pid, start in zip(sys.argv[1::2], sys.argv[2::2]):
    try:
        with open(f"/proc/{pid}/stat") as f:
            if f.read().rsplit(")", 1)[1].split()[19] == start:  # the same process, not a reused pid
                os.kill(int(pid), signal.SIGKILL)
    except (OSError, IndexError):
        pass
"""


def _descendants() -> list[tuple[str, str]]:
    """(pid, start time) of every process descended from this one, from /proc."""
    children: dict[str, list[str]] = {}
    start: dict[str, str] = {}
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        children.setdefault(fields[1], []).append(pid)
        start[pid] = fields[19]
    out, todo = [], [str(os.getpid())]
    while todo:
        for c in children.get(todo.pop(), []):
            out.append((c, start[c]))
            todo.append(c)
    return out


def _reap_with_us() -> None:
    """A local Ray's raylet and GCS end with this process, but Ray's per-node agents (re-parented to init)
    can outlive a ``kill -9`` of it: a small watcher, which holds the read end of a pipe only this
    process writes to, kills them once that pipe closes. Linux only (it reads /proc)."""
    if not os.path.isdir("/proc/self"):
        return
    import subprocess
    import sys

    procs = [x for pc in _descendants() for x in pc]
    try:
        watcher = subprocess.Popen([sys.executable, "-c", _REAPER, *procs], stdin=subprocess.PIPE,
                                   start_new_session=True)
    except OSError:
        return
    _watchers.append(watcher)  # its pipe stays open while this process lives


_watchers: list = []


def disconnect() -> None:
    """Leave the cluster (a local Ray started by ``connect`` stops), the explorers' idle actors first."""
    release_idle()
    import_ray().shutdown()


#: Every pool of idle actors this process made: the interpreter's and the compiled engine's.
_pools: list["IdleActors"] = []


class IdleActors:
    """Ray actors of one class, kept between explorations of this process (starting one takes seconds).

    Each holds a CPU, so taking actors from one pool first stops the idle ones of the others; so does a
    proof sweep's Ray tasks (``release_idle``)."""

    def __init__(self, actor_class: type):
        self.actor_class = actor_class
        self.idle: list[Any] = []
        _pools.append(self)

    def take(self, jobs: int) -> list[Any]:
        """``jobs`` actors spread over the cluster's nodes, idle ones first."""
        ray = import_ray()
        cpus = cluster_cpus()
        if jobs > cpus:
            # an actor holds a CPU: more actors than CPUs would wait for one forever
            raise UsageError(f"--jobs {jobs} with --cluster: the cluster has {cpus} CPUs; give --jobs {cpus} "
                             f"or fewer")
        # (actors belong to this process: Ray ends them when it ends, killed or not)
        remote = ray.remote(num_cpus=1, max_restarts=0, scheduling_strategy="SPREAD")(self.actor_class)
        if len(self.idle) < jobs:
            release_idle(keep=self)
        while len(self.idle) < jobs:
            self.idle.append(remote.remote())
        actors = self.idle[:jobs]
        del self.idle[:jobs]
        return actors

    def give_back(self, actors: list[Any]) -> None:
        """Keep ``actors`` for the next exploration (first in line)."""
        self.idle[:0] = actors

    def release(self) -> None:
        """Stop the idle actors."""
        if self.idle:
            ray = import_ray()
            for a in self.idle:
                ray.kill(a)
        self.idle.clear()


def release_idle(keep: IdleActors | None = None) -> None:
    """Stop the idle actors of every pool but ``keep``."""
    for pool in _pools:
        if pool is not keep:
            pool.release()


def cluster_cpus() -> int:
    """CPUs the connected cluster offers: the default number of workers."""
    return max(1, int(import_ray().cluster_resources().get("CPU", 1)))


@dataclass(frozen=True)
class SpecRef:
    """A picklable way to the same spec class in another process or machine."""

    module: str  # the spec class's module, importable by name, or "" for a spec file
    file: str | None  # the spec file, read on the worker's node when the module is not importable
    name: str  # the class's name

    @classmethod
    def of(cls, spec: type) -> "SpecRef":
        importable = not spec.__module__.startswith("countercheck_user_")  # loader.specs_in_file's names
        return cls(spec.__module__ if importable else "", None if importable else info(spec).file, spec.__name__)

    def load(self) -> type:
        if self.module:
            return getattr(importlib.import_module(self.module), self.name)
        from checker.loader import specs_in_file

        return next(c for c in specs_in_file(self.file) if c.__name__ == self.name)

    def __str__(self) -> str:
        return f"{self.module or self.file}:{self.name}"


@dataclass(frozen=True)
class ModelRef:
    """A picklable way to the same model: the spec and its parameter values."""

    spec: SpecRef
    values: tuple[tuple[str, Any], ...]

    @classmethod
    def of(cls, model: Model) -> "ModelRef":
        return cls(SpecRef.of(model.cls), tuple(model.params.as_dict().items()))

    def build(self) -> Model:
        spec = self.spec.load()
        return Model(spec, resolve_params(spec, dict(self.values)))
