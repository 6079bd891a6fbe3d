# SPDX-License-Identifier: GPL-2.0-only
"""Where each spec variable lies in the flat int64 vector the compiled explorer keeps (read by the
canonical forms of checker.compiled.canonical and checker.compiled.structural)."""
from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from checker.language.compile import Model


def widths(model: "Model") -> tuple[int | None, ...]:
    """Per variable in ``var_names`` order: None for a scalar, else its number of slots."""
    return tuple((model.ncpus_total if n in model.percpu else model.arrays[n]) if n in model.tupled else None
                 for n in model.var_names)


def offsets(model: "Model") -> dict[str, int]:
    """Each variable's first slot in the flat vector."""
    out, at = {}, 0
    for n, w in zip(model.var_names, widths(model)):
        out[n] = at
        at += 1 if w is None else w
    return out
