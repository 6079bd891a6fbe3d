# SPDX-License-Identifier: GPL-2.0-only
"""The Z3 engines' results, kept between runs: a second ``verify`` of an unchanged spec proves nothing again.

A proof is a function of the spec's code, the checker's code, Z3's version and the request (the point or
the values set, the per-query timeout, the BMC depth): the cache key is a digest of all of them
(``binding``). The spec's code is the file of every class it derives from and, transitively, of every
module those files use that is neither the standard library, Z3 nor the checker (whose own digest,
``persist.checker_digest``, covers all of its sources): a helper module edited is another key.

The entries go through ``checker.persist``'s trust rule (the user's private directory, a framed file
whose header binds it to the key, data only, never pickle): an entry that fails it is deleted and the
proof runs. Only results that decided everything are kept: an inconclusive check (a Z3 timeout or
``unknown``) may be decided on a less loaded machine, so it is proved again next time. Nothing is kept
when the run writes SMT files (``--emit-smt``: the files are the point) or runs on Ray.

A check read back says so in the JSON report (``"cached": true``); its seconds are the proof's. The
cache lives beside the build cache (``$XDG_CACHE_HOME/countercheck/proofs``); ``COUNTERCHECK_PROOF_CACHE=off``
turns it off (the test suite does: its tests replace solver functions in-process, which no digest
of files can see).
"""
from __future__ import annotations

import dataclasses
import os
from pathlib import Path
from typing import Any, Callable

import checker.persist as persist
from checker.result import Check, ShownStep, Step, Store

ENV = "COUNTERCHECK_PROOF_CACHE"
#: The kind of the framed files (``persist.read_framed``); a format change gives a new kind.
KIND = "proofs-1"


def enabled() -> bool:
    """Whether results are kept and read back (``$COUNTERCHECK_PROOF_CACHE`` is not off, 0, no or false)."""
    return os.environ.get(ENV, "").strip().lower() not in ("off", "0", "no", "false")


def cache_dir() -> Path:
    """``$XDG_CACHE_HOME/countercheck/proofs`` (or ``~/.cache``), made private; OSError or ``persist.Refused``
    when it cannot be."""
    return persist.user_cache("proofs")


def spec_files(cls: type) -> list[str]:
    """The source files a spec's behaviour can depend on (``persist.code_files``)."""
    return list(persist.code_files(cls))


def binding(engine: str, cls: type, request_key: Any) -> str:
    """The key of a result: the engine, the spec (its name and code), the checker, Z3 and the request."""
    import z3

    return persist.digest(KIND, engine, f"{cls.__module__}.{cls.__qualname__}", getattr(cls, "spec_name", ""),
                          persist.checker_digest(), persist.files_digest(spec_files(cls)), z3.get_version_string(),
                          request_key)


# -- checks as data ---------------------------------------------------------------------------------
def _fields(cls: type) -> tuple[str, ...]:
    return tuple(f.name for f in dataclasses.fields(cls))


def _plain(obj: Any) -> dict[str, Any]:
    return {k: getattr(obj, k) for k in _fields(type(obj))}


def check_data(c: Check) -> dict[str, Any]:
    """A check as data (``persist.encode`` stores it): its fields, its steps' and shown steps' fields."""
    d = _plain(c)
    d["trace"] = [_plain(s) for s in c.trace]
    d["trace_shown"] = [x if isinstance(x, str) else {**_plain(x), "stores": [_plain(s) for s in x.stores]}
                        for x in c.trace_shown]
    return d


def _build(cls: type, d: Any) -> Any:
    if not isinstance(d, dict) or set(d) != set(_fields(cls)):
        raise ValueError(f"a {cls.__name__} with other fields")
    return cls(**d)


def check_from_data(d: Any) -> Check:
    """``check_data``'s inverse; ValueError for anything else."""
    if not isinstance(d, dict) or not isinstance(d.get("trace"), list) or not isinstance(d.get("trace_shown"), list):
        raise ValueError("not a check")
    shown: list = []
    for x in d["trace_shown"]:
        if isinstance(x, str):
            shown.append(x)
            continue
        if not isinstance(x, dict) or not isinstance(x.get("stores"), (list, tuple)):
            raise ValueError("not a shown step")
        shown.append(_build(ShownStep, {**x, "stores": tuple(_build(Store, s) for s in x["stores"])}))
    c = _build(Check, {**d, "trace": [_build(Step, s) for s in d["trace"]], "trace_shown": shown})
    if not (isinstance(c.spec, str) and isinstance(c.property, str) and isinstance(c.verdict, str)
            and isinstance(c.params, dict) and isinstance(c.extra, dict)):
        raise ValueError("a check's fields of the wrong types")
    return c


# -- the cache --------------------------------------------------------------------------------------
def cached_run(engine: str, cls: type, request_key: Any, run: int, warn: Callable[[str], None] | None,
               compute: Callable[[Callable[[str], None] | None], list[Check]]) -> list[Check]:
    """``compute(warn)``'s checks, read back from the cache when an entry for this key passes the trust
    rule (its warnings told to ``warn`` again, its checks renumbered to ``run``), else computed and kept
    when every check was decided."""
    if not enabled():
        return compute(warn)
    key = path = None
    try:
        key = binding(engine, cls, request_key)
        path = cache_dir() / key
        payload = persist.read_data(path, KIND, key)
        if not (isinstance(payload, dict) and isinstance(payload.get("checks"), list)
                and isinstance(payload.get("warnings"), list)
                and all(isinstance(w, str) for w in payload["warnings"])):
            raise ValueError("malformed")
        checks = [check_from_data(d) for d in payload["checks"]]
    except FileNotFoundError:
        checks = None
    except (OSError, ValueError, TypeError, persist.Refused):
        checks = None
        if path is not None and isinstance(path, Path):
            try:  # damaged, of another format or not ours: proved again (and replaced)
                os.unlink(path)
            except OSError:
                pass
    if checks is not None:
        for w in payload["warnings"]:
            if warn is not None:
                warn(w)
        for c in checks:
            c.run = run
            c.extra["cached"] = True
        return checks
    said: list[str] = []

    def told(text: str) -> None:
        said.append(text)
        if warn is not None:
            warn(text)

    checks = compute(told)
    if key is None or path is None or any(c.verdict == "inconclusive" for c in checks):
        return checks
    try:
        blob = persist.encode({"checks": [check_data(c) for c in checks], "warnings": said})
        if [check_from_data(d) for d in persist.decode(blob)["checks"]] != checks:
            return checks  # something in a check does not survive being stored (a value of another type)
        persist.write_framed(path, KIND, key, blob)  # (what was checked is what is written)
    except (OSError, ValueError, TypeError):
        pass  # a full disk or an unstorable value: the result stands, it is not kept
    return checks
