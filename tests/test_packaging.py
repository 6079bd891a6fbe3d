# SPDX-License-Identifier: GPL-2.0-only
"""The package layout: the language under its own name, the built-in specs and models without links;
the sdist (the tracked source tree, tests included) and the wheel (specs, models and the kernel's
litmus tests as package data), built and installed as a user would."""
import os
import subprocess
import sys
import tarfile
import tomllib
import zipfile
from pathlib import Path

import pytest

from conftest import ROOT

#: Data packages: folders installed inside the package that hold no Python (pyproject's package-dir).
DATA = (("checker.litmus.kernel", "tests/litmus"),)


def tracked_files() -> list[str]:
    """git's list of this checkout's files (an unpacked sdist has no .git: the tests that need it skip)."""
    if not (ROOT / ".git").exists():
        pytest.skip("not a git checkout (an unpacked sdist?): the tracked files are git's list")
    return subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout.split()


def _packages_on_disk() -> set[str]:
    names = {"checker." + ".".join(p.parent.relative_to(ROOT / "checker").parts) if p.parent != ROOT / "checker"
             else "checker" for p in (ROOT / "checker").rglob("__init__.py") if "__pycache__" not in p.parts}
    for mapped, folder in (("checker.specs", "specs"), ("checker.models", "models")):
        names |= {".".join([mapped, *p.parent.relative_to(ROOT / folder).parts])
                  for p in (ROOT / folder).rglob("__init__.py") if "__pycache__" not in p.parts}
    for mapped, folder in DATA:
        names |= {".".join([mapped, *p.relative_to(ROOT / folder).parts])
                  for p in [ROOT / folder, *(ROOT / folder).rglob("*")] if p.is_dir() and "__pycache__" not in p.parts}
    return names


def test_pyproject_lists_every_package_and_maps_the_top_level_folders():
    tool = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    assert set(tool["packages"]) == _packages_on_disk()
    assert tool["package-dir"] == {"checker.specs": "specs", "checker.models": "models", **dict(DATA)}


def test_no_symbolic_links_in_the_tree():
    tracked_files()  # a git checkout
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
    tracked = tracked_files()
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


def _setuptools_builds() -> bool:
    try:
        import setuptools
    except ImportError:
        return False
    return tuple(int(x) for x in setuptools.__version__.split(".")[:2]) >= (77, 0)


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """The sdist built from the tracked files, and the wheel built from the unpacked sdist (as
    ``python -m build`` does), with no build isolation: no network."""
    if not _setuptools_builds():
        pytest.skip("building needs setuptools>=77 (pyproject's build-system): pip install '.[test]' brings it")
    top = tmp_path_factory.mktemp("build")
    src, dist = top / "src", top / "dist"
    for name in tracked_files():
        (src / name).parent.mkdir(parents=True, exist_ok=True)
        (src / name).write_bytes((ROOT / name).read_bytes())
    hooks = "from setuptools import build_meta as b; import sys; print(getattr(b, sys.argv[1])(sys.argv[2]))"
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    r = subprocess.run([sys.executable, "-c", hooks, "build_sdist", str(dist)], cwd=src, capture_output=True,
                       text=True, env=env, timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    sdist = dist / r.stdout.split()[-1]
    with tarfile.open(sdist) as t:
        t.extractall(top / "unpacked", filter="data") if sys.version_info >= (3, 12) else t.extractall(top / "unpacked")
    unpacked = next((top / "unpacked").iterdir())
    r = subprocess.run([sys.executable, "-c", hooks, "build_wheel", str(dist)], cwd=unpacked, capture_output=True,
                       text=True, env=env, timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    return sdist, dist / r.stdout.split()[-1]


def test_the_sdist_is_the_tracked_tree_with_the_tests_fixtures_and_conftest(built):
    sdist, _ = built
    with tarfile.open(sdist) as t:
        names = {n.split("/", 1)[1] for n in t.getnames() if "/" in n}
    missing = set(tracked_files()) - {".gitignore"} - names
    assert missing == set()
    assert {"tests/conftest.py", "tests/fixtures/README.md", "tests/litmus/CoWW+poonceonce.litmus"} <= names


def test_the_wheel_installs_the_specs_models_and_the_kernels_litmus_tests(built):
    _, wheel = built
    names = set(zipfile.ZipFile(wheel).namelist())
    kept = {str(p.relative_to(ROOT / "tests" / "litmus")) for p in (ROOT / "tests" / "litmus").rglob("*.litmus")}
    assert len(kept) == 47
    assert {n.removeprefix("checker/litmus/kernel/") for n in names if n.endswith(".litmus")} == kept
    assert {"checker/specs/percpu_up.py", "checker/specs/bugs/__init__.py", "checker/models/eager.py",
            "checker/litmus/kernel/README.md", "checker/litmus/kernel/documentation/README.md"} <= names
    assert not [n for n in names if n.startswith(("tests/", "specs/", "models/"))]  # no top-level names


@pytest.mark.differential
def test_the_installed_wheel_runs_litmus_and_verify_outside_a_checkout(built, tmp_path):
    """A venv (system site-packages for z3 and networkx: no network), the wheel installed over any
    other copy, run from a folder that is not a checkout: `litmus` with no argument finds the
    installed tests, `verify` a built-in spec."""
    _, wheel = built
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(venv)], check=True, timeout=300)
    py = venv / "bin" / "python"
    r = subprocess.run([py, "-m", "pip", "install", "--quiet", "--no-deps", "--no-index", "--ignore-installed",
                        str(wheel)], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    where = subprocess.run([py, "-c", "import checker; print(checker.__file__)"], cwd=elsewhere, env=env,
                           capture_output=True, text=True, timeout=120)
    assert where.stdout.startswith(str(venv)), where.stdout + where.stderr
    lit = subprocess.run([venv / "bin" / "countercheck-kernel", "litmus", "--memory", "sc"], cwd=elsewhere,
                         env=env, capture_output=True, text=True, timeout=300)
    assert lit.returncode == 0 and "(47 tests)" in lit.stdout, lit.stdout + lit.stderr
    ver = subprocess.run([py, "-m", "checker", "verify", "percpu_up", "--mode", "explore"], cwd=elsewhere,
                         env=env, capture_output=True, text=True, timeout=300)
    assert ver.returncode == 0 and "0 not as expected" in ver.stdout, ver.stdout + ver.stderr
