"""Texts through the embeddings table: keys, query instruction at encode time only, no text embedded twice;
the study stack's conventions by name (bge query instruction) on tiny local models built here."""

from __future__ import annotations

import numpy as np

from ingest.retrieval.embedders import BGE_QUERY_INSTRUCTION, resolve_embedder
from ingest.retrieval.rerank import resolve_reranker
from ingest.rewriting.vectors import Embedder, text_key, text_vectors
from tests.ingest.retrieval.fixtures import build_tiny_cross_encoder, build_tiny_sentence_transformer, sha


def test_study_stack_conventions_on_tiny_models(con, tmp_path):
    from sentence_transformers import SentenceTransformer

    assert resolve_embedder("BAAI/bge-base-en-v1.5").query_instruction == BGE_QUERY_INSTRUCTION
    assert resolve_reranker("BAAI/bge-reranker-base").source == "BAAI/bge-reranker-base"
    st_dir = build_tiny_sentence_transformer(tmp_path / "build")
    local = tmp_path / "bge-base-en-v1.5"
    st_dir.rename(local)
    spec = resolve_embedder(str(local))  # a local copy named like the hub model inherits its conventions
    assert spec.query_instruction == BGE_QUERY_INSTRUCTION and spec.max_seq_length == 512
    loads = []
    emb = Embedder(spec, load=lambda: loads.append(1) or spec.load("cpu"))
    texts, is_query = ["Who wrote Dune?", "Dune is a novel.", "Who wrote Dune?"], [True, False, True]
    vectors, keys = text_vectors(con, emb, texts, is_query, show_progress=False)
    assert keys == [sha("[query] Who wrote Dune?"), sha("Dune is a novel."), sha("[query] Who wrote Dune?")]
    assert keys[0] == text_key("Who wrote Dune?", True) and emb.encoded == 2  # the repeat is embedded once
    model = SentenceTransformer(str(local), device="cpu")
    raw = model.encode([BGE_QUERY_INSTRUCTION + texts[0], texts[1]], convert_to_numpy=True)
    raw /= np.linalg.norm(raw, axis=1, keepdims=True)
    assert np.allclose(vectors[:2], raw, atol=1e-5) and np.allclose(vectors[0], vectors[2])
    again, _ = text_vectors(con, emb, texts, is_query, show_progress=False)
    assert emb.encoded == 2 and loads == [1] and np.array_equal(again, vectors)  # nothing re-embedded
    rr_dir = build_tiny_cross_encoder(tmp_path / "bge-reranker-base")
    rr = resolve_reranker(str(rr_dir))
    scores = rr.load("cpu").predict([("Who wrote Dune?", "Dune is a novel.")], show_progress_bar=False)
    assert 0.0 <= float(scores[0]) <= 1.0  # one logit -> sigmoid


class _LengthModel:
    """A stand-in model: 3-dim vectors from each text's length; records each encode call's size."""

    def __init__(self):
        self.calls: list[int] = []

    def get_embedding_dimension(self) -> int:
        return 3

    def encode(self, texts, **kw):
        self.calls.append(len(texts))
        return np.array([[len(t), 1.0, 2.0] for t in texts], dtype=np.float32)


def test_texts_are_committed_as_the_embedding_job_commits(tmp_path, monkeypatch):
    """store_missing encodes ENCODE_STEP texts per call and commits through the embedding job's Committer: every
    commit_texts(job) texts (here max(8, 100 / 4) = 25, so on the calls of 8: 32, 32, 32 and the last 4); the model
    gets the same calls as in a job that commits every call (what keeps a real model's vectors the same)."""
    import ingest.retrieval.embed as embed
    import ingest.rewriting.vectors as vectors
    from ingest.retrieval.embedders import EmbedderSpec
    from warehouse.db import connect

    texts = [f"text {'x' * (i % 13)} {i:03d}" for i in range(100)]
    spec = EmbedderSpec(name="fake", source=str(tmp_path))
    monkeypatch.setattr(vectors, "ENCODE_STEP", 8)
    stored: list[int] = []
    original = embed.store_embeddings
    monkeypatch.setattr(embed, "store_embeddings", lambda c, e, h, v: (stored.append(len(h)), original(c, e, h, v)))
    results = []
    for commits_per_job, commit_every in ((4, 8), (100, 8)):  # every 25 texts; every call of 8
        monkeypatch.setattr(embed, "COMMITS_PER_JOB", commits_per_job)
        monkeypatch.setattr(embed, "COMMIT_TEXTS", commit_every)
        stored.clear()
        db = connect(tmp_path / f"w{commits_per_job}.duckdb")
        model = _LengthModel()
        got, _ = text_vectors(db, Embedder(spec, load=lambda m=model: m), texts, [False] * 100, show_progress=False)
        results.append((list(stored), model.calls, got))
        db.close()
    assert results[0][0] == [32, 32, 32, 4] and results[1][0] == [8] * 12 + [4]
    assert results[0][1] == results[1][1] == [8] * 12 + [4]
    assert np.array_equal(results[0][2], results[1][2])
