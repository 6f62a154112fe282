"""A strategy's final list from its texts' lists: one text keeps its MMR order; several are mixed by score.

**One text** (S1, HyDE, Query2Doc, and any strategy left with one searched text: a fallback, a
multi-query strategy whose single variant survived without the original): the list IS the text's list,
in MMR pick order, its first ``limit`` (20) documents, each with its stage score and the text's
``variant_idx`` (:func:`merge_texts`). So nDCG@10 and MRR@10 see MMR's ranking; MMR is not re-sorted
into a filter.

**Several texts**: score-based mixing, each document keeps its maximum score over the texts
(:func:`max_merge`).

Input: for each searched text ``t`` (its ``variant_idx``) the text's top ``K`` documents after rerank +
MMR, each with its stage score ``s_t(d)`` and its MMR rank ``r_t(d)`` (1-based). Output, at most
``limit`` (20) documents::

    score(d)   = max over texts t listing d of s_t(d)
    variant(d) = the text attaining it (ties: the smaller MMR rank r_t(d), then the smaller variant_idx)

ranked by ``score`` descending, ties by the giving text's MMR rank ``r_variant(d)(d)`` ascending, then
``variant_idx`` ascending, then ``doc_id`` ascending: a total, stable order.

Worked example: text 0 lists (a 0.9, b 0.5), text 1 lists (b 0.7, c 0.9). Then a: 0.9 from 0 at rank 1,
c: 0.9 from 1 at rank 2, b: 0.7 from 1 -> ranking a, c, b (a before c: equal score, rank 1 < 2).
"""

from __future__ import annotations

from collections.abc import Iterable


def merge_texts(lists: list[tuple[int, list[str], list[float]]], limit: int = 20) -> list[tuple[str, float, int]]:
    """The strategy's list (module doc): one text's MMR order, else :func:`max_merge`.

    >>> merge_texts([(0, ["a", "b"], [0.5, 0.9])])
    [('a', 0.5, 0), ('b', 0.9, 0)]
    """
    if len(lists) == 1:
        variant, docs, scores = lists[0]
        return [(doc, float(score), variant) for doc, score in list(zip(docs, scores))[:limit]]
    return max_merge(lists, limit)


def max_merge(lists: Iterable[tuple[int, list[str], list[float]]], limit: int = 20) -> list[tuple[str, float, int]]:
    """``[(doc_id, score, variant_idx)]`` in merged rank order; ``lists`` holds ``(variant_idx, doc_ids,
    scores)`` per text, documents in MMR order (see module doc)."""
    best: dict[str, tuple[float, int, int]] = {}  # doc -> (score, mmr rank, variant)
    for variant, docs, scores in lists:
        for rank, (doc, score) in enumerate(zip(docs, scores), 1):
            current = best.get(doc)
            if current is None or (-score, rank, variant) < (-current[0], current[1], current[2]):
                best[doc] = (float(score), rank, variant)
    order = sorted(best.items(), key=lambda item: (-item[1][0], item[1][1], item[1][2], item[0]))
    return [(doc, score, variant) for doc, (score, _, variant) in order[:limit]]
