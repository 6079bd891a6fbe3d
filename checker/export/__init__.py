# SPDX-License-Identifier: GPL-2.0-only
"""Exporting a spec to other model checkers' languages (Promela, for SPIN).

The Promela printer is imported when first named (PEP 562), so that the CLI, which
reads ``checker.export.command``'s options on every run, does not pay for it."""
from __future__ import annotations

import importlib
from typing import Any

__all__ = ["NotExportable", "PromelaModel", "export_promela"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        return getattr(importlib.import_module("checker.export.promela"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
