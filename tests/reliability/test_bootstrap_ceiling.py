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


@pytest.mark.parametrize(
    ("source", "key", "what", "memory"),
    [
        (CHUNKING, "bootstrap.B", "2.5 min (15 bootstrapped statistics x 1 documents", "14.9 GiB"),
        # the paired bootstrap keeps its B x n resampling counts too (2 bytes a count): 16 + 2 bytes a replicate
        (REWRITING, "analysis.bootstrap_b", "x 1 queries", "16.8 GiB"),
    ],
)
def test_a_billion_replicates_are_refused_when_the_config_is_read(
    source, key, what, memory, clean_demo, copy_of, tmp_path
):
    path = copy_of(clean_demo)
    config = _config(tmp_path, source, 10**9)
    result = ragwh("run", "--config", config, "--warehouse", path, "--report", tmp_path / "r.html")
    assert result.exit_code == 2
    line = one_line(result)
    assert line.startswith(f"config error: {config}: {key}: 1000000000 replicates would take at least "), line
    assert what in line and line.endswith(
        f"and {memory} of memory; the ceilings are 12.0 h and 2.0 GiB: lower {key} (10000 resolves a p-value to 1e-4)"
    ), line
    assert warehouse_differences(clean_demo, path) == {}


def test_the_run_checks_again_with_the_loaded_documents(clean_demo, copy_of, tmp_path, monkeypatch):
    """With the ceiling lowered to 1 s: 10^6 replicates pass the config's floor (15 statistics x 1 document =
    0.15 s) but not the run's estimate over the demo's 5 loaded documents (0.75 s); nothing runs."""
    monkeypatch.setattr(bootstrap_cost, "MAX_SECONDS", 0.5)
    path = copy_of(clean_demo)
    config = _config(tmp_path, CHUNKING, 10**6)
    result = ragwh("run", "--config", config, "--warehouse", path, "--report", clean_report(clean_demo))
    assert result.exit_code == 1, result.output
    last = result.output.strip().splitlines()[-1]
    assert last == (
        f"run failed: {config}: bootstrap.B: 1000000 replicates would take at least 0.8 s (15 bootstrapped "
        "statistics x 5 documents x 10 ns a draw) and 15 MiB of memory; the ceilings are 0.5 s "
        "and 2.0 GiB: lower bootstrap.B (10000 resolves a p-value to 1e-4)"
    ), result.output
    assert "> ingest" not in result.output
    assert warehouse_differences(clean_demo, path) == {}


def test_a_fresh_warehouse_is_checked_right_after_ingest(tmp_path, monkeypatch):
    """On an empty warehouse the start has no units to count: the check runs again once the documents and queries
    are loaded, before any model stage."""
    monkeypatch.setattr(bootstrap_cost, "MAX_SECONDS", 0.5)
    config = _config(tmp_path, CHUNKING, 10**6)
    result = ragwh("run", "--config", config, "--warehouse", tmp_path / "fresh.duckdb", "--report", tmp_path / "r.html")
    assert result.exit_code == 1, result.output
    last = result.output.strip().splitlines()[-1]
    assert last.startswith(f"run failed: {config}: bootstrap.B: 1000000 replicates would take at least "), last
    assert "> ingest" in result.output and "> embed" not in result.output and "> induce" not in result.output


def test_the_paired_bootstrap_counts_its_resampling_draws():
    """B x n counts of 2 bytes (below 65,536 units), else 8, beside 16 bytes a replicate."""
    assert bootstrap_cost.estimate(1000, 2, 300)[1] == 1000 * 16
    assert bootstrap_cost.estimate(1000, 2, 300, paired=True)[1] == 1000 * 16 + 1000 * 300 * 2
    assert bootstrap_cost.estimate(10, 1, 70_000, paired=True)[1] == 10 * 16 + 10 * 70_000 * 8
    # 10^7 replicates over HotpotQA's 300 queries: 6 GB of counts, refused
    assert bootstrap_cost.too_costly(10**7, 8, 300, "queries", "analysis.bootstrap_b") is not None
    assert bootstrap_cost.too_costly(10_000, 8, 300, "queries", "analysis.bootstrap_b") is None
