# SPDX-License-Identifier: GPL-2.0-only
"""The docs: the site builds with no warning (mkdocs --strict: broken links and anchors are errors), every
page is in its nav, README's links resolve and its flags table lists every flag of verify, and the spec
catalogue names every built-in spec."""
import contextlib
import importlib.util
import inspect
import io
import re
import subprocess
import sys

import pytest

from conftest import ROOT

LINK = re.compile(r"\]\(([^)#\s]+)(?:#[^)]*)?\)")


def _nav_pages(nav) -> list[str]:
    out = []
    for entry in nav:
        for value in entry.values() if isinstance(entry, dict) else [entry]:
            out += _nav_pages(value) if isinstance(value, list) else [value]
    return out


def test_the_site_builds_with_no_warnings(tmp_path):
    if importlib.util.find_spec("mkdocs") is None or importlib.util.find_spec("mkdocstrings") is None:
        pytest.skip("mkdocs and mkdocstrings are the docs extra: pip install '.[docs]'")
    r = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(ROOT / "mkdocs.yml"),
                        "-d", str(tmp_path / "site")], capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "WARNING" not in r.stderr, r.stderr
    # the API reference has an entry (an anchor) for every function and class checker exports
    import checker

    anchors = set(re.findall(r'id="([\w.]+)"', (tmp_path / "site" / "api" / "index.html").read_text()))
    exported = [n for n in checker.__all__ if inspect.isfunction(getattr(checker, n))
                or inspect.isclass(getattr(checker, n))]
    assert len(exported) > 60
    assert [n for n in exported if not any(a.endswith("." + n) for a in anchors)] == []


def test_every_page_is_in_the_nav_and_every_nav_entry_is_a_page():
    yaml = pytest.importorskip("yaml", reason="PyYAML comes with the docs extra: pip install '.[docs]'")
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text().replace("!!python", "python"))
    pages = _nav_pages(config["nav"])
    assert sorted(pages) == sorted(p.name for p in (ROOT / "docs").glob("*.md"))


def test_readme_links_resolve():
    """The Markdown outside docs/ (mkdocs checks the links of docs/ itself)."""
    broken, count = [], 0
    for page in (ROOT / "README.md", ROOT / "examples" / "README.md"):
        for target in LINK.findall(page.read_text()):
            if "://" not in target:
                count += 1
                if not (page.parent / target).exists():
                    broken.append(f"{page.relative_to(ROOT)}: {target}")
    assert count > 10 and broken == []


def test_readme_flags_table_lists_every_flag_of_verify():
    from checker.cli import build_parser

    shown = io.StringIO()
    with contextlib.redirect_stdout(shown), pytest.raises(SystemExit):
        build_parser().parse_args(["verify", "--help"])
    flags = set(re.findall(r"(?<![\w-])--[a-z][a-z-]*", shown.getvalue())) - {"--help"}
    assert len(flags) > 20
    text = (ROOT / "README.md").read_text()
    table = text[text.index("## verify's flags"):text.index("## The other commands")]
    assert sorted(f for f in flags if f"`{f}" not in table) == []


def test_the_catalogue_names_every_built_in_spec():
    from checker import loader

    text = (ROOT / "docs" / "specs.md").read_text()
    assert sorted(n for n in loader.builtin_specs() if f"`{n}`" not in text) == []


def test_the_guide_opens_with_a_contents_list_of_its_sections_in_order():
    text = (ROOT / "docs" / "spec-authoring.md").read_text()
    body = re.sub(r"```.*?```", "", text, flags=re.S)
    sections = re.findall(r"^## (.+)$", body, re.M)
    contents = text[text.index("Contents:"):text.index("\n## ")]
    assert re.findall(r"^- \[(.+?)\]\(#", contents, re.M) == sections
