"""The strategies: a seed row (``seeds/rewrite_strategies.csv``: name, kind, uses_llm, depth_k) plus the
one thing the seed cannot hold, how the strategy makes its texts (:data:`FORMS`).

Forms:

* ``original`` — the query itself, no LLM call (S1; the control S1-pool100 = S1 with a 100-chunk pool);
* ``questions`` — the LLM writes ``n`` questions, one per line (S2 neighbor: sibling questions; S3
  synonym: restatements; S4 comparative: one comparison question); searched as queries beside the
  original (``include_original``), filtered by the cosine band;
* ``passage`` — HyDE: the LLM writes a passage answering the question (the HyDE paper's prompt);
* ``query2doc`` — Query2Doc: the LLM writes a pseudo-document; the dense text is
  ``query + " [SEP] " + pseudo_doc`` (the paper's dense form; its BM25 form, the query repeated five
  times before the pseudo-document, is not used because the study's pipeline is dense);
* ``ann`` — the control S1-ann4: the query itself searched in each of four seeded HNSW graphs
  (:mod:`ingest.rewriting.ann`), each pool reranked and MMR'd as usual, the four lists unioned by max
  score like a multi-query strategy's texts.

``depth_k`` (how many documents each text keeps after rerank + MMR) is read from the seed only.
"""

from __future__ import annotations

import csv
import dataclasses
import functools
from pathlib import Path

from warehouse.paths import PROJECT_ROOT

SEED_FILE = PROJECT_ROOT / "seeds" / "rewrite_strategies.csv"

#: strategy -> (form, prompt name or None, rerank pool override or None)
FORMS: dict[str, tuple[str, str | None, int | None]] = {
    "S1": ("original", None, None),
    "S2": ("questions", "rewrite_neighbor", None),
    "S3": ("questions", "rewrite_synonym", None),
    "S4": ("questions", "rewrite_comparative", None),
    "HyDE": ("passage", "rewrite_hyde", None),
    "Q2D": ("query2doc", "rewrite_query2doc", None),
    "S1-pool100": ("original", None, 100),
    "S1-ann4": ("ann", None, None),
}
Q2D_SEPARATOR = " [SEP] "


@dataclasses.dataclass(frozen=True)
class Strategy:
    name: str
    kind: str  # solo | control
    uses_llm: bool
    depth_k: int
    form: str
    prompt: str | None
    pool: int | None  # None: the configured pool


def load_strategies() -> dict[str, Strategy]:
    """Every strategy of the seed :data:`SEED_FILE`, joined with :data:`FORMS`; a strategy missing on either
    side is an error."""
    return _read(SEED_FILE)


@functools.cache
def _read(seed_file: Path) -> dict[str, Strategy]:
    with open(seed_file, newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    names = [r["strategy"] for r in rows]
    if set(names) != set(FORMS) or len(names) != len(set(names)):
        raise ValueError(
            f"{seed_file} strategies {sorted(names)} differ from the forms ingest/rewriting/strategies.py "
            f"knows ({sorted(FORMS)}): add the strategy in both places"
        )
    out = {}
    for r in rows:
        form, prompt, pool = FORMS[r["strategy"]]
        uses_llm = r["uses_llm"].strip().lower() == "true"
        if uses_llm != (prompt is not None):
            raise ValueError(f"{seed_file}: {r['strategy']} uses_llm={r['uses_llm']} but its form is {form!r}")
        out[r["strategy"]] = Strategy(r["strategy"], r["kind"], uses_llm, int(r["depth_k"]), form, prompt, pool)
    return out


def resolve(names: tuple[str, ...] | list[str]) -> list[Strategy]:
    """The named strategies in seed order; unknown names raise ``ValueError``."""
    known = load_strategies()
    unknown = [n for n in names if n not in known]
    if unknown:
        raise ValueError(f"unknown strategies {unknown}: strategies live in {SEED_FILE} ({', '.join(known)})")
    return [s for s in known.values() if s.name in names]
