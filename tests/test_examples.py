# SPDX-License-Identifier: GPL-2.0-only
"""Examples run: every fenced block of README.md and docs/*.md (STYLE 11).

The convention, also stated in docs/spec-authoring.md ("How the guide is tested"):

- A ```python block is saved as a file: ``<!-- file: NAME.py -->`` on the line
  before it names the file; an unmarked block continues the last named file.
  A file that no command below runs is verified and must exit 0.
- In a shell block, a line ``$ python -m checker ...`` is a command, run in
  the folder holding those files; the lines after it, up to the next ``$``,
  are its expected output (stdout then stderr). ``...`` stands for any text,
  as doctest's ELLIPSIS, and a duration (``0.03s``) matches any duration. A
  command ending in ``# exit N`` must exit N, any other 0.
- Any other block says why it is not run: ``<!-- not run: REASON -->``.
"""
import json
import os
import re
import shlex
import subprocess
import sys

import pytest

from conftest import ROOT

DOCS = ["README.md", *sorted(str(p.relative_to(ROOT)) for p in (ROOT / "docs").glob("*.md"))]
FENCE = re.compile(r"(?:<!--\s*(?P<mark>.*?)\s*-->\s*\n)?```(?P<lang>[\w-]*)\n(?P<body>.*?)```", re.S)
# A time is whatever the machine took: "~0.3s" and "under 0.1s" alike.
DURATION = re.compile(r"(?:~|under )?\b\d+\.\d+s\b")


def blocks(path):
    """(language, body, marker) of every fenced block, in order."""
    return [(m["lang"], m["body"], m["mark"] or "") for m in FENCE.finditer((ROOT / path).read_text())]


def _normal(text):
    return DURATION.sub("<t>", "\n".join(line.rstrip() for line in text.strip("\n").splitlines()))


def _matches(expected, actual):
    pattern = ".*?".join(re.escape(part) for part in _normal(expected).split("..."))
    return re.fullmatch(pattern, _normal(actual), re.S) is not None


def _commands(body):
    """(command, exit code, expected output) for each ``$`` line of a shell block."""
    out = []
    for line in body.splitlines():
        if line.startswith("$ "):
            cmd, _, code = line[2:].partition("# exit ")
            out.append([cmd.strip(), int(code) if code else 0, []])
        elif out:
            out[-1][2].append(line)
        elif line.strip():
            raise AssertionError(f"text before the first `$ ` command: {line!r}")
    return [(c, code, "\n".join(lines)) for c, code, lines in out]


def _run(cmd, cwd):
    argv = shlex.split(cmd)
    assert argv[:3] == ["python", "-m", "checker"], f"docs run only `python -m checker ...`: {cmd}"
    env = dict(os.environ, PYTHONPATH=str(ROOT))  # this checkout's checker, from the docs' folder
    return subprocess.run([sys.executable, *argv[1:]], capture_output=True, text=True, cwd=cwd, env=env,
                          timeout=300)


def _steps(doc):
    """The doc in order: ("file", name, text so far) for python blocks, ("run", block) for shell ones."""
    files, current = {}, None
    for lang, body, mark in blocks(doc):
        if mark.startswith("not run:"):
            assert mark[len("not run:"):].strip(), f"{doc}: say why a block is not run"
        elif lang == "python":
            if mark.startswith("file:"):
                current = mark[len("file:"):].strip()
            assert current, f"{doc}: mark the first python block with <!-- file: NAME.py -->"
            files[current] = files.get(current, "") + ("\n\n" if current in files else "") + body
            yield "file", current, files[current]
        else:
            assert _commands(body), (f"{doc}: a {lang or 'plain'} block with no `$ ` command needs "
                                     f"<!-- not run: REASON -->:\n{body}")
            yield "run", body, None


def doc_files(doc):
    """Each file the doc's python blocks make, with its whole text."""
    return {name: text for kind, name, text in _steps(doc) if kind == "file"}


@pytest.mark.parametrize("doc", DOCS)
def test_every_block_of_the_doc_runs_as_shown(doc, tmp_path):
    written, ran = set(), set()
    for kind, what, text in _steps(doc):
        if kind == "file":
            (tmp_path / what).write_text(text)
            written.add(what)
            continue
        for cmd, code, expected in _commands(what):
            r = _run(cmd, tmp_path)
            shown = r.stdout + r.stderr
            assert r.returncode == code, f"{doc}: `{cmd}` exited {r.returncode}, not {code}:\n{shown}"
            assert _matches(expected, shown), f"{doc}: `{cmd}` printed\n{shown}\nnot\n{expected}"
            ran.update(name for name in written if name in cmd)
    for name in sorted(written - ran):
        r = _run(f"python -m checker verify {name}", tmp_path)
        assert r.returncode == 0, f"{doc}: {name} does not verify:\n{r.stdout}{r.stderr}"


def test_ellipsis_and_durations_match_as_documented():
    assert _matches("ok  a ...  9.99s\n...\nend", "ok  a [x=1]  0.01s\nmore\nlines\nend\n")
    assert not _matches("ok  a\nend", "ok  a\nextra\nend")
    assert _commands("$ python -m checker x   # exit 3\nout\n...\n$ python -m checker y") == [
        ("python -m checker x", 3, "out\n..."), ("python -m checker y", 0, "")]


def test_guide_verifies_explore_and_prove(cli, tmp_path):
    """The guide's spec, in structured form: the planted bug is found with a trace, the proof holds for 1..8192."""
    spec = tmp_path / "folding.py"
    spec.write_text(doc_files("docs/spec-authoring.md")["folding.py"])
    r = cli("verify", str(spec), "--format", "json")
    assert r.returncode == 0, r.stdout + r.stderr
    checks = json.loads(r.stdout)["checks"]
    bug = [c for c in checks if c["spec"] == "fold_at_batch_plus_one" and c["property"] == "read_error_bounded"]
    assert bug and all(c["verdict"] == "violated" and c["trace"] for c in bug)
    proved = [c for c in checks if c["spec"] == "proved_folding_counter" and c["kind"] == "proof"]
    assert {c["property"] for c in proved} >= {"local_in_range", "nothing_lost", "read_error_bounded"}
    assert all(c["verdict"] == "holds" and c["params"]["ncpus"] == "1..8192" for c in proved)
