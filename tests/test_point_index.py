# SPDX-License-Identifier: GPL-2.0-only
"""The point index (checker/compiled/index.py): a second process runs a point's cached program without
lowering or generating it, and without the interpreter's warm-up, with the same states, verdicts and traces."""
import pytest

from checker.compiled import engine as cengine, index
from checker.compiled.build import cache_dir
from checker.explore import explore
from checker.language.compile import Model
from checker.loader import builtin_specs
from checker.verify import param_points


def _view(r):
    return (r.states, r.transitions, r.depth, r.complete, r.engine,
            {n: (o.verdict, o.trace, o.initial_state) for n, o in r.outcomes.items()})


@pytest.fixture
def point(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.setenv(index.ENV, "on")
    monkeypatch.setattr(cengine, "_programs", {})
    monkeypatch.setattr(cengine, "_sources", {})
    cls = builtin_specs()["eager_fold_gt"]
    return cls, param_points(cls, {})[8]  # 384 states: past the warm-up


def _new_process(monkeypatch):
    """This process as the next run sees it: nothing generated, lowering refused."""
    monkeypatch.setattr(cengine, "_programs", {})
    monkeypatch.setattr(cengine, "_sources", {})

    def refuse(*a, **k):
        raise AssertionError("lowered again")

    monkeypatch.setattr(cengine, "lower", refuse)
    monkeypatch.setattr(cengine, "generate", refuse)


def test_a_remembered_point_is_not_lowered_again(point, monkeypatch):
    cls, p = point
    first = explore(Model(cls, p), symmetry=True, engine="auto")
    assert first.engine == "compiled" and first.states > cengine.AUTO_THRESHOLD
    assert any(not o.verdict == "holds" for o in first.outcomes.values())  # a bug spec: a trace to compare
    skipped = []
    real = cengine.went_past_warmup
    monkeypatch.setattr(cengine, "went_past_warmup", lambda *a: skipped.append(real(*a)) or skipped[-1])
    _new_process(monkeypatch)
    again = explore(Model(cls, p), symmetry=True, engine="auto")
    assert skipped == [True] and _view(again) == _view(first)
    monkeypatch.undo()
    assert _view(explore(Model(cls, p), symmetry=True, engine="interpreted"))[:4] == _view(first)[:4]


def test_a_damaged_entry_is_lowered_again(point, monkeypatch):
    cls, p = point
    first = explore(Model(cls, p), symmetry=True, engine="compiled")
    (entry,) = (cache_dir() / "index").iterdir()
    entry.write_bytes(entry.read_bytes()[:-3])
    monkeypatch.setattr(cengine, "_programs", {})
    monkeypatch.setattr(cengine, "_sources", {})
    again = explore(Model(cls, p), symmetry=True, engine="compiled")
    assert _view(again) == _view(first)
    assert index.recall(cache_dir(), Model(cls, p), True, False) is not None  # written again, whole


def test_a_lint_pass_is_remembered(point, monkeypatch):
    from checker.language import lint as lint_mod

    cls, p = point
    monkeypatch.setattr(lint_mod, "_checked", set())
    lint_mod.lint(Model(cls, p))
    monkeypatch.setattr(lint_mod, "_checked", set())
    monkeypatch.setattr(lint_mod, "_run", lambda *a, **k: (_ for _ in ()).throw(AssertionError("linted again")))
    lint_mod.lint(Model(cls, p))  # remembered: not run again
    monkeypatch.setenv(index.ENV, "off")
    with pytest.raises(AssertionError, match="linted again"):
        lint_mod.lint(Model(cls, p))
