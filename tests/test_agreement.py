# SPDX-License-Identifier: GPL-2.0-only
"""Explorer and Z3 never contradict each other, on every spec, bug specs included.

(This test found a real bug: BMC's step selector was a Z3 constant named
``step@k``, the same name as the k-th copy of a spec variable ``step``, so
percpu_grouped's runs were cut short and BMC called them exhausted.)

At ncpus 1 BMC runs to the explorer's depth (when that is at most 18 steps),
where every reachable state is covered, and the verdicts must be the same.
Elsewhere it runs to a smaller depth (a full unrolling costs minutes): every violation and witness
it finds must be the explorer's, with a trace of the same length, and
whatever it cannot decide stays inconclusive.
"""
import pytest

from checker.loader import builtin_specs
from checker.prove import bmc_checks
from checker.language.compile import Model
from checker.language.model import info, resolve_params
from checker.verify import explore_checks

SPECS = builtin_specs()



#: Specs whose default point takes minutes to unroll (their steps are long If-chains over CPUs,
#: tasks and stacks): a smaller point of their own, where each bug spec's bug still shows, and the
#: CPU counts to check it at.
OWN_POINTS = {
    "stack_cache": ({"ntasks": 1, "migrations": 0}, (1, 2)),
    "stack_cache_2019": ({"ntasks": 1, "migrations": 0}, (1, 2)),
    "stack_charge_before_zeroing": ({"ntasks": 1, "migrations": 0}, (1, 2)),
    # two tasks: unrolled as a prefix at two CPUs (a full unrolling at one takes minutes); the bug
    # trace itself is still found by BMC at its full length below
    "stack_stale": ({"nr_cached": 1, "migrations": 0, "failures": 0}, (2,)),
    "stack_release_read_write": ({"nr_cached": 1, "migrations": 0, "failures": 0}, (2,)),
    "stack_memcg_charge_fail": ({"fixes": 0}, (2,)),
    "stack_cmpxchg_stale_old": ({"migrations": 0, "failures": 0}, (2,)),
    "stack_stranded_dead_cpu": ({"nr_cached": 1, "migrations": 0, "failures": 0}, (2,)),
    "stack_drain_online_cpu": ({"nr_cached": 1, "migrations": 0, "failures": 0}, (2,)),
    "stack_teardown_keeps_pointer": ({"ncpus": 2, "ntasks": 2}, (2,)),
    # issue 18: the default point is mainline's H2 with C adds and a local filled to batch - 1; one add
    # per CPU keeps the unrolling small (the fill is the explorer's job)
    "percpu_hotplug": ({"ops": 1}, (2,)),
    "percpu_hotplug_deep": ({"ops": 1}, (2,)),
    "vma_unlink_batch": ({"layout": 0}, (1,)),
    "unlink_batch_compare_last": ({"layout": 0}, (1,)),
    "unlink_batch_by_mapping": ({"size": 2}, (1,)),
    "unlink_batch_full_gt": ({"size": 2}, (1,)),
    "unlink_batch_no_file_check": ({"size": 8}, (1,)),
}


def _z3_applies(cls, params):
    """Reporting the read of an uninitialised variable is the explorer's alone (Z3 leaves it unconstrained),
    and so are a 32-bit kernel's accesses in halves (the Z3 backend refuses a 32-bit point)."""
    m = Model(cls, params)
    return not m.uninit_report and not m.tearing


def _small(cls, ncpus):
    """ncpus CPUs (or threads), batch 2, threshold 1: small enough to unroll."""
    si = info(cls)
    size = next(iter(si.roles.values())).count
    given = {size: ncpus} if isinstance(size, str) else {}
    for name, value in (("batch", 2), ("T", 1), ("U", 1), ("counters", 2)):
        if name in si.params:
            given[name] = value
    given.update(OWN_POINTS.get(cls.spec_name, ({}, ()))[0])
    return resolve_params(cls, given)


def _sizes(cls):
    """The spec's own small points, else the two smallest CPU counts it allows where the first role is
    sized by a parameter (BMC's cost grows steeply with CPUs); else the spec's own size."""
    if cls.spec_name in OWN_POINTS:
        return OWN_POINTS[cls.spec_name][1]
    size = next(iter(info(cls).roles.values())).count
    if not isinstance(size, str):
        return (1,)
    # A bug spec is its base spec with one change: its smallest point is enough here.
    return tuple(n for n in (1, 2, 3) if info(cls).params[size].valid(n))[:1 if cls.expect_violated else 2]


def _longest_run(cls, params, bound):
    """The number of steps of the longest run (None past ``bound`` states or on a cycle).

    BMC calls its runs exhausted when no run has one step more; a state reached by two paths of
    different lengths (a stack released in one step from a softirq, or in two from task context)
    makes the longest run longer than the explorer's depth."""
    from checker.language.compile import Model

    m = Model(cls, params)
    succ, seen = {}, set()
    stack = list(m.initial_states())
    while stack:
        s = stack.pop()
        if s in seen:
            continue
        seen.add(s)
        if len(seen) > bound:
            return None
        succ[s] = [t for _, t in m.successors(s)]
        stack.extend(succ[s])
    longest, state = {}, {}
    for s0 in m.initial_states():  # iterative DFS, post-order; a grey successor is a cycle
        work = [(s0, iter(succ[s0]))]
        state[s0] = 1
        while work:
            s, it = work[-1]
            t = next(it, None)
            if t is None:
                longest[s] = max((1 + longest[x] for x in succ[s]), default=0)
                state[s] = 2
                work.pop()
            elif state.get(t) == 1:
                return None
            elif t not in state:
                state[t] = 1
                work.append((t, iter(succ[t])))
    return max(longest[s0] for s0 in m.initial_states())


#: Bug traces longer than this are not re-found by BMC here (see docs: BMC at depth is slow).
MAX_BUG_DEPTH = 8

#: Every correct spec at its first size in the default tier (or, where that is slow, the differential tier);
#: BMC's unrolling makes them the default tier's slowest tests. percpu_grouped's first size takes 30-40 s to
#: unroll, the others here 2-3 s each on an idle core (10-20 s under the tier's load): the differential tier.
#: (stack_cache, written as process functions, and its family run at their own small points above.)
SLOW_BMC = ("percpu_grouped", "vma_unlink_batch", "unlink_batch_compare_last", "percpu_hotplug", "percpu_hotplug_deep",
            "lazy_mmdrop")
#: The larger sizes unroll for minutes each (a third of the differential tier's hour together): the long tier. The
#: first sizes too slow for the default tier stay in the differential tier.
#: A bug spec (its base spec with one change) is unrolled here by the trace test below, which asks BMC for its bug;
#: its agreement on every property is the differential tier's.
POINTS = [(name, n) if i == 0 and name not in SLOW_BMC and not cls.expect_violated else
          pytest.param(name, n, marks=pytest.mark.differential if i == 0 else pytest.mark.long)
          for name, cls in SPECS.items() for i, n in enumerate(_sizes(cls))]


@pytest.mark.parametrize("name,ncpus", POINTS)
def test_explorer_and_bmc_agree(name, ncpus):
    cls = SPECS[name]
    params = _small(cls, ncpus)
    if not _z3_applies(cls, params):
        pytest.skip("reports the read of an uninitialised variable, or a 32-bit point: explorer-only by design")
    explored = {c.property: c for c in explore_checks(cls, params)}
    depth = explored["no_deadlock"].depth
    # Full depth where it is cheap (one CPU, short runs): the longest run, which covers every reachable
    # state and after which no run goes on; otherwise a prefix.
    k = min(depth, 5 if ncpus > 1 else 8)
    longer = False  # some run goes on past depth k: BMC cannot call its runs exhausted
    if ncpus == 1 and depth <= 18:
        k = depth
        longest = _longest_run(cls, params, 20000)
        longer = longest is None or longest > depth
    for c in bmc_checks(cls, params, k, smt_timeout=120):
        e = explored[c.property]
        if c.verdict == "inconclusive":
            assert not c.extra["exhausted"], c.property
            assert k < depth or longer, c.property  # at full depth BMC decides everything
            continue
        assert c.verdict == e.verdict, (c.property, c.verdict, e.verdict)
        assert len(c.trace) == len(e.trace), (c.property, len(c.trace), len(e.trace))
        if k >= depth and not longer:
            assert c.extra["exhausted"]


#: Bug specs whose shortest counterexample is too deep to unroll in the suite (the explorer's trace is
#: pinned in their own tests instead).
TOO_DEEP_FOR_BMC = {
    # the use after free needs 11 steps at 2 CPUs and 2 tasks with a CPU going down and up: minutes
    "stack_teardown_keeps_pointer": "tests/test_stack_cache.py pins its explorer traces",
    # free_pgtables walks the whole vma list first: 15 to 72 steps, minutes each to unroll
    "unlink_batch_no_final": "tests/test_vma_unlink.py pins its explorer traces",
    "unlink_batch_full_gt": "tests/test_vma_unlink.py pins its explorer traces",
    "unlink_batch_no_file_check": "tests/test_vma_unlink.py pins its explorer traces",
    "unlink_batch_free_before_final": "tests/test_vma_unlink.py pins its explorer traces",
    "unlink_batch_by_mapping": "tests/test_vma_unlink.py pins its explorer traces",
}


#: Bug specs whose unrolling takes 12-15 s each (a third of this test's time), and those taking 1.5-6.5 s (half
#: of what was left): the differential tier. Each base spec keeps bug specs here in the default tier.
SLOW_TO_UNROLL = {"hotplug_dying_partial", "stack_stranded_dead_cpu", "stack_stale", "hotplug_sum_dead",
                  "hotplug_notifier_dead_only", "lazy_decode_logical_shift", "lazy_mmdrop_uninit_index",
                  "vmstat_rt_preempted_update", "lazy_rfc_read_positive", "eager_sub_count",
                  "hotplug_check_mm_online_sum"}


@pytest.mark.parametrize("name", [pytest.param(n, marks=pytest.mark.differential) if n in SLOW_TO_UNROLL else n
                                  for n, cls in SPECS.items() if cls.expect_violated and n not in TOO_DEEP_FOR_BMC])
def test_every_bug_spec_bmc_trace_is_as_short_as_the_explorers(name):
    cls = SPECS[name]
    params = _small(cls, _sizes(cls)[0])
    if not _z3_applies(cls, params):
        pytest.skip("reports the read of an uninitialised variable, or a 32-bit point: explorer-only by design")
    explored = {c.property: c for c in explore_checks(cls, params)}
    found_here = [p for p in cls.expect_violated
                  if p in explored and (explored[p].kind == "build" or explored[p].verdict == "violated")]
    if not found_here:
        # e.g. a race between two switchers: at two CPUs the shortest trace is 18 steps or more, an
        # unrolling that takes many minutes; the explorer's verdicts stand there alone
        pytest.skip("every bug of this spec needs more CPUs")
    for prop in found_here:
        if explored[prop].kind in ("build", "sometimes"):
            continue  # static, or a state never reached: no trace to unroll
        k = len(explored[prop].trace)
        if k > MAX_BUG_DEPTH:
            continue  # unrolling this deep costs minutes; the explorer's trace stands alone
        found = {c.property: c for c in bmc_checks(cls, params, k, smt_timeout=120)}
        assert found[prop].verdict == "violated"
        assert len(found[prop].trace) == k
