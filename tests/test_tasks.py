# SPDX-License-Identifier: GPL-2.0-only
"""The task model: tasks apart from CPUs, and the scheduler's rules (checker.kernel.tasks)."""
import pytest

from checker import explore
from checker.kernel.tasks import PREEMPT
from checker.language.compile import Model
from conftest import FIXTURES

from tasks import SECTION, SpinUnderPreemption, ThisCpuInc

F = str(FIXTURES / "tasks.py")


def _transitions(spec):
    """Every (state, action name, actor, choices, next state) of the unreduced graph."""
    m = Model(spec)
    seen, todo, out = set(), list(m.initial_states()), []
    seen.update(todo)
    while todo:
        s = todo.pop()
        for label, t in m.successors(s):
            name, who, ch = m.label_parts(label)
            out.append((s, name, who, ch, t))
            if t not in seen:
                seen.add(t)
                todo.append(t)
    return m, out


def _left(m, s, cpu):
    return s[m.index["curr"]][cpu]


@pytest.mark.parametrize("section", [SECTION.preempt, SECTION.irqs])
def test_a_preemption_where_preemption_is_off_is_never_taken(section):
    m, steps = _transitions(ThisCpuInc(ncpus=1, ntasks=3, section=section, preemptions=2))
    switches = [(s, _left(m, s, who)) for s, name, who, _, t in steps if name == "schedule"]
    off = "pcount" if section == SECTION.preempt else "irqs"
    assert switches
    for s, t in switches:
        if t >= 0:
            assert s[m.index[off]][t] == 0
    # and the switches that do happen include ones from a task that could still go on (a preemption)
    assert any(t >= 0 and s[m.index["pc"]][t] == 0 for s, t in switches)


def test_preemption_is_taken_inside_migrate_disable():
    m, steps = _transitions(ThisCpuInc(ncpus=1, ntasks=2, section=SECTION.migrate))
    assert any(name == "schedule" and s[m.index["mdis"]][_left(m, s, who)] == 1 for s, name, who, _, _ in steps)


def test_a_migration_inside_migrate_disable_or_preempt_disable_is_never_taken():
    for section, var in ((SECTION.migrate, "mdis"), (SECTION.preempt, "pcount"), (SECTION.irqs, "irqs")):
        m, steps = _transitions(ThisCpuInc(ncpus=2, ntasks=2, section=section, migrations=2))
        moves = [(s, who) for s, name, who, _, _ in steps if name == "migrate"]
        assert moves
        assert all(s[m.index[var]][t] == 0 for s, t in moves)
        assert any(s[m.index["pc"]][t] == 0 for s, t in moves)


def test_an_irq_on_a_cpu_with_irqs_off_is_never_taken():
    m, steps = _transitions(ThisCpuInc(ncpus=1, ntasks=2, section=SECTION.irqs, irq=1))
    irqs = [(s, who) for s, name, who, _, _ in steps if name == "irq_inc"]
    assert irqs
    assert all(s[m.index["irqs"]][_left(m, s, c)] == 0 for s, c in irqs if _left(m, s, c) >= 0)
    assert explore(ThisCpuInc(ncpus=1, ntasks=2, section=SECTION.irqs, irq=1)).outcomes["no_lost_inc"].verdict == "holds"


def test_a_task_steps_only_while_its_cpu_runs_it():
    m, steps = _transitions(ThisCpuInc(ncpus=2, ntasks=4, migrations=1))
    tasks = [(s, who) for s, name, who, _, _ in steps if name in ("read", "write")]
    on, curr = m.index["task_cpu"], m.index["curr"]
    assert all(s[curr][s[on][t]] == t for s, t in tasks)


def test_a_spinlock_holder_is_never_switched_out():
    r = explore(SpinUnderPreemption(ncpus=1, ntasks=3, preemptions=3), symmetry=False)
    assert r.outcomes["holder_runs"].verdict == "holds" and r.outcomes["both_done"].verdict == "holds"


def test_the_unprotected_read_modify_write_loses_an_increment_by_preemption():
    r = explore(ThisCpuInc(ncpus=1, ntasks=2))
    out = r.outcomes["no_lost_inc"]
    assert out.verdict == "violated"
    assert [s.action for s in out.trace] == ["read", "schedule", "read", "write", "schedule", "write"]
    assert explore(ThisCpuInc(ncpus=1, ntasks=2, section=SECTION.preempt)).outcomes["no_lost_inc"].verdict == "holds"


def test_no_preemption_on_preempt_none_and_only_at_might_sleep_on_voluntary():
    assert explore(ThisCpuInc(ncpus=1, ntasks=2, preempt=PREEMPT.none)).outcomes["no_lost_inc"].verdict == "holds"
    # no step of ThisCpuInc sleeps: voluntary preemption has no point to preempt at
    assert explore(ThisCpuInc(ncpus=1, ntasks=2, preempt=PREEMPT.voluntary)).outcomes["no_lost_inc"].verdict == "holds"
    assert explore(ThisCpuInc(ncpus=1, ntasks=2, preempt=PREEMPT.rt)).outcomes["no_lost_inc"].verdict == "violated"


def test_a_migration_between_read_and_write_loses_an_increment():
    r = explore(ThisCpuInc(ncpus=2, ntasks=2, migrations=1, preemptions=0))
    out = r.outcomes["no_lost_inc"]
    assert out.verdict == "violated" and "migrate" in [s.action for s in out.trace]
    assert explore(ThisCpuInc(ncpus=2, ntasks=2, migrations=1, preemptions=0,
                              section=SECTION.preempt)).outcomes["no_lost_inc"].verdict == "holds"


def test_a_pinned_task_never_migrates():
    class Pinned(ThisCpuInc):
        workers = ThisCpuInc.workers.__class__("ntasks", cpus="cpus", symmetric=True, pinned=True)

    m = Model(Pinned(ncpus=2, ntasks=2, migrations=2))
    assert "migrate" not in [a.info.name for a in m.actions]
    assert explore(Pinned(ncpus=2, ntasks=2, migrations=2, preemptions=0)).outcomes["no_lost_inc"].verdict == "holds"


def test_a_bounded_holds_says_its_bounds(cli):
    r = cli("verify", f"{F}:ThisCpuInc", "--set", "section=preempt", "--set", "ncpus=2", "--set", "migrations=1",
            "-v")
    assert r.returncode == 0, r.stdout + r.stderr
    line = next(x for x in r.stdout.splitlines() if ".no_lost_inc" in x)
    assert "holds (for <= 1 preemption, <= 1 migration)" in line
    unbounded = cli("verify", f"{F}:ThisCpuInc", "--set", "section=preempt", "--set", "preemptions=-1", "-v")
    line = next(x for x in unbounded.stdout.splitlines() if ".no_lost_inc" in x)
    assert "holds " in line and "<=" not in line


def test_a_task_spec_declaring_the_schedulers_names_is_refused():
    from checker import Ghost, SpecError

    with pytest.raises(SpecError, match="'curr', which the task model provides"):
        class Bad(ThisCpuInc):
            curr = Ghost(0)


def test_z3_bmc_finds_the_same_preemption_trace():
    from checker.prove import bmc_checks
    from checker.language.model import resolve_params

    checks = {c.property: c for c in bmc_checks(ThisCpuInc, resolve_params(ThisCpuInc, {}), 7)}
    bug = checks["no_lost_inc"]
    assert bug.verdict == "violated"
    assert [s.action for s in bug.trace] == ["read", "schedule", "read", "write", "schedule", "write"]
    safe = {c.property: c for c in bmc_checks(ThisCpuInc, resolve_params(ThisCpuInc, {"section": SECTION.preempt}), 7)}
    assert safe["no_lost_inc"].verdict == "holds" and safe["no_lost_inc"].extra["bounded"] == "<= 1 preemption"


def test_z3_proves_the_task_model_per_point_and_says_why_not_for_any_n():
    from checker import Implies, Or, Param, Select, Sum, invariant
    from checker.prove import prove_checks
    from tasks import PC

    class Proved(ThisCpuInc):
        ncpus = Param(1, domain=range(1, 5), prove=(1, "symbolic"))
        section = Param(SECTION.preempt, domain=SECTION)

        @invariant(inductive=True)
        def sums(s):
            return And(Sum(s.counter) == s.adds, *[x == 0 for x in s.irq_left])  # (irq=0: no handler runs)

        @invariant(role="workers", inductive=True)
        def reader_runs(s, t):
            c = s.task_cpu[t]
            return And(c == 0, Implies(s.pc[t] == PC.read, And(s.pcount[t] == 1, Select(s.curr, c) == t,
                                                                 Select(s.counter, c) == s.seen[t])),
                       s.mdis[t] == 0, s.irqs[t] == 0, Implies(s.pc[t] != PC.read, s.pcount[t] == 0))

        @invariant(inductive=True)
        def curr_is_a_task(s):
            return And(*[Or(*[s.curr[c] == t for t in s.workers]) for c in s.cpus])

    checks = prove_checks(Proved, {}, smt_timeout=60)
    per_n = [c for c in checks if c.property == "no_lost_inc" and c.params["ncpus"] == 1]
    assert per_n and all(c.verdict == "holds" for c in per_n), [(c.verdict, c.reason, c.trace_text) for c in checks]
    assert all(c.extra["bounded"] == "<= 1 preemption" for c in per_n)
    anyn = [c for c in checks if c.params["ncpus"] != 1]
    assert anyn and all(c.verdict == "inconclusive" and "the task model" in c.reason for c in anyn)


from checker import And  # noqa: E402


def test_a_per_task_variable_of_a_cpu_role_is_refused_naming_the_task_roles():
    from checker import SpecError

    with pytest.raises(SpecError, match=r"PerTask\(role='cpus'\), which is not a Task role; the task roles are: "
                                        r"workers"):
        class Bad(ThisCpuInc):
            extra = PerTask(0, role="cpus")


def test_a_task_role_on_an_unknown_cpu_role_is_refused_naming_the_cpu_roles():
    from checker import SpecError, Task

    with pytest.raises(SpecError, match="runs on cpus='cores', which is not a CPU role; the CPU roles are: cpus"):
        class Bad(ThisCpuInc):
            workers = Task("ntasks", cpus="cores")


from checker import PerTask  # noqa: E402


def test_a_softirq_never_runs_over_bh_or_irqs_off_and_on_rt_only_where_ksoftirqd_could_run():
    from tasks import SoftirqOverTask

    full = explore(SoftirqOverTask()).outcomes
    assert full["never_over_bh_or_irqs_off"].verdict == "holds"
    assert full["never_over_preempt_off"].verdict == "violated"  # irq exit runs it over a preempt-off task
    rt = explore(SoftirqOverTask(preempt=PREEMPT.rt)).outcomes
    assert rt["never_over_bh_or_irqs_off"].verdict == "holds" and rt["never_over_preempt_off"].verdict == "holds"


def test_voluntary_preemption_only_before_a_step_that_may_sleep():
    from tasks import SoftirqOverTask

    m, steps = _transitions(SoftirqOverTask(ntasks=2, preempt=PREEMPT.voluntary, preemptions=2))
    step = m.index["step"]
    from tasks import SEC

    preemptions = [s for s, name, who, _, t in steps
                   if name == "schedule" and s[step][_left(m, s, who)] != SEC.done]
    assert preemptions and all(s[step][_left(m, s, 0)] == SEC.sleep for s in preemptions)
    m, steps = _transitions(SoftirqOverTask(ntasks=2, preempt=PREEMPT.full, preemptions=2))
    assert {s[step][_left(m, s, 0)] for s, name, *_ in steps if name == "schedule"} >= {SEC.start, SEC.sleep}
