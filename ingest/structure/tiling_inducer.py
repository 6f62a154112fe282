"""The TextTiling inducer over stored documents: paragraph vectors in, verified section rows out."""

from __future__ import annotations

from typing import Sequence

import duckdb
import numpy as np

from ingest.corpora.docs import StoredDoc
from ingest.retrieval.embedders import EmbedderSpec
from ingest.structure.llm_inducer import InductionResult
from ingest.structure.paragraph_vectors import paragraph_vectors
from ingest.structure.segments import build_sections, verify_sections
from ingest.structure.texttiling import TextTilingParams, headings_from_tiles, tile
from ingest.structure.titles import segment_titles


def induce_one(doc: StoredDoc, vectors: np.ndarray, params: TextTilingParams) -> InductionResult:
    """Tile one document (see :mod:`ingest.structure.texttiling`) and verify the resulting tree."""
    texts = doc.paragraph_texts()
    tiles = tile(vectors, params)
    top_titles = segment_titles(texts, [(a, b) for a, b, _ in tiles])
    subs = [s for _, _, ss in tiles for s in ss]
    flat_sub_titles = iter(segment_titles(texts, subs)) if subs else iter(())
    sub_titles = [[next(flat_sub_titles) for _ in ss] for _, _, ss in tiles]
    rows, dropped = build_sections(headings_from_tiles(tiles, top_titles, sub_titles), doc.paragraphs)
    problems = verify_sections(rows, doc.paragraphs)
    if problems or dropped:
        return InductionResult(
            doc.doc_id,
            "failed",
            [],
            "tree fails verification: " + "; ".join(problems[:5] or [f"{len(dropped)} empty headings"]),
        )
    n_sub = sum(len(ss) for _, _, ss in tiles)
    return InductionResult(
        doc.doc_id, "usable", rows, f"texttiling: {len(tiles)} top-level segments, {n_sub} subsegments"
    )


def induce_with_texttiling(
    con: duckdb.DuckDBPyConnection,
    docs: Sequence[StoredDoc],
    params: TextTilingParams = TextTilingParams(),
    embedder: str | EmbedderSpec | None = None,
    *,
    model=None,
    show_progress: bool = True,
    precision: str | None = "auto",
) -> tuple[list[InductionResult], dict]:
    """Embed every paragraph once (cached in ``embeddings``, computed in ``precision``), tile each
    document, verify each tree.

    Returns the results in ``docs`` order and the embedding report."""
    texts = [t for d in docs for t in d.paragraph_texts()]
    vectors, report = paragraph_vectors(
        con, texts, embedder, model=model, show_progress=show_progress, precision=precision
    )
    results, lo = [], 0
    for d in docs:
        n = len(d.paragraphs)
        results.append(induce_one(d, vectors[lo : lo + n], params))
        lo += n
    return results, report
