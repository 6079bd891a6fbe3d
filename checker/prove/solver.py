# SPDX-License-Identifier: GPL-2.0-only
"""One place where Z3 is asked anything: timeouts, reasons, SMT-LIB files.

An obligation is ``hypotheses => goal``; it holds when ``hypotheses and
not goal`` is unsatisfiable. Every query has a timeout; ``unknown`` is an
answer with a reason, never a pass. With ``emit_dir`` every query is also
written as an SMT-LIB2 file recording the expected answer, for any solver
to re-check.
"""
from __future__ import annotations

import hashlib
import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import z3

import checker.interrupts as interrupts


@dataclass
class Answer:
    """Z3's answer to one query: unsat (holds), sat (with a model) or unknown (with the reason)."""
    result: str  # "unsat" (the obligation holds), "sat" (a counterexample) or "unknown"
    model: z3.ModelRef | None = None
    reason: str | None = None
    seconds: float = 0.0


@dataclass
class Solver:
    """Runs Z3 queries with a per-query timeout, counting them and writing each as SMT-LIB when asked."""
    timeout: float | None = None  # seconds per query
    emit_dir: Path | None = None
    queries: int = 0
    seconds: float = 0.0
    files: list[Path] = field(default_factory=list)

    def _new(self) -> z3.Solver:
        s = z3.Solver()
        s.set("random_seed", 0)  # same input, same answer, same counterexample
        if self.timeout:
            s.set("timeout", max(1, int(self.timeout * 1000)))
        return s

    def fresh_lia(self, bitvectors: bool = False) -> z3.Solver:
        """A non-incremental solver for one query over linear integer arithmetic; with
        ``bitvectors`` (a spec with C's bit operators: int2bv and bv2int terms) Z3's general
        solver, since the QF_LIA configuration does not take bit-vector terms."""
        s = z3.Solver() if bitvectors else z3.SolverFor("QF_LIA")
        s.set("random_seed", 0)
        if self.timeout:
            s.set("timeout", max(1, int(self.timeout * 1000)))
        return s

    def obligation(self, name: str, hyps: list[Any], goal: Any) -> Answer:
        """Does ``hyps => goal`` hold? ``name`` labels an emitted file."""
        s = self._new()
        s.add(*hyps)
        s.add(z3.Not(goal))
        return self._run(s, name, expect="unsat")

    def satisfiable(self, name: str, constraints: list[Any]) -> Answer:
        s = self._new()
        s.add(*constraints)
        return self._run(s, name, expect=None)

    def _run(self, s: z3.Solver, name: str, expect: str | None) -> Answer:
        t0 = time.perf_counter()
        r = s.check()
        interrupts.check()  # an interrupt a destructor swallowed (z3's dec_ref) still ends the run
        dt = time.perf_counter() - t0
        self.queries += 1
        self.seconds += dt
        if self.emit_dir is not None:
            self._emit(s, name, expect, str(r))
        if r == z3.unsat:
            return Answer("unsat", seconds=dt)
        if r == z3.sat:
            return Answer("sat", s.model(), seconds=dt)
        return Answer("unknown", reason=s.reason_unknown() or "unknown", seconds=dt)

    def _emit(self, s: z3.Solver, name: str, expect: str | None, got: str) -> None:
        self.emit_dir.mkdir(parents=True, exist_ok=True)
        safe = re.sub(r"[^A-Za-z0-9_.=-]+", "_", name).strip("_")
        if len(safe) > 200:  # a file name has 255 bytes: keep the spec, the obligation, and a hash of the rest
            digest = hashlib.sha1(safe.encode()).hexdigest()[:12]
            safe = f"{safe[:60]}.{digest}.{safe[-120:]}"
        path = self.emit_dir / f"{safe}.smt2"
        header = [f"; countercheck obligation: {name}"]
        if expect == "unsat":
            header.append("; expected: unsat (unsat means the obligation holds)")
        header.append(f"; z3 answered: {got}")
        path.write_text("\n".join(header) + "\n" + s.to_smt2())
        self.files.append(path)
