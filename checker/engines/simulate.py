# SPDX-License-Identifier: GPL-2.0-only
"""The simulate engine: seeded random walks at one point (``checker.simulate``)."""
from __future__ import annotations

from checker.engines import Request
from checker.result import Check
from checker.language.model import info


class SimulateEngine:
    """Seeded random walks as an engine: a violation with a shrunk trace, else inconclusive with the coverage."""
    name = "simulate"

    def run(self, request: Request) -> list[Check]:
        from checker.simulate.checks import simulate_checks

        if info(request.cls).abstraction_at(request.params) is not None:
            return []  # a liveness-only point: its invariants would read the dropped values
        progress = request.progress.simulating(f"{request.cls.spec_name} [{request.params}]") \
            if request.progress else None
        opts = request.options["simulate"]
        if getattr(opts, "method", None) == "swarm":  # --search swarm: the compiled bug-hunting search
            from checker.engines.swarm import swarm_checks

            return swarm_checks(request.cls, request.params, opts, timeout=request.limits.timeout,
                                max_states=request.limits.max_states, run=request.run,
                                symmetry=request.options.get("symmetry", True), progress=progress)
        return simulate_checks(request.cls, request.params, request.options["simulate"],
                               timeout=request.limits.timeout, run=request.run, progress=progress)
