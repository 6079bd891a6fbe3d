# SPDX-License-Identifier: GPL-2.0-only
"""What every engine's checks share: a property's metadata, the build check, steps' sources."""
from __future__ import annotations

from dataclasses import replace
from typing import Any

from checker.result import HOLDS, Check, Step, flatten
from checker.language.compile import Model, show_value

#: The explorer's deadlock check's name (``checker.explore.DEADLOCK``, repeated so this module stays below it).
DEADLOCK = "no_deadlock"


def property_meta(model: Model, name: str) -> tuple[str, str | None, int | None, str]:
    """(expected verdict, file, line, doc) of a property, the deadlock check included."""
    si = model.info
    if name == DEADLOCK:
        return (si.builtin_expect.get(DEADLOCK, HOLDS), si.file, si.line,
                "no state where work is left and nothing is enabled")
    from checker.kernel.context import RULE_DOCS

    if name in RULE_DOCS:
        return si.builtin_expect.get(name, HOLDS), si.file, si.line, RULE_DOCS[name]
    p = next(p for p in model.properties if p.name == name)
    return p.expect, p.file, p.line, p.doc


def build_check(cls: type, model: Model, run: int, backend: str = "explore") -> Check:
    """Does every kernel symbol the spec's actions call exist in this configuration?"""
    si = model.info
    errors = si.api.build_errors(si.actions.values(), model.params)
    expected = si.builtin_expect.get("builds", HOLDS)
    c = Check(spec=model.name, file=si.file, line=si.line, params=model.params.shown(), property="builds",
              kind="build", backend=backend, verdict="violated" if errors else HOLDS, expected=expected,
              run=run, doc="every symbol a caller uses exists in this configuration",
              bug="builds" in cls.expect_violated, extra={"build_errors": [str(e) for e in errors]})
    c.trace_text = [str(e) for e in errors]
    return c


def with_sources(steps: list[Step], actions: dict[str, Any]) -> list[Step]:
    """Each step with the file and first line of its action's definition, where Python knows them."""
    out = []
    for st in steps:
        a = actions.get(st.action)
        out.append(replace(st, file=a.file, line=a.line) if a is not None and a.line is not None else st)
    return out


def with_shown(steps: list[Step], variables: dict[str, Any]) -> list[Step]:
    """Each step with its changes as the trace shows them (``pc[2]: acquire``), beside the raw values."""
    return [replace(st, shown={k: _shown(variables, k, v) for k, v in st.changes.items()}) for st in steps]


def shown_state(state: dict[str, Any] | None, variables: dict[str, Any]) -> dict[str, str] | None:
    """A state as the trace shows it, flattened (``local[1]``); None for none."""
    if state is None:
        return None
    return {k: _shown(variables, k, v) for k, v in flatten(state).items()}


def _shown(variables: dict[str, Any], key: str, v: Any) -> str:
    # a plain number has its variable's type; anything else (a weak-memory buffer, a nested list) its repr
    return show_value(variables, key, v) if isinstance(v, int) else repr(v)
