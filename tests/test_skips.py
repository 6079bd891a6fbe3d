# SPDX-License-Identifier: GPL-2.0-only
"""A test that skips for something missing says how to get it (a pip extra or a Debian package), so that
a skip in a contributor's run is one command away from running; CI (.ci/run) installs all of them."""
import ast

from conftest import ROOT

#: Words of a skip reason that mean "something is not installed here".
MISSING = ("not installed", "compiler", "no z3 command", "extra", "needs spin", "needs pydot")
HOW = ("pip install", "apt-get install", "npm install")


def _text(node: ast.AST) -> str:
    """The constant text of a reason: a string, an f-string's literal parts, or an implicit concatenation."""
    return "".join(n.value for n in ast.walk(node) if isinstance(n, ast.Constant) and isinstance(n.value, str))


def skip_reasons() -> list[tuple[str, str, str]]:
    """(file:line, call, reason) of every importorskip, skip and skipif in tests/."""
    out = []
    for path in sorted((ROOT / "tests").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
                continue
            name = node.func.attr
            if name not in ("importorskip", "skip", "skipif"):
                continue
            reason = next((_text(k.value) for k in node.keywords if k.arg in ("reason", "msg")), None)
            if reason is None and name == "skip" and node.args:
                reason = _text(node.args[0])
            out.append((f"{path.name}:{node.lineno}", name, reason or ""))
    return out


def test_every_skip_for_something_missing_says_how_to_install_it():
    found = skip_reasons()
    assert len([f for f in found if f[1] == "importorskip"]) >= 5
    unhelpful = [f for f in found
                 if (f[1] == "importorskip" or any(w in f[2].lower() for w in MISSING))
                 and not any(h in f[2] for h in HOW)]
    assert unhelpful == []
