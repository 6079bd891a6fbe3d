"""The throughput model: MVA's limits, the calibration's honesty, and the command line."""
import json

import pytest

from checker.cli import main
from checker.models.calibration_check import check_calibration_file
from checker.models.queueing import mva
from checker.models.stack_cache import StackCache, clone_burst
from checker.models.throughput import CALIBRATION, load, validation
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
    assert main(["throughput", "--workload", "doexec-static", "--cores", "16,26,64"]) == 0
    out = capsys.readouterr().out
    assert "   64* " in out and "   26  " in out
    assert "s000-after" in out and "held out" in out and "free parameters for 15 figures" in out


def test_throughput_json_has_points_speedups_and_bottlenecks(capsys):
    assert main(["throughput", "--workload", "doexec-shared", "--cores", "20,64", "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    pts = {(p["variant"], p["cores"]): p for p in doc["points"]}
    assert pts[("batched", 20)]["speedup"] == pytest.approx(1.04, rel=1e-6)
    assert pts[("batched", 64)]["extrapolated"] and not pts[("batched", 20)]["extrapolated"]
    assert pts[("unbatched", 64)]["bottleneck"] == "i_mmap_rwsem"


def test_throughput_csv(capsys):
    assert main(["throughput", "--workload", "clone", "--cores", "32", "--format", "csv"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("workload,variant,cores,ops_per_s") and len(lines) == 3


@pytest.mark.parametrize("argv, message", [
    (["--cores", "0..300"], "outside 1..256"),
    (["--cores", "many"], "not a whole number"),
    (["--cores", "64..8"], "range is empty"),
    (["--workload", "lmbench-fork", "--variant", "batched"], "has the variants grouped, split, lazy"),
    (["--plot", "out.pdf"], "must end in .png or .svg"),
])
def test_throughput_bad_input_exits_2_with_a_reason(capsys, argv, message):
    assert main(["throughput", *argv]) == 2
    assert message in capsys.readouterr().err


def test_plot_without_matplotlib_says_how_to_install_it(capsys, tmp_path):
    try:
        import matplotlib  # noqa: F401
        pytest.skip("matplotlib is installed")
    except ImportError:
        pass
    assert main(["throughput", "--plot", str(tmp_path / "out.png")]) == 2
    assert "pip install 'matplotlib>=3.5'" in capsys.readouterr().err
    assert not (tmp_path / "out.png").exists()


def test_doexec_batch_histograms_and_the_seed_004_comparison(capsys):
    from checker.models.workloads import batch_histograms
    h = batch_histograms()
    assert h["dynamic"] == {"batch_sizes": {4: 1, 5: 2}, "acquisitions_unbatched": 14, "acquisitions_batched": 3}
    assert h["static"]["batch_sizes"] == {4: 1}
    assert main(["throughput", "--workload", "doexec-shared", "--cores", "20"]) == 0
    assert "a whole kernel build, not doexec" in capsys.readouterr().out
