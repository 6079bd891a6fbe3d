# SPDX-License-Identifier: GPL-2.0-only
"""The command line's manners (issue 30, item 3): --version, no abbreviations, help in groups with
the exit codes, a closed pipe, shell completion and a man page made from the parser."""
import os
import re
import shutil
import subprocess
import sys

import pytest

from checker.cli import build_parser, main
from checker.invocation import invoked_as
from checker.version import version
from conftest import ROOT


def test_version_is_the_package_version(capsys):
    with pytest.raises(SystemExit) as e:
        main(["--version"])
    assert e.value.code == 0
    declared = re.search(r'^version = "([^"]+)"', (ROOT / "pyproject.toml").read_text(), re.M)[1]
    assert capsys.readouterr().out == f"countercheck-kernel {declared}\n" and version() == declared


def test_an_abbreviated_option_is_an_error_not_a_guess(capsys):
    with pytest.raises(SystemExit) as e:
        main(["verify", "percpu_up", "--max-st", "10"])
    assert e.value.code == 2 and "unrecognized arguments: --max-st" in capsys.readouterr().err


def test_help_has_groups_exit_codes_and_examples():
    text = build_parser("countercheck-kernel")._subparsers._group_actions[0].choices["verify"].format_help()
    for title in ("what to check:", "output:", "limits (reaching one is inconclusive, exit 3):",
                  "how to explore:", "proofs (Z3):", "simulation:", "exit codes:", "examples:"):
        assert title in text, title
    assert "  3  inconclusive" in text and "countercheck-kernel verify -k " in text
    assert invoked_as("/usr/local/bin/countercheck-kernel") == "countercheck-kernel"
    assert invoked_as("/src/checker/__main__.py") == "python -m checker"


def test_list_into_a_closed_pipe_ends_quietly():
    """`list | head -1`: the reader leaves after a line; no BrokenPipeError traceback."""
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    p = subprocess.Popen([sys.executable, "-m", "checker", "list"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         cwd=ROOT, env=env)
    first = p.stdout.readline()
    p.stdout.close()
    err = p.stderr.read().decode()
    assert p.wait(timeout=300) == 141  # as a shell reports a tool stopped by SIGPIPE
    assert first and err == "", err


@pytest.mark.skipif(not shutil.which("bash"), reason="bash checks the script's syntax")
def test_completion_scripts_come_from_the_parser(capsys):
    pytest.importorskip("shtab", reason="pip install 'countercheck-kernel[completion]' (or '.[test]')")
    assert main(["completion", "bash"]) == 0
    script = capsys.readouterr().out
    assert "--max-states" in script and "--exitfirst" in script and "percpu_eager" in script  # options, spec names
    assert subprocess.run(["bash", "-n"], input=script, text=True).returncode == 0
    assert main(["completion", "zsh"]) == 0 and "#compdef countercheck-kernel" in capsys.readouterr().out


def test_the_man_page_is_generated_from_the_parser_and_in_sync(capsys, tmp_path):
    """docs/countercheck-kernel.1 is what `countercheck-kernel man` prints: after changing an option,
    run `python -m checker man --output docs/countercheck-kernel.1`."""
    assert main(["man"]) == 0
    page = capsys.readouterr().out
    assert page == (ROOT / "docs" / "countercheck-kernel.1").read_text(), \
        "docs/countercheck-kernel.1 is stale: python -m checker man --output docs/countercheck-kernel.1"
    assert page.splitlines()[2].startswith(".TH COUNTERCHECK-KERNEL 1") and '.SS "verify"' in page and ".SH EXIT STATUS" in page
    assert "\\fB\\-\\-max\\-states\\fR \\fIN\\fR" in page
    if shutil.which("man"):
        (tmp_path / "cc.1").write_text(page)
        shown = subprocess.run(["man", "-l", str(tmp_path / "cc.1")], capture_output=True, text=True,
                               env=dict(os.environ, MANWIDTH="100"))
        plain = re.sub(".\b", "", shown.stdout)  # no bold or underline by overstrike
        assert shown.returncode == 0 and "--max-states N" in plain, shown.stderr
