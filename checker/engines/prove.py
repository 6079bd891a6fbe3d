# SPDX-License-Identifier: GPL-2.0-only
"""The Z3 engines: induction over a spec's prove sweep; bounded model checking and IC3/PDR at a point."""
from __future__ import annotations

from typing import Any, Callable

from checker.engines import Request
from checker.result import Check


def _kept(engine: str, request: Request, what: Any,
          compute: Callable[[Callable[[str], None] | None], list[Check]]) -> list[Check]:
    """``compute``'s checks through the proof cache (checker.engines.proof_cache), keyed by ``what`` (the
    point or the values set) and the per-query timeout; not with --emit-smt (its files are the point) or
    on Ray."""
    if request.options.get("emit_smt") or request.runner.cluster:
        return compute(request.warn)
    from checker.engines.proof_cache import cached_run

    return cached_run(engine, request.cls, (what, request.limits.smt_timeout), request.run, request.warn, compute)


def _point(request: Request) -> Any:
    p = request.params
    return None if p is None else (sorted(p.as_dict().items()), sorted((k, r.start, r.stop) for k, r in p.roles().items()))


def _sets(request: Request) -> Any:
    return sorted((k, tuple(v)) for k, v in dict(request.sets).items())


class ProveEngine:
    """Every proof of the spec's prove sweep (the request's ``sets`` narrow it), its witnesses by
    construction, its lemmas and the BMC its class asks for."""

    name = "prove"

    def run(self, request: Request) -> list[Check]:
        from checker.prove import prove_checks

        return _kept("prove", request, _sets(request), lambda warn: prove_checks(
            request.cls, dict(request.sets), smt_timeout=request.limits.smt_timeout,
            emit_dir=request.options.get("emit_smt"), run=request.run,
            progress=request.progress.proving if request.progress else None,
            cluster=request.runner.cluster, warn=warn))


class BmcEngine:
    """Bounded model checking of every property to the request's ``depth`` at its point."""

    name = "bmc"

    def run(self, request: Request) -> list[Check]:
        from checker.prove import bmc_checks

        return _kept("bmc", request, (_point(request), request.options["depth"]), lambda warn: bmc_checks(
            request.cls, request.params, request.options["depth"], smt_timeout=request.limits.smt_timeout,
            run=request.run))


class PdrEngine:
    """IC3/PDR of every invariant at the request's point: the invariant found, or a replayed run."""

    name = "pdr"

    def run(self, request: Request) -> list[Check]:
        from checker.prove import pdr_checks

        return _kept("pdr", request, _point(request), lambda warn: pdr_checks(
            request.cls, request.params, smt_timeout=request.limits.smt_timeout, run=request.run))


class InferEngine:
    """The prove sweep with the spec's lemmas left out and invariants inferred in their place
    (``checker.prove.infer``), each proved again by the any-N induction."""

    name = "infer"

    def run(self, request: Request) -> list[Check]:
        from checker.prove import prove_checks

        return _kept("infer", request, _sets(request), lambda warn: prove_checks(
            request.cls, dict(request.sets), smt_timeout=request.limits.smt_timeout,
            emit_dir=request.options.get("emit_smt"), run=request.run,
            progress=request.progress.proving if request.progress else None,
            cluster=request.runner.cluster, warn=warn, infer=True))
