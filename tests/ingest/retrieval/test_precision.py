"""Precision: resolution of auto, names that carry the precision, bf16 and fp32 vectors stored as
distinct rows, reranker scores under bf16, and the CPU/encoder detection."""

from __future__ import annotations

import json

import numpy as np
import pytest

import ingest.retrieval.precision as precision
from ingest.retrieval.embed import embed_texts
from ingest.retrieval.embedders import EmbedderError, EmbedderSpec, resolve_embedder
from ingest.retrieval.precision import (
    PrecisionError,
    is_encoder_config,
    resolve_precision,
    split_name,
    stored_name,
)
from ingest.retrieval.rerank import rerank_stage, resolve_reranker
from ingest.retrieval.retrieve import retrieve_stage
from tests.ingest.retrieval.fixtures import (
    build_tiny_cross_encoder,
    build_tiny_sentence_transformer,
    create_condition_texts,
    query_hash,
    sha,
    store_vectors,
)


def test_names_carry_the_precision():
    assert stored_name("all-MiniLM-L6-v2", "fp32") == "all-MiniLM-L6-v2"
    assert stored_name("all-MiniLM-L6-v2", "bf16") == "all-MiniLM-L6-v2@bf16"
    assert stored_name("BAAI/bge-large-en-v1.5@bf16", "fp16") == "BAAI/bge-large-en-v1.5@fp16"
    assert split_name("all-MiniLM-L6-v2@bf16") == ("all-MiniLM-L6-v2", "bf16")
    assert split_name("/models/a@b/minilm") == ("/models/a@b/minilm", None)  # '@' inside a path is no suffix
    assert split_name("x@int8") == ("x@int8", None)
    with pytest.raises(PrecisionError):
        stored_name("m", "int8")


def test_auto_resolution(monkeypatch):
    monkeypatch.setattr(precision, "cpu_bf16_feature", lambda: "amx_bf16")
    assert resolve_precision("auto", "cpu", True) == "bf16"
    assert resolve_precision("auto", "cpu", False) == "fp32"  # a decoder: fp32
    assert resolve_precision("auto", "cpu", None) == "fp32"  # unknown architecture: fp32
    assert resolve_precision("auto", "cuda", True) == "fp16" and resolve_precision("auto", "cuda:1", None) == "fp16"
    assert resolve_precision("fp32", "cuda", True) == "fp32" and resolve_precision("bf16", "cpu", False) == "bf16"
    monkeypatch.setattr(precision, "cpu_bf16_feature", lambda: None)
    assert resolve_precision("auto", "cpu", True) == "fp32"  # no native bf16 on this CPU
    with pytest.raises(PrecisionError, match="not one of auto, fp32, bf16"):
        resolve_precision("fp8", "cpu", True)


def test_spec_resolution_and_conflicts(monkeypatch):
    monkeypatch.setattr(precision, "cpu_bf16_feature", lambda: "avx512_bf16")
    assert resolve_embedder(None).name == "all-MiniLM-L6-v2"  # no precision asked: as named (fp32)
    bf16 = resolve_embedder(None, "auto", "cpu")
    assert (bf16.name, bf16.precision, bf16.model_name) == ("all-MiniLM-L6-v2@bf16", "bf16", "all-MiniLM-L6-v2")
    assert resolve_embedder("all-MiniLM-L6-v2@bf16").name == "all-MiniLM-L6-v2@bf16"
    assert resolve_embedder("BAAI/bge-large-en-v1.5", "auto", "cuda").name == "BAAI/bge-large-en-v1.5@fp16"
    assert resolve_embedder("owner/unknown-model", "auto", "cpu").name == "owner/unknown-model"  # not known: fp32
    with pytest.raises(EmbedderError, match="names precision bf16 but precision fp32"):
        resolve_embedder("all-MiniLM-L6-v2@bf16", "fp32")
    with pytest.raises(EmbedderError, match="not one of"):
        resolve_embedder(None, "fp8")
    hand = EmbedderSpec(name="hand", source="/unused")  # a spec of unknown architecture stays fp32 under auto
    assert resolve_embedder(hand, "auto", "cpu").name == "hand"
    assert resolve_reranker("BAAI/bge-reranker-v2-m3", "auto", "cpu").name == "BAAI/bge-reranker-v2-m3@bf16"


def test_encoder_detection(tmp_path):
    assert is_encoder_config({"model_type": "bert"}) and is_encoder_config({"model_type": "xlm-roberta"})
    assert not is_encoder_config({"model_type": "qwen2"})
    assert not is_encoder_config({"model_type": "bert", "is_decoder": True})
    assert not is_encoder_config({"model_type": "t5", "is_encoder_decoder": True})
    model = tmp_path / "decoder"
    model.mkdir()
    (model / "config.json").write_text(json.dumps({"model_type": "llama"}))
    assert precision.encoder_from_source(str(model)) is False
    assert resolve_embedder(str(model), "auto", "cpu").precision == "fp32"
    assert precision.encoder_from_source(str(tmp_path / "nothing-here")) is None


def test_cpu_flags_are_read_from_cpuinfo(tmp_path):
    info = tmp_path / "cpuinfo"
    info.write_text("processor\t: 0\nflags\t\t: fpu sse avx512f avx512_bf16 amx_tile\n\nprocessor\t: 1\n")
    assert {"avx512_bf16", "amx_tile", "avx512f"} <= precision._cpuinfo_flags(str(info))
    assert precision._cpuinfo_flags(str(tmp_path / "missing")) == set()


@pytest.fixture(scope="module")
def tiny_path(tmp_path_factory):
    return build_tiny_sentence_transformer(tmp_path_factory.mktemp("tiny_st_precision"))


def test_both_precisions_store_distinct_rows(con, tiny_path):
    """fp32 and bf16 vectors of the same texts are two sets of rows under two names; close, not equal."""
    texts = ["alpha beta gamma delta", "the quick brown fox jumps over the lazy dog", "zeta"]
    create_condition_texts(
        con,
        [
            {
                "condition": "G2",
                "corpus": "demo",
                "chunk_id": f"x|demo/1|{i}",
                "doc_id": "demo/1",
                "chunkset": "x",
                "text": t,
            }
            for i, t in enumerate(texts)
        ],
    )
    con.execute("INSERT INTO queries VALUES ('demo/q1', 'demo/1', 'demo', 'which fox', 'x')")
    spec = resolve_embedder(str(tiny_path))
    assert spec.encoder is True  # a BERT model directory
    fp32 = embed_texts(con, spec, precision="fp32", device="cpu", show_progress=False)
    bf16 = embed_texts(con, spec, precision="bf16", device="cpu", show_progress=False)
    assert fp32["embedder"] == str(tiny_path.resolve()) and bf16["embedder"] == fp32["embedder"] + "@bf16"
    assert fp32["embedded"] == bf16["embedded"] == 4  # bf16 re-embeds: the fp32 rows are not its vectors
    rows = con.execute("SELECT embedder, text_hash, vector FROM embeddings ORDER BY embedder, text_hash").fetchall()
    assert len(rows) == 8 and {r[0] for r in rows} == {fp32["embedder"], bf16["embedder"]}
    by = {(r[0], r[1]): np.asarray(r[2], dtype=np.float64) for r in rows}
    for key in [sha(t) for t in texts] + [query_hash("which fox")]:
        a, b = by[(fp32["embedder"], key)], by[(bf16["embedder"], key)]
        assert not np.array_equal(a, b)  # different computations ...
        assert a @ b > 0.99  # ... of the same embedding
    # retrieval over each precision reads only its own vectors: two first-stage runs
    for p in ("fp32", "bf16"):
        retrieve_stage(con, spec, k=5, precision=p, show_progress=False)
    assert con.execute("SELECT embedder, count(*) FROM runs GROUP BY 1 ORDER BY 1").fetchall() == [
        (fp32["embedder"], 3),
        (bf16["embedder"], 3),
    ]
    # again: nothing more to embed under either name
    assert embed_texts(con, spec, precision="bf16", device="cpu", show_progress=False)["embedded"] == 0


def test_bf16_reranker_scores_are_their_own_run(con, tmp_path):
    ce = build_tiny_cross_encoder(tmp_path / "ce")
    texts = [f"passage {i} on topic {i % 3}" for i in range(6)]
    create_condition_texts(
        con,
        [
            {
                "condition": "G2",
                "corpus": "demo",
                "chunk_id": f"x|demo/d|{i}",
                "doc_id": "demo/d",
                "chunkset": "x",
                "text": t,
            }
            for i, t in enumerate(texts)
        ],
    )
    con.execute("INSERT INTO queries VALUES ('demo/q', 'demo/d', 'demo', 'topic one', 'x')")
    rng = np.random.default_rng(0)
    v = rng.standard_normal((7, 4))
    store_vectors(
        con, "hand", [sha(t) for t in texts] + [query_hash("topic one")], v / np.linalg.norm(v, axis=1)[:, None]
    )
    hand = EmbedderSpec(name="hand", source="/unused")
    retrieve_stage(con, hand, k=6, show_progress=False)
    a = rerank_stage(con, str(ce), hand, device="cpu", precision="fp32", show_progress=False)
    b = rerank_stage(con, str(ce), hand, device="cpu", precision="bf16", show_progress=False)
    assert b["reranker"] == a["reranker"] + "@bf16"
    got = dict(
        con.execute(
            "SELECT reranker, list(score ORDER BY chunk_id) FROM runs WHERE reranker <> 'none' GROUP BY 1"
        ).fetchall()
    )
    s32, s16 = np.array(got[a["reranker"]]), np.array(got[b["reranker"]])
    assert len(s32) == len(s16) == 6 and not np.array_equal(s32, s16)
    np.testing.assert_allclose(s16, s32, atol=0.05)


def test_a_loaded_model_for_another_precision_is_refused(con):
    from ingest.retrieval.embedders import REGISTRY

    create_condition_texts(
        con,
        [
            {
                "condition": "DOC",
                "corpus": "demo",
                "chunk_id": "doc|demo/1|0",
                "doc_id": "demo/1",
                "chunkset": "doc",
                "text": "t",
            }
        ],
    )
    minilm = REGISTRY["all-MiniLM-L6-v2"]  # an fp32 spec of an encoder: bf16 would relabel an fp32 model's vectors
    with pytest.raises(EmbedderError, match="a loaded model was passed"):
        embed_texts(con, minilm, precision="bf16", model=object(), show_progress=False)
    assert con.execute("SELECT count(*) FROM embeddings").fetchone()[0] == 0
