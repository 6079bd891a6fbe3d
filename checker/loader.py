# SPDX-License-Identifier: GPL-2.0-only
"""Finding specs: built-in names, spec files, ``file.py:ClassName``."""
from __future__ import annotations

import difflib
import errno
import hashlib
import importlib
import importlib.util
import os
import pkgutil
import stat
import sys
from pathlib import Path

import checker.interrupts as interrupts
from checker.errors import CheckerError, SpecError, UsageError, innermost_frame_in
from checker.language.model import iter_specs
from checker.language.usercode import as_spec_error

BUILTIN_PACKAGE = "checker.specs"


def builtin_specs() -> dict[str, type]:
    """Every built-in spec by name, correct specs first, then ``bugs/``."""
    pkg = importlib.import_module(BUILTIN_PACKAGE)
    found: dict[str, type] = {}
    mods = sorted(pkgutil.walk_packages(pkg.__path__, BUILTIN_PACKAGE + "."),
                  key=lambda m: (m.name.count("."), m.name))
    for m in mods:
        if m.ispkg:
            continue
        try:
            mod = importlib.import_module(m.name)
        except CheckerError:
            raise
        except Exception as e:  # a spec under specs/ being written: its file and line, not a traceback
            files = {str(f) for d in pkg.__path__ for f in Path(d).rglob("*.py")}
            file, line = innermost_frame_in(e.__traceback__, files)
            raise SpecError(f"importing the built-in spec module {m.name} raised {type(e).__name__}: {e}",
                            file=file, line=line) from None
        for cls in iter_specs(mod):
            found.setdefault(cls.spec_name, cls)
    return found


def named_builtin(name: str) -> type | None:
    """The built-in spec ``name`` from the one module named for it (``specs/NAME.py``, else
    ``specs/bugs/NAME.py``, the order ``builtin_specs`` finds them in), or None: then only the whole scan
    can say (a spec in a module named otherwise, such as a deep sweep beside its spec, or no such spec).
    Importing every built-in takes a second or two; a run that names one spec need not pay for the rest."""
    if not name.isidentifier():
        return None
    for module in (f"{BUILTIN_PACKAGE}.{name}", f"{BUILTIN_PACKAGE}.bugs.{name}"):
        try:
            if importlib.util.find_spec(module) is None:
                continue
        except ModuleNotFoundError:  # (no such package)
            continue
        try:
            mod = importlib.import_module(module)
        except CheckerError:
            raise
        except Exception:  # the whole scan says which file and line
            return None
        match = [c for c in iter_specs(mod) if c.spec_name == name]
        if match:
            return match[0]
    return None


def load_file(path: str) -> list[type]:
    """Import a spec file by path and return the specs it defines."""
    specs = specs_in_file(path)
    if not specs:
        raise SpecError("defines no spec (a subclass of checker.Spec)", file=str(Path(path)))
    return specs


#: Spec files imported in this process, by resolved path and content: a file named twice (or resolved
#: again to name its specs) is imported once, so its top-level code runs once.
_imported: dict[tuple[str, bytes], list[type]] = {}


def specs_in_file(path: str) -> list[type]:
    """Import a Python file by path and return the specs it defines, none if it defines none."""
    p = Path(path)
    what = not_a_file(path)
    if what:
        raise UsageError(f"{path}: {what}; give a spec file (FILE.py) or a built-in spec name")
    try:
        key = (str(p.resolve()), hashlib.sha256(p.read_bytes()).digest())
    except OSError as e:
        raise UsageError(f"cannot read the spec file {path}: {e.strerror}") from None
    if key in _imported:
        return list(_imported[key])
    modname = "countercheck_user_" + "".join(ch if ch.isalnum() else "_" for ch in str(p.resolve()))
    spec = importlib.util.spec_from_file_location(modname, p)
    if spec is None or spec.loader is None:
        raise UsageError(f"{path}: not a Python file")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[modname] = mod
    sys.path.insert(0, str(p.parent.resolve()))
    try:
        spec.loader.exec_module(mod)
    except CheckerError:
        raise
    except SyntaxError as e:
        raise SpecError(f"syntax error: {e.msg}", file=str(p), line=e.lineno) from None
    except SystemExit as e:  # never a silent exit 0: importing a spec file must define specs, not end the run
        file, line = innermost_frame_in(e.__traceback__, {str(p)})
        raise SpecError(f"importing the spec called sys.exit({e.code!r}); a spec file only defines specs "
                        f"(move script code under `if __name__ == \"__main__\":`)", file=file or str(p),
                        line=line) from None
    except Exception as e:
        file, line = innermost_frame_in(e.__traceback__, {str(p)})
        raise SpecError(f"importing the spec raised {type(e).__name__}: {e}", file=file or str(p),
                        line=line) from None
    except BaseException as e:  # GeneratorExit, a KeyboardInterrupt no signal raised: the spec's, not the run's
        if isinstance(e, KeyboardInterrupt) and interrupts.pending():
            raise
        raise as_spec_error(e, f"importing {path}", {str(p)}, file=str(p)) from None
    finally:
        sys.path.remove(str(p.parent.resolve()))
    _imported[key] = list(iter_specs(mod))
    return list(_imported[key])


def not_a_file(path: str) -> str | None:
    """Why ``path`` cannot be read as a spec file (what it is instead), or None for a regular file.
    Never opens it: a FIFO would block."""
    try:
        st = os.stat(path)
    except OSError as e:
        if e.errno == errno.ELOOP:
            return "is a symlink loop"
        if os.path.islink(path):
            return f"is a symlink to {os.readlink(path)!r}, which does not exist"
        if e.errno == errno.ENOENT:
            return "no such file"
        return f"cannot be read ({e.strerror})"
    for test, what in ((stat.S_ISDIR, "is a directory"), (stat.S_ISFIFO, "is a FIFO (a named pipe)"),
                       (stat.S_ISSOCK, "is a socket"), (stat.S_ISCHR, "is a character device"),
                       (stat.S_ISBLK, "is a block device")):
        if test(st.st_mode):
            return what
    return None if stat.S_ISREG(st.st_mode) else "is not a regular file"


def resolve(names: list[str]) -> list[type]:
    """Spec classes for command-line names; all built-ins when none are given."""
    # A name ending in .py (FILE.py, FILE.py:Class) is a file, never a built-in spec: importing every
    # built-in (most of a second) is left to the names that may be one.
    # A built-in named by its module is imported alone (``named_builtin``).
    quick = {n: c for n in names if not os.path.lexists(n) and (c := named_builtin(n)) is not None}
    maybe_builtin = not names or any(not n.partition(":")[0].endswith(".py") and n not in quick for n in names)
    builtins = builtin_specs() if maybe_builtin else {}
    if not names:  # every built-in spec but the deep sweeps, which run when named
        return [c for c in builtins.values() if not c.on_demand]
    out: list[type] = []
    for name in names:
        if name in quick or name in builtins:
            out.append(quick.get(name) or builtins[name])
            continue
        path, _, cls_name = name.partition(":") if not os.path.lexists(name) else (name, "", "")
        if path.endswith(".py") or os.path.lexists(path):
            specs = load_file(path)
            if cls_name:
                match = [c for c in specs if c.__name__ == cls_name or c.spec_name == cls_name]
                if not match:
                    raise UsageError(f"{path} has no spec {cls_name!r}; it defines: "
                                     f"{', '.join(c.__name__ for c in specs)}")
                specs = match
            out.extend(specs)
            continue
        close = difflib.get_close_matches(name, list(builtins), n=3, cutoff=0.6)
        hint = (f"did you mean {' or '.join(close)}?" if close else
                "`list` shows the built-in specs")
        raise UsageError(f"no spec {name!r}: {hint} (or give a path to a spec file, optionally as "
                         f"FILE.py:ClassName)")
    return list(dict.fromkeys(out))  # a spec named twice (two names of one file) is checked once


def input_files(names: list[str]) -> list[str]:
    """The spec files among command-line spec names (``FILE.py:Class`` names its file)."""
    out = []
    for name in names:
        path = name if os.path.lexists(name) else name.partition(":")[0]
        if os.path.lexists(path):
            out.append(path)
    return out
