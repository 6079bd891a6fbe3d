# SPDX-License-Identifier: GPL-2.0-only
"""The version of this copy of countercheck: the installed metadata, or the checkout's pyproject.toml.

The metadata is believed only when it describes this very copy: a checkout run with
``PYTHONPATH`` beside an older installed release reports the checkout's version, not the release's.
"""
from __future__ import annotations

import re
from importlib import metadata
from pathlib import Path

DISTRIBUTION = "countercheck-kernel"
_HERE = Path(__file__).resolve()


def version() -> str:
    """``0.1.0``; ``unknown`` only when neither the metadata nor a checkout says."""
    try:
        dist = metadata.distribution(DISTRIBUTION)
    except metadata.PackageNotFoundError:
        dist = None
    if dist is not None and _describes_this_copy(dist):
        return dist.version
    return _checkout_version() or (dist.version if dist is not None else "unknown")


def _describes_this_copy(dist: metadata.Distribution) -> bool:
    try:
        return Path(str(dist.locate_file("checker/version.py"))).resolve() == _HERE
    except (OSError, ValueError):
        return False


def _checkout_version() -> str | None:
    """``version = "..."`` of the [project] table of the pyproject.toml beside the package (a checkout)."""
    path = _HERE.parent.parent / "pyproject.toml"
    try:
        text = path.read_text(encoding="utf-8")
    except OSError:
        return None
    project = re.search(r"^\[project\]\s*$(.*?)(?=^\[|\Z)", text, re.M | re.S)
    if project is None or not re.search(r'^name\s*=\s*"' + re.escape(DISTRIBUTION) + '"', project[1], re.M):
        return None
    m = re.search(r'^version\s*=\s*"([^"]+)"', project[1], re.M)
    return m[1] if m else None
