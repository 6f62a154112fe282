"""SQuAD answer normalization (the official ``evaluate-v1.1.py`` rule), shared by every answer match.

``normalize_answer(s)``: lowercase; remove every ASCII punctuation character (``string.punctuation``);
remove the articles ``a``, ``an``, ``the`` as whole words; collapse whitespace runs to one space and
strip. Worked example: ``"The  Eiffel-Tower!"`` -> ``"eiffeltower"``; ``"an Apple a day"`` -> ``"apple day"``.

AmbigNQ relevance (:mod:`ingest.corpora.ambignq`) is "the normalized passage contains a normalized gold
answer as a whole-token run": ``" " + answer + " "`` occurs in ``" " + passage + " "``
(:func:`contains_answer`), the string form of DPR's ``has_answer`` on SQuAD-normalized text.
"""
from __future__ import annotations

import re
import string

_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCT = str.maketrans("", "", string.punctuation)


def normalize_answer(text: str) -> str:
    """SQuAD normalization of ``text`` (module doc).

    >>> normalize_answer("The  Eiffel-Tower!")
    'eiffeltower'
    >>> normalize_answer("an Apple a day")
    'apple day'
    """
    text = text.lower().translate(_PUNCT)
    return " ".join(_ARTICLES.sub(" ", text).split())


def contains_answer(normalized_passage: str, normalized_answer: str) -> bool:
    """Whether the (already normalized) answer occurs as whole tokens in the (normalized) passage;
    an empty answer never matches.

    >>> contains_answer("born in new york city", "new york")
    True
    >>> contains_answer("newark", "new")
    False
    """
    return bool(normalized_answer) and f" {normalized_answer} " in f" {normalized_passage} "
