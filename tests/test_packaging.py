# SPDX-License-Identifier: GPL-2.0-only
"""The package layout: the language under its own name, the built-in specs and models without links."""
import subprocess
import sys
import tomllib
from pathlib import Path

from conftest import ROOT


def _packages_on_disk() -> set[str]:
    names = {"checker." + ".".join(p.parent.relative_to(ROOT / "checker").parts) if p.parent != ROOT / "checker"
             else "checker" for p in (ROOT / "checker").rglob("__init__.py") if "__pycache__" not in p.parts}
    for mapped, folder in (("checker.specs", "specs"), ("checker.models", "models")):
        names |= {".".join([mapped, *p.parent.relative_to(ROOT / folder).parts])
                  for p in (ROOT / folder).rglob("__init__.py") if "__pycache__" not in p.parts}
    return names


def test_pyproject_lists_every_package_and_maps_the_top_level_folders():
    tool = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    assert set(tool["packages"]) == _packages_on_disk()
    assert tool["package-dir"] == {"checker.specs": "specs", "checker.models": "models"}


def test_no_symbolic_links_in_the_tree():
    tracked = subprocess.run(["git", "ls-files", "-s"], cwd=ROOT, capture_output=True, text=True).stdout
    assert not [line for line in tracked.splitlines() if line.startswith("120000")]


def test_builtin_specs_and_models_import_from_the_checkout():
    import checker.models.eager as eager
    import checker.specs.percpu_eager as spec

    assert Path(spec.__file__).parent == ROOT / "specs" and Path(eager.__file__).parent == ROOT / "models"


def test_checker_spec_is_a_deprecated_alias_of_the_same_modules():
    code = ("import warnings; warnings.simplefilter('always')\n"
            "with warnings.catch_warnings(record=True) as w:\n"
            "    import checker.spec.model as old, checker.spec.declare\n"
            "    from checker.spec.model import Spec\n"
            "import checker.language.model as new, checker\n"
            "print(old is new, Spec is checker.Spec, old.__spec__.name,\n"
            "      [str(x.message).split(':')[0] for x in w if x.category is DeprecationWarning])")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert r.stdout.split("\n")[0] == "True True checker.language.model ['checker.spec is deprecated']", r.stderr


def test_every_source_file_starts_with_its_spdx_line():
    """GPL-2.0-only, the kernel's licence: the first line (after a shebang) of every tracked source file."""
    tracked = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True).stdout.split()
    sources = [f for f in tracked if f.endswith((".py", ".c")) or f in (".ci/run", "pyproject.toml")]
    assert len(sources) > 200
    missing = []
    for name in sources:
        lines = (ROOT / name).read_text().splitlines()[:2]
        head = lines[1] if lines and lines[0].startswith("#!") else lines[0] if lines else ""
        if head not in ("# SPDX-License-Identifier: GPL-2.0-only", "// SPDX-License-Identifier: GPL-2.0-only"):
            missing.append(name)
    assert missing == []
    assert (ROOT / "LICENSE").read_text().lstrip().startswith("GNU GENERAL PUBLIC LICENSE")


def test_the_generated_starter_spec_carries_the_spdx_line():
    from checker.scaffold import TEMPLATE
    assert TEMPLATE.startswith("# SPDX-License-Identifier: GPL-2.0-only\n")
