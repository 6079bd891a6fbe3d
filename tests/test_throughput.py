# SPDX-License-Identifier: GPL-2.0-only
"""The throughput model: MVA's limits, the calibration's honesty, and the command line."""
import json
import re

import sys

import pytest

from checker.cli import main
from checker.models.calibration_check import check_calibration_file
from checker.models.queueing import mva
from checker.models.stack_cache import StackCache, clone_burst
from checker.models.throughput import CALIBRATION, load, validation, validation_of
from checker.models.vma_unlink import elf_layout, histogram, unlink_batched, unlink_unbatched


def test_mva_one_worker_is_the_sum_of_its_times_and_many_saturate_the_bottleneck():
    assert mva(1, 3.0, {"a": 1.0, "b": 0.5}).throughput == pytest.approx(1 / 4.5)
    many = mva(200, 3.0, {"a": 1.0, "b": 0.5})
    assert many.throughput == pytest.approx(1.0, rel=1e-6) and many.bottleneck == "a"
    assert mva(2, 0.0, {"a": 1.0}).throughput == pytest.approx(1.0)  # two workers share one lock


def test_batching_coalesces_a_run_of_five_same_file_vmas_into_one_acquisition():
    layout = elf_layout("bin", 4) + [None] + elf_layout("ld.so") + [None] + elf_layout("libc.so")
    sizes, costs = unlink_batched(layout)
    assert sizes == [4, 5, 5]
    assert sum(c.locks["i_mmap_rwsem"] for c in costs.values()) == 3
    assert sum(c.locks["i_mmap_rwsem"] for c in unlink_unbatched(layout).values()) == 14
    assert unlink_batched(["f"] * 11)[0] == [8, 3]  # the batch array holds 8
    assert histogram([layout, layout]) == {4: 2, 5: 4}


def test_stack_cache_serves_two_per_cpu_and_the_change_saves_one_lookup_per_miss():
    before, after = StackCache(4, find_vm_area=True), StackCache(4, find_vm_area=False)
    for cache in (before, after):
        clone_burst(cache, 0, 10)
    b, a = clone_burst(before, 0, 10), clone_burst(after, 0, 10)
    misses = 10 - 2
    assert b.locks["vmap_area_lock"] - a.locks["vmap_area_lock"] == misses


def test_calibration_figures_are_reproduced_and_held_out_ratios_are_within_ten_percent():
    rows, ratios = validation()
    cal = set(load()["calibrate_on"])
    assert {r.id for r in rows if r.calibrated} == cal
    for r in rows:
        if r.calibrated:
            assert abs(r.error) < 1e-6, r
    held = [r for r in ratios if not r.calibrated]
    assert len(held) == 6
    assert max(abs(r.error) for r in held) < 0.10, held


def test_calibration_file_names_only_known_figures():
    assert check_calibration_file(CALIBRATION) == []


def test_throughput_text_marks_extrapolations_and_calibration(capsys):
    assert main(["throughput", "--workload", "doexec-static", "--cores", "16,26,64", "--no-band"]) == 0
    out = capsys.readouterr().out
    assert "   64* " in out and "   26  " in out
    assert "s000-after" in out and "held out" in out and "free parameters for 15 figures" in out


def test_throughput_json_has_points_speedups_and_bottlenecks(capsys):
    assert main(["throughput", "--workload", "doexec-shared", "--cores", "20,64", "--format", "json",
                 "--no-band"]) == 0
    doc = json.loads(capsys.readouterr().out)
    pts = {(p["variant"], p["cores"]): p for p in doc["points"]}
    assert pts[("batched", 20)]["speedup"] == pytest.approx(1.04, rel=1e-6)
    assert pts[("batched", 64)]["extrapolated"] and not pts[("batched", 20)]["extrapolated"]
    assert pts[("unbatched", 64)]["bottleneck"] == "i_mmap_rwsem"


def test_throughput_csv(capsys):
    assert main(["throughput", "--workload", "clone", "--cores", "32", "--format", "csv", "--no-band"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("workload,variant,cores,smt,possible_cpus,workers,ops_per_s")
    assert lines[1].endswith("h_vmap=s003-after;Z[clone]=s003-before") and len(lines) == 3


@pytest.mark.parametrize("argv, message", [
    (["--cores", "0..300"], "outside 1..256"),
    (["--cores", "many"], "not a whole number"),
    (["--cores", "64..8"], "range is empty"),
    (["--workload", "lmbench-fork", "--variant", "batched"], "has the variants grouped, split, lazy-z, lazy"),
    (["--plot", "out.pdf"], "must end in .png or .svg"),
])
def test_throughput_bad_input_exits_2_with_a_reason(capsys, argv, message):
    assert main(["throughput", *argv]) == 2
    assert message in capsys.readouterr().err


def test_plot_without_matplotlib_says_how_to_install_it(capsys, tmp_path, monkeypatch):
    # as if matplotlib were not installed (None in sys.modules makes its import fail), so that this runs
    # where the plot extra is installed too (CI installs every extra)
    for name in [m for m in sys.modules if m == "matplotlib" or m.startswith("matplotlib.")] + ["matplotlib"]:
        monkeypatch.setitem(sys.modules, name, None)
    assert main(["throughput", "--plot", str(tmp_path / "out.png")]) == 2
    assert "pip install 'matplotlib>=3.5'" in capsys.readouterr().err
    assert not (tmp_path / "out.png").exists()


def test_doexec_batch_histograms_and_the_seed_004_comparison(capsys):
    from checker.models.workloads import batch_histograms
    h = batch_histograms()
    assert h["dynamic"] == {"batch_sizes": {4: 1, 5: 2}, "acquisitions_unbatched": 14, "acquisitions_batched": 3}
    assert h["static"]["batch_sizes"] == {4: 1}
    assert main(["throughput", "--workload", "doexec-shared", "--cores", "20", "--no-band"]) == 0
    assert "a whole kernel build, not doexec" in capsys.readouterr().out


# -- the machine and the user's own figures (issue 19) ------------------------------------------------
from checker.models.throughput import Machine, calibration, figure_machine, solve  # noqa: E402


def test_possible_cpus_scale_per_cpu_work_and_workers_scale_throughput():
    cal = calibration()
    fork = [solve("lmbench-fork", "grouped", Machine(1, possible_cpus=n), cal.params, cal.priors).latency_us
            for n in (64, 128, 256)]
    assert fork[0] < fork[1] < fork[2]  # check_mm's sums and the memsets walk every possible CPU
    split = [solve("lmbench-fork", "split", Machine(1, possible_cpus=n), cal.params, cal.priors).latency_us
             for n in (64, 256)]
    # split rss walks no CPU for its counters; only mm_cid's memset grows
    assert 0 < split[1] - split[0] < (fork[2] - fork[0]) / 3
    few = solve("doexec-static", "grouped", Machine(64, workers=8), cal.params, cal.priors)
    many = solve("doexec-static", "grouped", Machine(64), cal.params, cal.priors)
    assert (few.workers, many.workers, few.possible_cpus) == (8, 64, 64)
    assert few.ops_per_s < many.ops_per_s


def test_smt_siblings_share_a_core_and_oversubscription_time_shares():
    pri = {"smt_yield": 1.25}
    assert Machine(8, smt=2).slowdowns(False, pri) == (1.0, 1.0)  # one worker per core: siblings idle
    smt, share = Machine(8, smt=2, workers=16).slowdowns(False, pri)
    assert (smt, share) == (pytest.approx(2 / 1.25), 1.0)
    assert Machine(8, workers=32).slowdowns(False, pri) == (1.0, 4.0)
    assert Machine(8, smt=2).cpus() == 16 and Machine(8, smt=2, possible_cpus=64).cpus() == 64


def test_clone_figures_ran_100_workers_on_32_cores():
    """stress-ng --clone 100 (seed 003): the calibration's worker count is read, not a dead prior."""
    cal = calibration()
    f = next(x for x in cal.figures if x["id"] == "s003-before")
    m = figure_machine(f, cal.priors)
    assert (m.cores, m.population(False)) == (32, 100)
    assert "clone_workers_per_core" not in cal.priors
    assert solve("clone", "find_vm_area", m, cal.params, cal.priors).ops_per_s == pytest.approx(3500, rel=1e-6)


def test_base_figure_solves_z_on_the_users_machine_and_leaves_the_seeds_alone(capsys):
    argv = ["throughput", "--workload", "doexec-shared", "--cores", "64", "--smt", "2", "--possible-cpus", "256",
            "--base", "unbatched@64=80000", "--format", "json", "--no-band"]
    assert main(argv) == 0
    doc = json.loads(capsys.readouterr().out)
    pts = {(p["variant"], p["cores"]): p for p in doc["points"]}
    assert pts[("unbatched", 64)]["ops_per_s"] == pytest.approx(80000, rel=1e-6)
    assert pts[("unbatched", 64)]["possible_cpus"] == 256
    fits = {f["parameter"]: f for f in doc["fits"]}
    assert fits["Z[doexec-shared]"]["figure"] == "--base unbatched@64" and fits["Z[doexec-shared]"]["source"] == "--base"
    assert fits["h_immap"]["figure"] == "s004-after"
    figs = {r["id"]: r for r in doc["validation"]["figures"]}
    assert abs(figs["s004-before"]["error"]) < 1e-6  # the seed machine keeps its own Z
    assert "Z[doexec-shared]=--base unbatched@64" in pts[("batched", 64)]["fitted_on"]


def test_a_users_calibration_file_fits_what_it_names(tmp_path, capsys):
    user = {"figures": [
        {"id": "mine-before", "workload": "doexec-static", "variant": "per-counter", "cores": 48, "value": 120000,
         "unit": "ops/s", "smt": 2},
        {"id": "mine-after", "workload": "doexec-static", "variant": "grouped", "cores": 48, "value": 170000,
         "unit": "ops/s", "smt": 2}],
        "ratios": [{"id": "mine grouped/per-counter", "num": "mine-after", "den": "mine-before"}],
        "calibrate_on": ["mine-before"], "fits": {"Z[doexec-static]": "mine-before"}}
    path = tmp_path / "mine.json"
    path.write_text(json.dumps(user))
    assert main(["throughput", "--cores", "48", "--smt", "2", "--calibration", str(path), "--no-band",
                 "--width", "250"]) == 0  # wide: the tmp path stays on its line
    out = capsys.readouterr().out
    assert "Z[doexec-static]     =" in out and f"fitted on mine-before ({path})" in out
    assert "mine grouped/per-counter" in out and "held out" in out
    cal = calibration(user=str(path))
    rows = {r.id: r for r in validation_of(cal)[0]}
    assert abs(rows["mine-before"].error) < 1e-6 and not rows["mine-after"].calibrated


@pytest.mark.parametrize("doc, message", [
    ({"figures": []}, "no 'calibrate_on'"),
    ({"figures": [{"id": "a", "workload": "nope", "variant": "x", "cores": 1, "value": 1, "unit": "ops/s"}],
      "calibrate_on": ["a"], "fits": {}}, "no workload 'nope'; the workloads are"),
    ({"figures": [{"id": "a", "workload": "clone", "variant": "vmalloc_area", "cores": 8, "value": 100,
                   "unit": "ops/s"}], "calibrate_on": ["a"], "fits": {"h_vmap": "a"}},
     "Z[clone] is not fitted there"),
    ({"figures": [], "calibrate_on": [], "fits": {"h_bogus": "a"}}, "which is not in calibrate_on"),
])
def test_a_bad_calibration_file_exits_2_naming_the_problem(tmp_path, capsys, doc, message):
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(doc))
    assert main(["throughput", "--cores", "8", "--calibration", str(path)]) == 2
    assert message in capsys.readouterr().err


@pytest.mark.parametrize("argv, message", [
    (["--base", "fast"], "must be numbers"),
    (["--base", "nope@8=100"], "has the variants"),
    (["--base", "grouped=100"], "VARIANT@CORES=VALUE"),
    (["--workers", "0"], "1..4096"),
    (["--base", "1e12"], "out of reach"),
])
def test_bad_machine_or_base_exits_2(capsys, argv, message):
    assert main(["throughput", "--cores", "8", *argv]) == 2
    assert message in capsys.readouterr().err


# -- queueing: the nested lock and two classes -----------------------------------------------------
from checker.models.queueing import (launch_throughput, mva_exact_multiclass, product_form_throughput,  # noqa: E402
                                     schweitzer_bard)


def test_a_nested_lock_with_no_other_users_is_plain_mva_and_one_worker_is_the_sum():
    plain = mva(16, 10.0, {"outer": 0.5 + 2.0, "other": 1.0})
    nested = mva(16, 10.0, {"outer": 0.5, "other": 1.0}, {("outer", "inner"): 2.0})
    assert nested.throughput == pytest.approx(plain.throughput, rel=1e-12)
    one = mva(1, 10.0, {"outer": 0.5, "inner": 1.0}, {("outer", "inner"): 2.0})
    assert one.throughput == pytest.approx(1 / 13.5, rel=1e-12)  # nobody to wait for
    many = mva(256, 1.0, {"outer": 0.1, "inner": 1.0}, {("outer", "inner"): 1.0})
    assert many.throughput <= 1 / 2.0 + 1e-9  # the inner lock is held 2 per iteration: its capacity
    # the outer lock is held through the wait for the inner one: longer than its own and nested sections
    assert many.utilisation["outer"] > many.throughput * (0.1 + 1.0) * 1.2


def test_exact_multiclass_mva_is_the_product_form_closed_form():
    pops, think = {"parent": 1, "child": 3}, {"parent": 4.0, "child": 9.0}
    demands = {"parent": {"a": 1.0, "b": 0.5}, "child": {"a": 2.0, "b": 0.2}}
    exact = mva_exact_multiclass(pops, think, demands)
    closed = product_form_throughput(pops, think, demands)
    for c in pops:
        assert exact.throughput[c] == pytest.approx(closed[c], rel=1e-12)
    # one class: the single-class recursion
    assert mva_exact_multiclass({"x": 5}, {"x": 3.0}, {"x": {"a": 1.0}}).throughput["x"] == \
        pytest.approx(mva(5, 3.0, {"a": 1.0}).throughput, rel=1e-12)


def test_schweitzer_bard_is_within_eight_percent_of_exact():
    pops, think = {"parent": 1, "child": 6}, {"parent": 4.0, "child": 9.0}
    demands = {"parent": {"a": 1.0, "b": 0.5}, "child": {"a": 2.0, "b": 0.2}}
    exact = mva_exact_multiclass(pops, think, demands).throughput
    approx = schweitzer_bard({k: float(v) for k, v in pops.items()}, think, demands).throughput
    for c in pops:
        assert approx[c] == pytest.approx(exact[c], rel=0.08)  # measured: 6.2% (parent), 1.0% (children)
    one = {"parent": 1, "child": 1}
    assert schweitzer_bard({k: 1.0 for k in one}, think, demands).throughput["parent"] == pytest.approx(
        mva_exact_multiclass(one, think, demands).throughput["parent"], rel=0.02)


def test_launch_without_contention_is_bounded_by_the_parent_or_by_the_children():
    x, _, alive = launch_throughput(8, (10.0, {}, {}), (30.0, {}, {}))
    assert x == pytest.approx(1 / 10.0, rel=1e-6) and alive == pytest.approx(3.0, rel=1e-6)  # Little's law
    x, _, alive = launch_throughput(2, (10.0, {}, {}), (30.0, {}, {}))
    assert x == pytest.approx(2 / 30.0, rel=1e-6) and alive == 2  # two slots: the children bound it


# -- the new workloads and variants ------------------------------------------------------------------
def test_fork_many_borrows_lmbench_forks_z_and_says_so(capsys):
    assert main(["throughput", "--workload", "fork-many", "--cores", "26,256", "--variant", "per-counter,grouped",
                 "--format", "json", "--no-band"]) == 0
    doc = json.loads(capsys.readouterr().out)
    fits = {f["parameter"]: f for f in doc["fits"]}
    assert fits["Z[fork-many]"]["source"] == "borrowed from Z[lmbench-fork]"
    assert fits["Z[fork-many]"]["figure"] == "s001-fork-base"
    pts = {(p["variant"], p["cores"]): p for p in doc["points"]}
    assert pts[("per-counter", 256)]["bottleneck"] in ("pcpu_lock", "pcpu_alloc_mutex")
    assert pts[("grouped", 256)]["speedup"] > 2  # 2 allocations and frees per fork instead of 5


def test_page_fault_and_open_missing_need_the_users_own_base(capsys):
    assert main(["throughput", "--workload", "page-fault", "--cores", "8"]) == 2
    assert "give your own --base VALUE" in capsys.readouterr().err


def test_eager_b_pays_irq_save_and_c_a_local_cmpxchg_per_fault():
    cal = calibration(base={"id": "b", "workload": "page-fault", "variant": "eager-B", "cores": 8,
                            "value": 4e6, "unit": "ops/s"})
    pri = cal.priors
    from checker.models.workloads import iteration
    lat = {v: solve("page-fault", v, Machine(1), cal.params, pri).latency_us for v in ("eager-A", "eager-B", "eager-C")}
    cost = {v: iteration("page-fault", v, 1, pri) for v in lat}

    def priced(c):
        return (c.irq_saves * pri["t_irq_save"] + c.local_ops * pri["t_local"]
                + c.local_cmpxchg * pri["t_local_cmpxchg"]) / pri["fault_pages"]
    # per fast-path fault: B = 2 local ops + an irq save/restore; C = 1 local op + a cmpxchg; A = 4 local ops
    assert cost["eager-B"].irq_saves - cost["eager-C"].irq_saves > 0.9 * pri["fault_pages"]
    assert cost["eager-C"].local_cmpxchg > 0.9 * pri["fault_pages"] and cost["eager-B"].local_cmpxchg == 0
    for v in ("eager-A", "eager-B"):
        assert lat[v] - lat["eager-C"] == pytest.approx(priced(cost[v]) - priced(cost["eager-C"]), rel=1e-6)
    assert lat["eager-B"] > lat["eager-A"] > lat["eager-C"]


def test_open_missing_nr_files_never_folds_but_an_atomic_saturates_its_line():
    from checker.models.workloads import NR_FILES_LOCK, iteration
    from checker.models.throughput import load as _load
    pri = _load()["priors"]
    for v in ("eager-A", "eager-B", "eager-C"):
        assert iteration("open-missing", v, 64, pri).locks[NR_FILES_LOCK] == 0  # inc then dec: |local| < batch
    cal = calibration(base={"id": "b", "workload": "open-missing", "variant": "eager-C", "cores": 8,
                            "value": 8e6, "unit": "ops/s"})
    p = solve("open-missing", "atomic", Machine(256), cal.params, cal.priors)
    assert p.bottleneck == "line:nr_files"
    assert p.ops_per_s <= 1e6 / (2 * cal.priors["t_xfer"]) * (1 + 1e-9)


def test_lazy_page_faults_after_the_switch_are_local():
    from checker.models.workloads import iteration
    from checker.models.throughput import load as _load
    pri = _load()["priors"]
    lazy, atomic = iteration("page-fault", "lazy", 8, pri), iteration("page-fault", "atomic", 8, pri)
    pages = pri["fault_pages"]
    assert lazy.pcpu_allocs == 0 and lazy.shared_rmw == atomic.shared_rmw - pages - 1  # no LOCKed add per fault


# -- the user's machine: --measure, and the sensitivity band ---------------------------------------
def test_measure_without_a_base_exits_2_saying_why(capsys):
    assert main(["throughput", "--cores", "8", "--measure", "--no-band"]) == 2
    assert "add --base VALUE" in capsys.readouterr().err


def test_measured_figures_serve_only_this_machines_predictions():
    from checker.models.measure import usable
    figs = {"cpus": 2, "t_local": 0.001, "t_rmw": 0.03, "t_lock": 0.03, "t_lock_global": 0.2, "t_xfer": 0.15,
            "t_shared_rmw": 0.05, "t_cpu_line": 0.08}
    got = usable(figs)
    assert got["dropped"] == {} and got["priors"]["t_xfer"] == 0.15
    assert set(usable(dict(figs, t_xfer=12.0))["dropped"]) == {"t_lock_global", "t_xfer"}  # threads not concurrent
    base = {"id": "--base grouped@64", "workload": "doexec-static", "variant": "grouped", "cores": 64,
            "value": 300000, "unit": "ops/s"}
    plain, mine = calibration(base=base), calibration(base=base, machine_priors=got["priors"])
    assert mine.params["h_pcpu"] == plain.params["h_pcpu"]  # the seeds' fits are the seeds'
    seed_rows = {r.id: r for r in validation_of(mine)[0]}
    assert all(abs(seed_rows[f].error) < 1e-9 for f in ("s000-before", "s000-after", "s001-fork-base"))
    assert mine.params["Z"]["doexec-static"] != plain.params["Z"]["doexec-static"]  # this machine's Z
    p = solve("doexec-static", "grouped", Machine(64), mine.params, mine.priors)
    assert p.ops_per_s == pytest.approx(300000, rel=1e-6)


def test_measure_builds_and_runs_with_the_system_compiler():
    import shutil
    from checker.models.measure import measure
    if not (shutil.which("cc") or shutil.which("gcc")):
        pytest.skip("no C compiler (cc or gcc): apt-get install gcc")
    m = measure()
    for k in ("t_local", "t_rmw", "t_lock", "t_cpu_line"):
        assert m["figures"][k] > 0 and k in m["priors"]
    assert m["figures"]["cpus"] >= 1


def test_every_prior_range_gives_a_band_that_contains_the_prediction():
    from checker.models.throughput import bands, load as _load
    b = bands("doexec-static", ("per-counter", "grouped"), [Machine(26), Machine(64)])
    cal = calibration()
    for c in (26, 64):
        p = solve("doexec-static", "grouped", Machine(c), cal.params, cal.priors).ops_per_s
        assert b[("grouped", c)]["ops"].low <= p <= b[("grouped", c)]["ops"].high
        assert set(b[("grouped", c)]["ops"].by_prior) == set(_load()["prior_ranges"])
    # at the calibration point the fitted figures are reproduced at every end of every range
    assert b[("grouped", 26)]["ops"].low == pytest.approx(186061.81, rel=1e-6)
    assert b[("grouped", 64)]["ops"].high > b[("grouped", 64)]["ops"].low  # extrapolation is uncertain


def test_plots_have_a_speedup_panel_and_bars_for_one_process(tmp_path, capsys):
    pytest.importorskip("matplotlib", reason="matplotlib is the plot extra: pip install '.[plot]'")
    for w, name in (("doexec-shared", "cores.png"), ("lmbench-fork", "bars.png")):
        out = tmp_path / name
        assert main(["throughput", "--workload", w, "--cores", "1,20,64", "--no-band", "--plot", str(out)]) == 0
        assert out.stat().st_size > 10000
    import matplotlib.image as mpimg
    assert mpimg.imread(str(tmp_path / "cores.png")).shape[1] > 1000  # two panels side by side


def test_launch_names_what_limits_it_the_serial_parent_or_the_children():
    from checker.models.throughput import CHILD_SLOTS, SERIAL_PARENT
    cal = calibration()
    few = solve("launch", "grouped", Machine(64, workers=2), cal.params, cal.priors)
    many = solve("launch", "grouped", Machine(64), cal.params, cal.priors)
    assert (few.bottleneck, many.bottleneck) == (CHILD_SLOTS, SERIAL_PARENT)
    assert few.ops_per_s < many.ops_per_s
    # a serial parent's fork walks every possible CPU: more of them, fewer launches per second
    big = solve("launch", "grouped", Machine(64, possible_cpus=512), cal.params, cal.priors)
    assert big.ops_per_s < many.ops_per_s


# -- output people read and tools take (issue 30) ---------------------------------------------------
def test_the_text_fits_the_width_asked_with_a_table_per_group_of_variants(capsys):
    assert main(["throughput", "--workload", "doexec-static", "--cores", "1,26,64", "--no-band", "--width", "72"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert max(map(len, lines)) <= 72
    heads = [ln.split() for ln in lines if ln.startswith(" cores")]
    names = [v for h in heads for v in h[1:]]
    variants = list(__import__("checker.models.workloads", fromlist=["WORKLOADS"]).WORKLOADS["doexec-static"].variants)
    assert names == variants * 2  # ops/s and speedups, then the bottlenecks: each variant once in each
    assert len(heads) > 2  # eight variants do not fit one 72-column table
    row26 = " ".join(ln for ln in lines if ln.startswith("   26 "))
    assert "133,543.6" in row26 and "186,061.8 x1.3933" in row26  # the seed's figures, the speedup beside
    assert main(["throughput", "--workload", "doexec-static", "--cores", "26", "--no-band"]) == 0
    assert max(map(len, capsys.readouterr().out.splitlines())) <= 100  # not a terminal: 100 columns
    assert main(["throughput", "--width", "30", "--no-band"]) == 2
    assert "draw at least 40 columns wide" in capsys.readouterr().err


def _fake_bands(workload, variants, machines, *rest):
    """A band with known ends (the real one re-fits twenty calibrations: see the test above)."""
    from checker.models.throughput import Band
    out = {}
    for v in variants:
        for m in machines:
            out[(v, m.cores)] = {"ops": Band(1000.0 * m.cores, 2000.0 * m.cores, "t_cpu_line", {}),
                                 "speedup": Band(1.0, 1.5 if v != variants[0] else 1.0, "t_lru_page", {})}
    return out


def test_json_and_csv_carry_the_sensitivity_band(capsys, monkeypatch):
    import csv as _csv
    import checker.throughput as tp
    monkeypatch.setattr(tp, "bands", _fake_bands)
    assert main(["throughput", "--workload", "doexec-shared", "--cores", "20,64", "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    p = {(x["variant"], x["cores"]): x for x in doc["points"]}[("batched", 64)]
    assert (p["ops_per_s_low"], p["ops_per_s_high"], p["ops_prior"]) == (64000.0, 128000.0, "t_cpu_line")
    assert (p["speedup_low"], p["speedup_high"], p["speedup_prior"]) == (1.0, 1.5, "t_lru_page")
    assert p["latency_us_low"] == pytest.approx(1e6 / 128000) and "t_cpu_line" in doc["band_prior_ranges"]
    assert main(["throughput", "--workload", "doexec-shared", "--cores", "20", "--format", "csv"]) == 0
    rows = list(_csv.DictReader(capsys.readouterr().out.splitlines()))
    assert [(r["variant"], r["ops_per_s_low"], r["ops_per_s_high"], r["speedup_prior"]) for r in rows] == [
        ("unbatched", "20000.0", "40000.0", "t_lru_page"), ("batched", "20000.0", "40000.0", "t_lru_page")]
    assert main(["throughput", "--workload", "doexec-shared", "--cores", "20", "--format", "csv", "--no-band"]) == 0
    (row,) = list(_csv.DictReader(capsys.readouterr().out.splitlines()))[1:]
    assert row["ops_per_s_low"] == "" and row["fitted_on"]  # no band asked: empty, never made up


def test_the_plot_merges_coinciding_variants_and_draws_speedup_on_a_linear_axis(tmp_path, monkeypatch):
    pytest.importorskip("matplotlib", reason="matplotlib is not installed: pip install '.[plot]'")
    import matplotlib.figure
    from checker.throughput import coinciding
    figs = []
    monkeypatch.setattr(matplotlib.figure.Figure, "savefig", lambda self, *a, **k: figs.append(self))
    assert main(["throughput", "--workload", "doexec-static", "--cores", "1,26,64,256", "--no-band", "--plot",
                 str(tmp_path / "p.png")]) == 0
    ops, speed = figs[0].axes
    legend = [t.get_text() for t in ops.get_legend().get_texts()]
    assert "lazy = lazy-z = split = atomic" in legend and len(legend) == 5  # eight variants, five lines
    assert [t.get_text() for t in speed.get_legend().get_texts()] == legend[1:]
    assert speed.get_yscale() == "linear" and ops.get_yscale() == "log"
    words = [t.get_text() for ax in figs[0].axes for t in ax.texts]
    assert any("grouped, measured (fitted)" in w for w in words)
    assert not any(re.search(r"\bs\d{3}-|\d{3}_[0-9a-f]{8}", w) for w in words + legend)  # no seed ids
    assert coinciding(("a", "b", "c"), {"a": [1.0, 2.0], "b": [1.004, 2.0], "c": [1.0, 2.1]}) == [["a", "b"], ["c"]]
