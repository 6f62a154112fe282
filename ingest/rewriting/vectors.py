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

from ingest.retrieval.embed import QUERY_HASH_PREFIX, arrow_query, l2_normalize, store_embeddings, stored_dimension
from ingest.retrieval.embedders import EmbedderSpec
from ingest.retrieval.progress import progress_bar

WRITE_BATCH = 256
FETCH_BLOCK = 50_000  # vectors read from the warehouse at a time


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

    @property
    def model(self):
        if self._model is None:
            self._model = self.load()
        return self._model


def text_vectors(con, embedder: Embedder, texts: Sequence[str], is_query: Sequence[bool], *,
                 label: str = "embedding", show_progress: bool = True) -> tuple[np.ndarray, list[str]]:
    """``(vectors (n, d) float32, keys)`` for ``texts``; missing keys are encoded and stored first."""
    keys = [text_key(t, q) for t, q in zip(texts, is_query)]
    unique = dict(zip(keys, zip(texts, is_query)))
    stored = stored_keys(con, embedder.spec.name, list(unique))
    todo = sorted((k for k in unique if k not in stored), key=lambda k: (-len(unique[k][0]), k))
    if todo:
        model = embedder.model
        dim = int(model.get_embedding_dimension())
        have = stored_dimension(con, embedder.spec.name)
        if have is not None and have != dim:
            raise ValueError(f"the warehouse holds {have}-dimensional vectors for {embedder.spec.name!r} but the model "
                             f"gives {dim}: delete them (DELETE FROM embeddings WHERE embedder = ...) or rename the embedder")
        inputs = embedder.spec.format_inputs([unique[k][0] for k in todo], [unique[k][1] for k in todo])
        with progress_bar(f"{label} with {embedder.spec.name}", total=len(todo), enabled=show_progress) as advance:
            for start in range(0, len(todo), WRITE_BATCH):
                part = inputs[start:start + WRITE_BATCH]
                vectors = model.encode(part, batch_size=embedder.batch_size, convert_to_numpy=True,
                                       normalize_embeddings=False, show_progress_bar=False)
                store_embeddings(con, embedder.spec.name, todo[start:start + WRITE_BATCH], l2_normalize(vectors))
                embedder.encoded += len(part)
                advance(len(part))
    return fetch_vectors(con, embedder.spec.name, keys), keys


def stored_keys(con, embedder: str, keys: list[str]) -> set[str]:
    """The ``keys`` that have a stored vector of ``embedder``."""
    if not keys:
        return set()
    import pyarrow as pa

    con.register("_wanted_keys", pa.table({"text_hash": keys}))
    try:
        rows = con.execute("SELECT DISTINCT e.text_hash FROM embeddings e JOIN _wanted_keys USING (text_hash) "
                           "WHERE e.embedder = ?", [embedder]).fetchall()
    finally:
        con.unregister("_wanted_keys")
    return {r[0] for r in rows}


def fetch_vectors(con, embedder: str, keys: list[str], block: int = FETCH_BLOCK) -> np.ndarray:
    """The stored vectors of ``keys`` as a float32 matrix, row ``i`` for ``keys[i]`` (keys must be stored).

    Streamed in blocks of ``block`` keys into one preallocated matrix: memory is the matrix plus one
    block, never a Python list of every vector."""
    import pyarrow as pa

    if not keys:
        return np.zeros((0, 0), dtype=np.float32)
    out: np.ndarray | None = None
    for lo in range(0, len(keys), block):
        part = keys[lo:lo + block]
        con.register("_wanted_keys", pa.table({"text_hash": part, "pos": np.arange(len(part))}))
        try:
            table = arrow_query(con, "SELECT w.pos, any_value(e.vector) AS vector FROM _wanted_keys w "
                                     "LEFT JOIN embeddings e ON e.text_hash = w.text_hash AND e.embedder = $e "
                                     "GROUP BY w.pos ORDER BY w.pos", {"e": embedder})
        finally:
            con.unregister("_wanted_keys")
        column = table.column("vector").combine_chunks()
        if column.null_count:
            raise ValueError(f"{column.null_count} texts have no {embedder!r} vector")
        dim = column.value_lengths()[0].as_py()
        if out is None:
            out = np.empty((len(keys), dim), dtype=np.float32)
        out[lo:lo + len(part)] = column.flatten().to_numpy(zero_copy_only=False).reshape(len(part), dim)
    return out
