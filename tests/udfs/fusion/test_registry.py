"""``seeds/fusion_rules.csv``: the one place a fusion rule's name lives; the ensemble kernel, the report and the
marts' tests read it, and each row's kernel is the function the kernel runs."""

from __future__ import annotations

import pytest

from udfs.ensembles import RULES
from udfs.fusion.comb_max import comb_max
from udfs.fusion.comb_mnz import comb_mnz
from udfs.fusion.comb_sum import comb_sum
from udfs.fusion.registry import fusion_rules
from udfs.fusion.rrf import rrf


def test_the_kernel_dispatch_and_the_report_read_the_registry():
    from ragwh.experiment.report.rewriting import RULE_NAMES

    rules = fusion_rules()
    assert [r.rule for r in rules] == list(RULES) == list(RULE_NAMES) == ["max", "rrf", "combsum", "combmnz"]
    assert RULES == {
        "max": ("scores", comb_max),
        "rrf": ("ranks", rrf),
        "combsum": ("normalized", comb_sum),
        "combmnz": ("normalized", comb_mnz),
    }
    assert RULE_NAMES["rrf"] == "RRF (k = 60)" and len(set(RULE_NAMES.values())) == len(RULE_NAMES)
    assert {(r.ranx_method, r.ranx_norm) for r in rules} == {
        ("max", None),
        ("rrf", "min-max"),
        ("sum", "min-max"),
        ("mnz", "min-max"),
    }


def test_a_bad_row_names_the_file_and_line(tmp_path, monkeypatch):
    from udfs.fusion import registry

    (tmp_path / "seeds").mkdir()
    (tmp_path / "seeds" / "fusion_rules.csv").write_text(
        "rule,input,display_name,kernel,ranx_method,ranx_norm,description\n"
        "max,scores,max,udfs/fusion/comb_max.py::comb_max,max,,x\nodd,votes,odd,udfs/x.py::f,,,y\n",
        encoding="utf-8",
    )
    monkeypatch.setattr("warehouse.paths.PROJECT_ROOT", tmp_path)
    registry.fusion_rules.cache_clear()
    try:
        with pytest.raises(ValueError, match=r"fusion_rules.csv: line 3: rule non-empty, input one of"):
            registry.fusion_rules()
    finally:
        registry.fusion_rules.cache_clear()
