"""Paragraph embeddings for TextTiling, stored in (and reused from) the ``embeddings`` table.

A paragraph's text is ``documents.text[char_start:char_end].strip()`` and its key is
``sha256_hex(text)`` — the passage key of ``docs/design.md`` — so a paragraph that is also a chunk text
is embedded once for both uses. Only keys not yet stored for the embedder are encoded (passage
formatting of :class:`ingest.retrieval.embedders.EmbedderSpec`), L2-normalized and written in committed batches.
"""

from __future__ import annotations

import hashlib
from typing import Sequence

import duckdb
import numpy as np
import pyarrow as pa

from ingest.retrieval.embed import l2_normalize, store_embeddings
from ingest.retrieval.embedders import EmbedderSpec, check_loaded_precision, resolve_embedder
from ingest.retrieval.progress import progress_bar
from warehouse.db import bulk_appends


def text_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def stored_vectors(con: duckdb.DuckDBPyConnection, embedder: str, hashes: Sequence[str]) -> dict[str, np.ndarray]:
    """The stored vectors of ``hashes`` for ``embedder`` (missing keys absent)."""
    if not hashes:
        return {}
    con.register("_tt_keys", pa.table({"text_hash": sorted(set(hashes))}))
    try:
        table = con.sql(
            "SELECT e.text_hash, e.vector FROM embeddings e JOIN _tt_keys k USING (text_hash) WHERE e.embedder = ?",
            params=[embedder],
        ).to_arrow_table()
    finally:
        con.unregister("_tt_keys")
    if table.num_rows == 0:
        return {}
    keys = table.column("text_hash").to_pylist()
    vec = table.column("vector").combine_chunks()
    flat = np.asarray(vec.flatten().to_numpy(zero_copy_only=False), dtype=np.float32)
    matrix = flat.reshape(len(keys), -1)
    return dict(zip(keys, matrix))


def paragraph_vectors(
    con: duckdb.DuckDBPyConnection,
    texts: Sequence[str],
    embedder: str | EmbedderSpec | None = None,
    *,
    model=None,
    batch_size: int = 64,
    write_batch: int = 1024,
    show_progress: bool = True,
    precision: str | None = "auto",
) -> tuple[np.ndarray, dict]:
    """Vectors (``len(texts) x dim`` float32, L2-normalized) for ``texts``, embedding only the
    unique texts not yet stored for the embedder computing in ``precision`` (its stored name carries
    the precision: :mod:`ingest.retrieval.precision`). Returns the matrix and a report
    ``{requested, unique, already_stored, embedded}``."""
    spec = resolve_embedder(embedder, precision)
    check_loaded_precision(embedder, spec, model)
    hashes = [text_hash(t) for t in texts]
    have = stored_vectors(con, spec.name, hashes)
    todo: dict[str, str] = {}
    for h, t in zip(hashes, texts):
        if h not in have and h not in todo:
            todo[h] = t
    report = {
        "embedder": spec.name,
        "requested": len(texts),
        "unique": len(set(hashes)),
        "already_stored": len(set(hashes) & set(have)),
        "embedded": 0,
    }
    if todo:
        model = model if model is not None else spec.load()
        order = sorted(todo, key=lambda h: (-len(todo[h]), h))  # longest first: little padding per batch
        with (
            progress_bar(f"embedding paragraphs with {spec.name}", total=len(order), enabled=show_progress) as advance,
            bulk_appends(con),
        ):
            for lo in range(0, len(order), write_batch):
                keys = order[lo : lo + write_batch]
                inputs = spec.format_inputs([todo[h] for h in keys], [False] * len(keys))
                vectors = l2_normalize(
                    model.encode(
                        inputs,
                        batch_size=batch_size,
                        convert_to_numpy=True,
                        normalize_embeddings=False,
                        show_progress_bar=False,
                    )
                )
                store_embeddings(con, spec.name, keys, vectors)
                have.update(zip(keys, vectors))
                report["embedded"] += len(keys)
                advance(len(keys))
    matrix = np.stack([have[h] for h in hashes]).astype(np.float32) if hashes else np.zeros((0, 0), np.float32)
    return matrix, report
