"""A bootstrap count that would run for hours or exhaust memory (10^9 replicates) is refused before any work, in
one line naming the file and key with the estimate and the ceilings: when the config is read (both studies;
the estimate then assumes one resampled unit), and again by ``ragwh run`` with the corpora's loaded units."""
from __future__ import annotations

import pytest
import yaml

from ragwh.experiment.config import bootstrap_cost
from tests.reliability.cli import one_line, ragwh
from tests.reliability.compare import warehouse_differences
from tests.reliability.conftest import clean_report
from warehouse.paths import PROJECT_ROOT

CHUNKING = PROJECT_ROOT / "experiments" / "default.yml"
REWRITING = PROJECT_ROOT / "experiments" / "demo-rewriting.yml"


def _config(tmp_path, source, b: int):
    raw = yaml.safe_load(source.read_text(encoding="utf-8"))
    if "analysis" in raw:
        raw["analysis"]["bootstrap_b"] = b
    else:
        raw["bootstrap"]["B"] = b
    path = tmp_path / source.name
    path.write_text(yaml.safe_dump(raw, sort_keys=False), encoding="utf-8")
    return path


@pytest.mark.parametrize(("source", "key", "what"), [
    (CHUNKING, "bootstrap.B", "2.5 min (15 bootstrapped statistics x 1 documents"),
    (REWRITING, "analysis.bootstrap_b", "x 1 queries")])
def test_a_billion_replicates_are_refused_when_the_config_is_read(source, key, what, clean_demo, copy_of, tmp_path):
    path = copy_of(clean_demo)
    config = _config(tmp_path, source, 10 ** 9)
    result = ragwh("run", "--config", config, "--warehouse", path, "--report", tmp_path / "r.html")
    assert result.exit_code == 2
    line = one_line(result)
    assert line.startswith(f"config error: {config}: {key}: 1000000000 replicates would take at least "), line
    assert what in line and line.endswith("and 14.9 GiB for each statistic; the ceilings are 12.0 h and 2.0 GiB: "
                                          f"lower {key} (10000 resolves a p-value to 1e-4)"), line
    assert warehouse_differences(clean_demo, path) == {}


def test_the_run_checks_again_with_the_loaded_documents(clean_demo, copy_of, tmp_path, monkeypatch):
    """With the ceiling lowered to 1 s: 10^6 replicates pass the config's floor (15 statistics x 1 document =
    0.15 s) but not the run's estimate over the demo's 5 loaded documents (0.75 s); nothing runs."""
    monkeypatch.setattr(bootstrap_cost, "MAX_SECONDS", 0.5)
    path = copy_of(clean_demo)
    config = _config(tmp_path, CHUNKING, 10 ** 6)
    result = ragwh("run", "--config", config, "--warehouse", path, "--report", clean_report(clean_demo))
    assert result.exit_code == 1, result.output
    last = result.output.strip().splitlines()[-1]
    assert last == (f"run failed: {config}: bootstrap.B: 1000000 replicates would take at least 0.8 s (15 bootstrapped "
                    "statistics x 5 documents x 10 ns a draw) and 15 MiB for each statistic; the ceilings are 0.5 s "
                    "and 2.0 GiB: lower bootstrap.B (10000 resolves a p-value to 1e-4)"), result.output
    assert "> ingest" not in result.output
    assert warehouse_differences(clean_demo, path) == {}
