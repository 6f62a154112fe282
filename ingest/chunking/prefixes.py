"""Heading-path prefixes and their placebo counterparts.

Path of a chunk: the breadcrumb ``(document title, level-1 heading, ..., the heading of the chunk's
section)`` in its chunkset's structure. Each element has its whitespace collapsed (``" ".join(
t.split())``) so a prefix is one line. Cut to depth ``N`` it keeps the first ``N`` elements (fewer when
the path is shorter): d1 ``[Title]``, d2 ``[Title › Section]``, d3 ``[Title › Section › Subsection]``.
Rendered: ``"[" + " › ".join(elements) + "]\\n\\n"`` — the exact string placed before the content.

Placebo (:func:`derange`): for one structure and corpus, the unique ``(doc_id, path)`` pairs actually
used by chunk prefixes (paths already cut to each depth) are bucketed by their number of elements,
so a placebo path has exactly as many elements as the real one. Within a bucket (pairs sorted by
``(doc_id, path)``):

1. ``perm = rng.permutation(n)``: pair ``i`` receives the path of pair ``perm[i]``;
2. repair, for ``i = 0..n-1`` in order: if ``doc[perm[i]] == doc[i]``, choose uniformly (same ``rng``)
   among the ``j != i`` with ``doc[perm[j]] != doc[i]`` and ``doc[perm[i]] != doc[j]`` and swap
   ``perm[i], perm[j]`` (both ends are then cross-document); if no such ``j`` exists, ``i`` keeps its
   same-document assignment (residual, e.g. a bucket of one document).

``rng = numpy.random.default_rng([seed, crc32("<structure>|<corpus>"), depth])`` with the fixed
:data:`PLACEBO_SEED`, so the assignment is identical on every run. Residual same-document
assignments are stored in ``placebo_paths.same_document`` and counted by the caller.

Title prefix (:func:`title_prefix`, kind ``title``, depth 0): BEIR's convention for embedding a
document, ``(title + " " + text).strip()``: the title and one space before the content, nothing when
the title is empty. The chunk stage writes it for every ``doc`` chunk (condition DOC) and the
rewriting study's sentence chunks (:mod:`ingest.chunking.sentence_windows`).
"""

from __future__ import annotations

import zlib
from typing import Sequence

import numpy as np

from ingest.structure.segments import SectionRow

SEPARATOR = " \u203a "  # ' › '
DEPTHS = (1, 2, 3)
PLACEBO_SEED = 20260710
#: Prefix kinds the chunking stages derive from the document itself (rewritten with the chunks);
#: ``llm_context`` is written by the LLM stage and only invalidated when its chunk changes.
DERIVED_KINDS = ("path", "placebo", "title")


def clean(element: str) -> str:
    """A path element with its whitespace collapsed to single spaces."""
    return " ".join(element.split())


def section_paths(title: str, rows: Sequence[SectionRow]) -> list[tuple[str, ...]]:
    """Full breadcrumb of every section (indexed by ``section_idx``), document title first."""
    paths: list[tuple[str, ...]] = []
    for r in rows:
        parent = (clean(title),) if r.parent_idx is None else paths[r.parent_idx]
        paths.append(parent + (clean(r.title),))
    return paths


def cut(path: tuple[str, ...], depth: int) -> tuple[str, ...]:
    """The first ``depth`` elements of ``path``."""
    if depth < 1:
        raise ValueError(f"path depth must be >= 1, got {depth}")
    return path[:depth]


def join_path(path: Sequence[str]) -> str:
    """Elements joined by ' › ' (how paths are stored in ``placebo_paths``)."""
    return SEPARATOR.join(path)


def render(path: Sequence[str]) -> str:
    """The prefix string: ``[a › b › c]`` followed by a blank line."""
    return "[" + join_path(path) + "]\n\n"


def title_prefix(title: str) -> str:
    """BEIR's ``title + " "`` before a document's text ('' for an empty or blank title).

    >>> title_prefix("Aspirin") + "Aspirin inhibits COX-1."
    'Aspirin Aspirin inhibits COX-1.'
    >>> title_prefix("  ")
    ''
    """
    title = title.strip()
    return title + " " if title else ""


def derange(doc_ids: Sequence[str], seed: int, key: str, depth: int) -> tuple[np.ndarray, np.ndarray]:
    """Placebo permutation of one bucket (algorithm: module doc).

    ``doc_ids[i]`` is the document of pair ``i`` (pairs in their sorted order). Returns ``perm``
    (pair ``i`` takes the path of pair ``perm[i]``) and the boolean residual mask
    ``doc[perm[i]] == doc[i]``."""
    n = len(doc_ids)
    _, docs = np.unique(np.asarray(doc_ids, dtype=object), return_inverse=True)
    rng = np.random.default_rng([seed, zlib.crc32(key.encode("utf-8")), depth])
    perm = rng.permutation(n)
    for i in range(n):
        if docs[perm[i]] != docs[i]:
            continue
        ok = (docs[perm] != docs[i]) & (docs != docs[perm[i]])
        ok[i] = False
        candidates = np.flatnonzero(ok)
        if candidates.size:
            j = candidates[rng.integers(candidates.size)]
            perm[i], perm[j] = perm[j], perm[i]
    return perm, docs[perm] == docs
