"""The pipeline (never the model) picks the gold spans a query is written for.

Per document and query type, with its own generator ``numpy.random.default_rng([seed, h(doc_id),
type index])`` (``h`` = first 8 bytes of sha256(doc_id) as an integer), so a document's picks do not
depend on which other documents are loaded:

* ``factoid`` / ``underspecified``: one paragraph of at least ``min_words`` words
  (``per_doc`` distinct paragraphs, drawn without replacement);
* ``multihop``: two such paragraphs from two different top-level gold sections (two distinct
  sections drawn, then one paragraph in each; spans in document order);
* ``structural``: one whole top-level gold section (its char span) of at least ``min_words`` words.

Words are whitespace-separated tokens. Candidate ids are ``<source id>-<type>-<j>`` with
``<source id>`` the doc_id after ``<corpus>/`` and ``j`` the draw number.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

import numpy as np

from ingest.corpora.docs import StoredDoc

QUERY_TYPES = ("factoid", "underspecified", "multihop", "structural")


@dataclass(frozen=True)
class Candidate:
    cand_id: str
    doc_id: str
    query_type: str
    spans: tuple[tuple[int, int], ...]  # [char_start, char_end) into documents.text, document order


def _rng(seed: int, doc_id: str, type_index: int) -> np.random.Generator:
    h = int.from_bytes(hashlib.sha256(doc_id.encode("utf-8")).digest()[:8], "big")
    return np.random.default_rng([seed, h, type_index])


def _words(text: str) -> int:
    return len(text.split())


def sample_candidates(doc: StoredDoc, seed: int, per_doc: int, min_words: int = 40) -> list[Candidate]:
    """The candidates of one document (needs ``doc.sections`` = its gold structure)."""
    source = doc.doc_id.split("/", 1)[1] if "/" in doc.doc_id else doc.doc_id
    paras = [(s, e) for s, e in doc.paragraphs if _words(doc.text[s:e]) >= min_words]
    tops = [r for r in doc.sections if r.level == 1]
    top_of_para = {}
    for k, r in enumerate(tops):
        for p in range(r.para_start, r.para_end + 1):
            top_of_para[doc.paragraphs[p]] = k
    out: list[Candidate] = []
    for t, qtype in enumerate(QUERY_TYPES):
        rng = _rng(seed, doc.doc_id, t)
        picks: list[tuple[tuple[int, int], ...]] = []
        if qtype in ("factoid", "underspecified"):
            idx = rng.choice(len(paras), size=min(per_doc, len(paras)), replace=False) if paras else []
            picks = [(paras[i],) for i in idx]
        elif qtype == "multihop":
            groups: dict[int, list[tuple[int, int]]] = {}
            for p in paras:
                groups.setdefault(top_of_para[p], []).append(p)
            keys = sorted(groups)
            if len(keys) >= 2:
                for _ in range(per_doc):
                    a, b = sorted(rng.choice(len(keys), size=2, replace=False))
                    ga, gb = groups[keys[a]], groups[keys[b]]
                    pick = (ga[rng.integers(len(ga))], gb[rng.integers(len(gb))])
                    if pick not in picks:
                        picks.append(pick)
        else:
            eligible = [
                (r.char_start, r.char_end) for r in tops if _words(doc.text[r.char_start : r.char_end]) >= min_words
            ]
            idx = rng.choice(len(eligible), size=min(per_doc, len(eligible)), replace=False) if eligible else []
            picks = [(eligible[i],) for i in idx]
        out.extend(Candidate(f"{source}-{qtype}-{j}", doc.doc_id, qtype, spans) for j, spans in enumerate(picks))
    return out
