"""Rewriting experiments: config validation, and ``ragwh run`` end to end through a real OpenAI-compatible
server on 127.0.0.1 (scripted answers) with a tiny random-weight embedder, then a rerun that does nothing."""

from __future__ import annotations

import json

import duckdb
import pytest
import yaml
from typer.testing import CliRunner

from ingest.rewriting.settings import RewriteSettings
from ragwh.cli import app
from ragwh.experiment.config.chunking import ConfigError
from ragwh.experiment.config.rewriting import RewritingConfig, load_experiment, parse_rewriting_config
from tests.ingest.llm.chat_server import ChatServer
from tests.ingest.retrieval.fixtures import build_tiny_sentence_transformer
from tests.ingest.rewriting.fixtures import QUERIES, TOPICS, TOWNS, document, respond_http
from warehouse.paths import PROJECT_ROOT


def test_shipped_configs(monkeypatch):
    # the offline default names the packaged tiny model through the `transformers` backend; the
    # environment override stands in for it here so the rest of the file is validated
    monkeypatch.setenv("RAGWH_LLM_BACKEND", "openai")
    default = load_experiment(PROJECT_ROOT / "experiments" / "rewriting-hotpotqa.yml")
    raw = yaml.safe_load((PROJECT_ROOT / "experiments" / "rewriting-hotpotqa.yml").read_text())
    assert raw["llm"] == {"backend": "transformers", "model": "smollm2-135m-instruct"}
    assert isinstance(default, RewritingConfig) and default.tiny_model_label.startswith("TINY-MODEL OUTPUT")
    assert (default.embedder, default.reranker) == ("all-MiniLM-L6-v2", None)
    assert default.settings == RewriteSettings()  # the file spells out the defaults
    monkeypatch.delenv("RAGWH_LLM_BACKEND")
    s1 = load_experiment(PROJECT_ROOT / "experiments" / "rewriting-s1.yml")
    assert (
        s1.settings.strategies == ("S1", "S1-pool100", "S1-ann4")
        and s1.llm.backend == "none"
        and s1.tiny_model_label is None
    )
    study = load_experiment(PROJECT_ROOT / "experiments" / "rewriting-study.yml")
    assert (study.embedder, study.reranker) == ("BAAI/bge-base-en-v1.5", "BAAI/bge-reranker-base")
    assert [c.loader for c in study.corpora] == ["hotpotqa", "enterprise_rag", "ambignq"]
    assert study.corpora[0].options == {"split": "train", "limit": 5000}
    chunking = load_experiment(PROJECT_ROOT / "experiments" / "cpu.yml")
    assert not isinstance(chunking, RewritingConfig)


BASE = {
    "name": "t",
    "study": "rewriting",
    "corpora": [{"name": "h", "loader": "hotpotqa", "sources": ["h.json"]}],
    "embedder": "all-MiniLM-L6-v2",
    "llm": {"backend": "openai", "model": "m"},
}


def test_precision_is_one_per_stack(tmp_path):
    assert parse_rewriting_config(BASE, tmp_path / "a.yml").precision_of("all-MiniLM-L6-v2") == "auto"
    cfg = parse_rewriting_config({**BASE, "precision": "fp32", "reranker": "owner/r"}, tmp_path / "b.yml")
    assert (cfg.precision_of(cfg.embedder), cfg.precision_of("owner/r")) == ("fp32", "fp32")


READER_DEFAULT_VARS = {
    "reader_helpers": ["Q2D"],
    "reader_top_k": 5,
    "reader_sample": 200,
    "reader_sample_seed": 42,
    "reader_seeds": [42],
}


def test_analysis_and_reader_become_dbt_vars(tmp_path):
    from ragwh.experiment.config.rewriting import ReaderSpec

    cfg = parse_rewriting_config(
        {
            **BASE,
            "analysis": {
                "bootstrap_b": 500,
                "router_taus": [0.5, 0.6],
                "rescue_seed": 123,
                "paper_tau": 0.7,
                "primary_metric": "nDCG@10",
                "ensemble_seed": 2024,
                "predeclared_subsets": [["S1", "Q2D"], ["HyDE", "S3", "S2"]],
                "reference_ensemble": ["S1", "HyDE"],
            },
            "reader": {
                "helpers": ["HyDE", "S4"],
                "top_k": 3,
                "sample": None,
                "seeds": [123, 42],
                "mode": "long",
                "max_tokens": 100,
                "calls": "per_arm",
            },
        },
        tmp_path / "a.yml",
    )
    assert cfg.reader == ReaderSpec(("HyDE", "S4"), 3, 100, (("h", "long"),), None, 42, (123, 42), "per_arm")
    assert (cfg.reader.mode_of("h"), cfg.reader.max_tokens_of("h")) == ("long", 100)
    assert cfg.dbt_vars() == {
        "rewriting_bootstrap_b": 500,
        "router_taus": [0.5, 0.6],
        "rewriting_rescue_seed": 123,
        "router_paper_tau": 0.7,
        "rewriting_primary_metric": "nDCG@10",
        "rewriting_ensemble_seed": 2024,
        "rewriting_predeclared_subsets": [["S1", "Q2D"], ["HyDE", "S3", "S2"]],
        "rewriting_reference_ensemble": ["S1", "HyDE"],
        "reader_helpers": ["HyDE", "S4"],
        "reader_top_k": 3,
        "reader_sample": None,
        "reader_sample_seed": 42,
        "reader_seeds": [123, 42],
    }
    plain = parse_rewriting_config(BASE, tmp_path / "b.yml")
    assert plain.reader == ReaderSpec(modes=(("h", "short"),)) and plain.dbt_vars() == READER_DEFAULT_VARS
    assert (plain.reader.mode_of("h"), plain.reader.max_tokens_of("h")) == ("short", 32)
    # no reader without an LLM, or when asked for none: the dbt vars keep dbt_project.yml's defaults
    assert parse_rewriting_config({**BASE, "reader": "none"}, tmp_path / "c.yml").dbt_vars() == {}
    no_llm = parse_rewriting_config(
        {**BASE, "llm": {"backend": "none"}, "rewriting": {"strategies": ["S1"]}}, tmp_path / "d.yml"
    )
    assert no_llm.reader is None and no_llm.dbt_vars() == {}


def test_reader_mode_by_corpus(tmp_path):
    """EnterpriseRAG-Bench's gold answers are sentences: its corpora read in long mode unless told otherwise."""
    corpora = [
        {"name": "h", "loader": "hotpotqa", "sources": ["h.json"]},
        {"name": "erb", "loader": "enterprise_rag", "sources": ["q.jsonl"]},
        {"name": "amb", "loader": "ambignq", "sources": ["a.json"]},
    ]
    cfg = parse_rewriting_config({**BASE, "corpora": corpora}, tmp_path / "m.yml")
    assert [(c, cfg.reader.mode_of(c), cfg.reader.max_tokens_of(c)) for c in ("h", "erb", "amb")] == [
        ("h", "short", 32),
        ("erb", "long", 256),
        ("amb", "short", 32),
    ]
    cfg = parse_rewriting_config(
        {**BASE, "corpora": corpora, "reader": {"mode": {"amb": "long", "erb": "short"}}}, tmp_path / "n.yml"
    )
    assert dict(cfg.reader.modes) == {"h": "short", "erb": "short", "amb": "long"}
    assert {
        m
        for _, m in parse_rewriting_config(
            {**BASE, "corpora": corpora, "reader": {"mode": "short"}}, tmp_path / "o.yml"
        ).reader.modes
    } == {"short"}


def test_paper_defaults_agree_with_dbt_project():
    from ragwh.experiment.config.rewriting_analysis import (
        DEFAULT_ENSEMBLE_SEED,
        PAPER_PREDECLARED,
        PAPER_REFERENCE,
        ReaderSpec,
    )

    project = yaml.safe_load((PROJECT_ROOT / "dbt_project.yml").read_text())["vars"]["setting_defaults"]
    assert project["rewriting_ensemble_seed"] == DEFAULT_ENSEMBLE_SEED == 42
    assert [tuple(p) for p in project["rewriting_predeclared_subsets"]] == list(PAPER_PREDECLARED)
    assert tuple(project["rewriting_reference_ensemble"]) == PAPER_REFERENCE
    spec = ReaderSpec()
    assert {
        k: project[k] for k in ("reader_helpers", "reader_top_k", "reader_sample", "reader_sample_seed", "reader_seeds")
    } == spec.dbt_vars()


def test_effective_defaults_name_configured_strategies_and_seeds(tmp_path):
    project = yaml.safe_load((PROJECT_ROOT / "dbt_project.yml").read_text())["vars"]["setting_defaults"]
    from ragwh.experiment.config.rewriting import DEFAULT_BASELINE, DEFAULT_RESCUE_SEED

    assert (project["rewriting_baseline"], project["rewriting_rescue_seed"]) == (DEFAULT_BASELINE, DEFAULT_RESCUE_SEED)
    # no seed 42: the rescue set is defined by the first configured seed, passed to dbt
    cfg = parse_rewriting_config({**BASE, "rewriting": {"seeds": [7, 8]}}, tmp_path / "s.yml")
    assert cfg.dbt_vars()["rewriting_rescue_seed"] == 7
    # ... and so are the seed-42 ensemble scope and the reader's seed
    assert cfg.dbt_vars()["rewriting_ensemble_seed"] == 7 and cfg.dbt_vars()["reader_seeds"] == [7]
    # another baseline: the reader's helpers may then include S1
    cfg = parse_rewriting_config(
        {**BASE, "analysis": {"baseline": "S4"}, "reader": {"helpers": ["S1"]}}, tmp_path / "b.yml"
    )
    assert cfg.dbt_vars()["rewriting_baseline"] == "S4" and cfg.reader.helpers == ("S1",)


def test_no_reader_clears_an_earlier_runs_answers(tmp_path):
    import io

    import pyarrow as pa
    from rich.console import Console

    from ragwh.experiment.pipeline.rewriting import RewritingPipeline
    from warehouse.db import replace_where, transaction
    from warehouse.schema import arrow_schema

    cfg = parse_rewriting_config({**BASE, "reader": "none"}, tmp_path / "n.yml")
    pipeline = RewritingPipeline(cfg, data=None, warehouse=tmp_path / "w.duckdb", console=Console(file=io.StringIO()))
    try:
        cell = (pipeline.embedder_name(cfg.embedder), "none")
        row = {
            "corpus": ["h", "other"],
            "embedder": [cell[0]] * 2,
            "reranker": ["none"] * 2,
            "setting": ["S1"] * 2,
            "helper": [None] * 2,
            "tau": [None] * 2,
            "seed": [42] * 2,
            "query_id": ["h/q1", "o/q1"],
            "top_k": [5] * 2,
            "answer": ["old"] * 2,
            "llm_call_key": ["k"] * 2,
        }
        with transaction(pipeline.con):
            replace_where(
                pipeline.con, "reader_answers", "FALSE", [], pa.Table.from_pydict(row, arrow_schema("reader_answers"))
            )
        assert pipeline.read("marts") == []
        assert pipeline.con.execute("SELECT corpus FROM reader_answers").fetchall() == [("other",)]  # only this cell's
        assert "no reader" in pipeline.outcome.not_run["read"]
    finally:
        pipeline.close()


def test_a_rewrite_cell_whose_runs_were_removed_runs_again(tmp_path):
    """The rewrite stage's output is its cell's rewrite_runs rows: when a run under another reranker removed
    them (it changed the shared texts), an unchanged config runs the stage again instead of skipping it."""
    import io

    from rich.console import Console

    from ragwh.experiment.pipeline.rewriting import RewritingPipeline

    cfg = parse_rewriting_config({**BASE, "reader": "none"}, tmp_path / "n.yml")
    pipeline = RewritingPipeline(cfg, data=None, warehouse=tmp_path / "w.duckdb", console=Console(file=io.StringIO()))
    embedder = pipeline.embedder_name(cfg.embedder)
    ran = []

    def rewrite_one(corpus: str) -> str:  # what the stage leaves: the cell's run rows
        ran.append(corpus)
        pipeline.con.execute(
            "INSERT INTO rewrite_runs (corpus, embedder, reranker, strategy, seed, query_id, rank, "
            "doc_id, score, variant_idx) VALUES (?, ?, 'none', 'S1', 42, 'h/q1', 1, 'h/d1', 0.5, 0)",
            [corpus, embedder],
        )
        return "one row"

    try:
        pipeline.fingerprints[("chunk:sentence", "h")] = "chunks"
        pipeline._rewrite_one = rewrite_one
        pipeline.rewrite()
        pipeline.rewrite()  # unchanged: skipped
        assert ran == ["h"]
        pipeline.con.execute("DELETE FROM rewrite_runs WHERE reranker = 'none'")  # as another reranker's run does
        pipeline.rewrite()
        assert ran == ["h", "h"]
    finally:
        pipeline.close()


@pytest.mark.parametrize(
    "change, message",
    [
        ({"rewriting": {"strategies": ["S9"]}}, r"rewriting.strategies\[0\]: 'S9' is not one of"),
        ({"rewriting": {"ann": {"seeds": [1, 2]}}}, r"rewriting.ann.seeds: the HNSW index seeds follow the run seeds"),
        ({"rewriting": {"dense": "ivf"}}, r"rewriting.dense: 'ivf' is not one of"),
        # exact search has no index seed: S1-ann4 would be S1 again (the default strategy list includes it)
        (
            {"rewriting": {"dense": "exact"}},
            r"bad.yml: rewriting: S1-ann4 is the multi-pass HNSW control: it needs "
            r"rewriting.dense: hnsw; remove it from rewriting.strategies",
        ),
        ({"rewriting": {"dense": "exact", "strategies": ["S1", "S1-ann4"]}}, r"S1-ann4 is the multi-pass HNSW control"),
        ({"rewriting": {"seeds": [42, 2**30]}}, r"rewriting: seeds must lie in \[0, 2\^30 = 1073741824\)"),
        ({"rewriting": {"seeds": [0, 1, 42]}}, r"rewriting: seeds 0 and 1 give the same HNSW graph"),
        ({"rewriting": {"ann": {"m": 0}}}, r"rewriting.ann.m: expected an integer >= 1"),
        ({"analysis": {"bootstrap_b": 0}}, r"analysis.bootstrap_b: expected an integer >= 1"),
        ({"analysis": {"rescue_seed": 7}}, r"analysis.rescue_seed: 7 is not one of rewriting.seeds"),
        (
            {"analysis": {"router_taus": [0.5, 2]}},
            r"analysis.router_taus: expected a non-empty list of numbers in \[-1, 1\]",
        ),
        ({"reader": {"calls": "twice"}}, r"reader.calls: 'twice' is not one of shared, per_arm"),
        ({"rewriting": {"pool_fill": "grow"}}, r"rewriting.pool_fill: 'grow' is not one of fixed, widen"),
        ({"analysis": {"paper_tau": "0.65"}}, r"analysis.paper_tau: expected a number in \[-1, 1\]"),
        ({"analysis": {"primary_metric": "P@10"}}, r"analysis.primary_metric: 'P@10' is not one of"),
        ({"analysis": {"baseline": "S9"}}, r"analysis.baseline: 'S9' is not one of"),
        ({"analysis": {"alpha": 0.05}}, r"analysis.alpha: unknown key"),
        ({"reader": {"top_k": 11}}, r"reader.top_k: expected at most 10"),
        ({"analysis": {"ensemble_seed": 7}}, r"analysis.ensemble_seed: 7 is not one of rewriting.seeds"),
        (
            {"analysis": {"predeclared_subsets": [["S1", "Query2Doc"]]}},
            r"analysis.predeclared_subsets\[0\]\[1\]: 'Query2Doc' is not one of",
        ),
        (
            {"analysis": {"predeclared_subsets": [["S1"]]}},
            r"analysis.predeclared_subsets\[0\]: expected at least two distinct",
        ),
        ({"analysis": {"predeclared_subsets": [["S1", "Q2D"], ["Q2D", "S1"]]}}, r"a subset is listed twice"),
        (
            {"analysis": {"reference_ensemble": ["S1", "S1-ann4"]}},
            r"analysis.reference_ensemble\[1\]: 'S1-ann4' is not one of",
        ),
        ({"reader": {"mode": "medium"}}, r"reader.mode: 'medium' is not one of short, long"),
        ({"reader": {"mode": {"other": "long"}}}, r"reader.mode.other: unknown key"),
        ({"reader": {"sample": 0}}, r"reader.sample: expected an integer >= 1"),
        ({"reader": {"seeds": [7]}}, r"reader.seeds: expected distinct seeds among rewriting.seeds"),
        ({"reader": {"helpers": ["S1-pool100"]}}, r"reader.helpers\[0\]: 'S1-pool100' is not one of"),
        ({"reader": {"helpers": ["S1"]}}, r"reader.helpers\[0\]: 'S1' is not one of"),  # the baseline itself
        ({"analysis": {"baseline": "S1-ann4"}}, r"analysis.baseline: 'S1-ann4' is not one of"),  # a control
        ({"rewriting": {"strategies": ["S2", "Q2D"]}}, r"analysis.baseline: the default baseline S1 is not among"),
        ({"rewriting": {"mmr": {"lambda": 1.5}}}, r"rewriting.mmr.lambda: expected a number in \[0, 1.0\]"),
        ({"rewriting": {"cosine_band": [0.9, 0.4]}}, "cosine_band must satisfy"),
        ({"rewriting": {"chunk": {"tokens": 50, "overlap": 50}}}, "chunk overlap"),
        ({"rewriting": {"hyde": {"combine": "sum"}}}, r"rewriting.hyde.combine: 'sum' is not one of"),
        ({"rewriting": {"colour": 1}}, r"rewriting.colour: unknown key"),
        ({"precision": "fp16"}, r"precision: 'fp16' is not one of auto, fp32, bf16"),
        (
            {"llm": {"backend": "none"}},
            r"llm.backend: 'none' but strategies \['S2', 'S3', 'S4', 'HyDE', 'Q2D'\] call an LLM",
        ),
        (
            {"corpora": [{"name": "h", "loader": "qasper", "sources": ["q.json"]}]},
            r"corpora\[0\].loader: 'qasper' is not one of",
        ),
        (
            {"corpora": [{"name": "h", "loader": "ambignq", "sources": ["q.json"], "options": {"documents": "x"}}]},
            r"corpora\[0\].options.documents: unknown key",
        ),
    ],
)
def test_bad_configs(tmp_path, change, message):
    with pytest.raises(ConfigError, match=message):
        parse_rewriting_config({**BASE, **change}, tmp_path / "bad.yml")


def test_chunking_loader_refuses_a_rewriting_file(tmp_path):
    from ragwh.experiment.config.chunking import load_config

    path = tmp_path / "r.yml"
    path.write_text(yaml.safe_dump(BASE))
    with pytest.raises(ConfigError, match="study: 'rewriting' configs are run with `ragwh run"):
        load_config(path)


def _hotpot_file(path) -> None:
    records = []
    for i, (qid, question) in enumerate(QUERIES.items()):
        town = TOWNS[i]
        context = [[f"{t} {topic}", [document(t, topic, 4)]] for t in TOWNS[i : i + 4] for topic in TOPICS[:2]]
        records.append(
            {
                "_id": qid,
                "question": question,
                "answer": town,
                "type": "bridge",
                "level": "hard",
                "supporting_facts": [[f"{town} river", 0], [f"{TOWNS[i + 1]} castle", 0]],
                "context": context,
            }
        )
    path.write_text(json.dumps(records))


def test_ragwh_run_rewriting_through_http_then_a_noop_rerun(tmp_path, monkeypatch):
    for var in ("RAGWH_LLM_BACKEND", "RAGWH_LLM_BASE_URL", "RAGWH_LLM_MODEL", "RAGWH_LLM_REPLAY_ONLY"):
        monkeypatch.delenv(var, raising=False)
    data = tmp_path / "data"
    (data / "hotpotqa").mkdir(parents=True)
    _hotpot_file(data / "hotpotqa" / "tiny.json")
    embedder = build_tiny_sentence_transformer(tmp_path / "embedder")
    warehouse = tmp_path / "rw.duckdb"
    with ChatServer(respond_http) as server:
        config = tmp_path / "rewriting-tiny.yml"
        config.write_text(
            yaml.safe_dump(
                {
                    "name": "rewriting-tiny",
                    "study": "rewriting",
                    "corpora": [{"name": "hotpotqa", "loader": "hotpotqa", "sources": ["hotpotqa/tiny.json"]}],
                    "embedder": str(embedder),
                    "reranker": "none",
                    "llm": {"backend": "openai", "base_url": server.base_url, "model": "test-model", "max_retries": 0},
                    "rewriting": {"chunk": {"tokens": 64, "overlap": 16}, "mmr": {"lambda": 0.5}},
                }
            )
        )
        report = tmp_path / "report.html"
        args = [
            "run",
            "--config",
            str(config),
            "--data",
            str(data),
            "--warehouse",
            str(warehouse),
            "--report",
            str(report),
        ]
        first = CliRunner().invoke(app, args)
        assert first.exit_code == 0, first.output
        with duckdb.connect(str(warehouse), read_only=True) as con:
            assert (
                "60 LLM calls (0 cached)"
                in con.execute("SELECT detail FROM stage_manifest WHERE stage = 'rewrite'").fetchone()[0]
            )
        calls = server.n_requests
        rewriting = [b for b in server.bodies if not b["messages"][-1]["content"].startswith("Answer the question")]
        assert len(rewriting) == 4 * 3 * 5  # 4 questions x 3 seeds x 5 LLM strategies
        assert {b["seed"] for b in rewriting} == {42, 123, 2024} and {b["temperature"] for b in rewriting} == {0.7}
        readers = [b for b in server.bodies if b not in rewriting]
        assert readers and {b["temperature"] for b in readers} == {0.0}
        assert "rewriting funnel" in first.output and "TINY-MODEL" not in first.output
        assert report.is_file() and "rw-solo" in report.read_text()
        assert "; 5 LLM answers failed (empty or unusable, not cached): the next run asks again" in first.output
        second = CliRunner().invoke(app, args)
        assert second.exit_code == 0, second.output
        # a rerun asks again exactly the 5 failed calls (2 S2, 3 Q2D: empty or unusable answers are never
        # cached), which fail again: asked in llm.max_attempts = 2 runs, they are final failures now; the rewrite
        # rows are then the same, so everything downstream is skipped
        assert server.n_requests == calls + 5
        assert "> rewrite [" in second.output and "= dbt:rewriting: unchanged, skipped" in second.output, second.output
        assert "5 LLM answers kept as final failures" in " ".join(second.output.split())
        assert "= read [" in second.output and "> dbt:" not in second.output and "> read [" not in second.output
        calls += 5
        with duckdb.connect(str(warehouse)) as con:  # answers deleted by hand: the reader runs again (from the cache)
            con.execute("DELETE FROM reader_answers WHERE setting = 'router'")
        third = CliRunner().invoke(app, args)
        assert third.exit_code == 0, third.output
        # the rewrite stage is finished (its failures are final): skipped; the reader reruns, every answer cached
        assert "= rewrite [" in third.output and "> read [" in third.output and server.n_requests == calls
        # the run owns its cell: one seed and fewer strategies now -> nothing else in the tables or the marts
        raw = yaml.safe_load(config.read_text())
        raw["rewriting"].update({"seeds": [42], "strategies": ["S1", "S2", "Q2D", "S1-ann4"]})
        config.write_text(yaml.safe_dump(raw))
        fourth = CliRunner().invoke(app, args)
        assert fourth.exit_code == 0, fourth.output
        asked = server.bodies[calls:]  # seed 42's failed calls are final failures: not asked; every other text cached
        assert asked == [], asked
        with duckdb.connect(str(warehouse), read_only=True) as con:
            for table in ("rewrites", "rewrite_text_runs", "rewrite_runs", "rewrite_query_metrics"):
                assert con.execute(
                    f"SELECT list(DISTINCT seed ORDER BY seed), list(DISTINCT strategy ORDER BY strategy) FROM {table}"
                ).fetchone() == ([42], ["Q2D", "S1", "S1-ann4", "S2"]), table
            assert con.execute("SELECT DISTINCT n_seeds FROM rewrite_solo").fetchall() == [(1,)]
        assert "seeds 42</p>" in report.read_text()
    con = duckdb.connect(str(warehouse), read_only=True)
    try:
        stages = dict(con.execute("SELECT stage, detail FROM stage_manifest").fetchall())
        assert set(stages) == {"ingest", "chunk:sentence", "rewrite", "dbt:rewriting", "read", "dbt:answers", "report"}
        assert (
            "4 strategies x 1 seeds over 4 queries: 0 LLM calls (5 cached)" in stages["rewrite"]
        )  # 8 texts: 5 cached,
        assert stages["rewrite"].endswith(
            "; 3 LLM answers kept as final failures (failed in llm.max_attempts runs; "  # 3 final
            "ragwh run --retry-failed asks them again)"
        )
        assert con.execute("SELECT count(*) FROM query_answers").fetchone()[0] == 4
        meta = dict(
            con.execute(
                "SELECT key, value FROM corpus_meta WHERE corpus = 'hotpotqa' AND starts_with(key, 'rewriting')"
            ).fetchall()
        )
        assert meta == {"rewriting_llm": "openai:test-model", "rewriting_tiny_model": "false"}
        # the reader answered S1, always-merge (Q2D) and the router; the answer marts scored it (the town = gold)
        settings = dict(con.execute("SELECT setting, count(*) FROM rewrite_answer_scores GROUP BY 1").fetchall())
        assert (
            set(settings) == {"S1", "always-merge", "router"} and settings["S1"] == 4
        )  # the reader reads seed 42 alone (reader.seeds)
        assert con.execute("SELECT min(f1), max(f1) FROM rewrite_answer_scores").fetchone() == (1.0, 1.0)
        assert con.execute("SELECT count(*) FROM rewrite_answer_quality").fetchone()[0] > 0
        assert len(readers) == con.execute("SELECT count(DISTINCT llm_call_key) FROM reader_answers").fetchone()[0]
    finally:
        con.close()


def test_enterprise_rag_and_ambignq_corpora_through_the_pipeline(tmp_path, shared_data):
    import io

    from rich.console import Console

    from ragwh.experiment.pipeline.rewriting import RewritingPipeline
    from tests.ingest.corpora.test_ambignq import PASSAGES, QUESTIONS
    from tests.ingest.corpora.test_enterprise_rag import _write_corpus

    data = tmp_path / "data"
    (data / "ambignq" / "passages").mkdir(parents=True)
    (data / "ambignq" / "q.json").write_text(json.dumps(QUESTIONS))
    (data / "ambignq" / "passages" / "corpus.jsonl").write_text("".join(json.dumps(p) + "\n" for p in PASSAGES))
    (data / "erb").mkdir()
    questions = [json.loads(x) for x in (shared_data / "enterprise_rag" / "questions.jsonl").read_text().splitlines()]
    (data / "erb" / "questions.jsonl").write_text((shared_data / "enterprise_rag" / "questions.jsonl").read_text())
    _write_corpus(data / "erb" / "export", [q["expected_doc_ids"][0] for q in questions[:3]])
    raw = {
        **BASE,
        "llm": {"backend": "none"},
        "rewriting": {"strategies": ["S1"]},
        "corpora": [
            {
                "name": "ambignq",
                "loader": "ambignq",
                "sources": ["ambignq/q.json"],
                "options": {"passages": "ambignq/passages"},
            },
            {
                "name": "enterprise_rag",
                "loader": "enterprise_rag",
                "sources": ["erb/questions.jsonl"],
                "options": {"documents": "erb/export"},
            },
        ],
    }
    cfg = parse_rewriting_config(raw, tmp_path / "two.yml")

    def stages() -> list[tuple[str, str, str]]:
        pipeline = RewritingPipeline(
            cfg, data=data, warehouse=tmp_path / "w.duckdb", console=Console(file=io.StringIO())
        )
        try:
            pipeline.ingest()
            pipeline.chunk()
            counts = pipeline.con.execute("SELECT corpus, count(*) FROM queries GROUP BY 1 ORDER BY 1").fetchall()
        finally:
            pipeline.close()
        assert counts == [("ambignq", 2), ("enterprise_rag", 3)]
        return [(s.stage, s.scope, s.status) for s in pipeline.outcome.stages]

    assert stages() == [
        ("ingest", "ambignq", "ran"),
        ("ingest", "enterprise_rag", "ran"),
        ("chunk:sentence", "ambignq", "ran"),
        ("chunk:sentence", "enterprise_rag", "ran"),
    ]
    assert all(status == "skipped" for *_, status in stages())
    # the documents / passages are part of the ingest fingerprint: a changed export reloads
    (data / "erb" / "export" / "agents.md").write_text("changed notes")
    assert [s for s in stages() if s[2] == "ran"] == [
        ("ingest", "enterprise_rag", "ran"),
        ("chunk:sentence", "enterprise_rag", "ran"),
    ]
