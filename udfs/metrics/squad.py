"""Answer quality: SQuAD v1.1 answer normalization, exact match and token F1, max over gold aliases.

Normalization (the official ``normalize_answer`` of SQuAD v1.1's evaluate script): lower-case;
delete every ASCII punctuation character (Python ``string.punctuation``); replace the articles
``a``, ``an``, ``the`` (whole words, regex ``\\b(a|an|the)\\b``) by a space; collapse whitespace
(``" ".join(text.split())``).

    EM(p, g) = 1 if norm(p) = norm(g) else 0
    F1(p, g) = 2 · P · R / (P + R),  P = c / |tok(p)|, R = c / |tok(g)|,
               c = |multiset tok(p) ∩ multiset tok(g)|, tok = norm(.).split();  F1 = 0 when c = 0
               (also when both are empty: v1.1 semantics)
    score(p, G) = max_{g in G} score(p, g)       (several accepted answers: aliases)

Example: p = "The Eiffel Tower!", g = "eiffel tower in Paris": tokens [eiffel, tower] and
[eiffel, tower, in, paris], c = 2, P = 1, R = 0.5, F1 = 0.6667, EM = 0.

AmbigNQ relevance (:mod:`ingest.corpora.ambignq`) uses the same normalization: a passage is relevant
when a normalized gold answer occurs in the normalized passage as a whole-token run
(:func:`contains_answer`: ``" " + answer + " "`` in ``" " + passage + " "``, the string form of DPR's
``has_answer`` on SQuAD-normalized text).
"""

from __future__ import annotations

import re
import string
from collections import Counter
from collections.abc import Sequence

import numpy as np

_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCTUATION = str.maketrans("", "", string.punctuation)


def normalize_answer(text: str) -> str:
    """SQuAD v1.1 normalization of one answer string.

    >>> normalize_answer("The  Eiffel-Tower!")
    'eiffeltower'
    >>> normalize_answer("an Apple a day")
    'apple day'
    """
    return " ".join(_ARTICLES.sub(" ", text.lower().translate(_PUNCTUATION)).split())


def contains_answer(normalized_passage: str, normalized_answer: str) -> bool:
    """Whether the (already normalized) answer occurs as whole tokens in the (normalized) passage;
    an empty answer never matches.

    >>> contains_answer("born in new york city", "new york")
    True
    >>> contains_answer("newark", "new")
    False
    """
    return bool(normalized_answer) and f" {normalized_answer} " in f" {normalized_passage} "


def exact_match(prediction: str, gold: str) -> float:
    return float(normalize_answer(prediction) == normalize_answer(gold))


def token_f1(prediction: str, gold: str) -> float:
    return _f1(normalize_answer(prediction).split(), normalize_answer(gold).split())


def _f1(pred: list[str], gold: list[str]) -> float:
    same = sum((Counter(pred) & Counter(gold)).values())
    if same == 0:
        return 0.0
    precision, recall = same / len(pred), same / len(gold)
    return 2 * precision * recall / (precision + recall)


def squad_scores(predictions: Sequence[str], golds: Sequence[Sequence[str]]) -> tuple[np.ndarray, np.ndarray]:
    """(EM, F1) per row, each the max over the row's gold aliases; a row without any alias is an error
    (exclude such queries upstream)."""
    if len(predictions) != len(golds):
        raise ValueError(f"{len(predictions)} predictions but {len(golds)} gold lists")
    em = np.zeros(len(predictions))
    f1 = np.zeros(len(predictions))
    for i, (p, gs) in enumerate(zip(predictions, golds)):
        if p is None or gs is None or len(gs) == 0 or any(g is None for g in gs):
            raise ValueError(f"row {i}: a NULL prediction or no gold answer (exclude such queries upstream)")
        norm = normalize_answer(p)
        tokens = norm.split()
        gold_norms = [normalize_answer(g) for g in gs]
        em[i] = float(any(norm == g for g in gold_norms))
        f1[i] = max(_f1(tokens, g.split()) for g in gold_norms)
    return em, f1
