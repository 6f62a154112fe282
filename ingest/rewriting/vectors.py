"""Vectors for arbitrary texts through the ``embeddings`` table, so no text is ever embedded twice.

Keys are the project's (``docs/design.md``): a passage's key is ``sha256(text)``, a query's is
``sha256('[query] ' + text)``; the embedder's query instruction is applied at encode time only. Missing
keys are encoded (longest first, as the embedding job does), L2-normalized and stored in committed
batches (:func:`ingest.retrieval.embed.store_embeddings`); :func:`text_vectors` then returns the stored
vectors, one row per requested text.
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Callable, Sequence

import numpy as np

from ingest.retrieval.embed import (
    COMMIT_SECONDS,
    QUERY_HASH_PREFIX,
    Committer,
    arrow_query,
    commit_texts,
    stored_dimension,
)
from ingest.retrieval.embedders import EmbedderSpec
from ingest.retrieval.progress import progress_bar
from warehouse.db import bulk_appends, memory_capped, release_cached_memory

ENCODE_STEP = 256  # texts per model call (its batches are cut within each call)
FETCH_BLOCK = 50_000  # keys above which fetch_vectors scans the embedder's rows instead of joining


def text_key(text: str, is_query: bool) -> str:
    """The ``embeddings.text_hash`` of a text embedded as a query or as a passage."""
    return hashlib.sha256(((QUERY_HASH_PREFIX if is_query else "") + text).encode("utf-8")).hexdigest()


@dataclasses.dataclass
class Embedder:
    """A spec and a lazily loaded model (``load`` is called at most once, only when a key is missing)."""

    spec: EmbedderSpec
    load: Callable[[], object]
    batch_size: int = 64
    _model: object = None
    encoded: int = 0  # texts this process encoded (a rerun over stored keys encodes 0)
    engine: object = None  # an ingest.retrieval.ray_engine.RaySettings: missing keys are encoded by a Ray Data job

    @property
    def model(self):
        if self._model is None:
            self._model = self.load()
        return self._model


def text_vectors(
    con,
    embedder: Embedder,
    texts: Sequence[str],
    is_query: Sequence[bool],
    *,
    label: str = "embedding",
    show_progress: bool = True,
) -> tuple[np.ndarray, list[str]]:
    """``(vectors (n, d) float32, keys)`` for ``texts``; missing keys are encoded and stored first."""
    keys = [text_key(t, q) for t, q in zip(texts, is_query)]
    unique = dict(zip(keys, zip(texts, is_query)))
    stored = stored_keys(con, embedder.spec.name, list(unique))
    store_missing(
        con, embedder, {k: v for k, v in unique.items() if k not in stored}, label=label, show_progress=show_progress
    )
    return fetch_vectors(con, embedder.spec.name, keys), keys


def store_missing(
    con, embedder: Embedder, todo: dict[str, tuple[str, bool]], *, label: str = "embedding", show_progress: bool = True
) -> None:
    """Encode and store ``todo`` (key -> (text, is_query), keys known not to be stored), longest text first,
    :data:`ENCODE_STEP` texts per model call, committed as the embedding job commits
    (:class:`ingest.retrieval.embed.Committer`: every :func:`ingest.retrieval.embed.commit_texts` texts or
    ``COMMIT_SECONDS``); nothing is read back (:func:`fetch_vectors` does that)."""
    if not todo:
        return
    order = sorted(todo, key=lambda k: (-len(todo[k][0]), k))
    if embedder.engine is not None:
        _store_with_ray(con, embedder, todo, order, show_progress)
        return
    model = embedder.model
    dim = int(model.get_embedding_dimension())
    have = stored_dimension(con, embedder.spec.name)
    if have is not None and have != dim:
        raise ValueError(
            f"the warehouse holds {have}-dimensional vectors for {embedder.spec.name!r} but the model "
            f"gives {dim}: delete them (DELETE FROM embeddings WHERE embedder = ...) or rename the embedder"
        )
    inputs = embedder.spec.format_inputs([todo[k][0] for k in order], [todo[k][1] for k in order])
    with (
        progress_bar(f"{label} with {embedder.spec.name}", total=len(order), enabled=show_progress) as advance,
        bulk_appends(con),
    ):
        committer = Committer(con, embedder.spec.name, order, commit_texts(len(order)), COMMIT_SECONDS, advance)
        for start in range(0, len(order), ENCODE_STEP):
            part = inputs[start : start + ENCODE_STEP]
            committer.add(
                model.encode(
                    part,
                    batch_size=embedder.batch_size,
                    convert_to_numpy=True,
                    normalize_embeddings=False,
                    show_progress_bar=False,
                )
            )
            embedder.encoded += len(part)
    release_cached_memory(con)  # what DuckDB kept of the rows just written, before a matrix is read


def _store_with_ray(
    con, embedder: Embedder, todo: dict[str, tuple[str, bool]], order: list[str], show_progress: bool
) -> None:
    """:func:`store_missing` as a Ray Data job (:func:`ingest.retrieval.ray_engine.embed_with_ray`): the same keys in
    the same order, blocks of ``COMMIT_TEXTS`` texts, ``ray.batch_size`` texts per model call on the workers (the
    local ``batch_size`` when equal, the default 64: then the same model batches and vectors within 1e-6)."""
    from ingest.retrieval.embed import COMMIT_TEXTS, TextsToEmbed
    from ingest.retrieval.ray_engine import embed_with_ray

    todo_rows = TextsToEmbed(
        len(order), len(order), 0, order, [todo[k][0] for k in order], np.array([todo[k][1] for k in order], dtype=bool)
    )
    report = embed_with_ray(
        con,
        embedder.spec,
        todo_rows,
        embedder.engine,
        {"dim": stored_dimension(con, embedder.spec.name)},
        write_batch=COMMIT_TEXTS,
        commit_seconds=COMMIT_SECONDS,
        show_progress=show_progress,
    )
    embedder.encoded += report["embedded"]
    release_cached_memory(con)


def stored_keys(con, embedder: str, keys: list[str]) -> set[str]:
    """The ``keys`` that have a stored vector of ``embedder``."""
    if not keys:
        return set()
    import pyarrow as pa

    con.register("_wanted_keys", pa.table({"text_hash": keys}))
    try:
        rows = con.execute(
            "SELECT DISTINCT e.text_hash FROM embeddings e JOIN _wanted_keys USING (text_hash) WHERE e.embedder = ?",
            [embedder],
        ).fetchall()
    finally:
        con.unregister("_wanted_keys")
    return {r[0] for r in rows}


def fetch_vectors(con, embedder: str, keys: list[str], block: int = FETCH_BLOCK) -> np.ndarray:
    """The stored vectors of ``keys`` as a float32 matrix, row ``i`` for ``keys[i]`` (keys must be stored).

    Up to ``block`` keys: one join of the keys with ``embeddings``. More (a corpus's chunks): one streamed
    scan of the embedder's rows (:func:`_scan_vectors`), each row placed at its keys' positions, so
    memory is the matrix plus one Arrow batch and the keys sorted once (~73 B each), with no join hash table
    over the vectors. A key stored twice for one embedder (never written so: the writers skip stored
    keys) takes any one of its rows under the join, the first in storage order under the scan."""
    if not keys:
        return np.zeros((0, 0), dtype=np.float32)
    if len(keys) > block:
        return _scan_vectors(con, embedder, keys)
    import pyarrow as pa

    con.register("_wanted_keys", pa.table({"text_hash": keys, "pos": np.arange(len(keys))}))
    try:
        table = arrow_query(
            con,
            "SELECT w.pos, any_value(e.vector) AS vector FROM _wanted_keys w "
            "LEFT JOIN embeddings e ON e.text_hash = w.text_hash AND e.embedder = $e "
            "GROUP BY w.pos ORDER BY w.pos",
            {"e": embedder},
        )
    finally:
        con.unregister("_wanted_keys")
    column = table.column("vector").combine_chunks()
    if column.null_count:
        raise ValueError(f"{column.null_count} texts have no {embedder!r} vector")
    dim = column.value_lengths()[0].as_py()
    return column.flatten().to_numpy(zero_copy_only=False).reshape(len(keys), dim).astype(np.float32, copy=False)


SCAN_ROWS = 16_384  # rows per Arrow batch of the streamed scan
SCAN_CACHE = "512MiB"  # DuckDB's memory limit during the scan (warehouse.db.memory_capped)


def _scan_vectors(con, embedder: str, keys: list[str]) -> np.ndarray:
    """:func:`fetch_vectors` for many keys: ``SELECT text_hash, vector FROM embeddings WHERE embedder = ?``
    read in Arrow batches of :data:`SCAN_ROWS`; each batch's hashes are looked up in the keys sorted once
    (``numpy.searchsorted`` over fixed-width bytes) and its vectors copied to every position of their key
    (a text shared by two chunks fills both rows)."""
    # one byte wider than the longest key: a longer stored hash cut to this width never equals a key
    width = max(len(k.encode("utf-8")) for k in keys) + 1
    wanted = np.array([k.encode("utf-8") for k in keys], dtype=f"S{width}")
    order = np.argsort(wanted, kind="stable")
    wanted = wanted[order]  # sorted; wanted[j] is keys[order[j]]
    out: np.ndarray | None = None
    filled = np.zeros(len(keys), dtype=bool)
    with memory_capped(con, SCAN_CACHE):  # the table's blocks are not all kept cached
        # a relation's reader streams without the extra copy of a DB-API result's
        reader = con.sql(
            "SELECT text_hash, vector FROM embeddings WHERE embedder = ?", params=[embedder]
        ).to_arrow_reader(SCAN_ROWS)
        try:
            for batch in reader:
                out = _place(batch, wanted, order, width, filled, out, len(keys))
        finally:
            reader.close()  # an open reader blocks the connection: the limit could not be given back
    missing = int((~filled).sum())
    if missing:
        raise ValueError(f"{missing} texts have no {embedder!r} vector")
    return out


def _place(
    batch, wanted: np.ndarray, order: np.ndarray, width: int, filled: np.ndarray, out: np.ndarray | None, n_keys: int
) -> np.ndarray | None:
    """Copy one Arrow batch's vectors to every position of their keys not filled yet (:func:`_scan_vectors`)."""
    hashes = np.array([h.encode("utf-8") for h in batch.column(0).to_pylist()], dtype=f"S{width}")
    lo = np.searchsorted(wanted, hashes, "left")
    count = np.searchsorted(wanted, hashes, "right") - lo
    rows = np.repeat(np.arange(len(hashes)), count)  # batch row of each (row, position) pair
    firsts = np.cumsum(count) - count
    positions = order[np.repeat(lo, count) + np.arange(len(rows)) - np.repeat(firsts, count)]
    new = ~filled[positions]
    positions, first = np.unique(positions[new], return_index=True)  # a key twice in a batch: its first row
    rows = rows[new][first]
    if not len(rows):
        return out
    values = batch.column(1).flatten().to_numpy(zero_copy_only=False).reshape(len(hashes), -1)
    if out is None:
        out = np.empty((n_keys, values.shape[1]), dtype=np.float32)
    out[positions] = values[rows]
    filled[positions] = True
    return out
