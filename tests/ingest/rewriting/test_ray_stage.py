"""The rewriting stage with ``engine: ray`` writes the local engine's rows: its missing texts embedded and its
cross-encoder pairs scored by Ray Data jobs on one local Ray instance (2 CPUs), tiny random-weight models and a
scripted LLM (test stand-ins, never results). Vectors and scores may differ in the last bits (another process), so
floats are compared within 1e-6 and everything else exactly. Skips only when Ray is not installed."""

from __future__ import annotations

import math

import numpy as np
import pytest

from ingest.chunking.sentence_windows import sentence_chunk_stage
from ingest.llm import LLMCache
from ingest.llm.scripted import ScriptedBackend
from ingest.retrieval.embedders import EmbedderSpec
from ingest.retrieval.ray_engine import RaySettings
from ingest.retrieval.rerank import RerankerSpec
from ingest.rewriting.stage import rewrite_stage
from tests.ingest.retrieval.fixtures import build_tiny_cross_encoder, build_tiny_sentence_transformer
from tests.ingest.rewriting.fixtures import load_corpus, respond
from tests.ingest.rewriting.test_stage import SETTINGS, TABLES
from warehouse.db import connect


def _close(a, b) -> bool:
    """Equal, floats within 1e-6, lists and tuples element by element."""
    if isinstance(a, float) and isinstance(b, float):
        return math.isclose(a, b, rel_tol=0, abs_tol=1e-6) or (math.isnan(a) and math.isnan(b))
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(_close(x, y) for x, y in zip(a, b))
    return a == b


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    root = tmp_path_factory.mktemp("rewriting-models")
    return (
        EmbedderSpec("tiny-embedder", str(build_tiny_sentence_transformer(root / "embedder"))),
        RerankerSpec("tiny-reranker", str(build_tiny_cross_encoder(root / "reranker"))),
    )


def _run(tmp_path, models, engine):
    con = connect(tmp_path / f"{'ray' if engine else 'local'}.duckdb")
    load_corpus(con)
    sentence_chunk_stage(con, "towns", chunk_tokens=64, overlap=16)
    report = rewrite_stage(
        con,
        "towns",
        SETTINGS,
        embedder=models[0],
        reranker=models[1],
        llm=LLMCache(con, ScriptedBackend(respond), progress=False),
        show_progress=False,
        engine=engine,
    )
    tables = {t: con.execute(f"SELECT * FROM {t} ORDER BY ALL").fetchall() for t in TABLES}
    vectors = {
        h: np.asarray(v, dtype=np.float32)
        for h, v in con.execute("SELECT text_hash, vector FROM embeddings WHERE embedder = 'tiny-embedder'").fetchall()
    }
    con.close()
    return report, tables, vectors


def _driver_must_not_load(self, *args, **kwargs):
    raise AssertionError(f"{self.name} was loaded on the driver: the Ray engine runs the models on its workers")


def _driver_must_not_build(*args, **kwargs):
    raise AssertionError("an HNSW graph was built on the driver: the Ray engine builds each as a Ray task")


def test_ray_engine_writes_the_local_rewriting_rows(ray_instance, tmp_path, models, monkeypatch):
    local, local_tables, local_vectors = _run(tmp_path, models, None)
    for spec in models:  # the workers import the real classes; this process may not load a model any more
        monkeypatch.setattr(type(spec), "load", _driver_must_not_load)
    monkeypatch.setattr("ingest.rewriting.ann.build_index", _driver_must_not_build)  # nor build an HNSW graph
    remote, remote_tables, remote_vectors = _run(tmp_path, models, RaySettings(concurrency=1))
    for key in ("texts_embedded", "pairs_scored", "rewrites", "rewrite_text_runs", "rewrite_runs", "funnel"):
        assert remote[key] == local[key], key
    assert remote["texts_embedded"] > 100 and remote["pairs_scored"] > 100  # both jobs had work to do
    assert set(remote_vectors) == set(local_vectors)
    assert max(float(np.abs(remote_vectors[k] - local_vectors[k]).max()) for k in local_vectors) <= 1e-6
    for table in TABLES:
        got, want = remote_tables[table], local_tables[table]
        assert len(got) == len(want) and all(_close(g, w) for g, w in zip(got, want)), table
    # the HNSW graphs were Ray tasks, saved where the local engine saves them, the same files byte for byte
    graphs = {
        p.relative_to(tmp_path / "local.duckdb.ann"): p.read_bytes()
        for p in (tmp_path / "local.duckdb.ann").rglob("*.bin")
    }
    assert graphs
    assert {
        p.relative_to(tmp_path / "ray.duckdb.ann"): p.read_bytes() for p in (tmp_path / "ray.duckdb.ann").rglob("*.bin")
    } == graphs
