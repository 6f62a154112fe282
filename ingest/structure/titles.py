"""Section titles from a segment's most distinctive terms (TF-IDF against the document).

Terms are lowercase words of at least 3 letters (``[a-z][a-z-]+`` after lowercasing, hyphens
kept inside words, leading/trailing hyphens dropped) that are not stopwords (``stopwords.txt``). For
a document with ``P`` paragraphs, ``df(t)`` = paragraphs containing ``t`` and
``idf(t) = ln((1 + P) / (1 + df(t))) + 1`` (smoothed, never zero). A segment's score for ``t`` is
``tf_seg(t) * idf(t)`` with ``tf_seg(t)`` = occurrences of ``t`` in the segment's paragraphs. The
title is the ``n_terms`` best terms, highest score first (ties alphabetical), joined by ", ";
a segment without any term is titled ``Section <k>`` (``k`` = 1-based order of the segment).
"""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path
from typing import Sequence

import numpy as np

_WORD = re.compile(r"[a-z][a-z-]+")
STOPWORDS_FILE = Path(__file__).resolve().parent / "stopwords.txt"


@lru_cache(maxsize=1)
def stopwords() -> frozenset[str]:
    lines = STOPWORDS_FILE.read_text(encoding="utf-8").splitlines()
    return frozenset(w.strip() for w in lines if w.strip() and not w.startswith("#"))


def terms(text: str) -> list[str]:
    """The title-candidate terms of ``text`` in order (see module doc)."""
    stop = stopwords()
    out = []
    for w in _WORD.findall(text.lower()):
        w = w.strip("-")
        if len(w) >= 3 and w not in stop:
            out.append(w)
    return out


def paragraph_term_counts(paragraphs: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """(vocabulary sorted alphabetically, counts[paragraph, term] as int64)."""
    tokens = [terms(p) for p in paragraphs]
    flat = [t for ts in tokens for t in ts]
    vocab, inverse = (
        np.unique(np.asarray(flat, dtype=object), return_inverse=True)
        if flat
        else (np.asarray([], dtype=object), np.zeros(0, dtype=np.int64))
    )
    counts = np.zeros((len(paragraphs), len(vocab)), dtype=np.int64)
    rows = np.repeat(np.arange(len(paragraphs)), [len(ts) for ts in tokens])
    np.add.at(counts, (rows, inverse.ravel()), 1)
    return vocab, counts


def segment_titles(paragraphs: Sequence[str], segments: Sequence[tuple[int, int]], n_terms: int = 3) -> list[str]:
    """One title per ``[start, end)`` paragraph range (see module doc for the scoring)."""
    vocab, counts = paragraph_term_counts(paragraphs)
    n_par = len(paragraphs)
    idf = np.log((1.0 + n_par) / (1.0 + (counts > 0).sum(axis=0))) + 1.0
    csum = np.vstack([np.zeros((1, len(vocab)), dtype=np.int64), np.cumsum(counts, axis=0)])
    titles = []
    for k, (a, b) in enumerate(segments, start=1):
        score = (csum[b] - csum[a]) * idf
        nonzero = np.flatnonzero(score > 0)
        if len(nonzero) == 0:
            titles.append(f"Section {k}")
            continue
        # vocab is sorted, so a stable sort on -score keeps alphabetical order among ties
        best = nonzero[np.argsort(-score[nonzero], kind="stable")][:n_terms]
        titles.append(", ".join(str(vocab[i]) for i in best))
    return titles
