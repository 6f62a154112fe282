"""``seeds/metric_registry.csv``: every metric the marts compute is listed at its level with a kernel that
exists, the SQL function (a UDF of udfs/register.py wrapping that kernel, the one the marts call) and the
ensemble path's kernel over relevant ranks; every metric UDF is in it; the ir_measures names are the standard
ones (Success@10 for HIT@10, RR@10 for MRR@10), span recall is told apart from document recall, the configs,
report and tables read their metric lists from it, and reading it imports no storage."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import numpy as np
import pytest

from ragwh.experiment.config.chunking import known_metrics
from ragwh.experiment.config.rewriting_analysis import RAW_METRICS
from ragwh.experiment.report import rewriting as report_rewriting
from ragwh.experiment.tables import rewriting as tables_rewriting
from udfs import register
from udfs.ensembles import METRIC_COLUMNS
from udfs.metrics.registry import metric_registry, registered_metrics
from warehouse.paths import CODE_ROOT, PROJECT_ROOT

#: metric UDFs that are no registry row's sql_function: cov_ndcg's two halves (query_metrics computes
#: cov-nDCG@10 = cov_dcg / cov_idcg, the ideal once per pool) and the reader's answer scores (rewrite_answer_scores)
HALVES = {"cov_ndcg": ("cov_dcg", "cov_idcg")}
ANSWER_UDFS = {"squad_score", "squad_normalize"}


def _unpivoted(sql: str) -> list[list[str]]:
    """The metric columns of each ``unpivot (value for metric in (...))`` of a model, in order."""
    return [re.findall(r'"([^"]+)"', group) for group in re.findall(r"for metric in \(([^)]*)\)", sql)]


def test_the_registry_lists_what_query_metrics_computes_at_each_level():
    models = PROJECT_ROOT / "models" / "intermediate"
    span, document = _unpivoted((models / "chunking" / "evaluation" / "int_query_metrics.sql").read_text())
    assert (
        registered_metrics("span")
        == tuple(span)
        == ("cov-nDCG@10", "R@50", "MRR", "nDCG@10", "TBC@512", "TBC@1024", "TBC@2048")
    )
    assert registered_metrics("document") == tuple(document) == ("HIT@10", "R@10", "nDCG@10", "MRR@10")
    for model in ("int_rewrite_query_metrics", "int_rewrite_router_queries"):
        (rewriting,) = _unpivoted((models / "rewriting" / f"{model}.sql").read_text())
        assert tuple(rewriting) == registered_metrics("document"), model


def test_kernels_exist_and_names_are_unique_per_level():
    rows = metric_registry()
    assert len({(m.level, m.metric) for m in rows}) == len(rows) and len({m.alias for m in rows}) == len(rows)
    for m in rows:
        assert callable(m.kernel_function()), m.kernel
        assert m.ranks_kernel is None or callable(m.ranks_function()), m.ranks_kernel


def _wrapped_kernels(udf: str) -> set:
    """The udfs.metrics functions the Arrow wrapper of UDF ``udf`` (udfs/register.py) names (comprehensions too)."""
    codes, names = [register.UDFS[udf][0].__code__], set()
    while codes:
        code = codes.pop()
        names.update(code.co_names)
        codes += [c for c in code.co_consts if hasattr(c, "co_names")]
    found = (getattr(register, n, None) for n in names)
    return {f for f in found if callable(f) and getattr(f, "__module__", "").startswith("udfs.metrics.")}


def test_each_sql_function_is_the_udf_that_wraps_the_rows_kernel():
    for m in metric_registry():
        assert m.sql_function in register.UDFS, m
        assert m.kernel_function() in _wrapped_kernels(m.sql_function), m


def test_every_metric_udf_is_in_the_registry():
    metric_udfs = {name for name in register.UDFS if _wrapped_kernels(name)}
    registered = {m.sql_function for m in metric_registry()}
    halves = {h for m in registered for h in HALVES.get(m, ())}
    assert metric_udfs == registered | halves | ANSWER_UDFS
    for whole, parts in HALVES.items():  # a half wraps a function of its whole's kernel module
        module = {f.__module__ for f in _wrapped_kernels(whole)}
        assert all({f.__module__ for f in _wrapped_kernels(p)} == module for p in parts)


def _aliased_calls(sql: str) -> dict[str, set[str]]:
    """Quoted column alias -> the UDFs its expression calls, in one model's SQL (comments dropped; the
    expression runs back from ``as "<alias>"`` to the comma or ``select`` that opens it)."""
    sql = re.sub(r"--[^\n]*", "", sql)
    out: dict[str, set[str]] = {}
    last = 0
    for match in re.finditer(r'\bas\s+"([^"]+)"', sql):
        text, depth, i = sql[last : match.start()], 0, match.start() - last
        while i > 0:
            i -= 1
            c = text[i]
            depth += (c == ")") - (c == "(")
            if depth < 0 or (depth == 0 and c == ","):
                break
        expr = re.split(r"\bselect\b", text[i:], flags=re.I)[-1]
        out.setdefault(match.group(1), set()).update(f for f in re.findall(r"\b(\w+)\s*\(", expr) if f in register.UDFS)
        last = match.end()
    return out


def test_the_marts_compute_each_metric_with_its_sql_function():
    called: dict[str, set[str]] = {}
    for path in sorted((PROJECT_ROOT / "models").rglob("*.sql")):
        for alias, udfs in _aliased_calls(path.read_text(encoding="utf-8")).items():
            called.setdefault(alias, set()).update(udfs)
    expected: dict[str, set[str]] = {}
    for m in metric_registry():  # query_metrics calls cov_ndcg's ranking half per ranking (cov_idcg once per pool)
        expected.setdefault(m.metric, set()).add(HALVES.get(m.sql_function, (m.sql_function,))[0])
    assert {a: called.get(a, set()) for a in expected} == expected
    assert expected["nDCG@10"] == {"binary_ndcg", "doc_ndcg"}


def test_the_ranks_kernel_scores_the_document_metrics_the_ensembles_store():
    rows = [m for m in metric_registry() if m.ranks_kernel]
    assert [m.metric for m in rows] == list(registered_metrics("document"))
    for spec in {m.ranks_kernel for m in rows}:
        fn = next(m for m in rows if m.ranks_kernel == spec).ranks_function()
        scores = fn(np.array([[2.0]]), np.array([0]), np.array([1]), 10)
        assert list(scores) == [m.metric for m in rows if m.ranks_kernel == spec]
    assert len(rows) == len(METRIC_COLUMNS)  # hit, recall, ndcg, mrr: int_rewrite_ensemble_scores' columns


def test_reading_the_registries_imports_no_storage():
    """The registries are read by the configs and dbt's seeds alike: only the light path helper, not DuckDB,
    NumPy or warehouse.db (a fresh interpreter, since this one has imported them)."""
    script = (
        "import json, sys\n"
        "from udfs.metrics.registry import metric_registry\n"
        "from udfs.fusion.registry import fusion_rules\n"
        "assert metric_registry() and fusion_rules()\n"
        "print(json.dumps(sorted(sys.modules)))"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, (str(CODE_ROOT), os.environ.get("PYTHONPATH"))))}
    loaded = json.loads(
        subprocess.run(
            [sys.executable, "-c", script], cwd=CODE_ROOT, env=env, check=True, capture_output=True, text=True
        ).stdout
    )
    heavy = [
        m
        for m in loaded
        if m.split(".")[0] in ("duckdb", "numpy", "pyarrow", "dbt", "ragwh", "ingest")
        or (m.startswith("warehouse.") and m != "warehouse.paths")
    ]
    assert heavy == [] and "warehouse.paths" in loaded


def test_ir_measures_names_and_span_recall_apart_from_document_recall():
    by = {(m.level, m.metric): m for m in metric_registry()}
    assert by["document", "HIT@10"].ir_measures == "Success@10" and by["document", "MRR@10"].ir_measures == "RR@10"
    assert by["document", "R@10"].ir_measures == "R@10" and by["span", "MRR"].ir_measures == "RR"
    assert by["span", "R@50"].ir_measures is None and by["span", "R@50"].kernel.endswith("span_recall")
    assert by["span", "R@50"].alias != by["document", "R@10"].alias
    assert all(re.fullmatch(r"(Success|RR|R|nDCG)(@\d+)?", m.ir_measures) for m in by.values() if m.ir_measures)


def test_configs_report_and_tables_read_the_registry():
    assert known_metrics() == list(registered_metrics())
    assert RAW_METRICS == report_rewriting.METRICS == tables_rewriting.METRICS == registered_metrics("document")


def test_a_row_without_its_sql_function_names_the_file_and_line(tmp_path, monkeypatch):
    from udfs.metrics import registry

    (tmp_path / "seeds").mkdir()
    (tmp_path / "seeds" / "metric_registry.csv").write_text(
        "metric,level,kernel,sql_function,ranks_kernel,ir_measures,alias,description\n"
        "HIT@10,document,udfs/metrics/doc_level.py::hit_at_k,doc_hit,,Success@10,Success@10,x\n"
        "R@10,document,udfs/metrics/doc_level.py::recall_at_k,,,R@10,DocRecall@10,y\n",
        encoding="utf-8",
    )
    monkeypatch.setattr("warehouse.paths.PROJECT_ROOT", tmp_path)
    registry.metric_registry.cache_clear()
    try:
        with pytest.raises(ValueError, match=r"metric_registry.csv: line 3: level must be one of .* sql_function"):
            registry.metric_registry()
    finally:
        registry.metric_registry.cache_clear()
