"""The dbt layer rule (CONTRIBUTING.md, "Layers"), read from the manifest `dbt parse` writes: staging
(models/staging, ``stg_*``) reads only sources and seeds; intermediate models (models/intermediate, ``int_*``)
read staging, seeds, other intermediates, never a mart; marts (models/marts) read only intermediates and other
marts, never a staging model, a source or a seed directly (a seed reaches a mart through an intermediate,
e.g. ``int_contrast_arms``, ``int_dose_conditions``). dbt-project-evaluator's rules
"marts or intermediate dependent on source" and "staging dependent on downstream models", plus its layer
order, checked on every model's ``depends_on.nodes``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from warehouse.paths import PROJECT_ROOT

#: which parents a model of each layer may read (layer of a parent: a model's folder, or source / seed)
ALLOWED = {
    "staging": {"source", "seed"},
    "intermediate": {"source", "seed", "staging", "intermediate"},
    "marts": {"intermediate", "marts"},
}
PREFIX = {"staging": "stg_", "intermediate": "int_"}


def layer(unique_id: str, nodes: dict) -> str:
    """``source`` / ``seed`` for those, else the folder under models/ of the model (``staging``,
    ``intermediate``, ``marts``; anything else is returned as ``other:<path>``, an unknown node as ``?``)."""
    kind = unique_id.split(".", 1)[0]
    if kind in ("source", "seed"):
        return kind
    if unique_id not in nodes:
        return "?"
    path = nodes[unique_id]["original_file_path"]
    parts = Path(path).parts
    return parts[1] if len(parts) > 2 and parts[0] == "models" and parts[1] in ALLOWED else f"other:{path}"


def violations(manifest: dict) -> list[str]:
    """``'<layer> <model> reads <parent layer> <parent>'`` for every forbidden edge, and
    ``'<layer> <model> lacks prefix <p>'`` for a staging or intermediate model misnamed (sorted)."""
    nodes = manifest["nodes"]
    found = []
    for uid, node in nodes.items():
        if node["resource_type"] != "model":
            continue
        own = layer(uid, nodes)
        if own not in ALLOWED:
            found.append(f"{node['name']} is outside models/staging, models/intermediate and models/marts")
            continue
        if own in PREFIX and not node["name"].startswith(PREFIX[own]):
            found.append(f"{own} {node['name']} lacks prefix {PREFIX[own]}")
        for parent in node["depends_on"]["nodes"]:
            theirs = layer(parent, nodes)
            if theirs not in ALLOWED[own]:
                found.append(f"{own} {node['name']} reads {theirs} {parent.rsplit('.', 1)[-1]}")
    return sorted(found)


@pytest.fixture(scope="module")
def manifest(tmp_path_factory) -> dict:
    """The project's manifest from `dbt parse` into a target directory of this test's own (never the
    checkout's target/, so parallel runs do not collide)."""
    from dbt.cli.main import dbtRunner

    work = tmp_path_factory.mktemp("dbt-parse")
    result = dbtRunner().invoke(
        [
            "parse",
            "--project-dir",
            str(PROJECT_ROOT),
            "--profiles-dir",
            str(PROJECT_ROOT),
            "--target-path",
            str(work / "target"),
            "--log-path",
            str(work / "logs"),
            "--no-send-anonymous-usage-stats",
            "--quiet",
        ]
    )
    assert result.success, result.exception
    return json.loads((work / "target" / "manifest.json").read_text(encoding="utf-8"))


def test_every_model_reads_only_what_its_layer_may(manifest):
    models = [n for n in manifest["nodes"].values() if n["resource_type"] == "model"]
    assert len(models) >= 70
    assert violations(manifest) == []


def test_the_user_facing_metric_marts_read_their_intermediates(manifest):
    parents = {n["name"]: n["depends_on"]["nodes"] for n in manifest["nodes"].values() if n["resource_type"] == "model"}
    assert parents["query_metrics"] == ["model.ragwarehouse.int_query_metrics"]
    assert parents["rewrite_query_metrics"] == ["model.ragwarehouse.int_rewrite_query_metrics"]


def _model(name: str, folder: str, *parents: str) -> tuple[str, dict]:
    return f"model.p.{name}", {
        "resource_type": "model",
        "name": name,
        "original_file_path": f"models/{folder}/{name}.sql",
        "depends_on": {"nodes": list(parents)},
    }


def test_the_check_catches_each_backwards_edge():
    nodes = dict(
        [
            _model("stg_a", "staging", "source.p.warehouse.a"),
            _model("stg_b", "staging", "model.p.stg_a"),  # staging reads staging
            _model("int_a", "intermediate/shared", "model.p.stg_a", "seed.p.s", "model.p.m_b"),  # reads a mart
            _model("m_a", "marts/x", "model.p.int_a", "model.p.m_b"),  # fine
            _model("m_b", "marts/x", "model.p.stg_a", "seed.p.s", "source.p.warehouse.a"),  # staging, seed, source
            _model("a_int", "intermediate", "model.p.stg_a"),  # misnamed
            _model("loose", "other", "model.p.stg_a"),
        ]
    )
    nodes["test.p.unique_m_a"] = {"resource_type": "test", "depends_on": {"nodes": ["model.p.stg_a"]}}
    assert violations({"nodes": nodes}) == [
        "intermediate a_int lacks prefix int_",
        "intermediate int_a reads marts m_b",
        "loose is outside models/staging, models/intermediate and models/marts",
        "marts m_b reads seed s",
        "marts m_b reads source a",
        "marts m_b reads staging stg_a",
        "staging stg_b reads staging stg_a",
    ]
