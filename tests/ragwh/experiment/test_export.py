"""``ragwh export trec``: TREC run + qrels on hand cases, re-scored by ranx."""

from __future__ import annotations

import math

import pytest
from ranx import Qrels, Run, evaluate

from ragwh.experiment.export import ExportError, export_trec


@pytest.fixture()
def small(con):
    """Two documents; query q1 has one gold span [100, 200) in doc a; q2 has a span [0, 50) in doc b."""
    con.execute("""CREATE TABLE int_condition_texts AS SELECT * FROM (VALUES
        ('G3', 'c', 'ch|c/a|0', 'c/a', 0, 140),     -- covers 40% of the span, 29% of itself inside: NOT relevant
        ('G3', 'c', 'ch|c/a|1', 'c/a', 140, 260),   -- covers 60% of the span: relevant
        ('G3', 'c', 'ch|c/a|2', 'c/a', 190, 202),   -- 10 of 12 chars (83%) inside the span: relevant
        ('G3', 'c', 'ch|c/a|3', 'c/a', 260, 400),   -- no overlap
        ('G3', 'c', 'ch|c/b|0', 'c/b', 0, 100),     -- covers all of q2's span: relevant to q2 only
        ('A3', 'c', 'ch|c/b|0', 'c/b', 0, 100))
        AS t(condition, corpus, chunk_id, doc_id, char_start, char_end)""")
    con.execute("INSERT INTO evidence VALUES ('c/q1', 0, 'c/a', 100, 200, 'exact'), ('c/q2', 0, 'c/b', 0, 50, 'exact')")
    con.execute("""INSERT INTO chunks VALUES ('ch', 'ch|c/a|0', 'c/a', 0, 0, 140, 30, 0), ('ch', 'ch|c/a|1', 'c/a', 1, 140, 260, 30, 0),
        ('ch', 'ch|c/a|2', 'c/a', 2, 190, 202, 3, 0), ('ch', 'ch|c/a|3', 'c/a', 3, 260, 400, 30, 0),
        ('ch', 'ch|c/b|0', 'c/b', 0, 0, 100, 20, 0)""")
    runs = [
        ("c/q1", 1, "ch|c/a|0", 0.9),
        ("c/q1", 2, "ch|c/b|0", 0.8),
        ("c/q1", 3, "ch|c/a|1", 0.7),
        ("c/q1", 4, "ch|c/a|2", 0.6),
        ("c/q2", 1, "ch|c/a|3", 0.5),
        ("c/q2", 2, "ch|c/b|0", 0.4),
    ]
    con.executemany("INSERT INTO runs VALUES ('c', 'emb', 'none', 'G3', ?, ?, ?, ?)", runs)
    return con


def _lines(path):
    return [line.split() for line in path.read_text().splitlines()]


def test_chunk_level_qrels_follow_the_relevance_rule(small, tmp_path):
    out = export_trec(small, "G3", tmp_path)
    assert _lines(out.qrels_file) == [
        ["c/q1", "0", "ch|c/a|1", "1"],
        ["c/q1", "0", "ch|c/a|2", "1"],
        ["c/q2", "0", "ch|c/b|0", "1"],
    ]
    assert _lines(out.run_file)[0] == ["c/q1", "Q0", "ch|c/a|0", "1", "0.9", "G3|emb|none"]
    assert (out.n_queries, out.run_lines, out.qrels_lines) == (2, 6, 3)
    # ranx on the files == the hand computation: q1 relevant at ranks 3, 4 (ideal 1, 2); q2 at rank 2
    q1 = (1 / math.log2(4) + 1 / math.log2(5)) / (1 + 1 / math.log2(3))
    q2 = 1 / math.log2(3)
    score = evaluate(
        Qrels.from_file(str(out.qrels_file), kind="trec"), Run.from_file(str(out.run_file), kind="trec"), "ndcg@10"
    )
    assert score == pytest.approx((q1 + q2) / 2, abs=1e-12)


def test_document_level_keeps_each_documents_best_chunk(small, tmp_path):
    out = export_trec(small, "G3", tmp_path, level="document")
    assert _lines(out.run_file) == [
        ["c/q1", "Q0", "c/a", "1", "0.9", "G3|emb|none"],
        ["c/q1", "Q0", "c/b", "2", "0.8", "G3|emb|none"],
        ["c/q2", "Q0", "c/a", "1", "0.5", "G3|emb|none"],
        ["c/q2", "Q0", "c/b", "2", "0.4", "G3|emb|none"],
    ]
    assert _lines(out.qrels_file) == [["c/q1", "0", "c/a", "1"], ["c/q2", "0", "c/b", "1"]]
    mrr = evaluate(
        Qrels.from_file(str(out.qrels_file), kind="trec"), Run.from_file(str(out.run_file), kind="trec"), "mrr"
    )
    assert mrr == pytest.approx((1 + 0.5) / 2)


def test_document_level_uses_qrels_where_the_corpus_has_them(small, tmp_path):
    small.execute(
        "INSERT INTO queries VALUES ('c/q1', NULL, 'c', 'q one', 'beir'), ('c/q2', NULL, 'c', 'q two', 'beir')"
    )
    small.execute("INSERT INTO qrels VALUES ('c/q1', 'c/b', 1), ('c/q2', 'c/b', 2), ('c/q2', 'c/a', 0)")
    out = export_trec(small, "G3", tmp_path, level="document")
    assert _lines(out.qrels_file) == [["c/q1", "0", "c/b", "1"], ["c/q2", "0", "c/b", "2"]]
    with pytest.raises(ExportError, match="use --level document"):
        export_trec(small, "G3", tmp_path, level="chunk")


def test_missing_run_lists_what_exists(small, tmp_path):
    with pytest.raises(ExportError, match=r"stored runs .*c G3 emb none"):
        export_trec(small, "A3", tmp_path)
    with pytest.raises(ExportError, match="level 'passage' unknown"):
        export_trec(small, "G3", tmp_path, level="passage")


def test_graded_qrels_rescore_cov_ndcg_with_ranx(small, tmp_path):
    """The chunk gains of coverage-nDCG (share of gold characters covered), as integer grades x 10^12: ranx's
    linear-gain nDCG@10 on them equals cov-nDCG@10 computed by hand (disjoint chunks: the definitions coincide)."""
    out = export_trec(small, "G3", tmp_path)
    grades = {(q, d): int(g) for q, _, d, g in _lines(out.graded_file)}
    # q1's span [100, 200): a|0 covers [100, 140) = 0.4, a|1 [140, 200) = 0.6, a|2 [190, 202) overlaps a|1 (the
    # one overlapping pair of this fixture, so q1 is checked on grades only); q2's span [0, 50): b|0 covers all
    assert grades == {
        ("c/q1", "ch|c/a|0"): 400_000_000_000,
        ("c/q1", "ch|c/a|1"): 600_000_000_000,
        ("c/q1", "ch|c/a|2"): 100_000_000_000,
        ("c/q2", "ch|c/b|0"): 10**12,
    }
    assert out.graded_lines == 4
    qrels = Qrels.from_file(str(out.graded_file), kind="trec")
    per_query = evaluate(qrels, Run.from_file(str(out.run_file), kind="trec"), "ndcg@10", return_mean=False)
    # q2: a|3 (gain 0) then b|0 (gain 1): DCG = 1/log2(3), IDCG = 1
    assert per_query[1] == pytest.approx(1 / math.log2(3), abs=1e-12)


def test_export_corpus_then_import_a_run_over_its_ids(con, tmp_path):
    """The BEIR corpus holds exactly the texts the condition embeds, under its chunk ids; a run over those ids
    comes back with import_run."""
    import json

    from ingest.retrieval.imported import import_run
    from ragwh.experiment.export import export_corpus

    con.execute("""CREATE TABLE int_condition_texts AS SELECT * FROM (VALUES
        ('A3', 'c', 'structural:gold|c/a|0', 'c/a', 'structural:gold', 0, 60, '[A]\n\nfirst part', 'h0', FALSE),
        ('A3', 'c', 'structural:gold|c/a|1', 'c/a', 'structural:gold', 60, 200, '[A › B]\n\nsecond part', 'h1', FALSE),
        ('A0', 'c', 'fixed|c/a|0', 'c/a', 'fixed', 0, 200, 'both parts', 'h2', FALSE))
        AS t(condition, corpus, chunk_id, doc_id, chunkset, char_start, char_end, text, text_hash, is_fallback)""")
    con.execute("INSERT INTO queries VALUES ('c/q1', 'c/a', 'c', 'which part?', 'extractive')")
    con.execute("INSERT INTO evidence VALUES ('c/q1', 0, 'c/a', 70, 150, 'exact')")
    out = export_corpus(con, "A3", tmp_path / "beir")
    assert (out.corpus, out.n_texts, out.n_queries, out.n_qrels) == ("c", 2, 1, 1)
    corpus = [json.loads(line) for line in (tmp_path / "beir" / "corpus.jsonl").read_text().splitlines()]
    assert [(d["_id"], d["title"], d["text"]) for d in corpus] == [
        ("structural:gold|c/a|0", "", "[A]\n\nfirst part"),
        ("structural:gold|c/a|1", "", "[A › B]\n\nsecond part"),
    ]
    assert corpus[1]["metadata"] == {
        "doc_id": "c/a",
        "chunkset": "structural:gold",
        "char_start": 60,
        "char_end": 200,
        "is_fallback": False,
        "text_hash": "h1",
    }
    assert (tmp_path / "beir" / "queries.jsonl").read_text() == '{"_id": "c/q1", "text": "which part?"}\n'
    assert (
        tmp_path / "beir" / "qrels" / "test.tsv"
    ).read_text() == "query-id\tcorpus-id\tscore\nc/q1\tstructural:gold|c/a|1\t1\n"
    run = tmp_path / "outside.run"
    run.write_text("".join(f"c/q1 Q0 {d['_id']} {i + 1} {1.0 - i / 10} bm25\n" for i, d in enumerate(reversed(corpus))))
    assert import_run(con, run, "outside", "A3").n_lines == 2
    with pytest.raises(ExportError, match="no texts for condition=G3"):
        export_corpus(con, "G3", tmp_path / "none")
