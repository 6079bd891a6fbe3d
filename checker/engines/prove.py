# SPDX-License-Identifier: GPL-2.0-only
"""The Z3 engines: induction over a spec's prove sweep; bounded model checking and IC3/PDR at a point."""
from __future__ import annotations

from checker.engines import Request
from checker.result import Check


class ProveEngine:
    """Every proof of the spec's prove sweep (the request's ``sets`` narrow it), its witnesses by
    construction, its lemmas and the BMC its class asks for."""

    name = "prove"

    def run(self, request: Request) -> list[Check]:
        from checker.prove import prove_checks

        return prove_checks(request.cls, dict(request.sets), smt_timeout=request.limits.smt_timeout,
                            emit_dir=request.options.get("emit_smt"), run=request.run,
                            progress=request.progress.proving if request.progress else None,
                            cluster=request.runner.cluster, warn=request.warn)


class BmcEngine:
    """Bounded model checking of every property to the request's ``depth`` at its point."""

    name = "bmc"

    def run(self, request: Request) -> list[Check]:
        from checker.prove import bmc_checks

        return bmc_checks(request.cls, request.params, request.options["depth"],
                          smt_timeout=request.limits.smt_timeout, run=request.run)


class PdrEngine:
    """IC3/PDR of every invariant at the request's point: the invariant found, or a replayed run."""

    name = "pdr"

    def run(self, request: Request) -> list[Check]:
        from checker.prove import pdr_checks

        return pdr_checks(request.cls, request.params, smt_timeout=request.limits.smt_timeout, run=request.run)


class InferEngine:
    """The prove sweep with the spec's lemmas left out and invariants inferred in their place
    (``checker.prove.infer``), each proved again by the any-N induction."""

    name = "infer"

    def run(self, request: Request) -> list[Check]:
        from checker.prove import prove_checks

        return prove_checks(request.cls, dict(request.sets), smt_timeout=request.limits.smt_timeout,
                            emit_dir=request.options.get("emit_smt"), run=request.run,
                            progress=request.progress.proving if request.progress else None,
                            cluster=request.runner.cluster, warn=request.warn, infer=True)
