"""What each stage of ``ragwh run`` leaves in the warehouse: the rows a stage's output digest covers.

A stage is skipped only when its input fingerprint is unchanged *and* the digest of these rows
(:func:`warehouse.manifest.output_digest`) equals the one recorded when the stage finished, so a
corpus replaced or wiped by hand, a deleted run or a rebuilt model makes its stage run again.
Each :class:`Output` is restricted to the stage's own scope (its corpus, embedder, reranker) and to
rows no later stage rewrites, so one run never invalidates its own earlier stages.
"""

from __future__ import annotations

from dataclasses import dataclass

from ingest.retrieval.embed import QUERY_HASH_PREFIX

#: Tables ``dbt build +tag:evaluation`` builds from models/marts/chunking .
EVALUATION_MARTS = (
    "query_metrics",
    "condition_means",
    "metric_cuts",
    "contrasts",
    "contrast_pairing",
    "contrast_mde",
    "primary_contrasts",
    "evaluation_exclusions",
    "dose_response",
    "section_recall_summary",
    "shallow_runs",
    "contrast_slices",
)
#: Loaders whose queries come from a later stage (``queries``), not from the loader.
GENERATED_QUERY_LOADERS = ("wikipedia",)


@dataclass(frozen=True)
class Output:
    """Rows of ``table`` matching ``where`` (``?`` placeholders bound to ``params``); ``columns``
    limits the digest to those columns (None: the whole row)."""

    table: str
    where: str = "TRUE"
    params: tuple = ()
    columns: tuple[str, ...] | None = None


def _of_corpus(table: str, column: str, corpus: str, extra: str = "") -> Output:
    return Output(table, f"starts_with({column}, ?){extra}", (corpus + "/",))


def ingest(corpus: str, loader: str) -> list[Output]:
    """A loader's documents, paragraphs and gold sections, and its queries, evidence and qrels."""
    out = [
        Output("documents", "corpus = ?", (corpus,)),
        _of_corpus("paragraphs", "doc_id", corpus),
        _of_corpus("sections", "doc_id", corpus, " AND structure = 'gold'"),
    ]
    if loader not in GENERATED_QUERY_LOADERS:
        out += [
            Output("queries", "corpus = ?", (corpus,)),
            _of_corpus("evidence", "query_id", corpus),
            _of_corpus("qrels", "query_id", corpus),
        ]
    return out


def queries(corpus: str) -> list[Output]:
    return [Output("queries", "corpus = ?", (corpus,)), _of_corpus("evidence", "query_id", corpus)]


def induce(corpus: str, inducer: str) -> list[Output]:
    structure = f"induced:{inducer}"
    return [
        Output("sections", "structure = ? AND starts_with(doc_id, ?)", (structure, corpus + "/")),
        Output("induction_log", "structure = ? AND starts_with(doc_id, ?)", (structure, corpus + "/")),
    ]


def chunk(corpus: str) -> list[Output]:
    """Chunks, chunkset rows, derived prefixes (path, placebo, title; not the LLM contexts) and placebo
    assignments -- of the chunksets the chunk stage owns (the sentence windows have their own stage)."""
    from ingest.chunking.prefixes import DERIVED_KINDS
    from ingest.chunking.sentence_windows import SENTENCE_CHUNKSET_PREFIX

    owned = f" AND NOT starts_with(chunkset, '{SENTENCE_CHUNKSET_PREFIX}')"
    kinds = ", ".join(f"'{k}'" for k in DERIVED_KINDS)
    return [
        _of_corpus("chunks", "doc_id", corpus, owned),
        _of_corpus("chunkset_docs", "doc_id", corpus, owned),
        Output("chunk_prefixes", f"prefix_kind IN ({kinds}) AND contains(chunk_id, ?){owned}", (f"|{corpus}/",)),
        Output("placebo_paths", "corpus = ?", (corpus,)),
    ]


def contexts(corpus: str) -> list[Output]:
    return [Output("chunk_prefixes", "prefix_kind = 'llm_context' AND contains(chunk_id, ?)", (f"|{corpus}/",))]


def conditions() -> list[Output]:
    return [Output("int_condition_texts")]


def embed(corpus: str, embedder: str) -> list[Output]:
    """The embedder's stored keys among the corpus's condition texts and queries (a vector is never
    rewritten under its key, so the keys say what is stored)."""
    return [
        Output(
            "embeddings",
            "embedder = ? AND text_hash IN (SELECT text_hash FROM int_condition_texts WHERE "
            "corpus = ? UNION ALL SELECT sha256(? || text) FROM queries WHERE corpus = ?)",
            (embedder, corpus, QUERY_HASH_PREFIX, corpus),
            ("text_hash",),
        )
    ]


def retrieve(corpus: str, embedder: str) -> list[Output]:
    return [
        Output("runs", "corpus = ? AND embedder = ? AND reranker = 'none'", (corpus, embedder)),
        Output("routing", "corpus = ? AND embedder = ?", (corpus, embedder)),
    ]


def rerank(corpus: str, embedder: str, reranker: str) -> list[Output]:
    """``embedder`` and ``reranker`` as stored in ``runs`` (resolved names, precision suffix included)."""
    return [Output("runs", "corpus = ? AND embedder = ? AND reranker = ?", (corpus, embedder, reranker))]


def evaluation() -> list[Output]:
    return [Output(name) for name in EVALUATION_MARTS]
