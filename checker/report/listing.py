# SPDX-License-Identifier: GPL-2.0-only
"""``python -m checker list``: what a spec declares, for people."""
from __future__ import annotations

import inspect
from typing import Any

from checker.kernel.context import IRQ_DEADLOCK, IRQ_SAFE, LOCK_DEADLOCK, LOCK_ORDER, NO_SLEEP, RULE_DOCS
from checker.report.trace import first_paragraph
from checker.language.model import all_assumptions, info


def _context_rules(si: Any) -> list[tuple[str, str]]:
    """The context rules (checker.kernel.context) that apply to the spec's declarations."""
    from checker.language.declare import Lock

    spin = [v for v in si.vars.values() if isinstance(v, Lock) and v.spinlock]
    irq = any(a.irq for a in si.actions.values())
    out = []
    if any(a.sleeps for a in si.actions.values()) or any(not v.raw for v in spin):
        out.append(("invariant", NO_SLEEP))
    if len(spin) >= 2:
        out.append(("inversion", LOCK_ORDER))
    if irq and spin:
        out += [("inversion", IRQ_SAFE), ("deadlock", IRQ_DEADLOCK)]
    if sum(isinstance(v, Lock) for v in si.vars.values()) >= 2:
        out.append(("deadlock", LOCK_DEADLOCK))
    return out


def _sweep(vals, p) -> str:
    if vals is None:
        return "-"
    vals = list(vals)
    if len(vals) > 2 and all(isinstance(v, int) for v in vals) and vals == list(range(vals[0], vals[-1] + 1)):
        return f"{p.show(vals[0])}..{p.show(vals[-1])}"
    return ",".join(str(p.show(v)) for v in vals)


def describe(cls: type) -> str:
    """A spec as ``list`` prints it: name, source, parameters, properties and assumptions."""
    si = info(cls)
    doc = (inspect.getdoc(cls) or "").splitlines()
    lines = [f"{cls.spec_name}  ({cls.__name__}, {si.file}:{si.line})"
             + ("  [on demand: checked when named, not by a bare verify]" if cls.on_demand else "")]
    if doc:
        lines.append(f"  {doc[0]}")
    lines.append(f"  kernel: {cls.kernel}")
    if cls.expect_violated:
        lines.append(f"  bug spec: expected to violate {', '.join(cls.expect_violated)}")
    lines.append("  parameters:")
    for n, p in si.params.items():
        default = "derived" if p.derived else str(p.show(p.default))
        lines.append(f"    {n:<12} default {default:<8} domain {p.describe_domain():<14} explore "
                     f"{_sweep(p.explore, p):<8} prove {_sweep(p.prove, p):<8} {p.doc}")
    if cls.explore_sweeps != ({},):
        lines.append("  default explorer run: " + "; ".join(
            " ".join(f"{k}={_sweep(v if isinstance(v, (tuple, list, range)) else (v,), si.params[k])}"
                     for k, v in e.items()) or "the sweeps above" for e in cls.explore_sweeps))
    if si.roles:
        lines.append("  cpus: " + "; ".join(
            f"{n} = {r.count}{' (symmetric)' if r.symmetric else ''}" for n, r in si.roles.items()))
    lines.append("  variables: " + ", ".join(
        f"{n} ({v.kind}, {v.type.name})" for n, v in si.vars.items()))
    lines.append("  actions: " + ", ".join(
        f"{a.name}" + (f"[{a.role}]" if a.role else "") + (f" ({a.fair} fair)" if a.fair else "")
        for a in si.actions.values()))
    if si.abstraction is not None:
        lines.append(f"  abstraction (liveness only): {first_paragraph(si.abstraction.doc) or 'see the spec'}")
    lines.append("  properties:")
    for p in si.properties.values():
        exp = "" if p.expect == "holds" else "  (expected violated)"
        if p.lemma:  # not a claim: there to make induction go through (--prover pdr needs none)
            exp += "  (lemma)"
        if p.kind in ("eventually", "leads_to"):
            exp += ("  (always)" if p.always else "") + ("" if p.fair else "  (no fairness)")
        lines.append(f"    {p.kind:<10} {p.name}{exp}: {first_paragraph(p.doc)}")
    lines.append(f"    {'deadlock':<10} no_deadlock{'' if si.builtin_expect.get('no_deadlock', 'holds') == 'holds' else '  (expected violated)'}")
    for kind, name in _context_rules(si):
        exp = "" if si.builtin_expect.get(name, "holds") == "holds" else "  (expected violated)"
        lines.append(f"    {kind:<10} {name}{exp}: {RULE_DOCS[name]}")
    lines.append("  assumptions:")
    lines += [f"    - {a}" for a in all_assumptions(cls)]
    return "\n".join(lines)
