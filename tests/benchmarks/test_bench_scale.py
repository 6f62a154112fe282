"""The scale benchmark end to end at a tiny size: every stage in its own process, the JSON's shape, the rows."""

from __future__ import annotations

import json

import duckdb
import pytest

from benchmarks.bench_scale import LLM_STRATEGIES, SOURCES, STAGES, STRATEGIES, run_benchmark, source_counts
from ingest.rewriting.ann import FILE_LAYOUT

DOCS, QUERIES = 200, 10
RUN = tuple(s for s in STAGES if s not in ("rewrite_rerun", "marts"))


@pytest.fixture(scope="module")
def bench(tmp_path_factory):
    work = tmp_path_factory.mktemp("scale")
    # CI time is short: the marts (a dbt build, 6-25 s even for one view) are the rewriting dbt tests' and the
    # demo's, and the rerun that loads the persisted graphs is tests/ingest/rewriting/test_ann.py's
    return work, run_benchmark(work, DOCS, QUERIES, stages=RUN)


def test_source_counts_keep_the_proportions_and_sum():
    assert sum(source_counts(DOCS)) == DOCS
    assert source_counts(499_000) == [s[1] * 1000 for s in SOURCES]
    assert source_counts(10) == [6, 2, 1, 1, 0, 0, 0, 0, 0]  # 275/499*10 = 5.51 -> 6 by largest remainder


def test_json_shape_and_rows(bench):
    work, out = bench
    json.dumps(out)  # serializable as written
    assert list(out["stages"]) == list(RUN) and set(STAGES) - set(RUN) == {"rewrite_rerun", "marts"}
    for name, stage in out["stages"].items():
        assert set(stage) == {"seconds", "peak_rss_mib"}, name
        assert stage["seconds"] > 0 and stage["peak_rss_mib"] > 10, name
    assert "stand-in" in out["embedder"]
    questions = [json.loads(line) for line in (work / "export" / "questions.jsonl").read_text().splitlines()]
    judged = sum(len(set(q["expected_doc_ids"])) for q in questions)
    assert all(1 <= len(q["expected_doc_ids"]) <= 3 for q in questions) and len(questions) == QUERIES
    counts = out["counts"]
    assert counts["documents"] == DOCS and counts["queries"] == QUERIES and counts["qrels"] == judged
    assert out["results"]["generate"]["documents_per_source"] == dict(zip([s[0] for s in SOURCES], source_counts(DOCS)))
    chunks = out["results"]["chunk"]["chunks"]
    assert chunks > DOCS and out["results"]["embed"] == {"chunks": chunks, "texts_embedded": chunks}
    # every chunk once, then every query and every kept variant once (distinct texts)
    assert counts["embeddings"] == chunks + out["results"]["rewrite"]["texts_embedded"]
    rewrite = out["results"]["rewrite"]
    # the LLM strategies' prompts went over HTTP to the scripted server, once each: 5 strategies x 3 seeds x queries
    assert rewrite["http_requests"] == rewrite["llm_calls"] == len(LLM_STRATEGIES) * 3 * QUERIES
    assert "not a model" in out["llm"]
    assert rewrite["texts_embedded"] > QUERIES  # the chunks were already stored: the queries and the variants
    first = out["results"]["rewrite"]["steps"]
    assert first["ann_build"] > 0 and first["ann_load"] == 0  # 3 seeds' graphs + 3 x 3 more for S1-ann4, built
    assert len(list((work / "scale.duckdb.ann").rglob(f"{FILE_LAYOUT}_seed*.bin"))) == 12  # ... and saved for a rerun
    con = duckdb.connect(str(work / "scale.duckdb"), read_only=True)
    per = dict(
        con.execute(
            "SELECT strategy, count(*) FROM rewrite_runs WHERE embedder = 'hash-standin-384' GROUP BY strategy"
        ).fetchall()
    )
    con.close()
    assert set(per) == set(STRATEGIES + LLM_STRATEGIES) and sum(per.values()) == counts["rewrite_runs"]
    # S1-pool100: 20 documents x 10 queries x 3 seeds; S1 ranks the paper's fixed pool of 20 chunks, which may hold
    # fewer than 20 documents (rewriting.pool_fill: fixed); S1-ann4 unions four 10-document lists
    assert per["S1-pool100"] == 20 * QUERIES * 3 and 10 * QUERIES * 3 <= per["S1"] <= per["S1-pool100"]
    assert 10 * QUERIES * 3 <= per["S1-ann4"] <= 20 * QUERIES * 3


def test_strategies_left_out_are_named_and_checked():
    import argparse

    from benchmarks.bench_scale import _settings, parse_without

    assert parse_without("S1-ann4, HyDE") == ("S1-ann4", "HyDE") and parse_without("") == ()
    assert (
        "S1-ann4" not in _settings(True, ("S1-ann4",)).strategies and "HyDE" in _settings(True, ("S1-ann4",)).strategies
    )
    with pytest.raises(argparse.ArgumentTypeError, match="unknown strategies S9"):
        parse_without("S1,S9")
