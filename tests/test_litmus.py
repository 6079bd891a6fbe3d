# SPDX-License-Identifier: GPL-2.0-only
"""The kernel's litmus tests: read, lowered to specs, and judged under sc, tso and lkmm (issue 20)."""
import hashlib
import re
from pathlib import Path

import pytest

from conftest import ROOT, run_cli

from checker.errors import SpecError
from checker.litmus import lower as L
from checker.litmus import parse as P
from checker.litmus import run as R
from checker.language.model import info

KEPT = ROOT / "tests" / "litmus"
DOCS = KEPT / "documentation"
TOOLS_FILES = sorted(KEPT.glob("*.litmus"))  # tools/memory-model/litmus-tests/
DOC_FILES = sorted(DOCS.glob("*.litmus"))  # Documentation/litmus-tests/{atomic,locking,rcu}/
FILES = TOOLS_FILES + DOC_FILES
#: Kept tests the models cannot express, each with the reason: an addition that needs one is listed
#: here, never skipped.
NOT_MODELLED = {"RCU+sync+free": "synchronize_rcu()", "RCU+sync+read": "synchronize_rcu()"}


def lowered(text: str, name: str = "t.litmus", tmp: Path | None = None) -> type:
    return L.lower(P.parse_text(text, name))


def accesses(spec: type) -> dict[str, tuple[str, ...]]:
    """Each action's access= as written (the annotations also carry where they were made)."""
    return {n: tuple(map(repr, a.access)) for n, a in info(spec).actions.items()}


def sc_outcome(spec: type) -> str:
    lw = R.Lowered("t", spec.litmus, spec, None)
    return R.run_one(lw, "sc").verdict


# ---- the kept files ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("folder, files, count", [(KEPT, TOOLS_FILES, 35), (DOCS, DOC_FILES, 12)],
                         ids=["tools", "documentation"])
def test_the_kept_files_are_the_kernels_byte_for_byte(folder, files, count):
    """Every .litmus here is listed in its folder's README.md with its commit and SHA-256, and matches it."""
    listed = {}
    for m in re.finditer(r"^\| `([^`]+\.litmus)` \|(?: `[^`]+` \|)? `([0-9a-f]{40})` \| (\d+) \| `([0-9a-f]{64})` \|$",
                         (folder / "README.md").read_text(), re.M):
        listed[m.group(1)] = (int(m.group(3)), m.group(4))
    assert sorted(listed) == [f.name for f in files] and len(files) == count
    for f in files:
        data = f.read_bytes()
        assert (len(data), hashlib.sha256(data).hexdigest()) == listed[f.name], f.name


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_every_kept_test_parses_and_lowers(path):
    t = P.parse_file(path)
    assert t.name == path.stem and t.quantifier == "exists"
    assert t.result in (("Never", "Sometimes") if t.name != "RM-broken" else ("DEADLOCK",))
    assert t.threads and all(th.index == k for k, th in enumerate(t.threads))
    try:
        spec = L.lower(t)
    except L.Unsupported as e:
        assert t.name in NOT_MODELLED, f"{t.name} is not modelled ({e}) but not listed in NOT_MODELLED"
        assert NOT_MODELLED[t.name] in e.message
        return
    assert t.name not in NOT_MODELLED
    si = info(spec)
    assert set(si.roles) == {f"p{k}" for k in range(len(t.threads))}
    assert {"exists_clause", "exists_clause_fails"} <= set(si.properties)
    expected = "holds" if t.result == "Sometimes" else "violated"  # Never, or RM-broken's DEADLOCK
    assert si.properties["exists_clause"].expect == expected


def test_the_sb_test_lowers_to_one_annotated_step_per_statement():
    spec = L.lower(P.parse_file(KEPT / "SB+fencembonceonces.litmus"))
    acts = info(spec).actions
    assert [(n, a.role, tuple(map(repr, a.access))) for n, a in acts.items()] == [
        ("p0_18_WRITE_ONCE", "p0", ("Store('x', 'once')",)),
        ("p0_19_smp_mb", "p0", ("Fence('mb')",)),
        ("p0_20_READ_ONCE", "p0", ("Load('y', 'once')",)),
        ("p1_27_WRITE_ONCE", "p1", ("Store('y', 'once')",)),
        ("p1_28_smp_mb", "p1", ("Fence('mb')",)),
        ("p1_29_READ_ONCE", "p1", ("Load('x', 'once')",)),
    ]
    assert "SB+fencembonceonces.litmus:18: WRITE_ONCE(*x, 1);" in acts["p0_18_WRITE_ONCE"].doc


def test_an_address_dependency_is_one_step_per_location_the_pointer_may_hold():
    """MP+onceassign+derefonce: r1 = READ_ONCE(*r0) after r0 = rcu_dereference(*p)."""
    spec = L.lower(P.parse_file(KEPT / "MP+onceassign+derefonce.litmus"))
    acc = accesses(spec)
    assert acc["p0_21_rcu_assign_pointer"] == ("Store('p', 'release')",)
    assert acc["p1_30_rcu_dereference"] == ("Load('p', 'once')",)
    assert acc["p1_31_READ_ONCE_r0_x"] == ("Load('x', 'once', dep=True)",)
    assert acc["p1_31_READ_ONCE_r0_y"] == ("Load('y', 'once', dep=True)",)
    assert "p1_29_rcu_read_lock" in acc and acc["p1_29_rcu_read_lock"] == ()


def test_locks_and_plain_accesses():
    spec = L.lower(P.parse_file(KEPT / "dep+plain.litmus"))
    acc = accesses(spec)
    assert acc["p0_20_plain"] == ("Load('z1', 'plain')", "Store('z2', 'plain')")
    assert acc["p0_21_if"] == ("Load('z2', 'plain')",)
    assert acc["p1_28_smp_store_release"] == ("Store('x', 'release')",)
    spec = L.lower(P.parse_file(KEPT / "MP+polocks.litmus"))
    acc = accesses(spec)
    assert acc["p0_23_spin_lock"] == () and acc["p0_25_spin_unlock"] == ()  # a Lock orders by itself


# ---- verdicts under sc ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("path", [f for f in FILES if f.stem not in NOT_MODELLED], ids=lambda p: p.stem)
def test_every_kept_test_is_never_under_sc(path):
    """Every LKMM "Sometimes" in the set is a weak-memory outcome and every "Never" is forbidden by SC too,
    so under sc each exists clause is unreachable (and a final state is reached, so it is not vacuous;
    RM-broken's filter passes no final state: P1 would see P0's store inside its own critical section, which
    is herd7's "Never 0 0", judged DEADLOCK as the test's header says)."""
    t = P.parse_file(path)
    lw = R.Lowered(str(path), t, L.lower(t), None)
    o = R.run_one(lw, "sc")
    assert (o.verdict, o.note) == (("DEADLOCK", "no final state passes the filter") if t.name == "RM-broken"
                                   else ("Never", ""))


SB_SC = """C SB-sc
{}
P0(int *x, int *y) { int r0; WRITE_ONCE(*x, 1); r0 = READ_ONCE(*y); }
P1(int *x, int *y) { int r0; WRITE_ONCE(*y, 1); r0 = READ_ONCE(*x); }
exists (0:r0=1 /\\ 1:r0=1)
"""


def test_an_sc_outcome_is_sometimes_and_the_only_one_is_always():
    assert sc_outcome(lowered(SB_SC)) == "Sometimes"
    assert sc_outcome(lowered(SB_SC.replace("exists (0:r0=1 /\\ 1:r0=1)",
                                            "exists (0:r0=1 \\/ 1:r0=1)"))) == "Always"
    assert sc_outcome(lowered(SB_SC.replace("exists (0:r0=1 /\\ 1:r0=1)", "forall (0:r0=1 \\/ 1:r0=1)"))) \
        == "Never"  # forall: the final state asked about is one where the condition fails
    filtered = SB_SC.replace("exists (0:r0=1 /\\ 1:r0=1)", "filter (0:r0=0)\nexists (1:r0=0)")
    assert sc_outcome(lowered(filtered)) == "Never"  # of the runs where P0 read 0, none has P1 read 0


ATOMICS = """C atomics
{ int x = 0; atomic_t v = ATOMIC_INIT(5); int *p = &x; }
P0(int *x, atomic_t *v) {
    int r0; int r1;
    atomic_inc(v);
    r0 = atomic_add_return(2, v);
    r1 = cmpxchg(x, 0, 1);
}
P1(int *x, atomic_t *v, int **p) {
    int r0; int r1; int *r2;
    r0 = xchg_relaxed(x, 7);
    r1 = atomic_fetch_sub_release(1, v);
    r2 = READ_ONCE(*p);
    if (r1 == 5) { WRITE_ONCE(*r2, 3); } else { smp_store_release(r2, 4); }
}
exists (%s)
"""


def test_atomics_xchg_cmpxchg_and_branches_on_sc():
    spec = lowered(ATOMICS % "x=1")
    acc = accesses(spec)
    assert acc["p0_5_atomic_inc"] == ("Rmw('v', 'unordered')",)
    assert acc["p0_6_atomic_add_return"] == ("Rmw('v', 'mb')",)
    assert acc["p0_7_cmpxchg"] == ("Rmw('x', 'mb')",)
    assert acc["p1_11_xchg_relaxed"] == ("Rmw('x', 'relaxed')",)
    assert acc["p1_12_atomic_fetch_sub_release"] == ("Rmw('v', 'release')",)
    assert acc["p1_14_WRITE_ONCE_r2_x"] == ("Store('x', 'once')",)
    assert acc["p1_14_smp_store_release_r2_x"] == ("Store('x', 'release')",)
    # v ends at 5 + 1 + 2 - 1 = 7 in every run. x never returns to 0 once P1's xchg stored 7, and P1 stores
    # 3 or 4 after it, so P0's cmpxchg(x, 0, 1) either runs first and is overwritten, or fails: x ends at 3
    # (P1's fetch_sub saw 5: it ran before P0's adds) or 4.
    assert sc_outcome(lowered(ATOMICS % "v=7 /\\ (x=3 \\/ x=4)")) == "Always"
    assert sc_outcome(lowered(ATOMICS % "x=1")) == "Never"
    assert sc_outcome(lowered(ATOMICS % "x=7")) == "Never"
    # P0's add_return gives 7 when P1's fetch_sub ran before it, 8 after: x=3 needs the sub first of all
    assert sc_outcome(lowered(ATOMICS % "x=3 /\\ 0:r0=7")) == "Sometimes"
    assert sc_outcome(lowered(ATOMICS % "x=3 /\\ 0:r0=8")) == "Never"
    # the xchg returns 1 only after P0's cmpxchg succeeded, so after all of P0: its add_return saw no sub
    assert sc_outcome(lowered(ATOMICS % "x=4 /\\ 0:r0=8 /\\ 1:r0=1 /\\ 0:r1=0")) == "Sometimes"
    assert sc_outcome(lowered(ATOMICS % "x=4 /\\ 0:r0=7 /\\ 1:r0=1")) == "Never"


TRYLOCK = """C trylock
{ spinlock_t l; }
P0(spinlock_t *l) { int r0; int r1; r0 = spin_trylock(l); r1 = spin_is_locked(l); if (r0) spin_unlock(l); }
P1(spinlock_t *l) { int r0; spin_lock(l); r0 = spin_is_locked(l); spin_unlock(l); }
exists (0:r0=%d /\\ 0:r1=%d /\\ 1:r0=1)
"""


def test_spinlocks_on_sc():
    assert sc_outcome(lowered(TRYLOCK % (1, 1))) == "Sometimes"
    assert sc_outcome(lowered(TRYLOCK % (0, 1))) == "Sometimes"  # P1 held it
    assert sc_outcome(lowered(TRYLOCK % (1, 0))) == "Never"  # P0 holds it while it asks


# ---- what is not read, and errors ----------------------------------------------------------------------------

def test_synchronize_rcu_is_a_named_not_modelled_outcome(tmp_path):
    text = """C RCU+sync
{}
P0(int *x, int *y) { int r0; int r1; rcu_read_lock(); r0 = READ_ONCE(*x); r1 = READ_ONCE(*y); rcu_read_unlock(); }
P1(int *x, int *y) { WRITE_ONCE(*x, 1); synchronize_rcu(); WRITE_ONCE(*y, 1); }
exists (0:r0=0 /\\ 0:r1=1)
"""
    f = tmp_path / "RCU+sync.litmus"
    f.write_text(text)
    with pytest.raises(L.Unsupported, match=r"RCU\+sync.litmus:4: synchronize_rcu\(\): RCU grace periods"):
        L.lower(P.parse_file(f))
    [row] = R.run_tests(R.prepare([f]), ["sc", "lkmm"])
    assert row.outcomes["sc"].verdict == "not modelled" and "grace periods" in row.outcomes["sc"].note
    assert row.agreement() == "-"


def test_a_load_that_c_might_skip_is_not_modelled():
    text = "C t\n{}\nP0(int *x) {\n\tint r0;\n\tif (r0 && READ_ONCE(*x))\n\t\tWRITE_ONCE(*x, 2);\n}\nexists (x=2)\n"
    with pytest.raises(L.Unsupported, match=r"t.litmus:5: a shared access on the right of &&"):
        L.lower(P.parse_text(text, "t.litmus"))


@pytest.mark.parametrize("text, message", [
    ("X foo\n{}\nP0(int *x) { WRITE_ONCE(*x, 1); }\nexists (x=1)\n", r"t.litmus:1: the first line must be 'C <name>'"),
    ("C t\n{}\nP0(int *x) { WRITE_ONCE(*x, 1) }\nexists (x=1)\n", r"t.litmus:3: expected ';' after the statement"),
    ("C t\n{}\nP0(int *x) { WRITE_ONCE(*x, 1); }\n", r"t.litmus:3: no final-state clause"),
    ("C t\n{}\nP0(int *x) { while (1) WRITE_ONCE(*x, 1); }\nexists (x=1)\n", r"t.litmus:3: 'while' \(loops\)"),
    ("C t\n(* Result: Never\n{}\nP0(int *x) { }\nexists (x=1)\n", r"t.litmus:2: a comment opened with '\(\*'"),
    ("C t\n{}\nP1(int *x) { }\nexists (x=1)\n", r"t.litmus:3: threads are numbered from P0"),
    ("C t\n{}\nP0(int x) { }\nexists (x=1)\n", r"t.litmus:3: P0's parameter x is not a pointer"),
    ("C t\n{}\nP0(int *x) { }\nexists (0:r0=1 /\\ x=1\n", r"t.litmus:4: expected '\)' to close"),
])
def test_parse_errors_name_the_line_and_what_is_wrong(text, message):
    with pytest.raises(SpecError, match=message):
        P.parse_text(text, "t.litmus")


@pytest.mark.parametrize("text, message", [
    ("C t\n{}\nP0(int *x) {\n\tsmp_mb_();\n}\nexists (x=1)\n", r"t.litmus:4: unknown call smp_mb_\(\).*smp_mb,"),
    ("C t\n{}\nP0(int *x) {\n\tWRITE_ONCE(*y, 1);\n}\nexists (x=1)\n",
     r"t.litmus:4: P0 uses y, which is neither a register it declares nor one of its parameters \(x\)"),
    ("C t\n{}\nP0(int *x) { WRITE_ONCE(*x, 1); }\nexists (0:r3=1)\n",
     r"t.litmus:4: exists names 0:r3, which P0 does not declare"),
    ("C t\n{}\nP0(int *x) {\n\tsmp_store_release(*x, 1);\n}\nexists (x=1)\n",
     r"t.litmus:4: smp_store_release\(\) takes the pointer itself, as in smp_store_release\(x, 1\)"),
    ("C t\n{}\nP0(int *x) {\n\tREAD_ONCE(*x, 1);\n}\nexists (x=1)\n", r"t.litmus:4: READ_ONCE\(\) takes 1 argument"),
    ("C t\n{}\nP0(int *x) {\n\tint r0;\n\tr1 = READ_ONCE(*x);\n}\nexists (x=1)\n",
     r"t.litmus:5: P0 assigns r1, which it does not declare"),
])
def test_lowering_errors_name_the_line_and_what_to_write(text, message):
    with pytest.raises(SpecError, match=message):
        L.lower(P.parse_text(text, "t.litmus"))


def test_cli_reports_a_malformed_test_with_exit_2(tmp_path):
    f = tmp_path / "bad.litmus"
    f.write_text("C bad\n{}\nP0(int *x) { WRITE_ONCE(*x, 1) }\nexists (x=1)\n")
    r = run_cli("litmus", str(f), "--memory", "sc")
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert r.stderr.strip() == f"error: {f}:3: expected ';' after the statement, found '}}'"
    r = run_cli("litmus", str(f), "--memory", "sc,arm")
    assert r.returncode == 2 and "the models are sc, tso, lkmm" in r.stderr
    r = run_cli("litmus", str(tmp_path / "none.litmus"))
    assert r.returncode == 2 and "no such file or directory" in r.stderr


def test_cli_runs_a_test_and_writes_the_table_between_its_markers(tmp_path):
    doc = tmp_path / "t.md"
    doc.write_text(f"# kept title\n\n{R.BEGIN}\nold\n{R.END}\n\nkept notes\n")
    r = run_cli("litmus", str(KEPT / "SB+poonceonces.litmus"), "--memory", "sc", "--table", str(doc))
    assert r.returncode == 0, r.stderr
    assert r.stdout.split()[:3] == ["SB+poonceonces", "LKMM=Sometimes", "sc=Never"]
    text = doc.read_text()
    assert text.startswith("# kept title\n") and text.endswith("kept notes\n") and "old" not in text
    assert "| `SB+poonceonces` | Sometimes | Never | 13 |" in text


# ---- the whole set under tso and lkmm: the table's columns, pinned ------------------------------------------

#: x86-TSO's answer for each kept test (herd7's x86-TSO, and the operational model of Owens, Sarkar and
#: Sewell): only store->load reordering with store-buffer forwarding, multicopy-atomic, locked RMWs and
#: smp_mb() (mfence) drain. So Sometimes exactly where the outcome needs a load to pass an earlier store of
#: its CPU and nothing else: SB, SB with forwarding, and R.
X86_TSO_SOMETIMES = {"SB+poonceonces", "SB+rfionceonce-poonceonces", "R+poonceonces"}

#: Where our lkmm differs from LKMM's stated result, with the direction (docs/litmus-table.md says why).
#: Pinned so that a change to checker/ordering shows here; update it with the table when the model rightly
#: changes. Empty since promises (LB+poonceonces, S+poonceonces) and the lock word spin_is_locked() reads
#: (MP+polockonce+poacquiresilsil): issue 29.
LKMM_DIFFERS: dict[str, str] = {}


@pytest.fixture(scope="module")
def table():
    return R.run_tests(R.prepare(R.default_paths()), ["lkmm", "tso", "sc"])


def test_the_lkmm_column_against_lkmm(table):
    differs = {r.name: r.agreement("lkmm") for r in table if r.agreement("lkmm") in ("stronger", "weaker")}
    assert differs == LKMM_DIFFERS
    tools = [r for r in table if Path(r.file).resolve().parent == KEPT]
    docs = [r for r in table if Path(r.file).resolve().parent == DOCS]
    assert R.summary(tools, "lkmm") == {"agrees": 35, "stronger": 0, "weaker": 0, "-": 0}
    # the atomic and locking tests all agree, RM-broken's DEADLOCK included; the two RCU tests are not modelled
    assert R.summary(docs, "lkmm") == {"agrees": 10, "stronger": 0, "weaker": 0, "-": 2}
    assert {r.name for r in docs if r.agreement("lkmm") == "-"} == set(NOT_MODELLED)
    for r in table:
        assert (r.outcomes["lkmm"].verdict == "not modelled") == (r.name in NOT_MODELLED), r.name
        assert r.outcomes["lkmm"].verdict in (*R.VERDICTS, "not modelled"), r.name


def test_the_tso_column_is_x86_tso(table):
    got = {r.name for r in table if r.outcomes["tso"].verdict in R.ALLOWED}
    assert got == X86_TSO_SOMETIMES
    assert all(r.outcomes["tso"].verdict in R.VERDICTS for r in table if r.name not in NOT_MODELLED)
    # TSO is stronger than LKMM everywhere it differs: never a false alarm
    tools = [r for r in table if Path(r.file).resolve().parent == KEPT]
    assert R.summary(tools, "tso") == {"agrees": 26, "stronger": 9, "weaker": 0, "-": 0}


def test_the_models_are_ordered_sc_tso_lkmm(table):
    """Whatever sc allows, tso allows, and whatever tso allows, lkmm allows (on this set)."""
    for r in table:
        if r.name in NOT_MODELLED:
            continue
        allowed = [r.outcomes[m].verdict in R.ALLOWED for m in ("sc", "tso", "lkmm")]
        assert allowed == sorted(allowed), r.name


def test_the_committed_table_is_the_one_the_command_writes(table, tmp_path):
    doc = ROOT / "docs" / "litmus-table.md"
    assert R.update_document(doc, R.render_markdown(table, ["lkmm", "tso", "sc"])) == doc.read_text()


def test_traces_show_the_buffered_stores_of_a_tso_witness():
    r = run_cli("litmus", str(KEPT / "SB+poonceonces.litmus"), "--memory", "tso", "--traces")
    assert r.returncode == 0, r.stderr  # no lkmm column: only the lkmm column is judged against LKMM
    lines = r.stdout.splitlines()
    assert lines[1] == "  SB+poonceonces under tso: the exists clause reached after 6 steps (shortest)"
    # the store waits in cpu0's buffer (its first slot holds x=1) until cpu0's flush writes memory
    assert lines[2].split()[:3] == ["1", "cpu0", "p0_17_WRITE_ONCE"]
    assert "sb_n[0]: 0 -> 1" in lines[2] and "sb_loc0[0]: - -> x" in lines[2] and "sb_val0[0]: 0 -> 1" in lines[2]
    assert "tso_memory[0]: 0 -> 1" in lines[6]
    # each step's call after its actor (cpu1 runs thread p1's role: `cpu1 (p1)`)
    calls = [re.match(r"\s*\d+\s+cpu\d+(?: \(\w+\))?\s+(\S+)", ln).group(1) for ln in lines[2:8]]
    assert calls == ["p0_17_WRITE_ONCE", "p0_18_READ_ONCE", "p1_25_WRITE_ONCE", "p1_26_READ_ONCE", "flush", "flush"]


def test_a_limit_is_inconclusive_never_a_verdict():
    r = run_cli("litmus", str(KEPT / "IRIW+poonceonces+OnceOnce.litmus"), "--max-states", "10")
    assert r.returncode == 3, r.stderr
    assert r.stdout.split()[:5] == ["IRIW+poonceonces+OnceOnce", "LKMM=Sometimes", "lkmm=inconclusive",
                                    "tso=inconclusive", "sc=inconclusive"]
    assert "the search stopped (max_states) before it saw every state" in r.stdout


def test_the_final_state_clauses_read_as_herd_writes_them():
    t = P.parse_text("C t\n{ x=1; int *p=&x; 0:r0=x; }\nP0(int *x, int **p) { int r1; r1 = READ_ONCE(*x); }\n"
                     "locations [0:r0; x]\nfilter (~(x=2) /\\ true)\n~exists (0:r1=1 \\/ x!=1 /\\ p=x)\n", "t.litmus")
    assert t.quantifier == "~exists" and t.locations == ((0, "r0"), (None, "x"))
    assert t.init == (P.InitItem(None, "x", None, False, 1, 2), P.InitItem(None, "p", "int", True, "x", 2),
                      P.InitItem(0, "r0", None, False, "x", 2))
    assert t.condition == P.Or((P.Atom(0, "r1", 1, False, 6),
                                P.And((P.Atom(None, "x", 1, True, 6), P.Atom(None, "p", "x", False, 6)), 6)), 6)
    assert t.filter == P.And((P.Not(P.Atom(None, "x", 2, False, 5), 5), P.Const(True, 5)), 5)
    # r1 reads x=1 in every run, and x stays 1: the condition's first disjunct holds in every final state
    assert sc_outcome(L.lower(t)) == "Always"


def test_json_has_every_model_with_its_states_and_witness():
    import json

    r = run_cli("litmus", str(KEPT / "MP+poonceonces.litmus"), "--format", "json")
    assert r.returncode == 0, r.stderr
    [row] = json.loads(r.stdout)
    assert (row["test"], row["lkmm_says"], row["agreement"]) == ("MP+poonceonces", "Sometimes", "agrees")
    got = {m: (o["verdict"], o["states"], bool(o["trace"])) for m, o in row["outcomes"].items()}
    # (lkmm: 50 states with one promise per thread, 14 without)
    assert got == {"lkmm": ("Sometimes", 50, True), "tso": ("Never", 23, False), "sc": ("Never", 13, False)}


ISA2_ACQUIRE_ONCE = """C ISA2+pooncerelease+poacquireonce+pombonce
(* Not a kernel test: ISA2+pooncerelease+poacquirerelease+poacquireonce with P1's release store made a
   WRITE_ONCE() and P2's acquire made smp_mb(). LKMM forbids it: P0's store propagates before its release
   (cumul-fence), P1's store is ordered after its acquire (ppo), P2's loads by smp_mb(): fre;prop;hb* is
   a cycle (the Observation axiom). *)
{}
P0(int *x, int *y) { WRITE_ONCE(*x, 1); smp_store_release(y, 1); }
P1(int *y, int *z) { int r0; r0 = smp_load_acquire(y); WRITE_ONCE(*z, 1); }
P2(int *x, int *z) { int r1; int r2; r1 = READ_ONCE(*z); smp_mb(); r2 = READ_ONCE(*x); }
exists (1:r0=1 /\\ 2:r1=1 /\\ 2:r2=0)
"""


def test_lkmm_a_store_after_an_acquire_is_cumulative():
    """An acquire raises wf by the view it acquired, so P1's WRITE_ONCE(z) carries P0's x=1 to P2 (LKMM:
    Never; was a false alarm, Sometimes). With P1's acquire made a READ_ONCE nothing orders P1's load before
    its store, and LKMM allows it: Sometimes."""
    spec = lowered(ISA2_ACQUIRE_ONCE)
    assert R.run_one(R.Lowered("t", spec.litmus, spec, None), "lkmm").verdict == "Never"
    once = lowered(ISA2_ACQUIRE_ONCE.replace("ISA2+pooncerelease+poacquireonce+pombonce",
                                             "ISA2+pooncerelease+poonceonce+pombonce")
                   .replace("r0 = smp_load_acquire(y);", "r0 = READ_ONCE(*y);"))
    assert R.run_one(R.Lowered("t", once.litmus, once, None), "lkmm").verdict == "Sometimes"


# ---- promises: load buffering, and what must stay forbidden ----------------------------------------------------

LB_DATAS = """C LB+datas

(*
 * Result: Never
 *)

{}

P0(int *x, int *y)
{
	int r0;

	r0 = READ_ONCE(*x);
	WRITE_ONCE(*y, r0);
}

P1(int *x, int *y)
{
	int r0;

	r0 = READ_ONCE(*y);
	WRITE_ONCE(*x, r0);
}

exists (0:r0=1 /\\ 1:r0=1)
"""


def lkmm_outcome(text: str, **params) -> R.Outcome:
    spec = lowered(text)
    return R.run_one(R.Lowered("t", spec.litmus, spec, None), "lkmm", **params)


def test_lkmm_load_buffering_needs_a_promise_that_no_dependency_breaks():
    """LB+poonceonces is Sometimes: its witness promises a store before the CPU's earlier load runs. With each
    store's value taken from the load (LB+datas, out of thin air) it is Never, as LKMM says (here an int
    register's store is not promised at all; tests/test_weak_memory.py has the Bool form, whose promise is
    made and cannot be fulfilled)."""
    lb = (KEPT / "LB+poonceonces.litmus").read_text()
    got = lkmm_outcome(lb)
    assert got.verdict == "Sometimes"
    assert any("promise(" in line for line in got.trace), got.trace
    assert lkmm_outcome(LB_DATAS).verdict == "Never"


def test_lkmm_a_control_dependency_keeps_a_promise_unfulfilled():
    """The store under `if (r0)` reads the branch's register, tainted by the load since the promise: the promise
    of y=1 cannot be fulfilled, so LB with a control dependency and smp_mb() stays Never (LKMM: Never), while
    LB+poonceonces is Sometimes."""
    ctrl = (KEPT / "LB+fencembonceonce+ctrlonceonce.litmus").read_text()
    no_fence = ctrl.replace("\tsmp_mb();\n", "")
    assert lkmm_outcome(ctrl).verdict == "Never"
    # without P1's fence, P1 promises x=1 and P0's control dependency alone orders nothing of P1: Sometimes
    assert lkmm_outcome(no_fence).verdict == "Sometimes"


def test_lkmm_spin_is_locked_reads_a_lock_word_that_may_be_stale():
    """spin_is_locked() loads the lock word spin_lock() writes (lock.cat's LKW, unordered) and spin_unlock()
    releases: P1 may see P0's x=1 and still read the lock free (LKMM: Sometimes); with
    smp_mb__after_spinlock() the lock word is ordered before x=1 (Never)."""
    rel = lowered((KEPT / "MP+polockonce+poacquiresilsil.litmus").read_text())
    assert "lo_word" in info(rel).vars
    assert lkmm_outcome((KEPT / "MP+polockonce+poacquiresilsil.litmus").read_text()).verdict == "Sometimes"
    assert lkmm_outcome((KEPT / "MP+polockmbonce+poacquiresilsil.litmus").read_text()).verdict == "Never"


@pytest.mark.differential
@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_lkmm_engines_agree_on_every_kept_test(path):
    """Promises, taint and the lock word are expressions over flat ghosts: the compiled explorer runs every
    lowered test under lkmm (with the litmus command's bounds) state for state as the interpreter does."""
    from checker.explore import explore
    from checker.language.compile import Model
    from checker.ordering.declare import MEMORY

    t = P.parse_file(path)
    if t.name in NOT_MODELLED:
        return
    spec = L.lower(t)
    if "memory" not in info(spec).params:
        return
    params = {"memory": MEMORY.lkmm, **{k: v for k, v in R.bounds(spec).items() if k != "sb_depth"}}
    a = explore(Model(spec(**params)), engine="compiled")
    b = explore(Model(spec(**params)), engine="interpreted")
    assert a.engine == "compiled", a.engine_note
    assert (a.states, a.transitions, a.depth, a.verdicts) == (b.states, b.transitions, b.depth, b.verdicts)
