"""The embedding job: every condition text and every query embedded once per embedder.

Keys (``docs/design.md``): a passage's key is ``sha256(text)`` (``int_condition_texts.text_hash``), a
query's is ``sha256('[query] ' || text)``. The model's query instruction is applied at encode time
only (:class:`ingest.retrieval.embedders.EmbedderSpec`), so it never changes a key. Identical texts across
conditions (e.g. A3 and A4 share an index) share one key and are embedded once.

Vectors are stored L2-normalized (``v / ||v||_2``, float32) in ``embeddings(embedder, text_hash,
vector)``. Texts are sorted by length (longest first, then hash) so each model batch pads little,
and committed every :data:`COMMIT_TEXTS` texts (in a job of more than ``COMMIT_TEXTS x COMMITS_PER_JOB``
texts, every ``1 / COMMITS_PER_JOB`` of it: :func:`commit_texts`) or :data:`COMMIT_SECONDS` seconds, whichever
comes first (always on a model-batch boundary): an interrupted job loses at most the uncommitted texts,
and a rerun embeds only what is missing, in the same model batches a clean run would have used.

Precision (:mod:`ingest.retrieval.precision`): ``precision='auto'`` (the default) computes in bf16 on a
CPU with native bf16 instructions for an encoder, fp16 on CUDA, else fp32; the stored ``embedder``
name carries the precision (``all-MiniLM-L6-v2@bf16``), so vectors of different precisions never mix.

Truncation (:mod:`ingest.retrieval.truncation`): every requested passage also gets its input length
and the model's window in ``text_tokens``, and the report counts per condition the passages longer
than the window and the tokens the model never reads.
"""

from __future__ import annotations

import dataclasses
import time
import warnings
from typing import Sequence

import duckdb
import numpy as np
import pyarrow as pa

from ingest.retrieval.embedders import EmbedderSpec, auto_device, check_loaded_precision, resolve_embedder
from ingest.retrieval.memory import check_memory, texts_memory
from ingest.retrieval.progress import progress_bar
from ingest.retrieval.truncation import count_missing
from warehouse.db import bulk_appends, transaction

QUERY_HASH_PREFIX = "[query] "
#: Commit the embeddings computed so far after this many texts ...
COMMIT_TEXTS = 256
#: ... (a job of more texts than ``COMMIT_TEXTS x COMMITS_PER_JOB`` commits every ``1 / COMMITS_PER_JOB`` of it) ...
COMMITS_PER_JOB = 100
#: ... or after this many seconds (wall clock) since the last commit, whichever comes first.
COMMIT_SECONDS = 30.0


def commit_texts(total: int) -> int:
    """Texts between two commits of a local job of ``total`` texts: :data:`COMMIT_TEXTS`, or the job's
    ``1 / COMMITS_PER_JOB`` when that is more, so a fast model is not held up by thousands of commits (the
    stand-in embedder's stage at 512K documents, 1.2M texts: 219.6 s with commits of 256 texts, 139.5-152.2 s
    with this rule; benchmarks/README.md).
    A commit still comes at least every :data:`COMMIT_SECONDS`, so a kill loses at most the texts of
    ``min(commit_texts(total) texts, COMMIT_SECONDS)`` (a slow model: 30 s of work, as before); the texts go to
    the model in the same batches whatever this is (``min(batch_size, COMMIT_TEXTS)`` at a time),
    so a resumed job's vectors are an uninterrupted one's."""
    return max(COMMIT_TEXTS, -(-total // COMMITS_PER_JOB))


class EmbedError(ValueError):
    """The job cannot run as asked; the message says why and what to do next."""


@dataclasses.dataclass(frozen=True)
class TextsToEmbed:
    """What a job would embed: ``requested`` rows (duplicates included), ``unique`` keys, and the
    keys not yet stored for the embedder as parallel lists sorted longest first."""

    requested: int
    unique: int
    already_stored: int
    hashes: list[str]
    texts: list[str]
    is_query: np.ndarray  # bool, parallel to hashes


def relation_exists(con: duckdb.DuckDBPyConnection, name: str) -> bool:
    """True when a table or view ``name`` exists in the connected warehouse."""
    return bool(
        con.execute("SELECT count(*) FROM information_schema.tables WHERE table_name = ?", [name]).fetchall()[0][0]
    )


def arrow_query(con: duckdb.DuckDBPyConnection, sql: str, params: dict | None = None) -> pa.Table:
    """Run ``sql`` with named ``params`` and return the result as an Arrow table.

    Goes through ``execute`` (which, unlike ``con.sql``, also works when a caller left a partly
    fetched result on the connection); DuckDB's warning about the extra copy this makes is silenced."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="Arrow output on a DB-API result", category=UserWarning)
        return con.execute(sql, params or {}).to_arrow_table()


def require_condition_texts(con: duckdb.DuckDBPyConnection) -> None:
    """Raise :class:`EmbedError` when the dbt model ``int_condition_texts`` has not been built."""
    if not relation_exists(con, "int_condition_texts"):
        raise EmbedError(
            "the warehouse has no int_condition_texts model: load a corpus, then run `dbt build` "
            "(or `ragwh run`) before embedding or retrieving"
        )


def texts_to_embed(
    con: duckdb.DuckDBPyConnection, embedder: str, corpus: str | None = None, conditions: Sequence[str] | None = None
) -> TextsToEmbed:
    """Collect passage texts of ``int_condition_texts`` (optionally only one ``corpus`` and only the
    given ``conditions``) and the queries of the same corpora, dedupe by key and drop keys already
    stored for ``embedder``."""
    require_condition_texts(con)
    filters = (["corpus = $corpus"] if corpus else []) + (
        ["list_contains($conditions, condition)"] if conditions else []
    )
    where = ("WHERE " + " AND ".join(filters)) if filters else ""
    params = ({"corpus": corpus} if corpus else {}) | ({"conditions": list(conditions)} if conditions else {})
    base = f"""
        WITH passages AS (SELECT text_hash, text, FALSE AS is_query FROM int_condition_texts {where}),
        qs AS (
            SELECT sha256('{QUERY_HASH_PREFIX}' || text) AS text_hash, text, TRUE AS is_query FROM queries
            WHERE corpus IN (SELECT DISTINCT corpus FROM int_condition_texts {where})
        ),
        requested AS (SELECT * FROM passages UNION ALL SELECT * FROM qs),
        uniq AS (
            SELECT text_hash, any_value(text) AS text, bool_or(is_query) AS is_query
            FROM requested GROUP BY text_hash
        ),
        stored AS (SELECT text_hash FROM embeddings WHERE embedder = $embedder)
    """
    params_e = {**params, "embedder": embedder}
    requested, unique, already, missing, missing_chars = con.execute(
        base
        + """, missing AS (SELECT text FROM uniq ANTI JOIN stored USING (text_hash))
                  SELECT (SELECT count(*) FROM requested), (SELECT count(*) FROM uniq),
                  (SELECT count(*) FROM uniq SEMI JOIN stored USING (text_hash)),
                  (SELECT count(*) FROM missing), (SELECT coalesce(sum(strlen(text)), 0) FROM missing)""",
        params_e,
    ).fetchall()[0]
    check_memory(
        texts_memory(int(missing), int(missing_chars)),
        f"embedding {int(missing):,} texts ({int(missing_chars) / 2**20:,.0f} MiB of text held by the driver)",
        "embed one corpus or fewer conditions at a time",
    )
    todo = arrow_query(
        con,
        base
        + """SELECT text_hash, text, is_query FROM uniq ANTI JOIN stored USING (text_hash)
                  ORDER BY length(text) DESC, text_hash""",
        params_e,
    )
    return TextsToEmbed(
        requested=int(requested),
        unique=int(unique),
        already_stored=int(already),
        hashes=todo.column("text_hash").to_pylist(),
        texts=todo.column("text").to_pylist(),
        is_query=np.asarray(todo.column("is_query").to_numpy(zero_copy_only=False), dtype=bool),
    )


def passages_without_tokens(
    con: duckdb.DuckDBPyConnection, embedder: str, corpus: str | None = None, conditions: Sequence[str] | None = None
) -> tuple[list[str], list[str]]:
    """Unique passage keys (and texts) of ``int_condition_texts`` (filtered like :func:`texts_to_embed`)
    that have no ``text_tokens`` row for ``embedder``, sorted by key."""
    table = arrow_query(
        con,
        """
        SELECT text_hash, any_value(text) AS text FROM int_condition_texts ct
        WHERE ($corpus IS NULL OR corpus = $corpus) AND ($all_conditions OR list_contains($conditions, condition))
          AND NOT EXISTS (SELECT 1 FROM text_tokens t WHERE t.embedder = $e AND t.text_hash = ct.text_hash)
        GROUP BY text_hash ORDER BY text_hash""",
        {"e": embedder, "corpus": corpus, "all_conditions": conditions is None, "conditions": list(conditions or [])},
    )
    return table.column("text_hash").to_pylist(), table.column("text").to_pylist()


def stored_dimension(con: duckdb.DuckDBPyConnection, embedder: str) -> int | None:
    """Dimension of the vectors stored for ``embedder`` (None when none are stored).

    Raises :class:`EmbedError` when stored vectors disagree among themselves."""
    dims = [
        r[0]
        for r in con.execute(
            "SELECT DISTINCT len(vector) FROM embeddings WHERE embedder = ? ORDER BY 1", [embedder]
        ).fetchall()
    ]
    if len(dims) > 1:
        raise EmbedError(f"embeddings for {embedder!r} have mixed dimensions {dims}: delete them and re-embed")
    return dims[0] if dims else None


def l2_normalize(vectors: np.ndarray) -> np.ndarray:
    """Row-wise ``v / ||v||_2`` in float32 (a zero vector stays zero)."""
    v = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(v, axis=1, keepdims=True)
    return v / np.where(norms == 0, 1.0, norms)


def vectors_to_arrow(vectors: np.ndarray) -> pa.ListArray:
    """A ``list<float32>`` array with one row per vector (zero-copy over the flat values)."""
    n, dim = vectors.shape
    offsets = pa.array(np.arange(0, (n + 1) * dim, dim, dtype=np.int32))
    return pa.ListArray.from_arrays(offsets, pa.array(np.ascontiguousarray(vectors, dtype=np.float32).ravel()))


def embed_texts(
    con: duckdb.DuckDBPyConnection,
    embedder: str | EmbedderSpec | None = None,
    *,
    corpus: str | None = None,
    conditions: Sequence[str] | None = None,
    precision: str | None = "auto",
    model=None,
    device: str | None = None,
    batch_size: int = 64,
    write_batch: int | None = None,
    commit_seconds: float | None = None,
    show_progress: bool = True,
    engine=None,
) -> dict:
    """Embed every condition text (of ``conditions``, default all) and query not yet stored for ``embedder``
    computed in ``precision`` (``auto | fp32 | bf16``; None: as ``embedder`` names it).

    ``model`` (a loaded ``SentenceTransformer`` computing in that precision) skips loading; otherwise the spec's model is loaded
    only when something is missing. Texts go to the model ``min(batch_size, write_batch or COMMIT_TEXTS)`` at a
    time and are committed every ``write_batch`` texts or ``commit_seconds`` seconds, whichever comes first
    (default :func:`commit_texts` of the job (the Ray engine: :data:`COMMIT_TEXTS`, its block size) and
    :data:`COMMIT_SECONDS`, read when the job starts).
    Refuses (:class:`EmbedError`, nothing written) when stored vectors have another dimension than
    the model. Returns the report: ``requested`` rows, ``unique`` keys, ``already_stored``,
    ``embedded`` and the model's ``dim`` (``embedder`` is the stored name, precision suffix included).
    Every requested passage has its ``text_tokens`` row afterwards
    (:func:`ingest.retrieval.truncation.truncation_summary` reads them).

    ``engine``: None runs the model in this process; a :class:`ingest.retrieval.ray_engine.RaySettings`
    runs it as a Ray Data job (:func:`ingest.retrieval.ray_engine.embed_with_ray`: same texts, same order,
    same model batches, a commit every ``write_batch or COMMIT_TEXTS`` texts; the precision is resolved here,
    as for every other stage, and the workers compute in it)."""
    device = device or auto_device()
    spec = resolve_embedder(embedder, precision, device)
    check_loaded_precision(embedder, spec, model)
    todo = texts_to_embed(con, spec.name, corpus, conditions)
    report = {
        "embedder": spec.name,
        "corpus": corpus,
        "requested": todo.requested,
        "unique": todo.unique,
        "already_stored": todo.already_stored,
        "embedded": 0,
        "dim": stored_dimension(con, spec.name),
    }
    if not todo.hashes:
        count_missing(con, spec, *passages_without_tokens(con, spec.name, corpus, conditions))
        return report
    if engine is not None:
        from ingest.retrieval.ray_engine import embed_with_ray, require_ray

        require_ray()  # before anything is written
        count_missing(con, spec, *passages_without_tokens(con, spec.name, corpus, conditions))
        return embed_with_ray(
            con,
            spec,
            todo,
            engine,
            report,
            write_batch=COMMIT_TEXTS if write_batch is None else write_batch,
            commit_seconds=COMMIT_SECONDS if commit_seconds is None else commit_seconds,
            show_progress=show_progress,
        )
    if model is None:
        model = spec.load(device)
    dim = int(model.get_embedding_dimension())
    if report["dim"] is not None and report["dim"] != dim:
        raise EmbedError(
            f"the warehouse holds {report['dim']}-dimensional vectors for embedder {spec.name!r} but the "
            f"loaded model {spec.load_path!r} produces {dim}-dimensional ones: the stored vectors come from a "
            "different model under the same name; delete them (DELETE FROM embeddings WHERE embedder = ...) "
            "or use another --embedder"
        )
    report["dim"] = dim
    count_missing(con, spec, *passages_without_tokens(con, spec.name, corpus, conditions), model=model)
    encoded = spec.format_inputs(todo.texts, todo.is_query)
    step = max(1, min(batch_size, COMMIT_TEXTS if write_batch is None else write_batch))  # never the job's size
    write_batch = commit_texts(len(encoded)) if write_batch is None else write_batch
    commit_seconds = COMMIT_SECONDS if commit_seconds is None else commit_seconds
    with (
        progress_bar(f"embedding with {spec.name}", total=len(encoded), enabled=show_progress) as advance,
        bulk_appends(con),
    ):
        committer = Committer(con, spec.name, todo.hashes, write_batch, commit_seconds, advance)
        for start in range(0, len(encoded), step):
            stop = min(start + step, len(encoded))
            committer.add(
                model.encode(
                    encoded[start:stop],
                    batch_size=batch_size,
                    convert_to_numpy=True,
                    normalize_embeddings=False,
                    show_progress_bar=False,
                )
            )
    report["embedded"] = committer.committed
    return report


class Committer:
    """Commits model outputs that arrive in text order (the job's sorted ``hashes``): each :meth:`add`
    takes the raw vectors of the next rows; they are L2-normalized and stored (:func:`store_embeddings`)
    once ``write_batch`` texts or ``commit_seconds`` seconds have gathered since the last commit, and at
    the last row. Both engines (local, :mod:`ingest.retrieval.ray_engine`) commit through it, so an
    interrupted job of either keeps every committed batch and a rerun embeds only the rest."""

    def __init__(
        self,
        con: duckdb.DuckDBPyConnection,
        embedder: str,
        hashes: list[str],
        write_batch: int,
        commit_seconds: float,
        advance=lambda n: None,
    ) -> None:
        self.con, self.embedder, self.hashes = con, embedder, hashes
        self.write_batch, self.commit_seconds, self.advance = write_batch, commit_seconds, advance
        self.committed, self.received, self.pending, self.last_commit = 0, 0, [], time.monotonic()

    def add(self, vectors: np.ndarray) -> None:
        self.pending.append(vectors)
        self.received += len(vectors)
        stop = self.received
        if (
            stop - self.committed >= self.write_batch
            or time.monotonic() - self.last_commit >= self.commit_seconds
            or stop == len(self.hashes)
        ):
            store_embeddings(
                self.con, self.embedder, self.hashes[self.committed : stop], l2_normalize(np.concatenate(self.pending))
            )
            self.committed, self.pending, self.last_commit = stop, [], time.monotonic()
        self.advance(len(vectors))


def embed_stage(
    con: duckdb.DuckDBPyConnection,
    embedder: str | EmbedderSpec | None = None,
    corpus: str | None = None,
    conditions: Sequence[str] | None = None,
    precision: str | None = "auto",
    engine=None,
) -> dict:
    """The orchestrator's embedding stage: :func:`embed_texts` with defaults (``engine``: None local, else
    :class:`ingest.retrieval.ray_engine.RaySettings`)."""
    return embed_texts(con, embedder, corpus=corpus, conditions=conditions, precision=precision, engine=engine)


def store_embeddings(con: duckdb.DuckDBPyConnection, embedder: str, hashes: list[str], vectors: np.ndarray) -> None:
    """Append one batch of already L2-normalized ``vectors`` (rows aligned with ``hashes``) to
    ``embeddings`` in its own transaction, so an interrupted job keeps every finished batch."""
    rows = pa.table(
        {
            "embedder": pa.array([embedder] * len(hashes), pa.string()),
            "text_hash": pa.array(hashes, pa.string()),
            "vector": vectors_to_arrow(vectors),
        }
    )
    with transaction(con):
        con.register("_new_embeddings", rows)
        try:
            con.execute("INSERT INTO embeddings SELECT embedder, text_hash, vector FROM _new_embeddings")
        finally:
            con.unregister("_new_embeddings")
