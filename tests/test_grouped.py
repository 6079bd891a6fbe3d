# SPDX-License-Identifier: GPL-2.0-only
"""percpu_grouped (seeds 000/002): configurations, failure points, memory ownership."""
import json

import pytest

from checker import And, Param, Role, Shared, Spec, action, explore, terminal, when
from checker.kernel.config import CONFIG, SMP, SMP_HOTPLUG, UP, kconfig_configs
from checker.kernel.memory import MEM_ERROR, NULL, Heap, ptr
from checker.specs.bugs.grouped_destroy_interior import GroupedDestroyInterior
from checker.specs.bugs.mm_init_leaks_context import MmInitLeaksContext
from checker.specs.percpu_grouped import PercpuGrouped


def test_configs_come_from_kconfig_dependencies_not_a_product():
    assert [sorted(c) for c in kconfig_configs()] == [[], ["SMP"], ["HOTPLUG_CPU", "SMP"]]
    assert CONFIG.names == ("UP", "SMP", "HOTPLUG_CPU_SMP")


@pytest.mark.parametrize("config", [UP, SMP, SMP_HOTPLUG])
@pytest.mark.parametrize("grouped", [0, 1])
@pytest.mark.parametrize("counters", [2, 4])
def test_both_forms_hold_in_every_config_at_every_failure_point(config, grouped, counters):
    r = explore(PercpuGrouped(config=config, grouped=grouped, counters=counters))
    assert all(o.verdict == "holds" for o in r.outcomes.values()), \
        {k: o.verdict for k, o in r.outcomes.items() if o.verdict != "holds"}


@pytest.mark.parametrize("fail_at,allocs", [(1, 0), (2, 1), (3, 2), (4, 3), (5, 4)])
def test_fail_at_pins_one_failure(fail_at, allocs):
    """Pinning the k-th allocation: mm, pgd, context, cid, the group."""
    r = explore(PercpuGrouped(config=SMP, grouped=1, fail_at=fail_at, counters=2, folds=0))
    assert r.outcomes["no_leak"].verdict == "holds"
    witness = r.outcomes["mm_lives_and_is_dropped"]
    assert witness.verdict == "violated"  # the pinned failure always happens
    assert r.outcomes["mm_init_fails_after_allocating"].verdict == ("holds" if allocs >= 1 else "violated")


def test_up_stub_bug_is_reported_like_the_build_robot(cli):
    r = cli("verify", "grouped_up_stub_missing", "--format", "json")
    assert r.returncode == 0, r.stderr
    build = next(c for c in json.loads(r.stdout)["checks"] if c["kind"] == "build")
    assert build["verdict"] == "violated" and build["expected"] == "violated"
    assert build["build_errors"] == [
        "kernel/fork.c:1299: error: implicit declaration of function 'percpu_counter_init_many' in mm_init "
        "[CONFIG_SMP=n, CONFIG_HOTPLUG_CPU=n]",
        "kernel/fork.c:926: error: implicit declaration of function 'percpu_counter_destroy_many' in __mmdrop "
        "[CONFIG_SMP=n, CONFIG_HOTPLUG_CPU=n]"]


def test_fixed_series_builds_in_every_config(cli):
    r = cli("verify", "percpu_grouped", "--set", "counters=2", "--format", "json")
    builds = [c for c in json.loads(r.stdout)["checks"] if c["kind"] == "build"]
    assert {c["params"]["config"] for c in builds} == {"UP", "SMP", "HOTPLUG_CPU_SMP"}  # named values
    assert all(c["verdict"] == "holds" for c in builds)


def test_mm_init_context_leak_found_with_its_witness():
    out = explore(MmInitLeaksContext(config=SMP, counters=2)).outcomes["no_leak"]
    assert out.verdict == "violated"
    actions = [(s.action, s.choices.get("ok")) for s in out.trace]
    assert actions[:4] == [("allocate_mm", True), ("mm_alloc_pgd", True), ("init_new_context", True),
                           ("percpu_counter_init", False)]
    assert all("heap_context" not in s.changes for s in out.trace[4:])  # never released


def test_interior_pointer_destroy_found_as_an_invalid_free():
    out = explore(GroupedDestroyInterior(counters=2, folds=0)).outcomes["memory_safe"]
    assert out.verdict == "violated"
    assert out.trace[-1].action == "destroy_free"
    assert out.trace[-1].changes["heap_error"] == MEM_ERROR.invalid_free


def test_interior_pointer_destroy_leaves_a_node_the_hotplug_fold_walks_in_freed_memory():
    r = explore(GroupedDestroyInterior(counters=2, folds=1))
    assert r.outcomes["listed_only_while_alive"].verdict == "violated"
    out = r.outcomes["memory_safe"]  # shortest: the fold touches counter 1 after the group is freed
    assert out.trace[-1].action == "cpu_dead_fold"
    assert out.trace[-1].changes["heap_error"] == MEM_ERROR.use_after_free


class Frees(Spec):
    """A tiny heap user: allocate, then free a pointer chosen by ``how``."""

    kernel = "test fixture"
    how = Param(0, domain=range(4))
    cpus = Role(1)
    heap = Heap("a", "b")
    done = Shared(0)

    @action(role="cpus")
    def go(s, cpu):
        mem, p = Frees.heap.alloc(s, "a", True)
        return when(s.done == 0, done=1, **mem)

    @action(role="cpus")
    def misuse(s, cpu):
        p = {0: ptr(0), 1: ptr(0, 1), 2: ptr(1), 3: NULL}[s.how]
        return when(s.done == 1, done=2, **Frees.heap.free(s, p))

    @action(role="cpus")
    def again(s, cpu):
        return when(And(s.done == 2, s.how == 0), done=3, **Frees.heap.free(s, ptr(0)))

    @terminal
    def finished(s):
        return s.done >= 2


@pytest.mark.parametrize("how,error", [(0, MEM_ERROR.double_free), (1, MEM_ERROR.invalid_free),
                                       (2, MEM_ERROR.invalid_free), (3, None)])
def test_heap_classifies_misuse(how, error):
    r = explore(Frees(how=how))
    safe = r.outcomes["memory_safe"]
    if error is None:  # free(NULL) is fine, but "a" is never freed
        assert safe.verdict == "holds" and r.outcomes["no_leak"].verdict == "violated"
    else:
        assert safe.verdict == "violated" and safe.trace[-1].changes["heap_error"] == error


# -- issue 18 point 6: one consistent start (dup_mm's copy, then mm_init's memset) -------------------------------
from checker.specs.percpu_grouped import PARENT, PARENT_CTR, STEP  # noqa: E402


def test_start_is_the_parents_copy_and_mm_init_memsets_it():
    e = explore(PercpuGrouped(config=SMP_HOTPLUG, grouped=1, counters=2))
    first = e.outcomes["mm_lives_and_is_dropped"].trace[0]
    assert first.action == "allocate_mm" and first.choices == {"ok": True}
    # Both fields start as the parent's (memcpy) and the memset clears both in the same step.
    assert first.changes["ctr[0]"] == NULL and first.changes["count[0]"] == 0
    from checker.language.compile import Model
    from checker.language.model import resolve_params

    m = Model(PercpuGrouped, resolve_params(PercpuGrouped, {"config": SMP_HOTPLUG, "grouped": 1, "counters": 2}))
    start = m.state_dict(m.initial_states()[0])
    assert list(start["ctr"]) == [PARENT_CTR, PARENT_CTR] and list(start["count"]) == [PARENT, PARENT]


class UpStubRelyingOnMemset(PercpuGrouped):
    """A UP percpu_counter_init_many stub that writes nothing and returns 0: correct only because mm_init's
    memset already zeroed every count."""

    @action(role="task", choose={"ok": (True, False)},
            uses={"percpu_counter_init_many": "kernel/fork.c:1299 mm_init"})
    def percpu_counter_init_many(s, cpu, ok):
        if s.config == UP and s.grouped:
            return when(And(s.step == STEP.counters, ok), step=STEP.in_use)
        return PercpuGrouped.percpu_counter_init_many(s, cpu, ok)


def test_a_stub_relying_on_the_memset_is_judged_correct():
    # Before the memset was modelled the counts started at the parent's 99 and this stub failed
    # init_all_or_nothing; the kernel's memset makes it correct.
    e = explore(UpStubRelyingOnMemset(config=UP, grouped=1, counters=2))
    assert e.complete
    assert e.verdicts["init_all_or_nothing"] == "holds"
