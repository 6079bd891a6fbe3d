# SPDX-License-Identifier: GPL-2.0-only
"""Run litmus tests under the memory models and judge ours against LKMM's stated results.

``run_tests(paths, models)`` parses and lowers every test first (a malformed one stops the run with its
file and line, as a malformed spec does), then explores each exhaustively under each model and returns
one ``Row`` per test. A test's outcome under a model is herd's word for it: ``Sometimes`` (some final
state satisfies the exists clause), ``Never`` (none does, after an exhaustive search), ``Always`` (every
final state does), ``DEADLOCK`` (no final state passes the test's ``filter``: herd7's "Never 0 0", which
the kernel's ``tools/memory-model/scripts/judgelitmus.sh`` judges as ``Result: DEADLOCK``), or ``not
modelled`` (``lower.Unsupported``: the reason is given), ``inconclusive`` (a limit hit) or ``error`` (the
lowered spec deadlocked: a thread that cannot finish).

The bounds of the weak models are set per test so that they cannot cut a run short: the store buffer
as deep as the thread with the most stores, the per-location history as long as that location's stores
(the ``sometimes`` that a bound is reached is then reached only by a run that fills it exactly). A bound
larger than its parameter's domain allows is capped there, and the row says so. Promises (lkmm) are one
per thread with a ``WRITE_ONCE()``: that is a bound (a run needing two out at once is not explored), which
every kernel test is within (docs/weak-memory.md).

``render_markdown(rows)`` is the table of ``docs/litmus-table.md``.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence

from checker.errors import SpecError, UsageError
from checker.layout import kernel_litmus_dir
from checker.litmus import lower as L
from checker.litmus import parse as P
from checker.language.model import info

MODELS = ("sc", "tso", "lkmm")
#: A model's outcome that allows the exists clause's final state.
ALLOWED = ("Sometimes", "Always")
#: herd7's "Never 0 0" (no execution passes the test's filter), which the kernel's judgelitmus.sh calls DEADLOCK.
DEADLOCK = "DEADLOCK"
VERDICTS = ("Never", "Sometimes", "Always", DEADLOCK)


@dataclass
class Outcome:
    """One test under one memory model: its verdict on the exists clause, the states explored, a note, a trace."""
    verdict: str  # Never, Sometimes, Always, not modelled, inconclusive, error
    states: int = 0
    seconds: float = 0.0
    note: str = ""  # why not modelled / inconclusive / error; a bound that was capped
    #: The shortest run to a final state the exists clause asks about, one line per step (when reached).
    trace: list[str] = field(default_factory=list)


@dataclass
class Row:
    """One test's line: LKMM's stated result and each model's outcome."""
    name: str
    file: str
    lkmm_says: str | None  # the header's Result:
    outcomes: dict[str, Outcome] = field(default_factory=dict)

    def agreement(self, model: str = "lkmm") -> str:
        """``agrees``, ``stronger`` (ours forbids what LKMM allows: would miss a bug), ``weaker`` (ours allows
        what LKMM forbids: a false alarm), or ``-`` when either side has no verdict."""
        o = self.outcomes.get(model)
        if o is None or o.verdict not in VERDICTS or self.lkmm_says not in VERDICTS:
            return "-"
        if DEADLOCK in (o.verdict, self.lkmm_says):  # no run passes the filter: allows less than any other
            return "agrees" if o.verdict == self.lkmm_says else "stronger" if o.verdict == DEADLOCK else "weaker"
        ours, theirs = o.verdict in ALLOWED, self.lkmm_says in ALLOWED
        return "agrees" if ours == theirs else ("stronger" if theirs else "weaker")


@dataclass
class Lowered:
    """One test, parsed and lowered (or the reason it cannot be)."""
    path: str
    test: P.Litmus
    spec: type | None
    unsupported: str | None


def default_paths() -> list[Path]:
    """The kernel's tests kept with countercheck, in name order: tools/memory-model/litmus-tests/ as
    tests/litmus/*.litmus, then Documentation/litmus-tests/ as tests/litmus/documentation/*.litmus.

    Installed, they are package data (``checker/litmus/kernel/``, pyproject.toml's package-dir); in a
    checkout, the tests/litmus/ folder itself (``checker.layout.kernel_litmus_dir``)."""
    root = kernel_litmus_dir()
    try:  # named as a user in the checkout would name them (the table prints the directories)
        root = root.relative_to(Path.cwd().resolve())
    except ValueError:
        pass
    return sorted(root.glob("*.litmus")) + sorted((root / "documentation").glob("*.litmus"))


def collect(args: Sequence[str]) -> list[Path]:
    """The .litmus files named (a directory stands for the .litmus files in it), or the kept ones."""
    if not args:
        found = default_paths()
        if not found:
            raise UsageError("no litmus tests named and none installed or kept here (tests/litmus/*.litmus): "
                             "name .litmus files or a directory holding them")
        return found
    out: list[Path] = []
    for a in args:
        p = Path(a)
        if p.is_dir():
            inside = sorted(p.glob("*.litmus"))
            if not inside:
                raise UsageError(f"{a}: a directory with no .litmus files")
            out.extend(inside)
        elif p.exists():
            out.append(p)
        else:
            raise UsageError(f"{a}: no such file or directory (name .litmus files or a directory of them)")
    return out


def prepare(paths: Iterable[Path]) -> list[Lowered]:
    """Parse and lower every test; the first malformed one raises (``SpecError``: its file and line)."""
    out = []
    for p in paths:
        test = P.parse_file(p)
        try:
            out.append(Lowered(str(p), test, L.lower(test), None))
        except L.Unsupported as e:
            out.append(Lowered(str(p), test, None, f"{e.message} (line {e.line})"))
    return out


def bounds(spec: type) -> dict[str, int]:
    """Weak-model bounds that no run of this test can exceed: stores per thread (a ``spin_unlock()`` counted:
    under tso the release waits in the store buffer too), stores per location, and promises per thread (lkmm:
    one where the thread has a ``WRITE_ONCE()``, which is what every kernel test needs; more multiply the
    states, see benchmarks/lkmm_promises.txt)."""
    per_thread: dict[str, int] = {}
    per_loc: dict[str, int] = {}
    promisable: dict[str, set] = {}
    for act in info(spec).actions.values():
        stores = [a for a in act.access if a.kind in ("store", "rmw")]
        unlocks = getattr(act.fn, "litmus_unlocks", 0)  # recorded by the lowering (checker.litmus.lower)
        per_thread[act.role] = per_thread.get(act.role, 0) + len(stores) + unlocks
        for a in stores:
            per_loc[a.var] = per_loc.get(a.var, 0) + 1
        promisable.setdefault(act.role, set()).update(a.var for a in stores if a.kind == "store" and a.order == "once")
    return {"sb_depth": max([1, *per_thread.values()]), "lkmm_history": max([2, *[n + 1 for n in per_loc.values()]]),
            "lkmm_promises": min(1, max([0, *map(len, promisable.values())]))}


def _outcome(verdicts: dict[str, str], complete: bool, stopped: str | None, filtered: bool) -> tuple[str, str]:
    if verdicts.get("no_deadlock") == "violated":
        return "error", "a thread cannot finish (a deadlock: a dereference of a register holding no address?)"
    hit, miss = verdicts.get("exists_clause"), verdicts.get("exists_clause_fails")
    limit = f"the search stopped ({stopped or 'a limit'}) before it saw every state"
    if hit == "holds" and miss != "holds" and not complete:  # reached is final; "every final state" is not
        return "Sometimes", f"{limit}: whether every final state satisfies the clause (Always) is undecided"
    if "inconclusive" in (hit, miss) or not complete:
        return "inconclusive", limit
    if hit == "holds":
        return ("Sometimes" if miss == "holds" else "Always"), ""
    if miss != "holds":
        # no deadlock and every thread's code is finite: final states exist, so the filter passed none
        if filtered:  # herd7 prints "Never 0 0", and tools/memory-model/scripts/judgelitmus.sh judges it DEADLOCK
            return DEADLOCK, "no final state passes the filter"
        return "error", "no run reaches a final state"
    return "Never", ""


def run_one(lw: Lowered, model: str, *, max_states: int | None = None, timeout: float | None = None) -> Outcome:
    """The test's outcome under one memory model."""
    if lw.spec is None:
        return Outcome("not modelled", note=lw.unsupported or "")
    from checker.explore import explore

    params: dict[str, Any] = {}
    note = ""
    declared = info(lw.spec).params
    if "memory" in declared:
        from checker.ordering.declare import MEMORY

        params["memory"] = getattr(MEMORY, model)
        for name, want in bounds(lw.spec).items():
            if name not in declared:
                continue
            top = max(declared[name].domain)
            params[name] = min(want, top)
            if want > top:
                note = f"{name} capped at {top} (the test has runs that need {want})"
    elif model != "sc":  # a test with no annotated access at all: the same under every model
        note = "no annotated access: the same as sc"
    from checker.report.trace import render_trace
    from checker.language.compile import Model

    t0 = time.monotonic()
    model = Model(lw.spec(**params))
    r = explore(model, max_states=max_states, timeout=timeout)
    hit = r.outcomes.get("exists_clause")
    trace = render_trace(model, r.initial_state or {}, hit.trace) if hit is not None and hit.verdict == "holds" \
        else []
    verdict, why = _outcome(r.verdicts, r.complete, r.stopped_because, lw.test.filter is not None)
    if r.verdicts.get("no_data_race") == "violated":  # herd's "Flag data-race"
        why = "; ".join(x for x in (why, "a data race (herd7 would flag data-race)") if x)
    return Outcome(verdict, r.states, time.monotonic() - t0, why or note, trace)


def run_tests(lowered: Sequence[Lowered], models: Sequence[str], *, max_states: int | None = None,
              timeout: float | None = None, on_row: Callable[[Row], None] | None = None) -> list[Row]:
    """Run every lowered test under each model, in order, calling ``on_row`` as each test is done."""
    rows = []
    for lw in lowered:
        row = Row(lw.test.name, lw.path, lw.test.result)
        for m in models:
            row.outcomes[m] = run_one(lw, m, max_states=max_states, timeout=timeout)
        rows.append(row)
        if on_row is not None:
            on_row(row)
    return rows


# ---- reports ---------------------------------------------------------------------------------------------

def summary(rows: Sequence[Row], model: str = "lkmm") -> dict[str, int]:
    """How many rows agree with LKMM under ``model``, how many are stronger, weaker, or without a verdict."""
    counts = {"agrees": 0, "stronger": 0, "weaker": 0, "-": 0}
    for r in rows:
        counts[r.agreement(model)] += 1
    return counts


def text_line(row: Row, models: Sequence[str]) -> str:
    """One test's line of text: each model's verdict, agreement with LKMM, and the notes."""
    cells = "  ".join(f"{m}={row.outcomes[m].verdict:<10}" for m in models)
    agree = f"  lkmm: {row.agreement()}" if "lkmm" in models else ""
    got = [row.outcomes[m].note for m in models if row.outcomes[m].note]
    if len(got) == len(models) and len(set(got)) == 1:
        notes = got[0]
    else:
        notes = "; ".join(f"{m}: {row.outcomes[m].note}" for m in models if row.outcomes[m].note)
    return f"{row.name:<55} LKMM={row.lkmm_says or '?':<10} {cells}{agree}" + (f"  ({notes})" if notes else "")


def _cell(o: Outcome | None) -> str:
    if o is None:
        return "(not run)"
    return o.verdict if o.verdict in VERDICTS else f"{o.verdict}"


def render_markdown(rows: Sequence[Row], models: Sequence[str]) -> str:
    """One table per directory of tests (with its agreement counts): test, LKMM's result, ours under lkmm,
    tso, sc, the lkmm column's agreement, states."""
    groups: dict[str, list[Row]] = {}
    for r in rows:
        groups.setdefault(Path(r.file).parent.as_posix(), []).append(r)
    if len(groups) == 1:
        return _table(rows, models)
    return "\n".join(f"### `{d}/`\n\n" + _table(g, models) for d, g in groups.items())


def _table(rows: Sequence[Row], models: Sequence[str]) -> str:
    shown = [m for m in ("lkmm", "tso", "sc") if m in models]
    head = ["test", "LKMM", *[f"ours, {m}" for m in shown]]
    if "lkmm" in models:
        head.append("lkmm vs LKMM")
    head.append("states (" + "/".join(shown) + ")")
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        cells = [f"`{r.name}`", r.lkmm_says or "?", *[_cell(r.outcomes.get(m)) for m in shown]]
        if "lkmm" in models:
            a = r.agreement()
            cells.append({"agrees": "agrees", "stronger": "**stronger** (misses)", "weaker": "**weaker** (false alarm)",
                          "-": "-"}[a])
        cells.append("/".join(str(r.outcomes[m].states) if m in r.outcomes and r.outcomes[m].states else "-"
                              for m in shown))
        lines.append("| " + " | ".join(cells) + " |")
    notes = []
    for r in rows:
        got = {m: r.outcomes[m].note for m in shown if m in r.outcomes and r.outcomes[m].note}
        if len(got) == len(shown) and len(set(got.values())) == 1:
            notes.append(f"- `{r.name}` (every model): {next(iter(got.values()))}")
        else:
            notes += [f"- `{r.name}` under {m}: {n}" for m, n in got.items()]
    out = "\n".join(lines) + "\n"
    for m in shown:
        s = summary(rows, m)
        decided = s["agrees"] + s["stronger"] + s["weaker"]
        out += (f"\n{m}: agrees with LKMM on {s['agrees']} of {decided} decided tests; stronger on {s['stronger']}, "
                f"weaker on {s['weaker']}; {s['-']} without a verdict.")
    out += "\n"
    if notes:
        out += "\nNotes:\n\n" + "\n".join(notes) + "\n"
    return out


BEGIN = "<!-- litmus-table:begin (python -m checker litmus --table docs/litmus-table.md writes this part) -->"
END = "<!-- litmus-table:end -->"


def update_document(path: Path, table: str) -> str:
    """``path``'s text with the part between the markers replaced by ``table`` (the rest is kept as written);
    a new file gets a title and the table."""
    block = f"{BEGIN}\n\n{table}\n{END}"
    if path.exists():
        text = path.read_text(encoding="utf-8")
        if BEGIN in text and END in text:
            head, rest = text.split(BEGIN, 1)
            return head + block + rest.split(END, 1)[1]
        raise SpecError(f"has no {BEGIN!r} ... {END!r} markers: add them where the table goes, or give a new file",
                        file=str(path))
    return f"# The kernel's litmus tests under countercheck's memory models\n\n{block}\n"
