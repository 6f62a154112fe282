"""Experiment configs: the shipped ones validate; bad ones fail naming the file and the key."""

from __future__ import annotations

import pytest
import yaml

from ragwh.experiment.config.chunking import ConfigError, load_config, parse_config
from warehouse.paths import PROJECT_ROOT

SHIPPED = ["default", "cpu", "qasper", "wikipedia", "demo-llm"]


@pytest.mark.parametrize("name", SHIPPED)
def test_shipped_configs_validate(name):
    config = load_config(PROJECT_ROOT / "experiments" / f"{name}.yml")
    assert config.strong_embedder.strong
    assert config.primary.embedder == config.strong_embedder.name
    assert config.primary.metric == "cov-nDCG@10" and config.primary.reranker == "none"


def test_default_is_the_offline_demo():
    config = load_config(None)
    assert config.demo and config.name == "demo" and config.llm.backend == "none"
    (source,) = config.resolve_sources(config.corpora[0], None)
    assert source.is_file() and source.parent.name == "demo"


def test_demo_llm_runs_the_tiny_local_model_and_is_labelled(monkeypatch):
    from ingest.llm import load_llm_config

    monkeypatch.delenv("RAGWH_LLM_MODEL", raising=False)
    monkeypatch.delenv("RAGWH_LLM_BACKEND", raising=False)
    config = load_config(PROJECT_ROOT / "experiments" / "demo-llm.yml")
    assert config.llm.backend == "transformers" and config.llm.model == "smollm2-135m-instruct" and config.llm.tiny
    assert config.runnable_conditions() == (list(config.conditions), {}) and "A1" in config.conditions
    llm = load_llm_config({"backend": config.llm.backend, **config.llm.settings}, env={})
    assert (llm.stage_max_tokens("induce"), llm.stage_max_tokens("contexts")) == (512, 150)
    assert config.inducer == "llm" and llm.structured is None  # structured output where the backend has it
    assert not load_config(None).llm.tiny  # no LLM at all
    monkeypatch.setenv("RAGWH_LLM_MODEL", "google/gemma-3-27b-it")  # the environment wins: not tiny any more
    assert not load_config(PROJECT_ROOT / "experiments" / "demo-llm.yml").llm.tiny
    with pytest.raises(ValueError, match="llm.max_tokens"):
        load_llm_config({"backend": "transformers", "max_tokens": {"inducee": 5}}, env={})


def test_cpu_has_no_a1_no_reranker_and_texttiling():
    config = load_config(PROJECT_ROOT / "experiments" / "cpu.yml")
    assert "A1" not in config.conditions and config.rerankers == () and config.inducer == "texttiling"
    assert config.strong_embedder.model == "all-MiniLM-L6-v2"
    assert set(config.contrasts) == {"C2", "C3", "C4"}
    assert config.retrievers == ("dense", "bm25") and (config.bm25.k1, config.bm25.b, config.bm25.stemmer) == (
        0.9,
        0.4,
        "porter",
    )
    (declared,) = config.declared
    assert config.dbt_vars()["declared_contrasts"] == [
        {
            "contrast": "dense-vs-bm25",
            "treatment": "A3",
            "treatment_system": "all-MiniLM-L6-v2",
            "control": "A3",
            "control_system": "bm25",
        }
    ]
    assert (
        parse_config(
            {k: v for k, v in _base().items() if k not in ("retrievers",)} | {"contrasts": ["C2"]},
            PROJECT_ROOT / "x.yml",
        ).bm25
        is None
    )


def test_a1_without_llm_is_reported_not_run():
    raw = _base()
    raw["conditions"].append("A1")
    runnable, skipped = parse_config(raw, PROJECT_ROOT / "x.yml").runnable_conditions()
    assert "A1" not in runnable and "no LLM backend" in skipped["A1"]


def _base() -> dict:
    return yaml.safe_load((PROJECT_ROOT / "experiments" / "cpu.yml").read_text())


@pytest.mark.parametrize(
    "mutate, key",
    [
        (lambda r: r.update(colour="red"), "colour: unknown key"),
        (lambda r: r.pop("corpora"), "corpora: required key missing"),
        (lambda r: r["corpora"][0].update(loader="pdf"), "corpora[0].loader: 'pdf' is not one of"),
        (lambda r: r["embedders"][0].update(strong=False), "embedders: exactly one embedder"),
        (lambda r: r.update(k=0), "k: expected an integer >= 1"),
        (lambda r: r.update(bootstrap={"B": "many"}), "bootstrap.B: expected an integer"),
        (lambda r: r.update(conditions=["A3", "Z9"]), "conditions[1]: 'Z9' is not one of"),
        (lambda r: r.update(contrasts=["C1"]), "contrasts[0]: C1 compares A3 - A1 but A1 is not in conditions"),
        (lambda r: r.update(inducer="llm"), "inducer: 'llm' needs an LLM backend"),
        (
            lambda r: r.update(primary={"metric": "cov-nDCG@10", "embedder": "bge"}),
            "primary.embedder: 'bge' is not one of",
        ),
        (lambda r: r.update(llm={"backend": "openai", "api_key": "sk"}), "llm.api_key: never put an API key"),
        (lambda r: r.update(limit=-3), "limit: expected an integer >= 1"),
        (lambda r: r.update(precision="fp16"), "precision: 'fp16' is not one of auto, fp32, bf16"),
        (lambda r: r["embedders"][0].update(precision="int8"), "embedders[0].precision: 'int8' is not one of"),
        (lambda r: r.update(retrievers=["bm25"]), "retrievers: expected 'dense' and optionally 'bm25'"),
        (lambda r: r.update(retrievers=["dense", "splade"]), "retrievers[1]: 'splade' is not one of"),
        (
            lambda r: r.update(retrievers=["dense"], bm25={"k1": 1.2}),
            "bm25: BM25 settings given but 'bm25' is not among the retrievers",
        ),
        (lambda r: r.update(bm25={"k1": "high"}), "bm25.k1: expected a number"),
        (lambda r: r.update(bm25={"stemmer": "klingon"}), "bm25: BM25 stemmer 'klingon'"),
        (
            lambda r: r.update(contrasts=[{"name": "x", "treatment": "Z9@bm25", "control": "A3"}]),
            "contrasts[0].treatment: 'Z9' is not one of",
        ),
        (
            lambda r: r.update(contrasts=[{"name": "C2", "treatment": "A3", "control": "A0"}]),
            "contrasts[0].name: 'C2' is already a contrast's name",
        ),
        (
            lambda r: r.update(contrasts=[{"name": "x", "treatment": "A3@bm25", "control": "A3@bm25"}]),
            "contrasts[0]: treatment and control are the same arm",
        ),
        (
            lambda r: r.update(contrasts=[{"name": "x", "treatment": "A3"}]),
            "contrasts[0].control: required key missing",
        ),
    ],
)
def test_bad_configs_name_the_key(mutate, key, tmp_path, monkeypatch):
    monkeypatch.delenv("RAGWH_LLM_BACKEND", raising=False)
    raw = _base()
    mutate(raw)
    path = tmp_path / "bad.yml"
    path.write_text(yaml.safe_dump(raw))
    with pytest.raises(ConfigError) as info:
        load_config(path)
    assert str(info.value).startswith(f"{path}: ") and key in str(info.value), str(info.value)


def test_missing_sources_say_how_to_point_at_data(tmp_path):
    config = load_config(PROJECT_ROOT / "experiments" / "cpu.yml")
    with pytest.raises(ConfigError, match="--data DIR or set RAGWH_DATA"):
        config.resolve_sources(config.corpora[0], None)
    with pytest.raises(ConfigError, match="file\\(s\\) not found"):
        config.resolve_sources(config.corpora[0], tmp_path)


def test_not_yaml(tmp_path):
    path = tmp_path / "broken.yml"
    path.write_text("name: [unclosed")
    with pytest.raises(ConfigError, match="not valid YAML"):
        load_config(path)


@pytest.mark.parametrize("name, loader", [("scifact", "beir"), ("hotpotqa", "hotpotqa")])
def test_document_corpus_configs_validate(name, loader, shared_data):
    """BEIR and HotpotQA run from a shipped config like QASPER (condition DOC, qrels metrics)."""
    config = load_config(PROJECT_ROOT / "experiments" / f"{name}.yml")
    (corpus,) = config.corpora
    assert corpus.loader == loader and config.conditions == ("DOC",) and config.contrasts == ()
    assert config.primary.metric == "nDCG@10" and config.precision == "auto"
    assert all(path.is_file() for path in config.resolve_sources(corpus, shared_data))


def test_precision_defaults_and_overrides():
    raw = _base()
    assert parse_config(raw, PROJECT_ROOT / "x.yml").strong_embedder.precision == "auto"
    raw["precision"] = "fp32"
    raw["embedders"].append({"model": "BAAI/bge-small-en-v1.5", "precision": "bf16"})
    config = parse_config(raw, PROJECT_ROOT / "x.yml")
    assert config.precision == "fp32" and [e.precision for e in config.embedders] == ["fp32", "bf16"]


def test_dbt_defaults_are_the_studys():
    """A bare `dbt build` means the study: the bootstrap and primary
    cell of the study's experiments (qasper.yml, wikipedia.yml: the strong embedder at any precision)."""
    defaults = yaml.safe_load((PROJECT_ROOT / "dbt_project.yml").read_text())["vars"]["setting_defaults"]
    for name in ("qasper", "wikipedia", "cpu"):
        config = load_config(PROJECT_ROOT / "experiments" / f"{name}.yml")
        assert (
            (defaults["bootstrap_b"], defaults["bootstrap_seed"])
            == (config.bootstrap_b, config.bootstrap_seed)
            == (10_000, 20260710)
        )
        assert (defaults["primary_metric"], defaults["primary_reranker"]) == (config.primary.metric, "none")
    for name in ("qasper", "wikipedia"):
        assert (
            defaults["primary_embedder"]
            == load_config(PROJECT_ROOT / "experiments" / f"{name}.yml").strong_embedder.model
        )


@pytest.mark.parametrize(
    "mutate, key",
    [
        (
            lambda r: r.update(primary={"metric": "ndcg@10"}),
            "primary.metric: 'ndcg@10' is not one of cov-nDCG@10, R@50, MRR, nDCG@10, TBC@512, TBC@1024, TBC@2048, HIT@10, "
            "R@10, MRR@10",
        ),
        (
            lambda r: r["embedders"][0].update(model="minilm"),
            "embedders[0].model: embedder 'minilm' is neither a registered",
        ),
        (
            lambda r: r["embedders"][0].update(model="/no/such/model"),
            "embedders[0].model: embedder '/no/such/model' is",
        ),
        (
            lambda r: r.update(rerankers=[{"model": "/no/such/ce"}]),
            "rerankers[0].model: reranker '/no/such/ce' is neither an existing local directory",
        ),
    ],
)
def test_unknown_metric_embedder_or_reranker_names_the_key(mutate, key, tmp_path):
    """An unknown primary.metric used to be accepted (the primary cell silently
    disappeared); a model name that can never load failed only at the embedding stage."""
    raw = _base()
    mutate(raw)
    path = tmp_path / "bad.yml"
    path.write_text(yaml.safe_dump(raw))
    with pytest.raises(ConfigError) as info:
        load_config(path)
    assert str(info.value).startswith(f"{path}: {key}"), str(info.value)


def _default_raw() -> dict:
    return yaml.safe_load((PROJECT_ROOT / "experiments" / "default.yml").read_text())


@pytest.mark.parametrize("k", [5, 49])
def test_k_below_the_deepest_metric_cutoff_is_refused(tmp_path, k):
    with pytest.raises(ConfigError, match=rf"c.yml: k: {k} is below the deepest metric cutoff 50 \(R@50\)"):
        parse_config({**_default_raw(), "k": k}, tmp_path / "c.yml")
    assert parse_config({**_default_raw(), "k": 50}, tmp_path / "c.yml").k == 50


def test_command_line_overrides_are_applied_before_validation(tmp_path):
    from ragwh.experiment.config.overrides import apply_overrides
    from ragwh.experiment.config.rewriting import load_experiment

    raw = {**_default_raw(), "embedders": [{"model": "all-MiniLM-L6-v2", "strong": True, "precision": "bf16"}]}
    config = parse_config(apply_overrides(raw, {"precision": "fp32", "limit": 2}), tmp_path / "c.yml")
    assert config.precision == "fp32" and config.embedders[0].precision == "fp32" and config.limit == 2
    assert raw["embedders"][0]["precision"] == "bf16"  # the mapping read is not changed
    with pytest.raises(ConfigError, match="precision: 'fp16' is not one of auto, fp32, bf16"):
        load_experiment(PROJECT_ROOT / "experiments" / "default.yml", {"precision": "fp16"})


@pytest.mark.parametrize(
    "key, value, said",
    [
        ("embedder", "no-such-model", "embedder: embedder 'no-such-model' is neither a registered name"),
        ("reranker", "/no/such/ce", "reranker: reranker '/no/such/ce' is neither an existing local directory"),
    ],
)
def test_a_rewriting_config_naming_an_unknown_model_fails_in_one_line_before_ingest(tmp_path, key, value, said):
    """It used to fail after ingest and chunking, as a traceback of the embedding stage."""
    from typer.testing import CliRunner

    from ragwh.cli import app

    raw = yaml.safe_load((PROJECT_ROOT / "experiments" / "demo-rewriting.yml").read_text())
    raw[key] = value
    path = tmp_path / "bad.yml"
    path.write_text(yaml.safe_dump(raw))
    warehouse = tmp_path / "w.duckdb"
    result = CliRunner().invoke(app, ["run", "--config", str(path), "--warehouse", str(warehouse)])
    assert result.exit_code == 2 and not warehouse.exists()
    assert " ".join(result.output.split()).startswith(f"config error: {path}: {said}"), result.output
    assert len(result.output.strip().splitlines()) == 1
