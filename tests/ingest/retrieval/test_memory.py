"""Jobs too large for memory fail early: one line with the estimate, the available memory and the setting;
nothing is written (the available memory is a hand-set number here)."""

from __future__ import annotations

import pytest

from ingest.retrieval import memory
from ingest.retrieval.embed import embed_texts
from ingest.retrieval.embedders import EmbedderSpec
from ingest.retrieval.memory import MemoryEstimateError, check_memory, graph_memory, index_memory, texts_memory
from ingest.rewriting.ann import AnnParams
from tests.ingest.retrieval.fixtures import create_condition_texts

MIB = 2**20


def test_estimates_by_hand():
    # matrix 1000 x 384 x 4 = 1,536,000; texts 2 x (50,000 + 1000 x 57) = 214,000;
    # 2 graphs x 1000 x (384 x 4 + 16 x 2 x 4 + 64) = 3,456,000
    assert index_memory(1000, 384, 50_000, hnsw_m=16, graphs=2) == 1_536_000 + 214_000 + 3_456_000
    assert index_memory(1000, 384, 50_000) == 1_536_000 + 214_000  # exact search: no graph
    assert texts_memory(10, 500) == 2 * (500 + 10 * 57) + 10 * (64 + 57 + 64 + 4)


def test_the_fraction_is_a_setting(monkeypatch):
    monkeypatch.delenv(memory.ENV_FRACTION, raising=False)
    check_memory(80 * MIB, "job", "do less", available=100 * MIB)  # 0.8 of 100 MiB: allowed
    with pytest.raises(MemoryEstimateError) as info:
        check_memory(81 * MIB, "job", "do less", available=100 * MIB)
    assert str(info.value) == (
        "job needs an estimated 0.08 GiB but 0.10 GiB is available and max_memory_fraction is 0.8 "
        "(allowed 0.08 GiB): do less, run on a machine with more memory, or raise "
        "max_memory_fraction (config key, or RAGWH_MAX_MEMORY_FRACTION) if the estimate is too "
        "cautious"
    )
    memory.set_max_memory_fraction(0.9)  # an experiment's max_memory_fraction
    try:
        check_memory(81 * MIB, "job", "do less", available=100 * MIB)
        monkeypatch.setenv(memory.ENV_FRACTION, "0.5")  # the variable wins
        with pytest.raises(MemoryEstimateError, match="max_memory_fraction is 0.5"):
            check_memory(51 * MIB, "job", "do less", available=100 * MIB)
        monkeypatch.setenv(memory.ENV_FRACTION, "none")
        with pytest.raises(ValueError, match="RAGWH_MAX_MEMORY_FRACTION='none': expected a number > 0"):
            check_memory(1, "job", "do less", available=100 * MIB)
    finally:
        memory.set_max_memory_fraction(None)


class _NeverLoaded:
    def __call__(self):
        raise AssertionError("the model must not load for a refused job")


def test_embedding_job_too_large_is_refused_before_anything_is_written(con, monkeypatch):
    monkeypatch.delenv(memory.ENV_FRACTION, raising=False)
    create_condition_texts(
        con,
        [
            {
                "condition": "G2",
                "corpus": "demo",
                "chunk_id": f"x|demo/{i}|0",
                "doc_id": f"demo/{i}",
                "chunkset": "x",
                "text": "word " * (100 + i),
            }
            for i in range(20)
        ],
    )
    monkeypatch.setattr(memory, "available_bytes", lambda: 10_000)
    with pytest.raises(
        MemoryEstimateError,
        match=r"^embedding 20 texts \(0 MiB of text held by the driver\) needs an "
        r"estimated 0\.00 GiB but 0\.00 GiB is available .*embed one corpus",
    ):
        embed_texts(con, EmbedderSpec("tiny", source=_NeverLoaded()), precision=None, show_progress=False)
    assert (
        con.execute("SELECT (SELECT count(*) FROM embeddings) + (SELECT count(*) FROM text_tokens)").fetchall()[0][0]
        == 0
    )


def test_dense_index_too_large_is_refused_before_it_is_read(con, monkeypatch):
    from ingest.chunking.sentence_windows import sentence_chunk_stage
    from ingest.rewriting.index import load_index
    from ingest.rewriting.vectors import Embedder
    from tests.ingest.rewriting.fixtures import load_corpus

    monkeypatch.delenv(memory.ENV_FRACTION, raising=False)
    load_corpus(con)
    sentence_chunk_stage(con, "towns", chunk_tokens=64, overlap=16)
    from ingest.rewriting.index import check_index_memory, chunk_texts

    texts = chunk_texts(con, "towns", "sentence:64/16")[2]  # the texts the index would hold
    n, chars = len(texts), sum(map(len, texts))
    from ingest.rewriting.index import AUTO_GRAPH_WORKERS
    from udfs.cores import usable_cores

    monkeypatch.setattr(memory, "max_memory_fraction", lambda: 0.8)  # whatever the environment configures

    need, workers = check_index_memory(con, "towns", "sentence:64/16", "tiny", AnnParams(), build_workers=2)
    # the estimate counts chunk spans before the whitespace around them is stripped
    exact = index_memory(n, 384, chars, hnsw_m=16, graphs=2)
    assert workers == 2 and exact <= need <= exact + 2 * 2 * n
    # unset: as many graphs at once as the usable cores (at most AUTO_GRAPH_WORKERS), here all fit
    assert check_index_memory(con, "towns", "sentence:64/16", "tiny", AnnParams())[1] == min(
        usable_cores(), AUTO_GRAPH_WORKERS
    )
    graph = graph_memory(n, 384, 16)
    monkeypatch.setattr(memory, "available_bytes", lambda: int(need / 0.8) - 1)  # one byte short of two graphs
    embedder = Embedder(EmbedderSpec("tiny", source="unused"), load=_NeverLoaded())
    with pytest.raises(
        MemoryEstimateError,
        match=rf"^the dense index of 'towns' \({n:,} chunks x 384 dimensions, "
        r"float32 matrix, chunk texts and 2 HNSW graphs at M 16\) needs .*"
        r": lower rewriting.ann.build_workers",
    ):
        load_index(con, "towns", "sentence:64/16", embedder, show_progress=False, ann=AnnParams(), build_workers=2)
    assert con.execute("SELECT count(*) FROM embeddings").fetchall()[0][0] == 0
    # unset, the same memory: one graph at a time instead of a refusal
    assert check_index_memory(con, "towns", "sentence:64/16", "tiny", AnnParams()) == (need - graph, 1)
    monkeypatch.setattr(memory, "available_bytes", lambda: int((need - graph) / 0.8) - 1)  # not even one graph
    with pytest.raises(
        MemoryEstimateError,
        match=r"chunk texts and 1 HNSW graph at M 16\) needs .*: run the study on "
        r"fewer documents",
    ):
        load_index(con, "towns", "sentence:64/16", embedder, show_progress=False, ann=AnnParams())
    monkeypatch.setattr(memory, "available_bytes", lambda: int(need / 0.8) + 2)  # enough: it goes on to embed
    with pytest.raises(AssertionError, match="must not load"):
        load_index(con, "towns", "sentence:64/16", embedder, show_progress=False, ann=AnnParams())
