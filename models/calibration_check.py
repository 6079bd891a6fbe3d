# SPDX-License-Identifier: GPL-2.0-only
"""Consistency of models/calibration.json: every id it names exists, every ratio is within one seed."""
from __future__ import annotations

import json
from pathlib import Path

from .workloads import WORKLOADS


def check_calibration_file(path: Path) -> list[str]:
    """Problems found, one sentence each (empty: the file is consistent)."""
    cal = json.loads(Path(path).read_text())
    figs = {f["id"]: f for f in cal["figures"]}
    problems = [f"calibrate_on names {i!r}, which is not a figure" for i in cal["calibrate_on"] if i not in figs]
    for f in cal["figures"]:
        w = WORKLOADS.get(f["workload"])
        if w is None or f["variant"] not in w.variants:
            problems.append(f"figure {f['id']}: no workload {f['workload']!r} with variant {f['variant']!r}")
    for r in cal["ratios"]:
        num, den = figs.get(r["num"]), figs.get(r["den"])
        if num is None or den is None:
            problems.append(f"ratio {r['id']!r} names a missing figure")
        elif num["seed"] != den["seed"]:
            problems.append(f"ratio {r['id']!r} compares seeds {num['seed']} and {den['seed']}: different machines")
    return problems
