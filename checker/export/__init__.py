# SPDX-License-Identifier: GPL-2.0-only
"""Exporting a spec to other model checkers' languages (Promela, for SPIN)."""
from checker.export.promela import NotExportable, PromelaModel, export_promela

__all__ = ["NotExportable", "PromelaModel", "export_promela"]
