"""The tie rule of every ranking: equal scores are ordered by document, then by chunk, as numbers.

A chunk's place in tie order is ``(natural_key(doc_id), natural_key(chunk_idx))`` where
:func:`natural_key` compares runs of digits as integers and the text between them as strings, so
``scifact/9 < scifact/10`` and, within a document, chunk 2 < chunk 10 (the chunk_id strings sort
``'...|10' < '...|2'``). ``chunk_idx`` is the last ``|``-field of the chunk_id
(``<chunkset>|<doc_id>|<chunk_idx>``). Flat and two-stage retrieval sort each index into this order
once, so the retrieval kernel's position order is the tie order; reranking breaks its ties with
:func:`tie_ranks`.
"""

from __future__ import annotations

import re
from typing import Sequence

import numpy as np

_RUNS = re.compile(r"(\d+)")


def natural_key(text: str) -> tuple:
    """``'qasper/1909.00694'`` -> ``(((1, 'qasper/'), (0, 1909), (1, '.'), (0, 694)), text)``: digit
    runs as integers, other runs as strings, then the text itself, so keys that differ only in
    leading zeros still order deterministically."""
    return tuple((0, int(p)) if p.isdigit() else (1, p) for p in _RUNS.split(text) if p), text


def chunk_key(doc_id: str, chunk_id: str) -> tuple:
    """The tie key of one chunk: its document, then its number within the document."""
    return natural_key(doc_id), natural_key(chunk_id.rsplit("|", 1)[-1])


def tie_order(doc_ids: Sequence[str], chunk_ids: Sequence[str]) -> np.ndarray:
    """Positions that sort the chunks into tie order (a permutation, int64)."""
    keys = [chunk_key(d, c) for d, c in zip(doc_ids, chunk_ids)]
    return np.array(sorted(range(len(keys)), key=keys.__getitem__), dtype=np.int64)


def tie_ranks(doc_ids: Sequence[str], chunk_ids: Sequence[str]) -> np.ndarray:
    """Each chunk's rank in tie order (0-based, int64; equal (doc, chunk) pairs share a rank)."""
    keys = [chunk_key(d, c) for d, c in zip(doc_ids, chunk_ids)]
    distinct = {k: r for r, k in enumerate(sorted(set(keys)))}
    return np.array([distinct[k] for k in keys], dtype=np.int64)
