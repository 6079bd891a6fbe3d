# SPDX-License-Identifier: GPL-2.0-only
"""``countercheck-kernel completion bash|zsh|tcsh``: a static shell completion script, made by shtab.

shtab rather than argcomplete: shtab writes a plain script from the parser once, so completing
costs the shell nothing, while argcomplete starts Python (and imports the checker, z3 and the
specs) at every press of Tab. Built-in spec names are baked into the script beside file names.
"""
from __future__ import annotations

import argparse

from checker.errors import UsageError

PROG = "countercheck-kernel"


def script(parser: argparse.ArgumentParser, shell: str) -> str:
    """A static completion script for ``shell`` (bash, zsh or tcsh), written by shtab."""
    try:
        import shtab
    except ImportError:
        raise UsageError("completion needs shtab: pip install 'countercheck-kernel[completion]' "
                         "(or pip install shtab)") from None
    from checker.loader import builtin_specs

    names = " ".join(sorted(builtin_specs()))
    prefix = "_countercheck_kernel"
    preamble = {
        "bash": f'{prefix}_specs() {{\n  compgen -W "{names}" -- "$1"\n  compgen -f -- "$1"\n}}\n',
        "zsh": f"{prefix}_specs() {{\n  _alternative 'specs:built-in spec:({names})' 'files:spec file:_files'\n}}\n",
        "tcsh": "",
    }[shell]
    spec_completion = {"bash": f"{prefix}_specs", "zsh": f"{prefix}_specs", "tcsh": "f"}
    for sub in _subparsers(parser):
        for action in sub._actions:
            if action.dest == "specs":
                action.complete = spec_completion  # type: ignore[attr-defined]
            elif action.metavar in ("FILE", "DIR") or action.dest in ("output", "junit", "sarif", "json"):
                action.complete = shtab.DIRECTORY if action.metavar == "DIR" else shtab.FILE  # type: ignore[attr-defined]
    return shtab.complete(parser, shell=shell, root_prefix=prefix, preamble=preamble)


def _subparsers(parser: argparse.ArgumentParser) -> list[argparse.ArgumentParser]:
    out = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            out += list(dict.fromkeys(action.choices.values()))
    return out
