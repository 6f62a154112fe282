"""The searchable index of the study: one corpus's sentence-window chunks with their vectors.

A chunk's text is exactly what is embedded and what the cross-encoder reads: its ``title`` prefix
(BEIR's ``title + " "``, :func:`ingest.chunking.prefixes.title_prefix`) followed by its content
``documents.text[char_start:char_end].strip()``; its key is ``sha256(text)``. Chunks are ordered by
``doc_id`` then ``chunk_idx`` (as numbers), which is also the order ties break in (dense top-k ties go
to the earlier position). Documents are numbered in that order (``doc_codes``).
"""
from __future__ import annotations

import dataclasses

import duckdb
import numpy as np

from ingest.retrieval.embed import arrow_query
from ingest.rewriting.vectors import Embedder, text_vectors


class RewriteError(ValueError):
    """The rewriting stage cannot run as asked; the message says what to do next."""


@dataclasses.dataclass
class ChunkIndex:
    chunk_ids: np.ndarray  # object (str), in index order
    doc_ids: np.ndarray  # object (str), per chunk
    doc_codes: np.ndarray  # int64, per chunk: position of its document in ``documents``
    documents: np.ndarray  # object (str), the distinct doc_ids in order
    texts: list[str]
    vectors: np.ndarray  # float32 (n, d), L2-normalized


def chunk_texts(con: duckdb.DuckDBPyConnection, corpus: str, chunkset: str) -> tuple[list[str], list[str], list[str]]:
    """``(chunk_ids, doc_ids, texts)`` of the chunkset's chunks of ``corpus`` in index order."""
    table = arrow_query(con, """
        SELECT c.chunk_id, c.doc_id, c.char_start, c.char_end, d.text AS doc_text, coalesce(p.prefix, '') AS prefix
        FROM chunks c JOIN documents d USING (doc_id)
        LEFT JOIN chunk_prefixes p ON p.chunk_id = c.chunk_id AND p.prefix_kind = 'title' AND p.depth = 0
        WHERE c.chunkset = $cs AND d.corpus = $corpus
        ORDER BY c.doc_id, c.chunk_idx""", {"cs": chunkset, "corpus": corpus})
    starts, ends = table.column("char_start").to_pylist(), table.column("char_end").to_pylist()
    texts = [p + t[s:e].strip() for p, t, s, e in zip(table.column("prefix").to_pylist(),
                                                       table.column("doc_text").to_pylist(), starts, ends)]
    return table.column("chunk_id").to_pylist(), table.column("doc_id").to_pylist(), texts


def load_index(con: duckdb.DuckDBPyConnection, corpus: str, chunkset: str, embedder: Embedder,
               show_progress: bool = True) -> ChunkIndex:
    """The corpus's index, embedding chunk texts not yet stored for the embedder."""
    chunk_ids, doc_ids, texts = chunk_texts(con, corpus, chunkset)
    if not chunk_ids:
        raise RewriteError(f"corpus {corpus!r} has no {chunkset!r} chunks: run the sentence chunking stage "
                          "(`ragwh run` with a rewriting config does) after loading the corpus")
    vectors, _ = text_vectors(con, embedder, texts, [False] * len(texts), label=f"embedding {corpus} chunks",
                              show_progress=show_progress)
    documents, codes = np.unique(np.array(doc_ids, dtype=object), return_inverse=True)
    return ChunkIndex(np.array(chunk_ids, dtype=object), np.array(doc_ids, dtype=object), codes.astype(np.int64),
                      documents, texts, vectors)
