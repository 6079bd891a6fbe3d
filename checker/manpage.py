# SPDX-License-Identifier: GPL-2.0-only
"""``countercheck-kernel man``: the manual page, in roff, generated from the argument parser.

Generated rather than written, so it cannot drift from ``--help``; docs/countercheck-kernel.1 is
this output, and tests/test_cli_hygiene.py keeps it in sync (``countercheck-kernel man --output
docs/countercheck-kernel.1`` rewrites it). No date in the header, so the same parser gives the same page.
"""
from __future__ import annotations

import argparse
import re

from checker.version import version

NAME = "countercheck-kernel"


def _roff(text: str) -> str:
    """Text safe in a roff body: backslashes escaped, hyphens of options unbreakable, no leading dot."""
    text = text.replace("\\", "\\e").replace("-", "\\-")
    return re.sub(r"^([.'])", r"\\&\1", text, flags=re.M)


def _help(parser: argparse.ArgumentParser, action: argparse.Action) -> str:
    if not action.help or action.help == argparse.SUPPRESS:
        return ""
    return parser._get_formatter()._expand_help(action)


def _invocation(action: argparse.Action) -> str:
    metavar = action.metavar or (action.dest.upper() if action.nargs != 0 else None)
    if action.choices and not action.metavar and action.nargs != 0:
        metavar = "{" + ",".join(map(str, action.choices)) + "}"
    if not action.option_strings:
        return f"\\fI{_roff(str(metavar))}\\fR"
    flags = ", ".join(f"\\fB{_roff(o)}\\fR" for o in action.option_strings)
    return flags + (f" \\fI{_roff(str(metavar))}\\fR" if action.nargs != 0 else "")


def _options(parser: argparse.ArgumentParser) -> list[str]:
    out: list[str] = []
    for group in parser._action_groups:
        actions = [a for a in group._group_actions if not isinstance(a, (argparse._HelpAction,
                                                                         argparse._SubParsersAction))]
        if not actions:
            continue
        title = group.title or "options"
        out += [".PP", f"\\fI{_roff(title)}\\fR:"]
        for a in actions:
            out += [".TP", _invocation(a), _roff(_help(parser, a)) or "\\&"]
    return out


def _block(text: str) -> list[str]:
    """An epilog's lines as they are: no filling, so columns stay aligned."""
    return [".PP", ".nf", *(_roff(line) for line in text.splitlines()), ".fi"]


def render(parser: argparse.ArgumentParser) -> str:
    """The manual page (roff) of ``parser`` and its subcommands."""
    subs = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    helps = {c.dest: c.help for c in subs._choices_actions}
    out = ['.\\" SPDX-License-Identifier: GPL-2.0-only',
           '.\\" Generated from the argument parser by `countercheck-kernel man`: do not edit.',
           f'.TH {NAME.upper()} 1 "" "{NAME} {version()}" "User Commands"',
           ".SH NAME", f"{NAME} \\- a model checker for the Linux kernel's concurrent counters",
           ".SH SYNOPSIS", f".B {NAME}", "[\\fB\\-\\-version\\fR] \\fICOMMAND\\fR [\\fIOPTIONS\\fR]",
           ".SH DESCRIPTION", _roff(parser.description or ""),
           ".PP", "Also run as \\fBpython \\-m checker\\fR from a checkout or an installed package.",
           ".SH COMMANDS"]
    for name, sub in subs.choices.items():
        out += [f'.SS "{name}"', _roff(helps.get(name) or "")]
        if sub.description:
            out += [".PP", _roff(sub.description)]
        out += _options(sub)
        if sub.epilog and name != "verify":
            out += _block(sub.epilog)
    verify = subs.choices.get("verify")
    epilog = (verify.epilog if verify is not None else parser.epilog) or ""
    codes, _, examples = epilog.partition("\n\nexamples:\n")
    out += [".SH EXIT STATUS", *_block("\n".join(codes.splitlines()[1:]))]
    if examples:
        out += [".SH EXAMPLES", *_block(examples)]
    out += [".SH SEE ALSO", "The spec\\-authoring guide, docs/spec\\-authoring.md, in the source distribution."]
    return "\n".join(out) + "\n"
