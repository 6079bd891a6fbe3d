"""Examples run: README's first spec and the guide's code blocks (STYLE 11)."""
import json
import re

from conftest import ROOT


def blocks(path):
    return re.findall(r"```python\n(.*?)```", (ROOT / path).read_text(), re.S)


def test_readme_first_spec_verifies(cli, tmp_path):
    (tmp_path / "tiny.py").write_text(blocks("README.md")[0])
    r = cli("verify", str(tmp_path / "tiny.py"))
    assert r.returncode == 0, r.stdout + r.stderr
    assert "tiny_counter.a_fold_happens" in r.stdout


def test_guide_blocks_verify_explore_and_prove(cli, tmp_path):
    spec = tmp_path / "folding.py"
    spec.write_text("\n\n".join(blocks("docs/spec-authoring.md")))
    r = cli("verify", str(spec), "--format", "json")
    assert r.returncode == 0, r.stdout + r.stderr
    checks = json.loads(r.stdout)["checks"]
    bug = [c for c in checks if c["spec"] == "fold_at_batch_plus_one" and c["property"] == "read_error_bounded"]
    assert bug and all(c["verdict"] == "violated" and c["trace"] for c in bug)
    proved = [c for c in checks if c["spec"] == "proved_folding_counter" and c["kind"] == "proof"]
    assert {c["property"] for c in proved} >= {"local_in_range", "nothing_lost", "read_error_bounded"}
    assert all(c["verdict"] == "holds" and c["params"]["ncpus"] == "1..8192" for c in proved)
