"""The leakage filter: a generated query must not copy its gold span.

Tokenization is rouge-score's default tokenizer (lowercase; every character outside ``[a-z0-9]`` is a
separator, so punctuation and non-ASCII letters split words). A query is rejected against a span when

* ``rouge_l``: ROUGE-L F1 (``rouge_scorer.RougeScorer(["rougeL"], use_stemmer=True)``, Porter
  stemming, ``F1 = 2PR / (P + R)`` over the longest common subsequence) is **greater than** 0.35, or
* ``shared_4gram``: query and span share at least one verbatim (unstemmed) token 4-gram.

With several gold spans (multihop) the query is checked against each one; the first failing check
(ROUGE-L before 4-gram, spans in order) is the reason. An empty query is rejected as ``empty``.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Sequence

from rouge_score import rouge_scorer, tokenizers

ROUGE_L_MAX = 0.35
NGRAM = 4


@lru_cache(maxsize=1)
def _scorer() -> rouge_scorer.RougeScorer:
    return rouge_scorer.RougeScorer(["rougeL"], use_stemmer=True)


@lru_cache(maxsize=1)
def _tokenizer() -> tokenizers.DefaultTokenizer:
    return tokenizers.DefaultTokenizer(use_stemmer=False)


def tokens(text: str) -> list[str]:
    """rouge-score's default tokens, unstemmed."""
    return _tokenizer().tokenize(text)


def rouge_l_f1(query: str, span: str) -> float:
    """ROUGE-L F1 of ``query`` against ``span`` (stemmed; 0.0 when either has no token)."""
    return float(_scorer().score(span, query)["rougeL"].fmeasure)


def ngrams(toks: Sequence[str], n: int = NGRAM) -> set[tuple[str, ...]]:
    return {tuple(toks[i : i + n]) for i in range(len(toks) - n + 1)}


def shared_ngrams(query: str, span: str, n: int = NGRAM) -> set[tuple[str, ...]]:
    """Verbatim token n-grams present in both texts."""
    return ngrams(tokens(query), n) & ngrams(tokens(span), n)


def leak_reason(query: str, spans: Sequence[str]) -> str | None:
    """``None`` when ``query`` passes against every span, else ``empty`` / ``rouge_l`` / ``shared_4gram``."""
    if not tokens(query):
        return "empty"
    for span in spans:
        if rouge_l_f1(query, span) > ROUGE_L_MAX:
            return "rouge_l"
        if shared_ngrams(query, span):
            return "shared_4gram"
    return None
