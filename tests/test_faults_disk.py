# SPDX-License-Identifier: GPL-2.0-only
"""Issue 25, what is read back from disk and how long processes live: nothing read back is trusted
(``checker.persist``). A checkpoint of an edited spec, a planted or damaged program, a hostile or
damaged checkpoint file never becomes a verdict: it is refused (exit 2, one line naming what to
delete) or rebuilt; an unusable build cache falls back, saying so; workers die with the coordinator.

Families (cases, 46): checkpoint binding 5 (edited spec, another --set, another checker, other --jobs,
the level resumed from); checkpoint damage 13 (truncated, empty, bit flips in data and header, wrong
type with a right checksum, world-writable, a directory or a symlink in its place, another owner, a
worker's file, through the CLI, a full disk while saving, a planted pickle); cache trust 3; unusable
cache 4 (a file in the way, read-only, no home, full disk); damaged cache entry 5; compile failure 1;
search output 4; out of memory 4; process lifetimes 5; Hypothesis random damage 2 (25 checkpoint and 6
cache examples).
"""
from __future__ import annotations

import json
import os
import pickle
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import ROOT, run_cli
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from checker import loader, persist
from checker.compiled import build as cbuild
from checker.compiled import engine as cengine
from checker.compiled.run import SearchFailed
from checker.errors import CheckerError, UsageError
from checker.explore import checkpoint, explore
from checker.language.compile import Model
from checker.verify import own_sets, param_points, parse_set

SPEC = '''\
from checker import Param, PerCpu, Role, Shared, Spec, Sum, action, invariant, sometimes, terminal, when


class Tiny(Spec):
    """A per-CPU counter that folds into a shared total once it reaches 2; a test spec."""

    kernel = "a test spec"
    ncpus = Param(2, domain=range(1, 5), explore=(2,))
    cpus = Role("ncpus", symmetric=True)
    total = Shared(0)
    local = PerCpu(0)
    adds = PerCpu({adds})

    @action(role="cpus")
    def add(s, cpu):
        c = s.local[cpu] + 1
        return when(s.adds[cpu] > 0, adds={{cpu: s.adds[cpu] - 1}}, local={{cpu: c % 2}},
                    total=s.total + (c // 2) * 2)

    @terminal
    def done(s):
        return Sum(s.adds) == 0

    @invariant
    def nothing_lost(s):
        return {invariant}

    @sometimes
    def a_fold_happens(s):
        return s.total > 0
'''
GOOD = "s.total + Sum(s.local) == {adds} * s.ncpus - Sum(s.adds)"
BAD = "s.total < 2"  # fails after two steps on one CPU


def write_spec(path: Path, invariant: str = GOOD, adds: int = 3) -> str:
    path.write_text(SPEC.format(invariant=invariant.format(adds=adds), adds=adds))
    return str(path)


def model_of(path: str) -> Model:
    cls = loader.load_file(path)[0]
    return Model(cls, param_points(cls, own_sets(cls, parse_set([])), "explore")[0])


def summary(r) -> tuple:
    return (r.states, r.transitions, r.depth, r.complete,
            {n: (o.verdict, o.trace) for n, o in r.outcomes.items()})


def one_line_error(r: subprocess.CompletedProcess, code: int = 2) -> str:
    assert r.returncode == code, r.stdout + r.stderr
    assert "Traceback" not in r.stderr + r.stdout
    lines = [ln for ln in r.stderr.splitlines() if ln.startswith("error")]
    assert len(lines) == 1, r.stderr
    return lines[0]


# -- checkpoints: bound to what produced them ----------------------------------------------------------

def test_resume_after_editing_the_spec_is_refused_not_a_false_pass(tmp_path):
    """Issue 25 item 1: the old checkpoint's levels were reused and the broken invariant 'held'."""
    spec = write_spec(tmp_path / "tiny.py")
    ck = tmp_path / "ck"
    r = run_cli("verify", spec, "--mode", "explore", "--checkpoint", str(ck))
    assert r.returncode == 0, r.stderr
    write_spec(tmp_path / "tiny.py", BAD)
    r = run_cli("verify", spec, "--mode", "explore", "--resume", str(ck))
    line = one_line_error(r)
    assert "the spec's source (or a module it imports) changed since" in line
    assert f"delete {ck}/tiny-" in line and "nothing_lost" not in r.stdout


def test_resume_names_the_level_it_continued_from(tmp_path):
    spec = write_spec(tmp_path / "tiny.py")
    explore(model_of(spec), checkpoint=tmp_path / "ck", max_states=5)
    r = explore(model_of(spec), checkpoint=tmp_path / "ck", resume=True)
    assert r.engine_note.startswith("resumed from level ") and str(tmp_path / "ck") in r.engine_note
    assert summary(r) == summary(explore(model_of(spec)))


def test_resume_with_another_set_is_refused(tmp_path, capsys):
    from checker.cli import main

    spec = write_spec(tmp_path / "tiny.py")
    ck = str(tmp_path / "ck")
    assert main(["verify", spec, "--mode", "explore", "--checkpoint", ck, "--set", "ncpus=2"]) == 0
    capsys.readouterr()
    code = main(["verify", spec, "--mode", "explore", "--resume", ck, "--set", "ncpus=3"])
    err = capsys.readouterr().err
    assert code == 2 and "--set ncpus=2 there, --set ncpus=3 here" in err and "Traceback" not in err


@pytest.mark.parametrize("field,value", [("jobs", 3), ("checker", "another")])
def test_a_checkpoint_of_another_checker_or_jobs_is_refused(tmp_path, monkeypatch, field, value):
    spec = write_spec(tmp_path / "tiny.py")
    explore(model_of(spec), checkpoint=tmp_path, max_states=5)
    if field == "checker":
        monkeypatch.setattr(persist, "checker_digest", lambda: value)
        with pytest.raises(UsageError, match="the checker itself changed since.*delete"):
            explore(model_of(spec), checkpoint=tmp_path, resume=True)
    else:
        with pytest.raises(UsageError, match="jobs=1 there, 3 here"):
            explore(model_of(spec), jobs=3, checkpoint=tmp_path, resume=True)


# -- checkpoints: damaged, foreign, hostile --------------------------------------------------------------

@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    """A checkpoint of the tiny spec cut after a few levels, and the uninterrupted result."""
    d = tmp_path_factory.mktemp("saved")
    spec = write_spec(d / "tiny.py")
    explore(model_of(spec), checkpoint=d / "ck", max_states=9)
    return spec, d / "ck", summary(explore(model_of(spec)))


def _copy(saved, tmp_path) -> tuple[str, Path, list[Path]]:
    spec, ck, _ = saved
    root = tmp_path / "ck"
    shutil.copytree(ck, root)
    files = sorted(p for p in root.rglob("*") if p.is_file() and p.name != checkpoint.RUN)
    return spec, root, files


def _flip(data: bytes, at: int) -> bytes:
    return data[:at] + bytes([data[at] ^ 0x10]) + data[at + 1:]


DAMAGE = {
    "truncated": lambda p: p.write_bytes(p.read_bytes()[:-7]),
    "empty": lambda p: p.write_bytes(b""),
    "bit flip in the data": lambda p: p.write_bytes(_flip(p.read_bytes(), len(p.read_bytes()) - 3)),
    "bit flip in the header": lambda p: p.write_bytes(_flip(p.read_bytes(), 3)),
    "wrong type, right checksum": lambda p: persist.write_framed(
        p, p.read_bytes().split(b" ")[1].decode(), json.loads(p.read_bytes().split(b"\n")[1])["binding"],
        b'{"L":[1,"two",null]}'),
    "world-writable": lambda p: p.chmod(0o666),
    "a directory in its place": lambda p: (p.unlink(), p.mkdir()),
    "a symbolic link": lambda p: (p.rename(p.with_name("elsewhere")), p.symlink_to(p.with_name("elsewhere"))),
}


@pytest.mark.parametrize("how", list(DAMAGE))
def test_a_damaged_checkpoint_file_is_exit_2_naming_what_to_delete(saved, tmp_path, how):
    spec, root, files = _copy(saved, tmp_path)
    target = max((p for p in files if p.name == checkpoint.COORDINATOR), key=lambda p: p.parent.name)
    DAMAGE[how](target)  # the last level's counters: read first
    with pytest.raises(UsageError) as e:
        explore(model_of(spec), checkpoint=root, resume=True)
    assert "\n" not in e.value.message and f"delete {target.parent}" in e.value.message


def test_a_checkpoint_file_of_another_user_is_refused(saved, tmp_path, monkeypatch):
    spec, root, _ = _copy(saved, tmp_path)
    monkeypatch.setattr(persist, "_uid", lambda: 4242)  # as root, every file would be ours
    with pytest.raises(UsageError, match="owned by uid 0, not by the user running the checker|is owned by uid"):
        explore(model_of(spec), checkpoint=root, resume=True)


def test_a_damaged_worker_file_is_refused(saved, tmp_path):
    spec, root, files = _copy(saved, tmp_path)
    target = next(p for p in files if p.name.startswith("worker-") and p.parent.name.endswith("000000"))
    DAMAGE["truncated"](target)
    with pytest.raises(UsageError, match=f"delete {target.parent}"):
        explore(model_of(spec), checkpoint=root, resume=True)


def test_a_planted_pickle_never_runs(saved, tmp_path):
    """Issue 25 item 5: a crafted coordinator.pickle ran a shell command on --resume."""
    spec, root, files = _copy(saved, tmp_path)
    pwned = tmp_path / "pwned"

    class Payload:
        def __reduce__(self):
            return (os.system, (f"touch {pwned}",))

    for p in files:  # every file the checkpoint reads, under its own name and the old one
        if p.name != checkpoint.META:
            p.write_bytes(pickle.dumps(Payload()))
            p.with_suffix(".pickle").write_bytes(pickle.dumps(Payload()))
    with pytest.raises(UsageError, match="is not a checkpoint-(level|worker) file"):
        explore(model_of(spec), checkpoint=root, resume=True)
    assert not pwned.exists()


def test_the_cli_refuses_a_damaged_checkpoint_with_one_line(saved, tmp_path):
    spec, root, files = _copy(saved, tmp_path)
    DAMAGE["bit flip in the data"](max((p for p in files if p.name == checkpoint.COORDINATOR),
                                       key=lambda p: p.parent.name))
    r = run_cli("verify", spec, "--mode", "explore", "--resume", str(root))
    assert "does not match its checksum" in one_line_error(r)


# -- the build cache: only ours, only whole --------------------------------------------------------------

@pytest.fixture
def cache(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.setattr(cengine, "_programs", {})
    monkeypatch.setattr(cbuild, "_unusable", None)
    return tmp_path / "xdg" / "countercheck" / "compiled"


def _compiled(spec: str):
    cengine._programs.clear()
    return explore(model_of(spec), engine="compiled")


def _program(cache: Path) -> Path:
    return next(p for p in cache.iterdir() if p.name.startswith("search-") and "." not in p.name)


FAKE_HOLDS = "#!/bin/sh\ncat >/dev/null\necho 'result states=1 transitions=0 depth=0 stopped=none " \
             "deadlock=-1 seconds=0 cpu=0'\necho end\n"  # one state, nothing found: 'holds', if believed


@pytest.mark.parametrize("how", ["writable by others", "ours, changed in place"])
def test_a_planted_program_never_makes_a_buggy_spec_hold(cache, tmp_path, how):
    """Issue 25 item 4: a program planted in the cache ran and its output was believed."""
    spec = write_spec(tmp_path / "bad.py", BAD)
    assert _compiled(spec).verdicts["nothing_lost"] == "violated"
    exe = _program(cache)
    exe.write_text(FAKE_HOLDS)
    exe.chmod(0o777 if how == "writable by others" else 0o700)
    r = _compiled(spec)
    assert r.engine == "compiled" and r.verdicts["nothing_lost"] == "violated"
    assert _program(cache).read_bytes() != FAKE_HOLDS.encode()  # deleted and built again


def test_a_cache_of_another_user_is_not_used(cache, tmp_path, monkeypatch):
    cache.mkdir(parents=True)
    real = persist._uid
    monkeypatch.setattr(persist, "_uid", lambda: real() + 1)
    d = cbuild.cache_dir()
    assert d != cache and oct(d.stat().st_mode & 0o777) == "0o700"
    assert cbuild.note().startswith(f"the build cache is not used ({cache.parent} is owned by uid")


@pytest.mark.parametrize("how", ["a file in the way", "read-only", "no home", "full disk"])
def test_an_unusable_cache_falls_back_saying_so(monkeypatch, tmp_path, how):
    monkeypatch.setattr(cengine, "_programs", {})
    monkeypatch.setattr(cbuild, "_unusable", None)
    spec = write_spec(tmp_path / "tiny.py")
    if how == "a file in the way":
        (tmp_path / "xdg").write_text("")
        monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    elif how == "read-only":
        monkeypatch.setenv("XDG_CACHE_HOME", "/proc/self")  # read-only even for root
    elif how == "no home":
        monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
        monkeypatch.setenv("HOME", "/nonexistent/home")
        monkeypatch.setattr(os.path, "expanduser", lambda p: p.replace("~", "/proc/nonexistent", 1))
    else:
        monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "full"))
        real = persist.write_data

        def full(path, *a, **k):
            if "full" in str(path):
                raise OSError(28, "No space left on device")
            return real(path, *a, **k)

        monkeypatch.setattr(persist, "write_data", full)
    r = explore(model_of(spec), engine="compiled")
    assert r.engine == "compiled", r.engine_note
    assert r.engine_note.startswith("the build cache is not used (") and "private temporary directory" in \
        r.engine_note
    assert summary(r) == summary(explore(model_of(spec)))


@pytest.mark.parametrize("how", ["truncated", "empty", "bit flip", "no manifest", "manifest damaged"])
def test_a_damaged_program_is_built_again_once(cache, tmp_path, how):
    spec = write_spec(tmp_path / "tiny.py")
    want = summary(_compiled(spec))
    exe = _program(cache)
    manifest = exe.with_name(exe.name + ".manifest")
    if how == "truncated":
        exe.write_bytes(exe.read_bytes()[:1000])
    elif how == "empty":
        exe.write_bytes(b"")
    elif how == "bit flip":
        exe.write_bytes(_flip(exe.read_bytes(), 4000))
    elif how == "no manifest":
        manifest.unlink()
    else:
        manifest.write_bytes(manifest.read_bytes()[:-5])
    timings = cengine.Timings()
    cengine._programs.clear()
    cengine.compiled_search(model_of(spec), symmetry=True, timings=timings)
    assert timings.compiled_now  # built again
    assert summary(_compiled(spec)) == want
    persist.check_sealed(exe, "program", exe.name[len("search-"):])  # whole again


@pytest.mark.parametrize("how", ["bit flip in the data", "truncated", "world-writable", "no manifest"])
def test_a_damaged_runtime_object_is_never_linked(cache, tmp_path, how):
    """The quick programs link one runtime object from the cache: read back, it is checked as a program is."""
    spec = write_spec(tmp_path / "bad.py", BAD)
    want = summary(_compiled(spec))
    assert want[4]["nothing_lost"][0] == "violated"
    obj = next(p for p in cache.iterdir() if p.name.startswith("runtime-") and p.name.endswith(".o"))
    if how == "no manifest":
        obj.with_name(obj.name + ".manifest").unlink()
    else:
        DAMAGE[how](obj)
    for p in cache.iterdir():  # the programs go, so that the next search links the object again
        if p.name.startswith("search-"):
            p.unlink()
    assert summary(_compiled(spec)) == want
    persist.check_sealed(obj, "runtime object", obj.name[len("runtime-"):-len(".o")])  # built again, whole


def test_a_failed_compile_says_so_and_leaves_nothing(cache, tmp_path, monkeypatch):
    silent = tmp_path / "silentcc"
    silent.write_text("#!/bin/sh\nexit 1\n")
    silent.chmod(0o755)
    monkeypatch.setenv("CC", str(silent))
    monkeypatch.delenv("COUNTERCHECK_COMPILE_FAILURE")  # (the suite's setting: see tests/conftest.py)
    r = explore(model_of(write_spec(tmp_path / "tiny.py")), engine="compiled")
    assert r.engine == "interpreted"
    assert r.engine_note.endswith("(exit status 1): it printed nothing")
    assert not [p for p in cache.iterdir()]


# -- a search's output: an internal error unless it holds together -----------------------------------

@pytest.mark.parametrize("out,why", [
    ("result states=oops\\nend", "inconsistent"),
    ("result states=0 transitions=0 depth=0 stopped=none deadlock=-1 seconds=0\\nend", "fewer than its"),
    ("garbage line\\nend", "does not parse"),
    ("result states=5 transitions=0 depth=0 stopped=none deadlock=-1 seconds=0\\nfound 0 9\\nend",
     "a path to a state it did not print"),
])
def test_a_search_output_that_does_not_hold_together_is_never_a_verdict(tmp_path, monkeypatch, out, why):
    fake = tmp_path / "search"
    fake.write_text(f"#!/bin/sh\ncat >/dev/null\nprintf '{out}\\n'\n")
    fake.chmod(0o755)
    real = cengine.prepare
    monkeypatch.setattr(cengine, "prepare", lambda m, s, t, *f: (*real(m, s, t, *f)[:2], fake))
    with pytest.raises(SearchFailed, match=why):
        explore(model_of(write_spec(tmp_path / "tiny.py")), engine="compiled")


# -- out of memory: inconclusive with the states reached ------------------------------------------------

def test_running_out_of_memory_keeps_what_was_found_and_the_count(tmp_path, monkeypatch):
    from checker.engines.explore import explore_checks

    spec = write_spec(tmp_path / "tiny.py", adds=8)
    cls = loader.load_file(spec)[0]
    model = Model(cls, param_points(cls, own_sets(cls, parse_set([])), "explore")[0])
    calls = {"n": 0}
    real = Model.successors

    def successors(self, s):
        if sys._getframe(1).f_code.co_name == "search":  # the search's own calls (lint makes some too)
            calls["n"] += 1
            if calls["n"] > 20:
                raise MemoryError
        return real(self, s)

    monkeypatch.setattr(Model, "successors", successors)
    checks = {c.property: c for c in explore_checks(cls, model.params, engine="interpreted")}
    some = checks["a_fold_happens"]
    assert some.verdict == "holds" and some.trace  # found before memory ran out: still found
    inv = checks["nothing_lost"]
    assert inv.verdict == "inconclusive" and inv.reason == "memory" and 20 < inv.states < 45


def test_out_of_memory_while_building_traces_keeps_the_count(tmp_path, monkeypatch):
    explore_pkg = sys.modules["checker.explore"]  # (``checker.explore`` is also the function's name)

    def no_memory(*_a, **_k):
        raise MemoryError

    monkeypatch.setattr(explore_pkg, "concrete_trace", no_memory)
    r = explore(model_of(write_spec(tmp_path / "tiny.py")))
    assert (r.states, r.stopped_because) == (10, "memory") and set(r.verdicts.values()) == {"inconclusive"}


def test_a_worker_out_of_memory_is_inconclusive_with_the_states_stored(tmp_path, monkeypatch):
    from checker.explore import parallel

    real = parallel._Worker.expand

    def expand(self, depth, base, cutoff):
        if depth == 3:
            raise MemoryError
        return real(self, depth, base, cutoff)

    monkeypatch.setattr(parallel._Worker, "expand", expand)  # the forked workers inherit it
    r = explore(model_of(write_spec(tmp_path / "tiny.py")), jobs=2)
    assert r.stopped_because.startswith("worker_lost: worker 0 ran out of memory at depth 3")
    assert set(r.verdicts.values()) == {"inconclusive"} and r.states > 1


def test_a_compiled_search_out_of_memory_keeps_its_count(tmp_path, monkeypatch):
    fake = tmp_path / "search"
    fake.write_text("#!/bin/sh\ncat >/dev/null\necho 'result stopped=memory states=77 transitions=90 depth=4'\n"
                    "exit 5\n")
    fake.chmod(0o755)
    real = cengine.prepare
    monkeypatch.setattr(cengine, "prepare", lambda m, s, t, *f: (*real(m, s, t, *f)[:2], fake))
    r = explore(model_of(write_spec(tmp_path / "tiny.py")), engine="compiled")
    assert (r.states, r.depth, r.stopped_because) == (77, 4, "memory")
    assert set(r.verdicts.values()) == {"inconclusive"}


# -- process lifetimes ------------------------------------------------------------------------------

def _children(pid: int) -> set[int]:
    out = set()
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            out |= {int(x) for x in (task / "children").read_text().split()}
        except OSError:
            pass
    return out


def _alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(") ")[1][0] not in "ZX"
    except (OSError, IndexError):
        return False


@pytest.mark.skipif(not Path("/proc/self/task").exists(), reason="reads /proc")
@pytest.mark.parametrize("flags", [("--jobs", "2"), ("--checkpoint", "CK")], ids=["jobs", "checkpoint"])
def test_killing_the_coordinator_kills_its_workers(tmp_path, flags):
    """Issue 25 item 11: workers stayed blocked for minutes after a kill -9 of the coordinator."""
    spec = write_spec(tmp_path / "slow.py", adds=60)
    flags = tuple(str(tmp_path / "ck") if f == "CK" else f for f in flags)
    proc = subprocess.Popen([sys.executable, "-m", "checker", "verify", spec, "--mode", "explore", "--set",
                             "ncpus=3", "--engine", "interpreted", *flags], cwd=ROOT,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        workers: set[int] = set()
        while time.monotonic() < deadline and proc.poll() is None:
            workers = _children(proc.pid)
            if len(workers) >= int(flags[1]) if flags[0] == "--jobs" else workers:
                break
            time.sleep(0.05)
        assert workers and proc.poll() is None, "the run ended before its workers could be seen"
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        end = time.monotonic() + 5
        while time.monotonic() < end and any(_alive(w) for w in workers):
            time.sleep(0.05)
        assert not [w for w in workers if _alive(w)]
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


@pytest.mark.skipif(not Path("/proc/self/task").exists(), reason="reads /proc")
def test_killing_the_coordinator_kills_a_compiled_search(tmp_path):
    spec = write_spec(tmp_path / "big.py", adds=400)
    env = dict(os.environ, XDG_CACHE_HOME=str(tmp_path / "xdg"))
    proc = subprocess.Popen([sys.executable, "-m", "checker", "verify", spec, "--mode", "explore", "--set",
                             "ncpus=4", "--engine", "compiled", "--max-memory", "200M"], cwd=ROOT, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 90
        search: list[int] = []
        while time.monotonic() < deadline and proc.poll() is None and not search:
            for c in _children(proc.pid):
                try:
                    if b"/search-" in Path(f"/proc/{c}/cmdline").read_bytes().split(b"\0")[0]:
                        search.append(c)
                except OSError:
                    pass
            time.sleep(0.05)
        assert search and proc.poll() is None, "the run ended before its search could be seen"
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        end = time.monotonic() + 5
        while time.monotonic() < end and _alive(search[0]):
            time.sleep(0.05)
        assert not _alive(search[0])
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc")
def test_an_interrupted_compile_ends_the_compiler_and_its_children(tmp_path, monkeypatch):
    pidfile = tmp_path / "pid"
    cc = tmp_path / "slowcc"
    cc.write_text(f'#!/bin/sh\n[ "$1" = --version ] && {{ echo slowcc 1; exit 0; }}\nsleep 30 &\n'
                  f'echo $! > {pidfile}\nwait\n')
    cc.chmod(0o755)
    monkeypatch.setenv("CC", str(cc))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))

    def interrupt(*_):
        raise KeyboardInterrupt

    old = signal.signal(signal.SIGALRM, interrupt)
    signal.setitimer(signal.ITIMER_REAL, 1.0)
    try:
        with pytest.raises(KeyboardInterrupt):
            cbuild.build("int main(void) { return 0; }\n")
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
    child = int(pidfile.read_text())
    end = time.monotonic() + 3
    while time.monotonic() < end and _alive(child):
        time.sleep(0.02)
    assert not _alive(child)  # the compiler's own child, not only the compiler
    assert not list((tmp_path / "xdg" / "countercheck" / "compiled").iterdir())  # no source left behind


@pytest.mark.skipif(not hasattr(os, "fork"), reason="forks")
def test_the_portable_watcher_ends_a_child_whose_parent_is_gone():
    """Where prctl is missing, a worker watches its parent's pid (here: one it never had)."""
    from checker import lifetime

    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        lifetime.watch_parent(parent=-1, every=0.02)
        time.sleep(5)
        os._exit(0)
    t0 = time.monotonic()
    _, status = os.waitpid(pid, 0)
    assert os.WEXITSTATUS(status) == 1 and time.monotonic() - t0 < 4


def test_a_full_disk_while_saving_a_checkpoint_is_one_line_naming_resume(tmp_path, monkeypatch):
    spec = write_spec(tmp_path / "tiny.py")
    real = persist.write_data

    def full(path, kind, *a):
        if kind == "checkpoint-level" and "level-000003" in str(path):
            raise OSError(28, "No space left on device")
        return real(path, kind, *a)

    monkeypatch.setattr(persist, "write_data", full)
    with pytest.raises(UsageError, match=r"cannot save level 3 .*No space left on device.*--resume"):
        explore(model_of(spec), checkpoint=tmp_path / "ck")
    monkeypatch.setattr(persist, "write_data", real)
    r = explore(model_of(spec), checkpoint=tmp_path / "ck", resume=True)
    assert r.engine_note.startswith("resumed from level 2") and summary(r) == summary(explore(model_of(spec)))


# -- Hypothesis: random damage to what is read back ------------------------------------------------

_damage = st.one_of(
    st.tuples(st.just("truncate"), st.floats(0, 1)),
    st.tuples(st.just("flip"), st.floats(0, 1), st.integers(0, 7)),
    st.tuples(st.just("replace"), st.sampled_from([b"", b"\0" * 64, b"[]", b'{"D":[]}', b"countercheck x 1\n{}\n",
                                                   pickle.dumps({"states": []})])),
    st.tuples(st.just("reframe"), st.sampled_from(['[1, 2]', '{"L": []}', '{"D": [["states", 3]]}', '"x"',
                                                   '{"D": [["level", -1]]}'])),
)


def _apply(p: Path, damage: tuple) -> None:
    data = p.read_bytes()
    if damage[0] == "truncate":
        p.write_bytes(data[:int(len(data) * damage[1])])
    elif damage[0] == "flip" and data:
        at = min(len(data) - 1, int(len(data) * damage[1]))
        p.write_bytes(data[:at] + bytes([data[at] ^ (1 << damage[2])]) + data[at + 1:])
    elif damage[0] == "replace":
        p.write_bytes(damage[1])
    elif damage[0] == "reframe" and data.startswith(b"countercheck "):
        kind = data.split(b" ")[1].decode()
        binding = json.loads(data.split(b"\n")[1])["binding"]
        persist.write_framed(p, kind, binding, damage[1].encode())


@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
@given(which=st.integers(0, 1 << 16), damage=_damage)
def test_random_damage_to_a_checkpoint_never_changes_a_verdict(saved, tmp_path_factory, which, damage):
    spec, root, files = _copy(saved, tmp_path_factory.mktemp("hyp"))
    _apply(files[which % len(files)], damage)
    try:
        r = explore(model_of(spec), checkpoint=root, resume=True)
    except UsageError as e:
        assert "\n" not in e.message and "delete" in e.message
        return
    assert summary(r) == saved[2]


@settings(max_examples=6, deadline=None, suppress_health_check=list(HealthCheck))
@given(which=st.booleans(), damage=_damage)
def test_random_damage_to_a_cache_entry_never_changes_a_verdict(tmp_path_factory, which, damage):
    d = tmp_path_factory.mktemp("hypcache")
    old = os.environ.get("XDG_CACHE_HOME")
    os.environ["XDG_CACHE_HOME"] = str(d)
    try:
        spec = write_spec(d / "bad.py", BAD)
        want = summary(_compiled(spec))
        exe = _program(d / "countercheck" / "compiled")
        _apply(exe.with_name(exe.name + ".manifest") if which else exe, damage)
        try:
            r = _compiled(spec)
        except CheckerError as e:  # an internal error, one line: never a verdict
            assert "\n" not in e.message
            return
        assert summary(r) == want
    finally:
        if old is None:
            os.environ.pop("XDG_CACHE_HOME", None)
        else:
            os.environ["XDG_CACHE_HOME"] = old
