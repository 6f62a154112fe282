"""The Ray engine writes the local engine's rows: same keys and embedder name, vectors within 1e-6 (MiniLM, fp32),
also when a worker dies mid-job and when the driver was interrupted before (the rerun embeds only the rest).

One local Ray instance (2 CPUs) is shared by the module; the tests skip only when Ray is not installed."""

from __future__ import annotations

import sys

import numpy as np
import pytest

from ingest.retrieval.embed import embed_texts
from ingest.retrieval.embedders import resolve_embedder
from ingest.retrieval.ray_engine import FAULT_ENV, RayEngineError, RaySettings
from tests.ingest.retrieval.fixtures import create_condition_texts
from warehouse.db import connect

SETTINGS = RaySettings(batch_size=8, concurrency=1)
WRITE_BATCH = 16  # 42 texts: blocks of 16, 16 and 10, model batches of 8
WORDS = "retrieval chunk section dense sparse rerank query passage document warehouse".split()


def _texts() -> list[str]:
    # 40 distinct passages of 1 to 40 words (several share a length, so the key breaks the sort's ties)
    return [" ".join(WORDS[(i * 7 + j) % len(WORDS)] for j in range(1 + (i * 13) % 40)) + f" #{i}" for i in range(40)]


def _warehouse(path):
    con = connect(path)
    create_condition_texts(
        con,
        [
            {
                "condition": "G2",
                "corpus": "demo",
                "chunk_id": f"x|demo/{i}|0",
                "doc_id": f"demo/{i}",
                "chunkset": "x",
                "text": t,
            }
            for i, t in enumerate(_texts())
        ],
    )
    con.execute(
        "INSERT INTO queries VALUES ('demo/q1', 'demo/1', 'demo', 'what is dense retrieval', 'x'), "
        "('demo/q2', 'demo/2', 'demo', 'rerank a passage', 'x')"
    )
    return con


def _stored(con) -> dict[tuple[str, str], np.ndarray]:
    rows = con.execute("SELECT embedder, text_hash, vector FROM embeddings").fetchall()
    return {(e, h): np.asarray(v, dtype=np.float32) for e, h, v in rows}


@pytest.fixture(scope="module")
def spec():
    return resolve_embedder("all-MiniLM-L6-v2", "fp32")


@pytest.fixture(scope="module")
def model(spec):
    return spec.load("cpu")


@pytest.fixture(scope="module")
def reference(tmp_path_factory, spec, model):
    """The local engine's rows for the 42 texts (40 passages, 2 queries)."""
    con = _warehouse(tmp_path_factory.mktemp("local") / "w.duckdb")
    report = embed_texts(
        con, spec, model=model, precision=None, device="cpu", batch_size=8, write_batch=WRITE_BATCH, show_progress=False
    )
    assert report["embedded"] == 42
    rows = _stored(con)
    con.close()
    return rows


def _assert_same_rows(got: dict, want: dict) -> None:
    assert set(got) == set(want) and {e for e, _ in got} == {"all-MiniLM-L6-v2"}
    assert max(float(np.abs(got[k] - want[k]).max()) for k in want) <= 1e-6


def test_ray_job_writes_the_local_rows(ray_instance, tmp_path, spec, reference):
    con = _warehouse(tmp_path / "w.duckdb")
    report = embed_texts(con, spec, precision=None, write_batch=WRITE_BATCH, show_progress=False, engine=SETTINGS)
    assert (report["embedder"], report["embedded"], report["dim"]) == ("all-MiniLM-L6-v2", 42, 384)
    _assert_same_rows(_stored(con), reference)
    # every passage got its token count too, as with the local engine
    assert con.execute("SELECT count(*) FROM text_tokens WHERE embedder = 'all-MiniLM-L6-v2'").fetchall()[0][0] == 40
    again = embed_texts(con, spec, precision=None, show_progress=False, engine=SETTINGS)
    assert (again["already_stored"], again["embedded"]) == (42, 0)


def test_killed_worker_is_restarted_and_the_job_equals_an_uninterrupted_run(
    ray_instance, tmp_path, monkeypatch, spec, reference
):
    marker = tmp_path / "killed"
    monkeypatch.setenv(FAULT_ENV, str(marker))
    con = _warehouse(tmp_path / "w.duckdb")
    report = embed_texts(con, spec, precision=None, write_batch=WRITE_BATCH, show_progress=False, engine=SETTINGS)
    assert marker.read_text(encoding="utf-8").startswith("killed worker")  # a worker did die mid-job
    assert report["embedded"] == 42
    _assert_same_rows(_stored(con), reference)


class _Interrupted(KeyboardInterrupt):
    pass


class _DiesOnSecondCall:
    """The local engine's model, interrupted (like a killed driver) on its second encode call."""

    def __init__(self, model):
        self.model, self.calls = model, 0

    def get_embedding_dimension(self):
        return self.model.get_embedding_dimension()

    def encode(self, texts, **kw):
        self.calls += 1
        if self.calls == 2:
            raise _Interrupted
        return self.model.encode(texts, **kw)


def test_interrupted_driver_leaves_committed_rows_and_ray_embeds_only_the_rest(
    ray_instance, tmp_path, spec, model, reference
):
    con = _warehouse(tmp_path / "w.duckdb")
    with pytest.raises(_Interrupted):  # one model call of 16 texts, committed; the second never returns
        embed_texts(
            con,
            spec,
            model=_DiesOnSecondCall(model),
            precision=None,
            device="cpu",
            batch_size=16,
            write_batch=WRITE_BATCH,
            show_progress=False,
        )
    first = _stored(con)
    assert len(first) == WRITE_BATCH
    report = embed_texts(con, spec, precision=None, write_batch=WRITE_BATCH, show_progress=False, engine=SETTINGS)
    assert (report["already_stored"], report["embedded"]) == (WRITE_BATCH, 42 - WRITE_BATCH)
    final = _stored(con)
    assert all(np.array_equal(final[k], v) for k, v in first.items())  # committed rows untouched
    _assert_same_rows(final, reference)


def test_without_ray_the_engine_says_which_extra_to_install(monkeypatch, tmp_path, spec):
    monkeypatch.setitem(sys.modules, "ray", None)  # import ray -> ImportError
    con = _warehouse(tmp_path / "w.duckdb")
    with pytest.raises(RayEngineError, match=r"pip install -e '\.\[ray\]'"):
        embed_texts(con, spec, precision=None, show_progress=False, engine=SETTINGS)
    assert con.execute("SELECT count(*) FROM embeddings").fetchall()[0][0] == 0


def test_ray_reranking_writes_the_local_runs(ray_instance, tmp_path):
    from ingest.retrieval.rerank import rerank_stage
    from ingest.retrieval.retrieve import retrieve_stage
    from tests.ingest.retrieval.fixtures import build_tiny_cross_encoder
    from tests.ingest.retrieval.test_rerank import HAND, _load

    ce = str(build_tiny_cross_encoder(tmp_path / "ce"))
    runs = {}
    for engine in (None, SETTINGS):
        con = connect(tmp_path / f"{'ray' if engine else 'local'}.duckdb")
        _load(con, np.random.default_rng(0), n_chunks=30, n_queries=2)
        retrieve_stage(con, HAND, k=50, show_progress=False)
        report = rerank_stage(con, ce, HAND, device="cpu", precision="fp32", show_progress=False, engine=engine)
        assert report["pairs_scored"] == 2 * 30  # G2 and G3 share their texts: scored once
        runs[engine is None] = con.execute(
            "SELECT corpus, embedder, reranker, condition, query_id, rank, chunk_id, "
            "score FROM runs WHERE reranker <> 'none' ORDER BY ALL"
        ).fetchall()
        con.close()
    local, remote = runs[True], runs[False]
    assert len(local) == 2 * 2 * 30 and [r[:7] for r in remote] == [r[:7] for r in local]
    assert max(abs(a[7] - b[7]) for a, b in zip(local, remote)) <= 1e-6
