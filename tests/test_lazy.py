# SPDX-License-Identifier: GPL-2.0-only
"""Issue 6: the lazy per-CPU counters of seed 001, the __mmdrop index, the word lemmas, the bounds table."""
import pytest

from checker import explore
from checker.kernel.memory import MEM, MEM_ERROR
from checker.specs.bugs.lazy_decode_logical_shift import LazyDecodeLogicalShift
from checker.specs.bugs.lazy_mmdrop_uninit_index import LazyMmdropReadsUninitIndex, LazyMmdropUninitIndex
from checker.specs.bugs.lazy_rfc_double_init import LazyRfcDoubleInit
from checker.specs.bugs.lazy_rfc_read_positive import LazyRfcReadPositive
from checker.specs.bugs.lazy_switch_loser_preempt import LazySwitchLoserPreempt
from checker.specs.lazy_mmdrop import LazyMmdrop
from checker.specs.percpu_lazy import PercpuLazy, decode, encode_add
from checker.specs.percpu_lazy_rfc import DESIGN as LZ_DESIGN
from checker.specs.percpu_lazy_rfc import PercpuLazyRfc


# -- percpu_lazy (L-K) ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("ncpus,mod_bits,states", [(2, 0, 15383), (2, 1, 5392), (3, 0, 6427), (3, 1, 1612),
                                                   (3, 2, 4150)])
def test_lazy_counter_keeps_every_property_at_2_and_3_cpus(ncpus, mod_bits, states):
    r = explore(PercpuLazy(ncpus=ncpus, mod_bits=mod_bits))
    assert r.complete and r.states == states
    assert set(r.verdicts.values()) == {"holds"}, {k: v for k, v in r.verdicts.items() if v != "holds"}
    # not vacuous: the switch, a race to it, a loser's free and a redone copy all happen
    for p in ("a_switch_happens", "two_cpus_race_to_switch", "a_switch_loser_frees", "a_publish_retries",
              "an_add_finds_the_switch_in_its_slowpath", "context_restored"):
        assert r.verdicts[p] == "holds"


def test_posted_switch_loser_returns_with_preemption_off():
    r = explore(LazySwitchLoserPreempt(ncpus=2, mod_bits=1))
    out = r.outcomes["preempt_balanced_on_return"]
    assert out.verdict == "violated" and len(out.trace) == 24 and r.states == 528
    # task 2 publishes; task 3 finds the word per-CPU after its preempt_disable() and frees without
    # preempt_enable(): its add returns (pc idle) with pcount[3] still 1
    publish, disable, lose = out.trace[-3:]
    assert all(s.action.startswith("lazy_percpu_counter_add_") for s in out.trace[-4:])
    assert (publish.cpu, publish.changes["published"], publish.changes["pcount[2]"]) == (2, 2, 0)
    assert (disable.cpu, disable.changes["pcount[3]"]) == (3, 1)
    assert lose.changes == {"alloc[3]": MEM.freed, "adders_pc[3]": 0, "adders_v[3]": 0}  # freed, returned
    assert r.outcomes["context_restored"].verdict == "violated"
    for p in ("no_update_lost", "losers_free_their_storage", "nothing_leaks_at_exit", "published_storage_live"):
        assert r.verdicts[p] == "holds"


def test_posted_switch_is_a_bug_spec_not_a_rejection(cli):
    r = cli("verify", "lazy_switch_loser_preempt", "--mode", "explore", "--traces", "bugs", "--set", "ncpus=2")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "preempt_balanced_on_return violated after 24 steps (shortest)" in r.stdout


def test_word_arithmetic_is_the_kernels():
    assert encode_add(-1) == 0x01FFFFFFFFFFFFFE  # the reference's example
    assert decode((0x0A + encode_add(-1)) % (1 << 64)) == 4  # value 5, add -1: 0x0200000000000008
    assert (0x0A + encode_add(-1)) % (1 << 64) == 0x0200000000000008
    assert decode(0x00FFFFFFFFFFFFFE) == -1


def test_logical_shift_decode_is_found_by_the_explorer_and_by_a_concrete_word():
    # one adding task and the reader (446 states; the default run, two: 15,849 states, the same 4 and 11 steps)
    r = explore(LazyDecodeLogicalShift(ncpus=1))
    out = r.outcomes["read_exact_at_quiescence"]
    assert out.verdict == "violated" and len(out.trace) == 4 and r.states == 446
    assert out.trace[-1].role == "reader" and out.trace[-1].action.startswith("lazy_percpu_counter_read_")
    assert out.trace[-1].changes["read_acc[1]"] == (1 << 55) - 1  # -1 read as 2^55 - 1
    nul = r.outcomes["no_update_lost"]  # the switch copies the logically decoded value into its slot
    assert nul.verdict == "violated" and len(nul.trace) == 11
    checks = {c.property: c for c in LazyDecodeLogicalShift.lemmas.checks("x")}
    bad = checks["sign_extension"]
    assert bad.verdict == "violated" and bad.status == "ok"
    assert bad.extra["counterexample"] == {"x": "0xffc0000000000000", "m": "0x0000000000000000"}
    assert "decodes to 18014398509481984" in bad.trace_text[1]


# -- the word lemmas ------------------------------------------------------------------------------------------
def test_word_lemmas_hold_for_the_arithmetic_decode():
    checks = PercpuLazy.lemmas.checks("percpu_lazy")
    assert len(checks) == 11 and all(c.verdict == "holds" for c in checks)
    b = next(c for c in checks if c.property == "value_range_is_exact").extra["boundaries"]
    assert (b["largest"], b["smallest"]) == (2 ** 54 - 1, -2 ** 54)
    assert b["largest_plus_one"] == -2 ** 54 and b["smallest_minus_one"] == 2 ** 54 - 1
    assert b["minus_one_word"] == "0x00fffffffffffffe" and b["minus_one_decodes_to"] == -1


def test_word_lemmas_can_fail_and_the_logical_shift_breaks_exactly_the_sign_lemmas():
    from checker.prove.bitvector import WordLemmas

    verdicts = {c.property: c.verdict for c in WordLemmas("logical").checks("x")}
    assert {k for k, v in verdicts.items() if v == "violated"} == {
        "add_round_trip", "add_wraps_at_55_bits", "value_range_is_exact", "sign_extension"}


def test_lemmas_appear_in_the_verify_report(cli):
    r = cli("verify", "percpu_lazy", "--mode", "prove", "-v")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "percpu_lazy.sign_extension (lemma)" in r.stdout and "every 64-bit word" in r.stdout


# -- percpu_lazy_rfc (L-Z) -----------------------------------------------------------------------------------
@pytest.mark.parametrize("ncpus,mod_bits,states", [(2, 0, 1566), (2, 1, 2497), (3, 0, 21152), (3, 1, 3893)])
def test_lz_with_the_fixes_keeps_every_property(ncpus, mod_bits, states):
    r = explore(PercpuLazyRfc(design=LZ_DESIGN.claim_fix, ncpus=ncpus, mod_bits=mod_bits))
    assert r.complete and r.states == states
    assert set(r.verdicts.values()) == {"holds"}, {k: v for k, v in r.verdicts.items() if v != "holds"}


def test_the_posted_rfc_is_the_subject_and_its_double_init_the_expected_violation():
    assert PercpuLazyRfc().params.design == LZ_DESIGN.posted  # the default is the code as posted
    one = explore(PercpuLazyRfc(ncpus=1, mod_bits=1))
    assert set(one.verdicts.values()) == {"holds"} and one.states == 50  # one adder CPU: no race
    two = explore(PercpuLazyRfc(ncpus=2, mod_bits=1))
    assert {k for k, v in two.verdicts.items() if v != "holds"} == {"posted_switch_initialises_fbc_twice"}
    assert len(two.outcomes["posted_switch_initialises_fbc_twice"].trace) == 22 and two.states == 5387
    neg = explore(PercpuLazyRfc(ncpus=1, mod_bits=0, neg=1, readers=1))
    assert {k for k, v in neg.verdicts.items() if v != "holds"} == {"posted_read_positive_goes_negative"}


def test_lz_double_init_loses_updates_and_leaks():
    r = explore(LazyRfcDoubleInit(ncpus=2))
    assert {k for k, v in r.verdicts.items() if v == "violated"} == {
        "fbc_initialised_once", "nothing_leaks_at_destroy", "no_update_lost", "unregistered_at_destroy",
        "read_positive_error_bounded", "posted_switch_initialises_fbc_twice"}
    out = r.outcomes["fbc_initialised_once"]
    assert len(out.trace) == 22
    inits = [s for s in out.trace if s.action == "percpu_counter_init(ok=1)" or s.action == "percpu_counter_init"]
    assert {s.cpu for s in inits} == {0, 1}  # both CPUs initialise the one embedded fbc
    lost = r.outcomes["no_update_lost"].trace
    assert len(lost) == 27 and lost[-1].action == "switch_cmpxchg"


def test_lz_read_positive_returns_a_negative_value():
    out = explore(LazyRfcReadPositive()).outcomes["read_positive_never_negative"]
    assert out.verdict == "violated"
    assert [s.action for s in out.trace] == ["add", "slowpath_read", "slowpath_cmpxchg", "read_positive"]
    assert out.trace[0].choices == {"i": -1}


def test_lz_on_preempt_rt_sleeps_in_atomic_context(cli):
    r = cli("verify", "percpu_lazy_rfc", "--set", "preempt_rt=1", "--set", "ncpus=2", "--set", "mod_bits=0",
            "--mode", "explore", "-v")
    assert r.returncode == 1
    assert "FAIL  violated                percpu_lazy_rfc.no_sleep_in_atomic" in r.stdout
    assert "PercpuLazyRfc.register_lock" in r.stdout and "has interrupts off" in r.stdout
    assert "list_lock is a spinlock_t, which sleeps on PREEMPT_RT" in r.stdout
    assert "since PercpuLazyRfc.switch_read" in r.stdout


# -- __mmdrop's uninitialised index ------------------------------------------------------------------------
def test_the_fixed_mmdrop_call_holds():
    for n in (2, 4):
        r = explore(LazyMmdrop(counters=n))
        assert set(r.verdicts.values()) == {"holds"}


def test_mmdrop_uninit_index_found_by_the_explorer_with_its_value():
    r = explore(LazyMmdropUninitIndex(counters=4))
    out = r.outcomes["memory_safe"]
    assert out.verdict == "violated" and len(out.trace) == 3
    assert out.initial_state["i"] == -1  # the first value in the domain that breaks it, in BFS order
    assert out.trace[-1].changes["heap_error"] == MEM_ERROR.out_of_bounds
    leak = r.outcomes["no_leak"]
    assert leak.verdict == "violated" and leak.initial_state["i"] not in (0,)
    uaf = r.outcomes["fold_never_walks_freed_memory"]
    assert uaf.verdict == "violated" and uaf.trace[-1].action == "cpu_dead_fold"
    assert r.verdicts["listed_only_while_alive"] == "violated"
    assert explore(LazyMmdropReadsUninitIndex(counters=4)).verdicts["no_uninit_read"] == "violated"


def test_mmdrop_uninit_index_found_by_z3_with_a_concrete_index():
    from checker.prove import bmc_checks
    from checker.language.model import resolve_params

    checks = {c.property: c for c in bmc_checks(LazyMmdropUninitIndex, resolve_params(
        LazyMmdropUninitIndex, {"uninit": 1, "counters": 2}), 13)}
    mem = checks["memory_safe"]
    assert mem.verdict == "violated" and mem.extra["exhausted"]
    i = mem.initial_state["i"]
    assert i not in (0,) and isinstance(i, int)
    # the index Z3 chose really does read outside rss_stat[0..1] at the step the trace names
    assert not (0 <= i + (len(mem.trace) - 3) < 2)
    assert mem.trace_text[0].startswith("0  -") and f"i = {i} (never assigned)" in mem.trace_text[0]
    assert checks["no_leak"].verdict == "violated" and checks["fold_never_walks_freed_memory"].verdict == "violated"
    fixed = {c.property: c.verdict for c in bmc_checks(LazyMmdrop, resolve_params(LazyMmdrop, {"counters": 2}), 13)}
    assert set(fixed.values()) == {"holds"}


def test_mmdrop_bugs_are_found_by_both_backends_in_the_default_run(cli):
    r = cli("verify", "lazy_mmdrop_uninit_index", "-v", "--traces", "bugs")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "bmc k=13 (all runs covered)" in r.stdout and "(never assigned)" in r.stdout


# -- the bounds table ----------------------------------------------------------------------------------------------
@pytest.mark.differential  # proves every figure of the table (45 s)
def test_bounds_table_contents_and_the_command_that_prints_it(monkeypatch, capsys):
    """One build (its proofs are most of the cost): the figures, the checks behind them, and `bounds`' output
    and exit code for that table."""
    import argparse

    from checker import bounds

    t = bounds.build(ns=(4, 26, 64, 256), ts=(1, 16, 1024))
    assert t.ok
    cells = {(r["N"], r["T"]): {k: r[k].value for k in t.columns} for r in t.rows}
    assert cells[(4, 1)] == {"split rss": 66, "eager percpu": 124, "L-K lazy": 0, "L-Z atomic": 0,
                             "L-Z percpu": 124, "counter tree": 188, "vmstat zone": 216}
    assert cells[(256, 16)]["split rss"] == 16 * 66 and cells[(256, 16)]["eager percpu"] == 130816
    # the counter tree: 256*31 + 32 items * 224 + 4 items * 1792 (settled; the header's under is 24576)
    assert cells[(256, 16)]["counter tree"] == 22272
    assert cells[(256, 16)]["vmstat zone"] == 256 * 125  # the kernel's normal threshold at 256 CPUs, 16 GiB zone
    kinds = {(c.spec, c.property, c.backend) for c in t.checks()}
    assert ("rss_split", "read_bound", "z3") in kinds and ("percpu_eager", "read_bound", "z3") in kinds
    assert ("percpu_eager", "read_bound_minus_one", "z3") in kinds  # the witness makes the bound exact
    assert ("lazy_rfc_read_positive", "read_positive_never_negative", "explore") in kinds
    assert ("percpu_counter_tree", "settled_gap_bound", "z3") in kinds
    assert ("percpu_counter_tree", "settled_gap_minus_one", "z3") in kinds  # the fill witness

    seen = {}
    monkeypatch.setattr(bounds, "build", lambda ns, ts: seen.setdefault("args", (ns, ts)) and t)
    assert bounds.main(argparse.Namespace(ncpus=None, threads=[1, 16, 1024])) == 0
    assert seen["args"] == (bounds.NS, (1, 16, 1024))
    out = capsys.readouterr().out
    rows = [line.split() for line in out.splitlines() if line.strip()[:1].isdigit() and len(line.split()) >= 7]
    by_n = {int(x[0]): x for x in rows if x[1] == "1024"}
    assert [by_n[n][3] for n in (4, 26, 64, 256)] == ["124", "1326", "8128", "130816"]
    assert by_n[4][2] == str(1024 * 66)


def test_the_publish_bugs_copy_the_ports_add_up_to_the_switch_loop():
    """lazy_publish_relaxed and lazy_publish_plain_store redefine the port's lazy_percpu_counter_add to change its
    publish: up to the switch's loop head (the control points the properties name by line) the code must stay the
    port's, line for line, or the bug specs would check another add."""
    import inspect

    from checker.specs.bugs.lazy_publish_plain_store import LazyPublishPlainStore
    from checker.specs.bugs.lazy_publish_relaxed import LazyPublishRelaxed
    from checker.specs.percpu_lazy import SWITCH_LOOP, PercpuLazy

    def head(cls):
        lines = inspect.getsource(cls.lazy_percpu_counter_add).splitlines()
        first = next(i for i, x in enumerate(lines) if x.lstrip().startswith("def "))
        body = lines[first:first + SWITCH_LOOP - 1]
        return [x for x in body if '"""' not in x]  # (each docstring names its mutation)

    port = head(PercpuLazy)
    assert len(port) == SWITCH_LOOP - 2 and "preempt_disable(); v = atomic64_read()" in port[-4]
    assert head(LazyPublishRelaxed) == port and head(LazyPublishPlainStore) == port
