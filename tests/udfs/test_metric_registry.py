"""``seeds/metric_registry.csv``: every metric the marts compute is listed at its level with a kernel that
exists, the ir_measures names are the standard ones (Success@10 for HIT@10, RR@10 for MRR@10), span recall
is told apart from document recall, and the configs, report and tables read their metric lists from it."""
from __future__ import annotations

import importlib
import re

from ragwh.experiment.config.chunking import known_metrics
from ragwh.experiment.config.rewriting_analysis import RAW_METRICS
from ragwh.experiment.report import rewriting as report_rewriting
from ragwh.experiment.tables import rewriting as tables_rewriting
from udfs.metrics.registry import metric_names, metric_registry
from warehouse.paths import PROJECT_ROOT


def _unpivoted(sql: str) -> list[list[str]]:
    """The metric columns of each ``unpivot (value for metric in (...))`` of a model, in order."""
    return [re.findall(r'"([^"]+)"', group) for group in re.findall(r"for metric in \(([^)]*)\)", sql)]


def test_the_registry_lists_what_query_metrics_computes_at_each_level():
    models = PROJECT_ROOT / "models" / "intermediate"
    span, document = _unpivoted((models / "chunking" / "evaluation" / "int_query_metrics.sql").read_text())
    assert metric_names("span") == tuple(span) == ("cov-nDCG@10", "R@50", "MRR", "nDCG@10", "TBC@512", "TBC@1024", "TBC@2048")
    assert metric_names("document") == tuple(document) == ("HIT@10", "R@10", "nDCG@10", "MRR@10")
    for model in ("int_rewrite_query_metrics", "int_rewrite_router_queries"):
        (rewriting,) = _unpivoted((models / "rewriting" / f"{model}.sql").read_text())
        assert tuple(rewriting) == metric_names("document"), model


def test_kernels_exist_and_names_are_unique_per_level():
    rows = metric_registry()
    assert len({(m.level, m.metric) for m in rows}) == len(rows) and len({m.alias for m in rows}) == len(rows)
    for m in rows:
        module, function = m.kernel.split("::")
        assert callable(getattr(importlib.import_module(module.removesuffix(".py").replace("/", ".")), function)), m.kernel


def test_ir_measures_names_and_span_recall_apart_from_document_recall():
    by = {(m.level, m.metric): m for m in metric_registry()}
    assert by["document", "HIT@10"].ir_measures == "Success@10" and by["document", "MRR@10"].ir_measures == "RR@10"
    assert by["document", "R@10"].ir_measures == "R@10" and by["span", "MRR"].ir_measures == "RR"
    assert by["span", "R@50"].ir_measures is None and by["span", "R@50"].kernel.endswith("span_recall")
    assert by["span", "R@50"].alias != by["document", "R@10"].alias
    assert all(re.fullmatch(r"(Success|RR|R|nDCG)(@\d+)?", m.ir_measures) for m in by.values() if m.ir_measures)


def test_configs_report_and_tables_read_the_registry():
    assert known_metrics() == list(metric_names())
    assert RAW_METRICS == report_rewriting.METRICS == tables_rewriting.METRICS == metric_names("document")
