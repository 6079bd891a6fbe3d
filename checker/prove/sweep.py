# SPDX-License-Identifier: GPL-2.0-only
"""The per-N fallback's points, proved here one after another or spread over Ray tasks.

Each point of a per-N sweep is an independent set of obligations (one
concrete CPU count). With ``--cluster`` every point is a Ray task; the
answers are taken in the points' order and with the same time budget rule
as here (stop after the point that passes the budget), so the merged
verdicts, reasons and counterexamples are those of the sequential sweep
whenever it finishes. One difference: here each point with ``infer`` tries
the previous point's laws first (``checker.prove.laws``' hints), which Ray's
points, proved at once, cannot; a law found that way is proved the same way,
but a point can take much longer without it (or end at its limit).
"""
from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterator, Sequence

from checker.cluster import SpecRef, connect, import_ray, parse_cluster
from checker.prove.encoding import PerN
from checker.prove.inductive import Proof, prove_invariants
from checker.prove.solver import Solver, in_own_context
from checker.language.compile import Model
from checker.language.model import resolve_params

if TYPE_CHECKING:
    from checker.prove.laws import Portable

Answer = tuple[dict[str, Proof], dict[str, Any]]  # proofs by property, the point's shown parameters


@in_own_context  # the same answer here, on a Ray worker, whatever either did before
def prove_point(cls: type, given: dict[str, Any], smt_timeout: float | None, emit_dir: Path | None,
                tag: str, infer: bool = False, hints: Sequence[Portable] = ()) -> tuple[Answer, list[Portable]]:
    """Every inductive obligation of ``cls`` at one concrete point; ``infer``: its lemmas left out, the
    modular facts and conservation laws found there in their place (``checker.prove.laws``), the laws of
    ``hints`` (another point's) tried first. Also the laws found, for the next point ([] without ``infer``)."""
    model = Model(cls, resolve_params(cls, given))
    if infer:
        from checker.prove.laws import prove_lemma_free

        free = prove_lemma_free(model, Solver(smt_timeout, emit_dir), tag, hints=hints)
        for pr in free.proofs.values():
            where = " ".join(f"{k}={v}" for k, v in model.params.shown().items())
            pr.notes.append(f"at {where}: lemmas left out; {free.facts} modular facts and "
                            f"{len(free.kept)} conservation laws found there: " + "; ".join(free.kept))
        return (free.proofs, model.params.shown()), free.laws.portable
    proofs = prove_invariants(PerN(model), list(model.properties), Solver(smt_timeout, emit_dir), tag)
    return (proofs, model.params.shown()), []


def _remote_point(ref: SpecRef, given: dict[str, Any], smt_timeout: float | None, tag: str,
                  infer: bool = False) -> Answer:
    return prove_point(ref.load(), given, smt_timeout, None, tag, infer)[0]


def answers(cls: type, points: list[dict[str, Any]], smt_timeout: float | None, emit_dir: Path | None, tag: str,
            cluster: str | None, infer: bool = False) -> Iterator[Answer]:
    """The points' answers in order; the caller stops taking them at its budget.
    ``--emit-smt`` keeps the sweep here, where its files are written."""
    if cluster is None or emit_dir is not None:
        # Each point's laws are tried first at the next: the counter tree's search at 7 CPUs ended without
        # the carries' law after an hour, the law of the same features found at 5 and 6.
        hints: list[Portable] = []
        for given in points:
            answer, hints = prove_point(cls, given, smt_timeout, emit_dir, tag, infer, hints)
            yield answer
        return
    connect(parse_cluster(cluster))
    ray = import_ray()
    from checker.cluster import release_idle

    release_idle()  # the explorers' idle actors hold the CPUs these tasks need
    task = ray.remote(num_cpus=1, max_retries=0)(_remote_point)
    ref = SpecRef.of(cls)
    pending = [task.remote(ref, given, smt_timeout, tag, infer) for given in points]
    taken = 0
    try:
        for p in pending:
            yield ray.get(p)
            taken += 1
    finally:  # points past the budget, or after an error, are not waited for
        for p in pending[taken + 1:]:
            ray.cancel(p)


def budgeted(it: Iterator[Answer], total: int, budget: float) -> Iterator[tuple[int, Answer]]:
    """``(points done, answer)`` until the answer after which ``budget`` seconds have passed."""
    t0 = time.perf_counter()
    for done, ans in enumerate(it, 1):
        yield done, ans
        if time.perf_counter() - t0 > budget and done < total:
            return
